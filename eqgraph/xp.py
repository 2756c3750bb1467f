"""The array namespace of runtime values: one code path for every array library.

Every ``perform`` calls ``array_namespace(*inputs)`` and uses the array-API
names it returns (``xp.add``, ``xp.permute_dims``, ...), so the same code runs
on NumPy, on CuPy, and under ``array_api_strict`` in the tests.
"""

from __future__ import annotations

import functools
import importlib

import numpy as np

_BY_TYPE: dict[type, object] = {}


@functools.cache
def optional_module(name: str):
    """The module ``name`` of an optional extra (``"scipy.special"``, ``"scipy.linalg"``), or
    None where it is not installed; imported at its first use, not with eqgraph (SciPy would
    be most of eqgraph's import time), and looked up once (an ``import`` statement has a cost
    even when the module is loaded, and this runs per call)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def array_namespace(*values):
    """The namespace of the first non-NumPy array among ``values``; else NumPy.

    NumPy values (constants, shapes) may sit beside another library's arrays: a
    Dask array plus a NumPy constant is computed by Dask, lazily, not by NumPy
    (which would bring the Dask array into memory)."""
    for value in values:
        xp = _BY_TYPE.get(type(value)) or _namespace_of(value)
        if xp is not None and xp is not np:
            return xp
    return np


def is_array(value) -> bool:
    """Whether ``value`` is an array of some array library (not a NumPy scalar)."""
    if isinstance(value, np.generic):
        return False
    return type(value) in _BY_TYPE or _namespace_of(value) is not None


def _namespace_of(value):
    """The namespace of an array of a type not seen before (then cached); None if not an array.

    CuPy 14's and Dask's arrays have no ``__array_namespace__`` (CuPy's: seen on an H100), so
    they are recognised by their modules."""
    if hasattr(value, "__array_namespace__") or _is_dask_array(value) or _is_cupy_array(value):
        return _BY_TYPE.setdefault(type(value), _resolve(value))
    return None


def _is_cupy_array(value) -> bool:
    return type(value).__module__.startswith("cupy")


def _is_dask_array(value) -> bool:
    # Dask's arrays have no __array_namespace__; array-api-compat wraps dask.array
    return type(value).__module__.startswith("dask.array") and hasattr(value, "chunks")


def _resolve(value):
    module = type(value).__module__.split(".")[0]
    if module == "numpy":
        return np
    if module == "cupy":
        try:  # CuPy's main namespace lacks some array-API names; the compat layer adds them
            import array_api_compat.cupy as compat

            return compat
        except ImportError:
            import cupy

            return cupy
    if module == "dask":
        try:
            import array_api_compat.dask.array as compat
        except ImportError as err:
            raise ImportError('Dask arrays need array-api-compat: pip install "eqgraph[dask]"') from err
        return ChunkedDask(compat)
    return value.__array_namespace__()


def is_cupy_namespace(xp) -> bool:
    """Whether ``xp`` (from ``array_namespace``) is CuPy's, or the compat layer's over CuPy."""
    return xp is not np and "cupy" in getattr(xp, "__name__", "")


class ChunkedOpError(NotImplementedError):
    """An op cannot run on chunked Dask arrays: it would need a whole axis (or array) in one
    chunk, and eqgraph never gathers a Dask array into one chunk silently."""


class ChunkedDask:
    """array-api-compat's ``dask.array`` namespace, less what would gather an axis into one
    chunk behind the caller's back (its ``sort`` and ``argsort`` rechunk the axis to a single
    chunk, which on data larger than a worker's memory fails late, or never ends)."""

    def __init__(self, compat):
        self._compat = compat
        self.__name__ = compat.__name__

    def __getattr__(self, name):
        return getattr(self._compat, name)

    def sort(self, x, /, *, axis=-1, **options):
        _one_chunk_along(x, axis, "sort")
        return self._compat.sort(x, axis=axis, **options)

    def argsort(self, x, /, *, axis=-1, **options):
        _one_chunk_along(x, axis, "argsort")
        return self._compat.argsort(x, axis=axis, **options)

    def reshape(self, x, /, shape, **options):
        """Dask reshapes only by merging or splitting whole axes ((50, 8) chunked (7, 8) to
        (100, 4) is neither); any reshape is a merge into one axis and a split of it, which
        Dask does chunk by chunk, rechunking as it needs."""
        try:
            return self._compat.reshape(x, shape, **options)
        except NotImplementedError:
            return self._compat.reshape(self._compat.reshape(x, (-1,)), shape, **options)


def _one_chunk_along(x, axis: int, what: str) -> None:
    if x.numblocks[axis] > 1:
        raise ChunkedOpError(
            f"{what} needs axis {axis} in one chunk, and this Dask array has {x.numblocks[axis]} "
            f"chunks along it; eqgraph does not rechunk it silently: rechunk the input "
            f"({{{axis}: -1}}) yourself if it fits in a worker's memory")


def shape_array(value):
    """``value``'s shape as an int64 array, in ``value``'s namespace; on the host (NumPy) for
    a Dask array, whose shape is metadata: a Dask array of it would have to be computed
    before a reshape or an alloc could read it."""
    if not _is_dask_array(value):
        xp = array_namespace(value)
        return xp.asarray(tuple(value.shape), dtype=xp.int64)
    unknown = [i for i, d in enumerate(value.shape) if d != d]  # NaN: chunk sizes not known yet
    if unknown:
        raise ValueError(f"the length of axis {unknown[0]} of this Dask array is unknown (NaN) until it "
                         "is computed (it follows a boolean mask, say); call compute_chunk_sizes() "
                         "on it, or avoid using its shape")
    return np.asarray(value.shape, dtype=np.int64)


def as_output(xp, value, ttype):
    """``value`` as an array of ``ttype``'s dtype, what ``perform`` stores in a cell.

    NumPy returns scalars for 0-d results and may pick another dtype (a Python
    number's, say); both are fixed here so outputs always match their type.
    """
    if xp is np:
        if type(value) is not np.ndarray or value.dtype != ttype.numpy_dtype:
            value = np.asarray(value, dtype=ttype.numpy_dtype)
        return value
    want = getattr(xp, ttype.dtype)
    value = xp.asarray(value)
    return value if value.dtype == want else xp.astype(value, want)


def copy_array(value):
    """A copy of any array (or of a Python value with a ``copy`` method)."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if is_array(value):
        return array_namespace(value).asarray(value, copy=True)
    copy = getattr(value, "copy", None)
    return copy() if callable(copy) else value


def to_numpy(value):
    """A NumPy copy of any array (CuPy arrays come back from the device)."""
    if isinstance(value, np.ndarray):
        return value
    get = getattr(value, "get", None)
    if callable(get) and type(value).__module__.startswith("cupy"):
        return get()
    return np.asarray(value)
