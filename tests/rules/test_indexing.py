"""The indexing rules of indexing.egg on numbers. They match index props
the soundness checker cannot draw, so each is tested here: it fires (the compiled graph
changes as expected) and keeps NumPy's values, on sizes unknown until run time, including
empty results, starts past the end, negative steps and axes of length 0 and 1."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.extract.costs import Bounded, CostModel

v = et.dvector("v")
m, b = et.dmatrix("m"), et.dmatrix("b")
LENGTHS = (0, 1, 2, 3, 5, 9)


def ops_of(f) -> list[str]:
    return [str(node.op) for node in f.stages.optimized.toposort()]


def check(inputs, out, *values, tol=0.0):
    """Compile ``out``; it must equal NumPy op by op (no rewrites) on each tuple of ``values``
    (within ``tol``: a product computed another way rounds differently)."""
    f, reference = eg.function(inputs, out), eg.function(inputs, out, rulesets=[])
    for args in values:
        np.testing.assert_allclose(f(*args), reference(*args), rtol=tol, atol=tol)
    return ops_of(f)


def vectors():
    return [(np.arange(n, dtype="float64") - 1.5,) for n in LENGTHS]


def count(ops, prefix) -> int:
    return sum(op.startswith(prefix) for op in ops)


@pytest.mark.parametrize("outer, inner, merged", [
    (slice(2, None), slice(None, 3), True),      # slice-of-slice-to-end: x[2:][:3] = x[2:5]
    (slice(1, 4), slice(1, 6), True),            # slice-of-slice: x[1:4][1:6] = x[2:4]
    (slice(4, 2), slice(0, 1), True),            # an empty inner slice
    (slice(7, None), slice(1, None), True),      # slice-to-end-of-slice-to-end: starts past the end
    (slice(1, 8), slice(2, None), True),         # slice-to-end-of-slice
    (slice(None, None, -1), slice(None, 3), False),  # a negative step: not merged, still right
    (slice(-3, None), slice(1, None), False),    # a start from the end: not merged
    (slice(None, -1), slice(1, 3), False),       # a stop from the end: not merged
])
def test_a_slice_of_a_slice_is_one_slice(outer, inner, merged):
    ops = check([v], v[outer][inner] * 2.0, *vectors())
    assert count(ops, "Subtensor") == (1 if merged else 2), ops


def test_a_column_of_a_row_slice_is_one_index():
    rows = [(np.arange(r * 3.0).reshape(r, 3),) for r in (1, 2, 4)]
    for index in (slice(1, None), slice(None, None, -2), slice(-2, 10)):
        ops = check([m], m[index][:, 2] * 2.0, *rows)
        assert count(ops, "Subtensor") == 1, ops


@pytest.mark.parametrize("build", [lambda: m.T[1], lambda: m.T[:, 0], lambda: m.T[-1], lambda: m.T[:, -2]])
def test_indexing_a_transpose_indexes_the_matrix(build):
    ops = check([m], build() * 2.0, (np.arange(12.0).reshape(3, 4),), (np.arange(8.0).reshape(2, 4),))
    assert count(ops, "DimShuffle") == 0, ops


@pytest.mark.parametrize("build", [
    lambda: et.exp(v)[[0, 2, 1]],          # take-exp
    lambda: et.log(v)[[1]],                # take-log
    lambda: (-v)[[0, 1]],                  # take-neg
    lambda: et.tanh(v)[[-1, 0]],
    lambda: et.sigmoid(v)[[2]],
    lambda: et.sqrt(v)[[0, 0]],            # a repeated index
    lambda: et.sqr(v)[[1, 2]],
    lambda: abs(v)[[2, 0]],
])
def test_array_indexing_moves_below_a_unary_op(build):
    values = [(np.array([0.5, -1.5, 4.0]),), (np.array([2.0, 0.25, -0.0, 7.0]),)]
    ops = check([v], build(), *values)
    [array_index] = [o for o in ops if o.startswith("AdvancedSubtensor")]
    f = eg.function([v], build())
    node = next(n for n in f.stages.optimized.toposort() if str(n.op) == array_index)
    assert node.inputs[0].owner is None  # the index reads the input: the op runs on the few elements taken


def test_a_boolean_mask_of_a_unary_op():
    # the rule applies, but the mask's length is unknown, so either form may be extracted
    check([v], (-v)[v > 0], (np.array([0.5, -1.5, 4.0, -0.0]),), (np.zeros(0),))


@pytest.mark.parametrize("index", [np.s_[:, 0], np.s_[:, 1:], np.s_[:, 40:4:-3], np.s_[:, -1]])
def test_columns_of_a_product_are_products_with_the_columns(index):
    # static sizes: B[:, 1:] is then known to be smaller than B (for unknown sizes only a
    # constant column, or a slice with both bounds from one end, is known to be smaller)
    a, c = et.TensorType("float64", (30, 40))("a"), et.TensorType("float64", (40, 50))("c")
    rng = np.random.default_rng(0)
    ops = check([a, c], (a @ c)[index], (rng.normal(size=(30, 40)), rng.normal(size=(40, 50))), tol=1e-12)
    f = eg.function([a, c], (a @ c)[index])
    [product] = [n for n in f.stages.optimized.toposort() if str(n.op) == "matmul"]
    assert product.inputs[0].owner is None and product.inputs[1].owner is not None, ops


def test_a_column_of_a_product_with_a_symbolic_index():
    j = et.lscalar("j")
    rng = np.random.default_rng(1)
    A, B = rng.normal(size=(3, 4)), rng.normal(size=(4, 5))
    f = eg.function([m, b, j], (m @ b)[:, j])
    [product] = [n for n in f.stages.optimized.toposort() if str(n.op) == "matmul"]
    assert product.inputs[1].ndim == 1
    np.testing.assert_allclose(f(A, B, -2), (A @ B)[:, -2])


def test_rows_and_slices_of_products_of_unknown_sizes_are_smaller_products():
    # unknown sizes: A[0] @ B must not look as costly as the whole product (MatMul.flops)
    rng = np.random.default_rng(2)
    A, B = rng.normal(size=(5, 4)), rng.normal(size=(4, 6))
    for out in ((m @ b)[0], (m @ b)[:, 1]):
        f = eg.function([m, b], out)
        [product] = [n for n in f.stages.optimized.toposort() if str(n.op) == "matmul"]
        assert product.outputs[0].ndim == 1, ops_of(f)


@pytest.mark.parametrize("build", [lambda: et.exp(v)[:10], lambda: (-m)[:, 1:3], lambda: et.sigmoid(m)[:2],
                                   lambda: et.exp(v)[-4:], lambda: et.tanh(v)[3:12:4]])
def test_slices_move_below_unary_ops_where_sizes_are_unknown(build):
    values = [(np.linspace(-3, 3, n),) for n in (0, 1, 4, 20)] if build().ndim == 1 else \
        [(np.linspace(-3, 3, r * c).reshape(r, c),) for r, c in ((0, 4), (1, 1), (3, 5))]
    ops = check([v] if build().ndim == 1 else [m], build(), *values)
    assert ops[0].startswith("Subtensor"), ops  # the slice first, then the op on what it took


def test_a_row_of_an_alloc_is_the_value_allocated_to_a_row():
    n = et.lscalar("n")
    ops = check([v, n], et.alloc(v, n, v.shape[0])[2] * 2.0, (np.array([1.0, -0.0, np.inf]), 4))
    assert count(ops, "Alloc") == 0, ops
    s = et.dscalar("s")
    ops = check([s, n], et.alloc(s, n, 3)[-1], (np.float64(2.5), 2))
    assert count(ops, "Alloc") == 1, ops


def test_slice_bounds_reach_the_cost_model():
    # x[:10] of an unknown length holds at most 10 elements: priced by that bound
    model = CostModel()
    unknown = et.TensorType("float64", (None, None))
    assert model.size(Bounded(unknown, ((2,), ()))) == 2 * 100
    assert model.size(Bounded(unknown, ((10 ** 6,), ()))) == model.size(unknown)  # no bigger than a guess
    assert Bounded(unknown, ((2,), ())).dtype == "float64"
    # m[0] of an unknown matrix: no longer than a row of m (100 of the 100 x 100 guessed)
    assert model.size(Bounded(et.TensorType("float64", (None,)), (((unknown, 1),),))) == 100


BROADCASTING = [(np.array([3.0]), np.arange(5.0) - 2), (np.arange(5.0) - 2, np.array([-0.0])),
                (np.arange(6.0), np.arange(6.0) + 0.5), (np.array([2.0]), np.array([-1.0])), (np.zeros(0), np.ones(1))]


@pytest.mark.parametrize("build, lifted", [
    (lambda x, y: (x + y)[:10], True),        # index-add: a slice from 0
    (lambda x, y: (x * y)[0], True),          # index-mul
    (lambda x, y: (x - y)[-1], True),         # index-sub
    (lambda x, y: (x / y)[:6:2], True),       # index-div, a step
    (lambda x, y: (x + y)[:0], True),         # an empty slice
    (lambda x, y: (x + y)[2], False),         # x[2] of a size-1 x is out of range
    (lambda x, y: (x * y)[1:4], False),       # ... and x[1:4] empty
    (lambda x, y: (x + y)[:-1], False),       # ... and x[:-1] empty
])
def test_indexing_moves_below_a_binary_op_where_broadcasting_allows(build, lifted):
    w = et.dvector("w")
    values = [pair for pair in BROADCASTING if _valid(build, pair)]
    ops = check([v, w], build(v, w), *values)
    assert (ops[-1].startswith("Elemwise")) == lifted, ops


def _valid(build, pair) -> bool:
    try:
        build(*[np.asarray(a) for a in pair])
    except (IndexError, ValueError):
        return False
    return True


def test_rows_of_a_binary_op_of_matrices():
    values = [(np.arange(12.0).reshape(3, 4), np.array([[1.0, 2.0, -0.0, 4.0]])),
              (np.arange(4.0).reshape(1, 4), np.arange(12.0).reshape(3, 4)),
              (np.arange(8.0).reshape(2, 4), np.ones((2, 1)))]
    for out in ((m + b)[:2], (m * b)[-1], (m - b)[0]):
        ops = check([m, b], out, *values)
        assert ops[-1].startswith("Elemwise"), ops
    # a row of a sum with a static row: right either way (the cost model's guesses for the
    # row's unknown length and m's differ, so it may keep the sum whole)
    row = et.TensorType("float64", (1, None))("row")
    check([m, row], (m + row)[:2], (np.arange(12.0).reshape(3, 4), np.array([[1.0, 2.0, -0.0, 4.0]])))



@pytest.mark.parametrize("build", [
    lambda x: (et.exp(x) + x)[2],          # any index, where both operands have one shape at run time
    lambda x: (x * et.sqrt(et.abs(x)))[1:4],
    lambda x: (et.tanh(x) - x)[-2],
    lambda x: (x / et.exp(x))[3],
])
def test_any_index_moves_below_a_binary_op_of_one_run_time_shape(build):
    f, reference = eg.function([v], build(v)), eg.function([v], build(v), rulesets=[])
    assert ops_of(f)[-1].startswith("Elemwise"), ops_of(f)
    for (values,) in vectors():
        try:
            want = reference(values)
        except IndexError:   # out of range: on both sides
            with pytest.raises(IndexError):
                f(values)
            continue
        np.testing.assert_array_equal(f(values), want)


# -- read after write: the value written, broadcast to the part's shape ------------------------
def _read_after_write(dtype):
    x = et.TensorType(dtype, (None, 5))("x")
    x3 = et.TensorType(dtype, (None, 4, 5))("x3")
    row, col = et.TensorType(dtype, (5,))("row"), et.TensorType(dtype, (None,))("col")
    return [
        ([x], lambda: et.set_subtensor(x[0], 7.0)[0]),
        ([x], lambda: et.set_subtensor(x[0], 7.0)[0, :]),
        ([x], lambda: et.set_subtensor(x[:, 0], 7.0)[:, 0]),
        ([x], lambda: et.set_subtensor(x[1:], 7.0)[1:]),
        ([x], lambda: et.inc_subtensor(x[0], 2.0)[0]),
        ([x], lambda: et.inc_subtensor(x[:, 0], 2.0)[:, 0]),
        ([x, row], lambda: et.set_subtensor(x[0], row)[0]),
        ([x, col], lambda: et.set_subtensor(x[:, 1], col)[:, 1]),
        ([x3, row], lambda: et.set_subtensor(x3[1], row)[1]),
        ([x3, row], lambda: et.inc_subtensor(x3[1], row)[1]),
        ([x3], lambda: et.set_subtensor(x3[0], -1.0)[0]),
    ]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", range(11))
def test_reading_back_what_was_written_gives_it_broadcast_to_the_part(dtype, case):
    """A value of fewer dimensions than the part it is written to (a scalar into a row)
    broadcasts; the rule gave Second operands of different ndims, a TypeContradiction."""
    inputs, build = _read_after_write(dtype)[case]
    rng = np.random.default_rng(case)
    values = [rng.normal(size=tuple(s or 3 for s in v.type.shape)).astype(dtype) for v in inputs]
    check(inputs, build(), values)
