"""Numba kernels for hot fused nodes (eqgraph/exec/numba/kernels.py): the generated source,
the NumPy fallback when Numba is missing, agreement with NumPy on NaN/inf/broadcasting,
and the on-disk kernel cache (hit and miss).  Tests that compile skip without Numba."""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.exec.composite import Composite

needs_numba = pytest.mark.skipif(numba_kernels.numba is None, reason="Numba is not installed")


def _graph():
    x, y = et.dvector("x"), et.dvector("y")
    out = et.switch(x > y, et.sigmoid(x), et.softplus(y)) * et.sqrt(et.abs(x)) + et.maximum(x, y) / (y - 1)
    return [x, y], [out, et.exp(x) - y * 2]


def _values():
    x = np.array([1.0, 0.0, -1.0, np.nan, np.inf, -np.inf, 2.0, 3.0, 1e-300, -0.0])
    y = np.array([np.nan, 1.0, -2.0, 0.0, 1.0, np.inf, -np.inf, 3.0, 0.0, 1.0])
    return x, y


def _composite_nodes(f):
    return [n for n in f.fgraph.toposort() if isinstance(n.op, Composite)]


def test_kernel_source_is_one_scalar_function_with_numpy_semantics():
    inputs, outputs = _graph()
    f = eg.function(inputs, outputs[0], rulesets=[])
    [node] = _composite_nodes(f)
    source = numba_kernels.kernel_source(node.op, node)
    assert "@numba.guvectorize(['void(float64, float64, float64, float64[:])'], '(),(),()->()'" in source
    assert "if (i0 > i1 or i0 != i0) else i1" in source      # np.maximum: NaN propagates, a tie gives i1
    assert "o0[0] = t" in source
    x = inputs[0]
    f = eg.function([x], et.sqr(et.sqr(x)) * x + x, rulesets=[])
    [node] = _composite_nodes(f)
    source = numba_kernels.kernel_source(node.op, node)     # one input, one output: a loop Numba writes
    assert "@numba.vectorize(['float64(float64)']" in source and "    return t" in source
    f = eg.function(inputs, [outputs[0], outputs[0] * 2.0], rulesets=[])
    [node] = _composite_nodes(f)
    source = numba_kernels.kernel_source(node.op, node)     # two outputs: guvectorize writes both
    assert "@numba.guvectorize(['void(float64, float64, float64, float64, float64[:], float64[:])'], " \
        "'(),(),(),()->(),()'" in source
    assert "o0[0] = t" in source and "o1[0] = t" in source


def test_kernel_source_refuses_integers():
    i = et.lvector("i")
    f = eg.function([i], (i * 3) // 2 + 1, rulesets=[])
    [node] = _composite_nodes(f)
    assert numba_kernels.kernel_source(node.op, node) is None


def test_without_numba_the_numpy_kernel_runs(monkeypatch):
    monkeypatch.setattr(numba_kernels, "numba", None)
    inputs, outputs = _graph()
    f = eg.function(inputs, outputs, rulesets=[])
    g = eg.function(inputs, outputs, rulesets=[], fusion=False)
    x, y = _values()
    with np.errstate(all="ignore"):
        f.wait_compiled()
        for _ in range(2):
            got = f(x, y)
        want = g(x, y)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)   # bit for bit: the NumPy kernel, never Numba


@needs_numba
def test_hot_node_switches_to_numba_and_agrees_with_numpy(tmp_path, monkeypatch):
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(eg.config, "compile", "eager")
    inputs, outputs = _graph()
    f = eg.function(inputs, outputs, rulesets=[])
    g = eg.function(inputs, outputs, rulesets=[], fusion=False)
    x, y = _values()
    with np.errstate(all="ignore"):
        for _ in range(4):
            got = f(x, y)
        want = g(x, y)
        big = np.linspace(-3, 3, 1001)
        got_big, want_big = f(big, big[::-1].copy()), g(big, big[::-1].copy())
    assert list(tmp_path.glob("k_*.py")), "no kernel was compiled"
    for a, b in [*zip(got, want), *zip(got_big, want_big)]:
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=0, equal_nan=True)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))


