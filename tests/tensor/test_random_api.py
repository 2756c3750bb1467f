"""PyTensor's public API of a random variable: ``normal`` etc. are ``RandomVariable`` ops with
``rng_fn``, ``size_param``/``dist_params``/``rng_param``, ``_infer_shape``, ``signature``..."""

import copy

import numpy as np
import pytest
import scipy.stats as stats

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.tensor import random
from eqgraph.tensor.random import RandomVariable

SEED = 20240611


def test_each_distribution_is_an_op_that_builds_its_draw():
    for name in random.DISTRIBUTIONS:
        op = getattr(random, "_gamma" if name == "gamma" else name)
        assert isinstance(op, RandomVariable) and op.name == name == op.__name__
    draw = random.normal(1.0, 2.0, size=(2, 3))
    assert isinstance(draw.owner.op, RandomVariable) and draw.type.shape == (2, 3)
    assert draw.owner.op(1.0, 2.0).owner.op.distribution == "normal"  # a node's op builds draws too


def test_a_node_names_its_generator_size_and_parameters():
    rng = eg.shared(np.random.default_rng(SEED))
    loc = et.dvector("loc")
    sized = random.normal(loc, 2.0, size=(3,), rng=rng)
    op = sized.owner.op
    assert op.rng_param(sized.owner) is rng
    np.testing.assert_array_equal(op.size_param(sized.owner).eval(), [3])
    assert op.dist_params(sized.owner)[0] is loc and len(op.dist_params(sized.owner)) == 2
    unsized = random.normal(loc, 2.0, rng=rng)
    assert unsized.owner.op.size_param(unsized.owner) is None


@pytest.mark.parametrize("name, params, size", [
    ("normal", (1.0, 2.0), (3,)), ("normal", (np.zeros((2, 1)), np.ones(3)), None),
    ("poisson", (4.0,), (2, 2)), ("dirichlet", (np.ones(3),), (4,)),
    ("multivariate_normal", (np.zeros(2), np.eye(2)), (3,)), ("integers", (0, 10), (5,)),
])
def test_rng_fn_draws_what_the_graph_draws_and_advances_the_generator(name, params, size):
    op = getattr(random, name)
    rng = np.random.default_rng(SEED)
    expected = eg.function([], op(*params, size=size, rng=eg.shared(copy.deepcopy(rng))))()
    drawn = op.rng_fn(rng, *params, size)
    np.testing.assert_array_equal(drawn, expected)
    assert not np.array_equal(op.rng_fn(rng, *params, size=size), drawn)  # rng moved on


def test_rng_fn_is_numpys_method_for_numpys_distributions():
    rng = np.random.default_rng(SEED)
    np.testing.assert_array_equal(random.normal.rng_fn(copy.deepcopy(rng), 0.0, 1.0, (4,)),
                                  rng.normal(0.0, 1.0, (4,)))
    with pytest.raises(TypeError, match=r"rng_fn takes \(rng, loc, scale, size\)"):
        random.normal.rng_fn(rng, 0.0, 1.0, 2.0, (4,))


def test_rng_fn_size_must_cover_the_batch_as_in_pytensor():
    n, p = np.array([10, 20]), np.array([[0.9, 0.1], [0.1, 0.9]])
    with pytest.raises(ValueError, match="operands could not be broadcast together"):
        random.multinomial.rng_fn(None, n, p, size=(1,))
    with pytest.raises(ValueError, match="input operand has more dimensions than allowed"):
        random.multinomial.rng_fn(None, np.broadcast_to(n, (5, 2)), p, size=(2,))
    with pytest.raises(ValueError, match="`size` is incompatible with the shape of `p`"):
        random.categorical.rng_fn(np.random.default_rng(SEED), p, size=(1,))


