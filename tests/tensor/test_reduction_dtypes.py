"""Reductions' dtypes as PyTensor defines them (``Sum``/``Prod``/``CAReduce`` and ``mean``):
the accumulator dtype, the output dtype, ``dtype=``/``acc_dtype=`` and the arguments refused."""

import numpy as np
import pytest

import eqgraph
import eqgraph.tensor as et

# a complex accumulator cast to a real output dtype drops the imaginary part, as PyTensor's does
pytestmark = pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")


def test_float32_mean_accumulates_in_float64_when_asked():
    # a float32 accumulator loses the 1 between 1e8 and -1e8 and gives 0
    v = np.asarray([1e8, 1, -1e8], dtype="float32")
    x = et.vector("x", dtype="float32")
    f = eqgraph.function([x], [x.mean(acc_dtype="float64"), x.sum(acc_dtype="float64")])
    mean, total = f(v)
    assert mean.dtype == np.float32 and total.dtype == np.float32
    np.testing.assert_allclose(mean, np.float32(1 / 3), rtol=1e-6)
    assert total == 1.0


def test_float32_mean_accumulates_in_float64_by_default_as_pytensor():
    v = np.asarray([1e8, 1, -1e8], dtype="float32")
    x = et.vector("x", dtype="float32")
    for kwargs in ({}, {"rulesets": [], "fusion": False}):
        mean, total, prod = eqgraph.function([x], [x.mean(), x.sum(), x.prod()], **kwargs)(v)
        np.testing.assert_allclose(mean, np.float32(1 / 3), rtol=1e-6)
        assert total == 1.0 and mean.dtype == total.dtype == np.float32
        assert prod == np.float32(-1e16) and prod.dtype == np.float32


def test_an_accumulator_as_narrow_as_the_input_is_kept():
    # acc_dtype="float32" asks for float32 additions: the 1 between 1e8 and -1e8 is lost
    v = np.asarray([1e8, 1, -1e8], dtype="float32")
    x = et.vector("x", dtype="float32")
    mean, total = eqgraph.function([x], [x.mean(acc_dtype="float32"), x.sum(acc_dtype="float32")])(v)
    assert mean == 0.0 and total == 0.0


def test_the_accumulator_is_a_prop_of_the_sum_not_a_cast():
    x = et.vector("x", dtype="float32")
    node = x.sum().owner
    assert isinstance(node.op, et.Reduce) and node.inputs[0] is x and node.op.acc_dtype == ""
    assert x.sum(acc_dtype="float32").owner.op.acc_dtype == "float32"
    assert x.sum(acc_dtype="float64").owner.op == node.op      # the default, spelled out


# -- the documented rules, written out independently of eqgraph's tables --------------------
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128")
# (dtype, acc_dtype) arguments: none, an output dtype (narrower, wider, discrete, float16), an
# accumulator (wide float, wide int, complex)
ARGUMENTS = [(None, None), ("float32", None), ("float64", None), ("int8", None), ("int32", None),
             ("float16", None), (None, "float64"), (None, "int64"), (None, "complex128"),
             ("float32", "float64"), (None, "float32"), (None, "uint64")]


def _discrete(dtype):
    return np.dtype(dtype).kind in "biu"


def expected_dtypes(idtype, dtype, acc_dtype):
    """(accumulator, output) of a sum or product, or None where PyTensor refuses acc_dtype."""
    kind, size = np.dtype(idtype).kind, np.dtype(idtype).itemsize
    if acc_dtype is None:
        if kind in "bi" and size < 8:
            acc = "int64"
        elif kind == "u" and size < 8:
            acc = "uint64"
        else:
            acc = {"float16": "float32", "float32": "float64", "complex64": "complex128"}.get(idtype, idtype)
    elif _discrete(idtype) and not _discrete(acc_dtype):
        acc = acc_dtype  # a float or complex accumulator is fine for any discrete input
    elif np.can_cast(idtype, acc_dtype, "safe"):
        acc = acc_dtype
    else:
        return None
    if dtype is not None:
        return acc, dtype
    default = {"b": "int64", "i": "int64", "u": "uint64"}.get(kind, idtype)
    return acc, default


