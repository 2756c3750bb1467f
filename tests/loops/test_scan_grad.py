"""Reverse mode through eqgraph.scan: gradients with respect to sequences, initial states,
non-sequences and shared values, against finite differences (eg.verify_grad) and against the
same loop unrolled by hand."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.grad import DisconnectedInputError, NullTypeGradError

RNG = np.random.default_rng(1)


def rnn_step(xt, h, w, u, b):
    return et.tanh(xt @ w + h @ u + b)


def rnn(x, h0, w, u, b):
    hs, _ = eg.scan(rnn_step, sequences=x, outputs_info=h0, non_sequences=[w, u, b])
    return hs


RNN_SHAPES = [(5, 3), (4,), (3, 4), (4, 4), (4,)]


def test_rnn_gradient_against_finite_differences():
    values = [RNG.standard_normal(s) * 0.5 for s in RNN_SHAPES]
    eg.verify_grad(lambda *args: rnn(*args) ** 2, values, rng=np.random.default_rng(0))


def test_rnn_gradient_equals_the_unrolled_graph():
    x, w, u = et.dmatrix("x"), et.dmatrix("w"), et.dmatrix("u")
    h0, b = et.dvector("h0"), et.dvector("b")
    inputs = [x, h0, w, u, b]
    steps = RNN_SHAPES[0][0]
    weights = et.constant(RNG.standard_normal((steps, 4)))
    unrolled, h = [], h0
    for t in range(steps):
        h = rnn_step(x[t], h, w, u, b)
        unrolled.append(h)
    looped = eg.grad((rnn(*inputs) * weights).sum(), inputs)
    by_hand = eg.grad((et.stack(unrolled) * weights).sum(), inputs)
    values = [RNG.standard_normal(s) * 0.5 for s in RNN_SHAPES]
    for a, b_ in zip(eg.function(inputs, looped)(*values), eg.function(inputs, by_hand)(*values)):
        np.testing.assert_allclose(a, b_, rtol=1e-10, atol=1e-12)


def test_gradient_of_the_last_state_only():
    # a cotangent on one entry of the output (the rest disconnected zeros)
    values = [RNG.standard_normal(s) * 0.5 for s in RNN_SHAPES]
    eg.verify_grad(lambda *args: rnn(*args)[-1], values, rng=np.random.default_rng(0))


def test_taps_gradient_with_respect_to_initial_states_and_coefficients():
    def second_order(init, a, b):
        out, _ = eg.scan(lambda older, last, a, b: a * older + b * et.sin(last), n_steps=6,
                         outputs_info={"initial": init, "taps": [-2, -1]}, non_sequences=[a, b])
        return out

    values = [RNG.standard_normal((3, 2)), np.array(0.7), np.array(-0.4)]  # the third initial entry is unused
    eg.verify_grad(second_order, values, rng=np.random.default_rng(0))


def test_sequence_taps_going_backwards():
    def windowed(x, c):
        out, _ = eg.scan(lambda before, after, acc, c: acc * c + before * after, go_backwards=True,
                         sequences={"input": x, "taps": [-2, 1]}, outputs_info=et.zeros(2), non_sequences=c)
        return out

    eg.verify_grad(windowed, [RNG.standard_normal((7, 2)), np.array(0.9)], rng=np.random.default_rng(0))


def test_outputs_not_fed_back_and_closures():
    def model(x, w):
        # w is closed over, not passed: it becomes an input of the loop all the same
        (acc, squares), _ = eg.scan(lambda xt, acc: (acc + xt * w, (xt * w) ** 2), sequences=x,
                                    outputs_info=[et.zeros(3), None])
        return acc.sum() + squares.sum()

    eg.verify_grad(model, [RNG.standard_normal((4, 3)), RNG.standard_normal(3)], rng=np.random.default_rng(0))


def test_gradient_through_a_shared_state():
    s = eg.shared(np.array([0.5, -1.0]), name="s")
    x, a = et.dmatrix("x"), et.dscalar("a")
    _, updates = eg.scan(lambda xt, a: {s: et.tanh(s * a + xt)}, sequences=x, non_sequences=a)
    final = updates[s]
    gs, gx, ga = eg.grad(final.sum(), [s, x, a])
    xv, av = RNG.standard_normal((4, 2)), 0.8
    value = s.get_value()
    expected_final = value
    for row in xv:
        expected_final = np.tanh(expected_final * av + row)
    f = eg.function([x, a], [final, gs, gx, ga])
    result_final, gs_v, gx_v, ga_v = f(xv, av)
    np.testing.assert_allclose(result_final, expected_final)

    def total(sv, xv_, av_):
        h = sv
        for row in xv_:
            h = np.tanh(h * av_ + row)
        return h.sum()

    eps = 1e-6
    numeric_a = (total(value, xv, av + eps) - total(value, xv, av - eps)) / (2 * eps)
    numeric_s = [(total(value + eps * e, xv, av) - total(value - eps * e, xv, av)) / (2 * eps) for e in np.eye(2)]
    np.testing.assert_allclose(ga_v, numeric_a, rtol=1e-6)
    np.testing.assert_allclose(gs_v, numeric_s, rtol=1e-6)
    assert gx_v.shape == xv.shape


def test_truncate_gradient_walks_back_the_last_steps_only():
    x, h0 = et.dvector("x"), et.dscalar("h0")
    out, _ = eg.scan(lambda xt, h: h + xt, sequences=x, outputs_info=h0, truncate_gradient=2)
    gx, gh0 = eg.grad(out[-1], [x, h0])
    gxv, gh0v = eg.function([x, h0], [gx, gh0])(np.ones(5), 0.0)
    np.testing.assert_allclose(gxv, [0, 0, 0, 1, 1])
    assert gh0v == 0.0


def test_grad_with_symbolic_n_steps():
    n, h0 = et.lscalar("n"), et.dscalar("h0")
    out, _ = eg.scan(lambda h: h * 1.5, outputs_info=h0, n_steps=n)
    g = eg.grad(out[-1], h0)
    assert eg.function([n, h0], g)(4, 2.0) == pytest.approx(1.5 ** 4)


def test_grad_inside_the_step_gives_a_jacobian_of_unknown_length():
    # the classic use: one row per step, the vector's length known only at run time
    x = et.dvector("x")
    y = et.exp(x) * x.sum()
    rows, _ = eg.scan(lambda i, y, x: eg.grad(y[i], x), sequences=et.arange(y.shape[0]), non_sequences=[y, x])
    v = np.array([0.1, 0.2, 0.3, -0.5])
    expected = np.diag(np.exp(v)) * v.sum() + np.exp(v)[:, None]
    np.testing.assert_allclose(eg.function([x], rows)(v), expected)


def test_a_step_without_a_gradient_is_refused_when_the_gradient_is_built():
    # a draw's parameters have no gradient: grad says so at once, naming the step, rather
    # than the compiled gradient failing on its first call
    x = et.dvector("x")
    rng = eg.shared(np.random.default_rng(0), "rng")
    out, _ = eg.scan(lambda v: v + et.random.normal(v, rng=rng), sequences=[x])
    with pytest.raises(NullTypeGradError, match="step"):
        eg.grad(out.sum(), x)


def test_the_connection_pattern_follows_the_recurrence():
    # PyTensor's example: x feeds x and z, y only y, and nothing reads z back
    x0, y0, z0 = et.dvector("x0"), et.dvector("y0"), et.dvector("z0")
    x, y, z = eg.scan(lambda x, y, z: (x ** 2, y, x + 1), outputs_info=[x0, y0, z0], n_steps=10,
                      return_updates=False)
    node = x.owner
    assert node.op.connection_pattern(node) == [[False] * 3,                 # n_steps
                                                [True, False, True],         # x0
                                                [False, True, False],        # y0
                                                [False, False, False]]       # z0
    cost = (x + y + z).sum()
    eg.grad(cost, [x0, y0])
    with pytest.raises(DisconnectedInputError):
        eg.grad(cost, z0)
    with pytest.raises(DisconnectedInputError):
        eg.grad(x.sum(), y0)


def test_a_state_read_through_a_later_step_is_connected():
    # b reads a's previous value, a reads its own: a0 reaches b through one step
    a0, b0, w = et.dscalar("a0"), et.dscalar("b0"), et.dscalar("w")
    a, b = eg.scan(lambda a, b, w: (a * w, a + 0.0 * b), outputs_info=[a0, b0], non_sequences=[w], n_steps=4,
                   return_updates=False)
    node = a.owner
    assert node.op.connection_pattern(node) == [[False, False], [True, True], [False, True], [True, True]]
    g = eg.function([a0, b0, w], eg.grad(b[-1], a0))(2.0, 1.0, 3.0)
    assert g == 27.0                                    # b[3] = a[2] = a0 * w ** 3


@pytest.mark.parametrize("use_op_pushforward", [None, False, True])
def test_rop_through_a_scan_against_finite_differences(use_op_pushforward):
    # the Jacobian-vector product of the last state of a small RNN, by two L-ops (Scan has no R_op,
    # so use_op_pushforward=True gives the same product that way)
    u, h0, w = et.dmatrix("u"), et.dvector("h0"), et.dmatrix("w")
    hs, _ = eg.scan(lambda ut, h, w: et.tanh(w @ (ut + h)), sequences=u, outputs_info=h0, non_sequences=[w])
    eu, eh0, ew = et.dmatrix("eu"), et.dvector("eh0"), et.dmatrix("ew")
    jvp = eg.Rop(hs[-1], [u, h0, w], [eu, eh0, ew], use_op_pushforward=use_op_pushforward)
    f = eg.function([u, h0, w, eu, eh0, ew], jvp)
    last = eg.function([u, h0, w], hs[-1])
    values = [RNG.standard_normal(s) * 0.5 for s in [(4, 3), (3,), (3, 3)]]
    tangents = [RNG.standard_normal(v.shape) for v in values]
    eps = 1e-6
    numeric = (last(*[v + eps * t for v, t in zip(values, tangents)])
               - last(*[v - eps * t for v, t in zip(values, tangents)])) / (2 * eps)
    np.testing.assert_allclose(f(*values, *tangents), numeric, rtol=1e-6, atol=1e-9)
