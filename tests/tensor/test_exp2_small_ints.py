"""exp2 of a byte-sized integer computes in float32, as exp, log and sqrt do (PyTensor's
upgrade_to_float); NumPy's exp2 would take float16, and a float64 result would not overflow
where PyTensor's float32 does."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et


@pytest.mark.parametrize("dtype, expected", [("bool", "float32"), ("int8", "float32"), ("uint8", "float32"),
                                             ("int16", "float32"), ("int32", "float64"), ("int64", "float64")])
def test_exp2_of_an_integer_has_exps_dtype(dtype, expected):
    x = et.vector("x", dtype=dtype)
    assert et.exp2(x).dtype == et.exp(x).dtype == expected


def test_exp2_of_uint8_overflows_as_float32():
    x = et.vector("x", dtype="uint8")
    values = np.array([0, 3, 127, 255], dtype="uint8")
    got = eg.function([x], et.exp2(x))(values)
    assert got.dtype == np.float32
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, np.exp2(values.astype("float32")))
