"""Every distribution of ``RandomStream`` built from a generator's basic draws, for the GPU.

CuPy's ``Generator`` has uniform, normal, gamma, Poisson, binomial and scalar-bounded integer
draws but no multinomial, choice or permutation, and its integer draw takes no array bounds. Each function
here builds one distribution from those basic draws plus array operations (sort, cumulative
sum, search), so the whole draw stays on the device: nothing crosses the bus but the seed.

The functions are written against a NumPy-like module ``xp`` and a generator ``gen`` with
``random``, ``standard_normal``, ``standard_gamma``, ``poisson``, ``integers`` and ``binomial`` (CuPy's, or NumPy's in the tests,
which is how these algorithms are checked on a machine without a GPU). Each draws from the
distribution NumPy's method of the same name draws from, with its parameter checks (the same
``ValueError``s), though not the same numbers:
- multinomial: one binomial per category, of the trials left, at that category's share of the
  probability left (NumPy's own algorithm);
- choice with replacement and ``p``: a uniform looked up in the cumulative ``p``;
- choice without replacement: the ``k`` smallest of exponential keys scaled by ``1/p``
  (Efraimidis and Spirakis: the same law as drawing one at a time and renormalizing);
- permutation: the order that sorts one uniform per item;
- integers with array bounds: ``floor(low + u * (high - low))``, whose bias is at most
  ``(high - low) / 2**53`` per value.
"""

from __future__ import annotations

import math

import numpy as np


def _shape(size, params) -> tuple:
    return tuple(size) if size is not None else np.broadcast_shapes(*(p.shape for p in params))


def _require(xp, condition, distribution: str, message: str) -> None:
    if bool(xp.any(condition)):
        raise ValueError(f"{distribution}: {message}")


def normal(xp, gen, size, loc, scale, *, float_dtype):
    return loc + scale * gen.standard_normal(size=_shape(size, (loc, scale)), dtype=float_dtype)


def uniform(xp, gen, size, low, high, *, float_dtype):
    return low + (high - low) * gen.random(size=_shape(size, (low, high)), dtype=float_dtype)


def bernoulli(xp, gen, size, p, *, float_dtype):
    _require(xp, ~((p >= 0) & (p <= 1)), "bernoulli", "p must be in [0, 1]")
    return gen.random(size=_shape(size, (p,))) < p


def integers(xp, gen, size, low, high, *, float_dtype):
    shape = _shape(size, (low, high))
    _require(xp, low >= high, "integers", "low >= high")
    if low.ndim == 0 and high.ndim == 0:  # the generator's own exact draw takes scalar bounds
        return gen.integers(int(low), int(high), size=shape)
    span = (high - low).astype("float64")
    draw = low + xp.floor(gen.random(size=shape) * span).astype("int64")
    return xp.minimum(draw, high - 1)  # a product rounded up to the span itself


def binomial(xp, gen, size, n, p, *, float_dtype):
    _require(xp, n < 0, "binomial", "n < 0")
    _require(xp, ~((p >= 0) & (p <= 1)), "binomial", "p must be in [0, 1]")
    return gen.binomial(n, p.astype("float64"), size=_shape(size, (n, p)))


def multinomial(xp, gen, size, n, pvals, *, float_dtype):
    """Counts over the last axis of ``pvals``; its last entry takes the probability left."""
    categories = pvals.shape[-1]
    batch = tuple(size) if size is not None else np.broadcast_shapes(n.shape, pvals.shape[:-1])
    _require(xp, n < 0, "multinomial", "n < 0")
    _require(xp, ~((pvals >= 0) & (pvals <= 1)), "multinomial", "pvals must be in [0, 1]")
    _require(xp, pvals[..., :-1].sum(axis=-1) > 1.0 + 1e-12, "multinomial", "sum(pvals[:-1]) > 1.0")
    left = xp.broadcast_to(n, batch).astype("int64")
    mass = xp.ones(batch, dtype="float64")
    counts = []
    for j in range(categories - 1):
        p = xp.broadcast_to(pvals[..., j], batch).astype("float64")
        share = xp.clip(xp.where(mass > 0, p / xp.where(mass > 0, mass, 1.0), 0.0), 0.0, 1.0)
        count = gen.binomial(left, share, size=batch)
        counts.append(count)
        left = left - count
        mass = mass - p
    counts.append(left)
    return xp.stack(counts, axis=-1)


