"""PyTensor's distributions beyond the first eight: ``srng.gamma(...)``, ``et.random.t(..., rng=rng)``, ...

Each draw is checked against the NumPy or SciPy call PyTensor makes, from the same generator
state (the same numbers), and against its law (mean and variance within a few standard errors of
``10**5`` seeded draws); then the static type ``make_node`` gives, the broadcasting of ``size`` and
parameters, the refusal of bad parameters, and the absence of a gradient.
"""

import copy

import numpy as np
import pytest
import scipy.stats as stats

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.tensor import random, random_draws

SEED = 20261127


def draws(distribution, *args, calls=1, **kwargs):
    """``calls`` results of one compiled draw, and the generator state before the first."""
    srng = eg.RandomStream(seed=SEED)
    draw = getattr(srng, distribution)(*args, **kwargs)
    rng_var, _ = srng.state_updates[-1]
    state = copy.deepcopy(rng_var.get_value())
    f = eg.function([], draw)
    return draw, [f() for _ in range(calls)], state


# (method, args, kwargs, the NumPy or SciPy call PyTensor makes, on a generator g)
SAME_NUMBERS = [
    ("dirichlet", ([1.0, 2.0, 3.0],), dict(size=(4,)), lambda g: g.dirichlet([1.0, 2.0, 3.0], (4,))),
    ("gamma", (2.0,), dict(scale=3.0, size=(5,)), lambda g: stats.gamma.rvs(2.0, scale=3.0, size=(5,), random_state=g)),
    ("gamma", (2.0,), dict(rate=4.0, size=(5,)), lambda g: stats.gamma.rvs(2.0, scale=0.25, size=(5,), random_state=g)),
    ("beta", (2.0, 5.0), dict(size=(3,)), lambda g: g.beta(2.0, 5.0, (3,))),
    ("exponential", (2.0,), dict(size=(3,)), lambda g: g.exponential(2.0, (3,))),
    ("poisson", (4.5,), dict(size=(6,)), lambda g: g.poisson(4.5, (6,))),
    ("negative_binomial", (5, 0.3), dict(size=(4,)), lambda g: stats.nbinom.rvs(5, 0.3, size=(4,), random_state=g)),
    ("nbinom", (5, 0.3), dict(size=(4,)), lambda g: g.negative_binomial(5, 0.3, (4,))),
    ("t", (3.0, 1.0, 2.0), dict(size=(4,)), lambda g: stats.t.rvs(3.0, 1.0, 2.0, size=(4,), random_state=g)),
    ("laplace", (1.0, 2.0), dict(size=(4,)), lambda g: g.laplace(1.0, 2.0, (4,))),
    ("lognormal", (0.5, 0.25), dict(size=(4,)), lambda g: g.lognormal(0.5, 0.25, (4,))),
    ("halfnormal", (1.0, 2.0), dict(size=(4,)), lambda g: stats.halfnorm.rvs(1.0, 2.0, size=(4,), random_state=g)),
    ("halfcauchy", (1.0, 2.0), dict(size=(4,)), lambda g: stats.halfcauchy.rvs(1.0, 2.0, size=(4,), random_state=g)),
    ("geometric", (0.3,), dict(size=(5,)), lambda g: g.geometric(0.3, (5,))),
    ("hypergeometric", (7, 5, 4), dict(size=(5,)), lambda g: g.hypergeometric(7, 5, 4, (5,))),
    ("vonmises", (0.5, 2.0), dict(size=(4,)), lambda g: g.vonmises(0.5, 2.0, (4,))),
    ("invgamma", (3.0, 2.0), dict(size=(4,)), lambda g: 2.0 / g.gamma(3.0, size=(4,))),
    ("pareto", (3.0, 2.0), dict(size=(4,)), lambda g: stats.pareto.rvs(3.0, scale=2.0, size=(4,), random_state=g)),
    ("weibull", (1.5,), dict(size=(4,)), lambda g: g.weibull(1.5, (4,))),
    ("logistic", (1.0, 2.0), dict(size=(4,)), lambda g: g.logistic(1.0, 2.0, (4,))),
    ("gumbel", (1.0, 2.0), dict(size=(4,)), lambda g: stats.gumbel_r.rvs(1.0, 2.0, size=(4,), random_state=g)),
    ("triangular", (0.0, 1.0, 3.0), dict(size=(4,)), lambda g: g.triangular(0.0, 1.0, 3.0, (4,))),
    ("chisquare", (3.0,), dict(size=(4,)), lambda g: g.chisquare(3.0, (4,))),
    ("wald", (1.5, 2.0), dict(size=(4,)), lambda g: g.wald(1.5, 2.0, (4,))),
    ("betabinom", (10, 2.0, 3.0), dict(size=(4,)), lambda g: stats.betabinom.rvs(10, 2.0, 3.0, size=(4,), random_state=g)),
    ("truncexpon", (5.0, 1.0, 2.0), dict(size=(4,)),
     lambda g: stats.truncexpon.rvs(5.0, 1.0, 2.0, size=(4,), random_state=g)),
    ("gengamma", (2.0, 3.0, 1.5), dict(size=(4,)),
     lambda g: stats.gengamma.rvs(2.0 / 3.0, 3.0, scale=1.5, size=(4,), random_state=g)),
    ("rayleigh", (2.0,), dict(size=(4,)), lambda g: stats.rayleigh.rvs(scale=2.0, size=(4,), random_state=g)),
    ("integers", (np.array([0, 10]), np.array([[15], [20]])), {},
     lambda g: g.integers(np.array([0, 10]), np.array([[15], [20]]))),
]


