"""Special functions of one argument as Numba scalar functions of float64 (digamma, trigamma,
erfcx, erfinv, erfcinv, i0, i1), and where Numba is decided on: ``EQGRAPH_NUMBA=0`` means it is
never imported.  ``special`` holds the rest and is what generated kernels import; see its
docstring for how these are written and tested."""

from __future__ import annotations

import os

import numpy as np

numba = None
if os.environ.get("EQGRAPH_NUMBA", "1") != "0":   # EQGRAPH_NUMBA=0: Numba is never imported
    try:
        import numba
    except ImportError:  # the NumPy kernels (kernels.py) run instead
        numba = None
if numba is None:   # these functions then run in Python, with Numba's error_model="numpy" math
    from eqgraph.exec.numba import python_math as math
else:
    import math


def _njit(fn):
    """``fn`` compiled by Numba where it is on; without it no kernel calls these functions."""
    return fn if numba is None else numba.njit(cache=True, error_model="numpy")(fn)

_PI = math.pi
_SQRT_PI = math.sqrt(math.pi)


# -- digamma and trigamma --------------------------------------------------------------------
#: the positive zero of digamma, as a double and the rest of it
_ROOT_HI = 1.4616321449683622
_ROOT_LO = 9.549995429965697e-17
#: digamma's Taylor coefficients at that zero: (-1)^(k+1) zeta(k+1, root), k = 1 ... 40 (the
#: series converges with ratio |d| / root, so 40 terms reach 1e-17 for |d| <= 0.54)
_ROOT_TAYLOR = np.array([
    0.9676722454476212, -0.4427631689835921, 0.258499760955651, -0.16394270544240652,
    0.10782405069126237, -0.07219956125645471, 0.04880428816414311, -0.03316112647484736,
    0.022597648232218104, -0.01542476590494896, 0.010538791616612175, -0.007204534386356869,
    0.004926781395729853, -0.003369801655439328, 0.002305126326734928, -0.0015769367714301972,
    0.0010788252019162967, -0.0007380709389960052, 0.000504953265834602, -0.0003454680251063077,
    0.00023635601564027053, -0.00016170622091974803, 0.0001106337276874741, -7.569179582195066e-05,
    5.178575795222081e-05, -3.5430070947659604e-05, 2.424006611860132e-05, -1.6584242271854135e-05,
    1.134638458466385e-05, -7.762817668462094e-06, 5.3110609208898636e-06, -3.6336507898010456e-06,
    2.486022733129538e-06, -1.7008538854332607e-06, 1.1636675363548843e-06, -7.96142543124197e-07,
    5.446941930669446e-07, -3.7266161283438227e-07, 2.549626552021554e-07, -1.7443695117727745e-07])
#: where the asymptotic series of digamma and trigamma take over from the recurrence: their
#: last terms kept are below 1e-17 of the result there
_ASYMPTOTIC_FROM = 12.0


@_njit
def _digamma_asymptotic(x):
    # log(x) - 1/(2x) - sum B_2k / (2k x^2k)
    r = 1.0 / (x * x)
    series = r * (1.0 / 12 - r * (1.0 / 120 - r * (1.0 / 252 - r * (1.0 / 240 - r * (
        1.0 / 132 - r * (691.0 / 32760 - r / 12.0))))))
    return math.log(x) - 0.5 / x - series


@_njit
def _digamma_taylor(x, shift):
    # psi(x + shift) for x + shift in [1, 2), by the Taylor series at the zero: the recurrence
    # from 12 down would cancel (psi(1) is psi(12) minus 2.9), losing digits; x - (root - shift)
    # is taken without rounding x + shift
    d = (x - (_ROOT_HI - shift)) - _ROOT_LO
    total = 0.0
    for k in range(_ROOT_TAYLOR.size - 1, -1, -1):
        total = total * d + _ROOT_TAYLOR[k]
    return total * d


