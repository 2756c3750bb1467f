"""config.cast_policy = "numpy+floatX" for elementwise ops, from PyTensor's documented behaviour
(configdefaults.py's cast_policy, scalar/basic.py's upcast and NumpyAutocaster): where PyTensor's
upcast gives the output dtype, a float NumPy would make float64 from no float64 input stays floatX,
a Python float being floatX; the float functions (upgrade_to_float) keep float64 for int32; under
"custom" NumPy's dtype stands. Values are computed in the dtype the graph states."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et

I32, I64, F32, F64, F16 = "int32", "int64", "float32", "float64", "float16"


def _vector(dtype):
    return et.vector(dtype, dtype=dtype)


#: (what, the graph of vectors of the dtypes named, floatX, the dtype under "numpy+floatX")
CASES = [
    ("int32 + float32", lambda: _vector(I32) + _vector(F32), F32, F32),
    ("int64 * float32", lambda: _vector(I64) * _vector(F32), F32, F32),
    ("int64 * 2.5", lambda: _vector(I64) * 2.5, F32, F32),              # a Python float is floatX
    ("int32 / float32", lambda: _vector(I32) / _vector(F32), F32, F32),
    ("int32 / int32", lambda: _vector(I32) / _vector(I32), F32, F32),   # true_div of integers: floatX
    ("maximum(int32, float32)", lambda: et.maximum(_vector(I32), _vector(F32)), F32, F32),
    ("int32 ** float32", lambda: _vector(I32) ** _vector(F32), F32, F32),
    ("switch's branches", lambda: et.switch(_vector(I32) > 0, _vector(I32), _vector(F32)), F32, F32),
    ("int32 + float16", lambda: _vector(I32) + _vector(F16), F32, F32),   # floatX, not float16
    ("int32 + float16 in float16", lambda: _vector(I32) + _vector(F16), F16, F16),
    ("float64 + int32", lambda: _vector(F64) + _vector(I32), F32, F64),   # an explicit float64 wins
    ("float32 + int32 in float16", lambda: _vector(F32) + _vector(I32), F16, F64),  # only floatX is kept
    ("exp(int32)", lambda: et.exp(_vector(I32)), F32, F64),              # upgrade_to_float: int32 -> float64
    ("arctan2(int32, float32)", lambda: et.arctan2(_vector(I32), _vector(F32)), F32, F64),
    ("int64 + 1", lambda: _vector(I64) + 1, F32, I64),                   # no float: NumPy's integer
    ("int64 // 2", lambda: _vector(I64) // 2, F32, I64),
    ("float64 * 2.5", lambda: _vector(F64) * 2.5, F32, F64),
]


@pytest.mark.parametrize(("what", "build", "floatx", "expected"), CASES, ids=[c[0] for c in CASES])
def test_numpy_floatx_keeps_floatx_where_pytensors_upcast_does(what, build, floatx, expected):
    with eg.config.change_flags(cast_policy="numpy+floatX", floatX=floatx):
        assert build().dtype == expected


@pytest.mark.parametrize(("what", "build"), [c[:2] for c in CASES[:4]], ids=[c[0] for c in CASES[:4]])
def test_custom_leaves_numpys_float64(what, build):
    with eg.config.change_flags(floatX="float32"):
        assert build().dtype == "float64"


def test_values_are_computed_in_floatx():
    # int64 + float32 in float32: each integer rounded to float32 first, then added in float32, as
    # PyTensor's C code converts it; NumPy's float64 sum would keep 2**24 + 1
    with eg.config.change_flags(cast_policy="numpy+floatX", floatX="float32"):
        i, f = _vector(I64), _vector(F32)
        fn = eg.function([i, f], [i + f, i * 2.5])
    iv, fv = np.array([2**24 + 1, 3], dtype=np.int64), np.array([0.0, 0.1], dtype=np.float32)
    total, scaled = fn(iv, fv)
    assert total.dtype == np.float32 and scaled.dtype == np.float32
    np.testing.assert_array_equal(total, iv.astype(np.float32) + fv)
    np.testing.assert_array_equal(scaled, iv.astype(np.float32) * np.float32(2.5))


def test_a_graph_built_under_one_policy_keeps_its_dtypes_under_the_other():
    with eg.config.change_flags(cast_policy="numpy+floatX", floatX="float32"):
        i, f = _vector(I32), _vector(F32)
        out = i + f
    fn = eg.function([i, f], out)
    assert fn(np.array([1], dtype=np.int32), np.array([0.5], dtype=np.float32)).dtype == np.float32
