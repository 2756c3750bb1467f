"""Constants, automatic wrapping of Python values, and constructors of variables."""

from __future__ import annotations

import numbers

import numpy as np

from eqgraph.settings import config
from eqgraph.tensor import variable
from eqgraph.tensor.type import MaskedArrayError, TensorType, first_overflow, plain_array
from eqgraph.tensor.variable import TensorConstant, TensorVariable
from eqgraph.terms.basic import Constant, Variable


def constant(value, name=None, ndim=None, dtype=None) -> TensorConstant:
    """A TensorConstant holding ``value`` (a number, nested list or array).

    Python numbers become *weak* constants (dtype int64/float64/complex128/bool
    until combined with an array, as in NumPy); ``dtype`` forces a dtype.
    """
    dtype = _dtype(dtype)
    if isinstance(value, TensorConstant):
        if ndim in (None, value.ndim) and dtype in (None, value.dtype):
            return value
        value = value.data
    weak = dtype is None and isinstance(value, (bool, int, float, complex)) and not isinstance(value, np.generic)
    if isinstance(value, np.ndarray):
        value = plain_array(value)  # np.asarray would drop a mask silently
    with np.errstate(over="ignore"):  # an overflow is refused below, naming the value
        arr = np.asarray(value, dtype=dtype)
    if dtype is not None and arr.dtype.kind == "f":
        _check_no_overflow(value, arr)
    if arr.dtype.kind in "OUSV":
        raise TypeError(f"Cannot make a tensor constant from {value!r}")
    if ndim is not None:
        if arr.ndim > ndim and any(d != 1 for d in arr.shape[:arr.ndim - ndim]):
            raise ValueError(f"constant {value!r} has more than {ndim} dimensions")
        arr = arr.reshape(arr.shape[max(arr.ndim - ndim, 0):])  # leading axes of size 1 dropped
        arr = arr.reshape((1,) * (ndim - arr.ndim) + arr.shape)
    if arr.dtype == np.float64 and config.floatX != "float64" and (weak or _empty_sequence(value, arr, dtype)):
        arr = arr.astype(config.floatX)  # a Python float, or [] (PyTensor's casting policy): floatX
    return TensorConstant(TensorType(arr.dtype, arr.shape), arr, name=name, weak=weak)


def _dtype(dtype):
    """``dtype`` with the name "floatX" read as the configured float dtype."""
    return config.floatX if isinstance(dtype, str) and dtype == "floatX" else dtype


def _empty_sequence(value, arr, dtype) -> bool:
    """``[]``, ``()``, ``[[]]``: no element says what dtype it is."""
    return dtype is None and isinstance(value, (list, tuple)) and arr.size == 0


def _check_no_overflow(value, arr: np.ndarray) -> None:
    """Refuse finite numbers that became inf in ``arr``'s float dtype (1e40 as float32)."""
    number = first_overflow(np.asarray(value), arr)
    if number is not None:
        raise ValueError(f"constant: {number!r} does not fit {arr.dtype} (it would become inf); "
                         f"its largest value is {np.finfo(arr.dtype).max}")


def as_tensor_variable(x, name=None, ndim=None, dtype=None) -> TensorVariable:
    """``x`` as a tensor Variable, as PyTensor's: a variable passes through with its own dtype
    (``dtype`` applies to values only) and, given ``ndim``, loses leading broadcastable axes or
    gains them; values become constants (a list of constants too); a Python bool is refused."""
    dtype = _dtype(dtype)
    if isinstance(x, Variable):
        if not isinstance(x.type, TensorType):
            raise TypeError(f"Expected a tensor variable, got {x} of type {x.type}")
        return x if ndim is None else _with_ndim(x, ndim)
    if hasattr(x, "owner") and hasattr(x, "op"):  # an Apply: its default output
        return as_tensor_variable(x.default_output(), name, ndim, dtype)
    if isinstance(x, bool):
        # a comparison of variables with == is a Python bool, which would silently be a constant
        raise TypeError(f"as_tensor_variable refuses a Python bool ({x}), as PyTensor does: use "
                        f"np.array({x}) for a boolean constant, and eq(a, b), not a == b, to compare tensors")
    if isinstance(x, range) and ndim not in (None, 1):
        raise ValueError(f"ndim for range must be 1, got ndim={ndim}: as_tensor_variable({x!r}) is a vector")
    if isinstance(x, (list, tuple)) and any(isinstance(e, Variable) for e in x):
        if not all(isinstance(e, Constant) or not isinstance(e, Variable) for e in x):
            # ``stack`` is built on this module, so it is reached through the package (variable.py)
            return variable.et.stack([as_tensor_variable(e) for e in x])
        x = [e.data if isinstance(e, Constant) else e for e in x]  # constants only: one constant
    try:
        return constant(x, name=name, ndim=ndim, dtype=dtype)
    except MaskedArrayError:
        raise
    except (TypeError, ValueError) as err:
        raise TypeError(f"Cannot convert {x!r} to a tensor variable: {err}") from err


