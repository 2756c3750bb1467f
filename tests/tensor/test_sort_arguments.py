"""sort and argsort refuse bad arguments with PyTensor's errors (its type and the words its
users' code and tests match on), each naming what was given."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et


@pytest.mark.parametrize("func", [et.sort, et.argsort])
def test_kind_stable_and_order_are_refused_in_pytensor_words(func):
    x = et.dmatrix("x")
    with pytest.raises(ValueError, match="kind must be one of .*'hanoi'"):
        func(x, kind="hanoi")
    with pytest.raises(ValueError, match="kind and stable cannot be set at the same time.*'quicksort'"):
        func(x, kind="quicksort", stable=True)
    with pytest.raises(ValueError, match="order argument is not applicable"):
        func(x, order=[])
    assert func(x, kind="stable", stable=True).owner is not None  # the same request twice is no contradiction


@pytest.mark.parametrize("func", [et.sort, et.argsort])
def test_symbolic_axis_of_a_float_dtype_is_refused(func):
    with pytest.raises(ValueError, match="Sort axis must have an integer dtype, got float32"):
        func(et.dmatrix("x"), et.fscalar("axis"))


@pytest.mark.parametrize("axis", [None, 0, -1])
def test_take_along_axis_matches_numpy_including_the_flattened_axis(axis):
    arr = np.arange(6.0).reshape(3, 2) * 1.5
    indices = {None: np.array([5, 0, 3]), 0: np.array([[1, 0], [2, 2]]), -1: np.array([[1], [0], [1]])}[axis]
    x = et.dmatrix("x")
    i = et.tensor("i", dtype="int64", shape=(None,) * indices.ndim)
    got = eg.function([x, i], et.take_along_axis(x, i, axis))(arr, indices)
    np.testing.assert_array_equal(got, np.take_along_axis(arr, indices, axis=axis))


def test_take_along_axis_defaults_to_axis_0_and_refuses_bad_indices():
    x, i = et.dmatrix("x"), et.lmatrix("i")
    arr, indices = np.arange(6.0).reshape(3, 2), np.array([[2, 0]])
    np.testing.assert_array_equal(eg.function([x, i], et.take_along_axis(x, i))(arr, indices),
                                  np.take_along_axis(arr, indices, axis=0))
    with pytest.raises(ValueError, match="must have .* 2 dimensions, not 3"):
        et.take_along_axis(x, et.ltensor3("i"))
    with pytest.raises(IndexError, match="must be integers, not float64"):
        et.take_along_axis(x, et.dmatrix("f"))
