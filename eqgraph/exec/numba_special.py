"""Special functions as Numba scalar functions of float64, for the ``numba=`` forms of
tensor/elemwise.py's rows that libm lacks (digamma, trigamma, polygamma, erfcx, erfinv, erfcinv,
i0, i1, the regularized incomplete gamma functions, the derivatives of the incomplete beta function).

Each is written from the mathematics (recurrences, asymptotic and power series, continued
fractions, Halley steps on a function libm has), and gives SciPy's answers at the special
points (poles, 0, +-inf, NaN), since a fused Numba kernel must compute what the NumPy program
computes.  The generated kernels import this module as ``special`` (``IMPORT``); the accuracy
each function reaches against SciPy is pinned by tests/tensor/test_special_numba.py.  Where
SciPy's answers are off over whole ranges (polygamma at large x, the incomplete gamma functions
at small and large ``a``), the NumPy form runs these functions too (tensor/special_functions.py's
``Own``), so that a fused group computes what the NumPy program does.
"""

from __future__ import annotations

import hashlib
import math
import os
from pathlib import Path

import numpy as np

numba = None
if os.environ.get("EQGRAPH_NUMBA", "1") != "0":   # EQGRAPH_NUMBA=0: Numba is never imported
    try:
        import numba
    except ImportError:  # the NumPy kernels (kernels.py) run instead
        numba = None


def _njit(fn):
    """``fn`` compiled by Numba where it is on; without it no kernel calls these functions."""
    return fn if numba is None else numba.njit(cache=True, error_model="numpy")(fn)

#: the line a generated kernel imports this module with.  A kernel cached by Numba keeps a
#: compiled copy of the functions it calls, so the line names a hash of this file: a change
#: here is a new kernel, not a stale one
IMPORT = ("from eqgraph.exec import numba_special as special  # "
          + hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16])

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


# -- the regularized incomplete gamma functions P(a, x) and Q(a, x) ---------------------------
_EULER = 0.5772156649015329
#: zeta(2), zeta(3), ... zeta(25): the Maclaurin series of log(gamma(1 + a))
_ZETA = np.array([
    1.6449340668482264, 1.2020569031595942, 1.0823232337111381, 1.03692775514337, 1.0173430619844492,
    1.008349277381923, 1.0040773561979444, 1.0020083928260821, 1.000994575127818, 1.0004941886041194,
    1.000246086553308, 1.0001227133475785, 1.0000612481350588, 1.000030588236307, 1.0000152822594086,
    1.0000076371976379, 1.000003817293265, 1.0000019082127165, 1.0000009539620338, 1.0000004769329869,
    1.0000002384505027, 1.000000119219926, 1.000000059608189, 1.0000000298035034])
#: the most steps of the series and the continued fraction: they need about 10 sqrt(a) below
#: _TEMME_FROM; the cap ends a NaN's loop
_MAX_STEPS = 1_000_000
#: above this, P and Q by Temme's uniform expansion: the series and the continued fraction take
#: about 10 sqrt(a) steps near x = a, and the expansion's first omitted term is O(a^-3/2) there
_TEMME_FROM = 1e8


@_njit
def _lgamma1p(a):
    # log(gamma(1 + a)) for 0 <= a < 1, keeping a's digits, which 1 + a would round away
    if a >= 0.2:
        return math.lgamma(1.0 + a)
    total = 0.0
    for k in range(_ZETA.size - 1, -1, -1):  # -euler a + sum_k>=2 (-1)^k zeta(k) a^k / k
        total = total * -a + _ZETA[k] / (k + 2)
    return a * (a * total - _EULER)


@_njit
def _log1p_minus(d):
    # log1p(d) - d, by its series where the two cancel
    if abs(d) >= 0.25:
        return math.log1p(d) - d
    total = 0.0
    for k in range(40, 1, -1):  # sum_k>=2 (-1)^(k+1) d^k / k
        total = total * -d + 1.0 / k
    return -d * d * total


@_njit
def _stirling_rest(a):
    # log(gamma(a)) - ((a - 1/2) log(a) - a + log(2 pi) / 2), for a >= 10
    r = 1.0 / (a * a)
    return (1.0 / 12 - r * (1.0 / 360 - r * (1.0 / 1260 - r * (1.0 / 1680 - r * (
        1.0 / 1188 - r * (691.0 / 360360 - r / 156.0)))))) / a


