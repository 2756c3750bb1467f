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
"""

from __future__ import annotations

import functools

import numpy as np

from eqgraph.settings import config
from eqgraph.tensor import _random_host, random_draws
from eqgraph.tensor.basic import as_tensor_variable, constant
from eqgraph.tensor.shape import Shape, static_values
from eqgraph.tensor.elemwise import cast
from eqgraph.tensor.rng_type import RandomGeneratorType, copy_generator, random_generator_type
from eqgraph.tensor.sharedvar import SharedVariable
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Apply, Variable
from eqgraph.terms.op import Op
from eqgraph.terms.type import describe_value
from eqgraph.xp import array_namespace, as_output, is_cupy_namespace, to_numpy

#: per distribution: (NumPy Generator method, parameter names); the distributions without a
#: method here are drawn by ``_random_host``
DISTRIBUTIONS = {
    "normal": ("normal", ("loc", "scale")),
    "uniform": ("uniform", ("low", "high")),
    "integers": ("integers", ("low", "high")),
    "bernoulli": ("binomial", ("p",)),       # binomial(1, p): the 1 is passed by perform
    "binomial": ("binomial", ("n", "p")),
    "multinomial": ("multinomial", ("n", "pvals")),
    "choice": ("choice", ("a", "p")),
    "permutation": ("permutation", ("x",)),
    **{name: (None, params) for name, params in (
        ("multivariate_normal", ("mean", "cov")), ("dirichlet", ("alphas",)), ("gamma", ("shape", "scale")),
        ("beta", ("alpha", "beta")), ("exponential", ("scale",)), ("poisson", ("lam",)),
        ("negative_binomial", ("n", "p")), ("t", ("df", "loc", "scale")), ("cauchy", ("loc", "scale")),
        ("laplace", ("loc", "scale")), ("lognormal", ("mean", "sigma")), ("halfnormal", ("loc", "scale")),
        ("halfcauchy", ("loc", "scale")), ("categorical", ("p",)), ("geometric", ("p",)),
        ("hypergeometric", ("ngood", "nbad", "nsample")), ("vonmises", ("mu", "kappa")),
        ("invgamma", ("shape", "scale")), ("weibull", ("shape",)), ("logistic", ("loc", "scale")),
        ("gumbel", ("loc", "scale")), ("pareto", ("b", "scale")), ("triangular", ("left", "mode", "right")),
        ("chisquare", ("df",)), ("wald", ("mean", "scale")), ("betabinom", ("n", "a", "b")))},
}

#: the multivariate distributions: (core dimensions of each parameter, the parameter whose last
#: dimension is the draw's core dimension, or None for a scalar draw); the others are elementwise
CORE = {
    "multinomial": ((0, 1), 1),
    "multivariate_normal": ((1, 2), 0),
    "dirichlet": ((1,), 0),
    "categorical": ((1,), None),
}


def _static_size(size) -> tuple:
    """The entries of ``size`` known before running: a constant's, or a tensor's static shape
    when ``size`` is that tensor's ``.shape`` (``normal(size=x.shape)``)."""
    if size.owner is not None and isinstance(size.owner.op, Shape):
        return tuple(size.owner.inputs[0].type.shape)
    return tuple(static_values(size))


