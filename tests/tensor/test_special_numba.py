"""The special functions' Numba forms (eqgraph/exec/numba/special.py): accuracy against SciPy over
wide ranges, tails included, with a bound stated per function; values where SciPy itself is off,
against high-precision references; and the forms running inside fused kernels and the whole-graph
Numba function, agreeing with the NumPy program."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.exec.numba import program as numba_program
from eqgraph.exec.numba import special as numba_special
from eqgraph.tensor.elemwise import SCALAR_OPS

numba = pytest.importorskip("numba")
if numba_kernels.numba is None:
    pytest.skip("Numba is turned off (EQGRAPH_NUMBA=0)", allow_module_level=True)
special = pytest.importorskip("scipy.special")


def _log_uniform(rng, lo, hi, n):
    return np.exp(rng.uniform(math.log(lo), math.log(hi), n))


def _positive(rng):
    return np.concatenate([_log_uniform(rng, 1e-300, 1e300, 3000), rng.uniform(0.01, 30, 3000)])


def _negative_away_from_poles(rng):
    # SciPy's reflection loses digits next to the poles of large negative arguments (see
    # test_values_where_scipy_is_off): up to 1000, and 1e-3 away from an integer
    x = -_log_uniform(rng, 1e-3, 1e3, 3000)
    return x[np.abs(x - np.round(x)) > 1e-3]


def _erfcx_arguments(rng):
    return np.concatenate([_positive(rng), -_log_uniform(rng, 1e-300, 26, 3000), rng.uniform(-26, 30, 3000)])


def _erfinv_arguments(rng):
    return np.concatenate([rng.uniform(-1, 1, 3000), _log_uniform(rng, 1e-300, 1, 3000),
                           -_log_uniform(rng, 1e-300, 1, 3000), 1 - _log_uniform(rng, 1e-16, 0.5, 3000)])


def _erfcinv_arguments(rng):
    return np.concatenate([rng.uniform(0, 2, 3000), _log_uniform(rng, 1e-300, 1, 3000),
                           2 - _log_uniform(rng, 1e-16, 1, 3000)])


def _bessel_arguments(rng):
    x = np.concatenate([_log_uniform(rng, 1e-300, 713, 3000), rng.uniform(-40, 40, 3000)])
    return np.concatenate([x, -x])


#: name -> (the Numba function, SciPy's, the arguments drawn, the largest error allowed relative to
#: max(|SciPy's value|, floor), floor). Digamma's reflection at negative arguments cancels near its
#: zeros there, SciPy's as ours (psi(-1.5733320102066544) is 0.00165467771583520413: ours is
#: 7e-17 off, SciPy's 4e-16), so its error is taken relative to 1 or more.
#: Measured maxima over these draws: digamma 4e-16 (positive) and 1e-15 (negative), trigamma 1.2e-15,
#: erfcx 5.7e-14 (where SciPy's is off by that, see below; 2e-15 elsewhere), erfinv 4.4e-16,
#: erfcinv 7.3e-16, i0 1.4e-15, i1 2.1e-15
CASES = {
    "digamma": (numba_special.digamma, special.psi, _positive, 2e-15, 0.0),
    "digamma_negative": (numba_special.digamma, special.psi, _negative_away_from_poles, 1e-13, 1.0),
    "trigamma": (numba_special.trigamma, lambda x: special.polygamma(1, x), _positive, 5e-15, 0.0),
    "trigamma_negative": (numba_special.trigamma, lambda x: special.polygamma(1, x),
                          _negative_away_from_poles, 5e-15, 0.0),
    "erfcx": (numba_special.erfcx, special.erfcx, _erfcx_arguments, 1e-13, 0.0),
    "erfinv": (numba_special.erfinv, special.erfinv, _erfinv_arguments, 2e-15, 0.0),
    "erfcinv": (numba_special.erfcinv, special.erfcinv, _erfcinv_arguments, 2e-15, 0.0),
    "i0": (numba_special.i0, special.i0, _bessel_arguments, 5e-15, 0.0),
    "i1": (numba_special.i1, special.i1, _bessel_arguments, 5e-15, 0.0),
}


@pytest.fixture(scope="module")
def vectorized():
    """Each Numba scalar function as a float64 ufunc, compiled once."""
    return {name: numba.vectorize(["float64(float64)"])(fn) for name, (fn, *_) in CASES.items()}


@pytest.mark.parametrize("name", list(CASES))
def test_agrees_with_scipy_within_the_stated_bound(name, vectorized):
    _, reference, draw, bound, floor = CASES[name]
    x = draw(np.random.default_rng(0))
    with np.errstate(all="ignore"):
        got, want = vectorized[name](x), reference(x)
    finite = np.isfinite(want) & (want != 0)
    np.testing.assert_array_equal(got[~finite], want[~finite])  # the same zeros, infinities and NaNs
    rel = np.abs(got[finite] - want[finite]) / np.maximum(np.abs(want[finite]), floor)
    worst = np.argmax(rel)
    assert rel[worst] <= bound, f"{name}({x[finite][worst]!r}) = {got[finite][worst]!r}, SciPy " \
                                f"{want[finite][worst]!r}: relative error {rel[worst]:.3g} > {bound}"


#: (function, argument, the value to 30 digits from mpmath), where SciPy's answer is off
REFERENCE = [
    # next to a pole of a large negative argument: SciPy's psi is off by 2.7e-12 there
    (numba_special.digamma, -408534.9999860635, -71741.1808032996789153676024168),
    (numba_special.erfcx, -22.85629729775865, 1.51688248874278417238148647846e227),  # SciPy: 5.7e-14 off
    (numba_special.erfcinv, 1.5e-323, 27.1931141262039695637027694114),  # SciPy: 27.1878
    (numba_special.erfcinv, 5e-324, 27.2132932108129488153138238647),  # SciPy: inf
    (numba_special.digamma, 1.6899199466310872, 0.200521202951848262232870978940),
    (numba_special.i1, 1.5, 0.981666428577907585652010907867),
]


@pytest.mark.parametrize(("fn", "x", "want"), REFERENCE)
def test_values_where_scipy_is_off(fn, x, want):
    assert fn(x) == pytest.approx(want, rel=4e-16)


@pytest.mark.parametrize(("fn", "x", "want"), [
    (numba_special.digamma, 0.0, -math.inf), (numba_special.digamma, -0.0, math.inf),
    (numba_special.digamma, -3.0, math.nan), (numba_special.digamma, -1e300, math.nan),
    (numba_special.digamma, -math.inf, math.nan), (numba_special.digamma, math.inf, math.inf),
    (numba_special.trigamma, -3.0, math.inf), (numba_special.trigamma, math.inf, 0.0),
    (numba_special.erfcx, -27.0, math.inf), (numba_special.erfcx, math.inf, 0.0),
    (numba_special.erfinv, 1.0, math.inf), (numba_special.erfinv, -1.0, -math.inf),
    (numba_special.erfinv, 1.5, math.nan), (numba_special.erfcinv, 0.0, math.inf),
    (numba_special.erfcinv, 2.0, -math.inf), (numba_special.erfcinv, -0.1, math.nan),
    (numba_special.i0, -math.inf, math.inf), (numba_special.i1, -math.inf, -math.inf),
    (numba_special.i0, 800.0, math.inf), (numba_special.i1, 1e308, math.inf),
])
def test_poles_ends_and_outside_the_domain(fn, x, want):
    got = fn(x)
    assert (math.isnan(got) and math.isnan(want)) or got == want


#: digamma next to its positive zero and at the ends of its polynomial pieces, to 30 digits from mpmath
DIGAMMA_REFERENCE = [
    (1.4616321449683622, -9.24126552172942751679235140986e-17),  # the double nearest the zero
    (1.4616321449683625, 1.22453746220040690313249748543e-16),
    (1.46163214496, -8.09196109081621374460712263058e-12),
    (0.4616321449683622, -2.16622696426076382532935926363),
    (0.5000000000000001, -1.96351002602142293156787383144),
    (1.25, -0.227453533376265408089530146097),
    (1.9999999999999998, 0.422784335098466996189357833909),
    (2.0, 0.422784335098467139393487909918),
    (3.9999999999999996, 1.25611766843180034668410909265),
    (11.999999999999998, 2.44266167997581186236962902234),
    (12.0, 2.44266167997581201673836525479),
]


@pytest.mark.parametrize(("x", "want"), DIGAMMA_REFERENCE)
def test_digamma_within_three_ulps_next_to_its_zero_and_at_its_pieces_ends(x, want):
    assert abs(numba_special.digamma(x) - want) <= 3 * np.spacing(abs(want))


def test_erfcinv_of_a_subnormal_is_the_asymptotic_inverse_in_numpy_too():
    # the NumPy form and the Numba form agree where SciPy's erfcinv is off
    y = np.array([1.5e-323, 1e-310, 5e-324])
    got = et.erfcinv.scalar.impl(np)(y)
    np.testing.assert_allclose(got, [27.1931141262039695637, 26.6448065593647647820, 27.2132932108129488153],
                               rtol=4e-16)


def test_each_numba_form_names_its_function_here():
    for name, fn in [("psi", "digamma"), ("tri_gamma", "trigamma"), ("erfcx", "erfcx"), ("erfinv", "erfinv"),
                     ("erfcinv", "erfcinv"), ("i0", "i0"), ("i1", "i1")]:
        assert SCALAR_OPS[name].numba == f"special.{fn}({{0}})"
        assert callable(getattr(numba_special, fn))
    assert SCALAR_OPS["polygamma"].numba == "special.polygamma({0}, {1})"
    for name in ("betainc_da", "betainc_db"):
        assert SCALAR_OPS[name].numba == f"special.{name}({{0}}, {{1}}, {{2}})"


# -- polygamma ---------------------------------------------------------------------------------------
def _polygamma_arguments(rng):
    # positive x over the whole range, and negative x 1e-3 away from the poles up to 1000
    return np.concatenate([_positive(rng), _negative_away_from_poles(rng)])


#: order -> the largest relative error against SciPy over _polygamma_arguments where SciPy's zeta keeps
#: its digits (zeta(n + 1, x) above 1e-290: below, SciPy's underflows, see
#: test_polygamma_where_scipys_zeta_is_off in test_special.py). Measured maxima over these draws: 1.1e-15
#: (n = 1, 3, 7), 1.6e-14 (n = 2, at x = -4.4958, against a floor of 1), 7.1e-15 (n = 30)
POLYGAMMA_BOUND = {1: 5e-15, 2: 5e-14, 3: 5e-15, 7: 5e-15, 30: 2e-14}


@pytest.mark.parametrize("n", sorted(POLYGAMMA_BOUND))
def test_polygamma_agrees_with_scipy_within_the_stated_bound(n):
    x = _polygamma_arguments(np.random.default_rng(n))
    ufunc = numba.vectorize(["float64(float64, float64)"])(numba_special.polygamma)
    with np.errstate(all="ignore"):
        got, want = ufunc(float(n), x), special.polygamma(n, x)
    checked = (np.abs(want) / math.gamma(n + 1) > 1e-290) & np.isfinite(want)
    # at negative x the reflection cancels near the zeros, SciPy's sum as ours (polygamma(2, -542.50000210)
    # is -4.1226043746899e-4: ours 1.5e-11 off, SciPy's 5e-13): the error there is taken relative to 1 or more
    floor = np.where(x < 0, 1.0, 0.0)[checked]
    rel = np.abs(got[checked] - want[checked]) / np.maximum(np.abs(want[checked]), floor)
    worst = np.argmax(rel)
    assert rel[worst] <= POLYGAMMA_BOUND[n], f"polygamma({n}, {x[checked][worst]!r}): relative error {rel[worst]:.3g}"
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    assert same[~np.isfinite(want)].all()  # the same poles and NaNs


def test_polygamma_of_a_far_negative_x_sums_no_terms_one_by_one():
    # zeta(s, q) at q = -1e15 + 0.25 by its reflection, not 1e15 terms; the nearest pole's terms dominate
    # -2 zeta(3, q) = -2 (zeta(3, 0.25) - zeta(3, 0.75) + zeta(3, 1 - q)), the last 5e-31
    got = numba_special.polygamma(2.0, -1e15 + 0.25)
    assert got == pytest.approx(special.polygamma(2, 0.25) - special.polygamma(2, 0.75), rel=1e-14)


# -- betainc's derivatives ---------------------------------------------------------------------------
def test_betaincs_derivatives_agree_with_finite_differences_of_scipys_betainc():
    """d I / da and d I / db by the differentiated continued fraction, against central differences of
    SciPy's betainc over a and b from 0.05 to 200 and x over (0, 1), both sides of the symmetry switch."""
    rng = np.random.default_rng(0)
    a, b = _log_uniform(rng, 0.05, 200, 2000), _log_uniform(rng, 0.05, 200, 2000)
    x = rng.uniform(0.01, 0.99, 2000)
    h = 1e-6 * np.maximum(a, b)
    for fn, want in ((numba_special.betainc_da, (special.betainc(a + h, b, x) - special.betainc(a - h, b, x)) / (2 * h)),
                     (numba_special.betainc_db, (special.betainc(a, b + h, x) - special.betainc(a, b - h, x)) / (2 * h))):
        got = numba.vectorize(["float64(float64, float64, float64)"])(fn)(a, b, x)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-8)


