"""PyTensor's names in extra_ops and basic that NumPy has no graph-time twin of, checked against NumPy."""

import numpy as np
import pytest

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
