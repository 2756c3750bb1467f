"""The whole Numba function's forms of indexing, array-making, integer and boolean elementwise,
reduction and linear-algebra nodes (eqgraph/exec/numba/translate_*.py, program.py): each
graph's whole function is compiled and gives the hot program's values (bit for bit, LAPACK's
solves to rounding), and where the op raises (an index out of bounds, a matrix that is not
positive definite) the compiled function raises too, so that the program runs and names the
node.  Tests that compile skip without Numba."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.exec.numba import program as numba_program
from eqgraph.exec.composite import Composite
from eqgraph.tensor.alloc import ARange, Alloc
from eqgraph.tensor.elemwise import Elemwise
from eqgraph.tensor.extra_ops import CumOp
from eqgraph.tensor.join import Join
from eqgraph.tensor.linalg import Cholesky, Solve
from eqgraph.tensor.math import Reduce
from eqgraph.tensor.products import ExtractDiag
from eqgraph.tensor.shape import SpecifyShape
from eqgraph.terms.basic import Constant
from eqgraph.tensor.subtensor import AdvancedIncSubtensor, AdvancedSubtensor, IncSubtensor, Subtensor
from test_numba_program import _assert_same, _whole_and_program

pytestmark = [pytest.mark.skipif(numba_kernels.numba is None, reason="Numba is not installed"),
              pytest.mark.usefixtures("hot_at_once")]

rng = np.random.default_rng(7)
bvector = et.TensorType("bool", (None,))


def _kernel(f):
    """The compiled whole function of ``f`` (one Numba function, or Python calling Numba segments)."""
    hot = f.program.call.__globals__["hot"]
    assert hasattr(hot, "cache_hit"), "the whole function was not compiled"
    return hot


def _compiled(inputs, outputs, op_class, args):
    """The function of the graph, its whole function compiled on ``args``; the graph's program must
    hold an ``op_class`` node (else the test would test another translation), every node in Numba."""
    f = eg.function(inputs, outputs)
    classes = {type(node.op) for node in f.program.order}
    wanted = op_class if isinstance(op_class, tuple) else (op_class,)
    assert classes & set(wanted), f"no {wanted} in the program: {sorted(c.__name__ for c in classes)}"
    assert not _called_in_python(f), "a node is called in Python, not translated"
    _whole_and_program(f, args)
    return f


def _same(inputs, outputs, op_class, *cases, exact=True):
    """The whole function gives the program's values on each case (a list of arguments)."""
    f = _compiled(inputs, outputs, op_class, cases[0])
    for args in cases:
        whole, program = _whole_and_program(f, args)
        _assert_same(whole, program, exact)


def _kernel_raises(f, error, *cases):
    """The compiled whole function itself raises ``error`` on each case (no silent value), and the
    function raises it too (the program's node).  (The caller stops calling a function that
    refuses calls, so the kernel is read before the function is called.)"""
    hot, passed = _kernel(f), f.program.call.__globals__["passed"]
    for args in cases:
        with pytest.raises(error):
            hot(*[a[()] if np.ndim(a) == 0 else a for a in args], *passed)
    for args in cases:
        with pytest.raises(error):
            f(*args)


# -- basic subtensors ----------------------------------------------------------------------------
def test_slices_with_negative_steps_and_bounds_and_empty_results():
    x = et.dvector("x")
    outs = [et.exp(x[::-1]), x[-3:] * 2.0, x[1:-1:2] + 1.0, x[5:2] * 2.0, et.cumsum(x)[::-2]]
    for n in (7, 1, 0):
        _same([x], outs, Subtensor, [rng.normal(size=n)])


def test_symbolic_slice_bounds_and_integer_positions():
    x, i, j = et.dmatrix("x"), et.lscalar("i"), et.lscalar("j")
    outs = [et.exp(x[i:j, -1]), x[i, :] * 2.0, x[-2, j] + 1.0]
    value = rng.normal(size=(4, 5))
    _same([x, i, j], outs, Subtensor, [value, np.int64(1), np.int64(3)], [value, np.int64(-3), np.int64(-1)],
          [value, np.int64(3), np.int64(1)])


