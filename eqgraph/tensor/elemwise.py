"""Elementwise ops with NumPy broadcasting, and `Cast` (`DimShuffle` is in dimshuffle_op.py).

Every elementwise op is an ``Elemwise(name)``; what the name computes is one
row of ``SCALAR_OPS`` (a ``ScalarOp``, tensor/scalar_ops.py), written against the array namespace
``xp`` so the same row runs on NumPy, CuPy and ``array_api_strict``.  Output dtypes are NumPy's:
they are found by running the row once on NumPy values of the input dtypes.

The row is the only place an elementwise op is declared: its gradient, its Numba and CUDA
forms, its cost class and domain are fields of it, and the tables that grad/, exec/, the
cost calibration, the type rules and ``eqgraph.tensor``'s names read are derived from the
rows.  Adding an op is a row here, a row in tests/op_cases.py and one in tests/fuzz_graphs.py
(tests/tensor/test_registry.py names whatever is missing).
"""

from __future__ import annotations

import math

import numpy as np

from eqgraph.tensor import special_functions as special  # the rows name its array forms special.<name>
from eqgraph.tensor.basic import NotScalarConstantError, as_tensor_variable, get_scalar_constant_value, int64_const
from eqgraph.tensor.cast_policy import floatx_target, promoted
from eqgraph.tensor.dimshuffle_op import dimshuffle
# the rows' own facts and forms, by the names the rows use
from eqgraph.tensor.scalar_ops import (_BOOLEAN, _C_INT_DIV, _C_LOG1MEXP, _C_LOGIT, _C_MAX, _C_MIN, _C_MOD,
                                       _INTEGER, _LN2, _LOG1MEXP, _LOGIT, _NAN_MAX, _NAN_MIN, _STEP, OWN_VJP, No,
                                       ScalarOp, _angle, _angle_dtype, _angle_vjp, _Bitwise, _clip, _complex,
                                       _complex_dtype, _complex_from_polar, _conj, _erf, _erf_dtype, _exp2, _imag,
                                       _imag_vjp, _invert, _log1mexp, _polar_vjp, _probe, _real, _real_dtype,
                                       _real_vjp, _second, _second_dtype, _sigmoid, _sigmoid_dtype, _softplus, _sqr,
                                       _NO_COMPLEX_REASON, COMPLEX_SUPPORT, holds_complex)
from eqgraph.tensor.type import COMPLEX_DTYPES, TensorType
from eqgraph.tensor.variable import TensorConstant
from eqgraph.terms.basic import Apply
from eqgraph.terms.op import Op
from eqgraph.xp import array_namespace, as_output, copy_array


def float_mask(x, like):
    """A boolean mask as a float of ``like``'s dtype (for VJPs)."""
    return cast(x, like.dtype)


def _share(a, b, strict, loose, like):
    """1 where ``a`` alone wins the comparison, 1/2 at a tie, 0 where it loses (or at NaN), as a
    float of ``like``'s dtype: maximum(a, b) is max(stack([a, b]), axis=0), whose gradient splits
    evenly among ties (as JAX's and PyTorch's maximum do), so the two agree."""
    return (float_mask(E[strict](a, b), like) + float_mask(E[loose](a, b), like)) * 0.5


# fmt: off
def _neg_dtype(dtype: str) -> str:
    # PyTensor refuses to negate unsigned integers (NumPy wraps -1 around to 255)
    if np.dtype(dtype).kind == "u":
        raise TypeError(f"neg of an unsigned integer tensor ({dtype}) is refused, as PyTensor does: "
                        f"-x would wrap around; cast x to a signed dtype first")
    return np.negative(_probe(dtype)).dtype.name