@pytest.mark.parametrize("make", [
    lambda m: (random.normal, (et.zeros((m,)), 1.0), None),
    lambda m: (random.normal, (et.zeros((m, 1)), et.ones((m + 1,))), None),
    lambda m: (random.normal, (1.0, 2.0), (2, m)),
    lambda m: (random.dirichlet, (et.ones((m, m + 1)),), None),
    lambda m: (random.dirichlet, (et.ones((m + 1,)),), (m + 2, m)),
    lambda m: (random.multivariate_normal, (et.zeros((m,)), et.eye(m)), (2,)),
    lambda m: (random.choice, (et.ones((m + 1, m)),), (2,)),
    lambda m: (random.permutation, (m,), (3,)),
])
def test_infer_shape_is_the_drawn_shape(make):
    m = et.iscalar("m")
    op, params, size = make(m)
    draw = op(*params, size=size)
    node = draw.owner
    shape = et.as_tensor_variable(node.op._infer_shape(node.op.size_param(node), node.op.dist_params(node)))
    shape_value, value = eg.function([m], [shape, draw])(3)
    assert tuple(shape_value) == value.shape


def test_core_dimensions_signature_and_method():
    assert random.normal.signature == "(),()->()" and random.normal.ndim_supp == 0
    assert random.normal.ndims_params == (0, 0)
    assert random.multivariate_normal.signature == "(n),(n,n)->(n)"
    assert random.multivariate_normal.ndim_supp == 1 and random.multivariate_normal.ndims_params == (1, 2)
    assert random.categorical.ndim_supp == 0 and random.categorical.ndims_params == (1,)
    draw = random.multivariate_normal(np.zeros(2), np.eye(2), method="svd")
    assert draw.owner.op.method == "svd" and random.multivariate_normal.method == "cholesky"
    with pytest.raises(AttributeError, match="only multivariate_normal has a method"):
        random.normal.method
    with pytest.raises(NotImplementedError, match="depends on the number of dimensions"):
        random.permutation.signature


def test_the_op_keeps_its_options_when_called():
    draw = random.multivariate_normal(np.zeros(2), np.eye(2), method="eigh")
    assert draw.owner.op(np.zeros(2), np.eye(2)).owner.op.method == "eigh"


def test_batched_permutation_shuffles_each_entry_in_c_order():
    rng = np.random.default_rng(SEED)
    draw = random.permutation(np.arange(4.0), size=(2, 3), rng=eg.shared(copy.deepcopy(rng)))
    assert draw.type.shape == (2, 3, 4) and draw.dtype == "float64"
    expected = np.stack([rng.permutation(np.arange(4.0)) for _ in range(6)]).reshape(2, 3, 4)
    np.testing.assert_array_equal(draw.eval(), expected)
    assert random.permutation(5, size=(2,)).eval().shape == (2, 5)


def test_choice_takes_the_rows_of_a_matrix():
    rng = np.random.default_rng(SEED)
    a = np.arange(6).reshape(3, 2)
    draw = random.choice(a, size=(4,), p=[0.2, 0.3, 0.5], rng=eg.shared(copy.deepcopy(rng)))
    assert draw.type.shape == (4, 2)
    np.testing.assert_array_equal(draw.eval(), rng.choice(a, size=(4,), p=[0.2, 0.3, 0.5]))
    np.testing.assert_array_equal(random.choice([[1, 2, 3]], size=(), replace=False).eval(), [1, 2, 3])


@pytest.mark.parametrize("name, params, scipy_draw", [
    ("truncexpon", (np.array([[2.0], [5.0]]), 1.0, np.array([1.0, 2.0, 3.0])),
     lambda g, b, loc, scale: stats.truncexpon.rvs(b, loc, scale, random_state=g)),
    ("gengamma", (np.array([[2.0], [5.0]]), 3.0, np.array([1.0, 2.0, 3.0])),
     lambda g, alpha, p, lambd: stats.gengamma.rvs(alpha / p, p, scale=lambd, random_state=g)),
])
def test_new_distributions_broadcast_their_parameters_as_scipy(name, params, scipy_draw):
    rng = np.random.default_rng(SEED)
    draw = getattr(random, name)(*params, rng=eg.shared(copy.deepcopy(rng)))
    assert draw.type.shape == (2, 3) and draw.dtype == "float64"
    np.testing.assert_array_equal(draw.eval(), scipy_draw(rng, *params))
    with pytest.raises(ValueError, match=f"{name}: .* must be > 0"):
        getattr(random, name)(-1.0, 1.0, 1.0).eval()


