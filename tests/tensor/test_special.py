"""The special functions of the registry (gammaln, psi, erfc, ...) against SciPy over wide ranges,
tails included, their output dtypes (PyTensor's), their gradients against finite differences, and
their forms without SciPy."""

import math

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.tensor import special_functions
from eqgraph.tensor.elemwise import SCALAR_OPS

sp = pytest.importorskip("scipy.special")
# the NumPy and SciPy references are evaluated at poles, infinities and NaN on purpose
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
NO_RULES = {"rulesets": []}

# poles, signed zeros, subnormals, huge and tiny values, negative non-integers
TAILS = np.array([0.0, -0.0, 5e-324, -5e-324, 1e-310, 1e-300, 1e-20, 0.5, 1.0, 2.0, 2.5, 10.0, 171.5, 172.0,
                  1e10, 1e300, -0.5, -1.0, -2.0, -2.5, -2.457024738220800, -10.5, -170.5, -1e10,
                  math.inf, -math.inf, math.nan])
UNIT = np.array([-1.0, -0.999999, -0.5, -1e-300, -0.0, 0.0, 5e-324, 1e-20, 0.3, 0.5 + 1e-12, 0.65, 0.999999, 1.0,
                 1.5, 2.0, 2.5, math.nan])
SCIPY = {  # op -> (SciPy's function, the values it is compared on)
    "gammaln": (sp.gammaln, TAILS), "psi": (sp.psi, TAILS), "tri_gamma": (lambda x: sp.polygamma(1, x), TAILS),
    "erfc": (sp.erfc, TAILS), "erfcx": (sp.erfcx, TAILS), "erfinv": (sp.erfinv, UNIT),
    "erfcinv": (sp.erfcinv, UNIT), "logit": (sp.logit, UNIT), "gamma": (sp.gamma, TAILS),
    "i0": (sp.i0, TAILS), "i1": (sp.i1, TAILS),
}
# the two-argument ones on every pair of these: shape and order parameters, tails, and the signs
PAIRS = np.array([0.0, 5e-324, 1e-300, 0.1, 0.5, 1.0, 2.5, 30.0, 1e5, 1e300, -0.5, -2.5, math.inf, math.nan])
SCIPY_BINARY = {
    "betaln": sp.betaln, "beta": sp.beta, "ive": sp.ive, "gammainc": sp.gammainc, "gammaincc": sp.gammaincc,
    "gammaincinv": sp.gammaincinv, "gammainccinv": sp.gammainccinv,
}


def _tiny_gammaln(x):
    return -np.log(np.abs(x))


def _where_scipy_is_right(name, x, want):
    """SciPy's answers, but the limits where SciPy is wrong (the tests below)."""
    if name == "gammaln":  # SciPy overflows below the normal floats, where log|gamma(x)| is -log|x|
        return np.where((x != 0) & (np.abs(x) < 1e-300), _tiny_gammaln(x), want)
    if name in ("i0", "i1"):  # SciPy: NaN at +-inf
        return np.where(np.isinf(x), np.abs(x) if name == "i0" else x, want)
    if name == "erfcinv":  # SciPy: inf at the smallest subnormal
        return np.where(x == 5e-324, 27.21329321081295, want)
    return want


def _same(got, want, ulps=4):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    close = (got == want) | (np.isnan(got) & np.isnan(want))
    return close | (np.abs(got - want) <= ulps * np.spacing(np.abs(want)))


def _run(name, *values):
    ins = [et.TensorType(np.asarray(v).dtype.name, (None,) * np.ndim(v))(f"x{i}") for i, v in enumerate(values)]
    return eg.function(ins, et.ELEMWISE_OPS[name](*ins))(*values)


@pytest.mark.parametrize("name", sorted(SCIPY))
def test_agrees_with_scipy_tails_included(name):
    fn, values = SCIPY[name]
    with np.errstate(all="ignore"):
        want = fn(values)
    want = _where_scipy_is_right(name, values, want)
    got = _run(name, values)
    bad = ~_same(got, want)
    assert not bad.any(), list(zip(values[bad], got[bad], want[bad]))