def test_an_integer_position_out_of_bounds_raises():
    x, i = et.dvector("x"), et.lscalar("i")
    f = _compiled([x, i], [et.exp(x) * x[i]], Subtensor, [np.ones(3), np.int64(1)])
    _kernel_raises(f, IndexError, [np.ones(3), np.int64(3)], [np.ones(3), np.int64(-4)])


def test_increments_and_sets_of_slices():
    x, y = et.dvector("x"), et.dvector("y")
    outs = [et.inc_subtensor(x[1:4], y) * 2.0, et.set_subtensor(x[::-2], 1.0) + x]
    _same([x, y], outs, IncSubtensor, [rng.normal(size=7), rng.normal(size=3)])


# -- advanced subtensors ---------------------------------------------------------------------------
def test_integer_index_vectors_with_negative_and_repeated_positions():
    x, m, idx = et.dvector("x"), et.dmatrix("m"), et.lvector("idx")
    outs = [et.exp(x[idx]), m[idx] * 2.0, m[:, idx] + 1.0]
    positions = np.array([0, -1, 2, 2, -3, 0])
    _same([x, m, idx], outs, AdvancedSubtensor, [rng.normal(size=4), rng.normal(size=(3, 5)), positions],
          [rng.normal(size=4), rng.normal(size=(3, 5)), positions[:0]])


def test_an_index_vector_out_of_bounds_raises():
    x, idx = et.dvector("x"), et.lvector("idx")
    f = _compiled([x, idx], [et.exp(x[idx])], AdvancedSubtensor, [np.ones(3), np.array([0, 2])])
    _kernel_raises(f, IndexError, [np.ones(3), np.array([0, 3])], [np.ones(3), np.array([-4])])


def test_boolean_masks_and_index_pairs():
    x, keep, m, rows, cols = et.dvector("x"), bvector("keep"), et.dmatrix("m"), et.lvector("r"), et.lvector("c")
    outs = [et.exp(x[keep]), et.log1p(m[rows, cols] ** 2)]
    _same([x, keep, m, rows, cols], outs, AdvancedSubtensor,
          [rng.normal(size=5), np.array([True, False, True, True, False]), rng.normal(size=(3, 4)),
           np.array([0, -1, 2, 0]), np.array([3, 0, -2, 3])],
          [rng.normal(size=5), np.zeros(5, bool), rng.normal(size=(3, 4)), np.array([1]), np.array([0, 1, 2])])


def test_a_mask_of_another_length_raises():
    x, keep = et.dvector("x"), bvector("keep")
    f = _compiled([x, keep], [et.exp(x[keep])], AdvancedSubtensor, [np.ones(3), np.ones(3, bool)])
    _kernel_raises(f, IndexError, [np.ones(3), np.ones(4, bool)])


def test_increments_at_repeated_positions_add_up_and_sets_keep_the_last():
    x, y, idx = et.dvector("x"), et.dvector("y"), et.lvector("idx")
    outs = [et.inc_subtensor(x[idx], y) * 2.0, et.set_subtensor(x[idx], y) + x, et.inc_subtensor(x[idx], 1.5) - x]
    positions = np.array([1, -1, 1, 1, 0])
    _same([x, y, idx], outs, AdvancedIncSubtensor, [rng.normal(size=4), rng.normal(size=5), positions],
          [rng.normal(size=4), rng.normal(size=1), positions])


def test_increments_and_sets_at_index_pairs_of_a_matrix():
    m, y, rows, cols = et.dmatrix("m"), et.dvector("y"), et.lvector("r"), et.lvector("c")
    outs = [et.inc_subtensor(m[rows, cols], y) * 2.0, et.set_subtensor(m[rows, cols], y) + m]
    _same([m, y, rows, cols], outs, AdvancedIncSubtensor,
          [rng.normal(size=(3, 3)), rng.normal(size=4), np.array([0, 2, 0, -1]), np.array([1, 1, 1, -1])])


# -- array-making nodes ----------------------------------------------------------------------------
def test_specify_shape_checks_the_shape():
    x = et.dvector("x")
    f = _compiled([x], [et.exp(et.specify_shape(x, (3,))) * 2.0], SpecifyShape, [np.ones(3)])
    _assert_same(*_whole_and_program(f, [rng.normal(size=3)]))
    _kernel_raises(f, ValueError, [np.ones(4)])