def choice(xp, gen, size, a, *p, replace: bool, float_dtype):
    population = int(a) if a.ndim == 0 else a.shape[0]
    shape = tuple(size) if size is not None else ()
    k = math.prod(shape)
    if population == 0 and k > 0:
        raise ValueError("choice: a cannot be empty unless no samples are taken")
    weights = p[0].astype("float64") if p else None
    if weights is not None:
        if weights.shape != (population,):
            raise ValueError(f"choice: p must have the length of a ({population}), not shape {weights.shape}")
        _require(xp, ~(weights >= 0), "choice", "probabilities are not non-negative")
        _require(xp, abs(weights.sum() - 1.0) > math.sqrt(np.finfo(np.float64).eps), "choice",
                 "probabilities do not sum to 1")
    if replace and weights is None:
        index = gen.integers(0, population, size=shape) if k else xp.zeros(shape, dtype="int64")
    elif replace:
        cumulative = xp.cumsum(weights)
        cumulative = cumulative / cumulative[-1]
        index = xp.minimum(xp.searchsorted(cumulative, gen.random(size=shape), side="right"), population - 1)
    else:
        if k > population:
            raise ValueError("choice: cannot take a larger sample than the population when replace=False")
        keys = gen.random(size=(population,))
        if weights is not None:  # exponential waiting times at rate p: the first k to arrive are the sample
            if int(xp.count_nonzero(weights)) < k:
                raise ValueError("choice: fewer non-zero entries in p than size")
            keys = xp.where(weights > 0, -xp.log1p(-keys) / xp.where(weights > 0, weights, 1.0), xp.inf)
        index = xp.argsort(keys)[:k].reshape(shape)
    return index if a.ndim == 0 else a[index]


def permutation(xp, gen, size, x, *, float_dtype):
    """``x`` shuffled along its first axis, or ``arange(x)`` shuffled for an int ``x``; with
    ``size``, one independent shuffle per entry of ``size``."""
    length = int(x) if x.ndim == 0 else x.shape[0]
    order = xp.argsort(gen.random(size=(*(size or ()), length)), axis=-1)
    return order if x.ndim == 0 else x[order]


# -- the distributions beyond the first eight: inverse distribution functions at uniform draws,
# or transformations of normal and gamma draws (``gen.standard_gamma`` and ``gen.poisson``);
# hypergeometric and vonmises have no such construction here and are not drawn on the GPU --
def _uniform_open(xp, gen, shape):
    """Uniforms in ``(0, 1)``: the logarithms and quantile functions below are finite at them."""
    u = gen.random(size=shape)
    return xp.where(u == 0.0, 0.5 * np.finfo(np.float64).tiny, u)


def _positive(xp, distribution, **params):
    for name, value in params.items():
        _require(xp, ~(value > 0), distribution, f"{name} must be > 0")


def _standard_gamma(xp, gen, shape_param, shape):
    return gen.standard_gamma(xp.broadcast_to(shape_param, shape).astype("float64"), size=shape)


def gamma(xp, gen, size, shape, scale, *, float_dtype):
    _positive(xp, "gamma", shape=shape, scale=scale)
    return _standard_gamma(xp, gen, shape, _shape(size, (shape, scale))) * scale


def beta(xp, gen, size, alpha, beta, *, float_dtype):
    _positive(xp, "beta", alpha=alpha, beta=beta)
    shape = _shape(size, (alpha, beta))
    x, y = _standard_gamma(xp, gen, alpha, shape), _standard_gamma(xp, gen, beta, shape)
    return x / (x + y)


def exponential(xp, gen, size, scale, *, float_dtype):
    _require(xp, ~(scale >= 0), "exponential", "scale must be >= 0")
    return -xp.log1p(-gen.random(size=_shape(size, (scale,)))) * scale


def poisson(xp, gen, size, lam, *, float_dtype):
    _require(xp, ~(lam >= 0), "poisson", "lam must be >= 0")
    shape = _shape(size, (lam,))
    return gen.poisson(xp.broadcast_to(lam, shape).astype("float64"), size=shape)


