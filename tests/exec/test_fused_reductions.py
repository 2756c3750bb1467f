"""Sums and means fused into elementwise nodes (eqgraph/exec/reducing.py, numba/fused.py,
fusion.fuse_reductions): results equal to unfused execution, bit for bit, on the NumPy path and
on the hot Numba path (NaN/inf, axes, keepdims, negative axes, broadcasting, empty arrays, a value
also read elsewhere), NumPy's pairwise accuracy, and the node as an op (shape, gradient, dprint).
Tests that compile skip without Numba."""

import math
import warnings

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec import fusion
from eqgraph.exec.numba import fused as numba_fused
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.exec.reducing import ReducingComposite

needs_numba = pytest.mark.skipif(numba_kernels.numba is None, reason="Numba is not installed")
DEFAULT_FUSE_REDUCTIONS = fusion.FUSE_REDUCTIONS


@pytest.fixture(autouse=True)
def _fused_even_without_numba(monkeypatch):
    """The op's NumPy path is tested where Numba is missing too (fusion then leaves reductions)."""
    monkeypatch.setattr(fusion, "FUSE_REDUCTIONS", True)


def reducing_nodes(f) -> list:
    return [n for n in f.fgraph.toposort() if isinstance(n.op, ReducingComposite)]


def _values(rng, shape, special=True):
    """Values of very different magnitudes (so the order of additions shows), some NaN and inf."""
    x = rng.normal(size=shape) * 10.0 ** rng.uniform(-6, 6, size=shape)
    if special and x.size > 12:
        flat = x.reshape(-1)
        flat[rng.integers(0, x.size)] = rng.choice([np.inf, -np.inf, np.nan])
    return x


def _cases():
    """(name, inputs, outputs, shapes) covering the layouts the kernel takes and some it does not."""
    x, y, m, n = et.dvector("x"), et.dvector("y"), et.dmatrix("m"), et.dmatrix("n")
    t = et.dtensor3("t")
    r = et.dcol("r")
    yield "whole", [x, y], [(x * y + 1.0).sum()], [(37,), (37,)]
    yield "mean and value read elsewhere", [x, y], [(x - y).mean(), (x - y) * 2.0], [(300,), (300,)]
    yield "value itself an output (unfused)", [x], [(x * x).sum(), x * x], [(1000,)]
    long = x
    for _ in range(20):   # 40 steps: fused although written (fusion.WRITTEN_FROM_STEPS)
        long = long * 0.5 + x
    yield "long value itself an output", [x], [long.mean(), long], [(300,)]
    yield "standardize", [x], [(x - x.mean()) / et.sqrt(((x - x.mean()) ** 2).mean() + 1e-8)], [(129,)]
    yield "rows keepdims", [m, n], [(m * n - 1.0).sum(axis=1, keepdims=True)], [(7, 300), (7, 300)]
    yield "negative axis", [m], [et.sqrt(et.abs(m)).sum(axis=-1)], [(5, 9)]
    yield "columns", [m, n], [(m - n).mean(axis=0), (m + n).sum(axis=0, keepdims=True)], [(40, 6), (40, 6)]
    yield "one column", [m], [(m * 3.0).sum(axis=0)], [(300, 1)]
    yield "broadcast column", [m, r], [(m - r).sum(axis=1), ((m - r) ** 2).sum(axis=1)], [(6, 200), (6, 1)]
    yield "broadcast row", [m, x], [(m * x.dimshuffle("x", 0)).sum(axis=0)], [(30, 4), (4,)]
    yield "trailing axes of 3", [t], [(t * t).sum(axis=(1, 2))], [(3, 4, 50)]
    yield "leading axes of 3", [t], [(t + 1.0).mean(axis=(0, 1))], [(3, 4, 5)]
    yield "middle axis (unfused)", [t], [(t + 1.0).sum(axis=1)], [(3, 4, 5)]
    yield "comparison and switch", [x, y], [et.switch(x > y, x - y, 0.5 * y).sum()], [(260,), (260,)]


def _compare(rng, inputs, outputs, shapes, special=True):
    f = eg.function(inputs, outputs, rulesets=[], compile="eager")   # Numba's kernels, where it has them
    g = eg.function(inputs, outputs, rulesets=[], fusion=False)
    values = [_values(rng, s, special) for s in shapes]
    with np.errstate(all="ignore"):
        for _ in range(2):
            got = f(*values)
        want = g(*values)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)   # bit for bit, NaN and inf in the same places
    return f


def _check_all_cases(rng):
    fused = 0
    for name, inputs, outputs, shapes in _cases():
        try:
            fused += bool(reducing_nodes(_compare(rng, inputs, outputs, shapes)))
        except AssertionError as err:
            raise AssertionError(f"case {name!r}: {err}") from err
    assert fused >= 10   # the cases do exercise the fused node