def _with_ndim(x, ndim: int):
    """``x`` with ``ndim`` axes: size-1 axes added in front, or leading broadcastable ones dropped."""
    if x.ndim < ndim:
        return x.dimshuffle(*(("x",) * (ndim - x.ndim) + tuple(range(x.ndim))))
    drop = x.ndim - ndim
    if not all(s == 1 for s in x.type.shape[:drop]):
        raise ValueError(f"Tensor of type {x.type} could not be cast to have {ndim} dimensions: "
                         f"{x} has {x.ndim}, and its leading {drop} axes are not all of static size 1")
    return x.dimshuffle(*range(drop, x.ndim)) if drop else x


as_tensor = as_tensor_variable


def scalar_from_tensor(x) -> TensorVariable:
    """PyTensor's conversion of a 0-d tensor to its scalar type. eqgraph's scalars are 0-d
    tensors, so it is ``x`` itself; anything but a 0-d tensor is refused, as PyTensor does."""
    x = as_tensor_variable(x)
    if x.ndim != 0:
        raise TypeError(f"scalar_from_tensor: {x} must be a 0-d tensor, got {x.type} with {x.ndim} "
                        "dimensions")
    return x


def tensor_from_scalar(x) -> TensorVariable:
    """PyTensor's conversion of a scalar to a 0-d tensor: ``x`` itself (eqgraph's scalars are 0-d
    tensors); anything with dimensions is refused, as PyTensor does."""
    x = as_tensor_variable(x)
    if x.ndim != 0:
        raise TypeError(f"tensor_from_scalar: {x} must be a scalar, got {x.type} with {x.ndim} dimensions")
    return x


class NotScalarConstantError(ValueError):
    """The variable's value is not known at graph-construction time."""


def get_scalar_constant_value(v, elemwise=True, only_process_constants=False, max_recur=10,
                              raise_not_constant=True):
    """The value of a 0-d variable when the graph alone determines it, else raise.

    Only 0-d values qualify, as in PyTensor: a length-1 vector is not a scalar, even constant.
    Looks through constants and through every op that defines ``scalar_constant_value``
    (casts, ``x.shape[i]`` of a static size, ``make_vector(...)[i]``): what an op's output
    is known to be sits with the op. The keywords are PyTensor's, as
    ``get_underlying_scalar_constant_value`` takes them.
    """
    ndim = v.ndim if isinstance(v, np.ndarray) else getattr(getattr(v, "type", None), "ndim", 0)
    if ndim != 0:
        if not raise_not_constant:
            return v
        raise NotScalarConstantError(f"{v} has ndim {ndim}, not 0: it is not a scalar constant")
    try:
        return _underlying_value(v, elemwise, 0 if only_process_constants else max_recur)
    except NotScalarConstantError:
        if raise_not_constant:
            raise
        return v


def get_underlying_scalar_constant_value(v, *, elemwise=True, only_process_constants=False, max_recur=10,
                                         raise_not_constant=True) -> np.ndarray:
    """The one value under ``v`` of any ndim, as a 0-d array (PyTensor's return type), when the
    graph alone determines it: a constant whose entries are all equal (a length-1 vector, say) or
    a 0-d op output known to be constant.

    ``only_process_constants``: look at constants only, not through ops. ``elemwise=False``: not
    through elementwise ops (casts, broadcasting views). ``max_recur``: through at most that many
    ops. ``raise_not_constant=False``: give back ``v`` itself where it is not constant.
    """
    try:
        return np.asarray(_underlying_value(v, elemwise, 0 if only_process_constants else max_recur))
    except NotScalarConstantError:
        if raise_not_constant:
            raise
        return v


