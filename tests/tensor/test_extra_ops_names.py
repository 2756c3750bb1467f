"""PyTensor's names in extra_ops and basic that NumPy has no graph-time twin of, checked against NumPy."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.tensor.join import join


def test_get_vector_length_reads_the_static_length():
    a, b = et.lscalar("a"), et.dscalar("b")
    cases = [(et.as_tensor_variable(()), 0), (et.as_tensor_variable((1, 2, 3)), 3),
             (et.as_tensor_variable((a, b, 9.0)), 3), (et.cast(et.as_tensor_variable((a, b, 9.0)), "int64"), 3),
             (join(0, et.as_tensor_variable([1, 2], ndim=1), et.as_tensor_variable(a, ndim=1)), 3),
             (et.alloc(0, 3), 3), (et.dtensor3("t").shape, 3), (et.dtensor3("t").shape[1:], 2),
             (et.tensor("v", shape=(5,)), 5)]
    for vector, length in cases:
        assert et.get_vector_length(vector) == length, vector
    assert et.get_vector_length([4, 5]) == len(np.array([4, 5]))


def test_get_vector_length_refuses_what_only_running_tells():
    with pytest.raises(ValueError, match="^Length of .* cannot be determined"):
        et.get_vector_length(et.dvector("v"))
    with pytest.raises(TypeError, match="not a vector"):
        et.get_vector_length(et.dmatrix("m"))


@pytest.mark.parametrize("which", ["tril", "triu"])
def test_triangle_indices_match_numpy(which):
    m, k = et.dmatrix("m"), et.iscalar("k")
    indices = getattr(et, f"{which}_indices")(m.shape[0], k, m.shape[1])
    from_matrix = getattr(et, f"{which}_indices_from")(m, k)
    f = eg.function([m, k], [*indices, *from_matrix])
    for shape in [(4, 4), (3, 5), (5, 3), (0, 2)]:
        for offset in (-2, -1, 0, 1, 3):
            values = np.zeros(shape)
            rows, cols, rows_from, cols_from = f(values, offset)
            expected = getattr(np, f"{which}_indices")(shape[0], offset, shape[1])
            for got, want in zip((rows, cols, rows_from, cols_from), expected * 2):
                assert got.dtype == np.int64
                np.testing.assert_array_equal(got, want)
    assert [int(v) for v in et.tril_indices(3)[0].eval()] == list(np.tril_indices(3)[0])
    with pytest.raises(ValueError, match="must be two dimensional"):
        getattr(et, f"{which}_indices_from")(et.dvector("v"))


def test_nonzero_as_a_matrix_matches_numpy():
    x = et.dmatrix("x")
    values = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    matrix = et.nonzero(x, return_matrix=True)
    assert matrix.dtype == "int64" and matrix.type.shape == (2, None)
    np.testing.assert_array_equal(matrix.eval({x: values}), np.vstack(np.nonzero(values)))
    for got, want in zip(et.nonzero(x, return_matrix=False), np.nonzero(values)):
        np.testing.assert_array_equal(got.eval({x: values}), want)


def test_nonzero_values_match_numpy_and_have_a_gradient():
    x = et.dtensor3("x")
    values = np.array([[[0.0, 1.5], [np.nan, 0.0]], [[-0.0, 2.0], [3.0, np.inf]]])
    got = et.nonzero_values(x).eval({x: values})
    assert got.dtype == values.dtype and got.ndim == 1
    np.testing.assert_array_equal(got, values[np.nonzero(values)])
    with pytest.raises(ValueError):
        et.nonzero_values(et.dscalar("s"))
    rng = np.random.default_rng(0)
    point = rng.normal(size=(2, 3)) * (rng.random((2, 3)) > 0.4)
    eg.verify_grad(lambda a: (et.nonzero_values(a) ** 2).sum(), [point], rng=rng)


def test_the_oriented_stacks_take_two_or_more_matrices():
    a, b, c = et.dmatrix("a"), et.dmatrix("b"), et.dmatrix("c")
    av, bv, cv = np.arange(6.0).reshape(2, 3), np.arange(3.0).reshape(1, 3), np.arange(4.0).reshape(2, 2)
    np.testing.assert_array_equal(et.vertical_stack(a, b, a).eval({a: av, b: bv}), np.vstack([av, bv, av]))
    np.testing.assert_array_equal(et.horizontal_stack(a, c).eval({a: av, c: cv}), np.hstack([av, cv]))
    for stack in (et.horizontal_stack, et.vertical_stack):
        with pytest.raises(ValueError, match="at least two"):
            stack(a)
        with pytest.raises(ValueError, match="two dimensions"):
            stack(a, et.dtensor3("t"))
    rng = np.random.default_rng(1)
    eg.verify_grad(lambda p, q: et.horizontal_stack(p, q), [av, cv], rng=rng)


def test_stacklists_stacks_nested_lists_as_numpy_arrays_do():
    a, b, c, d = (et.dscalar(n) for n in "abcd")
    f = eg.function([a, b, c, d], [et.stacklists([[a, b], [c, d]]), et.stacklists([[[a], [b]], [[c], [d]]])])
    square, column = f(1.0, 2.0, 3.0, 4.0)
    np.testing.assert_array_equal(square, np.array([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(column, np.array([[[1.0], [2.0]], [[3.0], [4.0]]]))
    m = [et.dmatrix(n) for n in "wxyz"]
    values = [np.full((2, 3), i, dtype=float) for i in range(4)]
    got = et.stacklists([[m[0], m[1]], [m[2], m[3]]]).eval(dict(zip(m, values)))
    np.testing.assert_array_equal(got, np.array([[values[0], values[1]], [values[2], values[3]]]))


def test_is_flat_and_atleast_nd():
    assert et.is_flat(et.dvector("v")) and not et.is_flat(et.dtensor3("t"))
    assert et.is_flat(et.dtensor4("t").reshape((10, 10, -1)), ndim=3)
    assert et.atleast_Nd(et.dvector("v"), n=3).type.shape[:2] == (1, 1)


def test_repeat_of_one_count_in_a_list_repeats_every_element():
    x = et.dvector("x")
    values = np.arange(4.0)
    repeated = et.repeat(x, [3])
    assert repeated.type.shape == (None,)
    length, got = eg.function([x], [repeated.shape[0], repeated])(values)
    np.testing.assert_array_equal(got, np.repeat(values, [3]))
    assert length == len(np.repeat(values, [3]))
    assert et.repeat(et.tensor("s", shape=(4,)), [3]).type.shape == (12,)
    with pytest.raises(ValueError, match="repeats"):
        et.repeat(et.tensor("s", shape=(4,)), [1, 2])


@pytest.mark.parametrize("counts_shape", [(1,), (None,)])
def test_the_shape_of_repeat_with_one_count_given_when_run(counts_shape):
    x, counts = et.dvector("x"), et.tensor("counts", shape=counts_shape, dtype="int64")
    repeated = et.repeat(x, counts)
    length = eg.function([x, counts], repeated.shape[0])
    values = np.arange(4.0)
    assert length(values, np.array([3])) == len(np.repeat(values, [3]))
    if counts_shape == (None,):
        assert length(values, np.array([1, 0, 2, 1])) == len(np.repeat(values, [1, 0, 2, 1]))


def test_the_gradient_of_repeat_with_one_count_in_a_vector():
    rng = np.random.default_rng(2)
    counts = et.tensor("counts", shape=(1,), dtype="int64")
    eg.verify_grad(lambda a: et.repeat(a, [3]) ** 2, [rng.normal(size=4)], rng=rng)
    x = et.dvector("x")
    gradient = eg.function([x, counts], eg.grad((et.repeat(x, counts) * et.arange(12.0)).sum(), x))
    np.testing.assert_allclose(gradient(np.ones(4), np.array([3])), np.add.reduceat(np.arange(12.0), [0, 3, 6, 9]))


@pytest.mark.parametrize("reps", [2.5, "fscalar", "float vector", "list with float", "matrix", "list with vector"])
def test_tile_refuses_reps_as_pytensor_and_numpy_do(reps):
    reps = {"fscalar": et.fscalar("f"), "float vector": et.tensor("v", shape=(3,), dtype="float64"),
            "list with float": [2, et.fscalar("f")], "matrix": et.tensor("m", shape=(3, 1), dtype="int64"),
            "list with vector": [2, et.tensor("v", shape=(2,), dtype="int64")]}.get(reps, reps)
    for error in (ValueError, TypeError):
        with pytest.raises(error, match="tile: reps"):
            et.tile(et.arange(3), reps)


def test_tile_asks_for_the_length_of_symbolic_reps():
    reps = et.ivector("reps")
    with pytest.raises(ValueError, match="Use specify_shape to set the length"):
        et.tile(et.arange(3), reps)
    tiled = et.tile(et.arange(3), et.specify_shape(reps, (2,)))
    np.testing.assert_array_equal(tiled.eval({reps: np.array([2, 3], dtype="int32")}), np.tile(np.arange(3), [2, 3]))


def test_where_of_a_condition_and_one_value_is_refused_in_numpys_words():
    with pytest.raises(ValueError, match="either both or neither of x and y"):
        et.where(et.dvector("c") > 0, 1.0)


def test_specify_shape_of_a_vector_takes_its_length_as_an_int():
    v = et.lvector("v")
    assert et.specify_shape(v, 2).type.shape == (2,)
    assert et.specify_shape(v, np.int64(3)).type.shape == (3,)


@pytest.mark.parametrize("grid", ["mgrid", "ogrid"])
def test_grids_match_numpy(grid):
    ours, theirs = getattr(et, grid), getattr(np, grid)
    np.testing.assert_allclose(ours[0:1:0.1].eval(), theirs[0:1:0.1])
    for index in [(slice(0, 1, 0.1), slice(1, 10, 1.0), slice(10, 100, 10.0)), (slice(0, 2, 1), slice(1, 10, 1)),
                  (slice(5), slice(2, 8, 3))]:
        got, want = ours[index], theirs[index]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g.eval(), w)
    i, j = et.dscalar("i"), et.lscalar("j")
    f = eg.function([i, j], ours[i:1:0.25, 1:j:2])
    for g, w in zip(f(0.0, 6), theirs[0:1:0.25, 1:6:2]):
        np.testing.assert_allclose(g, w)
    with pytest.raises(TypeError, match="slices with a stop"):
        ours[0:5, 3]


def test_constant_of_a_constant_is_that_constant_with_the_dimensions_asked():
    c = et.constant(np.array([1, 2], dtype="int8"))
    assert et.constant(c) is c
    two = et.constant(np.array(2, dtype="int8"))
    wide = et.constant(two, ndim=2)
    assert wide.type.shape == (1, 1) and wide.dtype == "int8"
    np.testing.assert_array_equal(wide.data, np.expand_dims(np.array(2, dtype="int8"), (0, 1)))
    assert et.constant(wide, ndim=0).ndim == 0
    with pytest.raises(ValueError, match="more than 0 dimensions"):
        et.constant(c, ndim=0)


def test_a_masked_array_is_refused_as_pytensor_and_as_a_type_error():
    masked = np.ma.masked_greater(np.array([1, 2, 3, 4]), 3)
    for make in (et.constant, et.as_tensor_variable):
        for error in (NotImplementedError, TypeError):
            with pytest.raises(error, match="MaskedArrays are not supported"):
                make(masked)


@pytest.mark.parametrize("make, words", [
    (lambda: et.moveaxis(et.dtensor3("x"), [0, 1], 0), "`source` and `destination` arguments must have the same number"),
    (lambda: et.matrix_transpose(et.dvector("x")), "Input array must be at least 2-dimensional"),
    (lambda: et.diag(et.dtensor3("x")), r"Input must be 1- or 2-d\."),
])
def test_shape_errors_in_pytensors_words_name_the_function(make, words):
    with pytest.raises(ValueError, match=words):
        make()


def test_ravel_multi_index_refuses_float_indices_and_dims_as_numpy():
    with pytest.raises(TypeError, match="integer"):
        et.ravel_multi_index((et.fvector("f"), et.ivector("i")), (3, 4))
    with pytest.raises(TypeError, match="integer"):
        et.ravel_multi_index(((3, 4), et.ivector("i")), (3.4, 3.2))
    with pytest.raises(TypeError):
        np.ravel_multi_index((np.array([1.7]), np.array([1])), (3, 4))
    i, j = et.lvector("i"), et.lvector("j")
    flat = et.ravel_multi_index((i, j), (3, 4)).eval({i: np.array([1, 2]), j: np.array([3, 0])})
    np.testing.assert_array_equal(flat, np.ravel_multi_index((np.array([1, 2]), np.array([3, 0])), (3, 4)))


UNIQUE_CASES = [(et.dvector, np.array([2.0, 1.0, 3.0, 2.0, np.nan, np.nan])),
                (et.dmatrix, np.array([[2.0, 1.0], [3.0, 2.0], [2.0, 1.0]]))]


@pytest.mark.parametrize("flags", [(False, False, False), (True, False, False), (False, True, False),
                                   (True, True, False), (False, False, True), (True, True, True)])
@pytest.mark.parametrize("axis", [None, 0, -1])
@pytest.mark.parametrize("make, value", UNIQUE_CASES, ids=["vector", "matrix"])
def test_unique_matches_numpy(make, value, axis, flags):
    x = make("x")
    got = eg.function([x], et.unique(x, *flags, axis=axis))(value)
    want = np.unique(value, *flags, axis=axis)
    got, want = (list(got), list(want)) if isinstance(want, tuple) else ([got], [want])
    if flags[1]:  # the inverse is a vector, as NumPy before 2.0 gave it
        want[1 + flags[0]] = np.ravel(want[1 + flags[0]])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_unique_inverse_shape_is_known_without_running_unique():
    x = et.dmatrix("x")
    inverse = et.unique(x, False, True, axis=0)[1]
    assert eg.function([x], inverse.shape)(np.zeros((5, 2))).tolist() == [5]
    inverse = et.unique(x, True, True)[2]
    assert eg.function([x], inverse.shape)(np.zeros((5, 2))).tolist() == [10]


def test_unique_refuses_a_bad_axis():
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        et.unique(et.dmatrix("x"), axis=2)
    with pytest.raises(TypeError, match="axis must be None or an integer"):
        et.unique(et.dmatrix("x"), axis=0.5)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("shape", [(3,), (3, 4), (3, 4, 5)])
def test_unravel_index_matches_numpy(shape, order):
    n = int(np.prod(shape))
    for indices in (np.int64(n - 1), np.arange(n), np.arange(n)[:, None]):
        i = et.tensor("i", dtype="int64", shape=(None,) * np.ndim(indices))
        got = eg.function([i], list(et.unravel_index(i, shape, order=order)))(indices)
        for g, w in zip(got, np.unravel_index(indices, shape, order=order)):
            assert g.shape == np.shape(w)
            np.testing.assert_array_equal(g, w)
    sized = et.tensor("dims", dtype="int64", shape=(len(shape),))
    got = eg.function([sized], list(et.unravel_index(np.arange(n), sized, order=order)))(np.array(shape))
    for g, w in zip(got, np.unravel_index(np.arange(n), shape, order=order)):
        np.testing.assert_array_equal(g, w)


def test_unravel_index_refuses_what_numpy_refuses():
    with pytest.raises(ValueError, match="the length of dims .* must be known"):
        et.unravel_index(et.ivector("i"), et.ivector("d"))
    with pytest.raises(TypeError, match="indices must be integer"):
        et.unravel_index(et.fvector("i"), (3, 4))
    with pytest.raises(TypeError, match="dims must be integer"):
        et.unravel_index((3, 4), (3.4, 3.2))
    with pytest.raises(TypeError, match="dims must be a vector"):
        et.unravel_index((3, 4), 3)
    with pytest.raises(ValueError, match="out of bounds"):
        eg.function([], list(et.unravel_index(np.int64(12), (3, 4))))()


def test_broadcast_arrays_matches_numpy():
    x, y = et.dvector("x"), et.dmatrix("y")
    a, b = np.arange(3.0), np.arange(6.0).reshape(2, 3) * 0.5
    for got, want in zip(eg.function([x, y], list(et.broadcast_arrays(x, y)))(a, b), np.broadcast_arrays(a, b)):
        np.testing.assert_array_equal(got, want)


def test_scalar_from_tensor_is_the_0d_tensor_and_refuses_others():
    x = et.scalar("x", dtype="bool")
    assert et.scalar_from_tensor(x) is x and et.tensor_from_scalar(x) is x
    assert eg.function([x], et.scalar_from_tensor(x))(np.array(True)).item() is True
    with pytest.raises(TypeError, match="must be a 0-d tensor"):
        et.scalar_from_tensor(et.dvector("v"))
    with pytest.raises(TypeError, match="must be a scalar"):
        et.tensor_from_scalar(et.dvector("v"))
