"""Random numbers: ``RandomStream(seed)`` and the ``RandomVariable`` op, as in PyTensor.

    srng = eg.RandomStream(seed=42)
    w = srng.normal(0, 0.1, size=(3, 4))     # a symbolic draw
    f = eg.function([], w)                  # each call draws anew; the same seed, the same stream

Where the parameters live on the host, NumPy's ``Generator`` draws. Where they live on a GPU
(the CuPy backend), every distribution but ``hypergeometric`` and ``vonmises`` (which refuse
by name) is drawn there (``random_draws``) by a CuPy generator seeded from the stream's NumPy
generator, so a large draw never crosses the bus: the same seed gives the same numbers on every
call sequence, but other numbers than on the host (as JAX's numbers differ from NumPy's).

Every draw gets a generator of its own: a shared variable holding a NumPy ``Generator``
seeded from the stream (``SeedSequence(seed).spawn``, one child per draw, in the order the
draws were made). The draw's node takes that generator and returns a new one with the
values; the shared variable's ``default_update`` is that new generator, which
``eqgraph.function`` applies after each call without being asked. The generator value in
the shared variable is never advanced in place: the op draws from a copy, so a function's
update is the only thing that moves a stream on.

Why draws are never merged by the e-graph: two draws are two nodes on two different
generator variables, so no term of one equals a term of the other, and no rule can unify
them (``x - x -> 0`` does not apply to ``normal() - normal()``). A draw used twice is
one draw, as in any graph.

``size`` may be symbolic (a tuple with variables in it, or an int vector of known length).

As in PyTensor, ``normal``, ``uniform``, ... are ``RandomVariable`` ops: calling one builds a
draw (``normal(0, 1, size=3)``), and a draw's node is read through its op (``rng_fn``,
``size_param``, ``dist_params``, ``signature``, ...). ``gamma``, ``standard_normal`` and
``rayleigh`` are functions, as they are in PyTensor.
"""

from __future__ import annotations

import functools
import inspect
import warnings

import numpy as np

from eqgraph.settings import config
from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.tensor.shape import shape_of
from eqgraph.tensor.elemwise import ELEMWISE_OPS
from eqgraph.tensor.random_op import BUILDERS, DISTRIBUTIONS, OPTIONS, RandomVariable, _size_vector
from eqgraph.tensor.rng_type import RandomGeneratorType, random_generator_type
from eqgraph.tensor.sharedvar import SharedVariable
from eqgraph.terms.basic import Variable
from eqgraph.terms.type import describe_value

#: per distribution: (NumPy Generator method, parameter names); the distributions without a


# -- the draws, as functions (``et.random.normal(..., rng=rng)``, PyTensor's form) ----------------
def normal(loc=0.0, scale=1.0, size=None, rng=None, dtype=None, name=None):
    return _draw("normal", (loc, scale), size, rng, dtype or config.floatX, name)


def uniform(low=0.0, high=1.0, size=None, rng=None, dtype=None, name=None):
    return _draw("uniform", (low, high), size, rng, dtype or config.floatX, name)


def integers(low, high=None, size=None, rng=None, dtype="int64", name=None):
    """Integers in ``[low, high)``, or ``[0, low)`` without ``high`` (as NumPy)."""
    if high is None:
        low, high = 0, low
    return _draw("integers", (low, high), size, rng, dtype, name)


def bernoulli(p, size=None, rng=None, dtype="int64", name=None):
    return _draw("bernoulli", (p,), size, rng, dtype, name)


def binomial(n, p, size=None, rng=None, dtype="int64", name=None):
    return _draw("binomial", (n, p), size, rng, dtype, name)


def multinomial(n, pvals, size=None, rng=None, dtype="int64", name=None):
    return _draw("multinomial", (n, pvals), size, rng, dtype, name)


