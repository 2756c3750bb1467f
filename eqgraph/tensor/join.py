"""Putting tensors together: `Join` (concatenate) and `stack`.

`MakeVector` (scalars into a vector, the usual shape vector) lives in ``shape.py``."""

from __future__ import annotations

import numpy as np

from eqgraph.tensor.basic import NotScalarConstantError, as_tensor_variable, get_scalar_constant_value
from eqgraph.tensor.elemwise import ELEMWISE_OPS, cast
from eqgraph.tensor.shape import MakeVector, broadcast_shape_vars, expand_dims, int64_const, make_vector  # noqa: F401
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Apply, Variable
from eqgraph.terms.op import Op
from eqgraph.xp import array_namespace, as_output


class Join(Op):
    """Concatenate tensors of one ndim along ``axis`` (``np.concatenate``)."""

    __props__ = ("axis",)

    def __init__(self, axis: int | None = None):
        # PyTensor's Join() takes the axis as its node's first input: Join()(axis, *tensors)
        self.axis = None if axis is None else int(axis)

    def make_node(self, *tensors):
        if self.axis is None:
            if not tensors:
                raise TypeError("Join()(axis, *tensors) needs an axis")
            return _join_node(tensors[0], tensors[1:])
        tensors = [as_tensor_variable(t) for t in tensors]
        if not tensors:
            raise ValueError("concatenate needs at least one tensor")
        ndim = tensors[0].ndim
        if ndim == 0 or any(t.ndim != ndim for t in tensors):
            raise TypeError(f"{self}: only tensors with the same number of dimensions (at least 1) can be "
                            f"joined, got {', '.join(f'{t} ({t.ndim}-d)' for t in tensors)}")
        if not 0 <= self.axis < ndim:
            raise ValueError(f"{self}: axis {self.axis} is out of range for {ndim}-d tensors")
        dtype = np.result_type(*[t.dtype for t in tensors]).name
        tensors = [cast(t, dtype) for t in tensors]
        shape = []
        for ax, dims in enumerate(zip(*(t.type.shape for t in tensors))):
            if ax == self.axis:
                shape.append(None if None in dims else sum(dims))
            else:
                known = {d for d in dims if d is not None}
                if len(known) > 1:
                    raise ValueError(f"{self}: the tensors' sizes must match exactly on every axis but the "
                                     f"joined one; on axis {ax} they are {dims}")
                shape.append(known.pop() if known else None)
        return Apply(self, tensors, [TensorType(dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        xp = array_namespace(*inputs)
        output_storage[0][0] = as_output(xp, xp.concat(list(inputs), axis=self.axis), node.outputs[0].type)

    def infer_shape(self, fgraph, node, shapes):
        out = list(broadcast_shape_vars(shapes, node.outputs[0].type.shape))
        if node.outputs[0].type.shape[self.axis] is None:
            total = as_tensor_variable(shapes[0][self.axis])
            for s in shapes[1:]:
                total = total + s[self.axis]
            out[self.axis] = total
        return [tuple(out)]


def _join_node(axis, tensors) -> Apply:
    """The node of ``Join(axis)`` for an axis given as a value: an integer known when the graph is built."""
    axis_var = as_tensor_variable(axis)
    if np.dtype(axis_var.dtype).kind not in "iu":
        raise TypeError(f"Join: the axis must be an integer, got {axis!r} of dtype {axis_var.dtype}")
    if not tensors:
        raise ValueError("join needs at least one tensor")
    ndim = as_tensor_variable(tensors[0]).ndim
    try:
        value = int(get_scalar_constant_value(axis_var))
    except NotScalarConstantError:
        return _join_along_symbolic_axis(axis_var, tensors).owner
    return Join(value % ndim if ndim and -ndim <= value < 0 else value).make_node(*tensors)


def _join_along_symbolic_axis(axis, tensors):
    """One static-axis Join per axis, chosen by a lazy ``ifelse`` on the axis, checked to be in
    range at run time (as ``sort`` does for a symbolic axis): only the join taken runs."""
    from eqgraph.tensor.conditional import ifelse  # conditional builds on this module's ops
    from eqgraph.tensor.sorting import CheckAxis
    first, *rest = [as_tensor_variable(t) for t in tensors]
    checked = CheckAxis()(first, axis)
    axis = cast(checked.owner.inputs[1], "int64")
    axis = ELEMWISE_OPS["switch"](ELEMWISE_OPS["lt"](axis, 0), axis + first.ndim, axis)
    out = Join(first.ndim - 1)(checked, *rest)
    for k in reversed(range(first.ndim - 1)):
        out = ifelse(ELEMWISE_OPS["eq"](axis, k), Join(k)(checked, *rest), out)
    return out


def join(axis, *tensors):
    """PyTensor's ``join``: ``tensors`` concatenated along ``axis`` (an int, or a 0-d integer
    variable: then checked at run time); one tensor is itself."""
    if len(tensors) == 1:
        return as_tensor_variable(tensors[0])
    return _join_node(axis, tensors).outputs[0]


def concatenate(tensors, axis: int = 0):
    tensors = [as_tensor_variable(t) for t in tensors]
    if len(tensors) == 1:
        return tensors[0]
    ndim = tensors[0].ndim
    return Join(axis % ndim if ndim else axis)(*tensors)


def stack(tensors, axis: int = 0):
    """Join tensors of one shape along a new axis (``np.stack``)."""
    if isinstance(tensors, Variable):
        raise TypeError(f"stack: First argument should be a Sequence of tensors, got the tensor {tensors}")
    tensors = [as_tensor_variable(t) for t in tensors]
    if not tensors:
        raise ValueError("stack: No tensor arguments provided")
    if all(t.ndim == 0 for t in tensors) and axis in (0, -1):
        return make_vector(*tensors)
    ndim = tensors[0].ndim + 1
    if not -ndim <= axis < ndim:  # np.stack's error, an IndexError and a ValueError
        raise np.exceptions.AxisError(f"stack: axis {axis} is out of bounds for the {ndim}-d result")
    axis = axis % ndim
    return Join(axis)(*[expand_dims(t, axis) for t in tensors])
