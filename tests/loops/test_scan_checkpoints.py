"""eqgraph.scan_checkpoints: the same values (at the checkpoints) and the same gradients as
eqgraph.scan, with only every N-th state kept by the forward pass."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.loops import Scan, ScanGrad
from eqgraph.terms.graph import toposort

RNG = np.random.default_rng(11)
STEPS = 7


def rnn_step(xt, h, w):
    return et.tanh(h @ w + xt)


def rnn_values():
    return [RNG.standard_normal((STEPS, 3)), RNG.standard_normal(3), RNG.standard_normal((3, 3)) * 0.5]


# N = 1, N not dividing 7, N = length (slow run only), N > length
@pytest.mark.parametrize("every", [1, 3, pytest.param(7, marks=pytest.mark.slow), 10])
def test_values_and_gradients_equal_scan(every):
    x, h0, w = et.dmatrix("x"), et.dvector("h0"), et.dmatrix("w")
    full, _ = eg.scan(rnn_step, sequences=x, outputs_info=h0, non_sequences=w)
    kept, updates = eg.scan_checkpoints(rnn_step, sequences=x, outputs_info=h0, non_sequences=w,
                                        save_every_N=every)
    assert updates == {}
    # the checkpoints are the states after steps N-1, 2N-1, ... and after the last step
    at = list(range(every - 1, STEPS - 1, every)) + [STEPS - 1]
    weights = et.constant(RNG.standard_normal((len(at), 3)))
    wrt = [x, h0, w]
    f = eg.function(wrt, [kept, full[at]] + eg.grad((kept * weights).sum(), wrt)
                    + eg.grad((full[at] * weights).sum(), wrt))
    got = f(*rnn_values())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-12)
    for a, b in zip(got[2:5], got[5:]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_forward_pass_keeps_every_nth_state_only():
    # what the gradient reads from the forward pass: the outer Scan's outputs (ScanGrad's
    # inputs), here 25 checkpoints of a 500-step loop, against 500 states for scan
    x, h0, w = et.dvector("x"), et.dvector("h0"), et.dvector("w")

    def stored(loop, **kwargs):
        hs, _ = loop(lambda xt, h, w: et.tanh(h * w + xt), sequences=x, outputs_info=h0, non_sequences=w, **kwargs)
        g = eg.grad(hs[-1].sum(), w)
        nodes = toposort([g])
        assert any(isinstance(node.op, ScanGrad) for node in nodes)
        outer = [out for node in nodes if isinstance(node.op, Scan) for out in node.outputs]
        values = eg.function([x, h0, w], outer + [g])(np.linspace(-1, 1, 500), np.ones(4), np.full(4, 0.5))
        return max(len(v) for v in values[:-1]), values[-1]

    kept, g_kept = stored(eg.scan_checkpoints, save_every_N=20)
    full, g_full = stored(eg.scan)
    assert (kept, full) == (25, 500)
    np.testing.assert_allclose(g_kept, g_full, rtol=1e-12)


def test_n_steps_without_sequences_and_an_output_not_fed_back():
    a = et.dscalar("a")
    (powers, halves), _ = eg.scan_checkpoints(lambda p, a: (p * a, p / 2), outputs_info=[et.constant(1.0), None],
                                              non_sequences=a, n_steps=5, save_every_N=2)
    f = eg.function([a], [powers, halves, eg.grad(powers[-1], a)])
    p, h, g = f(1.5)
    np.testing.assert_allclose(p, [1.5 ** 2, 1.5 ** 4, 1.5 ** 5])
    np.testing.assert_allclose(h, [1.5 / 2, 1.5 ** 3 / 2, 1.5 ** 4 / 2])
    assert g == pytest.approx(5 * 1.5 ** 4)


def test_shared_updates_pass_through():
    count = eg.shared(np.array(0.0), name="count")
    x = et.dvector("x")
    out, updates = eg.scan_checkpoints(lambda xt, acc: (acc + xt, {count: count + 1}), sequences=x,
                                       outputs_info=et.constant(0.0), save_every_N=3)
    f = eg.function([x], out, updates=updates)
    np.testing.assert_allclose(f(np.arange(1.0, 8.0)), [6, 21, 28])
    assert count.get_value() == 7


def test_without_padding():
    x, h0, w = et.dmatrix("x"), et.dvector("h0"), et.dmatrix("w")
    kept, _ = eg.scan_checkpoints(rnn_step, sequences=x[:6], outputs_info=h0, non_sequences=w, save_every_N=3,
                                  padding=False)
    full, _ = eg.scan(rnn_step, sequences=x[:6], outputs_info=h0, non_sequences=w)
    a, b = eg.function([x, h0, w], [kept, full[2::3]])(*rnn_values())
    np.testing.assert_allclose(a, b, rtol=1e-12)
    with pytest.raises(ValueError, match="7 steps are no multiple of save_every_N=3"):
        eg.scan_checkpoints(rnn_step, sequences=x, outputs_info=h0, non_sequences=w, n_steps=7, save_every_N=3,
                            padding=False)


def test_second_derivatives_through_checkpoints_equal_scan():
    x, w = et.dvector("x"), et.dscalar("w")

    def loss(loop, **kwargs):
        hs, _ = loop(lambda xt, h, w: et.sin(h * w + xt), sequences=x, outputs_info=et.constant(0.3),
                     non_sequences=w, **kwargs)
        return hs[-1]

    d2 = [eg.grad(eg.grad(loss(loop, **kw), w), w) for loop, kw in
          [(eg.scan, {}), (eg.scan_checkpoints, {"save_every_N": 2})]]
    a, b = eg.function([x, w], d2)(np.array([0.1, -0.4, 0.8, 0.2, 0.5]), 0.9)
    assert a == pytest.approx(b, rel=1e-10)


@pytest.mark.parametrize("kwargs, message", [
    ({"save_every_N": 0}, "save_every_N must be a positive int"),
    ({"sequences": [{"input": et.dvector(), "taps": [-1, 0]}]}, "sequences\\[0\\] has taps \\[-1, 0\\]"),
    ({"outputs_info": {"initial": et.dvector(), "taps": [-2, -1]}}, "outputs_info\\[0\\] has taps \\[-2, -1\\]"),
])
def test_refused_arguments_say_why(kwargs, message):
    args = {"sequences": [et.dvector()], "outputs_info": et.constant(0.0)}
    with pytest.raises(ValueError, match=message):
        eg.scan_checkpoints(lambda *a: a[0], **{**args, **kwargs})