def _special_graph():
    x = et.dvector("x")
    u = et.sigmoid(x) * 2 - 1  # in (-1, 1)
    out = (et.psi(et.abs(x) + 0.5) + et.tri_gamma(x) + et.erfcx(x) + et.erfinv(u) + et.erfcinv(u + 1)
           + et.i0(x) + et.i1(x))
    return x, out


def _values():
    return np.array([0.3, -2.5, 1.4616321449683622, 3.0, -0.0, 25.0, -7.5, np.nan, np.inf, 1e-300])


def test_a_hot_fused_node_of_special_functions_runs_in_numba_and_agrees_with_numpy(tmp_path, monkeypatch):
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    x, out = _special_graph()
    f = eg.function([x], out, rulesets=[], compile="eager")
    g = eg.function([x], out, rulesets=[], fusion=False)
    values = _values()
    with np.errstate(all="ignore"):
        for _ in range(4):
            got = f(values)
        want = g(values)
    sources = [p.read_text() for p in tmp_path.glob("k_*.py")]
    assert any("special.digamma(" in s and numba_special.IMPORT in s for s in sources), "no kernel calls them"
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0, equal_nan=True)


def test_the_whole_graph_numba_function_includes_special_functions(monkeypatch):
    monkeypatch.setattr(numba_program, "SMALL_INPUTS", 10**9)
    monkeypatch.setattr(numba_program, "MIN_NODES", 1)
    x, out = _special_graph()
    f = eg.function([x], out, compile="eager")
    call = f.program.call
    assert hasattr(call, "whole_source") and "special.erfcx(" in call.whole_source
    values = _values()
    with np.errstate(all="ignore"):
        f(np.copy(values))
        whole = f(values)
        program = call.program(values)
    np.testing.assert_allclose(whole, program[0], rtol=1e-13, atol=0, equal_nan=True)


