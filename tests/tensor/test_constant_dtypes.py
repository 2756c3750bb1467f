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
        # a variable keeps its own dtype, as in PyTensor: dtype= applies to values
        assert et.as_tensor_variable(et.lscalar("i"), dtype="floatX").dtype == "int64"


@pytest.mark.parametrize("build, dtype", [
    (lambda: et.arange(et.fscalar("s")), "float32"),            # the Python 0 and 1 do not widen it
    (lambda: et.arange(1, et.fscalar("s"), 0.5), "float32"),
    (lambda: et.arange(et.dscalar("s")), "float64"),
    (lambda: et.arange(et.bscalar("n")), "int64"),              # integers are not byte-sized
    (lambda: et.arange(et.iscalar("n")), "int64"),
    (lambda: et.arange(5), "int64"),
    (lambda: et.arange(et.fscalar("a"), et.dscalar("b")), "float64"),
])
def test_arange_dtype_is_that_of_its_bounds(build, dtype):
    r = build()
    assert r.dtype == dtype
    if r.owner.inputs[1].name == "s":
        assert eg.function([r.owner.inputs[1]], r)(np.float32(3)).dtype == dtype


@pytest.mark.parametrize("name", ["exp", "log1p", "sqrt", "sin", "tanh"])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "bool"])
def test_float_functions_of_byte_sized_integers_are_float32_as_in_pytensor(name, dtype):
    # NumPy computes them in float16 (exp(5) = 148.4); PyTensor upgrades such inputs to float32
    op = getattr(et, name)
    x = et.TensorType(dtype, (None,))("x")
    y = op(x)
    assert y.dtype == "float32"
    value = np.array([0, 1, 5], dtype=dtype)
    as_float = value.astype("float32")
    expected = getattr(np, name)(as_float)
    got = eg.function([x], y)(value)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_float16_inputs_stay_float16():
    h = et.TensorType("float16", (None,))("h")
    assert et.exp(h).dtype == "float16"
    assert et.exp(et.TensorType("int16", (None,))("i")).dtype == "float32"   # NumPy's, and PyTensor's
