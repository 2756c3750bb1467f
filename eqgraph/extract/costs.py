"""The cost model: estimated nanoseconds to run one node, from static shapes.

cost = dispatch (Python calls one thunk per node) + work, where work is per
element of the output for elementwise ops, ``Op.flops`` for matmul and
reductions, and nothing for views.  Unknown sizes are assumed to be
``unknown_size``.  Numerical stability is not priced here: the rule files
declare the unstable compositions, and extraction ranks terms by them before
cost (extract/unstable.py, extract/extraction.py).

Replace it by passing any object with ``node_cost(enode, op, in_types, out_type,
child_ops)`` to ``eqgraph.function(..., cost_model=...)``.
"""

from __future__ import annotations

import math

from eqgraph.egraph.snapshot import LEAVES

# fmt: off
#: nanoseconds per output element of an elementwise op (NumPy on one core, roughly)
ELEMENT_COST = {
    "Add": 1, "Sub": 1, "Mul": 1, "Neg": 1, "Abs": 1, "Maximum": 1, "Minimum": 1, "Sqr": 1, "Sign": 1,
    "Eq": 1, "Neq": 1, "Lt": 1, "Le": 1, "Gt": 1, "Ge": 1, "And": 1, "Or": 1, "Xor": 1, "Invert": 1,
    "Second": 0.5, "Switch": 2, "Clip": 2, "TrueDiv": 2, "IntDiv": 4, "Mod": 4, "Floor": 1, "Ceil": 1,
    "Round": 2, "Isnan": 1, "Isinf": 1, "Sqrt": 3, "Exp": 8, "Exp2": 8, "Expm1": 10, "Log": 8,
    "Log2": 8, "Log10": 8, "Log1p": 10, "Sin": 10, "Cos": 10, "Tan": 12, "Arcsin": 12, "Arccos": 12,
    "Arctan": 12, "Sinh": 12, "Cosh": 12, "Tanh": 10, "Sigmoid": 12, "Softplus": 16, "Erf": 14,
    "Pow": 25, "Cast": 1,
}
#: ops that return views or metadata: dispatch only
FREE = {"DimShuffle", "SpecifyShape", "Shape", "Reshape", "Out"}
# fmt: on


class CostModel:
    """Estimated run time in nanoseconds; monotone (a node costs at least its dispatch)."""

    def __init__(self, dispatch: float = 1000.0, unknown_size: int = 100, ns_per_flop: float = 0.25,
                 ns_per_byte: float = 0.1):
        self.dispatch = dispatch
        self.unknown_size = unknown_size
        self.ns_per_flop = ns_per_flop
        self.ns_per_byte = ns_per_byte

    def size(self, ttype) -> float:
        return math.prod(self.unknown_size if s is None else s for s in getattr(ttype, "shape", ()))

    def shape(self, ttype) -> tuple:
        return tuple(self.unknown_size if s is None else s for s in getattr(ttype, "shape", ()))

    def node_cost(self, enode, op, in_types, out_type, child_ops=()) -> float:
        name = enode.op
        if name in LEAVES:  # inputs and constants are already there
            return 0.0
        cost = self.dispatch
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