# -- the regularized incomplete gamma functions ----------------------------------------------
#: (a, x, P, Q) to 25 digits (mpmath): tiny a and x, a subnormal a, and large a, where SciPy's
#: gammainc and gammaincc are off (by 1.0000000000000238 at a = 1e-300, x = 1; 9e-7 at a = 989846)
GAMMA_REFERENCE = [
    (1.0, 1e-300, 1.000000000000000025059092e-300, 1.0),
    (0.5, 1.0, 0.8427007929497148693412206, 0.1572992070502851306587794),
    (1e-300, 0.7, 1.0, 3.737688432335091851369517e-301),
    (989846.0432843413, 984112.8509807026, 3.885511320921322381788032e-9, 0.9999999961144886790786776),
    (0.7, 1.5, 0.8662827433461525863655272, 0.1337172566538474136344728),
    (1e-05, 0.9, 0.9999973981360227907014519, 0.000002601863977209298548138142),
    (5e-324, 0.5, 1.0, 0.0),  # Q is 2.8e-324, which rounds to 0 or to the smallest subnormal
]


@pytest.mark.parametrize(("a", "x", "p", "q"), GAMMA_REFERENCE)
def test_incomplete_gamma_against_high_precision_values(a, x, p, q):
    assert numba_special.gammainc(a, x) == pytest.approx(p, rel=4e-15)
    assert numba_special.gammaincc(a, x) == pytest.approx(q, rel=4e-15, abs=5e-324)


