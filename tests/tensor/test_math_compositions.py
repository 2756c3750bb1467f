"""PyTensor's composed math names against NumPy: values, dtype, shape, edge values, and a
finite-difference gradient where the function is differentiable."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et

RNG = np.random.default_rng(11)


@pytest.mark.parametrize("shape, axis", [((5,), None), ((4,), None), ((3, 4), 1), ((3, 4), (0, 1)),
                                         ((2, 3, 4), (1, 2)), ((2, 3, 4, 5), (1, 3, 0)), ((3, 4), -1)])
def test_median_matches_numpy_for_odd_and_even_counts(shape, axis):
    x = et.tensor(dtype="float64", shape=(None,) * len(shape))
    f = eg.function([x], et.median(x, axis=axis))
    for value in (RNG.standard_normal(shape), RNG.standard_normal(tuple(s + 1 for s in shape))):
        got, want = f(value), np.median(value, axis=axis)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-14)


def test_median_of_integers_is_float64_and_has_a_gradient():
    i = et.lvector("i")
    assert eg.function([i], et.median(i))(np.array([1, 4, 2, 7])) == 3.0
    assert et.median(i).dtype == "float64"
    eg.verify_grad(lambda t: et.median(t), [np.array([0.3, -1.2, 2.5, 0.9])], rng=np.random.default_rng(0))


def test_ptp_and_power():
    x = et.dmatrix("x")
    value = RNG.standard_normal((3, 4))
    got = eg.function([x], [et.ptp(x), et.ptp(x, axis=0), et.ptp(x, axis=1, keepdims=True), et.power(x, 3)])(value)
    for g, want in zip(got, [np.ptp(value), np.ptp(value, axis=0), np.ptp(value, axis=1, keepdims=True),
                             np.power(value, 3)]):
        assert g.shape == np.shape(want)
        np.testing.assert_allclose(g, want, rtol=1e-14)
    s = et.dscalar("s")
    assert eg.function([s], et.ptp(s))(2.5) == 0.0
    eg.verify_grad(lambda t: et.power(t, 3), [value], rng=np.random.default_rng(0))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_isposinf_and_isneginf(dtype):
    values = np.array([1, np.inf, -np.inf, np.nan, 0, -3]) if dtype != "int64" else np.array([1, 0, -3, 7])
    x = et.vector(dtype=dtype)
    pos, neg = eg.function([x], [et.isposinf(x), et.isneginf(x)])(values.astype(dtype))
    assert pos.dtype == neg.dtype == np.bool_
    np.testing.assert_array_equal(pos, np.isposinf(values.astype(dtype)))
    np.testing.assert_array_equal(neg, np.isneginf(values.astype(dtype)))


def test_smallest_and_largest():
    x, y, z = et.dvectors("x", "y", "z")
    a, b, c = np.array([1.0, 3, 9]), np.array([7.0, 7, 7]), np.array([8.0, 2, 3])
    small = eg.function([x, y, z], [et.smallest(x), et.smallest(x, y), et.smallest(x, y, z)])(a, b, c)
    large = eg.function([x, y, z], [et.largest(x), et.largest(x, y), et.largest(x, y, z)])(a, b, c)
    np.testing.assert_array_equal(small, [a, np.minimum(a, b), np.minimum(np.minimum(a, b), c)])
    np.testing.assert_array_equal(large, [a, np.maximum(a, b), np.maximum(np.maximum(a, b), c)])



@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("axis", [None, 0, (1, 2)])
def test_var_and_std_corrected_match_numpy(ddof, axis):
    x = et.dtensor3("x")
    value = RNG.standard_normal((2, 3, 4)) * 1e3 + 1e6  # a large mean: where the correction acts
    got = eg.function([x], [et.var(x, axis, ddof, corrected=True), et.std(x, axis, ddof, corrected=True)])(value)
    np.testing.assert_allclose(got[0], np.var(value, axis=axis, ddof=ddof), rtol=1e-9)
    np.testing.assert_allclose(got[1], np.std(value, axis=axis, ddof=ddof), rtol=1e-9)
    eg.verify_grad(lambda t: et.var(t, axis, ddof, corrected=True), [RNG.standard_normal((2, 3, 4))],
                   rng=np.random.default_rng(0))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_matmul_casts_to_the_dtype_asked(dtype):
    a, b = et.dvector("a"), et.dvector("b")
    got = eg.function([a, b], et.matmul(a, b, dtype=dtype))(np.array([1.0, 2, 3]), np.array([3.0, 2, 1]))
    assert got.dtype == dtype and got == 10


@pytest.mark.parametrize("axes", [(), (1, 3), (0, 2, 3), (-1, 0)])
def test_argmax_argmin_over_several_or_no_axes_index_them_flattened(axes):
    x = et.dtensor4("x")
    value = RNG.standard_normal((2, 3, 5, 7))
    normal = tuple(a % 4 for a in axes)
    kept = [a for a in range(4) if a not in normal]
    merged = value.transpose(*kept, *sorted(normal)).reshape(*(value.shape[a] for a in kept), -1)
    high, low, top, top_index = eg.function([x], [et.argmax(x, axes), et.argmin(x, axes),
                                                  *et.max_and_argmax(x, axes)])(value)
    assert high.dtype == low.dtype == top_index.dtype == np.int64
    np.testing.assert_array_equal(high, merged.argmax(-1))
    np.testing.assert_array_equal(low, merged.argmin(-1))
    np.testing.assert_array_equal(top, value.max(axis=axes))
    np.testing.assert_array_equal(top_index, high)


@pytest.mark.parametrize("rowvar", [True, False])
@pytest.mark.parametrize("bias, ddof", [(False, None), (True, None), (False, 2), (True, 0)])
def test_cov_matches_numpy(rowvar, bias, ddof):
    rng = np.random.default_rng(3)
    m, y = et.dmatrix("m"), et.dmatrix("y")
    a, b = rng.random((3, 5)), rng.random((3, 5))
    got = eg.function([m], et.cov(m, rowvar=rowvar, bias=bias, ddof=ddof))(a)
    np.testing.assert_allclose(got, np.cov(a, rowvar=rowvar, bias=bias, ddof=ddof), rtol=1e-13)
    got = eg.function([m, y], et.cov(m, y, rowvar=rowvar, bias=bias, ddof=ddof))(a, b)
    np.testing.assert_allclose(got, np.cov(a, b, rowvar=rowvar, bias=bias, ddof=ddof), rtol=1e-13)


def test_cov_of_one_variable_is_0d_and_of_integers_is_float64():
    v, k = et.dvector("v"), et.lmatrix("k")
    value = np.array([1.0, 4.0, 2.0, 8.0])
    got = eg.function([v], et.cov(v))(value)
    assert got.shape == () and got == pytest.approx(np.cov(value))
    ints = np.array([[1, 2, 4], [0, 5, 5]])
    got = eg.function([k], et.cov(k))(ints)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.cov(ints))
    with pytest.raises(NotImplementedError, match="fweights and aweights"):
        et.cov(v, fweights=v)


def test_vecdot_matvec_vecmat_match_their_einsum():
    rng = np.random.default_rng(4)
    a3, b3, v2 = et.dtensor3("a3"), et.dtensor3("b3"), et.dmatrix("v2")
    A, B, V = rng.random((2, 3, 4)), rng.random((2, 4, 5)), rng.random((2, 4))
    f = eg.function([a3, b3, v2], [et.vecdot(v2, v2), et.matvec(a3, v2), et.vecmat(v2, b3)])
    dot, mv, vm = f(A, B, V)
    np.testing.assert_allclose(dot, np.einsum("bk,bk->b", V, V), rtol=1e-13)
    np.testing.assert_allclose(mv, np.einsum("bmk,bk->bm", A, V), rtol=1e-13)
    np.testing.assert_allclose(vm, np.einsum("bk,bkn->bn", V, B), rtol=1e-13)
    cast = eg.function([v2], et.vecdot(v2, v2 * 3, dtype="int32"))(V * 2)
    assert cast.dtype == np.int32
    np.testing.assert_array_equal(cast, (V * 2 * V * 6).sum(-1).astype(np.int32))


def test_vecdot_and_vecmat_refuse_complex_operands_whose_conjugation_would_be_a_guess():
    z = et.zvector("z")
    for f in (et.vecdot, et.vecmat):
        with pytest.raises(TypeError, match="conjugates the first vector"):
            f(z, et.zmatrix("m") if f is et.vecmat else z)