@_njit
def _digamma_positive(x):
    if x < 1.0:
        return _digamma_taylor(x, 1.0) - 1.0 / x  # psi(x) = psi(x + 1) - 1/x, both negative
    if x >= _ASYMPTOTIC_FROM:
        return _digamma_asymptotic(x)
    n = np.floor(x) - 1.0
    y = x - n  # in [1, 2), exact
    total = 0.0
    k = n - 1.0
    while k >= 0.0:  # psi(y + n) = psi(y) + sum 1/(y + k), the small terms first
        total += 1.0 / (y + k)
        k -= 1.0
    return _digamma_taylor(y, 0.0) + total


@_njit
def _nearest_fraction(x):
    # x minus its nearest integer n, exactly (|x - n| <= 1/2 <= |x| or n = 0), for the reflections'
    # periodic terms: sin(pi x) and tan(pi x) of a large x would round pi x.  x + 0.5 may round up
    # to the next integer at a tie, which leaves r just below -1/2: as good for a period-1 term.
    # np.floor, not math.floor: that is an int64 in Numba, which overflows
    return x - np.floor(x + 0.5)


@_njit
def digamma(x):
    """psi(x), SciPy's psi: -inf at +0, +inf at -0, NaN at the negative integers and -inf."""
    if x == 0.0:
        return -math.copysign(math.inf, x)
    if x > 0.0:
        return math.inf if x == math.inf else _digamma_positive(x)
    if x != x or x == -math.inf:
        return math.nan
    fraction = _nearest_fraction(x)
    if fraction == 0.0:
        return math.nan
    return _digamma_positive(1.0 - x) - _pi_cot_pi(fraction)  # reflection


@_njit
def _pi_cot_pi(r):
    # pi cot(pi r) for |r| <= 1/2: near 1/2 as pi tan(pi (1/2 - |r|)), whose argument is exact,
    # so that the zero at 1/2 comes out 0 and not pi / tan(pi/2 rounded) = 2e-16
    if abs(r) <= 0.25:
        return _PI / math.tan(_PI * r)
    return math.copysign(_PI * math.tan(_PI * (0.5 - abs(r))), r)


@_njit
def _trigamma_asymptotic(x):
    # 1/x + 1/(2x^2) + sum B_2k / x^(2k+1)
    r = 1.0 / (x * x)
    series = r * (1.0 / 6 - r * (1.0 / 30 - r * (1.0 / 42 - r * (1.0 / 30 - r * (
        5.0 / 66 - r * (691.0 / 2730 - r * 7.0 / 6))))))
    return (1.0 + 0.5 / x + series) / x


@_njit
def _trigamma_positive(x):
    shift = 0.0
    while x < _ASYMPTOTIC_FROM:  # psi1(x) = psi1(x + 1) + 1/x^2
        shift += 1.0 / (x * x)
        x += 1.0
    return _trigamma_asymptotic(x) + shift


@_njit
def trigamma(x):
    """psi1(x), SciPy's polygamma(1, x): +inf at the poles (0, -0, the negative integers) and -inf."""
    if x > 0.0:
        return 0.0 if x == math.inf else _trigamma_positive(x)
    if x != x:
        return math.nan
    if x == -math.inf:
        return math.inf
    fraction = _nearest_fraction(x)
    if fraction == 0.0:
        return math.inf
    s = math.sin(_PI * fraction)
    return _PI * _PI / (s * s) - _trigamma_positive(1.0 - x)  # reflection


# -- erfcx, erfinv, erfcinv ------------------------------------------------------------------
#: above this, erfc(x) nears the subnormals and loses digits: erfcx's asymptotic series there,
#: whose last term kept is below 1e-17 from here on
_ERFCX_SERIES_FROM = 26.0


