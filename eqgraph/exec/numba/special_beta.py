"""The beta function and log|beta| as Numba scalar functions of float64: the Numba forms of the
rows beta and betaln, and the NumPy forms too (tensor/special_functions.py's ``Own``), since SciPy's
betaln loses up to 1e6 ulps where its log-gammas cancel (a or b above 10) and overflows at tiny
and huge arguments (betaln(1e-320, 1) is inf, not 736.8; betaln(1e308, 1e308) NaN).

For positive arguments, a >= b:
  - b >= 10: Stirling's form, log|beta| = log(2 pi / b) / 2 - (a - 1/2) log1p(b/a) + b log(b / (a + b))
    plus the three gamma functions' Stirling remainders: every term has one sign, nothing cancels;
  - a >= 10 > b: lgamma(b) plus lgamma(a) - lgamma(a + b) in Stirling's form, which keeps the
    difference's digits where lgamma(a) and lgamma(a + b) are both large;
  - both below 10: the quotient of gamma functions (gamma is finite there), beta itself;
  - b below 1e-290, where gamma(b) overflows: -log(b) + log1p(b / a), the rest below the last bit.
beta is the gamma quotient where a + b is below gamma's overflow, else exp(betaln) (as SciPy's).
At the poles and for negative arguments the answers are SciPy's (Cephes'): the limit where the
arguments are integers with 1 - a - b > 0, inf at the other poles, the sign of the gamma functions.
"""

from __future__ import annotations

import numpy as np

from eqgraph.exec.numba.special_unary import _PI, _njit, _stirling_rest, numba

if numba is None:   # these functions then run in Python, with Numba's error_model="numpy" math
    from eqgraph.exec.numba import python_math as math
else:
    import math

#: above this, gamma overflows
_MAX_GAMMA = 171.624376956302725
#: from here on, lgamma by Stirling's form with _stirling_rest
_STIRLING_FROM = 10.0
#: below this, gamma(b) nears overflow (1 / b): log|beta| by -log(b)
_TINY = 1e-290
#: Cephes takes nonpositive integers this far from 0 as poles of their own (a C int)
_INT_LIMIT = 2.0 ** 31


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
def _lgamma_difference(a, b):
    # lgamma(a) - lgamma(a + b) for a >= 10 and a + b >= 10, by Stirling's form: (a - 1/2) log(a / c)
    # - b log(c) + b + the remainders, c = a + b, and log(a / c) = -log1p(b / a)
    c = a + b
    return -(a - 0.5) * math.log1p(b / a) - b * math.log(c) + b + (_stirling_rest(a) - _stirling_rest(c))


@_njit
def _betaln_positive(a, b):
    # log(beta(a, b)) for a >= b > 0, both finite
    if b < _TINY:
        return math.log1p(b / a) - math.log(b)
    if b >= _STIRLING_FROM:
        t = b / a
        rest = _stirling_rest(a) + _stirling_rest(b) - _stirling_rest(a + b)
        return 0.5 * math.log(2.0 * _PI / b) - (a - 0.5) * math.log1p(t) + b * (math.log(t) - math.log1p(t)) + rest
    if a >= _STIRLING_FROM:
        return math.lgamma(b) + _lgamma_difference(a, b)
    return math.log(_beta_by_gamma(a, b))


@_njit
def _pole(x):
    # a nonpositive integer: a pole of gamma
    return x <= 0.0 and x == np.floor(x)


@_njit
def _gamma_sign(x):
    # the sign of gamma(x) away from its poles: negative where floor(x) is odd and negative
    return -1.0 if x < 0.0 and np.floor(x) % 2.0 != 0.0 else 1.0


