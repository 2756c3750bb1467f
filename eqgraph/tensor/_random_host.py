"""The host's draws of the distributions beyond ``RandomVariable``'s first eight, from NumPy's ``Generator``.

Each function ``(rng, size, *params, **options)`` draws what PyTensor's ``RandomVariable`` of the
same name draws: where PyTensor calls a NumPy method, the same method (the same numbers from the
same state); where it calls SciPy's ``rvs``, the standard draw SciPy makes from the generator
(its own method, or its quantile function at a uniform draw: Cauchy's, SciPy computes in
compiled code, agrees to rounding), scaled and shifted as SciPy does
(``standard * scale + loc``: the same numbers again), with SciPy's refusal of a non-positive
scale or shape as a ``ValueError`` naming the distribution and parameter (NumPy's methods refuse
their own bad parameters with their own ``ValueError``s). ``invgamma`` alone is drawn otherwise:
``1 / gamma`` needs no SciPy (whose quantile function it would take), so its numbers are not
SciPy's, though its law is.

``size`` is a tuple or ``None`` (the parameters' broadcast shape). The multivariate draws have
core dimensions: ``multivariate_normal`` ``(n), (n, n) -> (n)``, ``dirichlet`` ``(k) -> (k)``,
``categorical`` ``(k) -> ()``; their batch dimensions broadcast against each other and ``size``.
"""

from __future__ import annotations

import numpy as np

try:  # SciPy's own functions, so that truncexpon draws SciPy's numbers to the last bit
    from scipy.special import expm1, log1p
except ImportError:  # SciPy is optional; NumPy's agree with its to an ulp
    from numpy import expm1, log1p


def _shape(size, *params) -> tuple:
    return tuple(size) if size is not None else np.broadcast_shapes(*(np.shape(p) for p in params))


def _require_positive(distribution: str, **params) -> None:
    """SciPy's check of its scale and shape parameters: each must be > 0 (NaN is refused too)."""
    for name, value in params.items():
        value = np.asarray(value)
        if not np.all(value > 0):
            bad = value[~(value > 0)] if value.ndim else value
            raise ValueError(f"{distribution}: {name} must be > 0, got {np.ravel(bad)[0]}"
                             + (f" among {value.size} values" if value.ndim else ""))


def _scaled(distribution, standard, loc, scale):
    """SciPy's ``standard * scale + loc``; the scale is checked after the draw, which only spends
    the copy of the generator this draw was given."""
    _require_positive(distribution, scale=scale)
    return standard * scale + loc


def gamma(rng, size, shape, scale):
    _require_positive("gamma", shape=shape, scale=scale)
    return rng.standard_gamma(shape, size=_shape(size, shape, scale)) * scale


def beta(rng, size, alpha, beta):
    return rng.beta(alpha, beta, size=size)


def exponential(rng, size, scale):
    return rng.exponential(scale, size=size)


def poisson(rng, size, lam):
    return rng.poisson(lam, size=size)


def negative_binomial(rng, size, n, p):
    return rng.negative_binomial(n, p, size=size)


def t(rng, size, df, loc, scale):
    _require_positive("t", df=df)
    return _scaled("t", rng.standard_t(df, size=_shape(size, df, loc, scale)), loc, scale)


def cauchy(rng, size, loc, scale):
    u = rng.uniform(size=_shape(size, loc, scale))
    return _scaled("cauchy", np.tan(np.pi * (u - 0.5)), loc, scale)


def halfnormal(rng, size, loc, scale):
    return _scaled("halfnormal", np.abs(rng.standard_normal(size=_shape(size, loc, scale))), loc, scale)


def halfcauchy(rng, size, loc, scale):
    u = rng.uniform(size=_shape(size, loc, scale))
    return _scaled("halfcauchy", np.tan(np.pi / 2 * u), loc, scale)


def gumbel(rng, size, loc, scale):
    """The Gumbel of maxima, as SciPy's ``gumbel_r`` draws it (NumPy's ``gumbel`` gives other numbers)."""
    u = rng.uniform(size=_shape(size, loc, scale))
    return _scaled("gumbel", -np.log(-np.log(u)), loc, scale)


def invgamma(rng, size, shape, scale):
    _require_positive("invgamma", shape=shape)
    return _scaled("invgamma", 1.0 / rng.gamma(shape, size=_shape(size, shape, scale)), 0.0, scale)