@pytest.mark.parametrize("name", sorted(SCIPY_BINARY))
def test_two_argument_ones_agree_with_scipy(name):
    a, b = np.meshgrid(PAIRS, np.r_[PAIRS, 0.3, 0.9, 1.0 - 1e-12])
    with np.errstate(all="ignore"):
        want = SCIPY_BINARY[name](a, b)
    got = _run(name, a, b)
    if name in ("gammainc", "gammaincc"):  # eqgraph's own form: within 5e-14 where SciPy is right
        bad = ~_same(got, _incomplete_gamma_where_scipy_is_right(name, a, want)) & ~np.isclose(
            got, want, rtol=5e-14, atol=1e-300)
    elif name in ("gammaincinv", "gammainccinv"):  # eqgraph's own form: within test_special_gamma_inverse.py's
        # bound of SciPy's; at a subnormal a, 0 (as at a = 1e-300), where SciPy gives NaN
        bound = 1024 * np.finfo(float).eps / np.minimum(np.where(a > 0, a, 1.0), 1.0)
        bad = ~_same(got, want) & ~(np.abs(got - want) <= bound * np.abs(want))
        bad &= ~((a > 0) & (a < 2.3e-308) & np.isnan(want) & (got == 0))
        # NaN where SciPy gives 0 outside the domain or at a = 0 inside; a subnormal p or q is no one
        # root (P and Q round to it over a range of x): test_special_gamma_inverse.py checks those
        bad &= ~(np.isnan(got) & (want == 0) & ((a == 0) | (b < 0) | (b > 1)))
        bad &= ~((b > 0) & (b < 2.3e-308))
    elif name in ("beta", "betaln"):  # eqgraph's own form: where it differs from SciPy, mpmath decides
        bad = ~_same(got, want)
        bad[bad] = [not _beta_agrees_with_mpmath(name, x, y, g) for x, y, g in zip(a[bad], b[bad], got[bad])]
    else:
        bad = ~_same(got, want)
    assert not bad.any(), list(zip(a[bad], b[bad], got[bad], want[bad]))
    assert _run(name, np.ones((2, 1), "float32"), np.ones(3, "float32")).dtype == np.float32


def _beta_agrees_with_mpmath(name, a, b, got):
    """``got`` within test_special_beta.py's bound of mpmath's beta or log|beta| at (a, b); at an infinite
    a or b and a positive other, beta's limit 0 (SciPy: NaN at a tiny or huge other)."""
    if math.isinf(a) or math.isinf(b):
        return min(a, b) > 0 and got == (-math.inf if name == "betaln" else 0.0)
    mp = pytest.importorskip("mpmath")
    with mp.workdps(40 + int(abs(math.log10(abs(a)))) + int(abs(math.log10(abs(b))))):
        value = mp.beta(mp.mpf(a), mp.mpf(b))
        want = float(mp.log(abs(value)) if name == "betaln" else value)
    bound, floor = (16, 1.0) if name == "betaln" else (800, 0.0)
    return got == want or abs(got - want) <= bound * np.finfo(float).eps * max(abs(want), floor)


def _incomplete_gamma_where_scipy_is_right(name, a, want):
    """SciPy's P and Q, but where they are off: above 1 (P at a = 1e-300 is 1.0000000000000238) and at a
    subnormal a (P 0 where it is 1, as a = 0 gives)."""
    subnormal = (a > 0) & (a < 2.3e-308) & ~np.isnan(want)
    return np.where(subnormal, 1.0 if name == "gammainc" else 0.0, np.minimum(want, 1.0))


def test_incomplete_gamma_where_scipy_is_off():
    # mpmath's values (40 digits)
    a = np.array([5e-324, 1e-300, 1.0, 0.5, 1e-300])
    x = np.array([0.5, 1.0, 1e-300, 0.5, 30.0])
    np.testing.assert_allclose(_run("gammainc", a, x), [1.0, 1.0, 1e-300, 0.6826894921370859, 1.0], rtol=4e-16)
    np.testing.assert_allclose(_run("gammaincc", a[3:], x[3:]), [0.3173105078629141, 3.02155201e-315],
                               rtol=4e-16, atol=1e-323)


def test_logdiffexp_is_stable():
    a = np.array([1000.0, 0.0, -1000.0, 1.0, 2.0, 1e-300, 0.0, math.inf])
    b = np.array([999.0, -1e-20, -1001.0, 1.0, -math.inf, 0.0, -800.0, 0.0])
    want = np.array([1000 + math.log(-math.expm1(-1.0)), math.log(1e-20), -1000 + math.log(-math.expm1(-1.0)),
                     -math.inf, 2.0, math.log(1e-300), 0.0, math.inf])
    assert np.allclose(_run("logdiffexp", a, b), want, rtol=1e-15, atol=0)
    assert _run("logdiffexp", np.float32([2.0]), np.float32([1.0])).dtype == np.float32


