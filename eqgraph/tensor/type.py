"""`TensorType(dtype, shape)`: n-d arrays with a dtype and a partly known static shape.

``shape`` holds one entry per axis: an int when the size is known statically,
None when it is not.  A static size of 1 is what makes an axis broadcastable.
"""

from __future__ import annotations

import warnings

import numpy as np

from eqgraph.settings import config
from eqgraph.tensor.variable import TensorConstant, TensorVariable
from eqgraph.terms.basic import Variable
from eqgraph.terms.type import Type, describe_value
from eqgraph.xp import array_namespace, is_array

FLOATX = "float64"  # the default of eqgraph.config.floatX, which is what "floatX" means

DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128")
#: np.dtype of each name in DTYPES: np.dtype(name).name took a third of making a TensorType
_NUMPY_DTYPES = {name: np.dtype(name) for name in DTYPES}
FLOAT_DTYPES = ("float16", "float32", "float64")
COMPLEX_DTYPES = ("complex64", "complex128")
INT_DTYPES = tuple(d for d in DTYPES if "int" in d)
DISCRETE_DTYPES = ("bool",) + INT_DTYPES

# per dtype: (rtol, atol) for values_eq_approx
_TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-5, 1e-5), "complex64": (1e-5, 1e-5)}
_DEFAULT_TOLERANCE = (1e-5, 1e-8)


#: the most dimensions a NumPy array has (64 from NumPy 2 on, 32 before)
MAX_DIMS = 64 if int(np.__version__.split(".")[0]) >= 2 else 32


def _normalize_shape(shape) -> tuple:
    if len(shape) > MAX_DIMS:
        raise ValueError(f"TensorType: the maximum supported dimension for a TensorType is currently {MAX_DIMS}, "
                         f"found {len(shape)}: a tensor has at most {MAX_DIMS} dimensions (NumPy's limit)")
    out = []
    for s in shape:
        if s is None or s is False:
            out.append(None)
        elif s is True:
            out.append(1)
        elif type(s) is int and s >= 0:  # the common case, checked without NumPy
            out.append(s)
        else:
            if isinstance(s, (float, np.floating)) or int(s) != s or int(s) < 0:
                raise ValueError(f"static shape entries must be non-negative ints or None, not {s!r}")
            out.append(int(s))
    return tuple(out)


def dtype_name_of(array) -> str:
    """The dtype of any array-API array as a NumPy name ("float64")."""
    dtype = array.dtype
    name = getattr(dtype, "name", None)
    return name if isinstance(name, str) else str(dtype).rsplit(".", 1)[-1]


def ndim_word(ndim: int) -> str:
    return {0: "scalar", 1: "vector", 2: "matrix"}.get(ndim, f"{ndim}-d tensor")


class MaskedArrayError(TypeError, NotImplementedError):
    """A masked array given as a value: a TypeError, and PyTensor's NotImplementedError."""


def plain_array(data: np.ndarray) -> np.ndarray:
    """An ndarray subclass as a plain ndarray view: subclasses change what NumPy functions
    return (``np.matrix`` stays 2-d through ``sum``), so ops never see them.

    Masked arrays are refused, even with nothing masked (PyTensor refuses them too): the
    graph would compute with the values under the mask, and accepting them only when
    nothing is masked would make a call succeed or fail depending on the data.
    """
    if isinstance(data, np.ma.MaskedArray):
        raise MaskedArrayError("MaskedArrays are not supported: eqgraph cannot hold a masked array, its "
                               "masked entries would be computed with like the others. Pass "
                               "x.filled(fill_value) to choose their value, or np.ma.getdata(x) to use "
                               "the values under the mask")
    return data.view(np.ndarray)


def first_overflow(source: np.ndarray, cast: np.ndarray):
    """The first finite number of ``source`` that became inf in ``cast`` (the same values
    in a narrower float dtype), or None: NumPy rounds 1e40 to a float32 inf silently."""
    inf = np.isinf(cast)
    if source.dtype.kind not in "biuf" or not inf.any():
        return None
    lost = inf & np.isfinite(source)
    return source[lost].flat[0].item() if lost.any() else None


