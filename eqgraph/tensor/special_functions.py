"""The array forms of the special functions in tensor/elemwise.py's registry (gammaln, psi, erfc, ...);
the ops themselves, by PyTensor's names, are ``eqgraph.tensor.special``.

SciPy is an optional extra: where ``scipy.special`` is installed it computes the NumPy form; without
it each function has a fallback of its own (``math``'s lgamma, gamma and erfc per element, NumPy
arithmetic), or, where none is written, raises an error naming the op and ``pip install scipy``.
On CuPy the same name of ``cupyx.scipy.special`` computes it. Where SciPy's answers are off over
whole ranges (polygamma at large x, gammainc and gammaincc at small and large ``a``, beta and betaln
where log-gammas cancel) or SciPy has
no such function (betainc's derivatives in a and b), the NumPy form is eqgraph's own scalar function
(``Own``), the one fused Numba kernels run.

Output dtypes are PyTensor's (``upgrade_to_float``): a float keeps its dtype, a small integer
(bool, 8 and 16 bits) gives float32, a wider one float64.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from eqgraph.tensor.scalar_ops import _log1mexp
from eqgraph.terms.null_type import grad_not_implemented, grad_undefined
from eqgraph.xp import optional_module

_FLOAT32_FROM = frozenset({"bool", "int8", "uint8", "int16", "uint16"})


def float_dtype(*dtypes) -> str:
    """PyTensor's output dtype of a special function of inputs of ``dtypes``: their promoted
    dtype if it is a float, float32 for small integers and booleans, else float64."""
    common = np.result_type(*dtypes)
    if common.kind == "f":
        return common.name
    return "float32" if common.name in _FLOAT32_FROM else "float64"


@functools.cache
def scipy_special(name: str):
    """SciPy's special function ``name``, or None (SciPy is optional)."""
    special = optional_module("scipy.special")
    return None if special is None else getattr(special, name)


# -- fallbacks without SciPy: the math module per element, with SciPy's answers where it raises --
def _lgamma(x: float) -> float:
    if x == -math.inf:
        return -math.inf  # SciPy's gammaln(-inf)
    try:
        return math.lgamma(x)
    except ValueError:  # a pole (0, -1, -2, ...)
        return math.inf


def _gamma(x: float) -> float:
    if x == -math.inf:
        return math.nan
    try:
        return math.gamma(x)
    except ValueError:  # 0 and -0 are signed infinities, the negative integers NaN (as SciPy)
        return math.copysign(math.inf, x) if x == 0 else math.nan
    except OverflowError:  # above 171.6, and subnormals whose 1 / x overflows
        return math.copysign(math.inf, x)


def _per_element(fn: Callable, nin: int = 1) -> Callable:
    ufunc = np.frompyfunc(fn, nin, 1)
    return lambda *xs: ufunc(*[np.asarray(x, dtype=np.float64) for x in xs])


def _logit(x):
    # log(x / (1 - x)); near 1/2, x / (1 - x) is 1 + d and rounding it loses d's digits, so
    # log1p of d = (2x - 1) / (1 - x) (exact there: 2x - 1 and 1 - x are) is taken instead
    with np.errstate(all="ignore"):
        near_half = (x > 0.3) & (x < 0.65)
        return np.where(near_half, np.log1p((2 * x - 1) / (1 - x)), np.log(x / (1 - x)))


#: below this, log|gamma(x)| is -log|x| to the last bit (the next term, Euler's constant times x, is 1e-300 of it)
TINY_GAMMALN = 1e-300


def tiny_gammaln(x, out):
    """``out`` (gammaln of ``x``) with -log|x| for tiny x: SciPy's gammaln computes gamma(x), which
    overflows where 1 / x does (|x| < 5.6e-309), and gives inf where the answer is 744.44 at 5e-324."""
    tiny = (x != 0) & (np.abs(x) < TINY_GAMMALN)
    if not tiny.any():
        return out
    return np.where(tiny, -np.log(np.where(tiny, np.abs(x), 1.0)), out)


def _at_infinity(x, out, limit):
    ends = np.isinf(x)
    return np.where(ends, limit, out) if ends.any() else out


