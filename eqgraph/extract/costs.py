"""The cost model: estimated nanoseconds to run one node, from static shapes.

cost = dispatch (Python calls one thunk per node) + work, where work is per
element of the output for elementwise ops, ``Op.flops`` for matmul and
reductions, and nothing for views.  Elementwise ops are fused after extraction
(``exec/fusion.py``), so they pay ``step`` (one more op inside a fused node)
instead of a dispatch each.  An array with unknown axes is assumed to hold
``unknown_size`` elements, split evenly among those axes: 10,000 on the machine
calibrated, ten times the size where an add's work equals a dispatch, so
elementwise choices (``x**10`` as a pow or as multiplications) are made as for
large arrays, where they matter.  An unknown axis with known upper bounds (a
``Bounded`` type: ``x[:10]`` holds at most 10, ``m[0]`` no more than a row of
``m``) is assumed no larger than they are, so ``exp(x)[:10]`` costs more than
``exp(x[:10])``, and ``(A @ B)[0]`` more than ``A[0] @ B``, whatever the sizes.  The constants come from ``bench/calibrate.py``
(``calibrated.py``).  Numerical stability is not priced here: the rule files
declare the unstable compositions, and extraction ranks terms by them before
cost (extract/unstable.py, extract/extraction.py).

Replace it by passing any object with ``node_cost(enode, op, in_types, out_type,
child_ops)`` to ``eqgraph.function(..., cost_model=...)``.
"""

from __future__ import annotations

import math

from eqgraph.egraph.snapshot import LEAVES
from eqgraph.extract.calibrated import MEASURED

#: nanoseconds per output element of each elementwise op, measured by bench/calibrate.py
#: (NumPy on one core, 100k float64 elements; ``calibrated.py`` is data that script writes)
ELEMENT_COST = dict(MEASURED["element_ns"])
# fmt: off
#: ops that return views or metadata: dispatch only
FREE = {"DimShuffle", "SpecifyShape", "Shape", "Reshape", "Out"}
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
                 ns_per_flop: float = 0.25, ns_per_byte: float = 0.1, step: float = MEASURED["step_ns"]):
        self.dispatch = dispatch
        self.step = step
        self.unknown_size = unknown_size
        self.ns_per_flop = ns_per_flop
        self.ns_per_byte = ns_per_byte

    def size(self, ttype) -> float:
        return math.prod(self.shape(ttype))

    def shape(self, ttype) -> tuple:
        """Static shape with unknown axes filled in: ``unknown_size`` elements split evenly
        among them (a ``(None,)`` vector holds 10,000, a ``(None, None)`` matrix 100 x 100),
        each no more than its upper bounds, if it has any (``Bounded``)."""
        dims = getattr(ttype, "shape", ())
        limits = getattr(ttype, "bounds", None) or ((),) * len(dims)
        unknown = sum(s is None for s in dims)
        each = self.unknown_size ** (1 / unknown) if unknown else 1
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
        out_size = self.size(out_type)
        if name in ELEMENT_COST:
            return cost + ELEMENT_COST[name] * out_size
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
