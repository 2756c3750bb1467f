"""Special functions as Numba scalar functions of float64, for the ``numba=`` forms of
tensor/elemwise.py's rows that libm lacks (digamma, trigamma, polygamma, erfcx, erfinv, erfcinv,
i0, i1, beta and betaln (special_beta.py), the regularized incomplete gamma functions and their
inverses, the derivatives of the incomplete beta function).

Each is written from the mathematics (recurrences, asymptotic and power series, continued
fractions, Halley steps on a function libm has), and gives SciPy's answers at the special
points (poles, 0, +-inf, NaN), since a fused Numba kernel must compute what the NumPy program
computes.  The generated kernels import this module as ``special`` (``IMPORT``); the accuracy
each function reaches against SciPy is pinned by tests/tensor/test_special_numba.py (and
test_special_beta.py, test_special_gamma_inverse.py).  Where SciPy's answers are off over whole
ranges (polygamma at large x, the incomplete gamma functions at small and large ``a`` and so their
inverses, beta and betaln where log-gammas cancel), the NumPy form runs these functions too
(tensor/special_functions.py's ``Own``), so that a fused group computes what the NumPy program does.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from eqgraph.exec.numba.special_unary import numba  # None where Numba is missing or EQGRAPH_NUMBA=0
if numba is None:   # these functions then run in Python, with Numba's error_model="numpy" math
    from eqgraph.exec.numba import python_math as math
else:
    import math
from eqgraph.exec.numba.special_unary import (digamma, erfcinv, erfcx, erfinv, i0, i1, trigamma, _PI, _log1p_minus,
                                              _njit, _stirling_rest)
from eqgraph.exec.numba.special_beta import beta, betaln

#: the line a generated kernel imports this module with.  A kernel cached by Numba keeps a
#: compiled copy of the functions it calls, so the line names a hash of this file and of the
#: ones it imports them from: a change there is a new kernel, not a stale one
IMPORT = ("from eqgraph.exec.numba import special as special  # "
          + hashlib.sha256(b"".join(Path(__file__).with_name(name).read_bytes()
                                    for name in ("special.py", "special_unary.py", "special_beta.py"))).hexdigest()[:16])

__all__ = ["IMPORT", "numba", "digamma", "trigamma", "erfcx", "erfinv", "erfcinv", "i0", "i1", "beta", "betaln",
           "gammaincinv", "gammainccinv"]


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


# -- their inverses in x: gammaincinv and gammainccinv ----------------------------------------
#: the most Halley steps: from the starting guesses below they take 3 to 6
_INVERSE_STEPS = 40


@_njit
def _gamma_inverse_start(a, p, q):
    # a first x with P(a, x) = p, Q = q: below the bulk x^a / gamma(a + 1) = p (P's first term);
    # for a > 1 Wilson and Hilferty's cube of a normal quantile, else Q's tail 1 - log(q / (1 - t))
    # (Numerical Recipes' invgammp), each from the smaller of p and q
    if p <= q:
        small = math.exp((math.log(p) + math.lgamma(a + 1.0)) / a)
        if small < 0.2 * (a + 1.0):
            return small
    if a > 1.0:
        t = math.sqrt(-2.0 * math.log(min(p, q)))
        z = (2.30753 + t * 0.27061) / (1.0 + t * (0.99229 + t * 0.04481)) - t
        z = -z if p < q else z
        return max(1e-3 * a, a * math.pow(1.0 - 1.0 / (9.0 * a) - z / (3.0 * math.sqrt(a)), 3.0))
    u = a * (0.253 + a * 0.12)  # 1 - t, which 1 - t would round to 0 for a tiny a
    if p < 1.0 - u:
        return math.pow(p / (1.0 - u), 1.0 / a)
    x = 1.0 - math.log(q / u) if u > 0.0 else 0.0
    # for a subnormal a, u is 0: Q is a E1(x) there, so x is about exp(-euler - q / a), 0 when q >> a
    return x if x > 0.0 else math.exp(-_EULER - q / a)


@_njit
def _gamma_inverse(a, p, q):
    """x with P(a, x) = p and Q(a, x) = q, p + q = 1: Newton steps on log(P / p) where p <= q, else
    on log(Q / q), so that a tiny p or q keeps its digits and a far start is not an exponentially
    flat function; d log P / dx = x^(a-1) e^-x / (gamma(a) P), d log Q / dx its negative over Q."""
    x = _gamma_inverse_start(a, p, q)
    lower_tail = p <= q
    target = math.log(p if lower_tail else q)
    for _ in range(_INVERSE_STEPS):
        lower, upper = _gamma_p_q(a, x)
        value = lower if lower_tail else upper
        if value == 0.0:  # P underflowed: x is far too small (Q: far too large)
            new = 2.0 * x if lower_tail else 0.5 * x
        else:
            slope = (_gamma_front(a, x) / value) / x  # in this order: x * value underflows
            new = x - (math.log(value) - target) / (slope if lower_tail else -slope)
            new = 0.5 * x if not new > 0.0 else new  # a step past 0 (or NaN): halve x instead
        if abs(new - x) <= 2e-16 * new:
            return new
        x = new
    return x


@_njit
def _gamma_inverse_ends(a, p):
    # SciPy's gammaincinv where no root is sought: NaN outside a >= 0, 0 <= p <= 1 and at a = 0 or
    # inf inside; 0 at p = 0, inf at p = 1; -1.0 elsewhere
    if not (a >= 0.0 and p >= 0.0 and p <= 1.0):
        return math.nan
    if p == 0.0:
        return 0.0
    if p == 1.0:
        return math.inf
    if a == 0.0 or a == math.inf:
        return math.nan
    return -1.0


@_njit
def gammaincinv(a, p):
    """The x where P(a, x) = p, SciPy's gammaincinv."""
    end = _gamma_inverse_ends(a, p)
    if end != -1.0:
        return end
    return _gamma_inverse(a, p, 1.0 - p)  # the smaller of p and 1 - p is exact


@_njit
def gammainccinv(a, q):
    """The x where Q(a, x) = q, SciPy's gammainccinv."""
    end = _gamma_inverse_ends(a, q)
    if end == 0.0 or end == math.inf:  # Q is 1 at x = 0 and 0 at inf
        return math.inf if end == 0.0 else 0.0
    if end != -1.0:
        return end
    return _gamma_inverse(a, 1.0 - q, q)


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
def _betainc_derivative(a, b, x, position):
    # 0 at x = 0 and 1, NaN where betainc is
    end = _betainc_ends(a, b, x)
    if end != -1.0:
        return end if end != end else 0.0
    return _betainc_all(a, b, x)[position]


@_njit
def betainc_da(a, b, x):
    """d I_x(a, b) / da; 0 at x = 0 and 1, NaN where betainc is."""
    return _betainc_derivative(a, b, x, 1)


@_njit
def betainc_db(a, b, x):
    """d I_x(a, b) / db; 0 at x = 0 and 1, NaN where betainc is."""
    return _betainc_derivative(a, b, x, 2)
