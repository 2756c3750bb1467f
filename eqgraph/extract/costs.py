"""The cost model: estimated nanoseconds to run one node, from static shapes.

cost = dispatch (Python calls one thunk per node) + work, where work is per
element of the output for elementwise ops, ``Op.flops`` for matmul and
reductions, nothing for views, and a pass over the input for a reshape (it may
copy).  Elementwise ops are fused after extraction
(``exec/fusion.py``), so they pay ``step`` (one more op inside a fused node)
instead of a dispatch each.  Every unknown axis of one graph is assumed to have
the same length (``for_graph``), the one at which the values with the most unknown
axes hold ``unknown_size`` elements: 10,000 on the machine calibrated, ten times the
size where an add's work equals a dispatch, so elementwise choices (``x**10`` as a
pow or as multiplications) are made as for large arrays, where they matter.  Beside
100 x 100 matrices a vector is then 100 long, as long as the rows it meets, so
``(A @ B) @ v`` costs an n x n product more than ``A @ (B @ v)`` and
``sum(m * s, axis=1)`` n*n multiplications more than ``s * sum(m, axis=1)``.  (Spread
over each value's own unknown axes, the same elements would make a vector weigh as much
as a matrix, and both forms of each pair would cost the same.)  An unknown axis
with known upper bounds (a ``Bounded`` type: ``x[:10]`` holds at most 10, ``m[0]``
no more than a row of ``m``) is assumed no larger than they are, so ``exp(x)[:10]``
costs more than ``exp(x[:10])``, and ``(A @ B)[0]`` more than ``A[0] @ B``, whatever
the sizes.  The constants come from ``bench/calibrate.py``
(``calibrated.py``).  Numerical stability is not priced here: the rule files
declare the unstable compositions, and extraction ranks terms by them before
cost (extract/unstable.py, extract/extraction.py).

Replace it by passing any object with ``node_cost(enode, op, in_types, out_type,
child_ops)`` to ``eqgraph.function(..., cost_model=...)``.
"""

from __future__ import annotations

import copy
import math

from eqgraph.egraph.snapshot import LEAVES
from eqgraph.extract.calibrated import MEASURED
from eqgraph.tensor.type import TensorType

#: nanoseconds per output element of each elementwise op, measured by bench/calibrate.py
#: (NumPy on one core, 100k float64 elements; ``calibrated.py`` is data that script writes)
ELEMENT_COST = dict(MEASURED["element_ns"])
#: the same inside a fused Numba loop (exec/numba/kernels.py), where NumPy's pass per op is gone:
#: ``where`` is a slow pass in NumPy and nearly free in the loop; libm calls are slower there
KERNEL_ELEMENT_COST = dict(MEASURED.get("kernel_element_ns", {}))
#: what such a loop pays per element for each array it reads from memory
KERNEL_STREAM_COST = MEASURED.get("kernel_stream_ns", 0.2)
#: the dtypes Numba's fused loops compute in; other values stay on NumPy's loops
KERNEL_DTYPES = frozenset({"float64", "bool"})
# fmt: off
#: ops that return views or metadata: dispatch only
FREE = {"DimShuffle", "SpecifyShape", "Shape", "Out"}
#: ops that may copy their first input whole: np.reshape copies an input whose layout allows
#: no view (a transposed one), and nothing here knows the layout. Priced by the input's size,
#: which the output has too (a flattened matrix is not one unknown axis long), so that
#: ``x.flatten().shape[0]`` reads x's sizes rather than run the reshape
MAY_COPY_INPUT = {"Reshape"}
# fmt: on


class Bounded:
    """A static type whose unknown sizes have upper bounds: per axis a tuple of limits,
    each a number or ``(type, axis)``, "no longer than that axis of a term of that type"
    (the type a plain one, or a Bounded with numbers only).

    Extraction hands the cost model this in place of the ``TensorType`` of an e-class
    whose sizes are unknown but bounded (``EGraphData.size_bounds`` and ``size_within``);
    every other attribute is the type's, so a cost model that reads ``shape`` and
    ``dtype`` works unchanged. It is only a price estimate: no term gets it as its type."""

    def __init__(self, ttype, bounds: tuple):
        self.type, self.bounds = ttype, bounds

    def __getattr__(self, name):
        return getattr(self.type, name)