class RandomVariable(Op):
    """``RandomVariable(distribution, dtype, sized, options)(rng, [size], *params) -> (new rng, draw)``.

    ``sized``: whether a ``size`` input follows the generator (else the draw has the
    parameters' broadcast shape); ``options`` are fixed keyword arguments of the NumPy
    method, as ``(name, value)`` pairs (``choice``'s ``replace``).
    """

    __props__ = ("distribution", "dtype", "sized", "options")
    default_output = 1

    def __init__(self, distribution: str, dtype: str, sized: bool, options: tuple = ()):
        if distribution not in DISTRIBUTIONS:
            raise ValueError(f"unknown distribution {distribution!r}; known: {', '.join(DISTRIBUTIONS)}")
        self.distribution, self.dtype, self.sized, self.options = distribution, dtype, bool(sized), tuple(options)

    def make_node(self, rng, *inputs):
        if not (isinstance(rng, Variable) and isinstance(rng.type, RandomGeneratorType)):
            raise TypeError(f"{self}: the first input must be a random generator variable, not {rng!r}")
        inputs = [as_tensor_variable(v) for v in inputs]
        size, params = (inputs[0], inputs[1:]) if self.sized else (None, inputs)
        shape = self._static_shape(size, params)
        return Apply(self, [rng, *inputs], [rng.type(), TensorType(self.dtype, shape)()])

    def _static_shape(self, size, params) -> tuple:
        """PyTensor's: ``size`` (or the parameters' broadcast batch shape) then the core dimension."""
        if self.distribution == "permutation":
            x = params[0]
            return (None,) if x.ndim == 0 else x.type.shape
        core_ndims, core_param = CORE.get(self.distribution, ((0,) * len(params), None))
        for param, ndim, name in zip(params, core_ndims, DISTRIBUTIONS[self.distribution][1]):
            if param.ndim < ndim:
                raise TypeError(f"{self}: {name} must have at least {ndim} dimensions, not {param} of type {param.type}")
        core = () if core_param is None else params[core_param].type.shape[-1:]
        if size is not None:
            if size.ndim != 1 or size.type.shape[0] is None or size.dtype not in ("int8", "int16", "int32", "int64"):
                raise TypeError(f"{self}: size must be a tuple of ints or an int vector of known length, "
                                f"not {size} of type {size.type}")
            return _static_size(size) + core
        if self.distribution == "choice":
            return ()
        return _broadcast_static([p.type.shape[:p.ndim - n] for p, n in zip(params, core_ndims)]) + core

    def perform(self, node, inputs, output_storage):
        rng = copy_generator(inputs[0])  # the input generator is never advanced: outputs own their state
        xp = array_namespace(*inputs[1:])  # the draw comes back where its parameters live
        if is_cupy_namespace(xp):
            output_storage[0][0] = rng
            output_storage[1][0] = as_output(xp, self._draw_on_device(rng, inputs[1:]), node.outputs[1].type)
            return
        inputs = [inputs[0], *(to_numpy(v) for v in inputs[1:])]  # NumPy's Generator draws on the host
        size, params = (tuple(int(s) for s in inputs[1]), inputs[2:]) if self.sized else (None, inputs[1:])
        output_storage[0][0] = rng
        if DISTRIBUTIONS[self.distribution][0] is None:
            draw = _random_host.DRAWS[self.distribution](rng, size, *params, **dict(self.options))
            output_storage[1][0] = as_output(xp, np.asarray(draw), node.outputs[1].type)
            return
        method = getattr(rng, DISTRIBUTIONS[self.distribution][0])
        options = dict(self.options)
        if self.distribution == "bernoulli":
            params = [1, *params]
        if self.distribution == "choice" and len(params) == 2:
            options["p"] = params[1]
            params = params[:1]
        if self.distribution == "permutation":  # of arange(x) for an int x (a 0-d array is not one)
            draw = method(int(params[0]) if np.ndim(params[0]) == 0 else params[0])
        else:
            draw = method(*params, size=size, **options)
        output_storage[1][0] = as_output(xp, draw, node.outputs[1].type)

    def _draw_on_device(self, rng, inputs):
        """The draw made on the GPU by a CuPy generator whose seed the NumPy generator ``rng`` draws."""
        if self.distribution not in random_draws.DRAWS:
            raise NotImplementedError(f"{self}: {self.distribution} is not drawn on the GPU; give its parameters "
                                      "as host (NumPy) values to draw it with NumPy")
        import cupy  # only reached with CuPy arrays in hand

        size, params = (tuple(int(s) for s in to_numpy(inputs[0])), inputs[1:]) if self.sized else (None, inputs)
        params = [cupy.asarray(p) for p in params]
        float_dtype = self.dtype if self.dtype in ("float32", "float64") else "float64"
        device_rng = cupy.random.default_rng(int(rng.integers(2**63)))
        return random_draws.DRAWS[self.distribution](cupy, device_rng, size, *params, float_dtype=float_dtype,
                                                     **dict(self.options))

    def do_constant_folding(self, fgraph, node) -> bool:
        return False  # a draw is not a constant, whatever its parameters

    def connection_pattern(self, node):
        return [[False, False] for _ in node.inputs]  # the draw's value is not differentiable in them

    def __str__(self):
        return f"{self.distribution}_rv{{{self.dtype}}}"


