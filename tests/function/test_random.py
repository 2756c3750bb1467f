"""``eqgraph.RandomStream``: NumPy Generator draws whose state is a shared variable updated
by each call."""

import copy
import pickle

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et

# (stream method, its arguments, the NumPy Generator call that must give the same numbers)
CASES = [
    ("normal", dict(loc=1.0, scale=2.0, size=(2, 3)), lambda g: g.normal(1.0, 2.0, (2, 3))),
    ("uniform", dict(low=-1.0, high=3.0, size=(4,)), lambda g: g.uniform(-1.0, 3.0, (4,))),
    ("integers", dict(low=2, high=9, size=(5,)), lambda g: g.integers(2, 9, (5,))),
    ("integers", dict(low=7, size=(3,)), lambda g: g.integers(0, 7, (3,))),
    ("bernoulli", dict(p=0.3, size=(6,)), lambda g: g.binomial(1, 0.3, (6,))),
    ("binomial", dict(n=10, p=0.4, size=(2, 2)), lambda g: g.binomial(10, 0.4, (2, 2))),
    ("multinomial", dict(n=20, pvals=[0.2, 0.3, 0.5], size=(4,)),
     lambda g: g.multinomial(20, [0.2, 0.3, 0.5], (4,))),
    ("choice", dict(a=10, size=(3,), replace=False), lambda g: g.choice(10, (3,), replace=False)),
    ("choice", dict(a=np.array([1.5, 2.5, 3.5]), size=(5,), p=[0.1, 0.1, 0.8]),
     lambda g: g.choice(np.array([1.5, 2.5, 3.5]), (5,), p=[0.1, 0.1, 0.8])),
    ("permutation", dict(x=6), lambda g: g.permutation(6)),
    ("permutation", dict(x=np.arange(8.0).reshape(4, 2)), lambda g: g.permutation(np.arange(8.0).reshape(4, 2))),
    ("normal", dict(loc=np.zeros(3), scale=np.ones((2, 1))), lambda g: g.normal(np.zeros(3), np.ones((2, 1)))),
]


@pytest.mark.parametrize("method, kwargs, numpy_call", CASES)
def test_each_distribution_draws_what_numpy_draws_from_the_same_state(method, kwargs, numpy_call):
    srng = eg.RandomStream(seed=3)
    draw = getattr(srng, method)(**kwargs)
    rng_var, _ = srng.state_updates[-1]
    f = eg.function([], draw)
    for _ in range(2):   # the second call starts from the state the first one stored
        expected = numpy_call(copy.deepcopy(rng_var.get_value()))
        out = f()
        assert out.shape == expected.shape and out.dtype == draw.dtype
        np.testing.assert_array_equal(out, expected)
    assert all(s is None or s == d for s, d in zip(draw.type.shape, out.shape))


def test_the_same_seed_gives_the_same_stream_and_calls_move_it_on():
    def stream(seed):
        srng = eg.RandomStream(seed)
        f = eg.function([], [srng.normal(size=(3,)), srng.uniform(size=(2,))])
        return [np.concatenate(f()) for _ in range(3)]

    a, b, c = stream(7), stream(7), stream(8)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], a[1])        # the default update was applied
    assert not np.array_equal(a[0], c[0])


def test_two_draws_are_never_merged_but_one_draw_used_twice_is_one():
    srng = eg.RandomStream(0)
    a, b = srng.normal(size=(4,)), srng.normal(size=(4,))
    f = eg.function([], [a - b, a - a, a])
    diff, zero, _ = f()
    assert np.all(diff != 0) and np.all(zero == 0)
    assert not eg.equivalent(a, b)


def test_size_may_be_symbolic():
    srng = eg.RandomStream(1)
    n, m = et.lscalar("n"), et.iscalar("m")
    draw = srng.uniform(size=(n, m, 2))
    assert draw.type.shape == (None, None, 2)
    f = eg.function([n, m], draw)
    assert f(3, 4).shape == (3, 4, 2) and f(1, 1).shape == (1, 1, 2)
    shape = et.lvector("shape")
    with pytest.raises(TypeError, match="known length"):
        srng.normal(size=shape)


def test_no_default_updates_seed_and_explicit_updates():
    srng = eg.RandomStream(5)
    draw = srng.normal(size=(2,))
    frozen = eg.function([], draw, no_default_updates=True)
    np.testing.assert_array_equal(frozen(), frozen())
    first = eg.function([], draw)()
    srng.seed(5)
    np.testing.assert_array_equal(eg.function([], draw)(), first)
    rng, new_rng = srng.state_updates[0]
    f = eg.function([], draw, updates={rng: rng})   # an explicit update wins over the default
    np.testing.assert_array_equal(f(), f())


def test_the_generator_in_the_shared_variable_is_never_advanced_in_place():
    srng = eg.RandomStream(2)
    draw = srng.integers(100, size=(3,))
    rng, _ = srng.state_updates[0]
    before = rng.get_value(borrow=True)
    state = copy.deepcopy(before.bit_generator.state)
    eg.function([], draw)()
    assert before.bit_generator.state == state and rng.get_value(borrow=True) is not before


def test_a_pickled_function_continues_the_stream():
    srng = eg.RandomStream(11)
    f = eg.function([], srng.normal(size=(3,)))
    f()
    g = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(g(), f())


def test_random_initialisation_of_a_trained_weight():
    srng = eg.RandomStream(0)
    w = eg.shared(np.zeros(3), name="w")
    init = eg.function([], [], updates={w: srng.normal(0, 0.1, size=(3,))})
    init()
    assert np.all(w.get_value() != 0) and np.abs(w.get_value()).max() < 1


def test_updates_lists_each_draws_generator_and_its_new_value():
    srng = eg.RandomStream(0)
    a, b = srng.normal(), srng.uniform()
    pairs = srng.updates()
    assert len(pairs) == 2 and all(rng.default_update is new for rng, new in pairs)
    assert pairs[0][1].owner is a.owner and pairs[1][1].owner is b.owner


def test_pytensor_style_draws_on_an_explicit_generator():
    generator = np.random.default_rng(4)
    rng = eg.shared(generator, name="rng")
    draw = et.random.normal(0, 1, size=(3,), rng=rng)
    frozen = eg.function([], draw)        # an explicit generator has no default update
    np.testing.assert_array_equal(frozen(), frozen())
    f = eg.function([], draw, updates={rng: draw.owner.outputs[0]})
    reference = np.random.default_rng(4)
    np.testing.assert_array_equal(f(), reference.normal(0, 1, (3,)))
    np.testing.assert_array_equal(f(), reference.normal(0, 1, (3,)))
    assert generator.bit_generator.state == np.random.default_rng(4).bit_generator.state  # a copy was shared
    with pytest.raises(TypeError, match="rng must be a generator shared variable"):
        et.random.uniform(rng=eg.shared(np.zeros(2)))


def test_a_draw_without_a_generator_gets_one_that_moves_on():
    f = eg.function([], et.random.integers(10**9, size=(2,)))
    assert not np.array_equal(f(), f())