@pytest.mark.parametrize("method, args, kwargs, numpy_call", SAME_NUMBERS, ids=[c[0] for c in SAME_NUMBERS])
@pytest.mark.filterwarnings("ignore:Gamma rate argument is deprecated:FutureWarning")  # PyTensor's warning
def test_each_draw_gives_the_numbers_pytensors_numpy_or_scipy_call_gives(method, args, kwargs, numpy_call):
    draw, (first, second), state = draws(method, *args, calls=2, **kwargs)
    expected = numpy_call(state)
    np.testing.assert_array_equal(first, expected)
    assert first.dtype == draw.dtype and first.shape == expected.shape
    assert not np.array_equal(first, second)  # the generator moved on


def test_cauchy_is_scipys_quantile_function_at_the_same_uniforms():
    _, (out,), state = draws("cauchy", 1.0, 2.0, size=(1000,))
    np.testing.assert_allclose(out, stats.cauchy.rvs(1.0, 2.0, size=(1000,), random_state=state), rtol=1e-10)


def test_batched_dirichlet_draws_each_row_as_numpy_does_one_at_a_time():
    alphas = np.array([[1.0, 2.0], [5.0, 0.5]])
    _, (out,), state = draws("dirichlet", alphas, size=(3, 2))
    expected = np.stack([[state.dirichlet(alphas[j]) for j in range(2)] for _ in range(3)])
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("method", ["cholesky", "svd", "eigh"])
def test_multivariate_normal_is_mean_plus_a_factor_of_cov_times_standard_normals(method):
    mean, cov = np.array([1.0, -2.0]), np.array([[2.0, 0.6], [0.6, 1.0]])
    _, (out,), state = draws("multivariate_normal", mean, cov, size=(3,), method=method)
    factor = {"cholesky": np.linalg.cholesky(cov),
              "svd": np.linalg.svd(cov)[0] * np.sqrt(np.linalg.svd(cov)[1]),
              "eigh": np.linalg.eigh(cov)[1] * np.sqrt(np.linalg.eigh(cov)[0])}[method]
    expected = mean + state.standard_normal((3, 2)) @ factor.T
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method", ["cholesky", "svd", "eigh"])
def test_multivariate_normal_has_the_mean_and_covariance_asked_for(method):
    mean, cov = np.array([1.0, -2.0, 0.5]), np.array([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])
    _, (out,), _ = draws("multivariate_normal", mean, cov, size=(100_000,), method=method)
    np.testing.assert_allclose(out.mean(axis=0), mean, atol=5 * np.sqrt(2.0 / 1e5))
    np.testing.assert_allclose(np.cov(out.T), cov, atol=0.03)


def test_multivariate_normal_svd_and_eigh_take_a_singular_cov_cholesky_refuses():
    cov = np.array([[1.0, 1.0], [1.0, 1.0]])
    _, (out,), _ = draws("multivariate_normal", np.zeros(2), cov, size=(1000,), method="eigh")
    np.testing.assert_allclose(out[:, 0], out[:, 1], atol=1e-6)
    with pytest.raises(np.linalg.LinAlgError):
        draws("multivariate_normal", np.zeros(2), cov, method="cholesky")
    with pytest.raises(ValueError, match="method"):
        random.multivariate_normal(np.zeros(2), cov, method="qr")


