"""`JacobianRows`: the rows of a Jacobian whose number is known only at run time.

``jacobian(y, x)`` for a ``y`` of static length ``n`` builds ``n`` gradient graphs, one per
row, and stacks them: the e-graph sees (and shares work between) all of them.  When ``n`` is
unknown that cannot be written down, so this op holds *one* row's gradient graph, a function
of the row index ``i``, and runs it for ``i = 0 .. n-1`` at run time.

Why a loop and not a vectorized VJP (one backward pass with an ``n x n`` identity as the
cotangent): that needs every op's VJP to carry an extra batch axis through matmuls,
reductions, reshapes and indexing, which the VJP table does not do (an entry is written for
one cotangent of the output's shape).  A loop reuses the table as it is, costs ``n`` backward
passes, as PyTensor's ``jacobian`` (a scan) does, and is exact.  The row graph is run node by
node with each op's ``perform``; the outer graph, including ``n`` and every input the row
graph reads, is optimized by the e-graph as usual.
"""

from __future__ import annotations

import itertools

import numpy as np

from eqgraph.tensor.basic import NotScalarConstantError, as_tensor_variable, get_scalar_constant_value
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Apply, Constant
from eqgraph.terms.graph import graph_inputs, toposort
from eqgraph.terms.op import Op
from eqgraph.xp import array_namespace

_ROW_GRAPHS: dict = {}  # key -> (index, free inputs, row outputs, the rows' wrt positions in free)
_KEYS = itertools.count()


class JacobianRows(Op):
    """``stack([rows(i, *free) for i in range(n)])`` for each output of the row graph.

    Inputs: ``n`` and the row graph's free variables.  ``key`` names the row graph (kept in a
    registry so that the e-graph, which rebuilds ops from their props, finds it again); two
    Jacobians are never merged by the e-graph, which is safe.
    """

    __props__ = ("key",)

    def __init__(self, key: str, index=None, rows=None, wrt=None):
        self.key = key
        if rows is not None:
            free = [v for v in graph_inputs(rows) if v is not index and not isinstance(v, Constant)]
            _ROW_GRAPHS[key] = (index, free, list(rows), [free.index(w) for w in wrt])
        self.index, self.free, self.rows, self.wrt_positions = _ROW_GRAPHS[key]
        self.order = toposort(self.rows)

    @classmethod
    def build(cls, index, rows, wrt) -> JacobianRows:
        return cls(f"jacobian-rows-{next(_KEYS)}", index, rows, wrt)

    def __getstate__(self):
        return {"key": self.key, "graph": _ROW_GRAPHS[self.key]}

    def __setstate__(self, state):
        _ROW_GRAPHS.setdefault(state["key"], state["graph"])
        self.__init__(state["key"])

    def __str__(self):
        return f"JacobianRows{{{len(self.rows)} rows, {len(self.order)} nodes}}"

    def make_node(self, n, *free):
        n = as_tensor_variable(n, ndim=0)
        if len(free) != len(self.free):
            raise TypeError(f"{self} takes the row graph's {len(self.free)} inputs, got {len(free)}")
        try:
            length = int(get_scalar_constant_value(n))
        except NotScalarConstantError:
            length = None
        outputs = [TensorType(r.dtype, (length, *r.type.shape))() for r in self.rows]
        return Apply(self, [n, *free], outputs)

    def _row(self, i, values: dict) -> list:
        cells = dict(values)
        cells[self.index] = np.asarray(i, dtype=self.index.dtype)
        for node in self.order:
            storage = [[None] for _ in node.outputs]
            node.op.perform(node, [cells[v] if v in cells else v.data for v in node.inputs], storage)
            cells.update(zip(node.outputs, (cell[0] for cell in storage)))
        return [cells[r] if r in cells else r.data for r in self.rows]

    def perform(self, node, inputs, output_storage):
        n, *free = inputs
        xp = array_namespace(*free)
        values = dict(zip(self.free, free))
        per_row = [self._row(i, values) for i in range(int(n))]
        for k, (cell, out) in enumerate(zip(output_storage, node.outputs)):
            if per_row:
                cell[0] = xp.stack([xp.asarray(r[k], dtype=getattr(xp, out.type.dtype)) for r in per_row])
            else:  # no rows: an empty stack of rows shaped like wrt
                cell[0] = xp.zeros((0, *free[self.wrt_positions[k]].shape), dtype=getattr(xp, out.type.dtype))

    def infer_shape(self, fgraph, node, shapes):
        n, free = node.inputs[0], shapes[1:]
        return [(n, *free[p]) for p in self.wrt_positions]