def _broadcast_static(shapes) -> tuple:
    """NumPy broadcasting of static shapes (None: unknown)."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(ndim):
        sizes = [s[axis - ndim + len(s)] for s in shapes if axis - ndim + len(s) >= 0]
        known = {d for d in sizes if d is not None and d != 1}
        if None in sizes:
            out.append(next(iter(known)) if known else None)
        else:
            out.append(known.pop() if known else 1)
    return tuple(out)


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
    """Items of the vector ``a`` (or of ``arange(a)`` for an int), with probabilities ``p``."""
    a = as_tensor_variable(a)
    if a.ndim > 1:
        raise TypeError(f"choice: a must be an int or a vector, not {a} with {a.ndim} dimensions")
    params = (a,) if p is None else (a, p)
    return _draw("choice", params, size, rng, "int64" if a.ndim == 0 else a.dtype, name,
                 options=(("replace", bool(replace)),))


def permutation(x, rng=None, name=None):
    """A shuffled copy of ``x`` along its first axis, or a permutation of ``arange(x)`` for an int."""
    x = as_tensor_variable(x)
    return _draw("permutation", (x,), None, rng, "int64" if x.ndim == 0 else x.dtype, name)


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
    """Gamma of ``shape`` and ``scale``, or of ``rate = 1 / scale`` (PyTensor takes either, not both)."""
    if (rate is None) == (scale is None):
        raise ValueError("gamma: give exactly one of rate and scale")
    if rate is not None:
        scale = 1.0 / as_tensor_variable(rate)
    return _draw("gamma", (shape, scale), size, rng, dtype or config.floatX, name)


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


DRAWS = (normal, uniform, integers, bernoulli, binomial, multinomial, choice, permutation,
         multivariate_normal, dirichlet, gamma, beta, exponential, poisson, negative_binomial, nbinom, t,
         cauchy, laplace, lognormal, halfnormal, halfcauchy, categorical, geometric, hypergeometric,
         vonmises, invgamma, weibull, logistic, gumbel, pareto, triangular, chisquare, wald, betabinom)


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

    def __init__(self, seed=None):
        self.state_updates: list = []   # (generator shared variable, its new value), one per draw
        self.seed(seed)

    def seed(self, seed=None) -> None:
        """Start every draw made so far, and the draws to come, again from ``seed``."""
        self._seeds = np.random.SeedSequence(seed)
        for rng, _ in self.state_updates:
            rng.set_value(np.random.default_rng(self._seeds.spawn(1)[0]), borrow=True)

    def updates(self) -> list:
        """(generator shared variable, its new value) for every draw so far (PyTensor's name);
        ``eqgraph.function`` applies them by itself, as each generator's ``default_update``."""
        return list(self.state_updates)

    def gen(self, draw_function, *args, **kwargs):
        """``draw_function`` (one of ``DRAWS``) on a new generator of this stream."""
        rng = SharedVariable(random_generator_type, np.random.default_rng(self._seeds.spawn(1)[0]), name="rng")
        draw = draw_function(*args, rng=rng, **kwargs)
        rng.default_update = new_rng = draw.owner.outputs[0]
        self.state_updates.append((rng, new_rng))
        return draw


def _stream_method(draw_function):
    @functools.wraps(draw_function)
    def method(self, *args, **kwargs):
        return self.gen(draw_function, *args, **kwargs)

    return method


for _draw_function in DRAWS:
    setattr(RandomStream, _draw_function.__name__, _stream_method(_draw_function))


def _size_vector(size) -> Variable:
    """``size`` (an int, a tuple of ints and scalar variables, or an int vector) as an int64 vector."""
    if isinstance(size, (int, np.integer)):
        size = (size,)
    if isinstance(size, (tuple, list)) and not any(isinstance(s, Variable) for s in size):
        return constant(np.asarray(size, dtype="int64").reshape(-1))
    vec = as_tensor_variable(list(size) if isinstance(size, (tuple, list)) else size)
    return cast(vec, "int64") if vec.dtype != "int64" and vec.dtype.startswith(("int", "uint")) else vec
RandomStream.nbinom = RandomStream.negative_binomial  # PyTensor's second name for it
