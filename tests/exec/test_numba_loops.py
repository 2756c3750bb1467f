"""Loop kernels of fused nodes that divide by a loop-invariant value (eqgraph/exec/numba/loops.py):
the quotient is NumPy's bit for bit (the reciprocal and two FMA corrections, with a plain-division
loop where a value falls outside the range where that is proven), on numerators and divisors of
every magnitude, signed zeros, infinities and NaN; which nodes get such a kernel; and the kernel
through ``eg.function`` once hot.  Tests that compile skip without Numba."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.exec.numba import loops as numba_loops
from eqgraph.exec.composite import Composite
from fuzz_graphs import make_graph

needs_numba = pytest.mark.skipif(numba_kernels.numba is None, reason="Numba is not installed")
ONE = et.TensorType("float64", (1,))


def _numerators(rng, n):
    """Values of every binary exponent (normal and subnormal), both signs, and the special values."""
    mantissa = rng.uniform(1.0, 2.0, size=n)
    x = np.ldexp(mantissa, rng.integers(-1075, 1024, size=n)) * rng.choice([-1.0, 1.0], size=n)
    x[::13] = rng.normal(size=x[::13].size)   # ordinary values, most of a real array
    return np.concatenate([x, [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.0 ** -1022, 1.7e308]])


def _divisors(rng):
    exponents = [-1074, -1060, -1022, -1000, -61, -60, -59, -3, 0, 1, 7, 59, 60, 61, 1000, 1023]
    normal = [np.ldexp(rng.uniform(1.0, 2.0), int(e)) for e in exponents if e >= -1022]
    return normal + [-d for d in normal] + [5e-324, 1.0, -1.0, 3.0, 0.1, 2.0 ** 60, 2.0 ** -60,
                                            0.0, -0.0, np.inf, -np.inf, np.nan]


def _same_bits(a, b) -> np.ndarray:
    return a.view(np.int64) == b.view(np.int64)


def _divide_node(divisor_type=ONE):
    x, d = et.dvector("x"), divisor_type("d")
    op = Composite(2, [(et.true_div(x, d).owner.op, (0, 1))], [2])
    return op.make_node(x, d)


@needs_numba
def test_quotients_are_numpys_bit_for_bit_on_every_magnitude(tmp_path, monkeypatch):
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    rng = np.random.default_rng(0)
    node = _divide_node()
    kernel = numba_kernels.load_kernel(numba_loops.kernel_source(node.op, node))
    ordinary = rng.normal(size=2000)   # no value outside the fast range: the fast loop's own result
    for d in _divisors(rng):
        nans = np.array([np.nan, 1.0, -np.nan, -0.0, 0.0, 2.5])   # NaN is not outside the range: the fast loop
        for x in (_numerators(rng, 3000), ordinary, -ordinary, np.zeros(9), -np.zeros(9), nans, np.full(5, np.nan)):
            with np.errstate(all="ignore"):
                expected = x / d
            got = kernel(x, np.array([d]))
            bad = ~_same_bits(got, expected)
            assert not bad.any(), (d, x[bad][:3], got[bad][:3], expected[bad][:3])


@needs_numba
@pytest.mark.parametrize("values, exact", [
    ([1.0, -3.5, 2.0 ** -900, -(2.0 ** 900)], True), ([0.0, -0.0, np.nan, 1.0], True), ([0.0], True), ([np.nan], True),
    ([1.0, np.inf], False), ([1.0, 2.0 ** -901], False), ([2.0 ** 901], False), ([5e-324, 0.0], False),
    ([np.nan, -np.inf], False)])
def test_the_fast_loop_keeps_its_quotients_where_each_is_zero_nan_or_in_the_exact_range(values, exact):
    """What the loop notes of its quotients, as ``exact_range`` decodes it: the fast loop's result
    stands only where that is True, else the loop runs again with plain division."""
    patterns = [int(np.array(abs(v)).view(np.uint64)) for v in values]
    smallest = min((p - 1) % 2 ** 64 for p in patterns)
    largest = max((p + numba_loops._NAN_LAST) % 2 ** 64 for p in patterns)
    assert numba_loops.exact_range(np.uint64(smallest), np.uint64(largest)) is exact


@needs_numba
@pytest.mark.slow
def test_quotients_match_numpy_on_many_random_pairs(tmp_path, monkeypatch):
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    rng = np.random.default_rng(1)
    node = _divide_node()
    kernel = numba_kernels.load_kernel(numba_loops.kernel_source(node.op, node))
    for _ in range(400):
        x = rng.normal(size=100_000) * np.ldexp(1.0, rng.integers(-900, 900, size=100_000))
        d = np.ldexp(rng.uniform(-2.0, 2.0), int(rng.integers(-60, 61)))
        assert _same_bits(kernel(x, np.array([d])), x / d).all(), d


def test_which_nodes_get_a_loop_kernel():
    if numba_kernels.numba is None:
        assert numba_loops.kernel_source(_divide_node().op, _divide_node()) is None
        return
    node = _divide_node()
    assert "fma(" in numba_loops.kernel_source(node.op, node)
    assert "fma(" in numba_loops.kernel_source(*_op_node(_divide_node(et.dscalar)))   # 0-d divisor
    x, y, d = et.dvector("x"), et.dvector("y"), ONE("d")
    for outputs, inputs, takes in [
            ([(x - d) / d], [x, d], True),
            ([x / (d * 2.0 + 1.0)], [x, d], True),          # the divisor's steps run once, before the loop
            ([x / y + 1.0], [x, y], False),                 # the divisor changes along the loop
            ([(x * 2.0) + d], [x, d], False),               # no division
            ([d / x + 1.0], [x, d], False),                 # the invariant value is the numerator
            ([x / (d * 3.0), d * 3.0 + 1.0], [x, d], False)]:             # an output that reads no array
        f = eg.function(inputs, outputs, rulesets=[])
        nodes = [n for n in f.fgraph.toposort() if type(n.op) is Composite]
        assert any(numba_loops.kernel_source(n.op, n) is not None for n in nodes) is takes, outputs


def _op_node(node):
    return node.op, node


@needs_numba
def test_hot_function_divides_by_invariant_values_as_numpy_does(tmp_path, monkeypatch):
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(eg.config, "compile", "eager")
    rng = np.random.default_rng(3)
    x, d = et.dvector("x"), ONE("d")
    f = eg.function([x, d], (x - d) / et.sqrt(d * d + 1.0), rulesets=[])
    special = np.resize([0.0, -0.0, 1.0, -2.5, np.nan], 500)       # zeros and NaN: the fast loop
    extreme = np.resize([np.inf, np.nan, 1e-310, 1.0], 500)          # the plain-division loop
    cases = [rng.normal(size=1000), special, extreme, np.arange(5.0),   # few elements: the ufunc kernel
             rng.normal(size=(2000,))[::2]]   # not contiguous: the ufunc kernel
    for value in cases:
        for divisor in (np.array([0.7]), np.array([-3.0]), np.array([0.0]), np.array([1e300])):
            for _ in range(3):   # cold, then hot
                with np.errstate(all="ignore"):
                    expected = (value - divisor) / np.sqrt(divisor * divisor + 1.0)
                    got = f(value, divisor)
                assert np.array_equal(got, expected, equal_nan=True), (value[:4], divisor)
                assert np.array_equal(np.signbit(got), np.signbit(expected))
    [node] = [n for n in f.fgraph.toposort() if type(n.op) is Composite]
    assert numba_loops.kernel_source(node.op, node) is not None


def test_without_numba_there_is_no_loop_kernel(monkeypatch):
    monkeypatch.setattr(numba_kernels, "numba", None)
    node = _divide_node()
    assert numba_loops.kernel_source(node.op, node) is None
    run = numba_loops.tiered(node.op, node, lambda *xs: [xs[0] / xs[1]])
    assert np.array_equal(run(np.arange(3.0), np.array([2.0]))[0], np.arange(3.0) / 2.0)


def _hot_random_graphs(seeds, tmp_path, monkeypatch) -> int:
    """Each graph's fused function, called until its kernels are hot, against the unfused one:
    arithmetic bit for bit, libm steps within an ulp or two (Numba calls the C library, NumPy
    its SIMD loops), NaN, inf and the signs of zeros in the same places.  Returns how many
    graphs ran a loop kernel."""
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(eg.config, "compile", "eager")
    monkeypatch.setattr(numba_loops, "LOOP_FROM", 1)   # the graphs' arrays are small
    looped = 0
    for seed in seeds:
        graph = make_graph(seed)
        syms, outs = [s for s, _ in graph.inputs], [t.sym for t in graph.outputs]
        fused = eg.function(syms, outs, on_unused_input="ignore", rulesets=[])
        plain = eg.function(syms, outs, on_unused_input="ignore", rulesets=[], fusion=False)
        nodes = [n for n in fused.fgraph.toposort() if type(n.op) is Composite]
        looped += any(numba_loops.kernel_source(n.op, n) is not None for n in nodes)
        with np.errstate(all="ignore"):
            for _ in range(3):
                got = fused(*[v.copy() for _, v in graph.inputs])
            want = plain(*[v.copy() for _, v in graph.inputs])
        for a, b in zip(got, want):
            a, b = np.asarray(a), np.asarray(b)
            assert a.dtype == b.dtype and a.shape == b.shape, f"seed {seed}:\n{graph.describe()}"
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=0, equal_nan=True, err_msg=f"seed {seed}")
            if a.dtype.kind == "f":
                assert np.array_equal(np.signbit(a[a == 0]), np.signbit(b[a == 0])), f"seed {seed}"
    return looped


@needs_numba
def test_hot_loop_kernels_keep_results_of_random_graphs(tmp_path, monkeypatch):
    # seeds whose fused graph has a loop kernel (9 of seeds 0-1499 have one, measured)
    assert _hot_random_graphs([483, 628, 700, 976, 1054], tmp_path, monkeypatch) == 5


@needs_numba
@pytest.mark.slow
def test_hot_loop_kernels_keep_results_of_many_random_graphs(tmp_path, monkeypatch):
    assert _hot_random_graphs(range(0, 1500), tmp_path, monkeypatch) >= 9


def test_a_lone_division_becomes_a_fused_node_only_where_it_divides_fast():
    x, y, d = et.dvector("x"), et.dvector("y"), ONE("d")
    by_invariant = eg.function([x, d], x / d, rulesets=[])
    by_array = eg.function([x, y], x / y, rulesets=[])
    fused = [n for n in by_invariant.fgraph.toposort() if type(n.op) is Composite]
    assert len(fused) == (numba_kernels.numba is not None)
    assert not [n for n in by_array.fgraph.toposort() if type(n.op) is Composite]
    np.testing.assert_array_equal(by_invariant(np.arange(4.0), np.array([3.0])), np.arange(4.0) / 3.0)
