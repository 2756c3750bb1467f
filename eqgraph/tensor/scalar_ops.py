"""One elementwise op's facts (``ScalarOp``, the rows of tensor/elemwise.py's ``SCALAR_OPS``), the
array forms, scalar expressions and complex-row VJPs those rows name, and how each row meets
complex numbers (``COMPLEX_SUPPORT``).

Each array form is written against the array namespace ``xp``, so the same row runs on NumPy,
CuPy and ``array_api_strict``; each scalar expression is the Numba (Python) or CUDA C form of
one op, over ``{0}, {1}...``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import KW_ONLY, dataclass
from functools import partial
from typing import Callable

import numpy as np

from eqgraph.tensor import variable  # variable.et: the ops, bound once they exist (the VJPs below build with them)
from eqgraph.tensor.type import COMPLEX_DTYPES, dtype_name_of
from eqgraph.xp import optional_module


@functools.cache
def _scipy_special(name: str):
    """SciPy's special function ``name``, or None (SciPy is optional)."""
    special = optional_module("scipy.special")
    return None if special is None else getattr(special, name)


_MATH_ERF = np.frompyfunc(math.erf, 1, 1)


def _erf(xp, x):
    if xp is np:
        erf = _scipy_special("erf") or _MATH_ERF  # SciPy is optional: the math module, per element
        return np.asarray(erf(x), dtype=x.dtype if x.dtype.kind == "f" else np.float64)
    special = getattr(xp, "special", None)
    if special is None:
        import cupyx.scipy.special as special
    return special.erf(x)


#: below these, sigmoid(x) is exp(x) to the last bit (1 + exp(x) rounds to 1)
SIGMOID_IS_EXP_BELOW = {np.dtype("float32"): -17.0, np.dtype("float64"): -40.0}


def _sigmoid(xp, x):
    if xp is np and x.dtype in SIGMOID_IS_EXP_BELOW:
        expit = _scipy_special("expit")  # SciPy's expit: one pass, faster than the form below
        if expit is not None:
            # expit is 1 / (1 + exp(-x)), 0 once exp(-x) overflows where the result is a
            # subnormal (x < -88 in float32, -709 in float64): take exp(x) there
            out = expit(x)
            tail = x < SIGMOID_IS_EXP_BELOW[x.dtype]
            if tail.any():
                out = np.where(tail, np.exp(np.minimum(x, 0)), out)
            return out
    return _sigmoid_by_sign(xp, x)


def _sigmoid_by_sign(xp, x):
    # exp of a non-positive number never overflows: pick the form per sign
    if xp.isdtype(x.dtype, "unsigned integer"):  # -x wraps around: take the float exp(x) would give
        x = xp.astype(x, getattr(xp, np.result_type(np.dtype(str(x.dtype)), np.float16).name))
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))


# the output dtypes of sigmoid and erf, without probing SciPy's functions: importing SciPy would
# slow a process's first compile, which lists every op's output dtypes (egraph/schema.py)
def _sigmoid_dtype(dtype):
    return _sigmoid_by_sign(np, _probe(dtype)).dtype  # expit keeps a float's dtype, as this form does


def _erf_dtype(dtype):
    return dtype if np.dtype(dtype).kind == "f" else "float64"


def _exp2(xp, x):
    if not xp.isdtype(x.dtype, "real floating"):
        # the float that NumPy's exp (and exp2) gives an integer, so that exp2 shares exp's
        # output dtype rule (float16 becomes float32 when the node is built)
        x = xp.astype(x, getattr(xp, np.result_type(np.dtype(str(x.dtype)), np.float16).name))
    return xp.pow(xp.asarray(2.0, dtype=x.dtype), x)


def _is_complex(xp, x) -> bool:
    return xp.isdtype(x.dtype, "complex floating")


def _real(xp, x):
    # a real number is its own real part (a copy: an elementwise output never aliases its input)
    return xp.real(x) if _is_complex(xp, x) else xp.asarray(x, copy=True)


def _imag(xp, x):
    return xp.imag(x) if _is_complex(xp, x) else xp.zeros_like(x)


def _conj(xp, x):
    return xp.conj(x) if _is_complex(xp, x) else xp.asarray(x, copy=True)


def _angle(xp, x):
    """The argument of ``x`` in (-pi, pi]: atan2(imag, real), as ``np.angle`` gives (pi for a
    negative real number, in the float dtype exp would give an integer)."""
    if not _is_complex(xp, x):
        if not xp.isdtype(x.dtype, "real floating"):
            x = xp.astype(x, xp.float64)
        return xp.atan2(xp.zeros_like(x), x)
    return xp.atan2(xp.imag(x), xp.real(x))