@needs_numba
def test_a_missed_kernel_is_cached_and_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    inputs, outputs = _graph()
    f = eg.function(inputs, outputs[1], rulesets=[])
    [node] = _composite_nodes(f)
    source = numba_kernels.kernel_source(node.op, node) + "# a source of this test only\n"
    monkeypatch.setattr(numba_kernels, "_loaded", {})
    kernel = numba_kernels.load_kernel(source)
    assert kernel.cache_hit is False
    assert numba_kernels._on_disk(tmp_path, numba_kernels._key(source))   # a new process loads it from there
    monkeypatch.setattr(numba_kernels, "_loaded", {})   # this process keeps its copy: no second one
    assert numba_kernels.load_kernel(source) is kernel
    xv, yv = np.array([0.5, 2.0]), np.array([1.0, -1.0])
    known = dict(zip(f.fgraph.inputs, (xv, yv)))
    storage = f.stages.program.storage_map      # constants, and what folded from them
    args = [known[v] if v in known else storage[v][0] for v in node.inputs]
    np.testing.assert_allclose(kernel.ufunc(*args), f(xv, yv), rtol=1e-14)


@needs_numba
def test_a_new_process_loads_the_cached_kernel(tmp_path):
    script = (
        "import numpy as np, eqgraph as eg, eqgraph.tensor as et\n"
        "from eqgraph.exec.numba import kernels as numba_kernels\n"
        "from eqgraph.exec.composite import Composite\n"
        "x = et.dvector('x')\n"
        "f = eg.function([x], x * x * 3 + x, rulesets=[])\n"
        "[node] = [n for n in f.fgraph.toposort() if isinstance(n.op, Composite)]\n"
        "k = numba_kernels.load_kernel(numba_kernels.kernel_source(node.op, node))\n"
        "print('hit' if k.cache_hit else 'miss')\n")
    assert_miss_then_hit(script, tmp_path)


def assert_miss_then_hit(script: str, cache) -> None:
    """Run ``script`` (it prints 'hit' or 'miss') in two fresh processes sharing the kernel cache
    ``cache``: the first compiles, the second loads."""
    env = {**os.environ, "EQGRAPH_KERNEL_CACHE": str(cache),
           "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    assert [r.stdout.strip() for r in runs] == ["miss", "hit"], [r.stderr[-800:] for r in runs]


@needs_numba
def test_outputs_reading_some_inputs_keep_their_own_shape(tmp_path, monkeypatch):
    """A fused node whose outputs read different inputs runs with Numba too; where an output's
    inputs are smaller than the kernel's broadcast shape, that call runs the NumPy kernel."""
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(eg.config, "compile", "eager")
    x, y = et.dvector("x"), et.dvector("y")
    e = et.exp(x)
    f = eg.function([x, y], [e + 1, e * y], rulesets=[])
    g = eg.function([x, y], [e + 1, e * y], rulesets=[], fusion=False)
    [node] = _composite_nodes(f)
    assert not node.op.outputs_read_every_input()
    rng = np.random.default_rng(0)
    for n, m in [(3, 3), (1, 3), (3, 1), (1, 1), (3, 3)]:
        a, b = rng.normal(size=n), rng.normal(size=m)
        for _ in range(4):
            got = f(a, b)
        for u, w in zip(got, g(a, b)):
            assert u.shape == w.shape
            np.testing.assert_allclose(u, w, rtol=1e-13)
    assert list(tmp_path.glob("k_*.py")), "no kernel was compiled"


@needs_numba
def test_a_cast_of_a_comparison_compiles(tmp_path, monkeypatch):
    """Numba has no float(bool): the cast is written 1.0 * x (the logistic-regression gradient
    fuses one); before, the kernel failed to compile and warned."""
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(eg.config, "compile", "eager")
    x = et.dvector("x")
    f = eg.function([x], et.cast(x > 0, "float64") * x, rulesets=[])
    v = np.array([-1.0, 0.0, 2.0, np.nan])
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="eqgraph: Numba could not build")
        for _ in range(4):
            with np.errstate(invalid="ignore"):
                got = f(v)
    assert list(tmp_path.glob("k_*.py")), "no kernel was compiled"
    np.testing.assert_array_equal(got, np.array([-0.0, 0.0, 2.0, np.nan]))


