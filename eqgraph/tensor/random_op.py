"""The ``RandomVariable`` op, as PyTensor's: one node per draw, taking a generator and giving a new
one with the values, and read through its op (``rng_fn``, ``size_param``, ``dist_params``,
``signature``, ...). ``random.py`` builds the draws and the streams on it; its docstring says how
generators and updates work.
"""

from __future__ import annotations

import inspect

import numpy as np

from eqgraph.settings import config
from eqgraph.tensor import _random_host, random_draws
from eqgraph.tensor.basic import as_tensor_variable, constant
from eqgraph.tensor.shape import Shape, shape_of, static_values
from eqgraph.tensor.elemwise import cast
from eqgraph.tensor.numpy_compositions import broadcast_shape
from eqgraph.tensor.rng_type import RandomGeneratorType, copy_generator
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Apply, Variable
from eqgraph.terms.op import Op
from eqgraph.xp import array_namespace, as_output, is_cupy_namespace, to_numpy

#: per distribution: (NumPy Generator method, parameter names); the distributions without a

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

#: distribution -> the function of ``random.py`` that builds its draw (``RandomVariable.__call__``);
#: ``random.py`` fills it, as it defines them
BUILDERS: dict = {}

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


def _size_vector(size) -> Variable:
    """``size`` (an int, a tuple of ints and scalar variables, or an int vector) as an int64 vector."""
    if isinstance(size, (int, np.integer)):
        size = (size,)
    if isinstance(size, (tuple, list)) and not any(isinstance(s, Variable) for s in size):
        return constant(np.asarray(size, dtype="int64").reshape(-1))
    vec = as_tensor_variable(list(size) if isinstance(size, (tuple, list)) else size)
    return cast(vec, "int64") if vec.dtype != "int64" and vec.dtype.startswith(("int", "uint")) else vec