def test_categorical_follows_p_in_each_batch_row():
    p = np.array([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]])
    _, (out,), _ = draws("categorical", p, size=(100_000, 2))
    for row in range(2):
        freq = np.bincount(out[:, row], minlength=3) / 1e5
        np.testing.assert_allclose(freq, p[row], atol=5 * np.sqrt(0.25 / 1e5))


# (method, args, the SciPy law it draws from): mean and variance within a few standard errors
LAWS = [
    ("gamma", (2.0, None, 3.0), stats.gamma(2.0, scale=3.0)),
    ("beta", (2.0, 5.0), stats.beta(2.0, 5.0)),
    ("exponential", (2.0,), stats.expon(scale=2.0)),
    ("poisson", (4.5,), stats.poisson(4.5)),
    ("negative_binomial", (5, 0.3), stats.nbinom(5, 0.3)),
    ("t", (6.0, 1.0, 2.0), stats.t(6.0, 1.0, 2.0)),
    ("laplace", (1.0, 2.0), stats.laplace(1.0, 2.0)),
    ("lognormal", (0.5, 0.25), stats.lognorm(0.25, scale=np.exp(0.5))),
    ("halfnormal", (1.0, 2.0), stats.halfnorm(1.0, 2.0)),
    ("geometric", (0.3,), stats.geom(0.3)),
    ("hypergeometric", (7, 5, 4), stats.hypergeom(12, 7, 4)),
    ("vonmises", (0.0, 2.0), stats.vonmises(2.0)),  # wrapped to [-pi, pi]: the law's about mu = 0
    ("invgamma", (6.0, 2.0), stats.invgamma(6.0, scale=2.0)),
    ("weibull", (1.5,), stats.weibull_min(1.5)),
    ("logistic", (1.0, 2.0), stats.logistic(1.0, 2.0)),
    ("gumbel", (1.0, 2.0), stats.gumbel_r(1.0, 2.0)),
    ("pareto", (6.0, 2.0), stats.pareto(6.0, scale=2.0)),
    ("triangular", (0.0, 1.0, 3.0), stats.triang(1.0 / 3.0, loc=0.0, scale=3.0)),
    ("chisquare", (3.0,), stats.chi2(3.0)),
    ("wald", (1.5, 2.0), stats.invgauss(1.5 / 2.0, scale=2.0)),
    ("betabinom", (10, 2.0, 3.0), stats.betabinom(10, 2.0, 3.0)),
    ("truncexpon", (2.0, 1.0, 3.0), stats.truncexpon(2.0, 1.0, 3.0)),
    ("gengamma", (2.0, 3.0, 1.5), stats.gengamma(2.0 / 3.0, 3.0, scale=1.5)),
]


@pytest.mark.parametrize("method, args, law", LAWS, ids=[c[0] for c in LAWS])
def test_each_draw_has_its_laws_mean_and_variance(method, args, law):
    n = 100_000
    _, (out,), _ = draws(method, *args, size=(n,))
    mean, var, kurtosis = (float(v) for v in law.stats(moments="mvk"))
    assert abs(out.mean() - mean) < 5 * np.sqrt(var / n)
    assert abs(out.var() - var) < 5 * var * np.sqrt((kurtosis + 2) / n)


@pytest.mark.parametrize("method, law", [("cauchy", stats.cauchy(1.0, 2.0)), ("halfcauchy", stats.halfcauchy(1.0, 2.0))])
def test_heavy_tailed_draws_have_their_laws_quartiles(method, law):
    _, (out,), _ = draws(method, 1.0, 2.0, size=(100_000,))
    for q in (0.25, 0.5, 0.75):
        assert abs(np.mean(out <= law.ppf(q)) - q) < 5 * np.sqrt(q * (1 - q) / 1e5)