SCALAR_OPS: dict[str, ScalarOp] = {
    # arithmetic
    "add":      ScalarOp(2, "add", commutative=True, vjp=lambda g, y, a, b: (g, g),
                         numba="({0} + {1})", c="({0} + {1})"),
    "sub":      ScalarOp(2, "subtract", vjp=lambda g, y, a, b: (g, -g),
                         numba="({0} - {1})", c="({0} - {1})"),
    "mul":      ScalarOp(2, "multiply", commutative=True, vjp=lambda g, y, a, b: (g * b, g * a),
                         numba="({0} * {1})", c="({0} * {1})"),
    "true_div": ScalarOp(2, "divide", vjp=lambda g, y, a, b: (g / b, -g * a / (b * b)),
                         numba="({0} / {1})", c="({0} / {1})"),
    "int_div":  ScalarOp(2, "floor_divide", vjp=_STEP, numba="({0} // {1})", c=_C_INT_DIV,
                         libm_ns=6.0),  # Numba's float floor division is no instruction: slower than NumPy's loop
    "mod":      ScalarOp(2, "remainder", vjp=lambda g, y, a, b: (g, -g * E["floor"](a / b)),
                         numba="({0} % {1})", c=_C_MOD),
    "pow":      ScalarOp(2, "pow", vjp=lambda g, y, a, b: (g * b * a ** (b - 1), g * y * E["log"](a)),
                         numba="({0} ** {1})", c="pow({0}, {1})", libm_ns=10.0),
    "maximum":  ScalarOp(2, "maximum",
                         vjp=lambda g, y, a, b: (g * _share(a, b, "gt", "ge", g), g * _share(a, b, "lt", "le", g)),
                         numba=_NAN_MAX, c=_C_MAX),
    "minimum":  ScalarOp(2, "minimum",
                         vjp=lambda g, y, a, b: (g * _share(a, b, "lt", "le", g), g * _share(a, b, "gt", "ge", g)),
                         numba=_NAN_MIN, c=_C_MIN),
    "neg":      ScalarOp(1, "negative", dtype=_neg_dtype, vjp=lambda g, y, x: -g, numba="(-{0})", c="(-{0})"),
    "abs":      ScalarOp(1, "abs", vjp=lambda g, y, x: g * x / y if holds_complex(x) else g * E["sign"](x),
                         numba="abs({0})", c="fabs({0})"),
    "sign":     ScalarOp(1, "sign", vjp=_STEP,  # sign(-0.0) is 0.0, sign(NaN) NaN: x + 0 is both
                         numba="(1.0 if {0} > 0 else (-1.0 if {0} < 0 else {0} + 0.0))",
                         c="(({0} > 0) ? 1 : (({0} < 0) ? -1 : {0} + 0))"),
    "sqr":      ScalarOp(1, _sqr, vjp=lambda g, y, x: g * 2 * x, numba="({0} * {0})", c="({0} * {0})"),
    "clip":     ScalarOp(3, _clip, passes=2, vjp=OWN_VJP,
                         numba="({1} if {0} < {1} else ({2} if {0} > {2} else {0}))",
                         c="(({0} < {1}) ? {1} : (({0} > {2}) ? {2} : {0}))"),
    "second":   ScalarOp(2, _second, promote=(), dtype=_second_dtype,  # y broadcast to x's shape
                         vjp=OWN_VJP, numba="{1}", c="{1}"),
    # complex numbers (a real number is its own real part and conjugate; its imaginary part is 0)
    "real":     ScalarOp(1, _real, dtype=_real_dtype, vjp=_real_vjp, numba="{0}",
                         c=No("the CUDA kernels hold real dtypes only")),
    "imag":     ScalarOp(1, _imag, dtype=_real_dtype, vjp=_imag_vjp, numba="0.0",
                         c=No("the CUDA kernels hold real dtypes only")),
    "conj":     ScalarOp(1, _conj, vjp=lambda g, y, x: E["conj"](g), numba="{0}",
                         c=No("the CUDA kernels hold real dtypes only")),
    "angle":    ScalarOp(1, _angle, dtype=_angle_dtype, vjp=_angle_vjp, numba="math.atan2(0.0, {0})",
                         c=No("the CUDA kernels hold real dtypes only"), libm_ns=1.0),
    "complex":  ScalarOp(2, _complex, dtype=_complex_dtype, vjp=lambda g, y, a, b: (E["real"](g), E["imag"](g)),
                         numba=No("a complex result: the Numba kernels hold real dtypes only"),
                         c=No("the CUDA kernels hold real dtypes only")),
    "complex_from_polar": ScalarOp(2, _complex_from_polar, dtype=_complex_dtype, vjp=_polar_vjp,
                                   numba=No("a complex result: the Numba kernels hold real dtypes only"),
                                   c=No("the CUDA kernels hold real dtypes only")),
    # exponentials and logarithms
    "exp":      ScalarOp(1, "exp", vjp=lambda g, y, x: g * y,
                         numba="math.exp({0})", c="exp({0})", libm_ns=6.0),
    "exp2":     ScalarOp(1, _exp2, vjp=lambda g, y, x: g * y * math.log(2.0),
                         numba="(2.0 ** {0})", c="exp2({0})", libm_ns=3.0),
    "expm1":    ScalarOp(1, "expm1", vjp=lambda g, y, x: g * (y + 1),
                         numba="math.expm1({0})", c="expm1({0})", libm_ns=7.0),
    "log":      ScalarOp(1, "log", vjp=lambda g, y, x: g / x,
                         numba="math.log({0})", c="log({0})", libm_ns=5.0, domain=(0.0, math.inf)),
    "log2":     ScalarOp(1, "log2", vjp=lambda g, y, x: g / (x * math.log(2.0)),
                         numba="math.log2({0})", c="log2({0})", libm_ns=3.0, domain=(0.0, math.inf)),
    "log10":    ScalarOp(1, "log10", vjp=lambda g, y, x: g / (x * math.log(10.0)),
                         numba="math.log10({0})", c="log10({0})", libm_ns=8.0, domain=(0.0, math.inf)),
    "log1p":    ScalarOp(1, "log1p", vjp=lambda g, y, x: g / (x + 1),
                         numba="math.log1p({0})", c="log1p({0})", libm_ns=8.0, domain=(-1.0, math.inf)),
    # sqrt is an instruction, vectorized like arithmetic: a fused Numba loop of it beats NumPy's
    # passes, both correctly rounded
    "sqrt":     ScalarOp(1, "sqrt", vjp=lambda g, y, x: g / (2 * y),
                         numba="math.sqrt({0})", c="sqrt({0})", domain=(0.0, math.inf)),
    # exp(-|x|) is exp(-x) where x >= 0 and exp(x) below, to the bit: one exp of one argument
    # that LLVM shares with softplus(x), softplus(-x) and sigmoid(-x) of the same element
    "sigmoid":  ScalarOp(1, _sigmoid, dtype=_sigmoid_dtype, vjp=lambda g, y, x: g * y * (1 - y),
                         numba="(1.0 / (1.0 + math.exp(-abs({0}))) if {0} >= 0 else "
                               "math.exp(-abs({0})) / (1.0 + math.exp(-abs({0}))))",
                         c="(({0}) >= 0 ? 1 / (1 + exp(-{0})) : exp({0}) / (1 + exp({0})))", libm_ns=1.0),
    "softplus": ScalarOp(1, _softplus, passes=6, vjp=lambda g, y, x: g * E["sigmoid"](x),
                         numba="(math.log1p(math.exp(-abs({0}))) + ({0} if {0} > 0.0 else 0.0))",
                         c="(log1p(exp(-fabs({0}))) + (({0} > 0) ? {0} : 0))", libm_ns=1.0),
    "log1mexp": ScalarOp(1, _log1mexp, domain=(-math.inf, 0.0),   # log(1 - exp(x)), stable for x <= 0
                         # -exp(x) / (1 - exp(x)) for x <= 0: abs makes both zeros +0.0, so -inf at each
                         vjp=lambda g, y, x: -g / E["expm1"](E["abs"](x)),
                         numba=_LOG1MEXP, c=_C_LOG1MEXP, libm_ns=1.0),
    "logaddexp": ScalarOp(2, "logaddexp",  # log(exp(a) + exp(b)), stable; NumPy's npy_logaddexp
                          vjp=lambda g, y, a, b: (g * E["exp"](a - y), g * E["exp"](b - y)),  # never above g
                          numba=f"({{0}} + {_LN2} if {{0}} == {{1}} else ({{0}} + math.log1p(math.exp({{1}} - {{0}})) "
                                f"if {{0}} > {{1}} else ({{1}} + math.log1p(math.exp({{0}} - {{1}})) if {{0}} <= {{1}} "
                                f"else {{0}} - {{1}})))",
                          c=f"(({{0}}) == ({{1}}) ? ({{0}}) + (decltype({{0}})){_LN2} : (({{0}}) > ({{1}}) ? ({{0}}) + log1p(exp(({{1}}) - ({{0}}))) "
                            f": (({{0}}) <= ({{1}}) ? ({{1}}) + log1p(exp(({{0}}) - ({{1}}))) : ({{0}}) - ({{1}}))))",
                          libm_ns=1.0),  # log(2) in the input's type, as NumPy adds it
    "erf":      ScalarOp(1, _erf, dtype=_erf_dtype,
                         vjp=lambda g, y, x: g * (2 / math.sqrt(math.pi)) * E["exp"](-x * x),
                         numba="math.erf({0})", c="erf({0})", libm_ns=1.0),
    # special functions (tensor/special_functions.py: SciPy where installed; without it, the fallback or the
    # error named there). Numba forms that libm lacks are exec/numba/special.py's functions, which
    # generated kernels import as ``special``; a row without one keeps its group on NumPy.
    # libm_ns 1.0: SciPy's loops call a scalar function per element too, so NumPy is no faster;
    # the forms of NumPy's log (logit, xlogx, xlogy0) are priced as log is
    "gammaln":  ScalarOp(1, special.Special("gammaln", "gammaln", fix=special.tiny_gammaln),  # log|gamma(x)|
                         dtype=special.float_dtype, vjp=lambda g, y, x: g * E["psi"](x),  # without SciPy: math.lgamma
                         numba="(-math.inf if {0} == -math.inf else math.lgamma({0}))",  # SciPy's -inf there
                         c="(isinf({0}) && ({0}) < 0 ? ({0}) : lgamma({0}))", libm_ns=1.0, domain=(0.0, math.inf)),
    "psi":      ScalarOp(1, special.Special("psi", "psi"), dtype=special.float_dtype,  # digamma; needs SciPy
                         vjp=lambda g, y, x: g * E["tri_gamma"](x),
                         numba="special.digamma({0})",
                         c=No("CUDA's math library has no digamma"), libm_ns=1.0, domain=(0.0, math.inf)),
    "tri_gamma": ScalarOp(1, special.Special("tri_gamma", "polygamma", (1,)), dtype=special.float_dtype,
                          vjp=lambda g, y, x: g * E["polygamma"](2, x),
                          numba="special.trigamma({0})",
                          c=No("CUDA's math library has no trigamma"), libm_ns=1.0, domain=(0.0, math.inf)),
    "erfc":     ScalarOp(1, special.Special("erfc", "erfc"), dtype=special.float_dtype,  # without SciPy: math.erfc
                         vjp=lambda g, y, x: -g * (2 / math.sqrt(math.pi)) * E["exp"](-x * x),
                         numba="math.erfc({0})", c="erfc({0})", libm_ns=1.0),
    "erfcx":    ScalarOp(1, special.Special("erfcx", "erfcx"), dtype=special.float_dtype,  # exp(x^2) erfc(x); SciPy
                         vjp=lambda g, y, x: g * (2 * x * y - 2 / math.sqrt(math.pi)),
                         numba="special.erfcx({0})",
                         c="erfcx({0})", libm_ns=1.0),
    "erfinv":   ScalarOp(1, special.Special("erfinv", "erfinv"), dtype=special.float_dtype,  # needs SciPy
                         vjp=lambda g, y, x: g * (math.sqrt(math.pi) / 2) * E["exp"](y * y),
                         numba="special.erfinv({0})",
                         c="erfinv({0})", libm_ns=1.0, domain=(-1.0, 1.0)),
    "erfcinv":  ScalarOp(1, special.Special("erfcinv", "erfcinv", fix=special.erfcinv_smallest), dtype=special.float_dtype,  # needs SciPy
                         vjp=lambda g, y, x: -g * (math.sqrt(math.pi) / 2) * E["exp"](y * y),
                         numba="special.erfcinv({0})",
                         c="erfcinv({0})", libm_ns=1.0, domain=(0.0, 2.0)),
    "logit":    ScalarOp(1, special.Special("logit", "logit"), dtype=special.float_dtype,  # log(x / (1 - x))
                         vjp=lambda g, y, x: g / (x * (1 - x)),   # without SciPy: special._logit's NumPy form
                         numba=_LOGIT, c=_C_LOGIT, libm_ns=5.0, domain=(0.0, 1.0)),
    "xlogx":    ScalarOp(1, special.xlogx, dtype=special.float_dtype,  # x log(x), 0 at 0 (NumPy only)
                         vjp=lambda g, y, x: g * (1 + E["log"](x)),
                         numba="(0.0 if {0} == 0 else {0} * math.log({0}))",
                         c="(({0}) == 0 ? 0 : ({0}) * log({0}))", libm_ns=5.0, domain=(0.0, math.inf)),
    "xlogy0":   ScalarOp(2, special.xlogy0, dtype=special.float_dtype,  # x log(y), 0 where x = 0 (NumPy only)
                         vjp=lambda g, y, a, b: (g * E["log"](b), g * a / b),
                         numba="(0.0 if {0} == 0 else {0} * math.log({1}))",
                         c="(({0}) == 0 ? 0 : ({0}) * log({1}))", libm_ns=5.0, domain=(0.0, math.inf)),
    "gamma":    ScalarOp(1, special.Special("gamma", "gamma"), dtype=special.float_dtype,  # without SciPy: math.gamma
                         vjp=lambda g, y, x: g * y * E["psi"](x),
                         numba="math.gamma({0})", c="tgamma({0})", libm_ns=1.0, domain=(0.0, math.inf)),
    # beta and log|beta| by eqgraph's own form on NumPy and in Numba: SciPy's betaln is 1e-10 off at
    # a = 1e6, b = 0.5 (its log-gammas cancel) and inf at betaln(1e-320, 1) (736.8)
    "betaln":   ScalarOp(2, special.Own("betaln", "betaln", 2, "betaln"), dtype=special.float_dtype,  # log|beta(a, b)|
                         vjp=lambda g, y, a, b: (g * (E["psi"](a) - E["psi"](a + b)), g * (E["psi"](b) - E["psi"](a + b))),
                         numba="special.betaln({0}, {1})",
                         c=No("lgamma(a) + lgamma(b) - lgamma(a + b) cancels for large arguments"),
                         libm_ns=1.0, domain=(0.0, math.inf)),
    "beta":     ScalarOp(2, special.Own("beta", "beta", 2, "beta"), dtype=special.float_dtype,
                         vjp=lambda g, y, a, b: (g * y * (E["psi"](a) - E["psi"](a + b)),
                                                 g * y * (E["psi"](b) - E["psi"](a + b))),
                         numba="special.beta({0}, {1})",
                         c=No("CUDA's math library has no beta"), libm_ns=1.0, domain=(0.0, math.inf)),
    "i0":       ScalarOp(1, special.Special("i0", "i0", fix=special.i0_at_infinity), dtype=special.float_dtype,  # without SciPy: NumPy's i0
                         vjp=lambda g, y, x: g * E["i1"](x),
                         numba="special.i0({0})",
                         c="cyl_bessel_i0({0})", libm_ns=1.0),
    "i1":       ScalarOp(1, special.Special("i1", "i1", fix=special.i1_at_infinity), dtype=special.float_dtype,  # needs SciPy
                         # i0(x) - i1(x) / x, 1/2 at 0 (its limit; PyTensor's form is NaN there)
                         vjp=lambda g, y, x: g * E["switch"](E["eq"](x, 0), 0.5,
                                                             E["i0"](x) - y / E["switch"](E["eq"](x, 0), 1.0, x)),
                         numba="special.i1({0})",
                         c="cyl_bessel_i1({0})", libm_ns=1.0),
    "ive":      ScalarOp(2, special.Special("ive", "ive"), dtype=special.float_dtype,  # iv(v, x) exp(-|x|); SciPy
                         vjp=lambda g, y, v, x: (
                             special.not_implemented("ive", 0, v, "the derivative in the order v"),
                             g * ((E["ive"](v - 1, x) + E["ive"](v + 1, x)) / 2 - E["sign"](x) * y)),
                         numba=No("no libm Bessel Iv: a Numba scalar function of its own is not written yet"),
                         c=No("CUDA's math library has no Bessel Iv of real order"), libm_ns=1.0),
    # P and Q by eqgraph's own form on NumPy and in Numba: SciPy's is 456 ulps off at a < 1 and NaN at a = 1e308
    "gammainc": ScalarOp(2, special.Own("gammainc", "gammainc", 2, "gammainc"), dtype=special.float_dtype,  # P(k, x)
                         vjp=lambda g, y, k, x: (
                             special.not_implemented("gammainc", 0, k, "the derivative in k"),
                             g * E["exp"](-x + (k - 1) * E["log"](x) - E["gammaln"](k))),
                         numba="special.gammainc({0}, {1})",
                         c=No("CUDA's math library has no incomplete gamma"), libm_ns=1.0, domain=(0.0, math.inf)),
    "gammaincc": ScalarOp(2, special.Own("gammaincc", "gammaincc", 2, "gammaincc"), dtype=special.float_dtype,  # Q(k, x)
                          vjp=lambda g, y, k, x: (
                              special.not_implemented("gammaincc", 0, k, "the derivative in k"),
                              -g * E["exp"](-x + (k - 1) * E["log"](x) - E["gammaln"](k))),
                          numba="special.gammaincc({0}, {1})",
                          c=No("CUDA's math library has no incomplete gamma"), libm_ns=1.0, domain=(0.0, math.inf)),
    # the inverses in their second argument, by eqgraph's own form on NumPy and in Numba (Newton steps on
    # its own P and Q); their VJPs: 1 / the derivative of P (or Q) at the result
    "gammaincinv": ScalarOp(2, special.Own("gammaincinv", "gammaincinv", 2, "gammaincinv"), dtype=special.float_dtype,
                            vjp=lambda g, y, k, p: (
                                special.not_implemented("gammaincinv", 0, k, "the derivative in k"),
                                g * E["exp"](y - (k - 1) * E["log"](y) + E["gammaln"](k))),
                            numba="special.gammaincinv({0}, {1})",
                            c=No("CUDA's math library has no incomplete gamma"), libm_ns=1.0, domain=(0.0, 1.0)),
    "gammainccinv": ScalarOp(2, special.Own("gammainccinv", "gammainccinv", 2, "gammainccinv"),
                             dtype=special.float_dtype,
                             vjp=lambda g, y, k, q: (
                                 special.not_implemented("gammainccinv", 0, k, "the derivative in k"),
                                 -g * E["exp"](y - (k - 1) * E["log"](y) + E["gammaln"](k))),
                             numba="special.gammainccinv({0}, {1})",
                             c=No("CUDA's math library has no incomplete gamma"), libm_ns=1.0, domain=(0.0, 1.0)),
    # polygamma(n, x), n an integer: eqgraph's own form on NumPy and in Numba (SciPy's zeta underflows at
    # large x: polygamma(2, 1e161) 9% off, polygamma(100, 1454) 5e-5)
    "polygamma": ScalarOp(2, special.Own("polygamma", "polygamma", 2, "polygamma", typed_from=1),
                          dtype=special.polygamma_dtype, promote=(1,),  # a Python-int order stays an integer
                          vjp=OWN_VJP,  # its integer order n stays an integer (grad/vjps_special.py)
                          numba="special.polygamma({0}, {1})",
                          c=No("CUDA's math library has no polygamma"), libm_ns=1.0, domain=(0.0, math.inf)),
    # I_x(a, b); its derivatives in a and b are rows of their own (grad/vjps_special.py), by the
    # continued fraction of I differentiated term by term (exec/numba/special.py)
    "betainc":  ScalarOp(3, special.Special("betainc", "betainc"), dtype=special.float_dtype, vjp=OWN_VJP,
                         numba=No("exec/numba/special.py's continued fraction is 2.5e-12 off SciPy's (Boost's) "
                                  "betainc at the 99.9th percentile and loses subnormal parameters: a fused "
                                  "group would change answers"),
                         c=No("CUDA's math library has no incomplete beta"), libm_ns=1.0, domain=(0.0, 1.0)),
    "betainc_da": ScalarOp(3, special.Own("betainc_da", "betainc_da", 3), dtype=special.float_dtype, vjp=OWN_VJP,
                           numba="special.betainc_da({0}, {1}, {2})",
                           c=No("CUDA's math library has no incomplete beta"), libm_ns=1.0, domain=(0.0, 1.0)),
    "betainc_db": ScalarOp(3, special.Own("betainc_db", "betainc_db", 3), dtype=special.float_dtype, vjp=OWN_VJP,
                           numba="special.betainc_db({0}, {1}, {2})",
                           c=No("CUDA's math library has no incomplete beta"), libm_ns=1.0, domain=(0.0, 1.0)),
    "logdiffexp": ScalarOp(2, special.logdiffexp, passes=5,  # log(exp(a) - exp(b)), stable: a + log1mexp(b - a)
                           vjp=lambda g, y, a, b: (g * E["exp"](a - y), -g * E["exp"](b - y)),
                           numba=f"({{0}} + {_LOG1MEXP.format('({1} - {0})')})",
                           c=f"(({{0}}) + {_C_LOG1MEXP.format('(({1}) - ({0}))')})", libm_ns=1.0),
    # trigonometry
    "sin":      ScalarOp(1, "sin", vjp=lambda g, y, x: g * E["cos"](x),
                         numba="math.sin({0})", c="sin({0})", libm_ns=1.0),
    "cos":      ScalarOp(1, "cos", vjp=lambda g, y, x: -g * E["sin"](x),
                         numba="math.cos({0})", c="cos({0})", libm_ns=1.0),
    "tan":      ScalarOp(1, "tan", vjp=lambda g, y, x: g * (1 + y * y),
                         numba="math.tan({0})", c="tan({0})", libm_ns=6.0),
    "arcsin":   ScalarOp(1, "asin", vjp=lambda g, y, x: g / E["sqrt"](1 - x * x),
                         numba="math.asin({0})", c="asin({0})", libm_ns=1.0, domain=(-1.0, 1.0)),
    "arccos":   ScalarOp(1, "acos", vjp=lambda g, y, x: -g / E["sqrt"](1 - x * x),
                         numba="math.acos({0})", c="acos({0})", libm_ns=1.0, domain=(-1.0, 1.0)),
    "arctan":   ScalarOp(1, "atan", vjp=lambda g, y, x: g / (1 + x * x),
                         numba="math.atan({0})", c="atan({0})", libm_ns=6.0),
    "arctan2":  ScalarOp(2, "atan2", vjp=lambda g, y, a, b: (g * b / (a * a + b * b), -g * a / (a * a + b * b)),
                         numba="math.atan2({0}, {1})", c="atan2({0}, {1})", libm_ns=13.0),  # the angle of (b, a)
    "sinh":     ScalarOp(1, "sinh", vjp=lambda g, y, x: g * E["cosh"](x),
                         numba="math.sinh({0})", c="sinh({0})", libm_ns=11.0),
    "cosh":     ScalarOp(1, "cosh", vjp=lambda g, y, x: g * E["sinh"](x),
                         numba="math.cosh({0})", c="cosh({0})", libm_ns=7.0),
    "tanh":     ScalarOp(1, "tanh", vjp=lambda g, y, x: g * (1 - y * y),
                         numba="math.tanh({0})", c="tanh({0})", libm_ns=11.0),
    "arcsinh":  ScalarOp(1, "asinh", vjp=lambda g, y, x: g / E["sqrt"](x * x + 1),
                         numba="math.asinh({0})", c="asinh({0})", libm_ns=1.0),
    "arccosh":  ScalarOp(1, "acosh", vjp=lambda g, y, x: g / E["sqrt"](x * x - 1),
                         numba="math.acosh({0})", c="acosh({0})", libm_ns=6.0, domain=(1.0, math.inf)),
    "arctanh":  ScalarOp(1, "atanh", vjp=lambda g, y, x: g / (1 - x * x),
                         numba="math.atanh({0})", c="atanh({0})", libm_ns=6.0, domain=(-1.0, 1.0)),
    # rounding
    "floor":    ScalarOp(1, "floor", vjp=_STEP, numba="np.floor({0})", c="floor({0})"),
    "ceil":     ScalarOp(1, "ceil", vjp=_STEP, numba="np.ceil({0})", c="ceil({0})"),
    "round":    ScalarOp(1, "round", vjp=_STEP,  # half to even, like NumPy (whose round is rint)
                         numba="np.rint({0})", c="rint({0})"),
    # comparisons and logic
    "eq":       ScalarOp(2, "equal", commutative=True, vjp=_BOOLEAN, numba="({0} == {1})", c="({0} == {1})"),
    "neq":      ScalarOp(2, "not_equal", commutative=True, vjp=_BOOLEAN, numba="({0} != {1})", c="({0} != {1})"),
    "lt":       ScalarOp(2, "less", vjp=_BOOLEAN, numba="({0} < {1})", c="({0} < {1})"),
    "le":       ScalarOp(2, "less_equal", vjp=_BOOLEAN, numba="({0} <= {1})", c="({0} <= {1})"),
    "gt":       ScalarOp(2, "greater", vjp=_BOOLEAN, numba="({0} > {1})", c="({0} > {1})"),
    "ge":       ScalarOp(2, "greater_equal", vjp=_BOOLEAN, numba="({0} >= {1})", c="({0} >= {1})"),
    # bitwise forms on bools have no branches
    "and_":     ScalarOp(2, _Bitwise("logical_and", "bitwise_and"), commutative=True, vjp=_INTEGER,
                         numba="({0} & {1})", c="({0} && {1})"),
    "or_":      ScalarOp(2, _Bitwise("logical_or", "bitwise_or"), commutative=True, vjp=_INTEGER,
                         numba="({0} | {1})", c="({0} || {1})"),
    "xor":      ScalarOp(2, _Bitwise("logical_xor", "bitwise_xor"), commutative=True, vjp=_INTEGER,
                         numba="({0} != {1})", c="({0} != {1})"),
    "invert":   ScalarOp(1, _invert, vjp=_INTEGER, numba="(not {0})", c="(!{0})"),
    "isnan":    ScalarOp(1, "isnan", vjp=_BOOLEAN, numba="math.isnan({0})", c="isnan({0})"),
    "isinf":    ScalarOp(1, "isinf", vjp=_BOOLEAN, numba="math.isinf({0})", c="isinf({0})"),
    "switch":   ScalarOp(3, "where", promote=(1, 2), vjp=OWN_VJP, numba="({1} if {0} else {2})", c="({0} ? {1} : {2})"),
}
# fmt: on

