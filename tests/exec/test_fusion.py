"""Elementwise fusion (eqgraph/exec/fusion.py, composite.py, kernels.py): fused programs give
exactly what unfused ones give, on random graphs and on large arrays (the blocked kernel),
NaN and inf included; a Composite is an op like any other (shape, gradient, dprint)."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec import fusion
from eqgraph.exec.numpy import kernels as kernels
from eqgraph.exec.composite import Composite
from eqgraph.exec.fusion import fuse, recompute_for_late_readers
from eqgraph.tensor.shape import SumToShape
from eqgraph.terms.fgraph import FunctionGraph
from fuzz_graphs import make_graph

E = et.ELEMWISE_OPS


def composites(f) -> list:
    return [n for n in f.fgraph.toposort() if isinstance(n.op, Composite)]


def assert_same_results(got, want):
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)  # NaN and inf in the same places, bit for bit otherwise


def fused_and_unfused(graph, **kwargs):
    syms = [s for s, _ in graph.inputs]
    outs = [t.sym for t in graph.outputs]
    fused = eg.function(syms, outs, on_unused_input="ignore", **kwargs)
    plain = eg.function(syms, outs, on_unused_input="ignore", fusion=False, **kwargs)
    with np.errstate(all="ignore"):
        return fused, fused(*[v.copy() for _, v in graph.inputs]), plain(*[v.copy() for _, v in graph.inputs])


def _check_random_graphs(seeds, **kwargs):
    fused_any = 0
    for seed in seeds:
        graph = make_graph(seed)
        f, got, want = fused_and_unfused(graph, **kwargs)
        fused_any += bool(composites(f))
        try:
            assert_same_results(got, want)
        except AssertionError as err:
            raise AssertionError(f"seed {seed}:\n{graph.describe()}\n{err}") from err
    # the sample does exercise fusion: with the default rules, which simplify many random graphs
    # to one elementwise node or none, 123 of seeds 3000-3499 fuse (measured at f01c6e5)
    assert fused_any > len(seeds) // 5


def test_fusion_keeps_results_of_random_graphs():
    _check_random_graphs(range(30), rulesets=[])


@pytest.mark.slow
def test_fusion_keeps_results_of_many_random_graphs():
    _check_random_graphs(range(1000, 2000), rulesets=[])
    _check_random_graphs(range(3000, 3500))


LARGE = 3 * kernels.BLOCK + 17  # blocked kernel, with a partial last block


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
def test_blocked_kernel_equals_unfused_with_nan_inf_and_broadcast_constants(dtype):
    rng = np.random.default_rng(1)
    x, y = et.vector("x", dtype=dtype), et.vector("y", dtype="float64")
    outs = [et.exp(x * 0.5) + y, et.sigmoid(x) * et.sqrt(et.abs(y)) - 2, et.cast(x + 1, "float32") * y,
            et.switch(x > 0, et.log(et.abs(x) + 1), y), (x * 3) // 2]
    values = rng.uniform(-5, 5, LARGE)
    values[::97] = np.nan
    values[1::89] = np.inf
    xv = values.astype(dtype) if dtype != "int64" else rng.integers(-9, 9, LARGE)
    yv = np.roll(values, 5)
    f = eg.function([x, y], outs, rulesets=[])
    g = eg.function([x, y], outs, rulesets=[], fusion=False)
    assert len(composites(f)) >= 1
    with np.errstate(all="ignore"):
        assert_same_results(f(xv, yv), g(xv, yv))


def test_outer_broadcasting_uses_whole_arrays():
    x, y = et.dcol("x"), et.drow("y")
    out = et.exp(x) * y + x
    f, g = eg.function([x, y], out, rulesets=[]), eg.function([x, y], out, rulesets=[], fusion=False)
    xv, yv = np.linspace(-1, 1, 300)[:, None], np.linspace(0, 2, 200)[None, :]
    assert_same_results([f(xv, yv)], [g(xv, yv)])


def test_dprint_shows_what_was_fused_and_multiple_outputs():
    x = et.dvector("x")
    e = et.exp(x)
    f = eg.function([x], [e, e * 2 + x], rulesets=[])
    [node] = composites(f)
    assert len(node.outputs) == 2
    text = eg.dprint(f, file="str")
    # the encoder puts add's operands in its canonical order: either order is the same sum
    assert ("Composite{t0=exp(i0); t0; add(mul(t0, i1), i0)}" in text
            or "Composite{t0=exp(i0); t0; add(i0, mul(t0, i1))}" in text)
    assert "== fused (what runs) ==" in str(f.stages)
    np.testing.assert_allclose(f(np.array([0.0, 1.0]))[1], 2 * np.exp([0.0, 1.0]) + [0.0, 1.0])


def test_a_path_leaving_and_reentering_a_group_is_not_fused_into_a_cycle():
    x = et.dvector("x")
    p = et.exp(x) * 2                          # a group
    s = et.sum(p)                              # outside it: not elementwise
    out = p + s                                # reads the group and, through the sum, the group again
    f = eg.function([x], out, rulesets=[])
    value = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(f(value), 2 * np.exp(value) + 2 * np.exp(value).sum())
    assert len(composites(f)) == 1 and "Elemwise{add}" in [str(n.op) for n in f.fgraph.toposort()]


def test_a_path_through_a_third_group_is_not_fused_into_a_cycle():
    # q's group holds m1 (after the sum of the first group) and m2 (before y, which the first
    # group reads): joining n to the first group would make the two groups need each other.
    # Nothing was fused at all then, silently (a radon model's gradient kept 127 lone nodes).
    a, s = et.dvector("a"), et.dvector("s")
    p = et.exp(a)
    m1 = et.sum(p) * 2
    m2 = et.sin(s)
    q = m1 + m2
    y = et.sum(m2)
    n = p * y
    graph = FunctionGraph([a, s], [q, n], clone=False)
    fused = fuse(graph)
    steps = [len(node.op.steps) for node in fused.toposort() if isinstance(node.op, Composite)]
    assert steps == [2], fused.toposort()    # m2 and q; p, m1 and n stay apart
    f = eg.function([a, s], [q, n], rulesets=[])
    av, sv = np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0])
    got_q, got_n = f(av, sv)
    np.testing.assert_allclose(got_q, 2 * np.exp(av).sum() + np.sin(sv))
    np.testing.assert_allclose(got_n, np.exp(av) * np.sin(sv).sum())


def test_a_libm_step_is_not_fused_into_a_loop_that_would_repeat_it_along_a_broadcast_axis():
    # a mixture's exp(log_sigma): one value per component, read by every (row, component) element
    x, s = et.TensorType("float64", (500, 1))("x"), et.TensorType("float64", (1, None))("s")
    scale = et.exp(s)
    graph = FunctionGraph([x, s], [(x - 1.0) / scale * 2.0, scale * 3.0], clone=False)
    fused = [node.op for node in fuse(graph).toposort() if isinstance(node.op, Composite)]
    assert ["exp" in str(op) for op in fused] == [True, False], fused   # exp alone, then the long loop
    # a few repeats of a libm step cost less than one more node: fused
    v, t = et.TensorType("float64", (8,))("v"), et.TensorType("float64", (1,))("t")
    short = FunctionGraph([v, t], [v * et.exp(t) + 1.0], clone=False)
    assert [len(node.op.steps) for node in fuse(short).toposort() if isinstance(node.op, Composite)] == [3]
    f = eg.function([x, s], [(x - 1.0) / scale * 2.0, scale * 3.0], rulesets=[])
    xv, sv = np.linspace(-1, 1, 500).reshape(500, 1), np.array([[0.1, -0.2, 0.3]])
    got = f(xv, sv)
    np.testing.assert_allclose(got[0], (xv - 1.0) / np.exp(sv) * 2.0, rtol=1e-15)
    np.testing.assert_allclose(got[1], np.exp(sv) * 3.0, rtol=1e-15)


def test_nodes_of_constants_are_left_for_constant_folding():
    x = et.dvector("x")
    c = et.exp(et.constant(np.array([1.0, 2.0]))) * 3     # known at link time
    f = eg.function([x], x * c + 1, rulesets=[])
    folded = [n for n in f.fgraph.toposort() if not isinstance(n.op, Composite)]
    assert {str(n.op) for n in folded} >= {"Elemwise{exp}", "Elemwise{mul}"}
    assert all(n.outputs[0] in f.stages.program.folded for n in folded)
    np.testing.assert_allclose(f(np.ones(2)), np.exp([1.0, 2.0]) * 3 + 1)


def test_fuse_leaves_a_graph_without_groups_as_it_is():
    x = et.dmatrix("x")
    graph = FunctionGraph([x], [et.exp(x).sum()], clone=False)
    assert fuse(graph) is graph


def test_a_sum_to_a_shape_provably_the_same_is_dropped_and_others_are_kept():
    x, y, b = et.dvector("x"), et.dvector("y"), et.dscalar("b")
    same = et.sum_to_shape(et.exp(x) * 2.0 + b.dimshuffle("x"), x * 3.0)   # both have x's shape
    maybe = et.sum_to_shape(x * y, y + 1.0)        # x may be longer than y (y of length 1)
    f = eg.function([x, y, b], [same * 5.0, maybe * 5.0], rulesets=[])
    sums = [n for n in f.fgraph.toposort() if isinstance(n.op, SumToShape)]
    assert len(sums) == 1 and sums[0].inputs[1] is f.fgraph.inputs[1]   # y + 1.0 has y's shape
    (fused,) = composites(f)   # the dropped sum no longer splits exp(x) * 2 + b from * 5; x * 3 is gone
    assert [op.name for op, _ in fused.op.steps] == ["exp", "mul", "add", "mul"]
    plain = eg.function([x, y, b], [same * 5.0, maybe * 5.0], rulesets=[], fusion=False)
    for xv, yv in ((np.arange(3.0), np.ones(3)), (np.arange(3.0), np.ones(1)), (np.ones(1), np.arange(3.0))):
        assert_same_results(f(xv, yv, 0.5), plain(xv, yv, 0.5))
    # where the shapes can differ the sum happens: x of length 3 against y of length 1
    np.testing.assert_array_equal(f(np.arange(3.0), np.ones(1), 0.5)[1], [15.0])


def test_a_like_computed_from_one_variable_reads_that_variables_shape_instead():
    x, y = et.dvector("x"), et.dvector("y")
    out = et.sum_to_shape(x * y, et.tanh(x) * 2.0) * 5.0     # tanh(x) * 2 is only measured
    f = eg.function([x, y], out, rulesets=[])
    (node,) = [n for n in f.fgraph.toposort() if isinstance(n.op, SumToShape)]
    assert node.inputs[1] is f.fgraph.inputs[0]
    assert all("tanh" not in str(n.op) for n in f.fgraph.toposort())
    plain = eg.function([x, y], out, rulesets=[], fusion=False)
    for xv, yv in ((np.arange(3.0), np.ones(3)), (np.ones(1), np.arange(3.0)), (np.arange(3.0), np.ones(1))):
        assert_same_results([f(xv, yv)], [plain(xv, yv)])
    np.testing.assert_array_equal(f(np.ones(1), np.arange(3.0)), [15.0])   # summed to x's length


def test_a_cheap_value_read_after_its_own_reduction_is_computed_again_not_written(monkeypatch):
    """(x - m) / sqrt(mean((x - m)**2)): the division reads x - m after the mean of its square, so it
    computes x - m itself and the group summing the squares writes nothing but its sum (where sums
    are fused: with Numba)."""
    monkeypatch.setattr(fusion, "FUSE_REDUCTIONS", True)
    x = et.dvector("x")
    m = x.mean().dimshuffle("x")
    centred = x - m
    out = centred / et.sqrt((centred ** 2).mean() + 1e-8).dimshuffle("x")
    graph = FunctionGraph([x], [out], clone=False)
    again = recompute_for_late_readers(graph)
    subs = [n for n in again.toposort() if getattr(n.op, "name", "") == "sub"]
    assert len(subs) == 2 and subs[0].inputs == subs[1].inputs
    readers = [[c for c, _ in again.clients[s.outputs[0]]] for s in subs]
    assert sorted(len(r) for r in readers) == [1, 1]   # one for the square, one for the division
    f = eg.function([x], out, rulesets=[])
    plain = eg.function([x], out, rulesets=[], fusion=False)
    division = [n for n in composites(f) if "true_div" in str(n.op)]
    assert len(division) == 1 and "sub" in str(division[0].op)
    for value in (np.arange(5.0), np.array([1.0, np.nan, 2.0]), np.linspace(-1.0, 3.0, 3000)):
        assert_same_results([f(value)], [plain(value)])


def test_values_are_not_computed_again_where_that_costs_more_than_writing_them(monkeypatch):
    monkeypatch.setattr(fusion, "FUSE_REDUCTIONS", True)
    x, y = et.dvector("x"), et.dvector("y")
    for value in (et.exp(x), x - y, x - et.constant(np.arange(4.0))):   # a libm call; two arrays to read
        # instead of one (a constant array is one too)
        out = value / value.sum().dimshuffle("x")
        graph = FunctionGraph([x, y], [out], clone=False)
        assert recompute_for_late_readers(graph) is graph
    written = x * 2.0
    graph = FunctionGraph([x], [written / written.sum().dimshuffle("x"), et.dot(written, x)], clone=False)
    assert recompute_for_late_readers(graph) is graph   # a dot reads it too: it is written anyway
    monkeypatch.setattr(fusion, "FUSE_REDUCTIONS", False)   # sums not fused: the value is written for its sum
    centred = x - x.mean().dimshuffle("x")
    graph = FunctionGraph([x], [centred / (centred ** 2).sum().dimshuffle("x")], clone=False)
    assert recompute_for_late_readers(graph) is graph


def test_logistic_regression_gradient_fuses_across_dropped_sums_and_keeps_its_values():
    x, y, w = et.dmatrix("x"), et.dvector("y"), et.dvector("w")
    p = et.sigmoid(x @ w)
    loss = -(y * et.log(p) + (1 - y) * et.log(1 - p)).mean()
    outs = [loss, eg.grad(loss, w)]
    f, plain = eg.function([x, y, w], outs), eg.function([x, y, w], outs, fusion=False)
    assert sum(isinstance(n.op, SumToShape) for n in f.fgraph.toposort()) < \
        sum(isinstance(n.op, SumToShape) for n in plain.fgraph.toposort())
    rng = np.random.default_rng(1)
    values = (rng.normal(size=(6, 3)), (rng.uniform(size=6) > 0.5) * 1.0, rng.normal(size=3))
    assert_same_results(f(*values), plain(*values))


def _composite_of(x, w):
    op = Composite(2, [(E["mul"], (0, 1)), (E["exp"], (2,)), (E["add"], (3, 0))], [4, 2])
    return op(x, w)


def test_composite_gradient_goes_through_its_scalar_graph():
    x, w = et.dvector("x"), et.dscalar("w")
    out, product = _composite_of(x, w)
    cost = (out * out).sum() + product.sum()
    gx, gw = eg.grad(cost, [x, w])
    f = eg.function([x, w], [gx, gw], rulesets=[], fusion=False)
    xv, wv = np.array([0.3, -0.2, 1.0]), np.float64(0.7)
    o = np.exp(xv * wv) + xv
    want_x = 2 * o * (np.exp(xv * wv) * wv + 1) + wv
    want_w = (2 * o * np.exp(xv * wv) * xv).sum() + xv.sum()
    got_x, got_w = f(xv, wv)
    np.testing.assert_allclose(got_x, want_x)
    np.testing.assert_allclose(got_w, want_w)


def test_composite_infer_shape_and_perform():
    x, w = et.dmatrix("x"), et.drow("w")
    out, product = _composite_of(x, w)
    node = out.owner
    shapes = node.op.infer_shape(None, node, [tuple(et.shape(x)[i] for i in range(2)),
                                              tuple(et.shape(w)[i] for i in range(2))])
    f = eg.function([x, w], [et.stack(list(s)) for s in shapes], rulesets=[])
    xv, wv = np.ones((4, 3)), np.ones((1, 3))
    assert [tuple(s) for s in f(xv, wv)] == [(4, 3), (4, 3)]
    storage = [[None], [None]]
    node.op.perform(node, [xv, wv], storage)
    np.testing.assert_allclose(storage[0][0], np.exp(xv * wv) + xv)


def test_composite_refuses_a_step_reading_a_later_value():
    with pytest.raises(ValueError, match=r"step 0 \(Elemwise\{exp\}\) reads \(1,\)"):
        Composite(1, [(E["exp"], (1,))], [1])
    with pytest.raises(TypeError, match="must be an Elemwise or Cast"):
        Composite(1, [(et.Reduce("sum", (0,)), (0,))], [1])


def test_a_failing_fused_node_names_itself_and_the_step_that_failed():
    from eqgraph.exec.node_errors import NodeError

    x, y = et.dvector("x"), et.fvector("y")
    f = eg.function([x, y], (x + y) * 2.0, rulesets=[])
    with pytest.raises(ValueError) as info:
        f(np.ones(3), np.ones(4, dtype="float32"))
    err, text = info.value, str(info.value)
    assert isinstance(err, NodeError) and isinstance(err.node.op, Composite)
    assert "step 0 of the fused node, Elemwise{add} of shapes ((3,), (4,))" in text
    assert "could not be broadcast" in text
    assert "ndarray of dtype float32 and shape (4,)" in text


def test_a_long_blocked_chain_reuses_buffers_and_keeps_every_output():
    x = et.dvector("x")
    y, kept = x, []
    for i in range(12):
        y = et.exp(-y * y) * 0.5 + y * 0.25 - x
        if i % 4 == 0:
            kept.append(y)                       # intermediate outputs of the same fused node
    f = eg.function([x], [y, *kept], rulesets=[])
    g = eg.function([x], [y, *kept], rulesets=[], fusion=False)
    assert len(composites(f)) == 1 and len(composites(f)[0].outputs) == 1 + len(kept)
    value = np.linspace(-4, 4, LARGE)
    value[::50] = np.nan
    assert_same_results(f(value), g(value))


def test_intermediates_keep_their_memory_across_calls_but_results_never_do():
    x = et.dvector("x")
    centered = x - x.mean()
    out = centered / et.sqrt((centered ** 2).mean() + 1e-8)  # the fused centering is an intermediate
    f = eg.function([x], [out, x * 2 + 1], rulesets=[])
    a, b = np.linspace(-1, 3, LARGE), np.linspace(5, -2, LARGE)
    first = f(a)
    kept = [r.copy() for r in first]
    second = f(b)
    for r, k in zip(first, kept):
        np.testing.assert_array_equal(r, k)            # a later call never writes into a result
    for r, v in zip(second, (b,)):
        np.testing.assert_allclose(r, (v - v.mean()) / np.sqrt(((v - v.mean()) ** 2).mean() + 1e-8))
    assert not any(np.shares_memory(r1, r2) for r1 in first for r2 in second)


@pytest.mark.parametrize("x_shape, y_shape", [((3,), (3,)), ((2, 3), (3,)), ((), ()), ((4,), ()), ((1,), (2, 1))])
def test_kernel_forms_of_steps_equal_the_ops_own(x_shape, y_shape):
    values = np.array([-0.0, np.nan, np.inf, -1.5, 2.0, 0.0])
    x = np.resize(values, x_shape)
    for y in (np.resize(values[::-1], y_shape), np.float64(-0.0), np.resize(np.arange(6, dtype="int32"), y_shape)):
        for name, form in kernels.NUMPY_FORMS.items():
            op = E[name]
            args = (x, y)[:op.nin]
            want, got = op.scalar.impl(np)(*args), form(*args)
            assert np.asarray(got).dtype == np.asarray(want).dtype and np.shape(got) == np.shape(want)
            assert np.array_equal(np.signbit(got), np.signbit(want))
            np.testing.assert_array_equal(got, want)


class _CountingLookups(dict):
    """LIBM_EXTRA_NS as fusion reads it, counting the reads."""

    reads = 0

    def get(self, *args):
        self.reads += 1
        return super().get(*args)


def test_fusing_a_long_chain_prices_each_node_a_bounded_number_of_times(monkeypatch):
    # a chain grows one group node by node; pricing the whole group again at every join made
    # fusion quadratic in the chain's length (the largest stage of a 2000-node compile)
    costs = _CountingLookups(fusion.LIBM_EXTRA_NS)
    monkeypatch.setattr(fusion, "LIBM_EXTRA_NS", costs)
    x = et.dvector("x")
    a = x
    for _ in range(300):
        t = et.tanh(a)
        a = t * 0.5 + t * x
    graph = FunctionGraph([x], [a], clone=False)
    [composite] = [n.op for n in fuse(graph).toposort() if isinstance(n.op, Composite)]
    assert len(composite.steps) >= 4 * 300   # tanh, two products and the sum of every step
    assert costs.reads <= 4 * len(graph.apply_nodes), costs.reads