def choice(a, size=None, replace=True, p=None, rng=None, name=None):
    """Entries of ``a`` along its first axis (of ``arange(a)`` for an int), with probabilities
    ``p``: the draw's shape is ``size + a.shape[1:]``."""
    a = as_tensor_variable(a)
    params = (a,) if p is None else (a, p)
    return _draw("choice", params, size, rng, "int64" if a.ndim == 0 else a.dtype, name,
                 options=(("replace", bool(replace)),))


def permutation(x, size=None, rng=None, name=None):
    """A shuffled copy of ``x`` along its first axis, or a permutation of ``arange(x)`` for an int;
    with ``size``, independent shuffles of shape ``size + x.shape`` (``size + (x,)``)."""
    x = as_tensor_variable(x)
    return _draw("permutation", (x,), size, rng, "int64" if x.ndim == 0 else x.dtype, name)


def multivariate_normal(mean, cov, size=None, method="cholesky", rng=None, dtype=None, name=None):
    """``(n), (n, n) -> (n)``: ``mean + A z`` where ``A A^T = cov`` by ``method``: "cholesky",
    "svd" or "eigh" (the last two take a singular ``cov``)."""
    if method not in ("cholesky", "svd", "eigh"):
        raise ValueError(f"multivariate_normal: method must be 'cholesky', 'svd' or 'eigh', not {method!r}")
    return _draw("multivariate_normal", (mean, cov), size, rng, dtype or config.floatX, name,
                 options=(("method", method),))


def dirichlet(alphas, size=None, rng=None, dtype=None, name=None):
    """``(k) -> (k)``: points of the simplex with concentrations ``alphas``."""
    return _draw("dirichlet", (alphas,), size, rng, dtype or config.floatX, name)


def gamma(shape, rate=None, scale=None, size=None, rng=None, dtype=None, name=None):
    """Gamma of ``shape`` and ``scale``; PyTensor's deprecated ``rate = 1 / scale`` is still
    taken, with its ``FutureWarning``, and never together with ``scale``."""
    if rate is not None and scale is not None:
        raise ValueError("gamma: Cannot specify both rate and scale")
    if rate is None and scale is None:
        raise ValueError("gamma: Must specify scale")
    if rate is not None:
        warnings.warn("Gamma rate argument is deprecated and will stop working, use scale instead",
                      FutureWarning, stacklevel=2)
        scale = 1.0 / as_tensor_variable(rate)
    return _gamma_draw(shape, scale, size, rng, dtype, name)


def _gamma_draw(shape, scale, size=None, rng=None, dtype=None, name=None):
    """Gamma of ``shape`` and ``scale`` (PyTensor's ``_gamma``, the op that ``gamma`` builds)."""
    return _draw("gamma", (shape, scale), size, rng, dtype or config.floatX, name)


def standard_normal(*, size=None, rng=None, dtype=None, name=None):
    return normal(0.0, 1.0, size=size, rng=rng, dtype=dtype, name=name)


def beta(alpha, beta, size=None, rng=None, dtype=None, name=None):
    return _draw("beta", (alpha, beta), size, rng, dtype or config.floatX, name)


def exponential(scale=1.0, size=None, rng=None, dtype=None, name=None):
    return _draw("exponential", (scale,), size, rng, dtype or config.floatX, name)


def poisson(lam=1.0, size=None, rng=None, dtype="int64", name=None):
    return _draw("poisson", (lam,), size, rng, dtype, name)


def negative_binomial(n, p, size=None, rng=None, dtype="int64", name=None):
    """Failures before the ``n``-th success, at success probability ``p`` (NumPy's and SciPy's)."""
    return _draw("negative_binomial", (n, p), size, rng, dtype, name)


nbinom = negative_binomial


def t(df, loc=0.0, scale=1.0, size=None, rng=None, dtype=None, name=None):
    """Student's t with ``df`` degrees of freedom, shifted by ``loc`` and scaled by ``scale``."""
    return _draw("t", (df, loc, scale), size, rng, dtype or config.floatX, name)


