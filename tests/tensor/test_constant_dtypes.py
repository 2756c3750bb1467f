"""The dtypes of constants made from Python values follow PyTensor's casting policy where
NumPy's would differ (an empty list is floatX, not float64; "floatX" names a dtype)."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et


@pytest.mark.parametrize("value", [(), [], [[]]])
@pytest.mark.parametrize("floatx", ["float32", "float64"])
def test_an_empty_list_or_tuple_is_floatx(value, floatx):
    with eg.config.change_flags(floatX=floatx):
        assert et.as_tensor_variable(value).dtype == floatx
        assert et.constant(value).dtype == floatx


def test_an_explicit_dtype_wins_over_the_value_s():
    assert et.as_tensor_variable(np.array([1.0]), dtype="int64").dtype == "int64"
    assert et.as_tensor_variable(np.array([1], dtype="int32"), dtype="int64").dtype == "int64"
    assert et.as_tensor_variable([], dtype="int8").dtype == "int8"


@pytest.mark.parametrize("floatx", ["float32", "float64"])
def test_floatx_names_the_configured_dtype(floatx):
    with eg.config.change_flags(floatX=floatx):
        assert et.as_tensor_variable(0.0, dtype="floatX").dtype == floatx
        assert et.constant(0, dtype="floatX").dtype == floatx
        assert et.as_tensor_variable(et.lscalar("i"), dtype="floatX").dtype == floatx
