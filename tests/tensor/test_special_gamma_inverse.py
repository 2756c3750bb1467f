"""gammaincinv and gammainccinv (eqgraph/exec/numba/special.py: Newton steps on log P or log Q, eqgraph's
own incomplete gamma functions), the NumPy and Numba forms of their rows: against SciPy over wide
ranges, tails included, within a stated bound; SciPy's answers at the ends; the values where SciPy is
off, against mpmath; and the round trip through P and Q."""

import math

import numpy as np
import pytest

from eqgraph.exec.numba import special as numba_special
from eqgraph.tensor.elemwise import SCALAR_OPS

special = pytest.importorskip("scipy.special")

EPS = np.finfo(np.float64).eps


def _log_uniform(rng, lo, hi, n):
    return np.exp(rng.uniform(math.log(lo), math.log(hi), n))


def _draws(rng, n=500):
    a = np.concatenate([_log_uniform(rng, 1e-3, 1e4, n), _log_uniform(rng, 1e-3, 1e4, n),
                        _log_uniform(rng, 0.1, 100, n), rng.uniform(0.5, 30, n)])
    p = np.concatenate([rng.uniform(0, 1, n), _log_uniform(rng, 1e-300, 0.5, n),
                        1 - _log_uniform(rng, 1e-16, 0.5, n), rng.uniform(0, 1, n)])
    return a, p


#: the largest relative error against SciPy, in eps over min(a, 1): x's relative error is P's over
#: d log P / d log x, which is a where x is small, so a small a magnifies both forms' rounding (SciPy's
#: as ours: at a = 0.001, x = 2.5e-277, ours is 7e-15 off mpmath's root, SciPy's 1e-12). Measured
#: maxima over 16,000 draws: 435 (gammaincinv, at a = 1.18 and p = 8.5e-278, where ours and SciPy's
#: are 4.7e-14 and 5e-14 off the root) and 52 (gammainccinv)
BOUND = 1024


@pytest.mark.parametrize("name", ["gammaincinv", "gammainccinv"])
@pytest.mark.parametrize("form", ["numpy", "numba"])
def test_agrees_with_scipy_within_the_stated_bound(name, form):
    a, p = _draws(np.random.default_rng(0))
    fn = SCALAR_OPS[name].impl(np) if form == "numpy" else np.vectorize(getattr(numba_special, name))
    with np.errstate(all="ignore"):
        got, want = fn(a, p), getattr(special, name)(a, p)
    finite = np.isfinite(want) & (want > 0)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    err = np.abs(got[finite] - want[finite]) / want[finite] * np.minimum(a[finite], 1.0) / EPS
    worst = np.argmax(err)
    assert err[worst] <= BOUND, f"{name}({a[finite][worst]!r}, {p[finite][worst]!r}) = {got[finite][worst]!r}, " \
                                f"SciPy {want[finite][worst]!r}: {err[worst]:.3g} eps"


@pytest.mark.parametrize(("name", "direct"), [("gammaincinv", numba_special.gammainc),
                                              ("gammainccinv", numba_special.gammaincc)])
def test_the_round_trip_through_p_and_q(name, direct):
    rng = np.random.default_rng(1)
    for a, p in zip(_log_uniform(rng, 0.1, 1e3, 200), _log_uniform(rng, 1e-200, 0.9, 200)):
        x = getattr(numba_special, name)(a, p)
        assert direct(a, x) == pytest.approx(p, rel=64 * EPS * max(1.0, x)), (a, p, x)


#: where SciPy's answer is not the function's: 0 at a = 0 with p outside [0, 1] or p near 1 (NaN at
#: p = 0.5), 0 at a = 1e-300 with p = -0.1; NaN is the answer outside the domain and at a = 0 inside
SCIPY_OFF = {("gammaincinv", -0.0, 1.5), ("gammaincinv", 0.0, 1.0 - 1e-16), ("gammaincinv", 1e-300, -0.1),
             ("gammainccinv", -0.0, -0.1), ("gammainccinv", 0.0, 1e-310), ("gammainccinv", 1e-300, 1.5)}


#: (name, a, p) -> the root to 30 digits from mpmath, where SciPy's is off: Q(1e-300, SciPy's root) is
#: 1e-310 (1 - 9.7e-7)
REFERENCE = {("gammainccinv", 1e-300, 1e-310): 19.9841727655405669466754263069}


@pytest.mark.parametrize("name", ["gammaincinv", "gammainccinv"])
def test_scipys_answers_at_the_ends(name):
    for a in [-1.0, -0.0, 0.0, 1e-300, 0.5, 1.0, 2.5, 1e300, math.inf, math.nan]:
        for p in [-0.1, 0.0, 1e-310, 0.3, 0.5, 1.0 - 1e-16, 1.0, 1.5, math.nan]:
            got, want = getattr(numba_special, name)(a, p), getattr(special, name)(a, p)
            if (name, a, p) in SCIPY_OFF:
                assert math.isnan(got), (a, p, got)
                continue
            if (name, a, p) in REFERENCE:
                assert got == pytest.approx(REFERENCE[name, a, p], rel=4 * EPS)
                continue
            assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, rel=1e-13), (a, p, got, want)


def test_a_subnormal_a_gives_0_as_a_tiny_one_does():
    # x = (p gamma(1 + a))^(1 / a) underflows for a tiny a; SciPy gives NaN at a subnormal a
    assert numba_special.gammaincinv(5e-324, 0.3) == 0.0 == numba_special.gammaincinv(1e-300, 0.3)
    assert numba_special.gammainccinv(5e-324, 0.3) == 0.0
    assert numba_special.gammainccinv(5e-324, 1e-300) == 0.0  # Q = a E1(x) = 1e-300 where x underflows


@pytest.mark.parametrize("a", [0.1, 1.0, 2.5, 30.0, 1e5])
def test_at_a_subnormal_p_or_q_p_or_q_of_the_root_is_near_it(a):
    # the root is not one x: P and Q round to 5e-324 over a range of x; they come within a few
    # subnormal steps of it (or x underflows: 1e-3230 at a = 0.1)
    x = numba_special.gammaincinv(a, 5e-324)
    assert x == 0.0 or 0 < numba_special.gammainc(a, x) <= 2e-323
    assert 0 <= numba_special.gammaincc(a, numba_special.gammainccinv(a, 5e-324)) <= 2e-323


def test_the_numba_forms_are_named_by_the_rows():
    assert SCALAR_OPS["gammaincinv"].numba == "special.gammaincinv({0}, {1})"
    assert SCALAR_OPS["gammainccinv"].numba == "special.gammainccinv({0}, {1})"