def cauchy(loc=0.0, scale=1.0, size=None, rng=None, dtype=None, name=None):
    return _draw("cauchy", (loc, scale), size, rng, dtype or config.floatX, name)


def laplace(loc=0.0, scale=1.0, size=None, rng=None, dtype=None, name=None):
    return _draw("laplace", (loc, scale), size, rng, dtype or config.floatX, name)


def lognormal(mean=0.0, sigma=1.0, size=None, rng=None, dtype=None, name=None):
    """``exp`` of a normal of ``mean`` and standard deviation ``sigma``."""
    return _draw("lognormal", (mean, sigma), size, rng, dtype or config.floatX, name)


def halfnormal(loc=0.0, scale=1.0, size=None, rng=None, dtype=None, name=None):
    """``loc + scale * |z|``, ``z`` standard normal."""
    return _draw("halfnormal", (loc, scale), size, rng, dtype or config.floatX, name)


def halfcauchy(loc=0.0, scale=1.0, size=None, rng=None, dtype=None, name=None):
    """``loc + scale * |c|``, ``c`` standard Cauchy."""
    return _draw("halfcauchy", (loc, scale), size, rng, dtype or config.floatX, name)


def categorical(p, size=None, rng=None, dtype="int64", name=None):
    """``(k) -> ()``: a category ``i`` of ``0..k-1`` with probability ``p[..., i]``."""
    return _draw("categorical", (p,), size, rng, dtype, name)


def geometric(p, size=None, rng=None, dtype="int64", name=None):
    """Trials up to and including the first success (``>= 1``), as NumPy's."""
    return _draw("geometric", (p,), size, rng, dtype, name)


def hypergeometric(ngood, nbad, nsample, size=None, rng=None, dtype="int64", name=None):
    return _draw("hypergeometric", (ngood, nbad, nsample), size, rng, dtype, name)


def vonmises(mu, kappa, size=None, rng=None, dtype=None, name=None):
    return _draw("vonmises", (mu, kappa), size, rng, dtype or config.floatX, name)


def invgamma(shape, scale, size=None, rng=None, dtype=None, name=None):
    """``scale / g``, ``g`` a gamma of ``shape`` and scale 1."""
    return _draw("invgamma", (shape, scale), size, rng, dtype or config.floatX, name)


def weibull(shape, size=None, rng=None, dtype=None, name=None):
    return _draw("weibull", (shape,), size, rng, dtype or config.floatX, name)


def logistic(loc=0.0, scale=1.0, size=None, rng=None, dtype=None, name=None):
    return _draw("logistic", (loc, scale), size, rng, dtype or config.floatX, name)


def gumbel(loc=0.0, scale=1.0, size=None, rng=None, dtype=None, name=None):
    """The Gumbel of maxima (SciPy's ``gumbel_r``, NumPy's ``gumbel``)."""
    return _draw("gumbel", (loc, scale), size, rng, dtype or config.floatX, name)


def pareto(b, scale=1.0, size=None, rng=None, dtype=None, name=None):
    """Pareto's first kind: ``x >= scale``, density ``b scale^b / x^(b+1)`` (SciPy's ``pareto``)."""
    return _draw("pareto", (b, scale), size, rng, dtype or config.floatX, name)


def triangular(left, mode, right, size=None, rng=None, dtype=None, name=None):
    return _draw("triangular", (left, mode, right), size, rng, dtype or config.floatX, name)


def chisquare(df, size=None, rng=None, dtype=None, name=None):
    return _draw("chisquare", (df,), size, rng, dtype or config.floatX, name)


def wald(mean=1.0, scale=1.0, size=None, rng=None, dtype=None, name=None):
    """The inverse Gaussian of ``mean`` and shape ``scale``."""
    return _draw("wald", (mean, scale), size, rng, dtype or config.floatX, name)


