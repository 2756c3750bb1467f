"""Reductions, indexing and allocation rules on numbers: each rewrite
applies (the compiled graph changes as expected) and keeps NumPy's values. The general rules
of reductions.egg and indexing.egg are not drawn by the soundness checker; these are their tests."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et

x, y = et.dmatrix("x"), et.dmatrix("y")
v = et.dvector("v")
i = et.lscalar("i")
n = et.lscalar("n")
k = et.lmatrix("k")
X = np.arange(1.0, 13.0).reshape(3, 4) / 7
Y = np.linspace(-1, 1, 16).reshape(4, 4)
V = np.linspace(-2, 3, 5)
VALUES = {x: X, y: Y, v: V, i: np.int64(1), n: np.int64(4), k: np.arange(12).reshape(3, 4)}


def ops_of(f) -> list[str]:
    return [str(node.op) for node in f.stages.optimized.toposort()]


def compiled(out):
    inputs = [var for var in VALUES if var in set(eg.terms.graph.graph_inputs([out]))]
    f = eg.function(inputs, out)
    reference = eg.function(inputs, out, rulesets=[])   # NumPy, op by op
    args = [VALUES[var] for var in inputs]
    np.testing.assert_allclose(f(*args), reference(*args), rtol=1e-12, atol=0)
    return ops_of(f)


@pytest.mark.parametrize("build, has, lacks", [
    # reductions
    (lambda: (x * 3.0).sum(), ["Elemwise{mul}"], []),                  # 3 * sum(x): one multiplication
    (lambda: (x * 3.0).sum(axis=1), ["Sum{axis=(1,)}"], []),
    (lambda: (x * 3.0).sum(axis=0, keepdims=True), ["Sum{axis=(0,), keepdims}"], []),
    (lambda: (-x).sum(axis=0), ["Elemwise{neg}"], []),
    (lambda: x.sum(axis=1).sum(axis=0), ["Sum{axis=(0, 1)}"], []),
    (lambda: x.sum(axis=0).sum(axis=0), ["Sum{axis=(0, 1)}"], []),
    (lambda: x.sum(axis=1, keepdims=True).sum(axis=0, keepdims=True), ["Sum{axis=(0, 1), keepdims}"], []),
    (lambda: et.full((n,), 2.5).sum(), [], ["Alloc", "Sum{axis=(0,)}"]),
    (lambda: et.full((n, i), 0.5).sum(), [], ["Alloc", "Sum{axis=(0, 1)}"]),
    (lambda: et.zeros((n, i)).sum(axis=0), ["Alloc"], ["Sum{axis=(0,)}"]),
    (lambda: -et.max(-x, axis=1), ["Min{axis=(1,)}"], ["Elemwise{neg}"]),
    (lambda: -et.min(-x), ["Max{axis=(0, 1)}"], ["Elemwise{neg}"]),
    # indexing below elementwise ops and matrix products
    (lambda: et.exp(x)[:2], ["Elemwise{exp}"], []),
    (lambda: et.tanh(x)[i], [], []),
    (lambda: (x * 2.0)[1:, 2], [], []),
    (lambda: (x @ y)[0], ["matmul"], []),
    (lambda: (x @ y)[1:], ["matmul"], []),
    (lambda: (x @ y)[i], ["matmul"], []),
    # read after write, useless writes
    (lambda: et.set_subtensor(x[1:], y[:2])[1:], [], ["IncSubtensor"]),
    (lambda: et.inc_subtensor(x[:, 1], v[:3])[:, 1], [], ["IncSubtensor"]),
    (lambda: et.set_subtensor(x[1], x[1]), [], ["IncSubtensor"]),
    (lambda: et.inc_subtensor(k[0], 0), [], ["IncSubtensor"]),
    # allocation
    (lambda: et.alloc(v.dimshuffle("x", 0), n, 5), ["Alloc"], ["DimShuffle{x,0}"]),
    (lambda: et.alloc(v, v.shape[0]), [], ["Alloc"]),
    (lambda: et.alloc(x, x.shape[0], x.shape[1]), [], ["Alloc"]),
])
def test_rule_applies_and_keeps_values(build, has, lacks):
    ops = compiled(build())
    for op in has:
        assert any(o.startswith(op) for o in ops), ops
    for op in lacks:
        assert not any(o.startswith(op) for o in ops), ops


BIG = et.TensorType("float64", (1000, 50))


def test_indexing_moves_below_the_elementwise_op():
    # with static sizes the cost model sees that exp(x[:2]) is 500x less work
    big = BIG("big")
    f = eg.function([big], et.exp(big)[:2])
    [node] = [nd for nd in f.stages.optimized.toposort() if str(nd.op) == "Elemwise{exp}"]
    assert node.inputs[0].owner is not None and "Subtensor" in str(node.inputs[0].owner.op)
    np.testing.assert_allclose(f(np.ones((1000, 50)))[1], np.exp(np.ones(50)))


def test_a_row_of_a_product_is_a_vector_matrix_product():
    a, b = BIG("a"), et.TensorType("float64", (50, 1000))("b")
    f = eg.function([a, b], (a @ b)[3])
    [node] = [nd for nd in f.stages.optimized.toposort() if str(nd.op) == "matmul"]
    assert node.inputs[0].ndim == 1
    A, B = np.random.default_rng(0).normal(size=(2, 1000, 50))
    np.testing.assert_allclose(f(A, B.T), (A @ B.T)[3])


def test_float_inc_by_zero_keeps_negative_zeros():
    # x[0] += 0.0 turns -0.0 into +0.0 in NumPy: not removed for floats
    f = eg.function([v], et.inc_subtensor(v[0], 0.0))
    assert not np.signbit(f(np.array([-0.0, 1.0]))[0])


s = et.dscalar("s")


@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), (0, True)])
def test_a_sum_times_a_scalar_variable(axis, keepdims):
    # sum(x * s) -> sum(x) * s for a 0-d s; with static sizes the cost model sees the gain
    big = BIG("big")
    f = eg.function([big, s], (big * s).sum(axis=axis, keepdims=keepdims))
    name = "sum-mul-scalar-keepdims" if keepdims else "sum-mul-scalar"
    assert f.stages.report.fired().get(f"reductions/{name}")
    order = [str(n.op) for n in f.stages.optimized.toposort()]
    assert order.index("Elemwise{mul}") > min(i for i, op in enumerate(order) if op.startswith("Sum")), order
    values = np.linspace(0.5, 2, 50_000).reshape(1000, 50), np.float64(-2.5)
    np.testing.assert_allclose(f(*values), (values[0] * values[1]).sum(axis=axis, keepdims=keepdims), rtol=1e-12)


def test_a_mean_of_a_mean_is_one_mean():
    for out in [x.mean(axis=0).mean(), x.mean(axis=1).mean(axis=0), x.mean(axis=1, keepdims=True).mean(axis=0, keepdims=True)]:
        f = eg.function([x], out)
        assert f.stages.report.fired().get("reductions/mean-mean")
        assert len(f.stages.optimized.toposort()) == 1
        np.testing.assert_allclose(f(X), eg.function([x], out, rulesets=[])(X), rtol=1e-15)


def test_the_sum_of_zeros_like_is_zero_whatever_x_holds():
    f = eg.function([x], et.zeros_like(x).sum())
    assert f.stages.report.fired().get("reductions/sum-zeros-like")
    assert len(f.stages.optimized.toposort()) == 0
    assert f(np.array([[np.nan, np.inf]])) == 0.0
    assert eg.function([k], et.zeros_like(k).sum())(VALUES[k]).dtype == np.int64


@pytest.mark.parametrize("shape", [(n,), (n, i)])
def test_the_sum_of_an_empty_fill_is_plus_zero(shape):
    # c * size is -0.0 for a negative c and size 0, where NumPy's sum of nothing is +0.0
    inputs = [v for v in (n, i) if v in shape]
    f = eg.function(inputs, et.full(shape, -2.5).sum())
    got = f(*[np.int64(0)] * len(inputs))
    assert got == 0.0 and not np.signbit(got)
    np.testing.assert_array_equal(f(*[np.int64(3)] * len(inputs)), -2.5 * 3 ** len(inputs))


def test_no_rule_narrows_a_float32_accumulator():
    # a float32 sum asked to accumulate in float64: 1e8 + 1 - 1e8 is 1 there and 0 in float32,
    # so a rule that moved the sum (or a mean made of it) to float32 would show
    f32 = et.fmatrix("f")
    big = np.asarray([[1e8, 1, -1e8], [1e8, 1, -1e8]], dtype="float32").T
    acc = {"acc_dtype": "float64"}
    outs = [f32.sum(0, **acc), f32.mean(0, **acc), f32.sum(0, **acc) / 3, (f32 * 2).sum(0, **acc),
            -(-f32).sum(0, **acc), (f32.sum(0, keepdims=True, **acc) * 4).sum(**acc),
            et.sum(et.sum(f32, 1, **acc), 0, **acc)]
    f = eg.function([f32], outs)
    for k in range(4):  # the program, then its Numba forms
        if k == 2:
            f.wait_compiled()
        got = f(big)
        assert [g.dtype for g in got] == ["float32"] * len(outs)
        np.testing.assert_allclose(np.hstack([np.ravel(g) for g in got]),
                                   [1, 1, 1 / 3, 1 / 3, 1 / 3, 1 / 3, 2, 2, 1, 1, 8, 2], rtol=1e-6)