@_njit
def _exp_square(x):
    """exp(x * x) without the rounding of x * x, which exp would magnify by x * x: x = hi + lo
    with hi of 26 bits, so hi * hi is exact."""
    hi = _high_bits(x)
    lo = x - hi
    return math.exp(hi * hi) * math.exp(lo * (x + hi))


@_njit
def _high_bits(x):
    # Veltkamp's split: x rounded to its 26 leading bits
    c = 134217729.0 * x  # 2^27 + 1
    return c - (c - x)


@_njit
def _erfcx_series(x):
    # erfcx(x) = 1 / (x sqrt(pi)) (1 - t + 3 t^2 - 15 t^3 ...), t = 1 / (2 x^2)
    if x > 1e8:
        return (1.0 / _SQRT_PI) / x
    t = 0.5 / (x * x)
    series, term = 1.0, 1.0
    for k in range(1, 12):
        term *= -(2 * k - 1) * t
        series += term
    return series / (x * _SQRT_PI)


@_njit
def _erfcx_positive(x):
    if x >= _ERFCX_SERIES_FROM:
        return _erfcx_series(x)
    return _exp_square(x) * math.erfc(x)


@_njit
def erfcx(x):
    """exp(x^2) erfc(x), SciPy's erfcx: inf below -26.6, 0 at +inf."""
    if x != x:
        return math.nan
    if x >= 0.0:
        return _erfcx_positive(x)
    if x < -26.7:
        return math.inf
    # erfc(-x) = 2 - erfc(x); no cancellation: 2 exp(x^2) >= 2 > erfcx(-x)
    return 2.0 * _exp_square(x) - _erfcx_positive(-x)


@_njit
def _halley_erf(x, y):
    # steps on erf(x) = y (|y| <= 1/2, so erf(x) keeps the digits that matter): each step cubes the error
    for _ in range(4):
        u = (math.erf(x) - y) / (2.0 / _SQRT_PI * math.exp(-x * x))
        step = u / (1.0 + x * u)
        x -= step
        if abs(step) <= 1e-17 * abs(x):
            break
    return x


@_njit
def _erfinv_small(y):
    # |y| <= 1/2: the Maclaurin series' first four terms (1e-4 off at 1/2), then Halley steps
    c = 0.5 * _SQRT_PI * y
    c2 = c * c
    x = c * (1.0 + c2 * (1.0 / 3 + c2 * (7.0 / 30 + c2 * 127.0 / 630)))
    if abs(y) < 1e-9:  # the series' next term is below 1e-17 of x
        return x
    return _halley_erf(x, y)


#: below this, erfc(x) nears the subnormals: the asymptotic inverse (tensor/special.py's
#: erfcinv_tail, which the NumPy form takes there too)
_ERFCINV_TAIL_BELOW = 1e-300


@_njit
def _erfcinv_tail(q):
    # erfc's asymptotic form exp(-x^2) / (x sqrt(pi)) (1 - t + 3t^2 ...), t = 1 / (2x^2), solved
    # for x by fixed-point steps, each shrinking the error by about 1 / x^2
    log_q = math.log(q)
    x = math.sqrt(-log_q)
    for _ in range(8):
        t = 0.5 / (x * x)
        series = 1 - t * (1 - 3 * t * (1 - 5 * t * (1 - 7 * t * (1 - 9 * t * (1 - 11 * t * (1 - 13 * t))))))
        x = math.sqrt(-log_q - math.log(x * _SQRT_PI) + math.log(series))
    return x


@_njit
def _erfcinv_below_half(q):
    # 0 < q < 1/2: Winitzki's closed form (2e-3 off), then Halley steps on erfc(x) = q, whose
    # residual keeps q's digits (erf(x) - (1 - q) would lose them)
    if q < _ERFCINV_TAIL_BELOW:
        return _erfcinv_tail(q)
    a = 0.147
    log_term = math.log(q * (2.0 - q))
    b = 2.0 / (_PI * a) + 0.5 * log_term
    x = math.sqrt(math.sqrt(b * b - log_term / a) - b)
    for _ in range(6):
        u = (math.erfc(x) - q) / (-2.0 / _SQRT_PI * math.exp(-x * x))
        step = u / (1.0 + x * u)
        x -= step
        if abs(step) <= 1e-17 * x:
            break
    return x


