"""Putting tensors together: `MakeVector` (scalars into a vector) and `Join` (concatenate)."""

from __future__ import annotations

import numpy as np

from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.tensor.elemwise import cast
from eqgraph.tensor.shape import expand_dims, int64_const
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Apply
from eqgraph.terms.op import Op
from eqgraph.xp import array_namespace, as_output


class MakeVector(Op):
    """A vector of ``dtype`` whose entries are the 0-d inputs."""

    __props__ = ("dtype",)

    def __init__(self, dtype="int64"):
        self.dtype = np.dtype(dtype).name

    def make_node(self, *scalars):
        scalars = [as_tensor_variable(s) for s in scalars]
        for s in scalars:
            if s.ndim != 0:
                raise TypeError(f"{self} takes 0-d inputs, got {s} with {s.ndim} dimensions")
        scalars = [cast(s, self.dtype) for s in scalars]
        return Apply(self, scalars, [TensorType(self.dtype, (len(scalars),))()])

    def perform(self, node, inputs, output_storage):
        xp = array_namespace(*inputs)
        ttype = node.outputs[0].type
        if xp is np:
            output_storage[0][0] = np.array(inputs, dtype=ttype.numpy_dtype)
        else:
            output_storage[0][0] = as_output(xp, xp.stack([xp.asarray(v) for v in inputs]), ttype)

    def infer_shape(self, fgraph, node, shapes):
        return [(int64_const(len(node.inputs)),)]


def make_vector(*scalars, dtype=None):
    scalars = [as_tensor_variable(s) for s in scalars]
    if dtype is None:
        dtype = np.result_type(*[s.dtype for s in scalars]).name if scalars else "int64"
    return MakeVector(dtype)(*scalars)


class Join(Op):
    """Concatenate tensors of one ndim along ``axis`` (``np.concatenate``)."""

    __props__ = ("axis",)

    def __init__(self, axis: int):
        self.axis = int(axis)

    def make_node(self, *tensors):
        tensors = [as_tensor_variable(t) for t in tensors]
        if not tensors:
            raise ValueError("concatenate needs at least one tensor")
        ndim = tensors[0].ndim
        if ndim == 0 or any(t.ndim != ndim for t in tensors):
            raise TypeError(f"{self} needs tensors of one ndim >= 1, got "
                            f"{', '.join(f'{t} ({t.ndim}-d)' for t in tensors)}")
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
                    raise ValueError(f"{self}: the tensors' sizes differ on axis {ax}: {dims}")
                shape.append(known.pop() if known else None)
        return Apply(self, tensors, [TensorType(dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        xp = array_namespace(*inputs)
        output_storage[0][0] = as_output(xp, xp.concat(list(inputs), axis=self.axis), node.outputs[0].type)

    def infer_shape(self, fgraph, node, shapes):
        from eqgraph.tensor.shape import broadcast_shape_vars

        out = list(broadcast_shape_vars(shapes, node.outputs[0].type.shape))
        if node.outputs[0].type.shape[self.axis] is None:
            total = as_tensor_variable(shapes[0][self.axis])
            for s in shapes[1:]:
                total = total + s[self.axis]
            out[self.axis] = total
        return [tuple(out)]


def concatenate(tensors, axis: int = 0):
    tensors = [as_tensor_variable(t) for t in tensors]
    if len(tensors) == 1:
        return tensors[0]
    ndim = tensors[0].ndim
    return Join(axis % ndim if ndim else axis)(*tensors)


def stack(tensors, axis: int = 0):
    """Join tensors of one shape along a new axis (``np.stack``)."""
    tensors = [as_tensor_variable(t) for t in tensors]
    if all(t.ndim == 0 for t in tensors) and axis in (0, -1):
        return make_vector(*tensors)
    ndim = tensors[0].ndim + 1
    axis = axis % ndim
    return Join(axis)(*[expand_dims(t, axis) for t in tensors])
