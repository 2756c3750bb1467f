"""The array namespace of runtime values (DESIGN decision 8: one array namespace).

Every ``perform`` calls ``array_namespace(*inputs)`` and uses the array-API
names it returns (``xp.add``, ``xp.permute_dims``, ...), so the same code runs
on NumPy, on CuPy, and under ``array_api_strict`` in the tests.
"""

from __future__ import annotations

import numpy as np

_BY_TYPE: dict[type, object] = {}


def array_namespace(*values):
    """The namespace of the first array among ``values``; NumPy for Python scalars."""
    for value in values:
        xp = _BY_TYPE.get(type(value))
        if xp is not None:
            return xp
        if is_array_api(value):
            return _BY_TYPE.setdefault(type(value), _resolve(value))
    return np


def is_array_api(value) -> bool:
    """Whether ``value`` is an array of some array-API library (NumPy's, CuPy's, ...).

    CuPy 14's ndarray has no ``__array_namespace__`` (seen on an H100), so CuPy is
    recognised by its module.
    """
    return hasattr(value, "__array_namespace__") or type(value).__module__.startswith("cupy")


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
    return value.__array_namespace__()


def is_cupy_namespace(xp) -> bool:
    """Whether ``xp`` (from ``array_namespace``) is CuPy's, or the compat layer's over CuPy."""
    return xp is not np and "cupy" in getattr(xp, "__name__", "")


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
    if is_array_api(value):
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