def _real_dtype(dtype):
    """The dtype of the real and imaginary parts of ``dtype``'s numbers (``real`` and ``imag``)."""
    return {"complex64": "float32", "complex128": "float64"}.get(np.dtype(dtype).name, np.dtype(dtype).name)


def _angle_dtype(dtype):
    """The real part's float dtype; float64 for integers and booleans (all of them, where NumPy
    gives an int8's angle in float16)."""
    name = _real_dtype(dtype)
    return name if np.dtype(name).kind == "f" else "float64"


def _complex_dtype(real_dtype, imag_dtype):
    """PyTensor's dtype of ``complex(real, imag)``: complex128 where the parts' common dtype
    needs more than a float32's digits, else complex64; complex parts are refused."""
    for dtype in (real_dtype, imag_dtype):
        if np.dtype(dtype).kind == "c":
            raise TypeError(f"the real and imaginary parts must be real numbers, not {np.dtype(dtype).name}")
    common = np.result_type(real_dtype, imag_dtype).name
    return "complex128" if common in ("float64", "int64", "uint64", "int32", "uint32") else "complex64"


def _complex(xp, re, im):
    """``re + i im``, each part set apart: ``re + 1j * im`` would make the real part NaN
    wherever ``im`` is inf (inf * 1j has the real part 0 * inf)."""
    dtype = _complex_dtype(dtype_name_of(re), dtype_name_of(im))
    shape = np.broadcast_shapes(tuple(re.shape), tuple(im.shape))
    if xp is np:
        out = np.empty(shape, dtype=dtype)
        out.real, out.imag = re, im
        return out
    # the array API cannot set a part: this form is NumPy's except where im is inf
    return xp.broadcast_to(xp.astype(re, getattr(xp, dtype)) + xp.astype(im, getattr(xp, dtype)) * 1j, shape)


def _complex_from_polar(xp, r, theta):
    return _complex(xp, r * xp.cos(theta), r * xp.sin(theta))


def holds_complex(x) -> bool:
    """Whether the variable ``x`` holds complex numbers."""
    return x.dtype in COMPLEX_DTYPES


def _op(name: str):
    """The elementwise op ``name``, for the VJPs below (they run once every op exists)."""
    return variable.et.ELEMWISE_OPS[name]


def _zeros_of(x):
    """Zeros of ``x``'s shape and dtype, whatever ``x`` holds (``0 * x`` is NaN at inf)."""
    return _op("second")(x, variable.et.constant(np.zeros((), dtype=x.dtype)))


# The VJPs of the complex rows, in PyTensor's convention for a real cost C: the cotangent of a
# complex z is dC/d(re z) + i dC/d(im z), and a real input's is the real part of what its
# complex self would get.
def _real_vjp(g, y, x):
    return _op("complex")(g, _zeros_of(g)) if holds_complex(x) else g


def _imag_vjp(g, y, x):
    return _op("complex")(_zeros_of(g), g) if holds_complex(x) else _zeros_of(g)


def _angle_vjp(g, y, x):
    # angle = atan2(b, a) of z = a + ib: d/da = -b / |z|^2, d/db = a / |z|^2 (a real x's angle is a step)
    if not holds_complex(x):
        return _zeros_of(g)
    squared = _op("sqr")(_op("abs")(x))
    return _op("complex")(-g * _op("imag")(x) / squared, g * _op("real")(x) / squared)


def _polar_vjp(g, y, r, theta):
    # z = r (cos t + i sin t): dC/dr = re(conj(g) dz/dr), dC/dt = re(conj(g) i z)
    re, im = _op("real")(g), _op("imag")(g)
    return (re * _op("cos")(theta) + im * _op("sin")(theta), im * _op("real")(y) - re * _op("imag")(y))


@dataclass(frozen=True)
class _Bitwise:
    """The logical function on booleans, the bitwise one on integers (a class, not a
    closure, so that ops pickle)."""

    logical: str
    bitwise: str

    def __call__(self, xp, x, y):
        name = self.logical if x.dtype == xp.bool and y.dtype == xp.bool else self.bitwise
        return getattr(xp, name)(x, y)


def _invert(xp, x):
    return xp.logical_not(x) if x.dtype == xp.bool else xp.bitwise_invert(x)


def _second(xp, x, y):
    if any(d != d for d in (*x.shape, *y.shape)):  # Dask chunks of unknown (NaN) size: no shape to broadcast to
        return xp.multiply(y, xp.ones_like(x, dtype=y.dtype))  # y * 1 is y, -0.0 and NaN included
    shape = np.broadcast_shapes(tuple(x.shape), tuple(y.shape))
    return xp.asarray(xp.broadcast_to(y, shape), copy=True)