class CostModel:
    """Estimated run time in nanoseconds; monotone (a node costs at least its dispatch)."""

    def __init__(self, dispatch: float = MEASURED["dispatch_ns"], unknown_size: int = MEASURED["unknown_size"],
                 ns_per_flop: float = 0.25, ns_per_byte: float = 0.1, step: float = MEASURED["step_ns"],
                 kernel_element_cost: dict | None = None):
        self.dispatch = dispatch
        #: where fused nodes run in a compiled loop (the NumPy backend with Numba installed gives
        #: ``KERNEL_ELEMENT_COST``), each elementwise op of float64/bool values costs the cheaper of
        #: NumPy's pass and its share of the loop: its work, and a read of each operand that is
        #: not computed in the same loop (``KERNEL_STREAM_COST``; without it, an add over a long
        #: array looked free beside indexing its operands first). The kernels keep NumPy's loops
        #: where those are faster (libm calls on long arrays, exec/numba/kernels.py ``numba_below``)
        self.kernel_element_cost = kernel_element_cost or {}
        self.step = step
        self.unknown_size = unknown_size
        self.ns_per_flop = ns_per_flop
        self.ns_per_byte = ns_per_byte
        #: the length of every unknown axis, set by ``for_graph``; None prices each value
        #: as if it were the graph's only one (``unknown_size`` elements over its unknown axes)
        self.unknown_axis: float | None = None

    def for_graph(self, types) -> "CostModel":
        """A copy of this model that gives every unknown axis of a graph (``types``: its
        values' types) one length: the one at which the values with the most unknown axes
        hold ``unknown_size`` elements (100 where there are matrices, 10,000 where there are
        only vectors).  Why one length per graph and not one for all graphs: elementwise
        choices were calibrated at ``unknown_size`` elements, and a fixed 100 would price a
        graph of vectors as tiny ones.  Extraction calls it, when a cost model has it,
        with the types of the user's graph, which rewrites do not change."""
        most = max((sum(s is None for s in getattr(t, "shape", None) or ()) for t in types), default=0)
        fitted = copy.copy(self)
        fitted._sizes = {}  # its own: a copy would share the dict
        fitted.unknown_axis = self.unknown_size ** (1 / most) if most else self.unknown_size
        return fitted

    def size(self, ttype) -> float:
        if type(ttype) is not TensorType or type(self).shape is not CostModel.shape:
            # a Bounded, or a shape rule of a subclass that may read more than the key does
            return math.prod(self.shape(ttype))
        sizes = self.__dict__.setdefault("_sizes", {})  # a graph prices few types, many times
        key = (ttype, self.unknown_axis, self.unknown_size)  # what shape() reads besides the type
        found = sizes.get(key)
        if found is None:
            found = sizes[key] = math.prod(self.shape(ttype))
        return found

    def shape(self, ttype) -> tuple:
        """Static shape with unknown axes filled in: each ``unknown_axis`` long (see
        ``for_graph``; unset, ``unknown_size`` elements split evenly among them), and no
        longer than its upper bounds, if it has any (``Bounded``)."""
        dims = getattr(ttype, "shape", ())
        limits = getattr(ttype, "bounds", None) or ((),) * len(dims)
        unknown = sum(s is None for s in dims)
        each = self.unknown_axis or (self.unknown_size ** (1 / unknown) if unknown else 1)
        return tuple(s if s is not None else min([each, *map(self._limit, lims)]) for s, lims in zip(dims, limits))

    def _limit(self, limit) -> float:
        """A number, or ``(type, axis)``: that axis of another term, as this model guesses it."""
        if isinstance(limit, tuple):
            other, axis = limit
            return self.shape(other)[axis]
        return limit

    def node_cost(self, enode, op, in_types, out_type, child_ops=()) -> float:
        name = enode.op
        if name in LEAVES:  # inputs and constants are already there
            return 0.0
        cost = self.step if name in ELEMENT_COST else self.dispatch  # elementwise ops are fused
        if name in FREE:
            return cost
        if name in MAY_COPY_INPUT and in_types:
            return cost + self.size(in_types[0])
        out_size = self.size(out_type)
        if name in ELEMENT_COST:
            return cost + self._element_cost(name, in_types, out_type, child_ops) * out_size
        flops = None
        if op is not None:
            try:
                flops = op.flops([self.shape(t) for t in in_types], [self.shape(out_type)])
            except (TypeError, ValueError, IndexError, NotImplementedError, AttributeError):
                flops = None
        if flops is not None:
            itemsize = getattr(getattr(out_type, "numpy_dtype", None), "itemsize", 8)
            return cost + flops * self.ns_per_flop + out_size * itemsize * self.ns_per_byte
        return cost + out_size  # a copy-like op: one pass over the output

    def _element_cost(self, name, in_types, out_type, child_ops) -> float:
        numpy = ELEMENT_COST[name]
        looped = self.kernel_element_cost.get(name)
        if looped is None or any(getattr(t, "dtype", None) not in KERNEL_DTYPES for t in (*in_types, out_type)):
            return numpy
        reads = sum(op not in ELEMENT_COST and op != "Scalar" for op in child_ops)   # a Scalar is one number
        return min(numpy, looped + reads * KERNEL_STREAM_COST)