def test_where_scipy_is_wrong_the_answer_is_the_limit():
    # SciPy gives NaN for i0 and i1 at +-inf, and inf for erfcinv at the smallest subnormal (CUDA's
    # erfcinv: 27.21329321081295, the asymptotic inverse of erfc here too)
    x = np.array([math.inf, -math.inf])
    assert np.array_equal(_run("i0", x), [math.inf, math.inf])
    assert np.array_equal(_run("i1", x), [math.inf, -math.inf])
    assert _run("erfcinv", np.array([5e-324]))[0] == 27.21329321081295
    assert _run("erfcinv", np.array([0.0]))[0] == math.inf


def test_erfcinvs_tail_agrees_with_scipy_above_the_smallest_subnormal():
    y = np.array([1e-323, 1e-320, 1e-310, 1e-300])
    assert np.allclose(special_functions.erfcinv_tail(y), sp.erfcinv(y), rtol=4e-16, atol=0)


def test_gammaln_of_subnormals_is_minus_log():
    # SciPy's gammaln computes gamma(x), which overflows once 1/x does (|x| < 5.6e-309): it gave
    # inf where the answer is 744.44 at 5e-324
    x = np.array([5e-324, -5e-324, 1e-310, 1e-300])
    assert np.allclose(_run("gammaln", x), -np.log(np.abs(x)), rtol=1e-15, atol=0)


@pytest.mark.parametrize("name", sorted(SCIPY))
@pytest.mark.parametrize("dtype, out", [("float32", "float32"), ("float64", "float64"), ("int8", "float32"),
                                        ("int16", "float32"), ("int32", "float64"), ("int64", "float64"),
                                        ("bool", "float32")])
def test_output_dtypes_are_pytensors(name, dtype, out):
    x = et.TensorType(dtype, (2, 3))("x")
    y = et.ELEMWISE_OPS[name](x)
    assert y.dtype == out and y.type.shape == (2, 3)
    value = np.ones((2, 3), dtype)
    got = eg.function([x], y, **NO_RULES)(value)
    assert got.dtype == out and got.shape == (2, 3)


@pytest.mark.parametrize("name", sorted(SCIPY_BINARY) + ["betainc", "betainc_da", "betainc_db"])
@pytest.mark.parametrize("dtype, out", [("int8", "float32"), ("bool", "float32"), ("int32", "float64"),
                                        ("float32", "float32")])
def test_output_dtypes_of_several_arguments_are_pytensors(name, dtype, out):
    nin = SCALAR_OPS[name].nin
    ins = [et.TensorType(dtype, (2, None))(f"x{i}") for i in range(nin)]
    y = et.ELEMWISE_OPS[name](*ins)
    assert y.dtype == out and y.type.shape[0] == 2
    got = eg.function(ins, y, **NO_RULES)(*[np.ones((2, 3), dtype)] * nin)
    assert got.dtype == out and got.shape == (2, 3)


def test_float32_values_are_scipys_rounded():
    x = np.linspace(0.05, 0.95, 37, dtype="float32")
    for name in ("gammaln", "psi", "erfc", "erfcx", "erfinv", "logit", "gamma", "tri_gamma"):
        fn = SCIPY[name][0]
        got = _run(name, x)
        assert got.dtype == np.float32
        assert np.allclose(got, fn(x.astype(np.float64)).astype(np.float32), rtol=4e-7, atol=0), name


def test_xlogx_and_xlogy0_are_zero_where_x_is():
    x = np.array([0.0, -0.0, 0.5, 2.0, 1e-300])
    assert np.array_equal(_run("xlogx", x), np.where(x == 0, 0.0, x * np.log(x)))
    y = np.array([np.nan, 0.0, 3.0, 0.5, 2.0])
    got = _run("xlogy0", x, y)
    assert np.array_equal(got, np.where(x == 0, 0.0, x * np.log(y)))  # PyTensor's: 0 even at y = NaN
    assert _run("xlogy0", np.zeros((2, 1)), np.ones(3)).shape == (2, 3)


