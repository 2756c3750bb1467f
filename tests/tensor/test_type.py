"""TensorType: Aesara's type relation, filter rules and value comparison."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.tensor import TensorType


def test_seed_002_narrowing():
    v1 = TensorType("float64", (2, None))()
    v2 = TensorType("float64", (2, 1))()
    assert repr(v1.type) == "TensorType(float64, (2, None))"
    assert v1.type.in_same_class(v2.type) is False
    assert v1.type.is_super(v2.type) is True
    assert v2.type.is_super(v1.type) is False
    assert v1.type.filter_variable(v2) is v2
    v3 = v2.type.filter_variable(v1)
    assert v3.type.shape == (2, 1) and v3.type == v2.type
    assert isinstance(v3.owner.op, et.SpecifyShape) and v3.owner.inputs[0] is v1


def test_filter_variable_rejects_incompatible_types():
    with pytest.raises(TypeError, match="incompatible"):
        TensorType("float64", (3,)).filter_variable(TensorType("float32", (3,))())
    with pytest.raises(TypeError, match="incompatible"):
        TensorType("float64", (3,)).filter_variable(TensorType("float64", (4,))())
    with pytest.raises(TypeError):
        TensorType("float64", (None,)).filter_variable(et.dmatrix())


def test_broadcastable_and_constructors():
    assert TensorType("float64", (1, None)).broadcastable == (True, False)
    assert TensorType("int8", broadcastable=(True, False)).shape == (1, None)
    assert et.dmatrix("x").type == et.dmatrix and et.dmatrix("x").name == "x"
    assert et.ivector().dtype == "int32" and et.bscalar().dtype == "int8" and et.wrow().type.shape == (1, None)
    assert et.zmatrix().dtype == "complex128" and et.fcol().type.shape == (None, 1)
    assert et.matrix("m", dtype="float32").type == et.fmatrix
    assert et.tensor("t", "float32", (None, 3)).type == TensorType("float32", (None, 3))
    assert et.tensor3().ndim == 3 and et.ltensor4().dtype == "int64"
    assert et.dmatrix.clone(shape=(2, 2)) == TensorType("float64", (2, 2))
    assert TensorType("float64", (2,)) == TensorType("float64", (2,)) and hash(TensorType("float64", (2,))) == hash(TensorType("float64", (2,)))


def test_filter_accepts_lossless_values():
    t = TensorType("float64", (None,))
    a = np.ones(3)
    assert t.filter(a) is a                                   # no copy when it already fits
    assert t.filter([1, 2, 3]).dtype == np.float64            # ints fit exactly
    assert t.filter(np.arange(3, dtype="int32")).dtype == np.float64
    assert TensorType("float32", ()).filter(1.5).dtype == np.float32   # Python floats are weak
    assert TensorType("int8", (None,)).filter([1, 2]).dtype == np.int8
    assert TensorType("float64", ()).filter(2.0).shape == ()


@pytest.mark.parametrize("ttype, value, message", [
    (TensorType("float64", (None,)), np.ones((2, 2)), "Wrong number of dimensions: expected 1 .vector., got 2"),
    (TensorType("float64", (2, None)), np.ones((3, 4)), r"static shape \(2, \?\)"),
    (TensorType("float32", (None,)), np.ones(3), "cannot store a value of dtype float64"),
    (TensorType("int32", (None,)), np.ones(3), "loss of precision"),
    (TensorType("int32", ()), 1.5, "loss of precision"),
    (TensorType("float64", (None,)), np.ones(3, dtype="complex128"), "complex128"),
    (TensorType("float64", (None,)), ["a", "b"], "cannot hold"),
])
def test_filter_errors_say_what_was_expected(ttype, value, message):
    with pytest.raises(TypeError, match=message):
        ttype.filter(value)


def test_filter_strict_and_downcast():
    t = TensorType("float32", (None,))
    with pytest.raises(TypeError, match="strict"):
        t.filter(np.ones(3), strict=True)
    assert t.filter(np.ones(3), allow_downcast=True).dtype == np.float32
    assert t.is_valid_value(np.ones(3, dtype="float32")) and not t.is_valid_value(np.ones(3))
    with pytest.raises(TypeError, match="symbolic"):
        t.filter(et.fvector())


def test_values_eq_and_approx():
    t = TensorType("float64", (None,))
    assert t.values_eq(np.array([1.0, np.nan]), np.array([1.0, np.nan]))
    assert not t.values_eq(np.ones(2), np.ones(3))
    assert t.values_eq_approx(np.ones(2), np.ones(2) + 1e-9)
    assert not t.values_eq_approx(np.ones(2), np.ones(2) + 1e-3)
    assert t.values_eq_approx(np.array([np.inf]), np.array([1.0]), allow_remove_inf=True)
    assert TensorType("float32", ()).values_eq_approx(np.float32(1), np.float32(1 + 5e-6))


def test_memory_helpers():
    t = TensorType("float64", (None, None))
    a = np.zeros((3, 4))
    assert t.may_share_memory(a, a[1:]) and not t.may_share_memory(a, a.copy())
    assert t.get_size(t.get_shape_info(a)) == 3 * 4 * 8


def test_constants_are_read_only_and_compare_by_value():
    c1, c2, c3 = et.constant([1.0, 2.0]), et.constant([1.0, 2.0]), et.constant([1.0, 3.0])
    assert c1.signature() == c2.signature() and c1.equals(c2) and not c1.equals(c3)
    assert c1 != c2  # still distinct graph nodes
    with pytest.raises(ValueError):
        c1.data[0] = 5.0
    with pytest.raises(ValueError, match="only once"):
        c1.data = np.zeros(2)
    assert c1.owner is None and str(et.constant(2.0)) == "TensorConstant{2.0}"


def test_dtype_promotion_follows_numpy():
    f32, i32, i8 = et.fvector(), et.ivector(), et.bvector()
    assert (f32 * 2.0).dtype == "float32"         # weak Python float
    assert (i32 * 2).dtype == "int32" and (i8 + 1).dtype == "int8"
    assert (i32 * 2.0).dtype == "float64"
    assert (i32 / i32).dtype == "float64" and (i8 / i8).dtype == "float64"
    assert (f32 + et.dvector()).dtype == "float64"
    assert (f32 + i32).dtype == "float64" and (i8 + et.wvector()).dtype == "int16"
    # except where a PyTensor name follows PyTensor (docs/conventions.md): float functions of
    # int8, uint8 and bool are float32, not NumPy's float16
    assert et.exp(i8).dtype == "float32" and et.exp(i32).dtype == "float64"
    assert (f32 > 1).dtype == "bool" and et.sum(i8).dtype == "int64" and et.mean(i32).dtype == "float64"
    assert (f32 * np.float64(2.0)).dtype == "float64"  # NumPy scalars are not weak
    with pytest.raises(TypeError, match="out of bounds"):
        i8 + 1000


def test_a_weak_constant_keeps_the_dtype_its_partner_gave_it():
    # the 2.0 of f32 ** 2 becomes a float32 weak constant; with another Python number it stays
    # float32 (pow's gradient computes 2.0 - 1, and grad(v[-1] ** 2, v) raised in IncSubtensor)
    two = (et.fscalar() ** 2).owner.inputs[1]
    assert two.dtype == "float32" and (two - 1).dtype == "float32" and (two * 1.5).dtype == "float32"
    assert (et.constant(2.0) - 1).dtype == "float64" and (et.constant(2) - 1).dtype == "int64"
    assert (two + 1j).dtype == "complex64"  # a higher kind: NumPy's rule for a float32 and a Python complex
    v = et.fvector("v")
    assert eg.grad(v[-1] ** 2, v).dtype == "float32"