# (function, args, kwargs, the static shape make_node gives, dtype)
STATIC = [
    (random.gamma, (np.ones((2, 1)),), dict(scale=np.ones(3)), (2, 3), "float64"),
    (random.poisson, (np.ones(4),), {}, (4,), "int64"),
    (random.t, (3.0, np.zeros((2, 1)), np.ones(5)), {}, (2, 5), "float64"),
    (random.betabinom, (10, 2.0, 3.0), dict(size=(2, 3)), (2, 3), "int64"),
    (random.multivariate_normal, (np.zeros(3), np.eye(3)), {}, (3,), "float64"),
    (random.multivariate_normal, (np.zeros((4, 3)), np.eye(3)), {}, (4, 3), "float64"),
    (random.multivariate_normal, (np.zeros(3), np.stack([np.eye(3)] * 2)), dict(size=(5, 2)), (5, 2, 3), "float64"),
    (random.dirichlet, (np.ones((2, 4)),), {}, (2, 4), "float64"),
    (random.dirichlet, (np.ones(4),), dict(size=(3,)), (3, 4), "float64"),
    (random.categorical, (np.full((2, 4), 0.25),), {}, (2,), "int64"),
    (random.categorical, (np.full(4, 0.25),), dict(size=(3, 2)), (3, 2), "int64"),
    (random.hypergeometric, (7, np.array([5, 6]), 4), {}, (2,), "int64"),
    (random.integers, (np.zeros((3, 1), dtype="int64"), np.array([5, 6])), {}, (3, 2), "int64"),
]


@pytest.mark.parametrize("function, args, kwargs, shape, dtype", STATIC, ids=[c[0].__name__ for c in STATIC])
def test_static_type_and_drawn_value_have_pytensors_shape(function, args, kwargs, shape, dtype):
    rng = eg.shared(np.random.default_rng(SEED))
    draw = function(*args, rng=rng, **kwargs)
    assert draw.type.shape == shape and draw.dtype == dtype
    out = eg.function([], draw)()
    assert out.shape == shape and out.dtype == dtype


def test_a_symbolic_batched_parameter_gives_a_partly_known_shape():
    mean = et.dmatrix("mean")
    draw = random.multivariate_normal(mean, np.eye(3), rng=eg.shared(np.random.default_rng(0)))
    assert draw.type.shape == (None, None)  # the core length is the mean's, as in PyTensor
    out = eg.function([mean], draw)(np.zeros((4, 3)))
    assert out.shape == (4, 3)


def test_parameters_broadcast_against_size():
    _, (out,), _ = draws("gamma", np.array([1.0, 100.0]), scale=1.0, size=(50_000, 2))
    assert out.shape == (50_000, 2) and out[:, 1].mean() > 10 * out[:, 0].mean()
    with pytest.raises(ValueError):
        draws("gamma", np.ones(3), scale=1.0, size=(2,))
    with pytest.raises(ValueError, match="categorical"):
        draws("categorical", np.full((3, 2), 0.5), size=(2,))


def test_core_dimensions_are_checked_when_the_node_is_made():
    with pytest.raises(TypeError, match="cov must have at least 2 dimensions"):
        random.multivariate_normal(np.zeros(3), np.ones(3))
    with pytest.raises(TypeError, match="alphas must have at least 1"):
        random.dirichlet(1.0)


def test_gamma_takes_scale_or_pytensors_deprecated_rate_never_both():
    with pytest.raises(ValueError, match="Must specify scale"):
        random.gamma(1.0)
    with pytest.raises(ValueError, match="Cannot specify both rate and scale"):
        random.gamma(1.0, rate=1.0, scale=1.0)
    with pytest.warns(FutureWarning, match="Gamma rate argument is deprecated"):
        draw = random.gamma([5.0, 10.0], 2.0)
    assert draw.owner.inputs[-1].eval() == 0.5 and draw.type.shape == (2,)


BAD = [
    ("gamma", (-1.0,), dict(scale=1.0)), ("gamma", (1.0,), dict(scale=-1.0)), ("beta", (-1.0, 1.0), {}),
    ("exponential", (-1.0,), {}), ("poisson", (-1.0,), {}), ("negative_binomial", (5, 1.5), {}),
    ("t", (-1.0,), {}), ("t", (3.0, 0.0, -1.0), {}), ("cauchy", (0.0, -1.0), {}), ("laplace", (0.0, -1.0), {}),
    ("lognormal", (0.0, -1.0), {}), ("halfnormal", (0.0, -1.0), {}), ("halfcauchy", (0.0, -1.0), {}),
    ("geometric", (1.5,), {}), ("hypergeometric", (3, 2, 9), {}), ("vonmises", (0.0, -1.0), {}),
    ("invgamma", (-1.0, 1.0), {}), ("weibull", (-1.0,), {}), ("logistic", (0.0, -1.0), {}),
    ("gumbel", (0.0, -1.0), {}), ("pareto", (-1.0,), {}), ("triangular", (1.0, 0.0, 2.0), {}),
    ("chisquare", (-1.0,), {}), ("wald", (-1.0, 1.0), {}), ("betabinom", (5, -1.0, 1.0), {}),
    ("dirichlet", ([-1.0, 1.0],), {}),
]


