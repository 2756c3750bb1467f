"""Creating tensors: `Alloc` (a value broadcast to a shape), `ARange`, and the NumPy-named helpers."""

from __future__ import annotations

import numpy as np

from eqgraph.tensor.basic import NotScalarConstantError, as_tensor_variable, constant, get_scalar_constant_value
from eqgraph.tensor.elemwise import ELEMWISE_OPS, cast
from eqgraph.tensor.shape import int64_const
from eqgraph.settings import config
from eqgraph.tensor.type import DISCRETE_DTYPES, TensorType
from eqgraph.tensor.variable import TensorConstant
from eqgraph.terms.basic import Apply
from eqgraph.terms.op import Op
from eqgraph.xp import array_namespace, as_output


def _static_int(v):
    try:
        return int(get_scalar_constant_value(v))
    except NotScalarConstantError:
        return None


class Alloc(Op):
    """A new tensor of shape ``(*dims)`` filled with ``value`` (broadcast, like ``np.broadcast_to``)."""

    __props__ = ()

    def make_node(self, value, *dims):
        value = as_tensor_variable(value)
        dims = [cast(as_tensor_variable(d, ndim=0), "int64") for d in dims]
        if value.ndim > len(dims):
            raise TypeError(f"Alloc: the value {value} has more dimensions ({value.ndim}) than the shape ({len(dims)})")
        static = [_static_int(d) for d in dims]
        first = len(dims) - value.ndim  # the value's axes are the last ones
        for i, v in enumerate(value.type.shape, first):
            if static[i] is not None and v is not None and v not in (1, static[i]):
                raise ValueError(f"Alloc static input type and target shape are incompatible: {value} of shape "
                                 f"{value.type.shape} cannot be broadcast to {tuple(static)}")
            if static[i] is None and v is not None and v != 1:  # a size other than 1 is not broadcast
                static[i] = v
        return Apply(self, [value, *dims], [TensorType(value.dtype, static)()])

    def perform(self, node, inputs, output_storage):
        value, *dims = inputs
        shape = tuple(map(int, dims))
        if type(value) is np.ndarray and value.ndim == 0:  # value has the output's dtype (make_node)
            # np.full, and np.zeros for +0 (fresh zeroed pages): both are several times
            # cheaper than broadcast_to + copy
            kind = value.dtype.kind
            zero = not value and (kind in "biu" or kind == "f" and not np.signbit(value))
            output_storage[0][0] = np.zeros(shape, value.dtype) if zero else np.full(shape, value, value.dtype)
            return
        xp = array_namespace(value)
        out = xp.empty(shape, dtype=getattr(xp, node.outputs[0].type.dtype))
        out[...] = value
        output_storage[0][0] = out

    def infer_shape(self, fgraph, node, shapes):
        return [tuple(node.inputs[1:])]

    def connection_pattern(self, node):
        return [[True]] + [[False]] * (len(node.inputs) - 1)

    def do_constant_folding(self, fgraph, node):
        return False  # folding would store a possibly huge array in the graph

    def flops(self, inputs, outputs):
        return 0


def alloc(value, *shape):
    return Alloc()(value, *shape)


def shape_entries(shape, what="the shape") -> tuple:
    """The sizes in ``shape``: a tuple or list of sizes, one size, or (PyTensor's) one integer
    vector, such as ``x.shape``, whose length is known when the graph is built."""
    if isinstance(shape, (tuple, list)):
        return tuple(shape)
    vector = as_tensor_variable(shape)
    if vector.ndim == 0:
        return (vector,)
    if isinstance(vector, TensorConstant) and vector.data.shape == (0,):
        return ()  # no sizes: a 0-d result, whatever dtype the empty list got (np.zeros([]))
    if vector.ndim != 1 or vector.dtype not in DISCRETE_DTYPES or vector.dtype == "bool":
        raise TypeError(f"{what} must be sizes or an integer vector of them, got {vector} ({vector.type})")
    if isinstance(vector, TensorConstant):
        return tuple(int(n) for n in vector.data)  # plain ints keep the result's static shape
    length = vector.type.shape[0]
    if length is None:
        raise ValueError(f"{what}: the length of {vector} ({vector.type}) is not known when the graph is "
                         "built; use et.specify_shape to state it, or give the sizes as a list")
    return tuple(vector[i] for i in range(length))