def negative_binomial(xp, gen, size, n, p, *, float_dtype):
    """A Poisson whose rate is a gamma of shape ``n`` and scale ``(1 - p) / p``."""
    _positive(xp, "negative_binomial", n=n)
    _require(xp, ~((p > 0) & (p <= 1)), "negative_binomial", "p must be in (0, 1]")
    shape = _shape(size, (n, p))
    rate = _standard_gamma(xp, gen, n, shape) * ((1 - p) / p)
    return gen.poisson(rate, size=shape)


def t(xp, gen, size, df, loc, scale, *, float_dtype):
    _positive(xp, "t", df=df, scale=scale)
    shape = _shape(size, (df, loc, scale))
    chi2 = 2.0 * _standard_gamma(xp, gen, df / 2.0, shape)
    return gen.standard_normal(size=shape) / xp.sqrt(chi2 / df) * scale + loc


def cauchy(xp, gen, size, loc, scale, *, float_dtype):
    _positive(xp, "cauchy", scale=scale)
    return xp.tan(np.pi * (gen.random(size=_shape(size, (loc, scale))) - 0.5)) * scale + loc


def laplace(xp, gen, size, loc, scale, *, float_dtype):
    _require(xp, ~(scale >= 0), "laplace", "scale must be >= 0")
    u = _uniform_open(xp, gen, _shape(size, (loc, scale))) - 0.5
    return loc - scale * xp.sign(u) * xp.log1p(-2.0 * xp.abs(u))


def lognormal(xp, gen, size, mean, sigma, *, float_dtype):
    _require(xp, ~(sigma >= 0), "lognormal", "sigma must be >= 0")
    return xp.exp(mean + sigma * gen.standard_normal(size=_shape(size, (mean, sigma))))


def halfnormal(xp, gen, size, loc, scale, *, float_dtype):
    _positive(xp, "halfnormal", scale=scale)
    return xp.abs(gen.standard_normal(size=_shape(size, (loc, scale)))) * scale + loc


def halfcauchy(xp, gen, size, loc, scale, *, float_dtype):
    _positive(xp, "halfcauchy", scale=scale)
    return xp.tan(np.pi / 2 * gen.random(size=_shape(size, (loc, scale)))) * scale + loc


def categorical(xp, gen, size, p, *, float_dtype):
    batch = tuple(size) if size is not None else p.shape[:-1]
    if np.broadcast_shapes(batch, p.shape[:-1]) != batch:
        raise ValueError(f"categorical: size {batch} does not cover the batch shape of p {p.shape[:-1]}")
    u = gen.random(size=batch)
    index = xp.sum(xp.cumsum(p.astype("float64"), axis=-1) < u[..., None], axis=-1)
    return xp.minimum(index, p.shape[-1] - 1)


def geometric(xp, gen, size, p, *, float_dtype):
    """Trials up to the first success: ``1 + floor(log(1 - u) / log(1 - p))``."""
    _require(xp, ~((p > 0) & (p <= 1)), "geometric", "p must be in (0, 1]")
    u = gen.random(size=_shape(size, (p,)))
    return 1 + xp.floor(xp.log1p(-u) / xp.log1p(-p.astype("float64"))).astype("int64")


def invgamma(xp, gen, size, shape, scale, *, float_dtype):
    _positive(xp, "invgamma", shape=shape, scale=scale)
    return scale / _standard_gamma(xp, gen, shape, _shape(size, (shape, scale)))


def weibull(xp, gen, size, shape, *, float_dtype):
    _require(xp, ~(shape >= 0), "weibull", "shape must be >= 0")
    return (-xp.log1p(-gen.random(size=_shape(size, (shape,))))) ** (1.0 / shape)


def logistic(xp, gen, size, loc, scale, *, float_dtype):
    _require(xp, ~(scale >= 0), "logistic", "scale must be >= 0")
    u = _uniform_open(xp, gen, _shape(size, (loc, scale)))
    return loc + scale * xp.log(u / (1.0 - u))


def gumbel(xp, gen, size, loc, scale, *, float_dtype):
    _positive(xp, "gumbel", scale=scale)
    return loc - scale * xp.log(-xp.log(_uniform_open(xp, gen, _shape(size, (loc, scale)))))


def pareto(xp, gen, size, b, scale, *, float_dtype):
    _positive(xp, "pareto", b=b, scale=scale)
    return scale * (1.0 - gen.random(size=_shape(size, (b, scale)))) ** (-1.0 / b)


