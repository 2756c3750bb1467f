"""PyTensor's gradient scans (``pytensor.grad`` through a ``scan``) converted by ``from_pytensor``:
value and gradient agree with PyTensor's own function (FAST_COMPILE) at 20 points.

A gradient scan reads the forward sequences and states reversed, carries each forward state's
cotangent as a multiple-input-multiple-output state, accumulates the gradients of the loop's
constants in states of its own and emits the sequences' gradients as outputs not fed back."""

from __future__ import annotations

import numpy as np
import pytest

pytensor = pytest.importorskip("pytensor")

import pytensor.tensor as pt  # noqa: E402
from pytensor.scan.op import Scan  # noqa: E402
from pytensor.scan.utils import until  # noqa: E402

import eqgraph as eg  # noqa: E402
from eqgraph.pytensor import from_pytensor  # noqa: E402

POINTS = 20


def _gradient_scans(outputs) -> list:
    """The scans of ``outputs``' graphs that have multiple-input-multiple-output states."""
    from pytensor.graph.traversal import applys_between

    return [n for n in applys_between([], outputs) if isinstance(n.op, Scan) and n.op.info.mit_mot_in_slices]


def agrees_at_points(inputs, outputs, draw, points=POINTS):
    """``outputs`` converted and compiled by eqgraph equal PyTensor's at ``points`` draws."""
    converted = from_pytensor(outputs, inputs=inputs)
    f = eg.function(converted.inputs, converted.outputs)
    ref = pytensor.function(inputs, outputs, mode="FAST_COMPILE")
    rng = np.random.default_rng(0)
    for _ in range(points):
        values = draw(rng)
        for got, want in zip(f(*values), ref(*values)):
            assert np.isfinite(got).all() or not np.isfinite(want).all()
            scale = max(1.0, np.abs(want).max(initial=0.0))
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * scale)


def test_the_gradient_of_an_ar1_scan():
    x0, rho, eps = pt.dscalar("x0"), pt.dscalar("rho"), pt.dvector("eps")
    xs = pytensor.scan(lambda e, prev, r: r * prev + e, sequences=[eps], outputs_info=[x0],
                       non_sequences=[rho], return_updates=False)
    cost = (xs**2).sum()
    outputs = [cost, *pytensor.grad(cost, [x0, rho, eps])]
    assert _gradient_scans(outputs)
    agrees_at_points([x0, rho, eps], outputs,
                     lambda rng: (rng.normal(), rng.uniform(-1, 1), rng.normal(size=8)))


def test_the_gradient_of_a_scan_with_taps_on_sequences_and_states():
    # a sequence at taps 0 and -1, a state at taps -2 and -1, one at -1, an output not fed back
    x, a, s0, m0 = pt.dvector("x"), pt.dscalar("a"), pt.dscalar("s0"), pt.dvector("m0")
    outs = pytensor.scan(lambda xt, xp, m2, m1, s, a: (m1 * a - 0.5 * m2 + xt, s * a + xt * xp, pt.sin(s) * a),
                         sequences=[dict(input=x, taps=[0, -1])],
                         outputs_info=[dict(initial=m0, taps=[-2, -1]), s0, None],
                         non_sequences=[a], return_updates=False)
    cost = (outs[0] ** 2).sum() + outs[1][-1] + outs[2].sum()
    outputs = [cost, *pytensor.grad(cost, [x, a, s0, m0])]
    agrees_at_points([x, a, s0, m0], outputs,
                     lambda rng: (rng.normal(size=9), rng.uniform(-0.9, 0.9), rng.normal(), rng.normal(size=2)))


def test_the_gradient_of_a_backward_scan_with_a_shared_constant():
    # go_backwards reads the sequence reversed; the shared variable is a constant across steps
    w = pytensor.shared(np.array([0.5, -0.25]), name="w")
    x, h0 = pt.dmatrix("x"), pt.dvector("h0")
    hs = pytensor.scan(lambda xt, h: pt.tanh(h * w + xt), sequences=[x], outputs_info=[h0],
                       go_backwards=True, return_updates=False)
    cost = (hs * np.arange(1.0, 7.0)[:, None]).sum()
    outputs = [cost, *pytensor.grad(cost, [x, h0, w])]
    agrees_at_points([x, h0], outputs, lambda rng: (rng.normal(size=(6, 2)), rng.normal(size=2)))


