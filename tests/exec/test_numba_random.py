"""The whole Numba function's random draws (eqgraph/exec/numba/translate_random.py): from the same
generator state, each distribution it translates draws the program's numbers bit for bit and
leaves the generator in the program's state, over 0-d, broadcast, sized, empty and non-contiguous
parameters; bad parameters make the compiled function raise (the program then names the error);
a generator that two draws read stays with the program."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.exec.numba.translate_random import DRAWS
from eqgraph.tensor.random import RandomVariable
from eqgraph.tensor.rng_type import copy_generator, random_generator_type
from test_numba_translations import _called_in_python, _kernel

pytestmark = [pytest.mark.skipif(numba_kernels.numba is None, reason="Numba is not installed"),
              pytest.mark.usefixtures("hot_at_once")]

#: distribution -> valid parameter values (the first is drawn over a vector, the others are scalars)
VALID = {
    "normal": (np.array([0.0, -1.5, 3.0]), 2.0), "uniform": (np.array([0.0, -1.5, 3.0]), 4.0),
    "integers": (np.array([0, -5, 3]), 7), "bernoulli": (np.array([0.0, 0.3, 1.0]),),
    "binomial": (np.array([0, 5, 100]), 0.4), "gamma": (np.array([0.3, 1.0, 20.0]), 2.0),
    "beta": (np.array([0.3, 1.0, 20.0]), 0.7), "exponential": (np.array([0.3, 1.0, 20.0]),),
    "poisson": (np.array([0.0, 3.0, 50.0]),), "negative_binomial": (np.array([0.5, 3.0, 40.0]), 0.3),
    "geometric": (np.array([0.05, 0.5, 1.0]),), "lognormal": (np.array([0.0, -1.5, 3.0]), 0.5),
    "laplace": (np.array([0.0, -1.5, 3.0]), 0.5), "logistic": (np.array([0.0, -1.5, 3.0]), 0.5),
    "chisquare": (np.array([0.5, 3.0, 40.0]),), "triangular": (np.array([-1.0, 0.0, 0.5]), 0.5, 2.0),
    "t": (np.array([0.5, 3.0, 40.0]), 1.0, 2.0), "halfnormal": (np.array([0.0, -1.5, 3.0]), 0.5),
    "invgamma": (np.array([0.5, 3.0, 40.0]), 2.0),
}
#: distribution -> parameter values NumPy (or SciPy's check in ``_random_host``) refuses
INVALID = {"normal": (0.0, -1.0), "uniform": (0.0, np.inf), "integers": (3, 3), "bernoulli": (1.5,),
           "binomial": (-1, 0.5), "gamma": (1.0, -2.0), "beta": (0.0, 1.0), "exponential": (-1.0,),
           "poisson": (np.nan,), "negative_binomial": (1.0, 0.0), "geometric": (1.5,),
           "lognormal": (0.0, -1.0), "laplace": (0.0, -1.0), "logistic": (0.0, -1.0), "chisquare": (0.0,),
           "triangular": (1.0, 0.0, 2.0), "t": (-1.0, 0.0, 1.0), "halfnormal": (0.0, -1.0),
           "invgamma": (-1.0, 1.0)}


def _draw_function(distribution, params, size=None, dtype=None):
    """A function of the parameters and a generator returning the draw (times one, so that the
    program has more than the draw) and the generator after it; the draw must be in Numba."""
    r = random_generator_type("r")
    inputs = [et.as_tensor_variable(p).type() for p in params]
    op = RandomVariable(distribution, dtype or DRAWS[distribution][3], size is not None)
    extra = [] if size is None else [et.as_tensor_variable(np.asarray(size, dtype="int64"))]
    new_rng, draw = op(r, *extra, *inputs, return_list=True)
    f = eg.function([r, *inputs], [draw * 1, new_rng])
    assert not _called_in_python(f), [type(n.op).__name__ for n in _called_in_python(f)]
    return f


def _same_draws(f, params, seed=5):
    """The whole function and the program draw the same numbers from the same state, and leave
    the generator in the same state (the caller's generator is never advanced)."""
    given = np.random.default_rng(seed)
    before = given.bit_generator.state
    f(copy_generator(given), *params)   # compiles
    _kernel(f)
    whole = f(given, *params)
    assert f.program.call.__globals__["last"], "the whole function did not run"
    assert given.bit_generator.state == before
    program = f.program.call.program(copy_generator(given), *params)
    assert whole[0].dtype == program[0].dtype and whole[0].shape == program[0].shape
    np.testing.assert_array_equal(whole[0], program[0])
    assert whole[1].bit_generator.state == program[1].bit_generator.state
    return whole[0]


@pytest.mark.parametrize("distribution", sorted(DRAWS))
def test_each_distribution_draws_the_programs_numbers_and_state(distribution):
    params = [np.asarray(p) for p in VALID[distribution]]
    f = _draw_function(distribution, params)
    draw = _same_draws(f, params)
    assert draw.shape == (3,)
    scalars = [np.asarray(p[-1] if k == 0 else p) for k, p in enumerate(params)]
    _same_draws(_draw_function(distribution, scalars), scalars)


@pytest.mark.parametrize("distribution", ["normal", "gamma", "binomial", "poisson"])
def test_sizes_broadcast_parameters_empty_draws_and_views(distribution):
    first, *rest = VALID[distribution]
    column = first.reshape(3, 1)
    for size, params in [((4, 3), [first, *rest]), ((2, 3, 1), [column, *rest]), ((0, 3), [first, *rest]),
                         (None, [column, *[np.full((1, 4), p) for p in rest]]), ((), [first[0], *rest])]:
        params = [np.asarray(p) for p in params]
        _same_draws(_draw_function(distribution, params, size), params)


def test_float32_and_narrow_integer_draws_and_float32_parameters():
    params = [np.array([0.5, 1.5], dtype="float32"), np.float32(2.0)]
    draw = _same_draws(_draw_function("normal", params, dtype="float32"), params)
    assert draw.dtype == np.float32
    params = [np.array([3, 4], dtype="int32"), np.float64(0.5)]
    assert _same_draws(_draw_function("binomial", params, dtype="int16"), params).dtype == np.int16


@pytest.mark.parametrize("distribution", sorted(DRAWS))
def test_parameters_numpy_refuses_make_the_function_raise(distribution):
    params = [np.asarray(p) for p in INVALID[distribution]]
    f = _draw_function(distribution, params)
    with pytest.raises((ValueError, OverflowError)):
        f(np.random.default_rng(0), *params)   # the program's error
    hot, passed = _kernel(f), f.program.call.__globals__["passed"]
    with pytest.raises(ValueError):
        hot(np.random.default_rng(0), *[p[()] for p in params], *passed)
    g = _draw_function(distribution, params, size=(0,))   # NumPy checks even where nothing is drawn
    try:
        g.program.call.program(np.random.default_rng(0), *params)
    except (ValueError, OverflowError):
        with pytest.raises(ValueError):
            _kernel(g)(np.random.default_rng(0), *[p[()] for p in params], *g.program.call.__globals__["passed"])


def test_two_draws_from_one_generator_stay_with_the_program_and_a_chain_is_translated():
    r, loc = random_generator_type("r"), et.dvector("loc")
    once, twice = et.random.normal(loc, 1.0, rng=r), et.random.normal(loc, 2.0, rng=r)
    f = eg.function([r, loc], [once * 1.0, twice * 1.0])
    assert [type(n.op).__name__ for n in _called_in_python(f)] == ["RandomVariable", "RandomVariable"]
    first = et.random.normal(loc, 1.0, rng=r)
    second = et.random.gamma(2.0, scale=loc, rng=first.owner.outputs[0])
    third = et.random.normal(loc[::-1], 1.0, rng=second.owner.outputs[0])   # a view of negative stride
    g = eg.function([r, loc], [first * 1.0, second * 1.0, third * 1.0, third.owner.outputs[0]])
    assert not _called_in_python(g)
    given = np.random.default_rng(3)
    g(copy_generator(given), np.ones(2))
    loc_value = np.array([1.0, 5.0])
    whole = g(given, loc_value)
    assert g.program.call.__globals__["last"], "the whole function did not run"
    program = g.program.call.program(given, loc_value)
    for got, want in zip(whole[:3], program[:3]):
        np.testing.assert_array_equal(got, want)
    assert whole[3].bit_generator.state == program[3].bit_generator.state


def test_categorical_draws_over_batches_sizes_and_one_category():
    p = np.array([[0.2, 0.5, 0.3], [0.0, 0.0, 1.0], [0.6, np.nan, 0.4]])
    for size, value in [(None, p), ((5, 3), p), ((4,), p[:1]), (None, p[0]), ((0,), p[0]), (None, np.ones((2, 1)))]:
        r, probabilities = random_generator_type("r"), et.as_tensor_variable(value).type()
        draw = et.random.categorical(probabilities, size=size, rng=r)
        f = eg.function([r, probabilities], [draw * 1, draw.owner.outputs[0]])
        assert not _called_in_python(f)
        _same_draws(f, [value])
    g = eg.function([r, probabilities], et.random.categorical(probabilities, size=(3,), rng=r) * 1)
    with pytest.raises(ValueError):   # a batch of 2 the size of 3 does not cover
        g(np.random.default_rng(0), np.ones((2, 1)))
    with pytest.raises(ValueError):
        _kernel(g)(np.random.default_rng(0), np.ones((2, 1)), *g.program.call.__globals__["passed"])