def broadcast_static_shapes(op, inputs) -> tuple:
    """The static output shape of broadcasting ``inputs`` (all of one ndim)."""
    shape = []
    for axis, dims in enumerate(zip(*(i.type.shape for i in inputs))):
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            raise ValueError(f"{op} cannot broadcast {', '.join(str(i) for i in inputs)}: Incompatible Elemwise "
                             f"input shapes {[i.type.shape for i in inputs]}, whose static sizes disagree on axis {axis}")
        shape.append(known.pop() if known else 1 if all(d == 1 for d in dims) else None)
    return tuple(shape)


def shape_inputs(node) -> list:
    """The inputs of an elementwise node (an ``Elemwise`` or a ``Cast``) that its output's shape
    comes from: the output has their broadcast shape. An input whose every axis is statically 1
    changes nothing and is left out, so ``x * 2`` and ``exp(x) + b.dimshuffle('x')`` both have
    the shape of ``x`` alone. The one statement of this fact: the encoder's shape roots
    (egraph/encode.py) and fusion's shape sources (exec/fusion.py) both read it."""
    ndim = node.outputs[0].ndim
    return [v for v in node.inputs
            if not (isinstance(v.type, TensorType) and v.type.ndim <= ndim and all(v.type.broadcastable))]


#: the binary ops that take any number of terms, as PyTensor's ``add(a, b, c)`` and ``mul(a, b, c)``
VARIADIC = ("add", "mul")