def test_the_gradient_of_a_scan_with_a_symbolic_number_of_steps():
    # no sequences: n_steps alone runs the loop, and the gradient scan runs as many steps
    n, x0, r = pt.lscalar("n"), pt.dvector("x0"), pt.dscalar("r")
    xs = pytensor.scan(lambda prev, r: prev * r + pt.exp(-prev), outputs_info=[x0], non_sequences=[r],
                       n_steps=n, return_updates=False)
    cost = xs[-1].sum() + (xs**2).mean()
    outputs = [cost, *pytensor.grad(cost, [x0, r])]
    agrees_at_points([n, x0, r], outputs,
                     lambda rng: (int(rng.integers(1, 7)), rng.normal(size=3), rng.uniform(0.1, 0.9)))


def test_a_second_derivative_through_a_scan():
    # differentiating a gradient scan gives a scan whose multiple-input-multiple-output state has a
    # negative tap. The reference is PyTensor's function of the same graph, since the conversion
    # answers for the graph it is given: PyTensor 2.38's graph of this second derivative is not
    # the finite difference's value, 3.3's is
    x0, rho, eps = pt.dscalar("x0"), pt.dscalar("rho"), pt.dvector("eps")
    xs = pytensor.scan(lambda e, prev, r: r * prev + e, sequences=[eps], outputs_info=[x0],
                       non_sequences=[rho], return_updates=False)
    g = pytensor.grad((xs**3).sum(), rho)
    outputs = [g, pytensor.grad(g, rho)]
    assert any(min(taps) < 0 for node in _gradient_scans(outputs) for taps in node.op.info.mit_mot_in_slices)
    agrees_at_points([x0, rho, eps], outputs, lambda rng: (rng.normal(), rng.uniform(-1, 1), rng.normal(size=5)))


def test_a_multiple_input_multiple_output_buffer_too_short_is_an_error():
    # PyTensor's C loop wraps such a buffer around and its Python loop raises: no answer to match
    x0, rho, eps = pt.dscalar("x0"), pt.dscalar("rho"), pt.dvector("eps")
    xs = pytensor.scan(lambda e, prev, r: r * prev + e, sequences=[eps], outputs_info=[x0],
                       non_sequences=[rho], return_updates=False)
    (node,) = _gradient_scans([pytensor.grad((xs**2).sum(), rho)])
    buffer_at = 1 + node.op.info.n_seqs
    short = list(node.inputs)
    short[buffer_at] = short[buffer_at][:3]
    converted = from_pytensor([node.op(*short)[0]], inputs=[x0, rho, eps])
    with pytest.raises(ValueError, match=r"buffer must hold n_steps \+ 1 entries"):
        eg.function(converted.inputs, converted.outputs)(0.1, 0.5, np.ones(5))


def test_a_while_scan_stops_where_pytensors_stops():
    x0 = pt.dscalar("x0")
    xs = pytensor.scan(lambda prev: (prev * 2, until(prev > 10)), outputs_info=[x0],
                       n_steps=20, return_updates=False)
    converted = from_pytensor([xs], inputs=[x0])
    f = eg.function(converted.inputs, converted.outputs)
    ref = pytensor.function([x0], xs, mode="FAST_COMPILE")
    for start in (3.0, 100.0, 1e-30, -1.0):   # stops at step 3, at step 1, never (20 steps), never
        np.testing.assert_array_equal(f(start)[0], ref(start))


def test_a_while_scan_over_a_sequence_with_an_output_not_fed_back():
    x0, seq = pt.dscalar("x0"), pt.dvector("seq")
    sums, tens = pytensor.scan(lambda s, prev: ([prev + s, (prev + s) * 10], until(prev + s >= 5)),
                               sequences=[seq], outputs_info=[x0, None], return_updates=False)
    agrees_at_points([x0, seq], [sums, tens], lambda rng: (rng.normal(), rng.uniform(0, 3, size=6)))


def test_the_gradient_of_a_while_scan_runs_back_through_the_steps_that_ran():
    # PyTensor differentiates a while loop over the steps that ran: at x0 = 1, 2 + 4 + ... + 32
    x0 = pt.dscalar("x0")
    xs = pytensor.scan(lambda prev: (prev * 2, until(prev > 10)), outputs_info=[x0],
                       n_steps=20, return_updates=False)
    converted = from_pytensor([xs.sum()], inputs=[x0])
    f = eg.function(converted.inputs, eg.grad(converted.outputs[0], converted.inputs[0]))
    ref = pytensor.function([x0], pytensor.grad(xs.sum(), x0), mode="FAST_COMPILE")
    for value in (1.0, 0.3, 11.0, -2.0):
        np.testing.assert_allclose(f(value), ref(value), rtol=1e-12)
    assert f(1.0) == 62.0
