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
from eqgraph.tensor import _random_host, random_draws
from eqgraph.tensor.basic import as_tensor_variable, constant
from eqgraph.tensor.shape import Shape, shape_of, static_values
from eqgraph.tensor.elemwise import ELEMWISE_OPS, cast
from eqgraph.tensor.numpy_compositions import broadcast_shape
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
        ("chisquare", ("df",)), ("wald", ("mean", "scale")), ("betabinom", ("n", "a", "b")),
        ("truncexpon", ("b", "loc", "scale")), ("gengamma", ("alpha", "p", "lambd")))},
}

#: the keyword arguments of a distribution's function that are options of its op (``options``)
OPTIONS = {"choice": ("replace",), "multivariate_normal": ("method",)}

#: the generalized-ufunc signatures of the distributions with core dimensions (PyTensor's)
SIGNATURES = {
    "multinomial": "(),(p)->(p)",
    "multivariate_normal": "(n),(n,n)->(n)",
    "dirichlet": "(a)->(a)",
    "categorical": "(p)->()",
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

    def __init__(self, distribution: str, dtype: str, sized: bool = False, options: tuple = ()):
        if distribution not in DISTRIBUTIONS:
            raise ValueError(f"unknown distribution {distribution!r}; known: {', '.join(DISTRIBUTIONS)}")
        self.distribution, self.dtype, self.sized, self.options = distribution, dtype, bool(sized), tuple(options)

    def make_node(self, rng, *inputs):
        """``(rng, [size], *params)``; PyTensor's ``(rng, size, *params)``, whose ``size`` may be
        None, is taken too (the node's op then says whether it has a size)."""
        if not (isinstance(rng, Variable) and isinstance(rng.type, RandomGeneratorType)):
            raise TypeError(f"{self}: the first input must be a random generator variable, not {rng!r}")
        names = DISTRIBUTIONS[self.distribution][1]
        if self.distribution != "choice" and len(inputs) == len(names) + 1:
            size, params = inputs[0], inputs[1:]
        elif self.sized:
            size, params = inputs[0], inputs[1:]
        else:
            size, params = None, inputs
        if self.distribution != "choice" and len(params) != len(names):
            raise TypeError(f"{self}: takes (rng, size, {', '.join(names)}), not {len(inputs) + 1} inputs")
        dtype = config.floatX if self.dtype == "floatX" else self.dtype
        op = self
        if (size is not None) != self.sized or dtype != self.dtype:
            op = RandomVariable(self.distribution, dtype, size is not None, self.options)
        size = None if size is None else _size_vector(size)
        params = [as_tensor_variable(v) for v in params]
        draw = TensorType(dtype, op._static_shape(size, params))()
        return Apply(op, [rng, *([] if size is None else [size]), *params], [rng.type(), draw])

    def _static_shape(self, size, params) -> tuple:
        """PyTensor's: ``size`` (or the parameters' broadcast batch shape) then the core dimension."""
        if self.distribution in ("choice", "permutation"):
            x = params[0]
            core = x.type.shape[1:] if self.distribution == "choice" else (None,) if x.ndim == 0 else x.type.shape
            return (() if size is None else self._size_static(size)) + core
        core_ndims, core_param = CORE.get(self.distribution, ((0,) * len(params), None))
        for param, ndim, name in zip(params, core_ndims, DISTRIBUTIONS[self.distribution][1]):
            if param.ndim < ndim:
                raise TypeError(f"{self}: {name} must have at least {ndim} dimensions, not {param} of type {param.type}")
        core = () if core_param is None else params[core_param].type.shape[-1:]
        if size is not None:
            return self._size_static(size) + core
        return _broadcast_static([p.type.shape[:p.ndim - n] for p, n in zip(params, core_ndims)]) + core

    def _size_static(self, size) -> tuple:
        if size.ndim != 1 or size.type.shape[0] is None or size.dtype not in ("int8", "int16", "int32", "int64"):
            raise TypeError(f"{self}: size must be a tuple of ints or an int vector of known length, "
                            f"not {size} of type {size.type}")
        return _static_size(size)

    def perform(self, node, inputs, output_storage):
        rng = copy_generator(inputs[0])  # the input generator is never advanced: outputs own their state
        xp = array_namespace(*inputs[1:])  # the draw comes back where its parameters live
        output_storage[0][0] = rng
        if is_cupy_namespace(xp):
            output_storage[1][0] = as_output(xp, self._draw_on_device(rng, inputs[1:]), node.outputs[1].type)
            return
        inputs = [to_numpy(v) for v in inputs[1:]]  # NumPy's Generator draws on the host
        size, params = (tuple(int(s) for s in inputs[0]), inputs[1:]) if self.sized else (None, inputs)
        output_storage[1][0] = as_output(xp, np.asarray(self._draw_numpy(rng, size, params)), node.outputs[1].type)

    def _draw_numpy(self, rng, size, params):
        """The draw from NumPy's generator ``rng`` (advanced in place), before the cast to ``dtype``."""
        options = dict(self.options)
        if DISTRIBUTIONS[self.distribution][0] is None:
            return _random_host.DRAWS[self.distribution](rng, size, *params, **options)
        if self.distribution == "permutation":
            return _permutation(rng, size, params[0])
        if self.distribution == "bernoulli":
            params = [1, *params]
        if self.distribution == "choice" and len(params) == 2:
            options["p"] = params[1]
            params = params[:1]
        if self.distribution == "multinomial" and size is not None:
            # NumPy would broadcast a batch of n or pvals against size; PyTensor requires size to cover it
            n, pvals = params
            params = [np.broadcast_to(n, size), np.broadcast_to(pvals, (*size, np.shape(pvals)[-1]))]
        return getattr(rng, DISTRIBUTIONS[self.distribution][0])(*params, size=size, **options)

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

    # -- PyTensor's public API of a RandomVariable ----------------------------------------------
    def __call__(self, *params, **kwargs):
        """The symbolic draw, PyTensor's ``normal(loc, scale, size=None, rng=None, dtype=None, name=None)``:
        this distribution's function of this module, with this op's dtype unless ``dtype`` is given."""
        if params and isinstance(params[0], Variable) and isinstance(params[0].type, RandomGeneratorType):
            return super().__call__(*params, **kwargs)  # the node form, (rng, [size], *params)
        build = BUILDERS[self.distribution]
        for option, value in self.options:
            kwargs.setdefault(option, value)
        if "dtype" in inspect.signature(build).parameters and kwargs.get("dtype") is None:
            kwargs["dtype"] = config.floatX if self.dtype == "floatX" else self.dtype
        return build(*params, **kwargs)

    @property
    def name(self) -> str:
        """The distribution's name, which is also the NumPy ``Generator`` method PyTensor names it after."""
        return self.distribution

    @property
    def __name__(self) -> str:  # the name of the function this op stands in for
        return self.distribution

    @property
    def ndims_params(self) -> tuple:
        """Each parameter's number of core dimensions (0 for an elementwise parameter)."""
        self._core_known("ndims_params")
        return CORE.get(self.distribution, ((0,) * len(DISTRIBUTIONS[self.distribution][1]), None))[0]

    @property
    def ndim_supp(self) -> int:
        """The draw's number of core dimensions: 1 for a vector-valued distribution, else 0."""
        self._core_known("ndim_supp")
        return int(CORE.get(self.distribution, ((), None))[1] is not None)

    @property
    def signature(self) -> str:
        """The generalized-ufunc signature of one draw, PyTensor's ``"(),()->()"`` form."""
        self._core_known("signature")
        if self.distribution in SIGNATURES:
            return SIGNATURES[self.distribution]
        return ",".join("()" for _ in DISTRIBUTIONS[self.distribution][1]) + "->()"

    def _core_known(self, attribute: str) -> None:
        if self.distribution in ("choice", "permutation"):
            raise NotImplementedError(f"{self}: {attribute} depends on the number of dimensions of the node's "
                                      f"first parameter; read node.inputs instead")

    @property
    def method(self) -> str:
        """``multivariate_normal``'s factorization of ``cov``: "cholesky", "svd" or "eigh"."""
        if self.distribution != "multivariate_normal":
            raise AttributeError(f"{self}: only multivariate_normal has a method")
        return dict(self.options)["method"]

    def rng_param(self, node) -> Variable:
        """The generator input of ``node``, a draw of this op."""
        return node.inputs[0]

    def size_param(self, node):
        """The ``size`` input of ``node`` (an int64 vector), or None where the draw was given none
        (its shape is then its parameters' broadcast shape)."""
        return node.inputs[1] if self.sized else None

    def dist_params(self, node) -> list:
        """The distribution's parameters among ``node``'s inputs, in this op's order."""
        return list(node.inputs[2 if self.sized else 1:])

    def rng_fn(self, rng, *args, **kwargs):
        """The draw PyTensor's ``rng_fn(rng, *dist_params, size)`` makes: NumPy (or SciPy) values
        from the NumPy ``Generator`` ``rng``, which is advanced in place; ``size`` may be the
        last positional argument or a keyword, and None gives the parameters' broadcast shape."""
        count = len(DISTRIBUTIONS[self.distribution][1])
        if self.distribution == "choice":
            count = len(args) - ("size" not in kwargs and len(args) > 1)
        if "size" in kwargs or len(args) <= count:
            params, size = args, kwargs.pop("size", None)
        else:
            params, size = args[:-1], args[-1]
        if len(params) != count or set(kwargs) - set(dict(self.options)):
            names = ", ".join(DISTRIBUTIONS[self.distribution][1])
            raise TypeError(f"{self}.rng_fn takes (rng, {names}, size), not {len(params)} parameters "
                            f"and the keywords {sorted(kwargs)}")
        size = None if size is None else tuple(int(s) for s in np.atleast_1d(size))
        op = RandomVariable(self.distribution, self.dtype, self.sized, tuple({**dict(self.options), **kwargs}.items()))
        return op._draw_numpy(rng, size, [np.asarray(p) for p in params])

    def _infer_shape(self, size, dist_params, param_shapes=None) -> tuple:
        """PyTensor's: the symbolic shape of a draw with these ``size`` (None or an int vector of
        known length) and parameters, ``param_shapes`` their shapes where known better."""
        params = [as_tensor_variable(p) for p in dist_params]
        shapes = [tuple(s) for s in param_shapes] if param_shapes is not None else [shape_of(p) for p in params]
        if self.distribution in ("choice", "permutation"):
            return self._sampling_shape(size, params[0], shapes[0])
        core_ndims, core_param = CORE.get(self.distribution, ((0,) * len(params), None))
        core = () if core_param is None else tuple(shapes[core_param][-1:])
        if size is not None:
            return _size_entries(self, size) + core
        batches = [s[:len(s) - n] for s, n in zip(shapes, core_ndims)]
        return tuple(broadcast_shape(*batches, arrays_are_shapes=True)) + core

    def _sampling_shape(self, size, x, x_shape) -> tuple:
        """``choice``'s ``size + a.shape[1:]`` and ``permutation``'s ``size + x.shape`` (``(x,)`` for an int)."""
        if self.distribution == "choice":
            return (() if size is None else _size_entries(self, size)) + tuple(x_shape[1:])
        core = (x,) if x.ndim == 0 else tuple(x_shape)
        return (() if size is None else _size_entries(self, size)) + core


def _size_entries(op, size) -> tuple:
    size = as_tensor_variable(size)
    if size.ndim != 1 or size.type.shape[0] is None:
        raise TypeError(f"{op}: size must be an int vector of known length, not {size} of type {size.type}")
    return tuple(size[i] for i in range(size.type.shape[0]))


def _permutation(rng, size, x):
    """``x`` shuffled along its first axis (``arange(x)`` for an int ``x``); with ``size``, one
    independent shuffle per entry of ``size``, in C order (PyTensor's batched permutation)."""
    if size is None:
        return rng.permutation(int(x) if x.ndim == 0 else x)
    core = (int(x),) if x.ndim == 0 else x.shape
    out = np.empty((*size, *core), dtype="int64" if x.ndim == 0 else x.dtype)
    for index in np.ndindex(*size):
        out[index] = rng.permutation(int(x) if x.ndim == 0 else x)
    return out


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
BUILDERS = {**{f.__name__: f for f in DRAWS if f.__name__ in DISTRIBUTIONS}, "gamma": _gamma_draw}


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


def _size_vector(size) -> Variable:
    """``size`` (an int, a tuple of ints and scalar variables, or an int vector) as an int64 vector."""
    if isinstance(size, (int, np.integer)):
        size = (size,)
    if isinstance(size, (tuple, list)) and not any(isinstance(s, Variable) for s in size):
        return constant(np.asarray(size, dtype="int64").reshape(-1))
    vec = as_tensor_variable(list(size) if isinstance(size, (tuple, list)) else size)
    return cast(vec, "int64") if vec.dtype != "int64" and vec.dtype.startswith(("int", "uint")) else vec
RandomStream.nbinom = RandomStream.negative_binomial  # PyTensor's second name for it
