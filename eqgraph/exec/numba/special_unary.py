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


# -- log1p(d) - d and Stirling's remainder, which the functions of two arguments build on --------
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


# -- digamma and trigamma --------------------------------------------------------------------
#: the positive zero of digamma, as a double and the rest of it
_ROOT_HI = 1.4616321449683622
_ROOT_LO = 9.549995429965697e-17
#: digamma on [1, 12) as 16 polynomials of 14 coefficients in x - c, c the middle of each piece:
#: pieces of 1/4 on [1, 2), 1/2 on [2, 4), 1 on [4, 12) (their Chebyshev interpolants, from mpmath,
#: each within 7e-18 of the function). On [1, 2) the polynomial is of psi(x) / (x - root), positive and
#: free of the zero, so that psi keeps its relative accuracy next to the zero. Short polynomials, not
#: one long series and the recurrence down from 12: digamma then costs about as much as SciPy's psi
_PIECES = np.array([
    [1.154056940499151, -0.6953480467852611, 0.5386324954190401, -0.45134533579054037,
     0.3902804901579384, -0.3422614278116736, 0.3021704897188625, -0.267662036531546,
     0.2374945043587144, -0.21090763580049549, 0.18723751596190807, -0.16639014006791497,
     0.15455990994732857, -0.13737697713966654],
    [1.0080828832111486, -0.49154547027318196, 0.30647763934072314, -0.20743227574845274,
     0.1454465475442058, -0.10374091729749495, 0.0746482704436973, -0.05396811100286526,
     0.03911830666739954, -0.028395521196625008, 0.020621832423311042, -0.014988320268391385,
     0.011221149528568813, -0.008159176397684273],
    [0.9015925158282158, -0.3697749644574109, 0.19272012460146237, -0.10919698588596102,
     0.06426251743366883, -0.03855782679608956, 0.023380439903781757, -0.014262521318805073,
     0.008730873697286895, -0.0053557345329645146, 0.0032888682640936605, -0.0020215096258403014,
     0.0012693659340579533, -0.0007808011361734784],
    [0.8197059040391854, -0.2905097569443759, 0.130023439701586, -0.06328917065603364,
     0.03204852080225831, -0.01657378439467978, 0.008674309738414427, -0.004572288025621806,
     0.002420549823086735, -0.001284882894581032, 0.0006831363816922947, -0.0003636308698073367,
     0.0001967492404393227, -0.00010484829867252403],
    [0.5725464666237345, 0.5573291545071107, -0.15186996876845626, 0.054090668198064275,
     -0.02129452658156964, 0.008804064011209792, -0.0037399994760467367, 0.001614548974967432,
     -0.000704000444296597, 0.00030893429006148337, -0.00013603218570604604, 6.0109473702917695e-05,
     -2.780634931823781e-05, 1.2325880405173291e-05],
    [0.8189010249754326, 0.4375712576489308, -0.09435731651565042, 0.02676935458157816,
     -0.008439811390530957, 0.002806739012936656, -0.0009624684383027458, 0.0003363590488454785,
     -0.00011900161678679953, 4.244891807924286e-05, -1.522208077279219e-05, 5.4817201725222935e-06,
     -2.037923880609359e-06, 7.373904300041981e-07],
    [1.016990911068179, 0.3597982903095799, -0.06407847356955755, 0.01507222588744262,
     -0.003952996664743598, 0.0010967173815093288, -0.0003145121805115051, 9.211017695177352e-05,
     -2.735661541462613e-05, 8.203699447274097e-06, -2.476532781483013e-06, 7.514057364452361e-07,
     -2.3356935961834583e-07, 7.131153467575222e-08],
    [1.1825373886117962, 0.3053398526902531, -0.04627316925794963, 0.009284210124232417,
     -0.002081577042356931, 0.0004946537954188283, -0.00012171018202418578, 3.062877383509301e-05,
     -7.826759350709674e-06, 2.021697193392009e-06, -5.262475895564173e-07, 1.377808331638311e-07,
     -3.678914927512639e-08, 9.705073155386197e-09],
    [1.388870926359529, 0.24872510303901038, -0.030778410660513338, 0.005053751423727652,
     -0.0009291980616281437, 0.00018141879725228825, -3.673803058085533e-05, 7.620734468019182e-06,
     -1.607425900553509e-06, 3.43147664199928e-07, -7.385462230412023e-08, 1.601347506724609e-08,
     -3.6430997557186485e-09, 7.973187765611261e-10],
    [1.6110931485817512, 0.19934238698962767, -0.019804473760650997, 0.0026150987793137986,
     -0.00038727525172732987, 6.0991506163218516e-05, -9.976411084486336e-06, 1.6737079132705156e-06,
     -2.8585592226840947e-07, 4.9465446803239216e-08, -8.641901149548438e-09, 1.521759255119026e-09,
     -2.7728188967623354e-10, 4.935925077392275e-11],
    [1.792911330399933, 0.16628453574995825, -0.013793955353438397, 0.0015222772507296897,
     -0.00018858042834689155, 2.4865174639502458e-05, -3.407987207310085e-06, 4.794490265111974e-07,
     -6.871752883854649e-08, 9.985738906900495e-09, -1.466201353046597e-09, 2.1708656484596367e-10,
     -3.300274766766019e-11, 4.944861317818507e-12],
    [1.9467574842460869, 0.1426158966967038, -0.010152626268322331, 0.000962072776096449,
     -0.00010239512455704003, 1.1605897133371452e-05, -1.3680983631451245e-06, 1.656199735627419e-07,
     -2.043610256733383e-08, 2.557827172867777e-09, -3.2364229313966327e-10, 4.130824793720463e-11,
     -5.388027186525836e-12, 6.964427822593764e-13],
    [2.08009081757942, 0.12483811891892602, -0.007782255897951962, 0.0006460233933803996,
     -6.025520686155257e-05, 5.987241440639791e-06, -6.189442711218725e-07, 6.573276129297499e-08,
     -7.117803701238223e-09, 7.820539907216962e-10, -8.689539670782724e-11, 9.741995079626491e-12,
     -1.112688199043469e-12, 1.2639758392839423e-13],
    [2.1977378764029494, 0.11099728846909904, -0.006153922903854669, 0.0004544548058395416,
     -3.771772597439064e-05, 3.335773100973682e-06, -3.0700681944842946e-07, 2.9034237566687577e-08,
     -2.800329727599117e-09, 2.74115876175919e-10, -2.7141456712316054e-11, 2.7121197860369395e-12,
     -2.755051518208955e-13, 2.7905460725738522e-14],
    [2.3030010342976865, 0.09991695605912673, -0.004987572123857585, 0.00033168103952405906,
     -2.4794171625392073e-05, 1.9753989589738325e-06, -1.6380954135295967e-07, 1.3960839872427599e-08,
     -1.213656174355084e-09, 1.0709760741338922e-10, -9.561241875091849e-12, 8.615708558028124e-13,
     -7.880344734845682e-14, 7.200018149692344e-15],
    [2.3982391295357814, 0.09084666127454623, -0.0041237345253261086, 0.00024941079204487086,
     -1.695890996070739e-05, 1.229183562337196e-06, -9.274140834212179e-08, 7.1924462523478e-09,
     -5.690472332988138e-10, 4.5706279693744425e-11, -3.714594593674648e-12, 3.0474730519165043e-13,
     -2.534838648978527e-14, 2.1090599726760063e-15]])