# -- gradients -------------------------------------------------------------------------------------
GRADIENT_AT = {
    "gammaln": [0.3, 1.5, 7.0, -2.5], "psi": [0.3, 1.5, 7.0, -2.5], "tri_gamma": [0.3, 1.5, 7.0, -2.5],
    "erfc": [-2.0, 0.1, 1.5],
    "erfcx": [-1.0, 0.5, 5.0], "erfinv": [-0.9, 0.1, 0.5], "erfcinv": [0.1, 1.0, 1.9],
    "logit": [0.1, 0.5, 0.9], "xlogx": [0.1, 1.0, 3.0], "gamma": [0.3, 1.5, 4.0, -2.5],
    "i0": [-2.0, 0.5, 3.0], "i1": [-2.0, 0.5, 3.0],
}
KNOWN = {  # PyTensor's derivatives
    "gammaln": sp.psi, "psi": lambda x: sp.polygamma(1, x),
    "erfc": lambda x: -2 / np.sqrt(np.pi) * np.exp(-x * x),
    "erfinv": lambda x: np.sqrt(np.pi) / 2 * np.exp(sp.erfinv(x) ** 2), "i0": sp.i1,
}


@pytest.mark.parametrize("name", sorted(GRADIENT_AT))
def test_gradient_agrees_with_finite_differences(name):
    values = np.array(GRADIENT_AT[name])
    x = et.TensorType("float64", (None,))("x")
    got = eg.function([x], eg.grad(et.sum(et.ELEMWISE_OPS[name](x)), x))(values)
    f, h = SCALAR_OPS[name].impl(np), 1e-6
    assert np.allclose(got, (f(values + h) - f(values - h)) / (2 * h), rtol=1e-6), got
    if name in KNOWN:
        assert np.allclose(got, KNOWN[name](values), rtol=1e-12)


def test_xlogy0_gradient_in_both_inputs():
    x, y = (et.TensorType("float64", (None,))(n) for n in "xy")
    a, b = np.array([0.5, 2.0]), np.array([0.3, 4.0])
    gx, gy = eg.function([x, y], eg.grad(et.sum(et.xlogy0(x, y)), [x, y]))(a, b)
    assert np.allclose(gx, np.log(b)) and np.allclose(gy, a / b)


def test_i1s_gradient_at_zero_is_its_limit():
    x = et.TensorType("float64", (None,))("x")
    assert eg.function([x], eg.grad(et.sum(et.i1(x)), x))(np.array([0.0, -0.0]))[0] == 0.5


@pytest.mark.parametrize("name", ["gammainc", "gammaincc", "gammaincinv", "gammainccinv", "ive"])
def test_gradient_in_the_second_argument_only(name):
    """PyTensor's derivative in x; in the shape (order) parameter it is not implemented: asking for
    it is an error naming the op, not a zero."""
    k, x = (et.TensorType("float64", (None,))(n) for n in "kx")
    a, b = np.array([0.7, 2.5]), np.array([0.3, 0.6])
    f, h = SCALAR_OPS[name].impl(np), 1e-6
    got = eg.function([k, x], eg.grad(et.sum(et.ELEMWISE_OPS[name](k, x)), x))(a, b)
    assert np.allclose(got, (f(a, b + h) - f(a, b - h)) / (2 * h), rtol=1e-6)
    with pytest.raises(eg.NullTypeGradError, match=f"not implemented: the gradient of {name} with respect to input 0"):
        eg.grad(et.sum(et.ELEMWISE_OPS[name](k, x)), k)


def test_tri_gammas_gradient_is_polygamma_of_order_two():
    x = et.TensorType("float64", (None,))("x")
    values = np.array([0.3, 1.5, 7.0, -2.5])
    got = eg.function([x], eg.grad(et.sum(et.tri_gamma(x)), x))(values)
    np.testing.assert_allclose(got, sp.polygamma(2, values), rtol=1e-14)


# -- polygamma ---------------------------------------------------------------------------------------
def _polygamma(n, x):
    ns, xs = (et.TensorType(np.asarray(v).dtype.name, (None,))(name) for v, name in ((n, "n"), (x, "x")))
    return eg.function([ns, xs], et.polygamma(ns, xs), **NO_RULES)(n, x)


