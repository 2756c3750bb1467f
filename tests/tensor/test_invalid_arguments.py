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