class TensorType(Type):
    """The type of NumPy-like arrays of one ``dtype`` and ``len(shape)`` dimensions."""

    def __init__(self, dtype, shape=None, name=None, broadcastable=None):
        if shape is None:
            if broadcastable is None:
                raise TypeError("TensorType needs a shape (use None for unknown sizes)")
            shape = [1 if b else None for b in broadcastable]
        if type(dtype) is str and dtype in _NUMPY_DTYPES:  # a dtype's name: most types a compile makes
            self.dtype = dtype
        else:
            self.dtype = np.dtype(dtype).name if str(dtype) != "floatX" else config.floatX
        if self.dtype not in DTYPES:
            raise TypeError(f"Unsupported dtype for TensorType: {dtype!r}")
        self.shape = _normalize_shape(shape)
        self.name = name
        self.numpy_dtype = _NUMPY_DTYPES[self.dtype]
        self._all_unknown = all(s is None for s in self.shape)

    # -- properties ---------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def broadcastable(self) -> tuple:
        return tuple(s == 1 for s in self.shape)

    def describe(self) -> str:
        """The type in words, for error messages: "2-d float64 array of shape (2, ?)"."""
        shape = ", ".join("?" if s is None else str(s) for s in self.shape)
        if len(self.shape) == 1:
            shape += ","
        return f"{self.ndim}-d {self.dtype} array of shape ({shape})"

    # -- values -------------------------------------------------------------
    def filter(self, data, strict: bool = False, allow_downcast=None):
        # Fast path: an ndarray that already fits (the common case at call time).
        if type(data) is np.ndarray and data.dtype == self.numpy_dtype:
            if data.ndim == self.ndim and (self._all_unknown or self._shape_ok(data.shape)):
                return data
        if isinstance(data, Variable):
            raise TypeError(f"Expected an array-like value for {self}, but got the symbolic "
                            f"variable {data}; symbolic inputs belong in the graph, not in filter")
        if isinstance(data, np.ndarray) and type(data) is not np.ndarray:
            data = plain_array(data)
        data = self._convert(data, strict, allow_downcast)
        if data.ndim != self.ndim:
            raise TypeError(f"Wrong number of dimensions: expected {self.ndim} "
                            f"({ndim_word(self.ndim)}), got {data.ndim} with shape {tuple(data.shape)}")
        if not self._shape_ok(data.shape):
            raise TypeError(f"The static shape {self._shape_str()} of {self} is not compatible "
                            f"with the value's shape {tuple(data.shape)}")
        return data

    def _shape_ok(self, shape) -> bool:
        # a Dask array's length along an axis may be unknown until computed: NaN (d != d)
        return all(s is None or s == d or d != d for s, d in zip(self.shape, shape))

    def _shape_str(self) -> str:
        return "(" + ", ".join("?" if s is None else str(s) for s in self.shape) + ("," if self.ndim == 1 else "") + ")"

    def _convert(self, data, strict, allow_downcast):
        """Return ``data`` as an array of ``self.dtype``, casting only as far as allowed."""
        if is_array(data) and hasattr(data, "dtype"):
            dtype_name = dtype_name_of(data)
            if dtype_name == self.dtype:
                return data
            if strict:
                raise TypeError(f"{self} expected an array of dtype {self.dtype}, got dtype {dtype_name} (strict)")
            xp = array_namespace(data)
            if allow_downcast or np.can_cast(np.dtype(dtype_name), self.numpy_dtype, "safe"):
                return xp.astype(data, getattr(xp, self.dtype))
            raise TypeError(
                f"{self} cannot store a value of dtype {dtype_name} without risking loss of "
                f"precision; cast the value to {self.dtype}, or compile the function with "
                "allow_input_downcast=True")
        if strict:
            raise TypeError(f"{self} expected an array of dtype {self.dtype} (strict), "
                            f"got {describe_value(data)}")
        try:
            arr = np.asarray(data)
        except Exception as err:  # ragged lists and the like
            raise TypeError(f"{self} cannot convert {describe_value(data)} to an array: {err}") from err
        if arr.dtype == self.numpy_dtype:
            return arr
        if self.numpy_dtype.kind in "iu" and not isinstance(data, np.generic):
            self._check_python_ints_fit(data)
        if arr.dtype.kind in "OUSV":
            raise TypeError(f"{self} cannot hold {describe_value(data)}")
        if allow_downcast or np.can_cast(arr.dtype, self.numpy_dtype, "safe"):
            return arr.astype(self.numpy_dtype)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)  # judged by value below
            cast = arr.astype(self.numpy_dtype)
        if self.numpy_dtype.kind == "f" and arr.dtype.kind == "f" and first_overflow(arr, cast) is not None:
            raise TypeError(f"{self} cannot hold {describe_value(data)}: a finite number in it "
                            f"would become inf (largest {self.dtype}: {np.finfo(self.numpy_dtype).max})")
        # PyTensor's rules: a Python or NumPy float scalar is rounded into floatX when
        # allow_downcast is None; any other value must keep its value exactly
        if allow_downcast is None and isinstance(data, (float, np.floating)) and self.dtype == config.floatX:
            return cast
        if np.array_equal(cast, arr, equal_nan=arr.dtype.kind in "fc" and cast.dtype.kind in "fc"):
            return cast
        raise TypeError(
            f"{self} cannot store a value of dtype {arr.dtype} without risking loss of precision: "
            f"{describe_value(data)} as {self.dtype} would be {str(cast.tolist())[:60]}; cast the value "
            f"to {self.dtype} yourself, or compile the function with allow_input_downcast=True")

    def _check_python_ints_fit(self, data) -> None:
        """Python ints too large for this dtype make NumPy guess uint64, float64 or object,
        and the error would then be about that dtype; name the number and the range."""
        try:
            np.asarray(data, dtype=self.numpy_dtype)
        except OverflowError:
            info = np.iinfo(self.numpy_dtype)
            flat = np.asarray(data, dtype=object).reshape(-1)
            bad = next((v for v in flat if isinstance(v, (int, float)) and not info.min <= v <= info.max), None)
            number = "a number in it" if bad is None else str(bad)
            raise TypeError(f"{self} cannot hold {describe_value(data)}: {number} does not fit "
                            f"{self.dtype} (range {info.min} to {info.max})") from None
        except (TypeError, ValueError):
            return  # NaN and the like: the dtype check that follows explains them

    def values_eq(self, a, b) -> bool:
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))

    def values_eq_approx(self, a, b, allow_remove_inf=False, allow_remove_nan=False, rtol=None, atol=None) -> bool:
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        if a.dtype.kind not in "fc" and b.dtype.kind not in "fc":
            return self.values_eq(a, b)
        default_rtol, default_atol = _TOLERANCES.get(self.dtype, _DEFAULT_TOLERANCE)
        rtol = default_rtol if rtol is None else rtol
        atol = default_atol if atol is None else atol
        ok = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        if allow_remove_inf:
            ok |= np.isinf(a) | np.isinf(b)
        if allow_remove_nan:
            ok |= np.isnan(a) | np.isnan(b)
        return bool(np.all(ok))

    @staticmethod
    def may_share_memory(a, b) -> bool:
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
            return bool(np.may_share_memory(a, b))
        return False

    def get_shape_info(self, obj):
        return tuple(obj.shape)

    def get_size(self, shape_info) -> int:
        return int(np.prod(shape_info, dtype=np.int64)) * self.numpy_dtype.itemsize

    # -- variables ------------------------------------------------------------
    def make_variable(self, name=None):
        return TensorVariable(self, None, None, name)

    def make_constant(self, value, name=None):
        return TensorConstant(self, value, name)

    def clone(self, dtype=None, shape=None, name=None, broadcastable=None) -> "TensorType":
        """This type with the given dtype, shape (or broadcastable pattern) or name replaced."""
        if shape is None and broadcastable is not None:
            shape = [1 if b else None for b in broadcastable]
        return type(self)(self.dtype if dtype is None else dtype, self.shape if shape is None else shape,
                          name=self.name if name is None else name)

    # -- the type relation -------------------------------------------------------
    def __eq__(self, other):
        return type(other) is type(self) and other.dtype == self.dtype and other.shape == self.shape

    def __hash__(self):
        return hash((type(self), self.dtype, self.shape))

    def __reduce__(self):
        # dtype and shape define the type; the derived attributes are rebuilt (a third of
        # a pickled graph's size and time went to each type's NumPy dtype object)
        return type(self), (self.dtype, self.shape, self.name)

    def in_same_class(self, otype) -> bool:
        """Same dtype and same broadcastable pattern (the static 1s)."""
        return (isinstance(otype, TensorType) and otype.dtype == self.dtype
                and otype.broadcastable == self.broadcastable)

    def is_super(self, otype) -> bool:
        """True iff every array of ``otype`` is also an array of ``self``."""
        return (isinstance(otype, TensorType) and otype.dtype == self.dtype and otype.ndim == self.ndim
                and all(s is None or s == o for s, o in zip(self.shape, otype.shape)))

    def meet(self, otype) -> "TensorType | None":
        """The most specific type that is a subtype of both, or None if they are disjoint."""
        if not (isinstance(otype, TensorType) and otype.dtype == self.dtype and otype.ndim == self.ndim):
            return None
        shape = []
        for s, o in zip(self.shape, otype.shape):
            if s is not None and o is not None and s != o:
                return None
            shape.append(s if s is not None else o)
        return TensorType(self.dtype, shape)

    def convert_variable(self, var):
        """``var`` itself if it fits; else ``var`` narrowed by ``specify_shape`` to the meet."""
        if self.is_super(var.type):
            return var
        narrowed = self.meet(var.type)
        if narrowed is None:
            return None
        return var._specify_shape(narrowed.shape)

    def __repr__(self):
        shape = ", ".join(map(str, self.shape)) + ("," if self.ndim == 1 else "")
        return f"TensorType({self.dtype}, ({shape}))"