def expected_mean_dtypes(idtype, dtype, acc_dtype):
    """(accumulator, sum's dtype, mean's dtype), or None where refused."""
    sum_dtype = dtype if dtype is not None else ("float32" if idtype == "float16" else None)
    found = expected_dtypes(idtype, sum_dtype, acc_dtype)
    if found is None:
        return None
    acc, total = found
    if total in ("float16", "float32", "complex64"):
        out = total
    else:
        out = "float64" if _discrete(total) else total
    if dtype == "float16" or (dtype is None and idtype == "float16"):
        out = "float16"
    return acc, total, out


def _values(idtype, shape=(2, 3)):
    v = np.arange(1, 1 + int(np.prod(shape))).reshape(shape) % 4  # 0..3: no integer overflows
    return (v % 2).astype(bool) if idtype == "bool" else v.astype(idtype)


def expected_value(op, v, axis, dtype, acc_dtype):
    """NumPy in the accumulator dtype, cast to the output dtype (PyTensor's perform)."""
    if op == "mean":
        acc, total, out = expected_mean_dtypes(v.dtype.name, dtype, acc_dtype)
        s = np.sum(v.astype(acc), axis=axis, dtype=acc).astype(total)
        n = v.size if axis is None else v.shape[axis]
        return (s / np.asarray(n, "float32" if total in ("float16", "float32", "complex64") else "float64")).astype(out)
    acc, out = expected_dtypes(v.dtype.name, dtype, acc_dtype)
    return getattr(np, op)(v.astype(acc), axis=axis, dtype=acc).astype(out)


def _build(op, x, axis, dtype, acc_dtype):
    return getattr(et, op)(x, axis=axis, dtype=dtype, acc_dtype=acc_dtype)


def _refused(op, idtype, dtype, acc_dtype):
    rule = expected_mean_dtypes if op == "mean" else expected_dtypes
    return rule(idtype, dtype, acc_dtype) is None


@pytest.mark.parametrize("idtype", DTYPES)
def test_the_dtype_table(idtype):
    x = et.matrix("x", dtype=idtype)
    for op in ("sum", "prod", "mean"):
        for dtype, acc_dtype in ARGUMENTS:
            if _refused(op, idtype, dtype, acc_dtype):
                with pytest.raises(TypeError, match="acc_dtype"):
                    _build(op, x, None, dtype, acc_dtype)
                continue
            got = _build(op, x, None, dtype, acc_dtype).dtype
            want = (expected_mean_dtypes(idtype, dtype, acc_dtype)[2] if op == "mean"
                    else expected_dtypes(idtype, dtype, acc_dtype)[1])
            assert got == want, (op, idtype, dtype, acc_dtype)
            # the method is the function
            assert getattr(x, op)(dtype=dtype, acc_dtype=acc_dtype).dtype == want


def _cases(idtype):
    return [(op, axis, dtype, acc_dtype) for op in ("sum", "prod", "mean") for axis in (None, 0)
            for dtype, acc_dtype in ARGUMENTS if not _refused(op, idtype, dtype, acc_dtype)]


def _check_values(f, v, cases):
    got = f(v)
    for out, (op, axis, dtype, acc_dtype) in zip(got, cases):
        want = expected_value(op, v, axis, dtype, acc_dtype)
        assert out.dtype == want.dtype, (op, axis, dtype, acc_dtype)
        rtol = 1e-3 if want.dtype == np.float16 else 1e-6
        np.testing.assert_allclose(out, want, rtol=rtol, err_msg=str((op, axis, dtype, acc_dtype)))


@pytest.mark.parametrize("idtype", DTYPES)
def test_values_against_numpy_in_the_accumulator_dtype(idtype):
    x = et.matrix("x", dtype=idtype)
    cases = _cases(idtype)
    outs = [_build(op, x, axis, dtype, acc_dtype) for op, axis, dtype, acc_dtype in cases]
    _check_values(eqgraph.function([x], outs), _values(idtype), cases)