class Elemwise(Op):
    """An elementwise op: ``SCALAR_OPS[name]`` applied with NumPy broadcasting."""

    __props__ = ("name",)

    def __init__(self, name: str):
        if name not in SCALAR_OPS:
            raise ValueError(f"No elementwise op named {name!r}")
        self.name = name
        self.scalar = SCALAR_OPS[name]
        self.nin = self.scalar.nin
        self._dtypes: dict = {}  # input dtypes -> output dtype

    def __str__(self):
        return f"Elemwise{{{self.name}}}"

    def __reduce__(self):  # by name: a row's VJP is a lambda, which pickle cannot write
        return _registered, (self.name,)

    def outer(self, x, y):
        """NumPy's ``ufunc.outer`` of a two-input op: of shape ``x.shape + y.shape``."""
        x, y = as_tensor_variable(x), as_tensor_variable(y)
        return self(dimshuffle(x, tuple(range(x.ndim)) + ("x",) * y.ndim), y)

    def __call__(self, *inputs, **kwargs):
        if len(inputs) > 2 and self.name in VARIADIC:  # a + b + c, left to right
            first = super().__call__(inputs[0], inputs[1])
            return self(first, *inputs[2:], **kwargs)
        return super().__call__(*inputs, **kwargs)

    def make_node(self, *inputs):
        if len(inputs) != self.nin:
            raise TypeError(f"{self} takes {self.nin} inputs, got {len(inputs)}")
        try:
            inputs = [as_tensor_variable(i) for i in inputs]
        except TypeError as err:
            raise TypeError(f"{self}: {err}") from err
        try:
            dtype, inputs = self._promote(inputs)
        except TypeError as err:  # no output dtype for these inputs (NumPy has no loop, or refused)
            described = ", ".join(f"{i} ({i.dtype})" for i in inputs)
            raise TypeError(f"{self} of {described}: {err}") from err
        target = floatx_target(self, dtype, inputs)  # cast_policy "numpy+floatX"
        if target is not None:
            dtype, inputs = self._promote(self._cast_promoted(inputs, target))
        if dtype == "float16" and "float16" not in {i.dtype for i in inputs}:
            # NumPy computes exp of int8 (uint8, bool) in float16; PyTensor upgrades such
            # inputs to float32 (upgrade_to_float), and so does the graph, for every backend
            inputs = [cast(i, "float32") if i.dtype in _BYTE_SIZED else i for i in inputs]
            dtype, inputs = self._promote(inputs)
        ndim = max(i.ndim for i in inputs)
        inputs = [i if i.ndim == ndim else dimshuffle(i, ("x",) * (ndim - i.ndim) + tuple(range(i.ndim)))
                  for i in inputs]
        out = TensorType(dtype, broadcast_static_shapes(self, inputs))
        return Apply(self, inputs, [out()])

    def _cast_promoted(self, inputs, dtype):
        promote = promoted(self)
        return [x if i not in promote else _recast_weak(x, np.dtype(dtype)) if getattr(x, "weak", False)
                else cast(x, dtype) for i, x in enumerate(inputs)]

    def _promote(self, inputs):
        """NumPy's output dtype; weak (Python-number) constants are cast to the promoted dtype."""
        if not any(getattr(i, "weak", False) for i in inputs):  # the common case: cached by dtypes
            key = tuple(i.dtype for i in inputs)
            if key not in self._dtypes:
                self._dtypes[key] = self._promote_uncached(inputs)[0]
            return self._dtypes[key], inputs
        return self._promote_uncached(inputs)

    def _promote_uncached(self, inputs):
        promote = promoted(self)
        strong = [inputs[i].dtype for i in promote if not getattr(inputs[i], "weak", False)]
        weak = [inputs[i].data.item() for i in promote if getattr(inputs[i], "weak", False)]
        if not strong:  # Python numbers only: one that a partner already gave a dtype keeps it
            given = [np.result_type(inputs[i].data.item()) != inputs[i].dtype for i in promote]
            strong = [inputs[i].dtype for i, g in zip(promote, given) if g]
            weak = [inputs[i].data.item() for i, g in zip(promote, given) if not g]
        try:
            common = np.result_type(*strong, *weak) if (strong or weak) else None
        except (TypeError, OverflowError) as err:
            raise TypeError(f"{self} cannot combine {', '.join(map(str, inputs))}: {err}") from err
        if common is not None:
            inputs = list(inputs)
            for i in promote:
                if getattr(inputs[i], "weak", False) and inputs[i].dtype != common.name:
                    try:
                        inputs[i] = _recast_weak(inputs[i], common)
                    except OverflowError as err:
                        raise TypeError(f"{self}: {err}") from err
        return self.output_dtype([i.dtype for i in inputs]), inputs

    def output_dtype(self, dtypes) -> str:
        """The output dtype for inputs of ``dtypes`` (weak constants already recast);
        raises TypeError where NumPy has no such loop (``invert`` of floats, say), or where
        the row refuses complex numbers (COMPLEX_SUPPORT)."""
        if any(str(d) in COMPLEX_DTYPES for d in dtypes) and self.name not in COMPLEX_SUPPORT:
            complex_dtype = next(str(d) for d in dtypes if str(d) in COMPLEX_DTYPES)
            why = _NO_COMPLEX_REASON.get(self.name, "it is defined on real numbers only")
            raise TypeError(f"{self} does not take complex numbers ({complex_dtype} input): {why}")
        if self.scalar.dtype is not None:
            return np.dtype(self.scalar.dtype(*dtypes)).name
        with np.errstate(all="ignore"):
            probe = self.scalar.impl(np)(*[_probe(d) for d in dtypes])
        return np.asarray(probe).dtype.name

    def perform(self, node, inputs, output_storage):
        xp = array_namespace(*inputs)
        if xp is not np:  # NumPy mixes dtypes itself; the array API wants them promoted first
            inputs = self._promote_values(xp, node, inputs)
        output_storage[0][0] = as_output(xp, self.scalar.impl(xp)(*inputs), node.outputs[0].type)

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
        """On NumPy, a thunk bound to NumPy directly (the per-call hot path of most graphs).
        It stores a new array each run, so it honours ``no_recycling`` as it is."""
        if impl not in (None, "numpy"):
            return super().make_thunk(node, storage_map, compute_map, no_recycling, impl)
        fn, dtype, ndarray = self.scalar.impl(np), node.outputs[0].type.numpy_dtype, np.ndarray
        cells = [storage_map[v] for v in node.inputs]
        out, flag = storage_map[node.outputs[0]], compute_map[node.outputs[0]]
        if len(cells) == 2:
            a, b = cells

            def thunk():
                r = fn(a[0], b[0])
                out[0] = r if type(r) is ndarray and r.dtype == dtype else np.asarray(r, dtype=dtype)
                flag[0] = 1
        else:
            def thunk():
                r = fn(*[c[0] for c in cells])
                out[0] = r if type(r) is ndarray and r.dtype == dtype else np.asarray(r, dtype=dtype)
                flag[0] = 1
        return thunk

    def _promote_values(self, xp, node, inputs):
        promote = range(self.nin) if self.scalar.promote is None else self.scalar.promote
        if not promote:
            return inputs
        common = np.result_type(*(node.inputs[i].dtype for i in promote))
        out = node.outputs[0].type.numpy_dtype
        if out.kind in "fc" and common.kind not in "fc":
            common = out  # e.g. exp or true_div of integers computes in the float output dtype
        inputs = list(inputs)
        for i in promote:
            if node.inputs[i].dtype != common.name:
                inputs[i] = xp.astype(inputs[i], getattr(xp, common.name))
        return inputs

    def infer_shape(self, fgraph, node, shapes):
        return [broadcast_shape_vars(shapes, node.outputs[0].type.shape)]

    def flops(self, inputs, outputs):
        return int(np.prod(outputs[0], dtype=np.int64))