def test_polygamma_agrees_with_scipy_where_scipy_is_accurate():
    # orders 0 to 6 at moderate x of both signs (off the poles), where SciPy's zeta keeps its digits
    rng = np.random.default_rng(0)
    x = np.concatenate([np.exp(rng.uniform(math.log(1e-3), math.log(1e3), 400)), rng.uniform(-20, 20, 400)])
    x = x[np.abs(x - np.round(x)) > 1e-3]
    for n in range(7):
        got, want = _polygamma(np.full(x.shape, n), x), sp.polygamma(n, x)
        np.testing.assert_allclose(got, want, rtol=2e-13 if n else 1e-13, atol=0, err_msg=f"n = {n}")


#: (n, x, polygamma(n, x) to 20 digits from mpmath) where SciPy's is off: its zeta underflows for large x
POLYGAMMA_REFERENCE = [
    (2, 1.3684775075901817e+161, -5.339796084888901878e-323),  # SciPy: 9% off (a subnormal)
    (3, 1e100, 1.9999999999999999046e-300),
    (100, 1454.276460367526, -5.2499351192357515436e-161),  # SciPy: 5e-5 off
    (1, -0.0010926218157964469, 837647.15739814580626),  # next to the pole at 0, from below
]


@pytest.mark.parametrize(("n", "x", "want"), POLYGAMMA_REFERENCE)
def test_polygamma_where_scipys_zeta_is_off(n, x, want):
    got = _polygamma(np.array([n]), np.array([x]))[0]
    assert got == pytest.approx(want, rel=1e-15, abs=1e-323)


def test_polygamma_at_its_ends_as_scipy():
    n = np.array([0, 1, 2, 2, 2, 2, 3, 2, 2, 1, 2])
    x = np.array([0.0, -3.0, 0.0, -3.0, math.inf, -math.inf, -math.inf, math.nan, 1e-300, 5e-324, 1e300])
    with np.errstate(all="ignore"):
        want = sp.polygamma(n, x)
    got = _polygamma(n, x)
    assert np.array_equal(got, want, equal_nan=True) and np.array_equal(np.signbit(got), np.signbit(want))
    assert np.isnan(_polygamma(np.array([-1, -2]), np.array([2.5, 2.5]))).all()  # SciPy's NaN too
    # n! overflows above 170: NaN, not a value summed over n terms (SciPy: inf at 0.5, NaN at 1e3)
    assert np.isnan(_polygamma(np.array([171, 2**62]), np.array([0.5, 1e3]))).all()


@pytest.mark.parametrize(("x_dtype", "out"), [("float32", "float32"), ("float64", "float64"), ("int8", "float32"),
                                              ("int64", "float64"), ("bool", "float32")])
def test_polygammas_dtype_is_pytensors(x_dtype, out):
    n = et.TensorType("int8", (3,))("n")
    x = et.TensorType(x_dtype, (3,))("x")
    y = et.polygamma(n, x)
    assert y.dtype == out and y.type.shape == (3,)
    got = eg.function([n, x], y, **NO_RULES)(np.array([1, 2, 3], "int8"), np.ones(3, x_dtype))
    assert got.dtype == out
    np.testing.assert_allclose(got, sp.polygamma([1, 2, 3], 1.0), rtol=4e-7 if out == "float32" else 1e-15)


def test_polygammas_order_must_be_an_integer():
    x = et.dvector("x")
    with pytest.raises(TypeError, match="polygamma.*order n must be discrete.*integer dtype.*got float64"):
        et.polygamma(x, x)


def test_polygamma_of_a_complex_x_is_refused_in_pytensor_words():
    with pytest.raises(TypeError, match="polygamma.*complex128.*complex argument not supported"):
        et.polygamma(0, et.zscalar("x"))


def test_polygammas_gradient_is_the_next_order_and_undefined_in_the_order():
    n, x = et.lvector("n"), et.dvector("x")
    points = np.array([0.05, 0.7, 3.0, 40.0, -2.5])
    for order in (0, 1, 3):
        eg.testing.verify_grad(lambda x, order=order: et.polygamma(np.full(5, order), x), [points],
                               rng=np.random.default_rng(0))
    got = eg.function([n, x], eg.grad(et.sum(et.polygamma(n, x)), x))(np.full(5, 2), points)
    np.testing.assert_allclose(got, sp.polygamma(3, points), rtol=1e-13)
    with pytest.raises(eg.NullTypeGradError, match="undefined: the gradient of polygamma with respect to input 0"):
        eg.grad(et.sum(et.polygamma(n, x)), n)