@pytest.mark.parametrize("idtype", ["int8", "float32", "float64"])
def test_every_path_agrees(idtype):
    """Without rewrites and fusion, with them (fused reductions, then Numba once compiled), and Dask."""
    x = et.matrix("x", dtype=idtype)
    cases = _cases(idtype)
    outs = [_build(op, x, axis, dtype, acc_dtype) for op, axis, dtype, acc_dtype in cases]
    v = _values(idtype, (5, 7))
    plain = eqgraph.function([x], outs, rulesets=[], fusion=False)
    fused = eqgraph.function([x], outs)
    for k in range(4):
        if k == 2:
            fused.wait_compiled()
        _check_values(fused, v, cases)
    _check_values(plain, v, cases)
    pytest.importorskip("dask")
    # array_api_compat's Dask namespace has no float16 (a Cast to it fails on Dask by itself)
    keep = [i for i, o in enumerate(outs) if o.dtype != "float16"]
    dask = eqgraph.function([x], [outs[i] for i in keep], backend="dask", chunks=3)
    _check_values(dask, v, [cases[i] for i in keep])


def test_narrowing_accumulators_are_refused_with_the_dtypes_named():
    with pytest.raises(TypeError, match=r"float64 input: acc_dtype='float32' would lose precision.*float64"):
        et.sum(et.dvector(), acc_dtype="float32")
    with pytest.raises(TypeError, match="int64 input: acc_dtype='int32'"):
        et.prod(et.lvector(), acc_dtype="int32")
    with pytest.raises(TypeError, match="complex64 input: acc_dtype='float64'"):
        et.mean(et.vector(dtype="complex64"), acc_dtype="float64")
    with pytest.raises(TypeError, match="dtype='int'.*not a tensor dtype|dtype='float128'"):
        et.sum(et.dvector(), dtype="float128")
    with pytest.raises(TypeError, match="acc_dtype='banana' is not a tensor dtype"):
        et.sum(et.dvector(), acc_dtype="banana")


def test_a_narrow_integer_accumulator_wraps_like_pytensors():
    x = et.vector("x", dtype="int8")
    f = eqgraph.function([x], [et.sum(x, dtype="int8"), et.sum(x, acc_dtype="int16"), et.mean(x, dtype="int8")])
    v = np.full(3, 100, dtype="int8")
    total, wide, mean = f(v)
    assert total == np.int8(44) and total.dtype == np.int8          # 300 wraps to 44 in int8
    assert wide == 300 and wide.dtype == np.int64
    assert mean == 44 / 3 and mean.dtype == np.float64              # the int8 sum, then divided


def test_float32_gradients_stay_float32():
    x = et.vector("x", dtype="float32")
    for cost in (x.sum(), x.mean(), x.prod(), et.sum(x * x, dtype="float64")):
        g = eqgraph.grad(cost, x)
        assert g.dtype == "float32"
        v = np.asarray([1.0, 2.0, 3.0], "float32")
        assert eqgraph.function([x], g)(v).dtype == np.float32


@pytest.mark.parametrize("axis", [None, 0, 1, 2, (0, 2), (1, 2), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_max_and_argmax(axis, keepdims):
    v = np.random.default_rng(0).permutation(24).reshape(2, 3, 4).astype("float64")
    x = et.tensor3("x")
    mx, amx = et.max_and_argmax(x, axis, keepdims)
    got_max, got_arg = eqgraph.function([x], [mx, amx])(v)
    np.testing.assert_array_equal(got_max, np.max(v, axis=axis, keepdims=keepdims))
    axes = tuple(range(3)) if axis is None else tuple(a % 3 for a in np.atleast_1d(axis))
    kept = [a for a in range(3) if a not in axes]
    flat = np.transpose(v, kept + list(axes)).reshape([v.shape[a] for a in kept] + [-1])
    want = np.argmax(flat, axis=-1)  # an index into the reduced axes flattened in order
    if keepdims:
        want = np.expand_dims(want, axes)
    np.testing.assert_array_equal(got_arg, want)
    assert got_arg.dtype == np.int64 and got_arg.shape == got_max.shape


def test_max_and_argmax_gradient_goes_to_the_maximum():
    x = et.matrix("x")
    mx, _ = et.max_and_argmax(x, 1)
    g = eqgraph.function([x], eqgraph.grad((mx * [1.0, 2.0]).sum(), x))(np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]]))
    np.testing.assert_array_equal(g, [[0.0, 1.0, 0.0], [2.0, 0.0, 0.0]])
