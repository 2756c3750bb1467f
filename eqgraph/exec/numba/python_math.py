"""The ``math`` functions that special.py and special_unary.py call, with the semantics those
functions have under Numba's ``error_model="numpy"``, for running them in Python where Numba is
off (``EQGRAPH_NUMBA=0``): log(0) is -inf and lgamma(0) is inf, where Python's ``math`` raises.

Where Python's ``math`` answers, its answer is kept: it is the C library's, as Numba's is (NumPy's
own exp and log may differ in the last bit).  Where it raises, NumPy's IEEE answer is given.
Python's gamma and lgamma are its own, not the C library's, and differ from Numba's in the last
bits: those two are the C library's, through ctypes, where it can be found.
Results are NumPy float64 scalars, so arithmetic on them follows IEEE as Numba's does (1 / 0 is
inf, not ZeroDivisionError); the caller silences NumPy's warnings with ``np.errstate``."""

from __future__ import annotations

import ctypes
import ctypes.util
import math as _math

import numpy as np

inf = _math.inf
nan = _math.nan
pi = _math.pi


def _ieee(c_function, numpy_function):
    """``c_function`` as a float64 function, ``numpy_function``'s answer where it raises."""
    def function(*args):
        try:
            return np.float64(c_function(*args))
        except (OverflowError, ValueError):
            return numpy_function(*map(np.float64, args))
    function.__name__ = c_function.__name__
    return function


copysign = _ieee(_math.copysign, np.copysign)
erf = _ieee(_math.erf, None)      # defined everywhere: never raises
erfc = _ieee(_math.erfc, None)
exp = _ieee(_math.exp, np.exp)
expm1 = _ieee(_math.expm1, np.expm1)
log = _ieee(_math.log, np.log)
log1p = _ieee(_math.log1p, np.log1p)
pow = _ieee(_math.pow, np.power)
sin = _ieee(_math.sin, np.sin)
sqrt = _ieee(_math.sqrt, np.sqrt)
tan = _ieee(_math.tan, np.tan)


def _tgamma_at_error(x):
    # C's tgamma: +-inf at zero and past the overflow, nan at the negative integers
    if x == 0.0 or x > 0.0:
        return np.copysign(np.float64(inf), x)
    return np.float64(nan)


_LIBM_PATH = ctypes.util.find_library("m")   # looked up once: it may run a subprocess
_LIBM = ctypes.CDLL(_LIBM_PATH) if _LIBM_PATH is not None else None


def _c_library_function(name: str):
    """The C library's ``double name(double)``, or None where ctypes cannot find the library."""
    if _LIBM is None:
        return None
    function = getattr(_LIBM, name)
    function.restype, function.argtypes = ctypes.c_double, [ctypes.c_double]
    return lambda x: np.float64(function(x))


gamma = _c_library_function("tgamma") or _ieee(_math.gamma, _tgamma_at_error)
# C's lgamma is inf at the poles and past the overflow
lgamma = _c_library_function("lgamma") or _ieee(_math.lgamma, lambda x: np.float64(inf))