def _second_dtype(x_dtype, y_dtype):
    return y_dtype


def _sqr(xp, x):
    return xp.multiply(x, x)


def _clip(xp, x, lo, hi):
    # PyTensor's clip: lo below lo, else hi above hi, else x. It is np.clip where lo <= hi;
    # with lo > hi, or a NaN bound, np.clip gives another answer
    return xp.where(x < lo, lo, xp.where(x > hi, hi, x))


def _softplus(xp, x):
    # log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)): exp never overflows, and it is faster than
    # NumPy's logaddexp(0, x), which the stable forms of the logistic loss and its gradient call twice
    if xp is np:  # NumPy's dtype test and a weak 0.0: cheaper per call than isdtype and zeros_like
        if x.dtype.kind != "f":
            return np.logaddexp(np.zeros_like(x), x)  # integers and booleans: NumPy's result dtype
        return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))
    if not xp.isdtype(x.dtype, "real floating"):
        return xp.logaddexp(xp.zeros_like(x), x)
    return xp.maximum(x, xp.zeros_like(x)) + xp.log1p(xp.exp(-xp.abs(x)))


def _log1mexp(xp, x):
    # log(1 - exp(x)) for x <= 0 (Maechler 2012): near 0, exp(x) rounds to 1 and 1 - exp(x)
    # loses every digit, so -expm1(x) is used there; far below, 1 - exp(x) rounds to 1 and
    # log1p keeps the tiny -exp(x). The switch point -log(2) is where both lose least.
    near_zero = x > -math.log(2.0)
    with np.errstate(invalid="ignore", divide="ignore"):  # the branch not taken may be NaN or -inf
        return xp.where(near_zero, xp.log(-xp.expm1(x)), xp.log1p(-xp.exp(x)))


@dataclass(frozen=True)
class No:
    """A fact an op states it lacks, and why: ``numba=No("...")`` keeps its fused groups on
    NumPy, ``vjp=No("...")`` gives it zero gradients (grad/vjps.py's NONDIFFERENTIABLE)."""

    reason: str


#: ``vjp=`` of an op whose VJP is a function of its own in grad/vjps.py (three inputs, or an
#: input that gets no cotangent), not a row's lambda
OWN_VJP = "grad/vjps.py"
_STEP = No("piecewise constant: zero almost everywhere, undefined at the steps")
_BOOLEAN = No("boolean output")
_INTEGER = No("integer-valued output: piecewise constant")


@dataclass(frozen=True)
class ScalarOp:
    """One elementwise op, every fact of it in one place; each per-op table is derived from these.

    ``fn``: the name of an array-API function, or ``fn(xp, *args)``, so the same row runs on
    NumPy, CuPy and ``array_api_strict``.
    ``vjp``: ``(g, y, *inputs) -> cotangent`` (a tuple of them for two inputs), written with the
    output ``y`` and the cotangent ``g``; ``No(why)`` for zero gradients; ``OWN_VJP``.
    ``numba``: the scalar expression over ``{0}, {1}...`` that exec/numba/kernels.py compiles,
    with NumPy's semantics (NaN, inf, signed zeros) on float64 and bool; ``c``: the same in
    CUDA C for exec/cupy/kernels.py (float32 and float64). ``No(why)`` keeps such a group on
    NumPy. ``libm_ns``: the cost class: None where the Numba form is arithmetic or an
    instruction (vectorized as NumPy's loop is), else what each element costs more in Numba's
    scalar libm call than in NumPy's SIMD loop (ns, Numba minus NumPy, 1,000 float64; 1.0
    where NumPy is no faster), so a long array of it stays on NumPy (``numba_below``).
    ``domain``: the inputs ``(lo, hi)`` where the op is real and finite (bench/calibrate.py
    times it there); None for every real number.
    ``promote`` lists the argument positions whose dtypes are promoted together
    (NumPy's rules); ``dtype`` overrides the output-dtype probe when given.
    ``commutative``: swapping the two arguments gives the same bits, for every value
    (the encoder puts such arguments in one canonical order; maximum and minimum are not:
    ``maximum(-0.0, 0.0)`` is ``0.0`` but ``maximum(0.0, -0.0)`` is ``-0.0``).
    ``passes``: the NumPy calls its array form makes (a lone node of several is fused alone,
    so that it runs as one compiled loop once hot: ``exec/fusion.py``).
    """

    nin: int
    fn: str | Callable
    _: KW_ONLY
    vjp: Callable | No | str
    numba: str | No
    c: str | No
    libm_ns: float | None = None
    domain: tuple | None = None
    promote: tuple | None = None
    dtype: Callable | None = None
    commutative: bool = False
    passes: int = 1

    def impl(self, xp) -> Callable:
        """The function computing this op on arrays of namespace ``xp``."""
        if isinstance(self.fn, str):
            return getattr(xp, self.fn)
        return partial(self.fn, xp)