def i0_at_infinity(x, out):
    """``out`` (i0 of ``x``) with inf at +-inf, where SciPy gives NaN."""
    return _at_infinity(x, out, np.abs(x))


def i1_at_infinity(x, out):
    """``out`` (i1 of ``x``) with x at +-inf (i1 is odd), where SciPy gives NaN."""
    return _at_infinity(x, out, x)


def erfcinv_tail(y):
    """erfcinv of tiny positive ``y``: the x where erfc's asymptotic form, exp(-x^2) / (x sqrt(pi))
    (1 - t + 3t^2 - 15t^3 ...) with t = 1 / (2x^2), equals y; solved by fixed-point steps, which
    shrink an error by about 1 / x^2 each (x is 26 to 27.2 below 1e-300, so the series' next term
    is under 1e-17)."""
    log_y = np.log(y)
    x = np.sqrt(-log_y)
    for _ in range(8):
        t = 1 / (2 * x * x)
        series = 1 - t * (1 - 3 * t * (1 - 5 * t * (1 - 7 * t * (1 - 9 * t * (1 - 11 * t * (1 - 13 * t))))))
        x = np.sqrt(-log_y - np.log(x * math.sqrt(math.pi)) + np.log(series))
    return x


#: below this, erfcinv_tail is exact to the last bits, and SciPy's erfcinv is not at every
#: subnormal (27.1878 at 1.5e-323, whose erfcinv is 27.1931; inf at 5e-324, whose erfcinv is 27.21)
ERFCINV_TAIL_BELOW = 1e-300


def erfcinv_smallest(y, out):
    """``out`` (erfcinv of ``y``) with the asymptotic inverse for y in (0, ERFCINV_TAIL_BELOW)."""
    wrong = (y > 0) & (y < ERFCINV_TAIL_BELOW)
    if not wrong.any():
        return out
    return np.where(wrong, erfcinv_tail(np.where(wrong, y, 1e-300)), out)


FALLBACKS = {
    "gammaln": _per_element(_lgamma),
    "i0": np.i0,
    "gamma": _per_element(_gamma),
    "erfc": _per_element(math.erfc),
    "logit": _logit,
}


@dataclass(frozen=True)
class Special:
    """``fn(xp, *args)``: ``scipy.special.<scipy>(*first, *args)`` computes it (or the op's fallback); a
    class, not a closure, so that ops pickle."""

    op: str
    scipy: str
    first: tuple = ()  # arguments put before the op's own: polygamma's order n
    fix: Callable | None = None  # (*args, out) -> out, where SciPy's answer is wrong

    def __call__(self, xp, *args):
        if xp is np:
            fn = scipy_special(self.scipy) or FALLBACKS.get(self.op)
            if fn is None:
                raise ImportError(f"eqgraph.tensor.{self.op} computes with SciPy's scipy.special.{self.scipy}, "
                                  f"which is not installed: pip install scipy")
            with np.errstate(all="ignore"):
                out = fn(*self.first, *args)
                if self.fix is not None:
                    out = self.fix(*args, out)
                return np.asarray(out, dtype=float_dtype(*(np.asarray(a).dtype for a in args)))
        special = getattr(xp, "special", None)
        if special is None:
            special = optional_module("cupyx.scipy.special")
        if special is None or not hasattr(special, self.scipy):
            raise TypeError(f"eqgraph.tensor.{self.op} has no form for arrays of {xp.__name__}: "
                            f"it needs scipy.special.{self.scipy} (NumPy) or cupyx.scipy.special (CuPy)")
        # as arrays: cupyx's polygamma calls methods of its order n
        first = [xp.asarray(a, dtype=args[0].dtype) for a in self.first]
        return getattr(special, self.scipy)(*first, *args)


def polygamma_dtype(n_dtype, x_dtype) -> str:
    """PyTensor's polygamma: the order n is an integer, the output the float of ``x``'s dtype."""
    if np.dtype(n_dtype).kind not in "biu":
        raise TypeError(f"polygamma(n, x): the order n must be discrete (an integer dtype), got {np.dtype(n_dtype).name}")
    return float_dtype(x_dtype)