def test_numpy_path_equals_unfused(monkeypatch):
    """The node's NumPy path (before it is hot, and where the kernel cannot run).  Without Numba
    fusion leaves reductions alone (``fusion.FUSE_REDUCTIONS``); here it fuses them anyway."""
    monkeypatch.setattr(numba_kernels, "numba", None)
    monkeypatch.setattr(numba_fused, "numba", None)
    _check_all_cases(np.random.default_rng(0))


def test_without_numba_nothing_is_fused(monkeypatch):
    assert DEFAULT_FUSE_REDUCTIONS is (numba_kernels.numba is not None)
    monkeypatch.setattr(fusion, "FUSE_REDUCTIONS", False)
    x = et.dvector("x")
    assert not reducing_nodes(eg.function([x], (x * x + 1.0).sum(), rulesets=[]))


@needs_numba
def test_hot_numba_kernel_equals_unfused_bit_for_bit(tmp_path, monkeypatch):
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(eg.config, "compile", "eager")
    _check_all_cases(np.random.default_rng(1))
    x, y = et.dvector("x"), et.dvector("y")
    f = eg.function([x, y], [(x * y + 1.0).sum()], rulesets=[])
    [node] = reducing_nodes(f)
    assert "pairwise_plan" in numba_fused.kernel_source(node.op, node)


@needs_numba
def test_hot_kernel_takes_large_arrays_and_keeps_numpys_order(tmp_path, monkeypatch):
    """Past 128 elements NumPy adds blocks pairwise; the kernel follows its plan exactly."""
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(eg.config, "compile", "eager")
    rng = np.random.default_rng(2)
    x, m = et.dvector("x"), et.dmatrix("m")
    for n in (1, 7, 8, 127, 128, 129, 1000, 4097, 100_003):
        _compare(rng, [x], [(x * 2.0 + 1.0).sum(), (x * x).mean()], [(n,)])
    _compare(rng, [m], [(m * m).sum(axis=1), (m + 1.0).sum(axis=0)], [(3, 20_000)])


@needs_numba
def test_transcendental_steps_agree_to_an_ulp(tmp_path, monkeypatch):
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(eg.config, "compile", "eager")
    x = et.dvector("x")
    out = (et.exp(x) * et.tanh(x) + x).sum()
    f, g = eg.function([x], out, rulesets=[]), eg.function([x], out, rulesets=[], fusion=False)
    assert reducing_nodes(f)
    v = np.random.default_rng(3).normal(size=50)
    for _ in range(4):
        got = f(v)
    np.testing.assert_allclose(got, g(v), rtol=1e-14)