def triangular(xp, gen, size, left, mode, right, *, float_dtype):
    _require(xp, ~((left <= mode) & (mode <= right) & (left < right)), "triangular",
             "left <= mode <= right and left < right are required")
    u = gen.random(size=_shape(size, (left, mode, right)))
    width = right - left
    below = left + xp.sqrt(u * width * (mode - left))
    above = right - xp.sqrt((1.0 - u) * width * (right - mode))
    return xp.where(u < (mode - left) / width, below, above)


def chisquare(xp, gen, size, df, *, float_dtype):
    _positive(xp, "chisquare", df=df)
    return 2.0 * _standard_gamma(xp, gen, df / 2.0, _shape(size, (df,)))


def wald(xp, gen, size, mean, scale, *, float_dtype):
    """Michael, Schucany and Haas: a root of the normal's square, kept or inverted by a uniform."""
    _positive(xp, "wald", mean=mean, scale=scale)
    shape = _shape(size, (mean, scale))
    y = gen.standard_normal(size=shape) ** 2 * mean
    x = mean + mean / (2.0 * scale) * (y - xp.sqrt(4.0 * scale * y + y * y))
    return xp.where(gen.random(size=shape) <= mean / (mean + x), x, mean * mean / x)


def truncexpon(xp, gen, size, b, loc, scale, *, float_dtype):
    _positive(xp, "truncexpon", b=b, scale=scale)
    u = gen.random(size=_shape(size, (b, loc, scale)))
    return loc - scale * xp.log1p(u * xp.expm1(-b))


def gengamma(xp, gen, size, alpha, p, lambd, *, float_dtype):
    _require(xp, p == 0, "gengamma", "p must be nonzero")
    _positive(xp, "gengamma", **{"alpha / p": alpha / p, "lambd": lambd})
    return _standard_gamma(xp, gen, alpha / p, _shape(size, (alpha, p, lambd))) ** (1.0 / p) * lambd


def betabinom(xp, gen, size, n, a, b, *, float_dtype):
    _require(xp, n < 0, "betabinom", "n < 0")
    _positive(xp, "betabinom", a=a, b=b)
    shape = _shape(size, (n, a, b))
    p = beta(xp, gen, shape, a, b, float_dtype=float_dtype)
    return gen.binomial(xp.broadcast_to(n, shape), p, size=shape)


def multivariate_normal(xp, gen, size, mean, cov, *, method, float_dtype):
    if mean.shape[-1:] != cov.shape[-1:] or cov.shape[-2:-1] != cov.shape[-1:]:
        raise ValueError(f"multivariate_normal: cov must be square with the length of mean ({mean.shape[-1]}), "
                         f"not of shape {cov.shape}")
    batch = tuple(size) if size is not None else np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    cov = cov.astype("float64")
    if method == "cholesky":
        factor = xp.linalg.cholesky(cov)
    elif method == "svd":
        u, s, _ = xp.linalg.svd(cov)
        factor = u * xp.sqrt(s)[..., None, :]
    else:
        w, v = xp.linalg.eigh(cov)
        factor = v * xp.sqrt(w)[..., None, :]
    z = gen.standard_normal(size=(*batch, mean.shape[-1]))
    return mean + xp.einsum("...ij,...j->...i", factor, z)


def dirichlet(xp, gen, size, alphas, *, float_dtype):
    """Independent gammas of shapes ``alphas``, divided by their sum."""
    _positive(xp, "dirichlet", alphas=alphas)
    batch = tuple(size) if size is not None else alphas.shape[:-1]
    g = _standard_gamma(xp, gen, alphas, (*batch, alphas.shape[-1]))
    return g / g.sum(axis=-1, keepdims=True)


#: distribution name -> the function drawing it
DRAWS = {f.__name__: f for f in (
    normal, uniform, bernoulli, integers, binomial, multinomial, choice, permutation, multivariate_normal,
    dirichlet, gamma, beta, exponential, poisson, negative_binomial, t, cauchy, laplace, lognormal, halfnormal,
    halfcauchy, categorical, geometric, invgamma, weibull, logistic, gumbel, pareto, triangular, chisquare, wald,
    betabinom, truncexpon, gengamma)}