@_njit
def _betaln_signed(a, b):
    # log|beta(a, b)| where an argument is negative and neither a pole nor a + b
    if abs(a) < abs(b):
        a, b = b, a
    if a == math.inf:  # beta(a, b) ~ gamma(b) a^-b, b < 0
        return math.inf
    if abs(b) < _TINY:  # log|1 / b + 1 / a|, as for positive arguments
        return math.log1p(b / a) - math.log(abs(b))
    if a >= _STIRLING_FROM and a + b >= _STIRLING_FROM:  # b < 0: lgamma(a) and lgamma(a + b) would cancel
        return math.lgamma(b) + _lgamma_difference(a, b)
    if abs(a + b) > _MAX_GAMMA or abs(a) > _MAX_GAMMA or abs(b) > _MAX_GAMMA:
        return math.lgamma(a) + (math.lgamma(b) - math.lgamma(a + b))
    return math.log(abs(_beta_by_gamma(a, b)))


@_njit
def _integer_limit(a, b):
    # (1 - a - b, b), the arguments whose beta gives the limit at a pole a, or (nan, nan) where
    # there is none: b an integer with 1 - a - b > 0, and a within Cephes' int
    if a >= -_INT_LIMIT and abs(b) <= _INT_LIMIT and b == np.floor(b) and 1.0 - a - b > 0.0:
        return 1.0 - a - b, b
    return math.nan, math.nan


@_njit
def betaln(a, b):
    """log|beta(a, b)|, SciPy's betaln: -inf at an infinite argument (NaN at both), inf at the poles,
    the limit at integers where 1 - a - b is a positive integer."""
    if a > 0.0 and b > 0.0:
        if a == math.inf or b == math.inf:
            return math.nan if a == b else -math.inf
        return _betaln_positive(max(a, b), min(a, b))
    if _pole(b):
        a, b = b, a
    if _pole(a):  # where b is a pole too, its limit is at a pole again: inf
        c, d = _integer_limit(a, b)
        return math.inf if c != c or d <= 0.0 else _betaln_positive(max(c, d), min(c, d))
    if a != a or b != b:  # after the poles: SciPy's betaln is inf at a pole whatever the other is
        return math.nan
    if _pole(a + b):
        return -math.inf
    return _betaln_signed(a, b)


@_njit
def _beta_positive(a, b):
    # beta(a, b) for a >= b > 0, both finite
    if b < _TINY:  # 1 / b + 1 / a: exact for a tiny too, and the rest below the last bit
        return 1.0 / b + 1.0 / a
    if a + b < _MAX_GAMMA:
        return _beta_by_gamma(a, b)
    return math.exp(_betaln_positive(a, b))


@_njit
def beta(a, b):
    """beta(a, b), SciPy's beta: 0 at an infinite argument (NaN at both), inf at the poles, the signed
    limit at integers where 1 - a - b is a positive integer, a signed 0 where a + b is a pole."""
    if a > 0.0 and b > 0.0:
        if a == math.inf or b == math.inf:
            return math.nan if a == b else 0.0
        return _beta_positive(max(a, b), min(a, b))
    if _pole(b) and not _pole(a):
        a, b = b, a
    if _pole(a):  # where b is a pole too, its limit is at a pole again: a signed inf
        c, d = _integer_limit(a, b)
        if c != c:
            return math.inf
        return _gamma_parity(d) * (math.inf if d <= 0.0 else _beta_positive(max(c, d), min(c, d)))
    if a != a or b != b:  # after the poles: SciPy's beta is inf at a pole whatever the other is
        return math.nan
    sign = _gamma_sign(a) * _gamma_sign(b)
    if _pole(a + b):
        return sign * 0.0
    if min(abs(a), abs(b)) < _TINY:  # as for positive arguments
        return 1.0 / b + 1.0 / a
    if abs(a + b) <= _MAX_GAMMA and abs(a) <= _MAX_GAMMA and abs(b) <= _MAX_GAMMA:
        return _beta_by_gamma(a, b)
    return sign * _gamma_sign(a + b) * math.exp(_betaln_signed(a, b))


@_njit
def _gamma_parity(b):
    # beta(a, b) at a pole a is (-1)^b beta(1 - a - b, b)
    return 1.0 if b % 2.0 == 0.0 else -1.0