_BYTE_SIZED = ("bool", "int8", "uint8")


def _recast_weak(const: TensorConstant, dtype) -> TensorConstant:
    value = const.data
    cast = value.astype(dtype)
    if dtype.kind in "iub" and value.dtype.kind in "iu" and cast != value:
        raise OverflowError(f"Python integer {value} out of bounds for {dtype}")
    return TensorConstant(TensorType(dtype, const.type.shape), cast, name=const.name, weak=True)


# One op value per scalar function: et.add, et.exp, ...
ELEMWISE_OPS: dict[str, Elemwise] = {name: Elemwise(name) for name in SCALAR_OPS}
E = ELEMWISE_OPS  # what the rows' VJPs build their graphs from


def _registered(name: str) -> Elemwise:
    """The op of ``name`` (what a pickled Elemwise loads as)."""
    return ELEMWISE_OPS[name]


class Cast(Op):
    """Convert to ``dtype`` elementwise (``x.astype(dtype)``)."""

    __props__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype).name

    def __str__(self):
        return f"Cast{{{self.dtype}}}"

    def make_node(self, x):
        x = as_tensor_variable(x)
        if x.dtype in COMPLEX_DTYPES and self.dtype not in COMPLEX_DTYPES:  # PyTensor refuses it too
            raise TypeError(f"{self} cannot cast the complex {x} ({x.dtype}) to a real dtype: the imaginary "
                            "part would be dropped; take et.real(x), et.imag(x) or et.abs(x) first")
        return Apply(self, [x], [TensorType(self.dtype, x.type.shape)()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        xp = array_namespace(x)
        out = as_output(xp, x, node.outputs[0].type)
        output_storage[0][0] = out if out is not x else copy_array(x)  # a cast to x's own dtype: no view

    def infer_shape(self, fgraph, node, shapes):
        return [shapes[0]]

    def flops(self, inputs, outputs):
        return 0

    def scalar_constant_value(self, node):
        """A cast of a constant is the constant in the new dtype (``get_scalar_constant_value``)."""
        return np.asarray(get_scalar_constant_value(node.inputs[0])).astype(self.dtype)[()]


def cast(x, dtype):
    """``x`` converted to ``dtype`` (a no-op when it already has it)."""
    x = as_tensor_variable(x)
    if x.dtype == np.dtype(dtype).name:
        return x
    return Cast(dtype)(x)


def broadcast_shape_vars(shapes, static_shape) -> tuple:
    """Symbolic broadcast of input shapes (all of one ndim): per axis, the size that is not 1
    (not the largest: a size 0 broadcast against 1 is 0)."""
    switch, eq = ELEMWISE_OPS["switch"], ELEMWISE_OPS["eq"]
    out = []
    for axis, known in enumerate(static_shape):
        if known is not None:
            out.append(int64_const(known))
            continue
        dims = [as_tensor_variable(s[axis]) for s in shapes]
        dims = [d for d in dims if not _is_const(d, 1)] or dims
        dim = dims[0]
        for d in dims[1:]:
            dim = switch(eq(d, 1), dim, d)
        out.append(dim)
    return tuple(out)


def _is_const(v, value) -> bool:
    try:
        return get_scalar_constant_value(v) == value
    except NotScalarConstantError:
        return False
