"""The whole Numba function on values of every dtype (float32, int8..uint64, bool): elementwise
steps, casts, comparisons, switches, reductions and indexing give the program's values bit for
bit, on edge values (NaN, inf, -0.0, the integers' extremes, zero divisors), empty arrays,
broadcasting and views that are not contiguous.  Tests that compile skip without Numba."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.exec.composite import Composite
from eqgraph.tensor.assertion import CheckAndRaise
from eqgraph.tensor.elemwise import Cast, Elemwise
from eqgraph.tensor.extra_ops import CumOp
from eqgraph.tensor.math import Reduce
from eqgraph.tensor.shape import MakeVector
from eqgraph.tensor.subtensor import AdvancedSubtensor, Subtensor
from test_numba_translations import _called_in_python, _same

pytestmark = [pytest.mark.skipif(numba_kernels.numba is None, reason="Numba is not installed"),
              pytest.mark.usefixtures("hot_at_once")]

INTEGERS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]


def dtypes(*default, slow=()):
    """Parameters: ``default`` in the default run, ``slow`` only with ``-m slow`` (each dtype is
    a Numba compile of its own graph, seconds each on a small machine)."""
    return [*default, *[pytest.param(d, marks=pytest.mark.slow) for d in slow]]
ELEMENTWISE = (Composite, Elemwise, Cast)


def edge_values(dtype: str, n: int = 9, seed: int = 0) -> np.ndarray:
    """``n`` values of ``dtype`` that start with its edge cases (extremes, zero, -1, NaN, inf, -0.0)."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if dtype.startswith("float"):
        edges = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.5, -2.25, np.finfo(dtype).max, np.finfo(dtype).tiny]
        values = np.concatenate([edges, rng.normal(size=n) * 10])
    else:
        info = np.iinfo(dtype)
        edges = [info.min, info.max, 0, 1, info.max // 2 + 1, (info.min + 1) if info.min else 2, 3]
        if info.min:
            edges.append(-1)
        values = np.concatenate([np.array(edges, dtype=dtype), rng.integers(info.min // 2, info.max // 2, n, dtype=dtype)])
    return np.asarray(values[:n], dtype=dtype) if n <= len(values) else np.resize(values, n).astype(dtype)


def _vector(dtype, name="x"):
    return et.TensorType(dtype, (None,))(name)


@pytest.mark.parametrize("dtype", dtypes("int8", "uint64", slow=[d for d in INTEGERS if d not in ("int8", "uint64")]))
def test_integer_arithmetic_wraps_and_divides_as_numpys(dtype):
    x, y = _vector(dtype), _vector(dtype, "y")
    negated = [] if dtype.startswith("uint") else [-x]   # PyTensor refuses -x of an unsigned int
    outs = [x + y, x - y, x * y, *negated, abs(x), x // y, x % y, et.maximum(x, y), et.minimum(x, y), x * x,
            et.sign(x), x & y, x | y, x ^ y, ~x, (x + y) // y * x]
    values = edge_values(dtype)
    divisors = np.roll(values, 3)
    _same([x, y], outs, ELEMENTWISE, [values, divisors], [values, np.flip(values).copy()], [values[:0], values[:0]])


def test_int64_results_that_wrap_around_are_read_as_wrapped():
    # LLVM may assume that signed arithmetic never overflows: the sign of 2**40 * 2**40 (0, wrapped)
    # then reads as 1, and x + 1 > x as true at the largest int64
    x = _vector("int64")
    big = np.array([2**40, np.iinfo(np.int64).max, np.iinfo(np.int64).min, 3, -5], dtype="int64")
    outs = [et.sign(x * x), et.sign(et.sqr(x)), (x + 1) > x, (x - 1) < x, et.sign(-x), abs(x) >= 0,
            et.sign(x // -1)]
    _same([x], outs, ELEMENTWISE, [big])


@pytest.mark.parametrize("dtype", dtypes("float32", "uint16", slow=["int8", "int32", "uint64"]))
def test_comparisons_switches_and_casts(dtype):
    x, y, c = _vector(dtype), _vector(dtype, "y"), _vector("bool", "c")
    outs = [x < y, et.eq(x, y), x >= y, et.switch(c, x, y), et.switch(x > y, x, y), et.cast(x, "float64"),
            et.cast(x, "bool"), et.cast(c, dtype), et.cast(x, "float32") * 2]
    if not dtype.startswith("float"):
        outs += [et.cast(x, "int8") + 1, et.cast(x, "uint32"), x / y]
    values = edge_values(dtype)
    _same([x, y, c], outs, ELEMENTWISE, [values, np.roll(values, 2), edge_values("bool")])


def test_float32_arithmetic_is_float32s():
    x, y = et.fvector("x"), et.fvector("y")
    outs = [x + y, x * y - x, x / y, et.sqrt(x), et.sqr(x), et.maximum(x, y), et.floor(x * 3.5), et.ceil(x),
            et.round(x), et.clip(x, -1.0, 2.0), et.isnan(x / y), et.isinf(x * y), abs(-x), et.sign(x)]
    values = edge_values("float32")
    _same([x, y], outs, ELEMENTWISE, [values, np.roll(values, 4)], [values[:0], values[:0]])


def test_mixed_dtypes_are_promoted_as_numpy_promotes():
    a, b, c, d = _vector("int8", "a"), _vector("uint8", "b"), et.fvector("c"), _vector("uint64", "d")
    e = _vector("int64", "e")
    outs = [a + b, a * c, b - c, a < b, d > b, et.maximum(a, b), d + e * 1.0]
    _same([a, b, c, d, e], outs, ELEMENTWISE,
          [edge_values("int8"), edge_values("uint8"), edge_values("float32"), edge_values("uint64"),
           edge_values("int64")])


def test_broadcast_and_views_that_are_not_contiguous():
    m, v = et.TensorType("int16", (None, None))("m"), et.TensorType("int16", (None,))("v")
    f32 = et.TensorType("float32", (None, None))("f")
    outs = [m + v, m.T * v[-1], m[::2] - v[0], f32.T + 1, (f32 * 2)[:, ::-1]]
    mv = edge_values("int16", 12).reshape(3, 4)
    fv = edge_values("float32", 12).reshape(4, 3)
    _same([m, v, f32], outs, ELEMENTWISE, [mv, edge_values("int16", 4, 1), fv],
          [mv[:, :1].copy(), edge_values("int16", 1, 1), fv[:0]])


def test_float32_transcendental_steps_are_called_in_python():
    # NumPy's float32 exp is its own SIMD approximation: no Numba form gives its bits
    x = et.fvector("x")
    f = eg.function([x], [et.exp(x), x + 1, x * 3])
    assert [type(n.op).__name__ for n in _called_in_python(f)] == ["Elemwise"]


@pytest.mark.parametrize("dtype", dtypes("float32", "int8", slow=["uint32", "bool"]))
def test_indexing_and_increments_of_every_dtype(dtype):
    x, idx = et.TensorType(dtype, (None,))("x"), et.lvector("idx")
    m = et.TensorType(dtype, (None, None))("m")
    outs = [x[::-2], x[1:], x[idx], m[idx], m[:, 0], et.concatenate([x, x[:2]])]
    if dtype != "bool":
        outs += [et.inc_subtensor(x[idx], x[:1]), et.set_subtensor(x[1:3], x[:2]), et.inc_subtensor(x[2], x[0])]
    values = edge_values(dtype)
    _same([x, idx, m], outs, (Subtensor, AdvancedSubtensor), [values, np.array([0, -1, 2, 2, 0]),
                                                                edge_values(dtype, 12, 2).reshape(3, 4)])


# -- reductions ----------------------------------------------------------------------------------
AXES = [(1,), (0, 2), (1, 2), (0, 1, 2)]


@pytest.mark.parametrize("dtype", dtypes("int8", "float32", slow=["uint8", "uint64", "bool", "float64"]))
def test_order_free_reductions_over_any_axes_of_three_dimensions(dtype):
    x = et.TensorType(dtype, (None, None, None))("x")
    outs = []
    for axis in AXES:
        outs += [x.max(axis=axis), x.min(axis=axis, keepdims=True), et.any(x, axis=axis), et.all(x, axis=axis)]
        if dtype not in ("float32", "float64"):
            outs += [x.sum(axis=axis), x.prod(axis=axis, keepdims=True)]
    values = edge_values(dtype, 24, 3).reshape(2, 3, 4)
    _same([x], outs, Reduce, [values], [values[:, :, ::-1]], [values.transpose(2, 0, 1)])


def test_float64_sums_and_means_over_leading_or_trailing_axes_are_numpys_bit_for_bit():
    x = et.dtensor3("x")
    outs = [x.sum(axis=axis, keepdims=keep) for axis in [(2,), (1, 2), (0,), (0, 1)] for keep in (False, True)]
    outs += [x.mean(axis=(1, 2)), x.mean(axis=0)]
    rng = np.random.default_rng(5)
    big = rng.normal(size=(3, 5, 150)) * 10.0 ** rng.integers(-8, 8, size=(3, 5, 150))
    _same([x], outs, Reduce, [big], [big[:, ::-1, :]], [rng.normal(size=(40, 3, 2))],
          [np.zeros((2, 0, 3))], [np.array([[[np.nan, np.inf, -0.0]]])])


def test_sums_over_axes_apart_are_called_in_python():
    # over axes with a kept axis between them NumPy's iterator mixes pairwise and running sums
    x = et.dtensor3("x")
    f = eg.function([x], [x.sum(axis=(0, 2)) * 2.0, et.exp(x) + 1.0, x * 3.0])
    assert [type(n.op).__name__ for n in _called_in_python(f)] == ["Reduce"]


@pytest.mark.parametrize("dtype", dtypes("float64", "int8", slow=["float32", "uint64"]))
def test_argmax_and_argmin_over_one_axis_or_all_take_the_first_extreme_or_nan(dtype):
    x = et.TensorType(dtype, (None, None, None))("x")
    outs = [fn(x, axis=axis) for fn in (et.argmax, et.argmin) for axis in (0, 1, 2, None)]
    outs += [et.argmax(x, axis=1, keepdims=True)]
    values = edge_values(dtype, 24, 6).reshape(2, 3, 4)
    ties = np.resize(edge_values(dtype, 2), (2, 3, 4))
    _same([x], outs, Reduce, [values], [ties], [values[::-1, :, ::2]])


def test_make_vector_and_checks():
    a, b, v = et.lscalar("a"), et.bscalar("b"), et.dvector("v")
    outs = [et.make_vector(a, b) * 2, et.assert_op(v * 2.0, et.all(v > 0.0), a > 0) + 1.0]
    _same([a, b, v], outs, (MakeVector, CheckAndRaise), [np.int64(3), np.int8(-4), np.ones(3)],
          [np.int64(2 ** 40), np.int8(127), np.array([0.5])])
    f = eg.function([a, b, v], outs)
    with pytest.raises(AssertionError):
        f(np.int64(-1), np.int8(0), np.ones(2))


@pytest.mark.parametrize("dtype", dtypes("float32", slow=["int8", "uint16"]))
def test_running_sums_and_products_accumulate_in_their_dtype(dtype):
    x = et.TensorType(dtype, (None, None))("x")
    outs = [et.cumsum(x, axis=0), et.cumsum(x, axis=1), et.cumprod(x, axis=1), et.cumprod(x[0], axis=0)]
    values = edge_values(dtype, 12, 7).reshape(3, 4)
    _same([x], outs, CumOp, [values], [values[:, ::-1]], [values[:, :0]])