def test_alloc_arange_join_and_diagonals():
    x, n, m = et.dvector("x"), et.lscalar("n"), et.dmatrix("m")
    outs = [et.alloc(et.sum(x), n, 2) * 2.0, et.arange(n) * 3, et.concatenate([x, et.exp(x)]) + 1.0,
            et.diagonal(m) * 2.0, et.diagonal(m, 1) + 1.0, et.diagonal(m, -2) - 1.0]
    f = _compiled([x, n, m], outs, Alloc, [np.ones(3), np.int64(2), np.ones((4, 3))])
    for node_class in (ARange, Join, ExtractDiag):
        assert any(type(node.op) is node_class for node in f.program.order), node_class
    for args in ([rng.normal(size=3), np.int64(4), rng.normal(size=(4, 3))],
                 [rng.normal(size=0), np.int64(0), rng.normal(size=(2, 5))]):
        _assert_same(*_whole_and_program(f, args))


def test_a_negative_size_raises():
    x, n = et.dvector("x"), et.lscalar("n")
    f = _compiled([x, n], [et.alloc(et.sum(x), n) * 2.0], Alloc, [np.ones(3), np.int64(2)])
    _kernel_raises(f, ValueError, [np.ones(3), np.int64(-1)])


def test_running_sums_and_products_along_each_axis():
    x, m, flags = et.dvector("x"), et.dmatrix("m"), bvector("flags")
    outs = [et.cumsum(x) * 2.0, et.cumprod(x) + 1.0, et.cumsum(m, axis=0) * 2.0, et.cumprod(m, axis=1) + 1.0,
            et.cumsum(flags) * 3]
    values = [rng.normal(size=6), rng.normal(size=(3, 4)), rng.random(5) < 0.5]
    _same([x, m, flags], outs, CumOp, values, [np.array([np.inf, -np.inf, np.nan]), rng.normal(size=(1, 0)),
                                               np.zeros(0, bool)])