def test_accuracy_is_numpys_pairwise_not_a_running_sum(monkeypatch):
    """Ill-conditioned data (big terms cancelling, small ones left): the fused sum is NumPy's
    pairwise sum (bit for bit), whose error against ``math.fsum`` is far below a running sum's."""
    monkeypatch.setattr(eg.config, "compile", "eager")
    rng = np.random.default_rng(4)
    n = 200_000
    big = rng.normal(size=n // 2) * 1e12
    v = rng.permutation(np.concatenate([big, -big])) + rng.uniform(0, 1, size=n)
    x = et.dvector("x")
    f = eg.function([x], (x * 1.0 + 0.0).sum(), rulesets=[])
    assert reducing_nodes(f)
    for _ in range(4):
        got = float(f(v))
    exact = math.fsum(v)
    running = 0.0
    for value in v:
        running += value
    assert got == float(np.add.reduce(v))
    assert abs(got - exact) <= abs(running - exact) / 4   # 0.10 against 0.88 here


@needs_numba
def test_empty_arrays_give_numpys_values_and_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(eg.config, "compile", "eager")
    x = et.dvector("x")
    f = eg.function([x], [(x * 2.0).sum(), (x * 2.0).mean()], rulesets=[])
    v = np.ones(5)
    for _ in range(4):
        f(v)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        total, mean = f(np.ones(0))
    assert total == 0.0 and np.isnan(mean)
    assert any(issubclass(w.category, RuntimeWarning) for w in caught)


def test_runtime_broadcast_and_bad_shapes_take_numpys_path(monkeypatch):
    monkeypatch.setattr(eg.config, "compile", "eager")
    m, n = et.dmatrix("m"), et.dmatrix("n")
    f = eg.function([m, n], (m * n).sum(axis=1), rulesets=[])
    g = eg.function([m, n], (m * n).sum(axis=1), rulesets=[], fusion=False)
    a, b = np.arange(12.0).reshape(3, 4), np.arange(3.0).reshape(3, 1)   # broadcast at run time
    for _ in range(4):
        np.testing.assert_array_equal(f(a, b), g(a, b))
    np.testing.assert_array_equal(f(a.T.copy().T, a), g(a.T.copy().T, a))   # not C-contiguous
    with pytest.raises(ValueError):
        f(a, np.ones((2, 4)))


def test_dprint_shape_and_gradient_of_the_fused_node():
    x, y = et.dvector("x"), et.dvector("y")
    loss = ((x - y) ** 2).mean()
    f = eg.function([x, y], [loss, (x - y) * 2.0], rulesets=[])
    [node] = reducing_nodes(f)
    text = eg.dprint(f, file="str")
    assert "Mean[axis=(0,)](" in text and "Composite{" in text
    assert node.op.axis == (0,) and [o.ndim for o in node.outputs] == [1, 0]
    five = et.constant(np.int64(5))
    shapes = [tuple(five if d is None else et.constant(np.int64(d)) for d in v.type.shape) for v in node.inputs]
    out_shapes = node.op.infer_shape(f.fgraph, node, shapes)
    assert [len(s) for s in out_shapes] == [o.ndim for o in node.outputs]
    assert node.op.flops([(5,)] * len(node.inputs), [(5,), ()]) == 5 * len(node.op.steps)
    # its gradient goes through the scalar graph and the mean
    reduced = node.outputs[[o.ndim for o in node.outputs].index(0)]
    xs, ys = f.fgraph.inputs
    gx = eg.function([xs, ys], eg.grad(reduced, xs), rulesets=[])
    want = eg.function([x, y], eg.grad(loss, x), rulesets=[], fusion=False)
    v, w = np.arange(5.0), np.ones(5)
    np.testing.assert_allclose(gx(v, w), want(v, w))


def test_perform_is_the_composites_then_the_reductions():
    x, y = et.dvector("x"), et.dvector("y")
    f = eg.function([x, y], [(x * y + 1.0).sum(), x * y], rulesets=[])
    [node] = reducing_nodes(f)
    cells = [[None] for _ in node.outputs]
    v, w = np.arange(4.0), np.arange(4.0) + 1
    node.op.perform(node, [v, w, np.ones(1)], cells)   # x, y and DimShuffle{x}(1.0)
    values = {o.ndim: c[0] for o, c in zip(node.outputs, cells)}
    np.testing.assert_array_equal(values[1], v * w)
    assert values[0] == np.sum(v * w + 1.0) and values[0].shape == ()


def test_a_value_both_written_and_reduced_is_computed_once(monkeypatch):
    """Fusion leaves such a value unfused (it is written anyway), but the op takes it; the NumPy
    kernel's blocked path (20,000 elements) once got it as two outputs and named its array twice."""
    monkeypatch.setattr(eg.config, "compile", "eager")
    x, y = et.dvector("x"), et.dvector("y")
    f = eg.function([x, y], [(x * y - 1.0).mean(), x * y - 1.0], rulesets=[])
    assert not reducing_nodes(f)
    [node] = [n for n in f.fgraph.toposort() if n.op.__class__.__name__ == "Composite"]
    op = node.op
    both = ReducingComposite(op.nin, op.steps, op.outs * 2, [None] * len(op.outs) + [et.math.Reduce("mean", (0,))])
    g = eg.function(list(f.fgraph.inputs), both(*node.inputs), rulesets=[])
    v, w = np.random.default_rng(5).normal(size=(2, 20_000))
    for _ in range(4):
        written, mean = g(v, w)
    np.testing.assert_array_equal(written, v * w - 1.0)
    assert mean == np.add.reduce(v * w - 1.0) / 20_000


def test_layouts_and_refusals():
    layout = numba_fused.layout
    assert layout(1, (0,)) == ("rows", 0)
    assert layout(3, (2, 1)) == ("rows", 1)
    assert layout(3, (0, 1)) == ("columns", 2)
    assert layout(3, (0, 1, 2)) == ("rows", 0)
    assert layout(3, (1,)) is None and layout(0, ()) is None
    i = et.lvector("i")
    f = eg.function([i], (i * 2).sum(), rulesets=[])   # integer sums are left unfused
    assert not reducing_nodes(f)
    t = et.dtensor3("t")
    assert not reducing_nodes(eg.function([t], (t + 1.0).sum(axis=1), rulesets=[]))
    with pytest.raises(ValueError, match="one axis set"):
        ReducingComposite(1, [(et.exp(et.dvector()).owner.op, (0,))], [1, 1],
                          [et.math.Reduce("sum", (0,)), et.math.Reduce("sum", ())])


def test_on_dask_the_composites_kernel_runs_then_the_reductions():
    pytest.importorskip("dask.array")
    x, y = et.dvector("x"), et.dvector("y")
    outs = [(x * y + 1.0).sum(), ((x - y) ** 2).mean(), x * y]
    f = eg.function([x, y], outs, backend="dask", chunks=50, rulesets=[])
    assert len(reducing_nodes(f)) == 2
    g = eg.function([x, y], outs, fusion=False, rulesets=[])
    v, w = np.random.default_rng(6).normal(size=(2, 200))
    for a, b in zip(f(v, w), g(v, w)):   # chunks are added in Dask's order
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-12)
