"""Second derivatives through eqgraph.scan: the gradient of a scan is itself a scan
(eqgraph/loops/backward.py), so it can be differentiated again. Each check compares the
symbolic derivative of the first gradient with finite differences of that gradient
(eg.verify_grad on a function that returns the first gradient)."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et

RNG = np.random.default_rng(5)


def flat_grad(loss, wrt):
    """The first gradient of ``loss`` for every variable of ``wrt``, flattened into one vector."""
    return et.concatenate([g.flatten() for g in eg.grad(loss, wrt)])


def check_second_order(loss_of, values):
    """verify_grad of the first gradient of ``loss_of(*inputs)``: its derivative (a second
    derivative of the loss) against finite differences of it."""
    eg.verify_grad(lambda *xs: flat_grad(loss_of(*xs), list(xs)), values, n_tests=1, rng=np.random.default_rng(0))


def rnn_loss(w, x, h0):
    hs, _ = eg.scan(lambda xt, h, w: et.tanh(w @ h + xt), sequences=x, outputs_info=h0, non_sequences=w)
    return (hs ** 2).sum() + hs[-1].sum()


def test_rnn_second_derivatives_wrt_weights_inputs_and_initial_state():
    check_second_order(rnn_loss, [RNG.standard_normal((3, 3)) * 0.5, RNG.standard_normal((4, 3)) * 0.5,
                                  RNG.standard_normal(3) * 0.5])


@pytest.mark.slow  # the default run keeps the RNN, 2-tap, hessian and closed-form checks
def test_polynomial_accumulator():
    # Horner's scheme: acc_t = acc_{t-1} * z + c_t, a polynomial in z of degree len(c)
    def poly(z, c):
        acc, _ = eg.scan(lambda ct, acc, z: acc * z + ct, sequences=c, outputs_info=et.zeros_like(z),
                         non_sequences=z)
        return acc[-1].sum()

    check_second_order(poly, [np.array([0.7, -1.2]), RNG.standard_normal((5, 2))])


def test_polynomial_second_derivative_equals_the_closed_form():
    z, c = et.dscalar("z"), et.dvector("c")
    acc, _ = eg.scan(lambda ct, acc, z: acc * z + ct, sequences=c, outputs_info=et.zeros_like(z), non_sequences=z)
    d2 = eg.grad(eg.grad(acc[-1], z), z)
    cv, zv = np.array([2.0, -1.0, 3.0, 0.5]), 1.3  # 2 z^3 - z^2 + 3 z + 0.5
    assert eg.function([z, c], d2)(zv, cv) == pytest.approx(12 * zv - 2)


def test_two_tap_fibonacci_like_recurrence():
    def fib(init, a, b):
        out, _ = eg.scan(lambda older, last, a, b: a * older + et.sin(b * last), n_steps=6,
                         outputs_info={"initial": init, "taps": [-2, -1]}, non_sequences=[a, b])
        return (out ** 2).sum()

    check_second_order(fib, [RNG.standard_normal((2, 2)) * 0.5, np.array(0.7), np.array(-0.4)])


@pytest.mark.slow  # the default run keeps the RNN, 2-tap, hessian and closed-form checks
def test_sequence_taps_going_backwards_and_outputs_not_fed_back():
    def windowed(x, c):
        (acc, squares), _ = eg.scan(lambda before, after, acc, c: (acc * c + before * after, (acc * after) ** 2),
                                    go_backwards=True, sequences={"input": x, "taps": [-2, 1]},
                                    outputs_info=[et.zeros(2), None], non_sequences=c)
        return acc.sum() + squares.sum()

    check_second_order(windowed, [RNG.standard_normal((6, 2)), np.array(0.9)])


def test_float32_with_an_integer_state_and_an_output_not_fed_back():
    # the integer counter has no gradient but its values feed the step; float32 stays float32
    # (verify_grad's float64 projection once reached ScanGrad.L_op's float32 backward loop
    # uncast: a TypeError). h * h, not h ** 2: the second derivative of a float32 power fails
    # outside scan too (pow's gradient computes in float64)
    def loss(x, c):
        (_, hs, squares), _ = eg.scan(lambda xt, k, h, c: (k + 1, et.tanh(h * c + xt * et.cast(k, "float32")), h * h),
                                      sequences=x, outputs_info=[et.constant(np.int64(0)),
                                                                 et.constant(np.float32(0.2)), None],
                                      non_sequences=c)
        return hs.sum() + squares.sum() * c

    check_second_order(loss, [np.array([0.3, -0.2, 0.9], dtype="float32"), np.array(0.7, dtype="float32")])


def test_hessian_through_scan_equals_finite_differences_of_the_gradient():
    x = et.dvector("x")
    out, _ = eg.scan(lambda xt, h: h * et.cos(xt) + xt ** 2, sequences=x, outputs_info=et.constant(1.0))
    loss = out.sum()
    hess, g = eg.function([x], [eg.hessian(loss, x), eg.grad(loss, x)]), eg.function([x], eg.grad(loss, x))
    v = RNG.standard_normal(4)
    h_value = hess(v)[0]
    eps = 1e-6
    numeric = np.stack([(g(v + eps * e) - g(v - eps * e)) / (2 * eps) for e in np.eye(4)])
    np.testing.assert_allclose(h_value, numeric, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(h_value, h_value.T, rtol=1e-10, atol=1e-12)


@pytest.mark.slow  # the default run keeps the RNN, 2-tap, hessian and closed-form checks
def test_third_derivative_of_a_product():
    # the gradient of the gradient of the gradient: scans all the way down
    x = et.dscalar("x")
    out, _ = eg.scan(lambda h, x: h * x, outputs_info=et.constant(1.0), non_sequences=x, n_steps=4)
    d3 = eg.grad(eg.grad(eg.grad(out[-1], x), x), x)
    assert eg.function([x], d3)(0.8) == pytest.approx(24 * 0.8)


def test_zero_steps_give_zero_second_derivatives():
    x, h0 = et.dmatrix("x"), et.dvector("h0")
    hs, _ = eg.scan(lambda xt, h: h * xt, sequences=x, outputs_info=h0)
    g = eg.grad((hs ** 2).sum() + h0.sum(), h0)
    gg = eg.grad(g.sum(), [x, h0])
    results = eg.function([x, h0], [g, *gg])(np.zeros((0, 3)), np.ones(3))
    np.testing.assert_array_equal(results[0], np.ones(3))
    assert results[1].shape == (0, 3)
    np.testing.assert_array_equal(results[2], np.zeros(3))


@pytest.mark.parametrize("why, kwargs", [("truncate_gradient", {"truncate_gradient": 2}),
                                         ("shared", {})])
def test_second_derivatives_refused_where_the_walk_stays_numeric(why, kwargs):
    x = et.dvector("x")
    if why == "shared":
        s = eg.shared(np.array(1.0), name="s")
        _, updates = eg.scan(lambda xt: {s: s * xt}, sequences=x)
        g = eg.grad(updates[s], x)
    else:
        out, _ = eg.scan(lambda xt, h: h * xt, sequences=x, outputs_info=1.0, **kwargs)
        g = eg.grad(out[-1], x)
    with pytest.raises(eg.NullTypeGradError, match="second derivatives through a scan that"):
        eg.grad(g.sum(), x)
