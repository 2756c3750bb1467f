"""``from_pytensor``, entry by entry of its table: each PyTensor graph converted and compiled by
eqgraph gives what PyTensor's own function gives (FAST_COMPILE: PyTensor's Python implementations)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

pytensor = pytest.importorskip("pytensor")

import pytensor.scalar as ps  # noqa: E402
import pytensor.tensor as pt  # noqa: E402
from pytensor.compile.builders import OpFromGraph  # noqa: E402
from pytensor.raise_op import Assert, CheckAndRaise  # noqa: E402
from pytensor.tensor.basic import alloc_diag  # noqa: E402
from pytensor.tensor.blockwise import Blockwise  # noqa: E402
from pytensor.tensor.elemwise import Elemwise  # noqa: E402

import eqgraph as eg  # noqa: E402
from eqgraph.pytensor import UnsupportedOp, from_pytensor  # noqa: E402
from eqgraph.tensor.blockwise import Blockwise as EqBlockwise  # noqa: E402
from eqgraph.terms.graph import toposort  # noqa: E402

RNG = np.random.default_rng(7)


def same_as_pytensor(inputs, outputs, *values, rtol=1e-13):
    """Compile ``outputs`` with both libraries and compare them on ``values``."""
    converted = from_pytensor(outputs, inputs=inputs)
    got = eg.function(converted.inputs, converted.outputs)(*values)
    want = pytensor.function(inputs, outputs, mode="FAST_COMPILE")(*values)
    for g, w, out in zip(got, want, outputs):
        assert np.asarray(g).dtype == np.asarray(w).dtype == out.type.dtype, (out, g, w)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-300)
    return got


def test_importing_eqgraph_does_not_import_pytensor():
    code = "import sys, eqgraph, eqgraph.tensor; print('pytensor' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_elementwise_ops_and_their_gradients():
    x, y = pt.dvector("x"), pt.dvector("y")
    z = (pt.exp(x) * pt.log1p(y**2) + pt.sigmoid(x) - pt.softplus(-y) + pt.switch(x > y, x, y)
         + pt.clip(x, -0.5, 0.5) + pt.maximum(x, y) / pt.sqrt(1 + y**2) + pt.tanh(x) * pt.erf(y)
         + pt.log1mexp(-pt.abs(x) - 0.1) + pt.reciprocal(1 + x**2) + x * y * x)  # a 3-input mul
    cost = z.sum()
    same_as_pytensor([x, y], [z, *pt.grad(cost, [x, y])], RNG.normal(size=5), RNG.normal(size=5))


def test_an_integer_input_of_a_float_op_is_computed_in_the_output_dtype():
    # PyTensor's log of an int8 is a float32 log; NumPy's rules would compute it in float16
    x = pt.scalar("x", dtype="int8")
    (out,) = same_as_pytensor([x], [pt.log(x)], np.int8(5), rtol=0)
    assert out == np.log(np.float32(5))


def test_reductions():
    x = pt.dmatrix("x")
    outs = [x.sum(axis=0), x.prod(axis=1), x.max(), x.min(axis=0), pt.all(x > 0, axis=1), pt.any(x > 1),
            pt.argmax(x, axis=1), pt.logsumexp(x, axis=1)]
    same_as_pytensor([x], outs, RNG.normal(size=(3, 4)))


def test_basic_and_advanced_indexing_and_their_writing_forms():
    x, i, k = pt.dmatrix("x"), pt.lvector("i"), pt.lscalar("k")
    outs = [x[1:k, ::2], x[k], x[i], x[i, i], x[i, 1:], pt.set_subtensor(x[1:k], 0.0),
            pt.inc_subtensor(x[:, 0], 1.0),
            pt.inc_subtensor(x[i], 1.0), pt.set_subtensor(x[i, i], -1.0), pt.inc_subtensor(x[i, 1:], 2.0)]
    outs.append(pt.grad((x[i] ** 2).sum() + x[1:k].sum(), x))
    same_as_pytensor([x, i, k], outs, RNG.normal(size=(4, 3)), np.array([0, 2, 0]), np.int64(3))


def test_shapes_joins_and_allocation():
    x, y = pt.dmatrix("x"), pt.dvector("y")
    a, b = pt.split(y, splits_size=[2, 3], n_splits=2, axis=0)
    outs = [x.reshape((x.shape[0] * x.shape[1],)), x.shape, x.shape[1], pt.specify_shape(y, (5,)) * 2,
            pt.alloc(y[0], 3, x.shape[0]), pt.concatenate([x, x[:1]], axis=0), a, b,
            pt.stack([y[0], y[1]]), y.dimshuffle("x", 0), x[:, :1].dimshuffle(0), pt.zeros_like(x) + 1,
            pt.eye(3, 3, 1), pt.diag(y), pt.arange(x.shape[0]), alloc_diag(x, 0, 2, 0)]
    same_as_pytensor([x, y], outs, RNG.normal(size=(2, 3)), RNG.normal(size=5))


def test_linear_algebra_and_its_gradient():
    a, b, v = pt.dmatrix("a"), pt.dmatrix("b"), pt.dvector("v")
    spd = a @ a.T + 3 * pt.eye(3)
    chol = pt.linalg.cholesky(spd)
    z = pt.linalg.solve_triangular(chol, v, lower=True)
    w = pt.linalg.solve(spd, b, assume_a="pos")
    u = pt.linalg.cho_solve((chol, True), b)
    cost = (z**2).sum() + pt.log(pt.diag(chol)).sum() + w.sum() + pt.dot(a, v).sum() + pt.matmul(a, b).sum()
    outs = [chol, z, w, u, pt.dot(b.T, v), *pt.grad(cost, [a, b, v])]  # 2.38 has no gradient of cho_solve
    same_as_pytensor([a, b, v], outs, RNG.normal(size=(3, 3)), RNG.normal(size=(3, 2)), RNG.normal(size=3),
                     rtol=1e-11)


def test_cumulative_ops_softmax_sorting_and_repeating():
    x, r = pt.dmatrix("x"), pt.lvector("r")
    outs = [pt.cumsum(x, axis=1), pt.cumprod(x, axis=0), pt.special.softmax(x, axis=1),
            pt.special.log_softmax(x, axis=0)]
    cost = (outs[0] ** 2).sum() + (outs[2] * x).sum() + outs[3].sum()
    more = [pt.sort(x, axis=1), pt.sort(x, axis=None), pt.argsort(x, axis=0), pt.repeat(x, r, axis=0),
            pt.repeat(x, 2, axis=1)]
    same_as_pytensor([x, r], [*outs, pt.grad(cost, x), *more], RNG.normal(size=(3, 4)), np.array([2, 0, 1]))


def _compiled(inputs, outputs):
    converted = from_pytensor(outputs, inputs=inputs)
    return eg.function(converted.inputs, converted.outputs)


@pytest.mark.filterwarnings("ignore:invalid value encountered in log")
def test_a_failed_assert_raises_its_message():
    x = pt.dvector("x")
    f = _compiled([x], [Assert("x must be positive")(pt.log(x), pt.all(x > 0))])
    np.testing.assert_allclose(f(np.array([1.0, 2.0]))[0], np.log([1.0, 2.0]))
    with pytest.raises(AssertionError, match="x must be positive"):
        f(np.array([1.0, -2.0]))


def test_check_and_raise_keeps_its_exception():
    x = pt.dscalar("x")
    f = _compiled([x], [CheckAndRaise(ValueError, "x > 0")(x * 2, x > 0)])
    assert f(1.0)[0] == 2.0
    with pytest.raises(ValueError, match="x > 0"):
        f(-1.0)


def test_a_parameter_check_raises_parameter_value_error():
    logprob = pytest.importorskip("pymc.logprob.utils")
    sigma = pt.dscalar("sigma")
    f = _compiled([sigma], [logprob.CheckParameterValue("sigma > 0")(sigma * 2, sigma > 0)])
    with pytest.raises(logprob.ParameterValueError, match="sigma > 0"):
        f(-1.0)


def test_a_replaceable_parameter_check_is_minus_inf():
    logprob = pytest.importorskip("pymc.logprob.utils")
    sigma = pt.dscalar("sigma")
    check = logprob.CheckParameterValue("sigma > 0", can_be_replaced_by_ninf=True)
    f = _compiled([sigma], [check(sigma * 2, sigma > 0)])
    assert f(1.0)[0] == 2.0 and f(-1.0)[0] == -np.inf


@pytest.mark.parametrize("check_bounds", [True, False])
def test_from_pymc_keeps_parameter_checks_as_pymc_compiles_them(check_bounds):
    pm = pytest.importorskip("pymc")
    from eqgraph.pytensor import from_pymc

    with pm.Model(check_bounds=check_bounds) as model:
        sigma = pm.Normal("sigma")   # free, so it may be negative: Normal's logp checks it
        pm.Normal("y", 0.0, sigma, observed=np.array([0.5, -0.5]))
    converted = from_pymc(model)
    logp = eg.function(converted.inputs, converted.outputs[0])
    with np.errstate(invalid="ignore"):
        want = model.compile_logp()({"sigma": -1.0})
        got = logp(-1.0)
    assert (got == -np.inf) == check_bounds   # unchecked: log(sigma) of a negative sigma is NaN
    np.testing.assert_allclose(got, want)


def test_op_from_graph_is_inlined():
    a, b = pt.dscalar("a"), pt.dscalar("b")
    op = OpFromGraph([a, b], [a * b + pt.exp(a)])
    x, y = pt.dvector("x"), pt.dvector("y")
    out = op(x[0], y[1]) + op(y[0], x[1])
    same_as_pytensor([x, y], [out, *pt.grad(out, [x, y])], RNG.normal(size=2), RNG.normal(size=2))


def test_a_fused_composite_is_inlined():
    a, b = ps.float64("a"), ps.float64("b")
    composite = Elemwise(ps.Composite([a, b], [ps.exp(a) * b - ps.log1p(b * b)]))
    x, y = pt.dvector("x"), pt.dvector("y")
    same_as_pytensor([x, y], [composite(x, y)], RNG.normal(size=4), RNG.normal(size=4))


def test_a_shared_variable_becomes_an_eqgraph_shared_variable_or_an_input():
    data = pytensor.shared(np.arange(3.0), name="data")
    x = pt.dvector("x")
    out = (x * data).sum()
    converted = from_pytensor([out], inputs=[x])
    np.testing.assert_array_equal(converted.shared[data].get_value(), np.arange(3.0))
    assert eg.function(converted.inputs, converted.outputs)(np.ones(3))[0] == 3.0
    as_inputs = from_pytensor([out], inputs=[x], shared_as_inputs=True)
    assert len(as_inputs.inputs) == 2 and not as_inputs.shared
    assert eg.function(as_inputs.inputs, as_inputs.outputs)(np.ones(3), np.full(3, 2.0))[0] == 6.0


def test_an_op_with_no_translation_is_named_with_the_labels_using_it():
    x = pt.dvector("x")
    term = pt.j0(x).sum()   # an op eqgraph has no translation for yet
    with pytest.raises(UnsupportedOp, match=r"Elemwise\(J0\).*in the graph of alpha.*j0"):
        from_pytensor([term + x.sum()], inputs=[x], labels={term: "alpha", x.sum(): "beta"})


def test_an_input_not_listed_is_an_error_naming_it():
    x, y = pt.dvector("x"), pt.dvector("y")
    with pytest.raises(ValueError, match=r"reads y .*list it in `inputs`"):
        from_pytensor([x + y], inputs=[x])


def _batched_arange(start, stop):
    from pytensor.tensor.basic import ARange

    return Blockwise(ARange("int64"), signature="(),(),()->(o)")(start, stop, pt.constant(np.int64(1)))


def test_a_blockwise_of_an_op_with_no_batched_form_is_unrolled_over_its_batch_axes():
    # batch shape (2, 3) from inputs of batch shapes (2, 1) and (3,): broadcasting and a 2-d batch
    start = pt.tensor("start", dtype="int64", shape=(2, 1))
    stop = pt.tensor("stop", dtype="int64", shape=(3,))
    (got,) = same_as_pytensor([start, stop], [_batched_arange(start, stop)],
                              np.array([[1], [1]]), np.array([5, 5, 5]), rtol=0)
    assert got.shape == (2, 3, 4)
    # no batch axes: the one block
    (got,) = same_as_pytensor([start, stop], [_batched_arange(start[0, 0], stop[0])],
                              np.array([[1], [1]]), np.array([5, 5, 5]), rtol=0)
    assert got.shape == (4,)
    # blocks of different lengths are an error, as in PyTensor, not a ragged result
    converted = from_pytensor([_batched_arange(start, stop)], inputs=[start, stop])
    with pytest.raises(ValueError, match="Join"):
        eg.function(converted.inputs, converted.outputs)(np.array([[0], [2]]), np.array([5, 5, 5]))


def test_a_blockwise_of_an_op_from_graph_is_unrolled():
    from pytensor.graph.replace import vectorize_graph

    v, x = pt.dvector("v"), pt.tensor("x", dtype="float64", shape=(3, None))
    out = vectorize_graph(alloc_diag(v), {v: x})   # AllocDiag is an OpFromGraph
    assert isinstance(out.owner.op, Blockwise) and isinstance(out.owner.op.core_op, OpFromGraph)
    same_as_pytensor([x], [out, pt.grad((out**2).sum(), x)], RNG.normal(size=(3, 2)))


def test_a_blockwise_over_batch_axes_of_unknown_size_is_vectorized():
    # no static batch size to unroll over: eqgraph's Blockwise takes the batch at call time
    start, stop = pt.lvector("start"), pt.lmatrix("stop")
    out = _batched_arange(start[:, None], stop)
    converted = from_pytensor([out], inputs=[start, stop])
    assert any(isinstance(node.op, EqBlockwise) for node in toposort(converted.outputs, converted.inputs))
    for batch in [(1, 1), (2, 3), (4, 1)]:
        (got,) = same_as_pytensor([start, stop], [out], np.ones(batch[0], dtype="int64"),
                                  np.full(batch, 6, dtype="int64"), rtol=0)
        assert got.shape == (*batch, 5)


def test_a_blockwise_of_an_op_from_graph_over_an_unknown_batch_and_its_gradient():
    from pytensor.graph.replace import vectorize_graph

    v, x = pt.dvector("v"), pt.dmatrix("x")
    out = vectorize_graph(alloc_diag(v), {v: x})   # AllocDiag is an OpFromGraph
    assert isinstance(out.owner.op, Blockwise) and out.owner.inputs[0].type.shape[0] is None
    for n in (1, 4):
        same_as_pytensor([x], [out, pt.grad((out**2 * 1.5).sum(), x)], RNG.normal(size=(n, 3)))


def test_a_blockwise_cholesky_and_solve_over_a_batch_given_at_call_time():
    from pytensor.tensor.slinalg import cholesky, solve

    a, b = pt.tensor3("a"), pt.tensor3("b")
    spd = a @ a.mT + 3 * pt.eye(3)
    chol, sol = cholesky(spd), solve(spd, b)
    assert isinstance(chol.owner.op, Blockwise) and isinstance(sol.owner.op, Blockwise)
    cost = chol.sum() + (sol**2).sum()
    for n in (2, 5):
        same_as_pytensor([a, b], [chol, sol, *pt.grad(cost, [a, b])], RNG.normal(size=(n, 3, 3)),
                         RNG.normal(size=(n, 3, 2)), rtol=1e-10)


def _ar_scan():
    """A scan with every kind of forward state: a sequence at two taps, a state at taps -2 and -1,
    one at -1, an output not fed back, and a constant across steps."""
    x, a, s0, m0 = pt.dvector("x"), pt.dscalar("a"), pt.dscalar("s0"), pt.dvector("m0")
    outs = pytensor.scan(lambda xt, xp, m2, m1, s, a: (m1 * a - 0.5 * m2 + xt, s * a + xt + xp, s * 2.0),
                         sequences=[dict(input=x, taps=[0, -1])], outputs_info=[dict(initial=m0, taps=[-2, -1]), s0, None],
                         non_sequences=[a], return_updates=False)
    return [x, a, s0, m0], outs


def test_a_forward_scan_becomes_an_eqgraph_scan():
    inputs, outs = _ar_scan()
    got = same_as_pytensor(inputs, [*outs, *(o.sum() for o in outs)],
                           RNG.normal(size=7), 0.7, 0.3, RNG.normal(size=2))
    assert [np.shape(g) for g in got[:3]] == [(6,), (6,), (6,)]


def test_a_scan_state_buffer_shorter_than_its_steps_is_an_error():
    # PyTensor's memory-saving rewrites give a state a circular buffer, shorter than its steps;
    # the conversion reads the buffer as initial entries plus one per step, and checks that
    inputs, outs = _ar_scan()
    node = outs[1].owner.inputs[0].owner   # the Scan; outs[1] is its sit_sot output without the initial entry
    buffer_at = 1 + node.op.info.n_seqs + len(node.op.info.mit_sot_in_slices)
    short = list(node.inputs)
    short[buffer_at] = short[buffer_at][:3]
    out = node.op(*short)[1][-1]
    converted = from_pytensor([out], inputs=inputs)
    with pytest.raises(ValueError, match="buffer must hold its 1 initial entries and one per step"):
        eg.function(converted.inputs, converted.outputs)(RNG.normal(size=7), 0.7, 0.3, RNG.normal(size=2))
