"""PyTensor's everyday vocabulary beyond NumPy's names: fill_diagonal(_offset), bincount,
inc_subtensor(ignore_duplicates=True), linspace/logspace/geomspace, the plural constructors.
Values, dtypes and shapes against NumPy (or PyTensor's stated rule), gradients against finite
differences, and clear errors."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.testing import verify_grad

RNG = np.random.default_rng(0)


def _fill_offset_reference(a, val, offset):
    a = a.copy()
    for i in range(a.shape[0]):
        if 0 <= i + offset < a.shape[1]:
            a[i, i + offset] = val
    return a


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (1, 3), (0, 2)])
def test_fill_diagonal_matches_numpy(shape):
    a, v = et.dmatrix("a"), et.dscalar("v")
    f = eg.function([a, v], et.fill_diagonal(a, v))
    value = RNG.random(shape)
    expected = value.copy()
    np.fill_diagonal(expected, 7.0)
    got = f(value, 7.0)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    assert not np.shares_memory(got, value)


def test_fill_diagonal_of_a_cube_and_its_static_shape():
    t = et.TensorType("int32", (3, 3, 3))("t")
    out = et.fill_diagonal(t, 5)
    assert out.type == t.type
    value = RNG.integers(0, 9, (3, 3, 3)).astype("int32")
    expected = value.copy()
    np.fill_diagonal(expected, 5)
    np.testing.assert_array_equal(eg.function([t], out)(value), expected)


def test_fill_diagonal_of_unequal_sizes_known_only_at_run_time_is_an_error():
    t = et.dtensor3("t")
    with pytest.raises(IndexError):
        eg.function([t], et.fill_diagonal(t, 1.0))(np.zeros((3, 2, 3)))


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4)])
def test_fill_diagonal_offset_matches_pytensors_rule(shape):
    a, v, k = et.dmatrix("a"), et.dscalar("v"), et.iscalar("k")
    f = eg.function([a, v, k], et.fill_diagonal_offset(a, v, k))
    value = RNG.random(shape)
    for offset in range(-6, 7):
        np.testing.assert_array_equal(f(value, -2.0, offset), _fill_offset_reference(value, -2.0, offset))


@pytest.mark.parametrize("build", [
    lambda a, v: et.fill_diagonal(a, v),
    lambda a, v: et.fill_diagonal_offset(a, v, 1),
    lambda a, v: et.fill_diagonal_offset(a, v, -2),
])
@pytest.mark.parametrize("shape", [(3, 4), (4, 3)])
def test_fill_diagonal_gradients(build, shape):
    verify_grad(build, [RNG.random(shape), np.array(0.3)], n_tests=1, rng=np.random.default_rng(1))


@pytest.mark.parametrize("minlength", [None, 2, 9])
def test_bincount_matches_numpy(minlength):
    x, w = et.lvector("x"), et.dvector("w")
    f = eg.function([x, w], [et.bincount(x, minlength=minlength), et.bincount(x, w, minlength=minlength)])
    for values in (np.array([0, 3, 3, 1, 5]), np.array([], dtype="int64")):
        weights = RNG.random(len(values))
        counts, sums = f(values, weights)
        np.testing.assert_array_equal(counts, np.bincount(values, minlength=minlength or 0))
        np.testing.assert_allclose(sums, np.bincount(values, weights, minlength=minlength or 0))
        assert counts.dtype == "int64" and sums.dtype == "float64"


def test_bincount_counts_in_the_dtype_of_x_as_pytensor_does():
    x = et.TensorType("int8", (None,))("x")
    got = eg.function([x], et.bincount(x))(np.array([1, 1, 4], dtype="int8"))
    assert got.dtype == "int8"
    np.testing.assert_array_equal(got, [0, 2, 0, 0, 1])


def test_bincount_of_a_negative_value_is_an_error_not_a_count_at_the_end():
    x = et.lvector("x")
    with pytest.raises(IndexError):
        eg.function([x], et.bincount(x, minlength=5))(np.array([1, -1]))


def test_bincount_assert_nonneg_refuses_a_negative_value_with_assertion_error():
    x = et.lvector("x")
    f = eg.function([x], et.bincount(x, assert_nonneg=True))
    np.testing.assert_array_equal(f(np.array([1, 3, 1])), np.bincount([1, 3, 1]))
    with pytest.raises(AssertionError, match="negative element, and assert_nonneg=True"):
        f(np.array([1, -1]))


def test_bincount_gradient_reaches_the_weights():
    verify_grad(lambda w: et.bincount(et.constant(np.array([2, 0, 2])), w), [RNG.random(3)], n_tests=1,
                rng=np.random.default_rng(1))


def test_inc_subtensor_ignoring_duplicates_is_numpys_plus_equals():
    a, i, y = et.dmatrix("a"), et.lvector("i"), et.dvector("y")
    f = eg.function([a, i, y], [et.inc_subtensor(a[i], y, ignore_duplicates=True), et.inc_subtensor(a[i], y)])
    value, index, inc = RNG.random((3, 2)), np.array([0, 2, 0]), RNG.random(2)
    once, accumulated = f(value, index, inc)
    expected = value.copy()
    expected[index] += inc
    np.testing.assert_allclose(once, expected)
    expected = value.copy()
    np.add.at(expected, index, inc)
    np.testing.assert_allclose(accumulated, expected)


def test_inc_subtensor_ignoring_duplicates_refuses_a_lossy_cast():
    a, y = et.fmatrix("a"), et.dscalar("y")
    with pytest.raises(TypeError, match="losing precision"):
        et.inc_subtensor(a[et.lvector("i")], y, ignore_duplicates=True)


def test_inc_subtensor_ignoring_duplicates_with_two_arrays_around_a_slice():
    a, i, j, y = et.dtensor3("a"), et.lvector("i"), et.lmatrix("j"), et.dmatrix("y")
    f = eg.function([a, i, j, y], et.inc_subtensor(a[i, 1:, j], y, ignore_duplicates=True))
    value, rows, cols, inc = RNG.random((3, 3, 4)), np.array([0, 2, 0]), np.array([[1], [-3], [1]]), RNG.random((3, 2))
    expected = value.copy()
    expected[rows, 1:, cols] += inc
    np.testing.assert_allclose(f(value, rows, cols, inc), expected)
    empty = eg.function([a, i], et.inc_subtensor(a[i], 1.0, ignore_duplicates=True))
    np.testing.assert_array_equal(empty(value, np.array([], dtype="int64")), value)


@pytest.mark.parametrize("index", [[0, 2], [0, 2, 0], [-1, 2, 0, 0]])
@pytest.mark.parametrize("build", [
    lambda index: lambda a, y: et.inc_subtensor(a[np.array(index)], y[0], ignore_duplicates=True),
    lambda index: lambda a, y: et.inc_subtensor(a[np.array(index)], y, ignore_duplicates=True),
    lambda index: lambda a, y: et.inc_subtensor(a.T[:, np.array(index)], y.T, ignore_duplicates=True),
])
def test_inc_subtensor_ignoring_duplicates_gradient(index, build):
    # only the writes that land get a gradient: y's repeated rows but the last get none
    verify_grad(build(index), [RNG.random((3, 2)), RNG.random((len(index), 2))], n_tests=1,
                rng=np.random.default_rng(1))


@pytest.mark.parametrize("build, error, match", [
    (lambda: et.fill_diagonal(et.dvector("a"), 1.0), TypeError, "at least two dimensions"),
    (lambda: et.fill_diagonal(et.dmatrix("a"), et.dvector("v")), TypeError, "val must be a scalar"),
    (lambda: et.fill_diagonal(et.fmatrix("a"), et.dscalar("v")), TypeError, "does not fit"),
    (lambda: et.fill_diagonal(et.TensorType("float64", (2, 3, 2))("a"), 1.0), ValueError, "one length"),
    (lambda: et.fill_diagonal_offset(et.dtensor3("a"), 1.0, 0), TypeError, "must be a matrix"),
    (lambda: et.fill_diagonal_offset(et.dmatrix("a"), 1.0, 0.5), TypeError, "offset must be an integer"),
    (lambda: et.bincount(et.lmatrix("x")), TypeError, "x must be a vector"),
    (lambda: et.bincount(et.dvector("x")), TypeError, "integers"),
    (lambda: et.bincount(et.lvector("x"), et.dmatrix("w")), TypeError, "weights must be a vector"),
])
def test_clear_errors(build, error, match):
    with pytest.raises(error, match=match):
        build()


SPACES = {"linspace": (et.linspace, np.linspace), "logspace": (et.logspace, np.logspace),
          "geomspace": (et.geomspace, np.geomspace)}


@pytest.mark.parametrize("name", list(SPACES))
@pytest.mark.parametrize("endpoint", [True, False])
@pytest.mark.parametrize("num", [0, 1, 2, 7])
def test_spaces_of_scalars_match_numpy(name, endpoint, num):
    ours, numpy_ = SPACES[name]
    out = ours(1.5, 40.0, num, endpoint=endpoint)
    expected = numpy_(1.5, 40.0, num, endpoint=endpoint)
    got = eg.function([], out)()
    assert out.type.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    if endpoint and num > 1:
        assert got[-1] == expected[-1]  # exactly the endpoint


@pytest.mark.parametrize("name", list(SPACES))
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_spaces_of_arrays_with_a_symbolic_num_match_numpy(name, axis):
    ours, numpy_ = SPACES[name]
    start, stop, num = et.dvector("start"), et.dmatrix("stop"), et.iscalar("num")
    f = eg.function([start, stop, num], ours(start, stop, num, axis=axis))
    begin, end = np.array([1.0, -2.0, 5.0]), np.array([[4.0, -8.0, 0.5], [2.0, -1.0, 3.0]])
    for n in (0, 1, 5):
        got, expected = f(begin, end, n), numpy_(begin, end, n, axis=axis)
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_linspace_retstep_and_dtype():
    a = et.dscalar("a")
    samples, step = et.linspace(a, 10.0, 5, retstep=True, dtype="float32")
    got, got_step = eg.function([a], [samples, step])(2.0)
    expected, expected_step = np.linspace(2.0, 10.0, 5, retstep=True, dtype="float32")
    assert got.dtype == "float32"
    np.testing.assert_allclose(got, expected)
    assert got_step == expected_step
    # fewer than two samples have no step (NumPy's NaN)
    assert np.isnan(eg.function([a], et.linspace(a, 1.0, 1, retstep=True)[1])(0.0))


def test_logspace_with_an_array_base():
    base = et.dvector("base")
    f = eg.function([base], et.logspace(np.zeros((2, 1)), [1.0, 2.0, 3.0], 4, base=base, axis=-1))
    bases = np.array([2.0, 3.0, 4.0])
    np.testing.assert_allclose(f(bases), np.logspace(np.zeros((2, 1)), [1.0, 2.0, 3.0], 4, base=bases, axis=-1))


def test_linspace_to_an_integer_dtype_truncates_as_pytensors_cast():
    np.testing.assert_array_equal(eg.function([], et.linspace(0, 10, 4, dtype="int32"))(), [0, 3, 6, 10])


@pytest.mark.parametrize("build", [
    lambda a, b: et.linspace(a, b, 5),
    lambda a, b: et.linspace(a, b, 4, endpoint=False, axis=-1),
    lambda a, b: et.logspace(a, b, 4, base=3.0),
    lambda a, b: et.geomspace(a, b, 4, axis=-1),
])
def test_space_gradients(build):
    verify_grad(build, [np.array([1.0, -2.0]), np.array([3.0, -1.0])], n_tests=1, rng=np.random.default_rng(1))


@pytest.mark.parametrize("build, error, match", [
    (lambda: et.linspace(0.0, 1.0, 2.5), TypeError, "num must be an integer"),
    (lambda: et.logspace(0.0, 1.0, -1), ValueError, "non-negative"),
    (lambda: et.linspace(et.dvector("a"), 1.0, 3, axis=2), ValueError, "axis 2 is out of bounds"),
    (lambda: et.geomspace(0.0, 1.0, 3), ValueError, "cannot include zero"),
])
def test_space_errors(build, error, match):
    with pytest.raises(error, match=match):
        build()


def test_plural_constructors_as_pytensor_has_them():
    x, y = et.dvectors("x", "y")
    assert (x.name, y.name) == ("x", "y") and x.type == et.dvector and y.type == et.dvector
    a, b, c = et.imatrices(3)
    assert a.type == et.imatrix and a is not b and c.name is None
    assert et.fscalars("s").type == et.fscalar  # one name: the variable itself, as PyTensor's
    assert [v.name for v in et.ltensor3s("pq")] == ["p", "q"]
    assert [v.name for v in et.rows(["r", "s"])] == ["r", "s"] and et.cols(1)[0].type.shape == (None, 1)
    assert et.dtensor7s("t").type.shape == (None,) * 7
    with eg.config.change_flags(floatX="float32"):
        assert et.matrices("m").dtype == "float32"
    assert et.matrices("m").dtype == "float64"


@pytest.mark.parametrize("call", [lambda: et.dvectors(2, 3), lambda: et.dvectors(-1), lambda: et.dvectors("x", 2)])
def test_plural_constructors_refuse_mixed_arguments(call):
    with pytest.raises(TypeError, match="dvectors"):
        call()


def test_a_shape_given_as_one_symbolic_vector():
    x, v = et.dmatrix("x"), et.dscalar("v")
    s = et.specify_shape(et.lvector("s"), (2,))
    f = eg.function([x, v, s.owner.inputs[0]], [et.zeros(x.shape), et.ones(s), et.alloc(v, *s), et.full(x.shape, v),
                                                et.reshape(x, s), et.zeros(x.shape, dtype="int32")])
    value, sizes = RNG.random((2, 3)), np.array([3, 2])
    zeros, ones, alloc, full, reshaped, izeros = f(value, 4.0, sizes)
    np.testing.assert_array_equal(zeros, np.zeros((2, 3)))
    np.testing.assert_array_equal(ones, np.ones((3, 2)))
    np.testing.assert_array_equal(alloc, np.full((3, 2), 4.0))
    np.testing.assert_array_equal(full, np.full((2, 3), 4.0))
    np.testing.assert_array_equal(reshaped, value.reshape(3, 2))
    assert izeros.dtype == "int32"
    # a constant shape vector keeps the static shape
    assert et.ones(et.constant(np.array([2, 3]))).type.shape == (2, 3)
    assert et.zeros(et.TensorType("float64", (4, 5))("y").shape).type.shape == (4, 5)


def test_tile_with_reps_as_a_vector_of_known_length():
    x, r = et.dvector("x"), et.lvector("r")
    f = eg.function([x, r], et.tile(x, et.specify_shape(r, (2,))))
    np.testing.assert_array_equal(f(np.arange(2.0), np.array([2, 3])), np.tile(np.arange(2.0), (2, 3)))


@pytest.mark.parametrize("build, error, match", [
    (lambda: et.zeros(et.lvector("s")), ValueError, "not known when the graph is built"),
    (lambda: et.ones(et.dvector("s")), TypeError, "integer vector"),
    (lambda: et.tile(et.dvector("x"), et.lvector("r")), ValueError, "tile: reps"),
])
def test_shape_vector_errors(build, error, match):
    with pytest.raises(error, match=match):
        build()


def test_sort_and_argsort_along_a_symbolic_axis():
    t, axis = et.dtensor3("t"), et.lscalar("axis")
    f = eg.function([t, axis], [et.sort(t, axis), et.argsort(t, axis)])
    value = RNG.random((2, 3, 4))
    for a in (0, 1, 2, -1, -3):
        got, order = f(value, a)
        np.testing.assert_array_equal(got, np.sort(value, a))
        np.testing.assert_array_equal(order, np.argsort(value, a, kind="stable"))
        assert order.dtype == "int64"
    for a in (3, -4):
        with pytest.raises(ValueError, match="out of bounds"):
            f(value, a)


def test_sort_along_a_symbolic_axis_differentiates():
    axis = et.iscalar("axis")
    x = et.dmatrix("x")
    g = eg.grad((et.sort(x, axis) * np.arange(6.0).reshape(2, 3)).sum(), x)
    f = eg.function([x, axis], g)
    value = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]])
    for a in (0, 1):
        expected = np.zeros_like(value)
        np.put_along_axis(expected, np.argsort(value, a), np.arange(6.0).reshape(2, 3), a)
        np.testing.assert_array_equal(f(value, a), expected)
    with pytest.raises(ValueError, match="out of bounds"):
        f(value, 2)
    with pytest.raises(ValueError, match="Sort axis must have an integer dtype, got float64"):  # PyTensor's error
        et.sort(x, et.dscalar("a"))