@needs_numba
def test_square_roots_run_in_numba_at_every_size_bit_for_bit(tmp_path, monkeypatch):
    """sqrt is one correctly rounded instruction (not a libm call): arithmetic for ``numba_below``."""
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(eg.config, "compile", "eager")
    x = et.dvector("x")
    f = eg.function([x], et.sqrt(x * 3.0 + 1.0) * 2.0, rulesets=[])
    [node] = _composite_nodes(f)
    assert numba_kernels.numba_below(node.op) == float("inf")
    values = np.concatenate([[np.nan, np.inf, -np.inf, -0.0, -1.0, 0.0], np.linspace(-1, 50, 20_000)])
    with np.errstate(all="ignore"):
        for _ in range(3):
            got = f(values)
        want = np.sqrt(values * 3.0 + 1.0) * 2.0
    assert list(tmp_path.glob("k_*.py")), "no kernel was compiled"
    np.testing.assert_array_equal(got, want)


@needs_numba
def test_one_element_constants_are_written_into_the_kernel(tmp_path, monkeypatch):
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(eg.config, "compile", "eager")
    x = et.dvector("x")
    c = {v: et.constant(np.array([v])) for v in (3.0, 2.0, 1.0, 5.0, np.nan, -np.inf, -0.0)}
    y = c[3.0] * x * x * x - c[2.0] * x * x + x - c[1.0] + c[np.nan] * (x > c[5.0]) \
        + c[-np.inf] * (x > c[5.0]) + c[-0.0]
    f = eg.function([x], y, rulesets=[])
    [node] = _composite_nodes(f)
    source = numba_kernels.kernel_source(node.op, node)
    assert "@numba.vectorize(['float64(float64)']" in source   # x alone is passed
    assert "math.nan" in source and "(-math.inf)" in source and "3.0" in source
    values = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.0, 5.5, 7.0])
    with np.errstate(all="ignore"):
        want = eg.function([x], y, rulesets=[], fusion=False)(values)
        for _ in range(3):
            got = f(values)
    assert list(tmp_path.glob("k_*.py")), "no kernel was compiled"
    np.testing.assert_array_equal(got, want)   # the same operations on the same values
    # a constant of higher rank than the array decides the output's shape: it is passed
    op = Composite(2, [(et.ELEMWISE_OPS["mul"], (0, 1))], [2])
    node = op.make_node(x, et.constant(np.array([[2.0]])))
    assert numba_kernels.baked_constants(op, node) == {} and "i1" in numba_kernels.kernel_source(op, node)
    run = numba_kernels.numba_kernel(op, node, numpy_run=lambda *a: None)
    (out,) = run(np.arange(3.0), np.array([[2.0]]))
    np.testing.assert_array_equal(out, [[0.0, 2.0, 4.0]])