# -- betainc ---------------------------------------------------------------------------------------
def _betainc(name, a, b, x):
    ins = [et.TensorType(np.asarray(v).dtype.name, (None,) * np.ndim(v))(k) for v, k in zip((a, b, x), "abx")]
    return eg.function(ins, et.ELEMWISE_OPS[name](*ins), **NO_RULES)(a, b, x)


def test_betainc_agrees_with_scipy_tails_included():
    a, b, x = np.meshgrid(PAIRS, PAIRS, np.r_[0.0, 1e-300, 0.3, 0.5, 0.9, 1 - 1e-12, 1.0, -0.1, 1.1, math.nan])
    with np.errstate(all="ignore"):
        want = sp.betainc(a, b, x)
    bad = ~_same(_betainc("betainc", a, b, x), want)
    assert not bad.any(), list(zip(a[bad], b[bad], x[bad]))
    assert _betainc("betainc", np.ones(2, "float32"), np.ones(2, "int8"), np.full(2, 0.5, "float32")).dtype == np.float32
    assert _betainc("betainc", np.ones(2, "int8"), np.ones(2, "int16"), np.ones(2, "int8")).dtype == np.float32
    assert _betainc("betainc", np.ones(2, "int32"), np.ones(2, "int8"), np.ones(2, "int8")).dtype == np.float64


#: (a, b, x) where the gradient is checked: small and large parameters, x near both ends, both sides
#: of the continued fraction's switch at x = (a + 1) / (a + b + 2)
BETAINC_AT = [(0.5, 0.5, 0.3), (5.0, 3.0, 0.2), (5.0, 3.0, 0.9), (0.01, 50.0, 1e-3), (30.0, 2.0, 0.999),
              (200.0, 300.0, 0.41), (1e-3, 1e-3, 0.5), (2.5, 0.7, 0.01), (40.0, 40.0, 0.5)]


def test_betaincs_gradient_agrees_with_finite_differences():
    a, b, x = (np.array(v) for v in zip(*BETAINC_AT))
    eg.testing.verify_grad(et.betainc, [a, b, x], rng=np.random.default_rng(0), eps=1e-7, rel_tol=1e-5)


def test_betaincs_derivatives_in_a_and_b_against_high_precision_values():
    # d/da and d/db of I_x(a, b) from mpmath (40 digits, its numerical derivative)
    cases = [(0.5, 0.5, 0.3, -0.64281148115728385, 0.46874458391550545),
             (5.0, 3.0, 0.2, -0.0061368939268921183, 0.0042620913091364355),
             (30.0, 2.0, 0.9, -0.013626301353315623, 0.16975306554520203)]
    for a, b, x, da, db in cases:
        assert _betainc("betainc_da", np.array([a]), np.array([b]), np.array([x]))[0] == pytest.approx(da, rel=1e-9)
        assert _betainc("betainc_db", np.array([a]), np.array([b]), np.array([x]))[0] == pytest.approx(db, rel=1e-9)


def test_betaincs_derivatives_are_zero_at_the_ends_and_nan_outside():
    a, b = np.full(4, 2.0), np.full(4, 3.0)
    x = np.array([0.0, 1.0, -0.5, math.nan])
    for name in ("betainc_da", "betainc_db"):
        np.testing.assert_array_equal(_betainc(name, a, b, x), [0.0, 0.0, math.nan, math.nan])


def test_betaincs_second_derivatives_are_an_error_naming_the_op():
    a, b, x = et.dvectors("a", "b", "x")
    da = eg.grad(et.sum(et.betainc(a, b, x)), a)
    with pytest.raises(eg.NullTypeGradError, match="betainc_da.*second derivatives"):
        eg.grad(et.sum(da), a)


# -- without SciPy ---------------------------------------------------------------------------------
@pytest.fixture
def no_scipy(monkeypatch):
    monkeypatch.setattr(special_functions, "scipy_special", lambda name: None)


@pytest.mark.parametrize("name", ["gammaln", "gamma", "erfc", "logit", "i0"])
def test_fallbacks_without_scipy_agree_with_scipy(no_scipy, name):
    fn, values = SCIPY[name]
    with np.errstate(all="ignore"):
        want = fn(values)
    want = _where_scipy_is_right(name, values, want)
    got = SCALAR_OPS[name].impl(np)(values)
    # Python's math.lgamma is a few ulps off near lgamma's zeros (-2.457...: 2e-15 absolute)
    bad = ~(_same(got, want) | (np.abs(got - want) < 1e-14))
    assert not bad.any(), list(zip(values[bad], got[bad], want[bad]))
    assert SCALAR_OPS[name].impl(np)(np.float32([0.5])).dtype == np.float32