def _probe(value_dtype):
    return np.ones((), dtype=value_dtype)


# np.maximum and np.minimum: NaN wins, and a tie (0.0 and -0.0) gives the second argument
_NAN_MAX = "({0} if ({0} > {1} or {0} != {0}) else {1})"
_NAN_MIN = "({0} if ({0} < {1} or {0} != {0}) else {1})"
_C_MAX = "(({0} > {1} || {0} != {0}) ? {0} : {1})"
_C_MIN = "(({0} < {1} || {0} != {0}) ? {0} : {1})"
#: log(1 - exp(x)) switches form at -log(2) (_log1mexp); log(2) is also logaddexp(x, x) - x
_LN2 = repr(math.log(2.0))
# NumPy's npy_divmod: floor division and remainder with the divisor's sign, -0.0 kept, and
# NumPy's answers where b is 0 (a / b) or a NaN or inf is involved
_C_MOD = ("(({1}) == 0 ? fmod({0}, {1}) : (fmod({0}, {1}) != 0 ? ((({1}) < 0) != (fmod({0}, {1}) < 0) ? "
          "fmod({0}, {1}) + ({1}) : fmod({0}, {1})) : (({1}) < 0 ? -0.0 : 0.0)))")
_C_DIV = "(({0}) - fmod({0}, {1})) / ({1}) - ((fmod({0}, {1}) != 0 && ((({1}) < 0) != (fmod({0}, {1}) < 0))) ? 1 : 0)"
_C_INT_DIV = (f"(({{1}}) == 0 ? ({{0}}) / ({{1}}) : (({_C_DIV}) != 0 ? floor({_C_DIV}) + "
              f"(({_C_DIV}) - floor({_C_DIV}) > 0.5 ? 1 : 0) : ((signbit({{0}}) != 0) != (signbit({{1}}) != 0) ? -0.0 : 0.0)))")

_LOG1MEXP = f"(math.log(-math.expm1({{0}})) if {{0}} > -{_LN2} else math.log1p(-math.exp({{0}})))"
_C_LOG1MEXP = f"(({{0}}) > -{_LN2} ? log(-expm1({{0}})) : log1p(-exp({{0}})))"
#: logit(x) = log(x / (1 - x)), by log1p of (2x - 1) / (1 - x) near 1/2 (special_functions._logit says why)
_LOGIT = "(math.log1p((2.0 * {0} - 1.0) / (1.0 - {0})) if ({0} > 0.3 and {0} < 0.65) else math.log({0} / (1.0 - {0})))"
_C_LOGIT = "((({0}) > 0.3 && ({0}) < 0.65) ? log1p((2 * ({0}) - 1) / (1 - ({0}))) : log(({0}) / (1 - ({0}))))"


#: how a row meets complex inputs; a row not named here refuses them when a node is built.
#: "holomorphic": NumPy's complex loop, and the gradient of a real cost through it is
#: ``g * conj(f'(z))``, the row's VJP sandwiched between conjugates (grad/driver.py);
#: "own": the row's array form, dtype and VJP handle complex inputs themselves;
#: "values": NumPy's loop, no gradient wanted (boolean results).
COMPLEX_SUPPORT = {
    **dict.fromkeys(("add", "sub", "mul", "true_div", "pow", "neg", "sqr", "exp", "exp2", "expm1", "log", "log2",
                     "log10", "log1p", "sqrt", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh",
                     "tanh", "arcsinh", "arccosh", "arctanh"), "holomorphic"),
    **dict.fromkeys(("abs", "real", "imag", "conj", "angle", "complex", "complex_from_polar", "switch", "second"),
                    "own"),
    **dict.fromkeys(("eq", "neq", "isnan", "isinf", "lt", "le", "gt", "ge"), "values"),
}
#: why the rows that NumPy computes on complex numbers refuse them (the others have no NumPy loop)
_NO_COMPLEX_REASON = {
    **dict.fromkeys(("maximum", "minimum", "clip", "lt", "le", "gt", "ge", "sign"), "complex numbers have no order"),
    **dict.fromkeys(("floor", "ceil", "round", "int_div", "mod"), "it rounds real numbers"),
    "polygamma": "complex argument not supported: it is defined on real numbers only",
}
