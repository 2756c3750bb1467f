"""``eg.until``: a scan that stops once its condition holds (Aesara's while loop)."""

import pickle

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.grad import NullTypeGradError


def doubling_until_over(limit):
    """x, 2x, 4x, ... up to the first value over ``limit`` (at most 50 steps)."""
    x = et.dscalar("x")
    values, updates = eg.scan(lambda prev: (prev * 2, eg.until(prev * 2 > limit)),
                              outputs_info=x, n_steps=50)
    return x, values, updates


def test_the_loop_stops_at_the_first_step_whose_condition_holds():
    x, values, updates = doubling_until_over(100.0)
    assert updates == {} and values.type.shape == (None,)   # its length is known at run time only
    f = eg.function([x], values)
    np.testing.assert_array_equal(f(3.0), [6.0, 12.0, 24.0, 48.0, 96.0, 192.0])
    np.testing.assert_array_equal(f(200.0), [400.0])         # the first step already stops
    assert len(f(1e-300)) == 50                              # n_steps bounds it


def test_until_with_sequences_updates_and_several_outputs():
    xs = et.dvector("xs")
    total = eg.shared(0.0, "total")

    def step(x, acc):
        new = acc + x
        return [new, new * 10], {total: total + x}, eg.until(new >= 5)

    (sums, tens), updates = eg.scan(step, sequences=xs, outputs_info=[et.constant(0.0), None])
    f = eg.function([xs], [sums, tens], updates=updates)
    got_sums, got_tens = f(np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(got_sums, [1.0, 3.0, 6.0])
    np.testing.assert_array_equal(got_tens, [10.0, 30.0, 60.0])
    assert total.get_value() == 6.0                          # updated by the steps that ran


def test_a_condition_that_never_holds_runs_every_step_and_the_shape_follows():
    x, values, _ = doubling_until_over(np.inf)
    f = eg.function([x], [values, values.shape[0]])
    out, length = f(1.0)
    assert len(out) == 50 and length == 50


def test_a_loop_with_until_pickles_and_keeps_stopping():
    x, values, _ = doubling_until_over(100.0)
    f = pickle.loads(pickle.dumps(eg.function([x], values)))
    np.testing.assert_array_equal(f(50.0), [100.0, 200.0])


def test_the_gradient_runs_back_through_the_steps_that_ran():
    # x, 2x, ... 64x is 6 steps for x = 3 (192 > 100 stops it): d sum / dx = 2 + 4 + ... + 64
    x, values, _ = doubling_until_over(100.0)
    f = eg.function([x], eg.grad(values.sum(), x))
    assert f(3.0) == 126.0
    assert f(200.0) == 2.0                                   # one step ran


def test_the_gradient_of_a_sequence_is_zero_past_the_last_step():
    # PyTensor's example: squares of a sequence up to the first entry over a threshold
    xs, limit = et.dvector("xs"), et.lscalar("limit")
    squares, _ = eg.scan(lambda v, u: (v * v, eg.until(v > u)), sequences=xs, non_sequences=[limit])
    f = eg.function([xs, limit], [squares, eg.grad(squares.sum(), xs)])
    seq = np.arange(15.0)
    got, grad = f(seq, 5)
    np.testing.assert_array_equal(got, seq[:7] ** 2)
    np.testing.assert_array_equal(grad, np.concatenate([2 * seq[:7], np.zeros(8)]))


def test_a_truncated_gradient_counts_back_from_the_last_step_that_ran():
    xs, limit = et.dvector("xs"), et.lscalar("limit")
    squares, _ = eg.scan(lambda v, u: (v * v, eg.until(v > u)), sequences=xs, non_sequences=[limit],
                         truncate_gradient=3)
    grad = eg.function([xs, limit], eg.grad(squares.sum(), xs))(np.arange(15.0), 5)
    np.testing.assert_array_equal(grad, np.concatenate([np.zeros(4), 2 * np.arange(4.0, 7.0), np.zeros(8)]))


def test_the_gradient_through_an_early_stop_against_finite_differences():
    # a recurrence with a non-sequence; at these values the loop stops after 3 of 10 steps,
    # and a small step of finite differences does not change where it stops
    def cost(x0, w):
        def step(prev, w):
            new = et.tanh(prev * w) + 1.0
            return new, eg.until(new > 1.35)
        values, _ = eg.scan(step, outputs_info=x0, non_sequences=[w], n_steps=10)
        return (values ** 2).sum()
    eg.verify_grad(cost, [np.array(0.1), np.array(0.3)], rng=np.random.default_rng(0))


def test_second_derivatives_through_an_early_stop_are_refused_clearly():
    x, values, _ = doubling_until_over(100.0)
    with pytest.raises(NullTypeGradError, match="until"):
        eg.grad(eg.grad((values ** 2).sum(), x), x)


def test_until_takes_a_scalar_condition():
    x = et.dvector("x")
    with pytest.raises(TypeError, match="until.*scalar"):
        eg.scan(lambda prev: (prev * 2, eg.until(prev > 1)), outputs_info=x, n_steps=3)