def pareto(rng, size, b, scale):
    """Pareto's first kind, ``x >= scale`` (NumPy's ``pareto`` is the second, Lomax's, less one)."""
    _require_positive("pareto", b=b)
    u = rng.uniform(size=_shape(size, b, scale))
    return _scaled("pareto", pow(1 - u, -1.0 / b), 0.0, scale)


def truncexpon(rng, size, b, loc, scale):
    """SciPy's ``truncexpon``: its quantile function ``-log1p(u * expm1(-b))`` at a uniform draw."""
    _require_positive("truncexpon", b=b)
    u = rng.uniform(size=_shape(size, b, loc, scale))
    return _scaled("truncexpon", -log1p(u * expm1(-b)), loc, scale)


def gengamma(rng, size, alpha, p, lambd):
    """SciPy's ``gengamma(alpha / p, p, scale=lambd)``: a standard gamma of ``alpha / p`` to the ``1 / p``."""
    alpha, p = np.asarray(alpha, dtype="float64"), np.asarray(p, dtype="float64")
    if not np.all(p != 0):
        raise ValueError("gengamma: p must be nonzero")
    _require_positive("gengamma", **{"alpha / p": alpha / p})
    standard = rng.standard_gamma(alpha / p, size=_shape(size, alpha, p, lambd)) ** (1.0 / p)
    return _scaled("gengamma", standard, 0.0, lambd)


def betabinom(rng, size, n, a, b):
    _require_positive("betabinom", a=a, b=b)
    shape = _shape(size, n, a, b)
    return rng.binomial(n, rng.beta(a, b, size=shape), size=shape)


def _numpy_method(name):
    def draw(rng, size, *params):
        return getattr(rng, name)(*params, size=size)

    draw.__name__ = name
    return draw


def multivariate_normal(rng, size, mean, cov, *, method):
    """``mean + A z`` with ``A A^T = cov`` from ``method``'s factorization and ``z`` standard normal."""
    if mean.shape[-1:] != cov.shape[-1:] or cov.shape[-2:-1] != cov.shape[-1:]:
        raise ValueError(f"multivariate_normal: cov must be square with the length of mean ({mean.shape[-1]}), "
                         f"not of shape {cov.shape}")
    batch = _shape(size, mean[..., 0], cov[..., 0, 0])
    if method == "cholesky":
        factor = np.linalg.cholesky(cov)
    elif method == "svd":
        u, s, _ = np.linalg.svd(cov)
        factor = u * np.sqrt(s)[..., None, :]
    else:
        w, v = np.linalg.eigh(cov)
        factor = v * np.sqrt(w)[..., None, :]
    z = rng.standard_normal(size=(*batch, mean.shape[-1]))
    return mean + np.einsum("...ij,...j->...i", factor, z)


def dirichlet(rng, size, alphas):
    """NumPy's ``dirichlet``, one batch entry at a time where ``alphas`` has batch dimensions."""
    if alphas.ndim == 1:
        return rng.dirichlet(alphas, size=size)
    batch = _shape(size, alphas[..., 0])
    alphas = np.broadcast_to(alphas, (*batch, alphas.shape[-1]))
    out = np.empty(alphas.shape)
    for index in np.ndindex(*batch):
        out[index] = rng.dirichlet(alphas[index])
    return out


def categorical(rng, size, p):
    """The first category whose cumulative probability reaches a uniform draw."""
    batch = _shape(size, p[..., 0])
    if np.broadcast_shapes(batch, p.shape[:-1]) != batch:
        raise ValueError(f"categorical: `size` is incompatible with the shape of `p`: size {batch} does not "
                         f"cover p's batch shape {p.shape[:-1]}")
    u = rng.uniform(size=batch)
    cumulative = np.cumsum(p, axis=-1)
    index = np.sum(cumulative < u[..., None], axis=-1)
    return np.minimum(index, p.shape[-1] - 1)  # a cumulative sum rounded below 1 never gives k


DRAWS = {f.__name__: f for f in (
    gamma, beta, exponential, poisson, negative_binomial, t, cauchy, halfnormal, halfcauchy, invgamma,
    gumbel, pareto, betabinom, truncexpon, gengamma, multivariate_normal, dirichlet, categorical,
    *(_numpy_method(name) for name in ("laplace", "lognormal", "geometric", "hypergeometric", "vonmises",
                                       "weibull", "logistic", "triangular", "chisquare", "wald")))}
