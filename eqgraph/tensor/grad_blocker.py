"""``zero_grad`` and ``disconnected_grad``: the identity, as the gradient sees it; and
``grad_clip`` and ``grad_scale``: the identity, whose gradient is clipped or scaled.

An op of the graph like any other (the e-graph schema encodes it, ``algebra.egg`` rewrites
it to ``x``), so it lives at the tensor level; its VJP sits with the others in
``eqgraph/grad/vjps.py``. ``GradTransform`` takes its bounds or factor as inputs (they may be
symbolic), so it is an op of its own, with its gradient as a method.
"""

from __future__ import annotations

from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.tensor.elemwise import ELEMWISE_OPS
from eqgraph.terms.null_type import disconnected
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


class GradTransform(Op):
    """Identity of its first input whose gradient is clipped to ``[lower, upper]`` (``kind`` "clip",
    inputs ``x, lower, upper``) or multiplied by a factor (``kind`` "scale", inputs ``x, factor``).
    The bounds and the factor do not change the value, so no gradient reaches them."""

    __props__ = ("kind",)
    view_map = {0: [0]}

    def __init__(self, kind: str):
        if kind not in ("clip", "scale"):
            raise ValueError(f"GradTransform: kind must be 'clip' or 'scale', not {kind!r}")
        self.kind = kind

    def __str__(self):
        return {"clip": "GradClip", "scale": "GradScale"}[self.kind]

    def make_node(self, x, *params):
        x = as_tensor_variable(x)
        params = [as_tensor_variable(p) for p in params]
        wanted = {"clip": 2, "scale": 1}[self.kind]
        if len(params) != wanted or any(p.ndim != 0 for p in params):
            raise TypeError(f"{self} takes x and {wanted} scalar(s), got {params}")
        return Apply(self, [x, *params], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]

    def infer_shape(self, fgraph, node, shapes):
        return [shapes[0]]

    def connection_pattern(self, node):
        return [[True]] + [[False]] * (len(node.inputs) - 1)

    def grad(self, inputs, output_grads):
        (g,) = output_grads
        if self.kind == "clip":
            g = ELEMWISE_OPS["clip"](g, inputs[1], inputs[2])
        else:
            g = g * inputs[1]
        return [g] + [disconnected() for _ in inputs[1:]]


def grad_clip(x, lower_bound, upper_bound):
    """``x`` itself, whose gradient is clipped elementwise to ``[lower_bound, upper_bound]``
    (PyTensor's ``grad_clip``)."""
    if isinstance(lower_bound, (int, float)) and isinstance(upper_bound, (int, float)) and lower_bound > upper_bound:
        raise ValueError(f"grad_clip: lower_bound {lower_bound} is above upper_bound {upper_bound}")
    return GradTransform("clip")(x, lower_bound, upper_bound)


def grad_scale(x, multiplier):
    """``x`` itself, whose gradient is multiplied by ``multiplier`` (PyTensor's ``grad_scale``)."""
    return GradTransform("scale")(x, multiplier)
