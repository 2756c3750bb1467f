"""Small float64 sums and means in Numba (eqgraph/exec/numba/reductions.py): NumPy's values to
the last bit, and the NumPy call wherever the loops do not apply.  Tests that compile skip
without Numba."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.exec.numba import reductions as numba_reductions
from eqgraph.exec.numpy.calls import softmax_numpy
from eqgraph.exec.reducing import ReducingComposite
from test_program import thunk_loop

needs_numba = pytest.mark.skipif(numba_kernels.numba is None, reason="Numba is not installed")


def _values(rng, shape):
    """Values of very different magnitudes (so the order of additions shows), some NaN and inf."""
    x = rng.normal(size=shape) * 10.0 ** rng.uniform(-8, 8, size=shape)
    if x.size > 20:
        flat = x.reshape(-1)
        flat[rng.integers(0, x.size)] = np.inf if rng.uniform() < 0.5 else np.nan
    return x


@needs_numba
def test_the_loops_add_in_numpys_order_bit_for_bit():
    rng = np.random.default_rng(0)
    kernels = numba_reductions.KERNELS
    sizes = [*range(1, 140), 255, 256, 257, 1000, 4095, 4096]
    for n in sizes:
        x = _values(rng, n)
        assert kernels[("whole", False)](x, False) == np.add.reduce(x) or np.isnan(np.add.reduce(x))
        np.testing.assert_array_equal(kernels[("whole", False)](x, True), np.mean(x))
    for shape in [(1, 1), (3, 1), (1, 9), (9, 1), (10, 8), (10, 16), (17, 130), (130, 3), (2, 3, 5)]:
        x = _values(rng, shape)
        np.testing.assert_array_equal(kernels[("whole", False)](x, False), np.add.reduce(x, axis=None))
        if len(shape) != 2:
            continue
        for kind, axis in (("rows", 1), ("columns", 0)):
            for keep in (False, True):
                for mean, want in ((False, np.add.reduce(x, axis=axis, keepdims=keep)),
                                   (True, np.mean(x, axis=axis, keepdims=keep))):
                    got = kernels[(kind, keep)](x, mean)
                    assert got.shape == want.shape and got.dtype == want.dtype
                    np.testing.assert_array_equal(got, want)


def test_only_float64_sums_and_means_over_all_axes_or_one_axis_of_a_matrix_have_a_loop():
    kind = numba_reductions.reduction_kind
    if numba_kernels.numba is None:
        assert kind("sum", "float64", "float64", 1, (0,), False) is None
        return
    assert kind("sum", "float64", "float64", 1, (0,), False) == ("whole", False)
    assert kind("mean", "float64", "float64", 3, (2, 0, 1), False) == ("whole", False)
    assert kind("sum", "float64", "float64", 2, (1,), True) == ("rows", True)
    assert kind("mean", "float64", "float64", 2, (0,), False) == ("columns", False)
    for refused in [("prod", "float64", "float64", 1, (0,), False), ("sum", "float32", "float32", 1, (0,), False),
                    ("sum", "int64", "int64", 1, (0,), False), ("sum", "float64", "float64", 1, (0,), True),
                    ("sum", "float64", "float64", 3, (1,), False), ("sum", "float64", "float64", 0, (), False)]:
        assert kind(*refused) is None, refused


@needs_numba
def test_hot_programs_give_the_thunk_loops_values_on_every_kind_of_reduction(monkeypatch):
    monkeypatch.setattr(eg.config, "compile", "eager")
    v, m, i, s = et.dvector("v"), et.dmatrix("m"), et.lmatrix("i"), et.fmatrix("s")
    outs = [et.exp(v).sum(), (v * 2.0).mean(), m.sum(), m.mean(axis=-1), m.sum(axis=0, keepdims=True),
            m.mean(axis=(-1,), keepdims=True), (m * m).sum(axis=-2), m.T.sum(axis=1),   # a transposed view
            i.sum(axis=1), s.mean(axis=0), s.sum(), m.sum(axis=(0, 1), keepdims=True)]
    f = eg.function([v, m, i, s], outs, rulesets=[])
    fused = [n for n in f.fgraph.toposort() if isinstance(n.op, ReducingComposite)]   # (v * 2).mean(), (m * m).sum
    assert f.program.source.count("numba_") + len(fused) >= 8
    rng = np.random.default_rng(1)
    shapes = [(7, (3, 4)), (1, (1, 1)), (0, (0, 3)), (5000, (3, 2000)), (40, (40, 1)), (9, (2, 0)), (2000, (30, 30))]
    for n, shape in shapes:
        args = (_values(rng, n), _values(rng, shape), rng.integers(-9, 9, size=shape),
                _values(rng, shape).astype(np.float32))
        for _ in range(3):   # cold, then hot
            with np.errstate(all="ignore"):
                got = f(*args)
        with np.errstate(all="ignore"):
            want = thunk_loop(f, *args)
        for k, (a, b) in enumerate(zip(got, want)):
            assert type(a) is np.ndarray and a.dtype == b.dtype and a.shape == b.shape, (k, shape)
            np.testing.assert_array_equal(a, b, err_msg=f"output {k}, shapes {n}, {shape}")


def test_without_numba_reductions_are_numpy_calls(monkeypatch):
    monkeypatch.setattr(numba_reductions, "numba", None)
    v = et.dvector("v")
    f = eg.function([v], [v.sum(), v.mean()], rulesets=[])
    assert "numba_" not in f.program.source
    x = np.linspace(-1.0, 2.0, 11)
    got = f(x)
    np.testing.assert_array_equal(got[0], np.add.reduce(x))
    np.testing.assert_array_equal(got[1], np.mean(x))


@needs_numba
def test_hot_softmaxes_agree_with_perform_to_an_ulp_and_keep_its_nans(monkeypatch):
    """Softmax and log-softmax along the last axis of a float64 vector or matrix: Numba's exp and
    log are the C library's, within an ulp of NumPy's; NaN and inf give what perform gives."""
    monkeypatch.setattr(eg.config, "compile", "eager")
    v, m = et.dvector("v"), et.dmatrix("m")
    outs = [et.softmax(v), et.log_softmax(v), et.softmax(m), et.log_softmax(m), et.softmax(m, axis=0),
            et.log_softmax(m.T)]
    f = eg.function([v, m], outs, rulesets=[])
    assert f.program.source.count("numba_") >= 4
    rng = np.random.default_rng(2)
    for n, shape in [(5, (3, 4)), (1, (1, 1)), (200, (10, 40)), (600, (30, 30)), (3, (1, 4))]:
        x, y = rng.normal(size=n) * 30, rng.normal(size=shape) * 30
        if y.size > 4:
            y[0, 0], y[-1, 1] = np.nan, np.inf
            x[1] = -np.inf
        for _ in range(3):
            with np.errstate(all="ignore"):
                got = f(x, y)
        with np.errstate(all="ignore"):
            want = thunk_loop(f, x, y)
        for k, (a, b) in enumerate(zip(got, want)):
            assert type(a) is np.ndarray and a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=f"output {k}, {shape}")
            # a log-softmax near 0 is (x - max) - log(sum) cancelling: an ulp of a log-sum of up to
            # 40 terms (below 4), not of the result
            np.testing.assert_allclose(a, b, rtol=4e-16 * 8, atol=8 * np.spacing(4.0), err_msg=f"output {k}, {shape}")


@needs_numba
def test_softmax_rows_sum_each_row_in_numpys_pairwise_order_bit_for_bit():
    """The Numba softmax's row sums are NumPy's pairwise sums of the row's exponentials (as Numba's
    ``math.exp`` gives them) for rows that are one leaf of the pairwise plan and rows that are not,
    one after the other in one matrix: then its values are a division (or a subtraction of the
    log) away from that sum."""
    numba = numba_kernels.numba
    exps = numba.njit(lambda x, top: np.exp(x - top))
    softmax = numba_reductions.KERNELS[("softmax", 2)]
    rng = np.random.default_rng(7)
    for shape in [(500, 3), (4, 7), (3, 8), (5, 129), (3, 256), (3, 257), (2, 1000), (1, 4096)]:
        x = _values(rng, shape)
        x = np.where(np.isfinite(x), x, 1.0) * 1e-8   # finite exponentials of varied size
        for log in (False, True):
            got = softmax(x, log)
            for i, row in enumerate(x):
                top = row.max()
                e = np.array([exps(np.array([v]), top)[0] for v in row])
                total = np.add.reduce(e)
                want = (row - top) - np.log(total) if log else e / total
                np.testing.assert_array_equal(got[i], want, err_msg=f"{shape}, row {i}, log={log}")


@needs_numba
def test_softmaxes_of_many_short_rows_are_performs_bit_for_bit(monkeypatch):
    """Above the small sizes, rows of at most SHORT_ROWS take short_rows_softmax (NumPy's exp and
    log, Numba for the rest): perform's values to the last bit, NaN and inf included; longer rows
    keep NumPy's softmax."""
    rng = np.random.default_rng(5)
    softmax = numba_reductions.KERNELS[("short rows softmax", 2)]
    for shape in [(1, 1), (600, 1), (700, 10), (3, 256), (40, 33)]:
        x = rng.normal(size=shape) * 30
        x[0, 0], x[-1, -1] = np.nan, np.inf
        x[len(x) // 2, :] = -np.inf   # a row of -inf: NaN throughout, as in NumPy
        for log in (False, True):
            with np.errstate(all="ignore"):
                got, want = softmax(x, log), softmax_numpy(x, 1, log)
            assert np.array_equal(got, want, equal_nan=True), (shape, log)
    monkeypatch.setattr(eg.config, "compile", "eager")
    m = et.dmatrix("m")
    f = eg.function([m], [et.softmax(m), et.log_softmax(m)], rulesets=[])
    assert "numba_short_rows_softmax" in f.program.source
    for shape in [(700, 10), (5, 400)]:   # short rows, and rows NumPy keeps
        y = rng.normal(size=shape)
        for _ in range(3):
            got = f(y)
        for a, b in zip(got, thunk_loop(f, y)):
            assert np.array_equal(a, b)


@needs_numba
def test_hot_sums_to_one_row_or_column_give_summed_tos_values(monkeypatch):
    """``SumToShape`` of a matrix to a ``like`` typed with one row (or column), as a broadcast
    bias's gradient is: the Numba loop where the other axis matches, ``summed_to`` elsewhere."""
    monkeypatch.setattr(eg.config, "compile", "eager")
    g, b = et.dmatrix("g"), et.dmatrix("b")
    row, column = et.specify_shape(b, (1, None)), et.specify_shape(b.T, (None, 1))
    outs = [et.sum_to_shape(g * 2.0, row), et.sum_to_shape(g * 3.0, column)]
    f = eg.function([g, b], outs, rulesets=[], on_unused_input="ignore")
    assert f.program.source.count("numba_") == 2
    rng = np.random.default_rng(3)
    for g_shape, b_shape in [((10, 16), (1, 16)), ((16, 10), (1, 16)), ((5, 1), (1, 1)), ((1, 7), (1, 7)),
                             ((4, 6), (1, 1)), ((300, 8), (1, 8))]:
        args = (_values(rng, g_shape), _values(rng, b_shape))
        if g_shape[1] != b_shape[1] and g_shape[0] != b_shape[1] and b_shape[1] != 1:
            continue
        for _ in range(3):
            got = f(*args)
        want = thunk_loop(f, *args)
        for a, w in zip(got, want):
            assert a.shape == w.shape and a.dtype == w.dtype
            np.testing.assert_array_equal(a, w)


def test_the_summing_loops_name_the_vector_type_they_are_compiled_with():
    """Numba's disk cache of numba_reductions' loops is keyed by that file alone: a change of
    numba/simd.py must change it too (its SIMD_VERSION), or processes would load loops compiled
    with the old vector type."""
    simd = numba_reductions.COMPILED_FROM[1]
    assert simd.name == "simd.py"
    assert numba_reductions.SIMD_VERSION == numba_kernels.files_version(simd)


@needs_numba
def test_the_loops_release_the_gil_as_numpys_reductions_do():
    """They take arrays up to 262,144 elements: other threads run meanwhile, as with NumPy."""
    compiled = [k for k in numba_reductions.KERNELS.values() if hasattr(k, "targetoptions")]
    assert len(compiled) >= 7 and all(k.targetoptions.get("nogil") for k in compiled)
    assert numba_reductions.pairwise.targetoptions.get("nogil")


@needs_numba
def test_the_whole_function_sums_a_transposed_view_in_numpys_order(monkeypatch):
    """NumPy adds a transposed view in memory order (running sums down the rows of the matrix it
    views; the whole matrix pairwise in memory order): the whole function must not sum a
    C-ordered copy of the view instead, which rounds differently."""
    monkeypatch.setattr(eg.config, "compile", "eager")
    m = et.dmatrix("m")
    outs = [m.T.sum(axis=1), m.T.sum(axis=0), m.T.sum(), m.T.mean(axis=1), m.T.sum(axis=1, keepdims=True)]
    f = eg.function([m], outs, rulesets=[], fusion=False)
    rng = np.random.default_rng(3)
    for shape in [(30, 30), (7, 300), (300, 7)]:
        x = rng.standard_normal(shape) * 10.0 ** rng.integers(-8, 8, size=shape)
        got = [f(x) for _ in range(3)][-1]
        want = [x.T.sum(axis=1), x.T.sum(axis=0), x.T.sum(), x.T.mean(axis=1), x.T.sum(axis=1, keepdims=True)]
        for k, (a, b) in enumerate(zip(got, want)):
            np.testing.assert_array_equal(a, b, err_msg=f"output {k}, shape {shape}")
