"""Shapes: `Shape`, `MakeVector` (shape vectors), `SpecifyShape`, `Reshape`, and helpers built on `DimShuffle`."""

from __future__ import annotations

import numpy as np

from eqgraph.tensor.basic import (NotScalarConstantError, as_tensor_variable, constant, get_scalar_constant_value,
                                  int64_const)
from eqgraph.tensor.elemwise import ELEMWISE_OPS, broadcast_shape_vars, cast
from eqgraph.tensor.dimshuffle_op import dimshuffle
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Apply, Constant, Variable
from eqgraph.terms.op import Op
from eqgraph.xp import array_namespace, as_output, shape_array


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


def static_values(vec) -> list:
    """The entries of a 1-d int variable that are known statically (None for unknown)."""
    if isinstance(vec, Constant):
        return [int(s) for s in np.asarray(vec.data).reshape(-1)]
    if vec.owner is not None and isinstance(vec.owner.op, MakeVector):
        out = []
        for e in vec.owner.inputs:
            try:
                out.append(int(get_scalar_constant_value(e)))
            except NotScalarConstantError:
                out.append(None)
        return out
    n = vec.type.shape[0]
    return [None] * (n or 0)


class Shape(Op):
    """The runtime shape of a tensor, as an int64 vector."""

    __props__ = ()

    def make_node(self, x):
        x = as_tensor_variable(x)
        return Apply(self, [x], [TensorType("int64", (x.ndim,))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = shape_array(inputs[0])

    def infer_shape(self, fgraph, node, shapes):
        return [(int64_const(node.inputs[0].ndim),)]

    def connection_pattern(self, node):
        return [[False]]  # the elements of x do not affect its shape

    def flops(self, inputs, outputs):
        return 0


def shape(x):
    return Shape()(as_tensor_variable(x))


def shape_of(x) -> tuple:
    """One int64 scalar per axis of ``x``: a constant where the size is static."""
    x = as_tensor_variable(x)
    full = None
    dims = []
    for i, s in enumerate(x.type.shape):
        if s is not None:
            dims.append(int64_const(s))
        else:
            full = shape(x) if full is None else full
            dims.append(full[i])
    return tuple(dims)


class SpecifyShape(Op):
    """``x`` itself, with a static shape asserted (and checked at runtime)."""

    __props__ = ("shape",)
    view_map = {0: [0]}

    def __init__(self, shape):
        self.shape = tuple(None if s is None else int(s) for s in shape)

    def make_node(self, x):
        x = as_tensor_variable(x)
        if x.ndim != len(self.shape):
            raise TypeError(f"{self} expects a {len(self.shape)}-d input, got {x} with {x.ndim} dimensions")
        narrowed = TensorType(x.dtype, self.shape).meet(x.type)
        if narrowed is None:
            raise ValueError(f"{self}: the static shape {x.type.shape} of {x} contradicts {self.shape}")
        return Apply(self, [x], [narrowed()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        if any(s is not None and s != d for s, d in zip(self.shape, x.shape)):
            raise ValueError(f"SpecifyShape: expected shape {self.shape}, got {tuple(x.shape)}")
        output_storage[0][0] = x

    def infer_shape(self, fgraph, node, shapes):
        return [tuple(int64_const(s) if s is not None else d for s, d in zip(self.shape, shapes[0]))]


def specify_shape(x, shape):
    """``x`` with static shape ``shape`` (None entries keep what ``x`` knows; an int is the
    length of a vector, as PyTensor takes it)."""
    x = as_tensor_variable(x)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if all(s is None or s == k for s, k in zip(shape, x.type.shape)) and len(shape) == x.ndim:
        return x
    return SpecifyShape(shape)(x)


def as_shape_vector(shape) -> Variable:
    """A shape given as ints and/or scalar variables, or as a vector variable, as an int64 vector."""
    if isinstance(shape, Variable):
        if shape.ndim == 0:
            shape = [shape]
        else:
            if shape.ndim != 1 or shape.dtype not in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"):
                raise TypeError(f"a shape must be an integer vector, got {shape} of type {shape.type}")
            return cast(shape, "int64")
    if isinstance(shape, (int, np.integer)):
        shape = [shape]
    entries = list(shape)
    if all(isinstance(s, (int, np.integer)) for s in entries):
        return constant(np.asarray(entries, dtype="int64").reshape(len(entries)))
    return make_vector(*[cast(as_tensor_variable(s, ndim=0), "int64") for s in entries])


def _product(dims):
    """The product of the int scalars ``dims``, with no ``1 *`` in front (the 1 of an empty
    product only): a shape rule reads it, and every extra node is one more for extraction."""
    dims = list(dims)
    total = dims[0] if dims else int64_const(1)
    for d in dims[1:]:
        total = total * d
    return total


class Reshape(Op):
    """``x`` reshaped to the int vector ``shape`` (one entry may be -1), like ``np.reshape``."""

    __props__ = ("ndim",)
    view_map = {0: [0]}  # np.reshape returns a view whenever the strides allow

    def __init__(self, ndim: int):
        self.ndim = int(ndim)

    def make_node(self, x, shp):
        x, shp = as_tensor_variable(x), as_shape_vector(shp)
        if shp.type.shape[0] is not None and shp.type.shape[0] != self.ndim:
            raise ValueError(f"{self}: the shape {shp} has {shp.type.shape[0]} entries, not {self.ndim}")
        static = (static_values(shp) + [None] * self.ndim)[: self.ndim]
        if static.count(-1) > 1:
            raise ValueError(f"{self}: at most one entry of the new shape can be -1")
        negative = [s for s in static if s is not None and s < -1]
        if negative:  # NumPy: "negative dimensions not allowed"
            raise ValueError(f"{self}: the new shape {tuple(static)} of {x} has the negative entry {negative[0]}; "
                             "entries are sizes >= 0, or -1 for the one NumPy infers")
        known_in = [s for s in x.type.shape]
        if -1 in static:
            others = [s for s in static if s != -1]
            if None not in known_in and None not in others:
                total, rest = int(np.prod(known_in)), int(np.prod(others))
                if rest == 0 or total % rest:
                    raise ValueError(f"cannot reshape {x} of shape {x.type.shape} into {tuple(static)}")
                static[static.index(-1)] = total // rest
            else:
                static[static.index(-1)] = None
        if None not in known_in and None not in static and int(np.prod(known_in)) != int(np.prod(static)):
            raise ValueError(f"cannot reshape {x} of shape {x.type.shape} into {tuple(static)}")
        return Apply(self, [x, shp], [TensorType(x.dtype, static)()])

    def perform(self, node, inputs, output_storage):
        x, shp = inputs
        xp = array_namespace(x)
        output_storage[0][0] = xp.reshape(x, tuple(int(shp[i]) for i in range(self.ndim)))

    def infer_shape(self, fgraph, node, shapes):
        out = node.outputs[0].type.shape
        shp = node.inputs[1]
        requested = (static_values(shp) + [None] * self.ndim)[: self.ndim]
        dims = []
        for i, s in enumerate(out):
            if s is not None:
                dims.append(int64_const(s))
            elif requested[i] == -1:  # the size that makes the element counts match
                others = [shp[j] for j in range(self.ndim) if j != i]
                total = _product(shapes[0])
                # a flatten's -1 is every size: dividing by the empty product would leave an
                # int_div(total, 1) that costs more than the Reshape it stands for
                dims.append(ELEMWISE_OPS["int_div"](total, _product(others)) if others else total)
            else:
                dims.append(shp[i])
        return [tuple(dims)]

    def connection_pattern(self, node):
        return [[True], [False]]


def reshape(x, shape, ndim=None):
    x = as_tensor_variable(x)
    shp = as_shape_vector(shape)
    if ndim is None:
        if shp.type.shape[0] is None:
            raise ValueError(f"reshape({x}, {shape}) needs ndim: the length of the new shape is not static")
        ndim = shp.type.shape[0]
    return Reshape(ndim)(x, shp)


def flatten(x, ndim: int = 1):
    """Collapse the trailing axes of ``x`` so that it has ``ndim`` dimensions."""
    x = as_tensor_variable(x)
    if not 1 <= ndim <= max(x.ndim, 1):
        raise ValueError(f"flatten({x}, ndim={ndim}): ndim must be between 1 and {x.ndim}")
    dims = shape_of(x)[: ndim - 1]
    collapsed = x.type.shape[ndim - 1:]
    # the collapsed axes' size, static where theirs are (whatever the leading axes' sizes)
    last = int(np.prod(collapsed)) if None not in collapsed else -1
    return reshape(x, [*dims, last], ndim=ndim)


def transpose(x, axes=None):
    x = as_tensor_variable(x)
    axes = tuple(reversed(range(x.ndim))) if axes is None else tuple(a % x.ndim for a in axes)
    return dimshuffle(x, axes)


def matrix_transpose(x):
    """The transpose of each matrix of ``x``: its last two axes swapped (``np.matrix_transpose``,
    PyTensor's ``matrix_transpose``); the leading axes of a stack of matrices stay."""
    x = as_tensor_variable(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: Input array must be at least 2-dimensional, got {x} ({x.ndim}-d)")
    return dimshuffle(x, (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2))


def squeeze(x, axis=None):
    """Drop axes of size 1: with ``axis`` None those of static size 1, else the axes named,
    whose size, where not static, must be 1 when run (ValueError otherwise, as NumPy's). A 0-d
    ``x`` takes axis 0 or -1, as PyTensor's does, and is returned itself."""
    x = as_tensor_variable(x)
    if axis is None:
        axes = {i for i, s in enumerate(x.type.shape) if s == 1}
    else:
        named = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
        try:
            axes = set(np.lib.array_utils.normalize_axis_tuple(named, max(x.ndim, 1)))
        except np.exceptions.AxisError:
            raise np.exceptions.AxisError(f"axis {named} is out of bounds for array of dimension {x.ndim}") from None
        if x.ndim == 0:
            return x
        unknown = [i for i in axes if x.type.shape[i] is None]
        if unknown:
            x = specify_shape(x, tuple(1 if i in unknown else None for i in range(x.ndim)))
    return dimshuffle(x, [i for i in range(x.ndim) if i not in axes])


def expand_dims(x, axis):
    x = as_tensor_variable(x)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    ndim = x.ndim + len(axes)
    axes = {a % ndim for a in axes}
    order, k = [], 0
    for i in range(ndim):
        if i in axes:
            order.append("x")
        else:
            order.append(k)
            k += 1
    return dimshuffle(x, order)


def shape_padleft(x, n: int = 1):
    x = as_tensor_variable(x)
    return dimshuffle(x, ("x",) * n + tuple(range(x.ndim)))


def shape_padright(x, n: int = 1):
    x = as_tensor_variable(x)
    return dimshuffle(x, tuple(range(x.ndim)) + ("x",) * n)


class SumToShape(Op):
    """``g`` summed to the shape of ``like``: over the axes where ``like`` has size 1 and ``g``
    does not.  The inverse of NumPy broadcasting, decided at run time (for gradients); only
    ``like``'s shape is read."""

    __props__ = ()
    view_map = {0: [0]}  # ``g`` itself when nothing is summed

    def make_node(self, g, like):
        g, like = as_tensor_variable(g), as_tensor_variable(like)
        if g.ndim != like.ndim:
            raise ValueError(f"SumToShape: {g} has {g.ndim} dimensions, {like} has {like.ndim}")
        shape = tuple(s if s is not None else (t if t == 1 else None) for s, t in zip(like.type.shape, g.type.shape))
        return Apply(self, [g, like], [TensorType(g.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        g, like = inputs
        if g.shape == like.shape:
            output_storage[0][0] = g
            return
        xp = array_namespace(g)
        output_storage[0][0] = as_output(xp, xp.sum(g, axis=summed_axes(g.shape, like.shape), keepdims=True),
                                         node.outputs[0].type)

    def infer_shape(self, fgraph, node, shapes):
        return [shapes[1]]

    def connection_pattern(self, node):
        return [[True], [False]]


def summed_axes(g_shape, like_shape) -> tuple:
    """The axes ``SumToShape`` sums: where ``like`` has size 1 and ``g`` does not."""
    return tuple(i for i, (a, b) in enumerate(zip(g_shape, like_shape)) if b == 1 and a != 1)


def sum_to_shape(g, like):
    """``g`` summed to the shape of the tensor ``like`` (keeping what is static about it)."""
    return SumToShape()(g, like)


def swapaxes(x, axis1: int, axis2: int):
    """``np.swapaxes``: ``x`` with ``axis1`` and ``axis2`` exchanged (negative axes count from the end)."""
    x = as_tensor_variable(x)
    order = list(range(x.ndim))
    a, b = (_checked_axis(x, axis, "swapaxes") for axis in (axis1, axis2))
    order[a], order[b] = order[b], order[a]
    return dimshuffle(x, order)


def moveaxis(a, source, destination):
    """``np.moveaxis``: the axes ``source`` (an int or a sequence) moved to ``destination``, the
    others kept in their order."""
    a = as_tensor_variable(a)
    source = [_checked_axis(a, s, "moveaxis") for s in np.atleast_1d(source).tolist()]
    destination = [_checked_axis(a, d, "moveaxis") for d in np.atleast_1d(destination).tolist()]
    if len(source) != len(destination):
        raise ValueError(f"moveaxis: `source` and `destination` arguments must have the same number of "
                         f"elements, got {source} and {destination}")
    if len(set(source)) != len(source) or len(set(destination)) != len(destination):
        raise ValueError(f"moveaxis: repeated axis in source {source} or destination {destination}")
    order = [n for n in range(a.ndim) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return dimshuffle(a, order)


def _checked_axis(x, axis, what: str) -> int:
    axis = int(axis)
    if not -x.ndim <= axis < x.ndim:
        raise np.exceptions.AxisError(f"{what}: axis {axis} is out of bounds for {x} with {x.ndim} dimensions")
    return axis % x.ndim