#: where the asymptotic series of digamma and trigamma take over: their last terms kept are below
#: 1e-17 of the result there
_ASYMPTOTIC_FROM = 12.0


@_njit
def _digamma_asymptotic(x):
    # log(x) - 1/(2x) - sum B_2k / (2k x^2k); the sum by Estrin's scheme (as _estrin14)
    s = 1.0 / x
    r = s * s
    r2 = r * r
    low = (1.0 / 12 - r * (1.0 / 120)) + r2 * (1.0 / 252 - r * (1.0 / 240))
    high = (1.0 / 132 - r * (691.0 / 32760)) + r2 * (1.0 / 12)
    return math.log(x) - 0.5 * s - r * (low + (r2 * r2) * high)


@_njit
def _estrin14(c, d):
    # c[0] + c[1] d + ... + c[13] d^13 by Estrin's scheme: pairs, then pairs of pairs, so that the
    # chain of dependent operations is 5 long, not Horner's 13, and successive elements overlap
    d2 = d * d
    d4 = d2 * d2
    low = (c[0] + c[1] * d) + (c[2] + c[3] * d) * d2 + ((c[4] + c[5] * d) + (c[6] + c[7] * d) * d2) * d4
    high = (c[8] + c[9] * d) + (c[10] + c[11] * d) * d2 + (c[12] + c[13] * d) * d4
    return low + high * (d4 * d4)


@_njit
def _digamma_piece(y):
    # psi(y) for 1 <= y < 12 by its piece's polynomial
    if y < 2.0:
        k = int((y - 1.0) * 4.0)
        d = y - (1.125 + 0.25 * k)
    elif y < 4.0:
        k = 4 + int((y - 2.0) * 2.0)
        d = y - (0.25 + 0.5 * k)
    else:
        k = 8 + int(y - 4.0)
        d = y - (k - 3.5)
    total = _estrin14(_PIECES[k], d)
    if y < 2.0:
        return total * ((y - _ROOT_HI) - _ROOT_LO)  # y - root_hi is exact
    return total


@_njit
def _digamma_positive(x):
    if x >= _ASYMPTOTIC_FROM:
        return _digamma_asymptotic(x)
    if x >= 1.0:
        return _digamma_piece(x)
    # psi(x) = psi(x + 1) - 1/x: x + 1 rounds, by at most 1.1e-16, which moves psi(x + 1) by less
    # than that, where |psi(x)| > 0.58
    return _digamma_piece(x + 1.0) - 1.0 / x


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
    if x > 0.0:
        return _digamma_positive(x)  # inf at inf: the asymptotic form's log
    if x == 0.0:
        return -math.copysign(math.inf, x)
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