def full(shape, fill_value, dtype=None):
    """``np.full``: a tensor of ``shape`` (sizes, or one integer vector such as ``x.shape``)
    filled with ``fill_value``."""
    value = as_tensor_variable(fill_value, dtype=dtype)
    value = value if dtype is None else cast(value, dtype)  # a variable keeps its dtype above
    return alloc(value, *shape_entries(shape, "full: shape"))


def zeros(shape, dtype=None):
    return full(shape, constant(0, dtype=dtype or config.floatX))


def ones(shape, dtype=None):
    return full(shape, constant(1, dtype=dtype or config.floatX))


def empty(shape, dtype=None):
    """``np.empty``: a tensor of ``shape`` whose values are unspecified (PyTensor's ``empty``);
    eqgraph fills it with zeros, so that no garbage is ever read."""
    return full(shape, constant(0, dtype=dtype or config.floatX))


def fill(model, value):
    """``value`` broadcast to the shape of ``model`` (Aesara's ``fill``/``second``)."""
    return ELEMWISE_OPS["second"](model, value)


def full_like(x, fill_value, dtype=None):
    x = as_tensor_variable(x)
    return fill(x, constant(fill_value, dtype=dtype or x.dtype))


def zeros_like(x, dtype=None):
    return full_like(x, 0, dtype)


def ones_like(x, dtype=None):
    return full_like(x, 1, dtype)


class ARange(Op):
    """``np.arange(start, stop, step)`` with scalar inputs."""

    __props__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype).name

    def make_node(self, start, stop, step):
        start, stop, step = (as_tensor_variable(v, ndim=0) for v in (start, stop, step))
        values = [_static_value(v) for v in (start, stop, step)]
        length = None
        if None not in values:
            if values[2] == 0:
                raise ValueError("arange: step must not be zero")
            length = len(np.arange(*values))
        return Apply(self, [start, stop, step], [TensorType(self.dtype, (length,))()])

    def perform(self, node, inputs, output_storage):
        xp = array_namespace(*inputs)
        as_number = float if np.dtype(self.dtype).kind == "f" else int
        start, stop, step = (as_number(v) for v in inputs)
        out = xp.arange(start, stop, step, dtype=getattr(xp, self.dtype))
        output_storage[0][0] = as_output(xp, out, node.outputs[0].type)

    def infer_shape(self, fgraph, node, shapes):
        start, stop, step = node.inputs
        if node.outputs[0].type.shape[0] is not None:
            return [(int64_const(node.outputs[0].type.shape[0]),)]
        ceil, maximum = ELEMWISE_OPS["ceil"], ELEMWISE_OPS["maximum"]
        length = ceil(cast(stop - start, "float64") / cast(step, "float64"))
        return [(cast(maximum(length, 0), "int64"),)]

    def connection_pattern(self, node):
        return [[True], [False], [True]]  # the values are start + i * step; stop sets only the length


def _static_value(v):
    try:
        return get_scalar_constant_value(v).item()
    except (NotScalarConstantError, AttributeError):
        return None


def arange(start, stop=None, step=1, dtype=None):
    if stop is None:
        start, stop = 0, start
    start, stop, step = (as_tensor_variable(v) for v in (start, stop, step))
    return ARange(dtype or _arange_dtype(start, stop, step))(start, stop, step)


def _arange_dtype(*bounds) -> str:
    """PyTensor's: the bounds' common dtype, Python numbers not widening it (arange of a
    float32 stop is float32), and every integer dtype widened to 64 bits against overflow."""
    weak = [v for v in bounds if getattr(v, "weak", False)]
    strong = [np.dtype(v.dtype) for v in bounds if not getattr(v, "weak", False)]
    dtype = np.result_type(*strong, *(v.data.item() for v in weak)) if strong else \
        np.result_type(*(v.dtype for v in bounds))
    dtype = {"b": "int64", "i": "int64", "u": "uint64"}.get(dtype.kind, dtype.name)
    return _numpy_arange_dtype(bounds, dtype) if config.cast_policy == "numpy+floatX" else dtype


def _numpy_arange_dtype(bounds, dtype: str) -> str:
    """Under cast_policy "numpy+floatX": np.arange's dtype for the bounds' dtypes, except that a
    float64 from no float64 bound is floatX."""
    numpy_dtype = np.arange(*(np.zeros((), v.dtype) + k for v, k in zip(bounds, (0, 1, 1)))).dtype.name
    if numpy_dtype == "float64" and config.floatX != "float64" and all(v.dtype != "float64" for v in bounds):
        return config.floatX
    return numpy_dtype