def betabinom(n, a, b, size=None, rng=None, dtype="int64", name=None):
    """A binomial of ``n`` trials whose success probability is a beta of ``a`` and ``b``."""
    return _draw("betabinom", (n, a, b), size, rng, dtype, name)


def truncexpon(b, loc=0.0, scale=1.0, size=None, rng=None, dtype=None, name=None):
    """The exponential truncated to ``[0, b]``, shifted by ``loc`` and scaled by ``scale`` (SciPy's)."""
    return _draw("truncexpon", (b, loc, scale), size, rng, dtype or config.floatX, name)


def gengamma(alpha=1.0, p=1.0, lambd=1.0, size=None, rng=None, dtype=None, name=None):
    """The generalized gamma: density ``∝ x^(alpha - 1) exp(-(x / lambd)^p)`` (SciPy's ``gengamma``
    of ``a = alpha / p``, ``c = p`` and ``scale = lambd``)."""
    return _draw("gengamma", (alpha, p, lambd), size, rng, dtype or config.floatX, name)


def rayleigh(scale=1.0, *, size=None, rng=None, dtype=None, name=None):
    """``scale * sqrt(c)``, ``c`` a chi-square of 2 degrees of freedom (PyTensor's and SciPy's draw)."""
    scale = as_tensor_variable(scale)
    draw = chisquare(2.0, size=shape_of(scale) if size is None else size, rng=rng, dtype=dtype)
    out = ELEMWISE_OPS["sqrt"](draw) * scale
    if name is not None:
        out.name = name
    return out


DRAWS = (normal, standard_normal, uniform, integers, bernoulli, binomial, multinomial, choice, permutation,
         multivariate_normal, dirichlet, gamma, beta, exponential, poisson, negative_binomial, nbinom, t,
         cauchy, laplace, lognormal, halfnormal, halfcauchy, categorical, geometric, hypergeometric,
         vonmises, invgamma, weibull, logistic, gumbel, pareto, triangular, chisquare, wald, betabinom,
         truncexpon, gengamma, rayleigh)

#: distribution -> the function building its draw, which ``RandomVariable.__call__`` calls
BUILDERS.update({**{f.__name__: f for f in DRAWS if f.__name__ in DISTRIBUTIONS}, "gamma": _gamma_draw})


def _draw(distribution, params, size, rng, dtype, name, options=()) -> Variable:
    """A draw from ``rng`` (a generator shared variable; ``draw.owner.outputs[0]`` is the
    generator after it, for ``updates``). Without ``rng``, a generator of its own seeded
    from the operating system, advanced by its ``default_update``."""
    own = rng is None
    if own:
        rng = SharedVariable(random_generator_type, np.random.default_rng(), name="rng")
    elif not (isinstance(rng, Variable) and isinstance(rng.type, RandomGeneratorType)):
        raise TypeError(f"{distribution}: rng must be a generator shared variable "
                        f"(eg.shared(np.random.default_rng(seed))), not {describe_value(rng)}")
    inputs = [] if size is None else [_size_vector(size)]
    op = RandomVariable(distribution, dtype, size is not None, options)
    new_rng, draw = op(rng, *inputs, *params, return_list=True)
    if own:
        rng.default_update = new_rng
    if name is not None:
        draw.name = name
    return draw