def test_incomplete_gamma_agrees_with_scipy_where_scipy_is_accurate():
    # a from 1 to 100 and x from 1e-3 to 300 (SciPy loses digits at a < 1 and above 1e5). Deep in
    # the tails, below 1e-100, a log(x) - x is hundreds and its rounding, ours and SciPy's, moves
    # the value by up to 2e-13 (against 30-digit values ours were within 5.2e-14 there)
    rng = np.random.default_rng(0)
    a = np.exp(rng.uniform(0, math.log(100), 3000))
    x = np.exp(rng.uniform(math.log(1e-3), math.log(300), 3000))
    pairs = ((numba_special.gammainc, special.gammainc), (numba_special.gammaincc, special.gammaincc))
    for fn, reference in pairs:
        got = numba.vectorize(["float64(float64, float64)"])(fn)(a, x)
        want = reference(a, x)
        body, tail = want > 1e-100, (want > 1e-290) & (want <= 1e-100)
        np.testing.assert_allclose(got[body], want[body], rtol=1e-13, atol=0)
        np.testing.assert_allclose(got[tail], want[tail], rtol=5e-13, atol=0)


@pytest.mark.parametrize(("a", "x", "p", "q"), [
    (0.0, 0.0, math.nan, math.nan), (0.0, 1.0, 1.0, 0.0), (-1.0, 1.0, math.nan, math.nan),
    (1.0, -1.0, math.nan, math.nan), (math.inf, 1.0, 0.0, 1.0), (1.0, math.inf, 1.0, 0.0),
    (math.inf, math.inf, math.nan, math.nan), (math.nan, 1.0, math.nan, math.nan), (2.0, 0.0, 0.0, 1.0),
    (1e308, 700.0, 0.0, 1.0), (1e12, 1e12 + 1e6, 0.8413447460685429, 0.15865525393145705),
])
def test_incomplete_gamma_at_its_ends(a, x, p, q):
    for fn, want in ((numba_special.gammainc, p), (numba_special.gammaincc, q)):
        got = fn(a, x)
        assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, rel=1e-6, abs=0)


