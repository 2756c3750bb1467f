"""Every distribution of ``RandomStream`` built from a generator's basic draws, for the GPU.

CuPy's ``Generator`` has uniform, normal, binomial and scalar-bounded integer draws but no
multinomial, choice or permutation, and its integer draw takes no array bounds. Each function
here builds one distribution from those basic draws plus array operations (sort, cumulative
sum, search), so the whole draw stays on the device: nothing crosses the bus but the seed.

The functions are written against a NumPy-like module ``xp`` and a generator ``gen`` with
``random``, ``standard_normal``, ``integers`` and ``binomial`` (CuPy's, or NumPy's in the tests,
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
    """``x`` shuffled along its first axis, or ``arange(x)`` shuffled for an int ``x``."""
    length = int(x) if x.ndim == 0 else x.shape[0]
    order = xp.argsort(gen.random(size=(length,)))
    return order if x.ndim == 0 else x[order]


#: distribution name -> the function drawing it
DRAWS = {f.__name__: f for f in (normal, uniform, bernoulli, integers, binomial, multinomial, choice,
                                  permutation)}
