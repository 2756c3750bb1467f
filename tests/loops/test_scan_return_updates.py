"""scan(..., return_updates=False), PyTensor 3's signature: only the outputs come back, and the
loop's updates stay attached to it, so eqgraph.function applies them."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et


def _counting_loop(**kwargs):
    count = eg.shared(np.float64(0.0), name="count")
    x = et.dvector("x")

    def step(v):
        return v * 2, {count: count + v}

    return count, x, eg.scan(step, sequences=[x], **kwargs)


def test_only_the_outputs_come_back_and_function_applies_the_updates():
    count, x, doubled = _counting_loop(return_updates=False)
    assert isinstance(doubled, et.TensorVariable)
    f = eg.function([x], doubled)
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2.0, 4.0])
    assert count.get_value() == 3.0
    f(np.array([1.0]))
    assert count.get_value() == 4.0


def test_the_same_as_passing_the_returned_updates():
    count, x, (doubled, updates) = _counting_loop()
    eg.function([x], doubled, updates=updates)(np.array([1.0, 2.0]))
    assert count.get_value() == 3.0


def test_explicit_updates_and_no_default_updates_win():
    count, x, doubled = _counting_loop(return_updates=False)
    eg.function([x], doubled, no_default_updates=True)(np.array([1.0, 2.0]))
    assert count.get_value() == 0.0
    eg.function([x], doubled, updates={count: count - 1.0})(np.array([1.0, 2.0]))
    assert count.get_value() == -1.0


def test_a_loop_without_updates_returns_its_outputs_alone():
    x = et.dvector("x")
    out = eg.scan(lambda v, acc: acc + v, sequences=[x], outputs_info=[et.constant(0.0)], return_updates=False)
    np.testing.assert_array_equal(eg.function([x], out)(np.array([1.0, 2.0, 3.0])), [1.0, 3.0, 6.0])


def test_random_draws_in_the_step_move_the_generator_on():
    srng = eg.RandomStream(3)
    x = et.dvector("x")
    noisy = eg.scan(lambda v: v + srng.normal(), sequences=[x], return_updates=False)
    f = eg.function([x], noisy)
    first, second = f(np.zeros(3)), f(np.zeros(3))
    assert len(set(first)) == 3 and not np.array_equal(first, second)