@pytest.mark.parametrize("method, args, kwargs", BAD, ids=[c[0] for c in BAD])
def test_bad_parameters_are_refused_as_numpy_or_scipy_refuse_them(method, args, kwargs):
    with pytest.raises(ValueError):
        draws(method, *args, **kwargs)


def test_scipy_style_draws_name_the_distribution_and_parameter_they_refuse():
    with pytest.raises(ValueError, match="halfnormal: scale must be > 0"):
        draws("halfnormal", 0.0, -2.0)
    with pytest.raises(ValueError, match="pareto: b must be > 0"):
        draws("pareto", 0.0)


@pytest.mark.parametrize("method, args", [("gamma", (2.0, None, 1.0)), ("t", (3.0, 0.0, 1.0)),
                                          ("multivariate_normal", (np.zeros(2), np.eye(2)))])
def test_draws_have_no_gradient_in_their_parameters(method, args):
    x = et.dscalar("x")
    params = list(args)
    params[1 if method == "multivariate_normal" else 0] = x * params[1 if method == "multivariate_normal" else 0]
    draw = getattr(eg.RandomStream(0), method)(*params)
    with pytest.raises(NotImplementedError, match=f"{method}_rv.* has no gradient"):
        eg.grad(draw.sum(), x)


def test_explicit_generator_form_and_its_update():
    rng = eg.shared(np.random.default_rng(SEED))
    draw = random.dirichlet(np.ones(3), size=(2,), rng=rng)
    step = eg.function([], draw, updates={rng: draw.owner.outputs[0]})
    first, second = step(), step()
    np.testing.assert_array_equal(first, np.random.default_rng(SEED).dirichlet(np.ones(3), (2,)))
    assert not np.array_equal(first, second)
    frozen = eg.function([], draw, no_default_updates=True)
    np.testing.assert_array_equal(frozen(), frozen())


def test_a_draw_without_a_generator_moves_on_by_itself():
    draw = random.poisson(3.0, size=(20,))
    f = eg.function([], draw)
    assert not np.array_equal(f(), f())
    assert draw.owner.inputs[0].default_update is draw.owner.outputs[0]


def test_every_new_draw_is_a_stream_method_with_pytensors_parameter_names():
    import inspect
    for name, (_, params) in random.DISTRIBUTIONS.items():
        function = random.gamma if name == "gamma" else random.BUILDERS[name]
        assert getattr(eg.RandomStream, name).__wrapped__ is function
        names = list(inspect.signature(function).parameters)
        assert set(p for p in params if not (name == "choice" and p == "p")) <= set(names), name


# -- the GPU's draws (``random_draws``), checked on the host with NumPy as ``xp`` ----------------
def device_draw(name, *params, size=None, **options):
    gen = np.random.default_rng(SEED)
    params = [np.asarray(p) for p in params]
    return random_draws.DRAWS[name](np, gen, size, *params, float_dtype="float64", **options)


DEVICE_LAWS = [(name, (2.0, 3.0) if name == "gamma" else args, law) for name, args, law in LAWS
               if name not in ("hypergeometric", "vonmises")]


@pytest.mark.parametrize("name, args, law", DEVICE_LAWS, ids=[c[0] for c in DEVICE_LAWS])
def test_each_gpu_draw_has_its_laws_mean_and_variance(name, args, law):
    n = 100_000
    out = np.asarray(device_draw(name, *args, size=(n,)))
    mean, var, kurtosis = (float(v) for v in law.stats(moments="mvk"))
    assert out.shape == (n,)
    assert abs(out.mean() - mean) < 5 * np.sqrt(var / n)
    assert abs(out.var() - var) < 5 * var * np.sqrt((kurtosis + 2) / n)