@_njit
def erfinv(y):
    """The inverse of erf, SciPy's erfinv: +-inf at +-1, NaN outside [-1, 1]."""
    if not abs(y) <= 1.0:
        return math.nan
    if abs(y) <= 0.5:
        return _erfinv_small(y)
    if abs(y) == 1.0:
        return math.copysign(math.inf, y)
    return math.copysign(_erfcinv_below_half(1.0 - abs(y)), y)  # 1 - |y| is exact


@_njit
def erfcinv(q):
    """The inverse of erfc, SciPy's erfcinv with the finite tail special.erfcinv_smallest gives:
    inf at 0, -inf at 2, NaN outside [0, 2]."""
    if not (q >= 0.0 and q <= 2.0):
        return math.nan
    if q == 0.0:
        return math.inf
    if q == 2.0:
        return -math.inf
    if q > 1.5:
        return -_erfcinv_below_half(2.0 - q)  # erfc(-x) = 2 - erfc(x); 2 - q is exact
    if q >= 0.5:
        return -_erfinv_small(q - 1.0)  # exact; -0.0 at 1, as SciPy
    return _erfcinv_below_half(q)


# -- modified Bessel functions of orders 0 and 1 --------------------------------------------
#: up to here, the power series (terms all positive: no cancellation); above, the asymptotic
#: series, whose smallest term (about exp(-2x)) is below 1e-17 from here on
_BESSEL_SERIES_TO = 20.0


@_njit
def _bessel_series(x, order):
    # I_n(x) = (x/2)^n sum (x^2/4)^k / (k! (k + n)!), nested (1 + q/(1 (1+n)) (1 + q/(2 (2+n)) (...))):
    # summed from the smallest term, fewer roundings than adding each term to the sum; the
    # terms after 8 + 2x are below 1e-17 of the sum for x <= 20
    q = 0.25 * x * x
    total = 1.0
    for k in range(int(8.0 + 2.0 * x), 0, -1):
        total = 1.0 + total * q / (k * (k + order))
    return total * (0.5 * x if order == 1 else 1.0)


@_njit
def _bessel_asymptotic_scaled(x, order):
    # I_n(x) exp(-x) sqrt(2 pi x) ~ sum_k (-1)^k prod_{j<=k} (4n^2 - (2j - 1)^2) / (k! (8x)^k)
    mu = 4.0 * order * order
    term = 1.0
    total = 1.0
    for k in range(1, 40):
        term *= -(mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        total += term
        if abs(term) < 1e-17 * abs(total):
            break
    return total / math.sqrt(2.0 * _PI * x)


@_njit
def _bessel_i(x, order):
    ax = abs(x)
    if ax <= _BESSEL_SERIES_TO:
        value = _bessel_series(ax, order)
    elif ax > 750.0:  # I_n(x) overflows from 713.99 on; sqrt(2 pi x) would too, near 1e308
        value = math.inf
    else:  # exp(x) in two halves: it overflows before I_n(x) does
        half = math.exp(0.5 * ax)
        value = half * (_bessel_asymptotic_scaled(ax, order) * half)
    return -value if (order == 1 and x < 0.0) else value


@_njit
def i0(x):
    """The modified Bessel function I0, with inf at +-inf (special.i0_at_infinity)."""
    return math.nan if x != x else _bessel_i(x, 0)


@_njit
def i1(x):
    """The modified Bessel function I1 (odd), with +-inf at +-inf (special.i1_at_infinity)."""
    if x != x:
        return math.nan
    if x == 0.0:
        return x  # I1(-0) = -0
    return _bessel_i(x, 1)