# -- integer and boolean elementwise steps, reductions -------------------------------------------
def test_integer_and_boolean_steps_as_numpy_computes_them():
    i, j, x, flags = et.lvector("i"), et.lvector("j"), et.dvector("x"), bvector("flags")
    outs = [i * j + i, -i, et.maximum(i, j), x * i, et.switch(i, x, -x), et.switch(flags, x, i), i < x,
            et.eq(i, j), flags & (i > 0), et.switch(flags, i, j), i // j, i % j]
    big = np.iinfo(np.int64).max
    _same([i, j, x, flags], outs, (Elemwise, Composite),
          [np.array([3, -2, 0, big]), np.array([big, 5, -7, 2]), np.array([0.5, np.nan, -np.inf, 2.0]),
           np.array([True, False, True, False])],
          [np.array([-big - 1, 7, -7, 5]), np.array([-1, 0, 2, -3]), np.zeros(4), np.zeros(4, bool)])


def test_integer_reductions_and_whole_sums_keeping_their_axes():
    i, m = et.lvector("i"), et.dmatrix("m")
    outs = [et.sum(i) * 2, et.prod(i) + 1, et.max(i) - 1, et.min(i) * 3, et.sum(m, keepdims=True) * 2.0,
            et.sum(i > 0) + 1, et.sum(m, axis=1, keepdims=True) * 2.0]
    _same([i, m], outs, Reduce, [np.array([3, -2, 7, 2**40]), rng.normal(size=(3, 4))])


def test_logsumexp_of_vectors_and_rows_and_a_reshape_to_a_scalar():
    x, m = et.dvector("x"), et.dmatrix("m")
    outs = [et.logsumexp(x) * 2.0, et.logsumexp(x, keepdims=True) + x, et.logsumexp(m, axis=1) * 2.0,
            et.logsumexp(m, axis=1, keepdims=True) - m, et.reshape(x[:1], ()) * 3.0,
            et.concatenate([x, et.reshape(et.sum(x), (1,))]) * 2.0]
    _same([x, m], outs, Reduce, [rng.normal(size=5), rng.normal(size=(3, 4)) * 300],
          [np.array([-np.inf, -np.inf]), np.array([[np.inf, 0.0], [np.nan, 1.0], [-np.inf, -np.inf]])],
          [np.array([1e308, 1e308, 5.0]), np.array([[-1e308, 1e308]])])


def test_logsumexp_of_an_empty_row_raises():
    m = et.dmatrix("m")
    f = _compiled([m], [et.logsumexp(m, axis=1) * 2.0], Reduce, [np.ones((2, 2))])
    _kernel_raises(f, ValueError, [np.ones((2, 0))])


def test_maxima_minima_and_integer_sums_over_each_axis():
    x, m, i = et.dvector("x"), et.dmatrix("m"), et.lmatrix("i")
    outs = [et.max(x) * 2.0, et.min(m, axis=0) + 1.0, et.max(m, axis=1, keepdims=True) - m, et.min(m) * 3.0,
            et.sum(i, axis=0) * 2, et.prod(i, axis=1, keepdims=True) + 1, et.max(i, axis=0) - 1,
            et.min(i, keepdims=True) * 3, et.sum(m > 0, axis=1) + 1]
    big = np.iinfo(np.int64).max
    _same([x, m, i], outs, Reduce, [rng.normal(size=5), rng.normal(size=(3, 4)), rng.integers(-9, 9, (3, 4))],
          [np.array([np.nan, 1.0, -np.inf]), np.array([[1.0, np.nan], [-np.inf, np.inf]]),
           np.array([[big, 2], [big, -3]])])


def test_the_extremes_of_an_empty_axis_raise():
    m = et.dmatrix("m")
    f = _compiled([m], [et.max(m, axis=1) * 2.0], Reduce, [np.ones((2, 2))])
    _kernel_raises(f, ValueError, [np.ones((2, 0))])


# -- linear algebra ------------------------------------------------------------------------------
def _factor(n):
    a = rng.normal(size=(n, n))
    return a @ a.T + n * np.eye(n)


def _typed(*shape):
    return et.TensorType("float64", shape)


@pytest.mark.parametrize("n", [1, 5])
def test_cholesky_and_triangular_solves_of_each_kind(n):
    a, b, bm = _typed(n, n)("a"), _typed(n)("b"), _typed(n, 3)("bm")
    lower = et.linalg.cholesky(a)
    outs = [lower * 2.0]
    for low in (True, False):
        for trans in (0, 1):
            for unit in (False, True):
                tri = lower if low else lower.T
                outs += [et.linalg.solve_triangular(tri, b, lower=low, trans=trans, unit_diagonal=unit) * 2.0,
                         et.linalg.solve_triangular(tri, bm, lower=low, trans=trans, unit_diagonal=unit) + 1.0]
    args = [_factor(n), rng.normal(size=n), rng.normal(size=(n, 3))]
    f = _compiled([a, b, bm], outs, Cholesky, args)
    assert sum(type(node.op) is Solve for node in f.program.order) >= 8 and not _called_in_python(f)
    _same([a, b, bm], outs, Cholesky, args, [args[0], args[1] * np.inf, args[2] * np.nan], exact=False)


def test_large_or_unknown_triangular_solves_call_lapack_from_numba():
    """Every triangular solve is LAPACK's ``trtrs`` inside the whole function, the routine the
    program's SciPy call runs: the same values bit for bit, Fortran-ordered and strided operands
    included, and the caller's arrays are left as they were."""
    small, b = _typed(2, 2)("small"), et.dvector("b")
    big, c = _typed(300, 300)("big"), _typed(300, 300)("c")
    factor = np.linalg.cholesky(_factor(300))
    for inputs, out, args in (([small, b], et.linalg.solve_triangular(small, b, lower=True),
                               [np.tril(_factor(2)), rng.normal(size=2)]),
                              ([big, c], et.linalg.solve_triangular(big, c, lower=True, trans=1),
                               [factor, rng.normal(size=(300, 300))]),
                              ([big, c], et.linalg.solve_triangular(big.T, c.T, lower=False),
                               [factor, rng.normal(size=(300, 300))])):
        f = _compiled(inputs, [et.exp(out) * 2.0 + 1.0], Solve, args)
        kept = [a.copy() for a in args]
        whole, program = _whole_and_program(f, args)
        _assert_same(whole, program, exact=True)
        assert all(np.array_equal(a, k) for a, k in zip(args, kept))


def test_a_matrix_that_is_not_positive_definite_and_a_zero_pivot_raise():
    a, b = et.dmatrix("a"), et.dvector("b")
    f = _compiled([a], [et.linalg.cholesky(a) * 2.0], Cholesky, [np.eye(2)])
    _kernel_raises(f, np.linalg.LinAlgError, [-np.eye(2)])
    a, b = _typed(2, 2)("a"), _typed(2)("b")
    g = _compiled([a, b], [et.linalg.solve_triangular(a, b, lower=True) * 2.0], Solve, [np.eye(2), np.ones(2)])
    _kernel_raises(g, np.linalg.LinAlgError, [np.diag([1.0, 0.0]), np.ones(2)])


def test_general_solves():
    a, b, bm = et.dmatrix("a"), et.dvector("b"), et.dmatrix("bm")
    outs = [et.linalg.solve(a, b) * 2.0, et.linalg.solve(a, bm) + 1.0]
    _same([a, b, bm], outs, Solve, [_factor(4), rng.normal(size=4), rng.normal(size=(4, 2))], exact=False)


# -- nodes without a translation: called in Python between Numba segments -------------------------
def _called_in_python(f) -> list:
    program = f.program
    constants = {v: v.data for v in program.fgraph.variables if isinstance(v, Constant)}
    constants.update({v: program.storage_map[v][0] for v in program.folded})
    return numba_program.untranslated_nodes(program.fgraph, program.order, constants)


def _segmented(inputs, outputs, args):
    f = eg.function(inputs, outputs)
    with np.errstate(all="ignore"):
        f(*args)
    kernel = _kernel(f)
    assert not hasattr(kernel, "py_func") and "def segment2(" in f.program.call.whole_source
    return f, kernel


def test_a_node_without_a_translation_runs_in_python_between_numba_segments():
    x, y, i = et.dvector("x"), et.dvector("y"), et.lscalar("i")
    joined = et.repeat(et.concatenate([x, y]), 2)   # Repeat has no translation
    outs = [joined * 2.0 + et.sum(x), et.exp(et.repeat(x, 2))[i], et.sum(joined) + 1.0]
    f, kernel = _segmented([x, y, i], outs, [np.array([3.0, 1.0]), np.array([2.0]), np.int64(0)])
    assert sorted(type(n.op).__name__ for n in _called_in_python(f)) == ["Repeat", "Repeat"]
    for args in ([rng.normal(size=4), rng.normal(size=3), np.int64(-1)],
                 [np.array([np.nan, 1.0]), np.zeros(0), np.int64(1)]):
        _assert_same(f(*args), f.program.call.program(*args))
        # the kernel returns a float64 0-d output as a float, which the caller's ``results`` boxes
        results, passed = f.program.call.__globals__["results"], f.program.call.__globals__["passed"]
        _assert_same(results(kernel(*[a[()] if np.ndim(a) == 0 else a for a in args], *passed)),
                     f.program.call.program(*args))
    _kernel_raises(f, IndexError, [np.ones(2), np.ones(1), np.int64(4)])


def test_graphs_that_would_call_python_as_often_as_numba_or_call_a_fused_node_keep_the_program():
    x = et.dvector("x")
    f = eg.function([x], et.repeat(x, 2) * 2.0)
    assert not hasattr(f.program.call, "whole_source")
    g = eg.function([x], [et.exp(x) * 2.0, et.sum(et.ive(x, x) * 2.0 + 1.0), et.sum(x) * 3.0])   # ive: no form
    assert not hasattr(g.program.call, "whole_source")
    fused = {type(n.op).__name__ for n in _called_in_python(g)}
    assert fused and fused <= {"Composite", "ReducingComposite"}


# -- casts from floats to integers ----------------------------------------------------------------
_EDGES = np.array([np.nan, np.inf, -np.inf, -0.0, 2.0**63, -2.0**63, 2.0**63 - 1024, 2.0**31, -2.0**31,
                   2.0**31 - 0.5, -2.0**31 - 1, 2.0**32 + 5, 70000.5, -300.7, 255.5, 256.0, -0.5, 1e19, -3e9])


@pytest.mark.parametrize("target", ["int64", "int32", "int16", "int8", "uint16", "uint8"])
@pytest.mark.parametrize("source", ["float64", "float32"])
def test_casts_from_floats_give_numpys_integers_for_nan_inf_and_values_out_of_range(source, target):
    x = et.TensorType(source, (None,))("x")
    values = np.concatenate([_EDGES, rng.normal(size=50) * 10.0 ** rng.integers(0, 20, 50)]).astype(source)
    _same([x], [et.cast(x, target) * 2, et.cast(x[0], target) + 1], (Composite, Elemwise),
          [values], [values[:1]], [values[::-1].copy()])


def test_casts_to_the_widest_unsigned_integers_stay_with_numpy():
    x = et.dvector("x")
    for target in ("uint32", "uint64"):
        f = eg.function([x], et.cast(x, target) * 2)
        assert _called_in_python(f) or not hasattr(f.program.call, "whole_source")


# -- float products -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype, acc", [("float64", ""), ("float32", ""), ("float32", "float32")])
def test_float_products_multiply_in_numpys_order(dtype, acc):
    t3 = et.TensorType(dtype, (None, None, None))("t3")
    outs = [Reduce("prod", axes, keepdims, acc)(t3) * 2
            for axes, keepdims in [((0, 1, 2), False), ((1,), False), ((0, 2), True), ((2,), False), ((0,), True)]]
    near_one = (1.0 + rng.normal(size=(4, 50, 30)) * 1e-2).astype(dtype)
    special = near_one.copy()
    special[0, 3, :4] = [np.nan, np.inf, -0.0, 0.0]
    _same([t3], outs, Reduce, [near_one], [special], [near_one[:, :0]], [np.ones((1, 1, 1), dtype=dtype)])


def test_a_float_product_of_a_transposed_matrix_stays_with_numpy():
    m = et.dmatrix("m")
    f = eg.function([m], [et.prod(et.exp(m.T) * 2.0, axis=1) + 1.0, et.sum(m) * 2.0, et.exp(m) + 1.0])
    assert [type(node.op).__name__ for node in _called_in_python(f)] == ["Reduce"]
    with np.errstate(all="ignore"):
        value = 1.0 + rng.normal(size=(30, 30)) * 1e-2
        np.testing.assert_array_equal(f(value)[0], np.prod(np.exp(value.T) * 2.0, axis=1) + 1.0)


def test_float_sums_and_means_over_middle_axes_add_in_numpys_order():
    t3, t4 = et.dtensor3("t3"), et.dtensor4("t4")
    outs = [et.sum(t3, axis=1) * 2.0, et.mean(t3, axis=1, keepdims=True) * 2.0, et.sum(t4, axis=(1, 2)) * 2.0,
            et.mean(t4, axis=2) * 2.0]
    cases = [(3, 40, 5, 4), (1, 40, 1, 3), (5, 300, 9, 1), (2, 1, 17, 2), (4, 0, 3, 2)]
    _same([t3, t4], outs, Reduce, *[[rng.normal(size=(a, b, c)), rng.normal(size=(a, b, c, d))] for a, b, c, d in cases])


def test_float32_sums_and_means_accumulate_in_float64_as_numpy_does():
    m32 = et.TensorType("float32", (None, None))("m32")
    outs = [et.sum(m32) * 2.0, et.sum(m32, axis=0) * 2.0, et.mean(m32, axis=1) * 2.0,
            et.sum(m32, axis=1, keepdims=True) * 2.0, et.mean(m32, axis=(0, 1), keepdims=True) * 2.0]
    values = (rng.normal(size=(40, 300)) * 1000).astype("float32")
    _same([m32], outs, Reduce, [values], [values[:1]], [values[:, :0].copy()], [values[:7, :9].copy()])
    assert all(out.dtype == "float32" for out in outs)