@needs_numba
def test_once_hot_the_program_calls_the_kernel_directly_and_long_arrays_still_run_numpy(tmp_path, monkeypatch):
    """The program rebinds a hot node's name to the Numba caller (no tier between them); that
    caller itself sends arrays of ``numba_below`` elements or more to NumPy's SIMD loops."""
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    x, y = et.dvector("x"), et.dvector("y")
    e = et.exp(x)
    outputs = [e * y + 1.0, et.tanh(e) - y]
    f = eg.function([x, y], outputs, rulesets=[])
    g = eg.function([x, y], outputs, rulesets=[], fusion=False)
    [node] = _composite_nodes(f)
    below = numba_kernels.numba_below(node.op)
    assert below != float("inf")
    program = f.stages.program.call
    name = next(k for k, v in program.__globals__.items() if k.startswith("g") and callable(v))
    tier = program.__globals__[name]
    small = np.array([0.5, -1.0, 2.0])
    f(small, small)
    f.wait_compiled()
    f(small, small)
    direct = program.__globals__[name]
    assert direct is not tier and direct.__code__.co_filename in ("<eqgraph numba caller>", "<eqgraph loop kernel caller>")
    rng = np.random.default_rng(1)
    long = [rng.normal(size=int(below) + 1) for _ in range(2)]
    for a, b in zip(f(*long), g(*long)):
        np.testing.assert_array_equal(a, b)   # NumPy's loops, bit for bit
    for a, b in zip(f(small, small), g(small, small)):
        np.testing.assert_allclose(a, b, rtol=1e-14)


@needs_numba
def test_a_fused_node_of_no_axes_runs_in_numba_and_returns_0d_arrays(tmp_path, monkeypatch):
    """NumPy's kernel pays a call per step on 0-d values (a standardize's sqrt(var + eps) after
    its mean); the Numba ufunc returns NumPy scalars there, which the caller makes 0-d arrays."""
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(eg.config, "compile", "eager")
    s, t = et.dscalar("s"), et.dscalar("t")
    outs = [et.sqrt(s * 2.0 + 1e-8) / t, et.maximum(s, t) - 1.0]
    f = eg.function([s, t], outs, rulesets=[])
    g = eg.function([s, t], outs, rulesets=[], fusion=False)
    assert _composite_nodes(f)
    for a, b in [(2.0, 3.0), (-1.0, 0.0), (np.nan, 1.0), (np.inf, -np.inf)]:
        with np.errstate(all="ignore"):
            for _ in range(3):
                got = f(a, b)
            want = g(a, b)
        for u, w in zip(got, want):
            assert type(u) is np.ndarray and u.shape == () and u.dtype == w.dtype
            np.testing.assert_allclose(u, w, rtol=1e-15)
    assert list(tmp_path.glob("k_*.py")), "no kernel was compiled"


@needs_numba
def test_logical_ops_in_numba_agree_with_numpy(tmp_path, monkeypatch):
    # and/or/xor/not of comparisons, as a hot fused node: & and | (no branches) give NumPy's answers
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(eg.config, "compile", "eager")
    x, y = et.dvector("x"), et.dvector("y")
    a, b = x > 0, y < x
    outs = [et.switch(et.and_(a, b), x, y), et.switch(et.or_(a, b), x, y), et.switch(et.xor(a, b), x, y),
            et.switch(et.invert(a), x, y)]
    f = eg.function([x, y], outs, rulesets=[])
    g = eg.function([x, y], outs, rulesets=[], fusion=False)
    xv, yv = _values()
    with np.errstate(all="ignore"):
        for _ in range(4):
            got = f(xv, yv)
        want = g(xv, yv)
    for k, (u, v) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(u, v, err_msg=f"output {k}")


def test_a_lone_op_of_several_numpy_passes_is_fused_alone_and_runs_in_numba_once_hot(tmp_path, monkeypatch):
    """softplus is six NumPy calls: alone it becomes a Composite of one step (with Numba), whose
    kernel is one loop once hot; an op of one pass stays as it is."""
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(eg.config, "compile", "eager")
    x = et.dvector("x")
    f = eg.function([x], et.softplus(x), rulesets=[])
    assert len(_composite_nodes(f)) == (numba_kernels.numba is not None)
    assert not _composite_nodes(eg.function([x], et.exp(x), rulesets=[]))
    value = np.array([-800.0, -3.0, -0.0, 0.0, 2.5, 40.0, 800.0, np.nan, np.inf, -np.inf])
    with np.errstate(all="ignore"):
        expected = np.maximum(value, 0.0) + np.log1p(np.exp(-np.abs(value)))
        for _ in range(4):
            np.testing.assert_allclose(f(value), expected, rtol=1e-15, atol=0)