@pytest.mark.parametrize("name, law", [("cauchy", stats.cauchy(1.0, 2.0)), ("halfcauchy", stats.halfcauchy(1.0, 2.0))])
def test_heavy_tailed_gpu_draws_have_their_laws_quartiles(name, law):
    out = device_draw(name, 1.0, 2.0, size=(100_000,))
    for q in (0.25, 0.5, 0.75):
        assert abs(np.mean(out <= law.ppf(q)) - q) < 5 * np.sqrt(q * (1 - q) / 1e5)


@pytest.mark.parametrize("method", ["cholesky", "svd", "eigh"])
def test_gpu_multivariate_normal_has_the_mean_and_covariance_asked_for(method):
    mean, cov = np.array([1.0, -2.0]), np.array([[2.0, 0.6], [0.6, 1.0]])
    out = device_draw("multivariate_normal", mean, cov, size=(100_000,), method=method)
    assert out.shape == (100_000, 2)
    np.testing.assert_allclose(out.mean(axis=0), mean, atol=5 * np.sqrt(2.0 / 1e5))
    np.testing.assert_allclose(np.cov(out.T), cov, atol=0.03)


def test_gpu_dirichlet_and_categorical_follow_their_parameters():
    alphas = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 5.0]])
    out = device_draw("dirichlet", alphas, size=(50_000, 2))
    assert out.shape == (50_000, 2, 3)
    np.testing.assert_allclose(out.sum(axis=-1), 1.0)
    np.testing.assert_allclose(out.mean(axis=0), alphas / alphas.sum(axis=-1, keepdims=True), atol=0.01)
    p = np.array([0.1, 0.2, 0.7])
    idx = device_draw("categorical", p, size=(100_000,))
    np.testing.assert_allclose(np.bincount(idx, minlength=3) / 1e5, p, atol=5 * np.sqrt(0.25 / 1e5))


DEFAULTS = {"t": (0.0, 1.0), "pareto": (1.0,)}  # the functions' defaults, which the GPU draws take as arguments
GPU_BAD = [(name, args + DEFAULTS.get(name, ())[len(args) - 1:]) for name, args, _ in BAD
           if name not in ("hypergeometric", "vonmises", "gamma")]
GPU_BAD += [("gamma", (-1.0, 1.0)), ("gamma", (1.0, -1.0)), ("dirichlet", (np.array([-1.0, 1.0]),))]


@pytest.mark.parametrize("name, args", GPU_BAD, ids=[c[0] for c in GPU_BAD])
def test_gpu_draws_refuse_bad_parameters_naming_the_distribution(name, args):
    with pytest.raises(ValueError, match=name):
        device_draw(name, *args, size=(3,))


@pytest.mark.parametrize("name", ["hypergeometric", "vonmises"])
def test_a_draw_without_a_gpu_algorithm_says_so_by_name(name):
    draw = getattr(random, name)(*([3, 4, 2] if name == "hypergeometric" else [0.0, 1.0]))
    with pytest.raises(NotImplementedError, match=f"{name} is not drawn on the GPU"):
        draw.owner.op._draw_on_device(np.random.default_rng(0), [np.asarray(v.data) for v in draw.owner.inputs[1:]])


def test_symbolic_core_and_batch_lengths_come_out_at_run_time():
    m, n = et.iscalar("m"), et.iscalar("n")
    srng = eg.RandomStream(SEED)
    mvn = srng.multivariate_normal(et.ones((m,)), et.eye(m), size=(2, n))
    assert mvn.type.shape == (2, None, None)
    out, shape = eg.function([m, n], [mvn, mvn.shape])(3, 4)
    assert out.shape == (2, 4, 3) and list(shape) == [2, 4, 3]
    dirichlet = srng.dirichlet(et.ones((m,)), size=(n,))
    assert list(eg.function([m, n], dirichlet.shape)(3, 5)) == [5, 3]


def test_batched_cov_draws_each_batch_entry_with_its_own_covariance():
    cov = np.stack([np.eye(2), 4.0 * np.eye(2)])
    _, (out,), _ = draws("multivariate_normal", np.zeros(2), cov, size=(50_000, 2))
    assert out.shape == (50_000, 2, 2)
    np.testing.assert_allclose(out.var(axis=0), [[1.0, 1.0], [4.0, 4.0]], rtol=0.05)


def test_a_float32_draw_is_float32_statically_and_at_run_time():
    draw = random.gamma(2.0, scale=1.0, size=(3,), dtype="float32", rng=eg.shared(np.random.default_rng(0)))
    assert draw.dtype == "float32" and eg.function([], draw)().dtype == np.float32