def test_rayleigh_is_the_root_of_a_chisquare_scaled_and_takes_its_shape_from_scale():
    rng = np.random.default_rng(SEED)
    draw = random.rayleigh(np.array([1.0, 2.0, 4.0]), rng=eg.shared(copy.deepcopy(rng)))
    np.testing.assert_array_equal(draw.eval(), stats.rayleigh.rvs(scale=[1.0, 2.0, 4.0], random_state=rng))
    stream = eg.RandomStream(SEED)
    f = eg.function([], stream.rayleigh(2.0, size=(3,)))
    assert not np.array_equal(f(), f())  # the stream's generator moves on


def test_standard_normal_is_numpys():
    rng = np.random.default_rng(SEED)
    draw = random.standard_normal(size=(3,), rng=eg.shared(copy.deepcopy(rng)))
    np.testing.assert_array_equal(draw.eval(), rng.standard_normal((3,)))


def test_random_stream_makes_its_generators_with_rng_ctor():
    made = []

    def ctor(seed):
        made.append(seed)
        return np.random.default_rng(seed)

    stream = eg.RandomStream(SEED, rng_ctor=ctor)
    eg.function([], stream.normal(size=(2,)))()
    assert len(made) == 1 and stream.rng_ctor is ctor
    with pytest.raises(TypeError, match="rng_ctor must make a NumPy Generator"):
        eg.RandomStream(SEED, rng_ctor=3)


def test_the_gpu_algorithm_shuffles_each_entry_of_size():
    from eqgraph.tensor import random_draws  # checked with NumPy standing in for CuPy
    gen = np.random.default_rng(SEED)
    rows = random_draws.permutation(np, gen, (2, 3), np.arange(4.0), float_dtype="float64")
    assert rows.shape == (2, 3, 4)
    np.testing.assert_array_equal(np.sort(rows, axis=-1), np.broadcast_to(np.arange(4.0), (2, 3, 4)))
    ints = random_draws.permutation(np, gen, (2,), np.asarray(5), float_dtype="float64")
    np.testing.assert_array_equal(np.sort(ints, axis=-1), [np.arange(5)] * 2)


def test_eval_passes_functions_keyword_arguments_on():
    draw = random.multivariate_normal(np.zeros(2), np.eye(2), size=(5,), method="svd",
                                      rng=eg.shared(np.random.default_rng(SEED)))
    assert draw.eval(mode=None).shape == (5, 2)
    x = et.dscalar("x")
    assert (x * 2).eval({x: 3.0}, mode="FAST_RUN") == 6.0
    with pytest.raises(TypeError, match="unexpected keyword argument 'nonsense'"):
        (x * 2).eval({x: 3.0}, nonsense=1)


def test_make_node_takes_pytensors_size_first_form():
    rng = eg.shared(np.random.default_rng(SEED))
    unsized = random.normal.make_node(rng, None, 0.0, 1.0)
    assert unsized.op.size_param(unsized) is None and unsized.outputs[1].type.shape == ()
    assert unsized.outputs[1].dtype == eg.config.floatX and unsized.op.dtype == eg.config.floatX
    sized = random.normal.make_node(rng, (2, 3), np.zeros(3), 1.0)
    assert sized.outputs[1].type.shape == (2, 3)
    assert random.poisson.make_node(rng, 4.0).outputs[1].type.shape == ()  # eqgraph's form, no size
    with pytest.raises(TypeError, match=r"takes \(rng, size, loc, scale\)"):
        random.normal.make_node(rng, None, 0.0, 1.0, 2.0)
