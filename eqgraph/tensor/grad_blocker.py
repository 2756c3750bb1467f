"""``zero_grad`` and ``disconnected_grad``: the identity, as the gradient sees it.

An op of the graph like any other (the e-graph schema encodes it, ``algebra.egg`` rewrites
it to ``x``), so it lives at the tensor level; its VJP sits with the others in
``eqgraph/grad/vjps.py``.
"""

from __future__ import annotations

from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.terms.basic import Apply
from eqgraph.terms.op import Op


class GradBlocker(Op):
    """Identity whose gradient is zero (``zero_grad``) or disconnected (``disconnected_grad``)."""

    __props__ = ("kind",)
    view_map = {0: [0]}

    def __init__(self, kind: str):
        self.kind = kind

    def __str__(self):
        return {"zero": "ZeroGrad", "disconnected": "DisconnectedGrad"}[self.kind]

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]

    def infer_shape(self, fgraph, node, shapes):
        return shapes

    def connection_pattern(self, node):
        return [[self.kind == "zero"]]


def zero_grad(x):
    """``x`` itself, whose gradient is zero."""
    return GradBlocker("zero")(as_tensor_variable(x))


def disconnected_grad(x):
    """``x`` itself, disconnected from the gradient (as if a constant)."""
    return GradBlocker("disconnected")(as_tensor_variable(x))