def test_beta_and_betaln_need_no_scipy(no_scipy):
    # eqgraph's own forms, against mpmath's values
    a, b = np.array([0.5, 2.0, 30.0]), np.array([0.3, 7.5, 0.1])
    np.testing.assert_allclose(SCALAR_OPS["betaln"].impl(np)(a, b),
                               [1.516103259342938, -4.1549691840385355, 1.9140995543009733], rtol=4e-15)
    np.testing.assert_allclose(SCALAR_OPS["beta"].impl(np)(a, b),
                               [4.5544430879621722, 0.015686274509803922, 6.7808302777576695], rtol=32 * 2.2e-16)


def test_polygamma_and_the_incomplete_gammas_need_no_scipy(no_scipy):
    # eqgraph's own forms, against mpmath's values
    got = SCALAR_OPS["polygamma"].impl(np)(np.array([2, 3]), np.array([0.5, 2.5]))
    np.testing.assert_allclose(got, [-16.828796644234319996, 0.22390584881725205126], rtol=1e-14)
    a, x = np.array([0.5, 0.7]), np.array([1.0, 1.5])
    np.testing.assert_allclose(SCALAR_OPS["gammainc"].impl(np)(a, x), [0.8427007929497148693, 0.8662827433461525864],
                               rtol=4e-15)
    np.testing.assert_allclose(SCALAR_OPS["gammaincc"].impl(np)(a, x), [0.1572992070502851307, 0.1337172566538474136],
                               rtol=4e-15)


@pytest.mark.parametrize("name", ["psi", "tri_gamma", "erfcx", "erfinv", "erfcinv", "i1", "ive", "betainc"])
def test_without_scipy_an_op_with_no_fallback_says_what_to_install(no_scipy, name):
    with pytest.raises(ImportError, match=f"{name}.*pip install scipy"):
        SCALAR_OPS[name].impl(np)(*[np.array([0.5])] * SCALAR_OPS[name].nin)


def test_python_math_follows_the_c_library_where_pythons_raises():
    # without Numba (EQGRAPH_NUMBA=0) eqgraph's own special functions run in Python on this math
    from eqgraph.exec.numba import python_math as pm
    assert pm.log(0.0) == -math.inf and math.isnan(pm.log(-1.0)) and pm.log1p(-1.0) == -math.inf
    assert pm.exp(1e3) == math.inf and pm.pow(0.0, -1.0) == math.inf and math.isnan(pm.sqrt(-1.0))
    assert pm.lgamma(0.0) == math.inf and pm.lgamma(-2.0) == math.inf and math.isnan(pm.gamma(-1.0))
    assert pm.gamma(0.0) == math.inf and pm.gamma(-0.0) == -math.inf and pm.gamma(200.0) == math.inf
    numba = pytest.importorskip("numba")
    numba_lgamma = numba.njit(lambda x: math.lgamma(x))
    xs = [0.5, 1.5, 2.5, 7.25, 1e-3]
    assert [pm.lgamma(x) for x in xs] == [numba_lgamma(x) for x in xs]   # the C library's, not Python's own


def test_own_functions_without_numba_at_underflow_and_on_scalars():
    # regression: without Numba, gammainc(30, 5e-324) raised "math domain error" (log of an
    # underflowed x / a), and a 0-d input failed in astype
    import subprocess
    import sys
    code = ("import numpy as np, eqgraph as eg, eqgraph.tensor as et\n"
            "a, x = et.dscalar('a'), et.dscalar('x')\n"
            "f = eg.function([a, x], [et.gammainc(a, x), et.gammaincc(a, x), et.polygamma(3, x)])\n"
            "print(*[float(v) for v in f(30.0, 5e-324)])\n")
    out = subprocess.run([sys.executable, "-c", code], env={**__import__("os").environ, "EQGRAPH_NUMBA": "0"},
                         capture_output=True, text=True, check=True).stdout.split()
    assert [float(v) for v in out[:2]] == [0.0, 1.0] and math.isinf(float(out[2]))
