"""Loop states that are not tensors (a random generator): PyTensor's untraced states.

An ``outputs_info`` entry of a type that cannot be stacked over steps is carried from step to
step, and only its value after the last step is returned, in its place among the outputs. A
non-sequence of such a type is passed to every step unchanged. The values are checked
against the same draws made by NumPy in a Python loop."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.tensor.rng_type import RandomGeneratorType, random_generator_type


def _normal(loc, rng):
    """(the generator after the draw, the draw): a draw's node outputs, PyTensor's order."""
    return et.random.normal(loc, rng=rng, dtype="float64").owner.outputs


def test_a_generator_state_is_carried_and_only_its_last_value_returned():
    rng_init = random_generator_type("rng")
    rng_x0, x0 = _normal(0.0, rng_init)

    def step(prev_x, prev_rng):
        next_rng, next_x = _normal(prev_x, prev_rng)
        return next_x, next_rng

    xs, rng_final = eg.scan(step, outputs_info=[x0, rng_x0], n_steps=10, return_updates=False)
    assert isinstance(xs.type, et.TensorType) and xs.ndim == 1
    assert isinstance(rng_final.type, RandomGeneratorType)
    xs_value, rng_value = eg.function([rng_init], [xs, rng_final])(np.random.default_rng(0))

    reference = np.random.default_rng(0)
    expected = [reference.normal(0.0)]
    for _ in range(10):
        expected.append(reference.normal(expected[-1]))
    np.testing.assert_allclose(xs_value, expected[1:])
    assert random_generator_type.values_eq(reference, rng_value)


@pytest.mark.parametrize("order", ["x_then_rng", "rng_then_x", "rng_between"])
def test_the_outputs_keep_the_order_of_outputs_info(order):
    rng = random_generator_type("rng")

    def step(prev_rng):
        next_rng, x = _normal(0.0, prev_rng)
        return {"x_then_rng": (x, next_rng), "rng_then_x": (next_rng, x),
                "rng_between": (x, next_rng, x + 1)}[order]

    info = {"x_then_rng": [None, rng], "rng_then_x": [rng, None], "rng_between": [None, rng, None]}[order]
    outs = eg.scan(step, outputs_info=info, n_steps=3, return_updates=False)
    where = info.index(rng)
    assert isinstance(outs[where].type, RandomGeneratorType)
    draws = [o for i, o in enumerate(outs) if i != where]
    values = eg.function([rng], draws + [outs[where]])(np.random.default_rng(5))

    reference = np.random.default_rng(5)
    expected = np.array([reference.normal(0.0) for _ in range(3)])
    np.testing.assert_allclose(values[0], expected)
    if order == "rng_between":
        np.testing.assert_allclose(values[1], expected + 1)
    assert random_generator_type.values_eq(reference, values[-1])


def test_no_step_returns_the_initial_generator_and_leaves_the_caller_s_alone():
    rng = eg.shared(np.random.default_rng(3), "rng")
    n = et.iscalar("n")
    final_rng, xs = eg.scan(lambda r, x: _normal(x, r), outputs_info=[rng, et.constant(np.pi)], n_steps=n,
                            return_updates=False)
    f = eg.function([n], xs, updates={rng: final_rng})
    assert f(0).shape == (0,)
    assert random_generator_type.values_eq(rng.get_value(), np.random.default_rng(3))
    first, second = f(2), f(2)
    assert not np.array_equal(first, second)            # the generator moved on between calls
    reference = np.random.default_rng(3)
    x1 = reference.normal(np.pi)
    np.testing.assert_allclose(first, [x1, reference.normal(x1)])


def test_a_generator_non_sequence_is_the_same_at_every_step():
    rng = eg.shared(np.random.default_rng(1), "rng")
    xs = et.dvector("xs")
    out, updates = eg.scan(lambda v, r: v + _normal(0.0, r)[1], sequences=xs, non_sequences=[rng])
    assert not updates
    values = eg.function([xs], out)(np.zeros(4))
    np.testing.assert_allclose(values, np.full(4, np.random.default_rng(1).normal(0.0)))


def test_gradients_pass_the_generator_state_by():
    # x_t = w * x_{t-1} + noise_t: d sum(x) / dw against central differences at fixed draws
    rng, w, x0 = random_generator_type("rng"), et.dscalar("w"), et.dscalar("x0")

    def step(prev_x, prev_rng, w):
        next_rng, noise = _normal(0.0, prev_rng)
        return w * prev_x + noise, next_rng

    xs, _ = eg.scan(step, outputs_info=[x0, rng], non_sequences=[w], n_steps=5, return_updates=False)
    cost = eg.function([rng, w, x0], xs.sum())
    grad = eg.function([rng, w, x0], eg.grad(xs.sum(), w))
    eps = 1e-6
    numeric = (cost(np.random.default_rng(2), 0.7 + eps, 1.5) - cost(np.random.default_rng(2), 0.7 - eps, 1.5)) / (2 * eps)
    np.testing.assert_allclose(grad(np.random.default_rng(2), 0.7, 1.5), numeric, rtol=1e-6)


def test_a_generator_output_without_an_initial_state_is_refused():
    rng = random_generator_type("rng")
    with pytest.raises(TypeError, match=r"output 0 of fn.*RandomGeneratorType.*outputs_info\[0\]"):
        eg.scan(lambda: _normal(0.0, rng)[0], outputs_info=[None], n_steps=2)


def test_a_state_s_new_value_must_keep_its_type():
    rng = random_generator_type("rng")
    with pytest.raises(TypeError, match=r"output 0 of fn.*RandomGeneratorType"):
        eg.scan(lambda r: et.constant(1.0), outputs_info=[rng], n_steps=2)
