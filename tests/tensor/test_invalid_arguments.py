"""Arguments that NumPy and PyTensor refuse are refused when the graph is built, with an
error naming the argument, rather than typed into a graph that computes something else."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et


@pytest.mark.parametrize("a_ndim, b_ndim, axes, error, match", [
    (2, 2, ((0, 1, 2), (0, 1, 2)), ValueError, r"axis 2 of a is out of range for a 2-d a"),
    (2, 1, (0, 1), ValueError, r"axis 1 of b is out of range for a 1-d b"),
    (2, 1, 2, ValueError, r"axis 1 of b is out of range for a 1-d b"),
    (2, 2, 3, ValueError, r"axis -3 of a is out of range for a 2-d a"),
    (2, 2, (0, 1, 2), ValueError, r"axes must be an int or a pair \(axes of a, axes of b\)"),
    (2, 2, ((0, 1), 0), ValueError, r"pair 2 axes of a with 1 of b"),
    (2, 2, ((0, -2), (0, 1)), ValueError, r"axis -2 of a is listed twice"),
    (2, 2, ((0,), (1.5,)), TypeError, r"axes of b must be integers, not float 1.5"),
])
def test_tensordot_refuses_axes_numpy_refuses(a_ndim, b_ndim, axes, error, match):
    a, b = et.TensorType("float64", (None,) * a_ndim)("a"), et.TensorType("float64", (None,) * b_ndim)("b")
    with pytest.raises(error, match=match):
        et.tensordot(a, b, axes)
    with pytest.raises((ValueError, TypeError, IndexError)):  # the reference refuses them too
        np.tensordot(np.ones((2,) * a_ndim), np.ones((2,) * b_ndim), axes)


# a negative int sums no axes in NumPy (range(-axes, 0) is empty): the outer product
@pytest.mark.parametrize("axes", [((-1,), (0,)), ((0, -1), (-2, 1)), (-1, -2), 0, 2, ([1], [0]), -1])
def test_tensordot_accepts_negative_axes_in_range(axes):
    a, b = et.dmatrix("a"), et.dmatrix("b")
    av, bv = np.arange(6.0).reshape(2, 3), np.arange(9.0).reshape(3, 3) - 4
    if axes in (((0, -1), (-2, 1)), 2):
        bv = np.arange(6.0).reshape(2, 3) - 4
    f = eg.function([a, b], et.tensordot(a, b, axes))
    np.testing.assert_allclose(f(av, bv), np.tensordot(av, bv, axes))


@pytest.mark.parametrize("value", [
    et.constant(3, ndim=1),                        # a length-1 vector
    et.constant(np.full((2, 2), 5.0)),             # every entry equal, but a matrix
    np.array([3]),
    et.dvector("v")[None],
])
def test_get_scalar_constant_value_refuses_what_is_not_0_d(value):
    with pytest.raises(et.NotScalarConstantError, match="ndim"):
        et.get_scalar_constant_value(value)


@pytest.mark.parametrize("value, expected", [
    (et.constant(3), 3),
    (np.array(2.5), 2.5),
    (7, 7),
    (et.constant(3, ndim=1).dimshuffle(), 3),          # a 0-d view of a length-1 constant
    (et.constant(np.full((1, 1), 4.0)).dimshuffle(), 4.0),
    (et.cast(et.constant(2.0), "int64"), 2),
])
def test_get_scalar_constant_value_of_0_d_values(value, expected):
    assert et.get_scalar_constant_value(value) == expected


def test_get_scalar_constant_value_refuses_a_0_d_variable_that_is_not_constant():
    with pytest.raises(et.NotScalarConstantError):
        et.get_scalar_constant_value(et.dscalar("s") + 1)


@pytest.mark.parametrize("sort", [et.sort, et.argsort])
def test_sort_along_a_float_axis_is_a_clear_error(sort):
    # a symbolic integer axis works (tests/tensor/test_vocab.py); a float one is refused
    x = et.dmatrix("x")
    with pytest.raises(TypeError, match="sort: axis must be an int, a 0-d integer variable or None, not float 1.5"):
        sort(x, 1.5)
    a = np.array([[3.0, 1.0], [0.0, 2.0]])
    by_constant = eg.function([x], sort(x, et.constant(0)))(a)
    np.testing.assert_array_equal(by_constant, (np.sort if sort is et.sort else np.argsort)(a, 0))
