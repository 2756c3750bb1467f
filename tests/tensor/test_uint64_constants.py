"""Constants whose values do not fit a signed 64-bit integer (uint64 above 2**63 - 1) compile
and keep their values."""

import numpy as np

import eqgraph as eg
import eqgraph.tensor as et


def test_argmin_argmax_of_a_uint64_constant_vector_at_the_dtype_limits():
    top = np.iinfo("uint64").max
    data = np.array([3, 0, top - 5, top], "uint64")
    n = et.as_tensor_variable(data)
    low, high, same = eg.function([], [et.argmin(n), et.argmax(n), n])()
    assert (low, high) == (1, 3)
    assert same.dtype == np.uint64
    np.testing.assert_array_equal(same, data)