def _underlying_value(v, elemwise: bool, ops_left: int) -> numbers.Number:
    if isinstance(v, (int, float, np.number, np.bool_)):
        return v
    if isinstance(v, (Constant, np.ndarray)):
        data = np.asarray(v.data if isinstance(v, Constant) else v)
        if data.size and (data.size == 1 or (data == data.flat[0]).all()):
            return data.flat[0]
        raise NotScalarConstantError(f"{v} is not a scalar constant")
    node = getattr(v, "owner", None)
    known = getattr(getattr(node, "op", None), "scalar_constant_value", None)
    elementwise = type(getattr(node, "op", None)).__name__ == "Elemwise"
    if elementwise and elemwise and node.op.name == "second" and ops_left > 0:
        return _underlying_value(node.inputs[1], elemwise, ops_left - 1)  # y broadcast to x's shape: y
    # a DimShuffle's entries are its input's, so any ndim of it has its input's one value
    of_any_ndim = type(getattr(node, "op", None)).__name__ == "DimShuffle"
    one_entry = getattr(v, "ndim", None) == 0 or of_any_ndim
    if (known is None and not elementwise) or not one_entry or ops_left <= 0:
        raise NotScalarConstantError(f"{v} is not constant")
    if not elemwise and type(node.op).__name__ in ("Cast", "DimShuffle", "Elemwise"):
        raise NotScalarConstantError(f"{v} is the output of an elementwise op, and elemwise=False")
    if known is None:  # an elementwise op of constants (PyTensor's folding): its NumPy function on them
        values = [np.asarray(_underlying_value(i, elemwise, ops_left - 1), dtype=i.dtype)
                  for i in node.inputs]
        with np.errstate(all="ignore"):  # an inf or a NaN is the value, as when the graph runs
            return np.asarray(node.op.scalar.impl(np)(*values)).astype(v.dtype)[()]
    return known(node)


def upcast(dtype, *dtypes) -> str:
    """PyTensor's ``upcast``: the dtype NumPy gives values of ``dtype, *dtypes`` combined, except
    that under ``config.cast_policy == "numpy+floatX"`` a float64 from no float64 input is floatX
    (float32 or float16) instead."""
    names = [np.dtype(d).name for d in (dtype, *dtypes)]
    common = np.result_type(*names).name
    if config.cast_policy != "numpy+floatX" or common not in ("float64", "float32"):
        return common
    # floatX is kept unless an input is wider: float32 keeps float32 unless a float64 is given,
    # float16 keeps float16 unless a float32 or float64 is
    wider = {"float32": ("float64",), "float16": ("float64", "float32")}.get(config.floatX)
    if wider and not any(d in wider for d in names) and np.dtype(common).itemsize > np.dtype(config.floatX).itemsize:
        return config.floatX
    return common


def int64_const(n: int):
    return constant(int(n), dtype="int64")


# -- variable constructors ---------------------------------------------------------
def tensor(name=None, dtype=None, shape=None) -> TensorVariable:
    """A symbolic tensor: ``tensor("x", "float32", (None, 3))``."""
    if shape is None:
        raise TypeError("tensor() needs a shape; use None for unknown sizes, e.g. (None, 3)")
    return TensorType(dtype or config.floatX, shape)(name)


def _maker(static):
    def make(name=None, dtype=None, shape=None):
        return TensorType(dtype or config.floatX, static if shape is None else shape)(name)

    return make


scalar = _maker(())
vector = _maker((None,))
row = _maker((1, None))
col = _maker((None, 1))
matrix = _maker((None, None))
tensor3 = _maker((None,) * 3)
tensor4 = _maker((None,) * 4)
for _maker_fn, _word in ((scalar, "scalar"), (vector, "vector"), (row, "row"), (col, "column"),
                         (matrix, "matrix"), (tensor3, "3-d tensor"), (tensor4, "4-d tensor")):
    _maker_fn.__doc__ = f"A symbolic {_word}: ``(name=None, dtype=config.floatX, shape=None)``."

# The prefixed names are TensorTypes, as in Aesara: ``dmatrix("x")`` makes a variable
# and ``x.type == dmatrix``.
_PREFIXES = {"b": "int8", "w": "int16", "i": "int32", "l": "int64", "f": "float32",
             "d": "float64", "c": "complex64", "z": "complex128"}
_SHAPES = {"scalar": (), "vector": (None,), "row": (1, None), "col": (None, 1),
           "matrix": (None, None), "tensor3": (None,) * 3, "tensor4": (None,) * 4}
TYPES = {p + kind: TensorType(dtype, shape) for p, dtype in _PREFIXES.items() for kind, shape in _SHAPES.items()}
globals().update(TYPES)