@_njit
def _gamma_front(a, x):
    """x^a exp(-x) / gamma(a), the factor of both P's series and Q's continued fraction."""
    if a < 10.0:
        if x < 700.0:
            return math.pow(x, a) * math.exp(-x) / math.gamma(a)
        return math.exp(a * math.log(x) - x - math.lgamma(a))
    # a log(x) - x - log(gamma(a)) = a (log1p(d) - d) + log(a / (2 pi)) / 2 - rest(a), d = (x - a) / a;
    # far from a, log(x / a) keeps the digits of a small x / a, which 1 + d would round away
    if 0.75 * a <= x <= 1.25 * a:
        t = a * _log1p_minus((x - a) / a)
    else:
        t = a * math.log(x / a) - (x - a)
    return math.exp(t - _stirling_rest(a)) * math.sqrt(a / (2.0 * _PI))


@_njit
def _gamma_p_series(a, x):
    # P = x^a e^-x / gamma(a) sum_n x^n / (a (a+1) ... (a+n))
    term = 1.0 / a
    total = term
    n = 1.0
    while term > 1e-17 * total and n < _MAX_STEPS:
        term *= x / (a + n)
        total += term
        n += 1.0
    return _gamma_front(a, x) * total


@_njit
def _gamma_q_fraction(a, x):
    # Q = x^a e^-x / gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...))),
    # by the modified Lentz method
    tiny = 1e-300
    b = x + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    n = 1.0
    while True:
        an = -n * (n - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        n += 1.0
        if not abs(delta - 1.0) >= 1e-16 or n > _MAX_STEPS:
            break
    return _gamma_front(a, x) * h


@_njit
def _gamma_q_small(a, x):
    # Q for a < 1 and x < 1.1, where 1 - P would cancel (Q is about a E1(x) for small a):
    # Q = 1 - x^a / gamma(1 + a) - x^a / gamma(a) sum_n>=1 (-1)^n x^n / (n! (a + n))
    u = a * math.log(x) - _lgamma1p(a)
    total = 0.0
    term = 1.0
    n = 1.0
    while True:
        term *= -x / n
        total += term / (a + n)
        n += 1.0
        if not abs(term) > 1e-17 * abs(total) or n > _MAX_STEPS:
            break
    return -math.expm1(u) - a * math.exp(u) * total


@_njit
def _gamma_temme(a, x):
    """(P, Q) by Temme's uniform expansion, first two terms: Q = erfc(eta sqrt(a/2)) / 2 + R,
    R = exp(-a eta^2 / 2) / sqrt(2 pi a) c0(eta), c0 = 1 / (lambda - 1) - 1 / eta."""
    d = (x - a) / a  # lambda - 1
    eta = math.copysign(math.sqrt(-2.0 * _log1p_minus(d)), d)
    if eta == 0.0:
        c0 = -1.0 / 3
    else:
        c0 = 1.0 / d - 1.0 / eta
    r = math.exp(-0.5 * a * eta * eta) / math.sqrt(2.0 * _PI * a) * c0
    z = eta * math.sqrt(0.5 * a)
    return 0.5 * math.erfc(-z) - r, 0.5 * math.erfc(z) + r


@_njit
def _gamma_p_q(a, x):
    """(P(a, x), Q(a, x)), SciPy's gammainc and gammaincc: NaN outside a >= 0, x >= 0 and at
    a = x = 0 or a = x = inf; (1, 0) at a = 0."""
    if not (a >= 0.0 and x >= 0.0) or (a == 0.0 and x == 0.0) or (a == math.inf and x == math.inf):
        return math.nan, math.nan
    if a == 0.0 or x == math.inf:
        return 1.0, 0.0
    if x == 0.0 or a == math.inf:
        return 0.0, 1.0
    if a > _TEMME_FROM and abs(x - a) < 0.1 * a:
        return _gamma_temme(a, x)
    if a < 1.0:
        if x < 1.1:  # 1 - Q where Q is small: P's series starts at 1 / a, inf for a subnormal a
            q = _gamma_q_small(a, x)
            return (1.0 - q if q < 0.5 else _gamma_p_series(a, x)), q
        q = _gamma_q_fraction(a, x)
        return 1.0 - q, q
    if x < a + 1.0:
        p = _gamma_p_series(a, x)
        return p, 1.0 - p
    q = _gamma_q_fraction(a, x)
    return 1.0 - q, q


@_njit
def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    return _gamma_p_q(a, x)[0]


@_njit
def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x)."""
    return _gamma_p_q(a, x)[1]


# -- polygamma -------------------------------------------------------------------------------
#: Bernoulli numbers B_2k / (2k)!, k = 1 ... 12: the Euler-Maclaurin terms of the Hurwitz zeta
_BERNOULLI_OVER_FACTORIAL = np.array([
    1.0 / 12, -1.0 / 720, 1.0 / 30240, -1.0 / 1209600, 1.0 / 47900160, -691.0 / 1307674368000,
    1.0 / 74724249600, -3617.0 / 10670622842880000, 43867.0 / 5109094217170944000,
    -174611.0 / 802857662698291200000, 77683.0 / 14101100039391805440000,
    -236364091.0 / 1693824136731743669452800000])


@_njit
def _scaled_power(c, q, s):
    # c q^-s in two halves, so that neither q^-s nor c q^-s underflows (or overflows) on the way
    # to a representable result: n! zeta(n + 1, q) is 1e-161 at n = 100, q = 1454, and q^-101 1e-319
    half = 0.5 * s
    return (c * math.pow(q, -half)) * math.pow(q, half - s)


@_njit
def _zeta_positive(s, q, c):
    # c zeta(s, q) = c sum_k>=0 (q + k)^-s for q > 0 and s >= 2: the first terms summed until q + k
    # reaches max(s, 12), where the Euler-Maclaurin terms shrink by about ((s + 2k) / (2 pi q))^2
    # each, then the Euler-Maclaurin tail
    head = 0.0
    while q < max(s, 12.0):
        head += _scaled_power(c, q, s)
        q += 1.0
    power = _scaled_power(c, q, s - 1.0)  # c q^(1 - s)
    tail = power / (s - 1.0) + 0.5 * power / q
    rising = s  # s (s + 1) ... (s + 2k - 2)
    term_power = power / (q * q)  # c q^(-s - 2k + 1)
    for k in range(_BERNOULLI_OVER_FACTORIAL.size):
        term = _BERNOULLI_OVER_FACTORIAL[k] * rising * term_power
        tail += term
        if abs(term) <= 1e-17 * abs(tail):
            break
        rising *= (s + 2 * k + 1) * (s + 2 * k + 2)
        term_power /= q * q
    return head + tail


@_njit
def _hurwitz_zeta(s, q, c):
    """c zeta(s, q) for integer s >= 2 (SciPy's zeta times c): inf at the poles q = 0, -1, -2, ...;
    at negative q, with f = q - floor(q), the terms (q + k)^-s for q + k < 0 are (-1)^s zeta(s, 1 - f)
    minus (-1)^s zeta(s, 1 - q), so that no term is summed one by one however far below 0 q is."""
    if q > 0.0:
        return _zeta_positive(s, q, c)
    if q != q:
        return math.nan
    f = q - np.floor(q)
    if f == 0.0:
        return math.inf
    # 1 - f, exactly: the pole's term (q + k)^-s of the k nearest is zeta(s, 1 - f)'s first, and
    # q + 1 rounds away the digits of a q near 0 (f itself is exact unless f > 1/2, away from 0)
    r = (np.floor(q) + 1.0) - q
    sign = 1.0 if s % 2.0 == 0.0 else -1.0
    return _zeta_positive(s, f, c) + sign * (_zeta_positive(s, r, c) - _zeta_positive(s, 1.0 - q, c))


#: the largest order whose n! is finite: the head of the Hurwitz zeta sums up to n terms
_MAX_ORDER = 170.0


@_njit
def polygamma(n, x):
    """The n-th derivative of digamma, SciPy's polygamma: (-1)^(n+1) n! zeta(n + 1, x); NaN where n
    is negative or not an integer, and where n! overflows (n > 170: SciPy's is inf or NaN there)."""
    if n == 0.0:
        return digamma(x)
    if not (n > 0.0 and n == np.floor(n) and n <= _MAX_ORDER) or x != x:
        return math.nan
    if x == math.inf:
        return -0.0 if n % 2.0 == 0.0 else 0.0
    if x == -math.inf:
        return -math.inf if n % 2.0 == 0.0 else math.inf
    sign = -1.0 if n % 2.0 == 0.0 else 1.0
    return sign * _hurwitz_zeta(n + 1.0, x, math.gamma(n + 1.0))


# -- log|beta|, as Cephes' lbeta computes it: the prefactor of betainc's derivatives ------------------
# (no row's form: SciPy's betaln, the NumPy form, differs from it by up to 6e-11 where lgamma's cancel)
#: above this, gamma overflows: log-gamma differences instead
_MAX_GAMMA = 171.624376956302725
#: above this, a > 1e6 |b|, log|beta| by its expansion in 1 / a (lgamma(a + b) - lgamma(a) would cancel)
_ASYMPTOTIC_RATIO = 1e6


@_njit
def _lbeta_asymptotic(a, b):
    # log|beta(a, b)| for a >> |b|: lgamma(b) - b log(a) + b(1 - b) / (2a) + ...
    r = math.lgamma(b) - b * math.log(a)
    r += b * (1.0 - b) / (2.0 * a)
    r += b * (1.0 - b) * (1.0 - 2.0 * b) / (12.0 * a * a)
    r += -b * (1.0 - b) * (1.0 - b) * b / (12.0 * a * a * a)
    return r


@_njit
def _beta_large(a, b):
    # log|beta(a, b)| by log-gamma, where gamma overflows
    y = math.lgamma(b) - math.lgamma(a + b)
    return math.lgamma(a) + y


@_njit
def _beta_by_gamma(a, b):
    # gamma(a) gamma(b) / gamma(a + b), the quotient of the two nearer in size first
    y, ga, gb = math.gamma(a + b), math.gamma(a), math.gamma(b)
    if y == 0.0:
        return math.inf
    if abs(abs(ga) - abs(y)) > abs(abs(gb) - abs(y)):
        return (gb / y) * ga
    return (ga / y) * gb


@_njit
def _negative_integer(x):
    return x <= 0.0 and x == np.floor(x)


@_njit
def betaln(a, b):
    """log|beta(a, b)|, by Cephes' method: inf at the poles, the limit where 1 - a - b is a positive integer."""
    if a != a or b != b:
        return math.nan
    if _negative_integer(a):
        a, b = b, a
    if _negative_integer(b):
        if a == np.floor(a) and 1.0 - a - b > 0.0:
            return _betaln_regular(1.0 - a - b, a)
        return math.inf
    return _betaln_regular(a, b)


@_njit
def _betaln_regular(a, b):
    if abs(a) < abs(b):
        a, b = b, a
    if abs(a) > _ASYMPTOTIC_RATIO * abs(b) and a > _ASYMPTOTIC_RATIO:
        return _lbeta_asymptotic(a, b)
    if abs(a + b) > _MAX_GAMMA or abs(a) > _MAX_GAMMA or abs(b) > _MAX_GAMMA:
        return _beta_large(a, b)
    return math.log(abs(_beta_by_gamma(a, b)))


# -- the regularized incomplete beta function I_x(a, b) and its derivatives in a and b --------------
#: the most steps of the continued fraction: it needs about sqrt(max(a, b)) of them; the cap ends a
#: NaN's loop
_BETA_MAX_STEPS = 100_000


@_njit
def _betainc_front(a, b, x):
    """x^a (1 - x)^b / beta(a, b). For a and b of 10 or more, in Stirling's form about the peak
    x0 = a / (a + b): a log(x / x0) + b log((1 - x) / (1 - x0)) is a (log1p(u) - u) + b (log1p(v) - v)
    with u = (x - x0) / x0, v = (x0 - x) / (1 - x0), whose linear terms cancel exactly, and the
    gamma functions' Stirling remainders; else by logarithms and betaln."""
    if a < 10.0 or b < 10.0:
        return math.exp(a * math.log(x) + b * math.log1p(-x) - betaln(a, b))
    c = a + b
    dx = x - a / c
    t = a * _log1p_minus(dx * c / a) + b * _log1p_minus(-dx * c / b)
    t += _stirling_rest(c) - _stirling_rest(a) - _stirling_rest(b)
    return math.exp(t) * math.sqrt(a * b / (2.0 * _PI * c))


@_njit
def _betainc_fraction(a, b, x):
    """(F, dF/da, dF/db): I_x(a, b) = front / a * F, F = 1 / (1 + d1 / (1 + d2 / (1 + ...))) with
    d_2m+1 = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)) and d_2m = m (b - m) x / ((a + 2m - 1)(a + 2m)),
    by the forward recurrence of its convergents A_n / B_n, differentiated term by term in a and b
    (rescaled by B_n at each step). Converges fast for x < (a + 1) / (a + b + 2)."""
    a_prev, a_cur, b_prev, b_cur = 0.0, 1.0, 1.0, 1.0  # A_0 / B_0 = 0, A_1 / B_1 = 1
    da_prev, da_cur, db_prev, db_cur = 0.0, 0.0, 0.0, 0.0  # d/da of A and B
    ea_prev, ea_cur, eb_prev, eb_cur = 0.0, 0.0, 0.0, 0.0  # d/db of A and B
    f, fa, fb = 1.0, 0.0, 0.0
    for n in range(1, _BETA_MAX_STEPS):
        m = float(n // 2)
        if n % 2 == 1:
            num = (a + m) * (a + b + m)
            den = (a + 2.0 * m) * (a + 2.0 * m + 1.0)
            d = -x * num / den
            dd_a = -x * (((a + b + m) + (a + m)) * den - num * (2.0 * a + 4.0 * m + 1.0)) / (den * den)
            dd_b = -x * (a + m) / den
        else:
            den = (a + 2.0 * m - 1.0) * (a + 2.0 * m)
            d = x * m * (b - m) / den
            dd_a = -x * m * (b - m) * (2.0 * a + 4.0 * m - 1.0) / (den * den)
            dd_b = x * m / den
        a_next = a_cur + d * a_prev
        b_next = b_cur + d * b_prev
        da_next = da_cur + d * da_prev + dd_a * a_prev
        db_next = db_cur + d * db_prev + dd_a * b_prev
        ea_next = ea_cur + d * ea_prev + dd_b * a_prev
        eb_next = eb_cur + d * eb_prev + dd_b * b_prev
        scale = 1.0 / b_next
        a_prev, a_cur, b_prev, b_cur = a_cur * scale, a_next * scale, b_cur * scale, 1.0
        da_prev, da_cur, db_prev, db_cur = da_cur * scale, da_next * scale, db_cur * scale, db_next * scale
        ea_prev, ea_cur, eb_prev, eb_cur = ea_cur * scale, ea_next * scale, eb_cur * scale, eb_next * scale
        f_next = a_cur  # B_n is 1 after rescaling
        fa_next = da_cur - a_cur * db_cur
        fb_next = ea_cur - a_cur * eb_cur
        done = (abs(f_next - f) <= 1e-16 * abs(f_next) and abs(fa_next - fa) <= 1e-15 * abs(fa_next)
                and abs(fb_next - fb) <= 1e-15 * abs(fb_next))
        f, fa, fb = f_next, fa_next, fb_next
        if done and n > 3:
            break
    return f, fa, fb


@_njit
def _betainc_ends(a, b, x):
    # SciPy's betainc where the continued fraction is not needed: NaN outside the domain, or the
    # value at an end; -1.0 elsewhere
    if not (a >= 0.0 and b >= 0.0 and x >= 0.0 and x <= 1.0) or (a == 0.0 and b == 0.0):
        return math.nan
    if a == math.inf and b == math.inf:
        return math.nan
    if x == 0.0 or x == 1.0:
        return x
    if a == 0.0 or b == math.inf:
        return 1.0
    if b == 0.0 or a == math.inf:
        return 0.0
    return -1.0


@_njit
def _betainc_lower(a, b, x):
    # (I_x(a, b), dI/da, dI/db) for x < (a + 1) / (a + b + 2)
    f, fa, fb = _betainc_fraction(a, b, x)
    k = _betainc_front(a, b, x) / a
    psi_ab = digamma(a + b)
    value = k * f
    da = value * (math.log(x) - 1.0 / a - digamma(a) + psi_ab) + k * fa
    db = value * (math.log1p(-x) - digamma(b) + psi_ab) + k * fb
    return value, da, db


@_njit
def _betainc_all(a, b, x):
    # (I_x(a, b), dI/da, dI/db), by the symmetry I_x(a, b) = 1 - I_1-x(b, a) above the fraction's reach
    if x * (a + b + 2.0) < a + 1.0:
        return _betainc_lower(a, b, x)
    value, db, da = _betainc_lower(b, a, 1.0 - x)
    return 1.0 - value, -da, -db


@_njit
def betainc_da(a, b, x):
    """d I_x(a, b) / da; 0 at x = 0 and 1, NaN where betainc is."""
    end = _betainc_ends(a, b, x)
    if end != -1.0:
        return end if end != end else 0.0
    return _betainc_all(a, b, x)[1]


@_njit
def betainc_db(a, b, x):
    """d I_x(a, b) / db; 0 at x = 0 and 1, NaN where betainc is."""
    end = _betainc_ends(a, b, x)
    if end != -1.0:
        return end if end != end else 0.0
    return _betainc_all(a, b, x)[2]
