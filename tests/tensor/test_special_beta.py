"""beta and betaln (eqgraph/exec/numba/special_beta.py), the NumPy and Numba forms of their rows:
against mpmath over wide ranges, tails included, within a stated bound; SciPy's answers at the poles,
ends and negative arguments; and the values where SciPy's are off."""

import math

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.numba import special as numba_special
from eqgraph.tensor.elemwise import SCALAR_OPS

mp = pytest.importorskip("mpmath")
special = pytest.importorskip("scipy.special")

EPS = np.finfo(np.float64).eps


def _log_uniform(rng, lo, hi, n):
    return np.exp(rng.uniform(math.log(lo), math.log(hi), n))


def _draws(rng, n):
    """(a, b) over the whole positive range, and where each branch of the functions is taken."""
    ranges = [(1e-300, 1e300, 1e-300, 1e300), (1e-3, 1e4, 1e-3, 1e4), (10, 1e7, 10, 1e7), (1e-6, 20, 1e-6, 20),
              (10, 1e300, 1e-3, 10), (1e-320, 1e-290, 1e-6, 1e6)]
    pairs = [(_log_uniform(rng, a0, a1, n), _log_uniform(rng, b0, b1, n)) for a0, a1, b0, b1 in ranges]
    pairs.append((rng.uniform(0.5, 3, n), rng.uniform(0.5, 3, n)))
    return np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])


def _mp_beta(a, b):
    # mpmath's beta at a precision that keeps the digits of gamma(a + b) against gamma(a)
    with mp.workdps(30 + int(abs(math.log10(max(a, b)))) + int(abs(math.log10(min(a, b))))):
        return mp.beta(mp.mpf(a), mp.mpf(b))


@pytest.fixture(scope="module")
def references():
    a, b = _draws(np.random.default_rng(0), 60)
    values = [_mp_beta(x, y) for x, y in zip(a, b)]
    return a, b, np.array([float(mp.log(v)) for v in values]), np.array([float(v) for v in values])


def _error_in_eps(got, want, floor):
    return np.abs(got - want) / np.maximum(np.abs(want), floor) / EPS


#: name -> (the largest error allowed, in units of eps relative to max(|value|, floor), floor). betaln
#: is measured against max(|betaln|, 1): near its zeros (beta = 1) a relative error is no measure of a
#: log; beta is exp(betaln) where a + b is above gamma's overflow, as SciPy's, so its error grows with
#: |betaln| there (up to 745 eps); where the gamma quotient computes it, 27 eps.
#: Measured maxima over these draws: betaln 3.7 eps, beta 324 eps (SciPy's: 1.2e5 and 3.5e7); over 7,000
#: other draws of the same ranges, 8.3 and 610
BOUNDS = {"betaln": (16.0, 1.0), "beta": (800.0, 0.0)}


@pytest.mark.parametrize("name", sorted(BOUNDS))
@pytest.mark.parametrize("form", ["numpy", "numba"])
def test_agrees_with_mpmath_within_the_stated_bound(references, name, form):
    a, b, want_log, want = references
    want = want_log if name == "betaln" else want
    fn = SCALAR_OPS[name].impl(np) if form == "numpy" else np.vectorize(getattr(numba_special, name))
    with np.errstate(all="ignore"):
        got = fn(a, b)
    finite = np.isfinite(want) & (want != 0)
    np.testing.assert_array_equal(got[~finite], want[~finite])  # the same overflows and underflows
    bound, floor = BOUNDS[name]
    err = _error_in_eps(got[finite], want[finite], floor)
    worst = np.argmax(err)
    assert err[worst] <= bound, f"{name}({a[finite][worst]!r}, {b[finite][worst]!r}) = {got[finite][worst]!r}, " \
                                f"mpmath {want[finite][worst]!r}: {err[worst]:.3g} eps > {bound}"


SPECIAL_POINTS = [-math.inf, -1e10, -200.5, -3.0, -2.5, -2.0, -1.5, -1.0, -0.5, -0.0, 0.0, 1e-300, 0.5, 1.0, 1.5,
                  2.0, 3.0, 7.25, 150.0, math.inf, math.nan]


@pytest.mark.parametrize("name", ["beta", "betaln"])
def test_scipys_answers_at_poles_ends_and_negative_arguments(name):
    # negative arguments cancel in both (log-gammas of large negative arguments): 1e-12 of each other
    fn = getattr(numba_special, name)
    for a in SPECIAL_POINTS:
        for b in SPECIAL_POINTS:
            got, want = fn(a, b), getattr(special, name)(a, b)
            assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, rel=1e-12), (a, b, got, want)


#: (function, a, b, the value to 30 digits from mpmath), where SciPy's answer is off
REFERENCE = [
    ("betaln", 1e-320, 1.0, 736.827240890973895828208289286),  # SciPy: inf
    ("betaln", 1e308, 1e308, -1.38629436111989061883446424292e308),  # SciPy: NaN
    ("betaln", 1e6, 0.5, -6.33539021105743728880225548449),  # SciPy: 1.5e-10 off
    ("beta", 1e6, 0.5, 0.00177245407246226132891040044011),  # SciPy: 9.6e-10 off
    ("beta", 1e-300, 1e6, 1e300),  # 1 / b + ...: SciPy 8.5e-12 off
]


@pytest.mark.parametrize(("name", "a", "b", "want"), REFERENCE)
def test_values_where_scipy_is_off(name, a, b, want):
    assert getattr(numba_special, name)(a, b) == pytest.approx(want, rel=4 * EPS)
    assert SCALAR_OPS[name].impl(np)(np.array([a]), np.array([b]))[0] == pytest.approx(want, rel=4 * EPS)


def test_beta_and_betaln_run_in_the_whole_numba_function_and_agree_with_numpy(monkeypatch):
    numba_program = pytest.importorskip("eqgraph.exec.numba.program")
    if numba_special.numba is None:
        pytest.skip("Numba is turned off (EQGRAPH_NUMBA=0)")
    monkeypatch.setattr(numba_program, "SMALL_INPUTS", 10**9)
    monkeypatch.setattr(numba_program, "MIN_NODES", 1)
    a, b = et.dvector("a"), et.dvector("b")
    f = eg.function([a, b], [et.beta(a, b) * 2.0 + 1.0, et.betaln(a, b) * 3.0], compile="eager")
    source = getattr(f.program.call, "whole_source", "")
    assert "special.beta(" in source and "special.betaln(" in source
    x, y = np.array([0.5, 3.0, 200.0, 1e6, 1e-320]), np.array([2.0, 0.25, 300.0, 1.5, 1.0])
    with np.errstate(all="ignore"):  # beta(1e-320, 1) overflows
        f(x, y)
        got = f(x, y)
        want = f.program.call.program(x, y)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
