"""`DimShuffle`: permute axes, insert broadcastable axes and drop static-1 axes, as a view."""

from __future__ import annotations

from eqgraph.tensor.basic import as_tensor_variable, constant, get_underlying_scalar_constant_value
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Apply
from eqgraph.terms.op import Op
from eqgraph.xp import array_namespace


class DimShuffle(Op):
    """Permute axes, insert broadcastable axes (``"x"``) and drop static-1 axes.

    ``new_order`` lists, for each output axis, the input axis it takes or ``"x"``.
    """

    __props__ = ("input_ndim", "new_order")
    view_map = {0: [0]}

    def __init__(self, input_ndim: int, new_order):
        self.input_ndim = int(input_ndim)
        self.new_order = tuple(o if o == "x" else int(o) for o in new_order)
        kept = [o for o in self.new_order if o != "x"]
        if len(set(kept)) != len(kept) or any(not 0 <= o < self.input_ndim for o in kept):
            raise ValueError(f"invalid dimshuffle order {self.new_order} for a {input_ndim}-d input")
        self.drop = tuple(i for i in range(self.input_ndim) if i not in kept)
        # after dropping, the kept axes are in input order; this puts them in output order
        self.permutation = tuple(sorted(kept).index(k) for k in kept)

    def __str__(self):
        return "DimShuffle{" + ",".join(map(str, self.new_order)) + "}"

    def make_node(self, x):
        x = as_tensor_variable(x)
        if x.ndim != self.input_ndim:
            raise TypeError(f"{self} expects a {self.input_ndim}-d input, got {x} with {x.ndim} dimensions")
        for i in self.drop:
            if x.type.shape[i] != 1:
                raise ValueError(f"{self} cannot drop axis {i} of {x}: its static size is "
                                 f"{x.type.shape[i]}, not 1")
        shape = tuple(1 if o == "x" else x.type.shape[o] for o in self.new_order)
        return Apply(self, [x], [TensorType(x.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        xp = array_namespace(x)
        if self.drop:  # the dropped axes have size 1
            x = xp.reshape(x, tuple(s for i, s in enumerate(x.shape) if i not in self.drop))
        if self.permutation != tuple(sorted(self.permutation)):
            x = xp.permute_dims(x, self.permutation)
        if "x" in self.new_order:
            sizes = iter(x.shape)
            x = xp.reshape(x, tuple(1 if o == "x" else next(sizes) for o in self.new_order))
        output_storage[0][0] = x

    def infer_shape(self, fgraph, node, shapes):
        (shape,) = shapes
        return [tuple(constant(1, dtype="int64") if o == "x" else shape[o] for o in self.new_order)]

    def scalar_constant_value(self, node):
        """A 0-d view of a constant of one element is that element (``get_scalar_constant_value``)."""
        return get_underlying_scalar_constant_value(node.inputs[0])[()]


def dimshuffle(x, new_order):
    x = as_tensor_variable(x)
    return DimShuffle(x.ndim, new_order)(x)