@functools.cache
def _own_ufunc(name: str, nin: int):
    """exec/numba/special.py's scalar function ``name`` as a float64 ufunc: compiled by Numba where
    it is on, else called per element. Imported here, when first called, because it is the one
    written form of these functions: a kernel that fuses the op computes with the same code."""
    from eqgraph.exec.numba import special as numba_special
    fn = getattr(numba_special, name)
    if numba_special.numba is None:
        # NumPy float64 scalars in, so that arithmetic inside follows IEEE as Numba's does
        ufunc = np.frompyfunc(lambda *xs: fn(*map(np.float64, xs)), nin, 1)
        return lambda *xs: np.asarray(ufunc(*xs), dtype=np.float64)
    return numba_special.numba.vectorize([f"float64({', '.join(['float64'] * nin)})"])(fn)


@dataclass(frozen=True)
class Own:
    """``fn(xp, *args)`` by eqgraph's own scalar function ``scalar`` (exec/numba/special.py) on NumPy,
    where SciPy's is wrong or missing, and by ``cupyx.scipy.special.<scipy>`` on CuPy where it
    exists."""

    op: str
    scalar: str
    nin: int
    scipy: str | None = None
    typed_from: int = 0  # the first argument whose dtype counts for the output: polygamma's x, not its order

    def __call__(self, xp, *args):
        dtype = float_dtype(*(_dtype_name(xp, a.dtype) for a in args[self.typed_from:]))
        if xp is np:
            with np.errstate(all="ignore"):
                out = _own_ufunc(self.scalar, self.nin)(*(np.asarray(a, dtype=np.float64) for a in args))
            return np.asarray(out, dtype=dtype)
        special = getattr(xp, "special", None) or optional_module("cupyx.scipy.special")
        if self.scipy is None or special is None or not hasattr(special, self.scipy):
            raise TypeError(f"eqgraph.tensor.{self.op} has no form for arrays of {xp.__name__}: its NumPy "
                            f"form is eqgraph's own" + (f", its CuPy form cupyx.scipy.special.{self.scipy}"
                                                        if self.scipy else ""))
        return getattr(special, self.scipy)(*args).astype(dtype)


def xlogx(xp, x):
    """x * log(x), 0 at x = 0 (PyTensor's xlogx)."""
    x = _as_float(xp, x)
    with np.errstate(all="ignore"):
        return xp.where(x == 0, xp.zeros_like(x), x * xp.log(x))


def xlogy0(xp, x, y):
    """x * log(y), 0 where x = 0 whatever y is (PyTensor's xlogy0; SciPy's xlogy gives NaN at y NaN)."""
    dtype = float_dtype(_dtype_name(xp, x.dtype), _dtype_name(xp, y.dtype))
    x, y = _as_float(xp, x, dtype), _as_float(xp, y, dtype)
    with np.errstate(all="ignore"):
        return xp.where(x == 0, xp.zeros_like(x * y), x * xp.log(y))


def _as_float(xp, x, dtype=None):
    dtype = dtype or float_dtype(_dtype_name(xp, x.dtype))
    return x if _dtype_name(xp, x.dtype) == dtype else xp.astype(x, getattr(xp, dtype))


_DTYPE_NAMES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
                "float32", "float64")


def _dtype_name(xp, dtype) -> str:
    """NumPy's name of an array-API dtype (array_api_strict's dtypes are no NumPy dtypes)."""
    if xp is np:
        return dtype.name
    return next(name for name in _DTYPE_NAMES if getattr(xp, name, None) == dtype)


def logdiffexp(xp, a, b):
    """log(exp(a) - exp(b)), stable: a + log(1 - exp(b - a)), by log1mexp's two forms (scalar_ops._log1mexp)."""
    with np.errstate(all="ignore"):
        return a + _log1mexp(xp, b - a)


def not_implemented(op: str, position: int, x, needs: str):
    """The gradient of input ``position`` of ``op``, which PyTensor has and eqgraph has not yet: a
    NullType, so that ``grad`` raises naming it where it is asked for, and only there."""
    return grad_not_implemented(op, position, x, f"it needs {needs}")


def undefined(op: str, position: int, x, why: str):
    """The gradient of input ``position`` of ``op``, which is undefined (PyTensor's grad_undefined):
    ``grad`` raises naming it where it is asked for."""
    return grad_undefined(op, position, x, why)