class RandomStream:
    """Symbolic random draws from one seed: ``srng.normal(0, 1, size=(2, 3))`` (PyTensor's name).

    Each draw has its own generator (a shared variable with a ``default_update``), seeded by
    the stream's ``SeedSequence``: the same seed and the same draws in the same order give the
    same numbers. Its methods are the draws of this module (``normal``, ``choice``, ...)
    without their ``rng`` argument.
    """

    def __init__(self, seed=None, rng_ctor=np.random.default_rng):
        if not callable(rng_ctor):
            raise TypeError(f"RandomStream: rng_ctor must make a NumPy Generator from a seed, not "
                            f"{describe_value(rng_ctor)}")
        self.rng_ctor = rng_ctor
        self.state_updates: list = []   # (generator shared variable, its new value), one per draw
        self.seed(seed)

    def seed(self, seed=None) -> None:
        """Start every draw made so far, and the draws to come, again from ``seed``."""
        self._seeds = np.random.SeedSequence(seed)
        for rng, _ in self.state_updates:
            rng.set_value(self.rng_ctor(self._seeds.spawn(1)[0]), borrow=True)

    def updates(self) -> list:
        """(generator shared variable, its new value) for every draw so far (PyTensor's name);
        ``eqgraph.function`` applies them by itself, as each generator's ``default_update``."""
        return list(self.state_updates)

    def gen(self, draw_function, *args, **kwargs):
        """``draw_function`` (one of ``DRAWS``, or a ``RandomVariable``) on a new generator of this stream."""
        rng = SharedVariable(random_generator_type, self.rng_ctor(self._seeds.spawn(1)[0]), name="rng")
        draw = draw_function(*args, rng=rng, **kwargs)
        rng.default_update = new_rng = _next_generator(draw, rng)
        self.state_updates.append((rng, new_rng))
        return draw


def _next_generator(draw, rng) -> Variable:
    """The generator after the draw from ``rng`` that ``draw`` is computed from (``rayleigh`` is a
    function of its draw, not the draw itself)."""
    pending = [draw]
    while pending:
        node = pending.pop().owner
        if node is None:
            continue
        if isinstance(node.op, RandomVariable) and node.inputs[0] is rng:
            return node.outputs[0]
        pending.extend(node.inputs)
    raise ValueError(f"{draw} is not computed from a draw of {rng}")


def _stream_method(draw_function):
    @functools.wraps(draw_function)
    def method(self, *args, **kwargs):
        return self.gen(draw_function, *args, **kwargs)

    return method


for _draw_function in DRAWS:
    setattr(RandomStream, _draw_function.__name__, _stream_method(_draw_function))


def _op_of(build) -> RandomVariable:
    """The ``RandomVariable`` PyTensor names after the distribution that ``build`` draws, its dtype
    "floatX" where the draw's dtype follows ``config.floatX`` (or its parameter, for choice and
    permutation)."""
    parameters = inspect.signature(build).parameters
    dtype = parameters.get("dtype")
    options = tuple((name, parameters[name].default) for name in OPTIONS.get(build.__name__, ()))
    return RandomVariable(build.__name__, "floatX" if dtype is None or dtype.default is None else dtype.default,
                          options=options)


# PyTensor's names are ops that build their draws when called (``normal(0, 1, size=3)``)
(normal, uniform, integers, bernoulli, binomial, multinomial, choice, permutation, multivariate_normal, dirichlet,
 beta, exponential, poisson, negative_binomial, t, cauchy, laplace, lognormal, halfnormal, halfcauchy, categorical,
 geometric, hypergeometric, vonmises, invgamma, weibull, logistic, gumbel, pareto, triangular, chisquare, wald,
 betabinom, truncexpon, gengamma) = (_op_of(BUILDERS[name]) for name in (
    "normal", "uniform", "integers", "bernoulli", "binomial", "multinomial", "choice", "permutation",
    "multivariate_normal", "dirichlet", "beta", "exponential", "poisson", "negative_binomial", "t", "cauchy",
    "laplace", "lognormal", "halfnormal", "halfcauchy", "categorical", "geometric", "hypergeometric", "vonmises",
    "invgamma", "weibull", "logistic", "gumbel", "pareto", "triangular", "chisquare", "wald", "betabinom",
    "truncexpon", "gengamma"))
nbinom = negative_binomial
_gamma = RandomVariable("gamma", "floatX")



RandomStream.nbinom = RandomStream.negative_binomial  # PyTensor's second name for it