def test_a_new_process_loads_a_cached_kernel_of_special_functions_and_gets_its_values(tmp_path):
    # the kernel's Numba cache holds compiled copies of the functions it calls: they must load
    # in another process and compute the same values
    script = (
        "import numpy as np, eqgraph as eg, eqgraph.tensor as et\n"
        "from eqgraph.exec.numba import kernels as numba_kernels\n"
        "from eqgraph.exec.composite import Composite\n"
        "x = et.dvector('x')\n"
        "f = eg.function([x], et.psi(x) * 2 + et.erfcx(x), rulesets=[])\n"
        "[node] = [n for n in f.fgraph.toposort() if isinstance(n.op, Composite)]\n"
        "k = numba_kernels.load_kernel(numba_kernels.kernel_source(node.op, node))\n"
        "v = np.array([0.25, 1.4616321449683622, 30.0])\n"
        "storage = f.stages.program.storage_map\n"
        "args = [v if i is f.fgraph.inputs[0] else storage[i][0] for i in node.inputs]\n"
        "got = k.ufunc(*args)\n"
        "assert np.allclose(got, f(v), rtol=1e-14, atol=0), (got, f(v))\n"
        "print('hit' if k.cache_hit else 'miss')\n")
    env = {**os.environ, "EQGRAPH_KERNEL_CACHE": str(tmp_path),
           "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                           timeout=300) for _ in range(2)]
    assert [r.stdout.strip() for r in runs] == ["miss", "hit"], [r.stderr[-800:] for r in runs]
