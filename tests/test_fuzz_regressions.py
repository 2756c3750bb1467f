"""The mismatches tests/test_fuzz.py found, each cut down to a few lines; each failed
before its fix: matmul-assoc with a vector or across dtypes (rulesets/matmul.egg),
signed zeros (egraph/encode.py, fold.egg, add-zero), a weak constant extracted alone
(extract/extraction.py), inc_subtensor's np.add.at (tensor/subtensor.py).

A bug found but not yet fixed is written here as ``xfail(strict=True)`` with an entry in
``test_fuzz.KNOWN_BUGS``; both go when the fix lands (the xfail starts failing then).
"""

import math

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et

def test_matmul_assoc_vector_in_the_middle():
    """(A @ v) @ M is M.T @ A @ v; the rewrite computes A @ (v @ M) = A @ M.T @ v."""
    A, v, M = et.dmatrix("A"), et.dvector("v"), et.TensorType("float64", (3, 3))("M")
    a, x, m = np.arange(9.0).reshape(3, 3), np.array([1.0, -2.0, 3.0]), np.arange(9.0)[::-1].reshape(3, 3)
    f = eg.function([A, v, M], (A @ v) @ M)
    np.testing.assert_allclose(f(a, x, m), (a @ x) @ m)


def test_matmul_assoc_vector_in_the_middle_right_nested():
    """X2 @ (w @ X1), found by the fuzz test: valid, but the rewritten
    (X2 @ w) @ X1 fails at run time in SpecifyShape."""
    X2, w, X1 = et.tensor("X2", "float64", (None, 3)), et.tensor("w", "float64", (1,)), et.tensor("X1", "float64", (None, 3))
    x2, x, x1 = np.arange(6.0).reshape(2, 3), np.array([2.0]), np.array([[1.0, -1.0, 0.5]])
    f = eg.function([X2, w, X1], X2 @ (w @ X1))
    np.testing.assert_allclose(f(x2, x, x1), x2 @ (x @ x1))


def test_matmul_assoc_batched_vector_in_the_middle_compiles():
    """(B @ v) @ C with B 3-d, found by the fuzz test: the compile stops with a
    TypeContradiction, the rewrite having merged terms of different static shapes."""
    B, v, C = et.tensor("B", "float32", (3, 4, 2)), et.fvector("v"), et.tensor("C", "float32", (1, None, 3))
    rng = np.random.default_rng(0)
    b, x, c = (rng.normal(size=s).astype("float32") for s in [(3, 4, 2), (2,), (1, 4, 3)])
    f = eg.function([B, v, C], (B @ v) @ C)
    np.testing.assert_allclose(f(b, x, c), (b @ x) @ c, rtol=1e-5)


def test_negative_zero_constant_keeps_its_sign():
    """Even with rulesets=[]: (x + 0) * -0.0 multiplies by +0.0 (found by the fuzz test)."""
    x = et.dvector("x")
    f = eg.function([x], (x + 0) * -0.0, rulesets=[])
    out = f(np.array([0.7, -1.2]))
    np.testing.assert_array_equal(np.signbit(out), [True, False])


def test_negative_zero_minus_x_with_rules():
    """-0.0 - 0.0 is -0.0; compiled with the default rules it is +0.0 (found by the fuzz test)."""
    y = et.dvector("y")
    out = eg.function([y], -0.0 - y)(np.array([0.0]))
    assert np.signbit(out[0]), out


def test_zero_plus_negative_zero_is_positive_zero():
    """Found by the fuzz test: (0 + m) * m with m = -0.0 is -0.0 in NumPy."""
    x = et.dvector("x")
    out = eg.function([x], 0 + x)(np.array([-0.0]))
    assert not np.signbit(out[0]), out


def test_matmul_assoc_keeps_the_precision_of_mixed_dtypes():
    """Found by the fuzz test: a float64 result with float32 accuracy."""
    a, B = et.tensor("a", "float32", (2,)), et.tensor("B", "float32", (2, 1))
    C = et.tensor("C", "float64", (1, 5))
    x, b, c = np.array([1, 1], "float32"), np.array([[1], [1e-8]], "float32"), np.ones((1, 5))
    out = eg.function([a, B, C], a @ (B @ C))(x, b, c)
    np.testing.assert_allclose(out, x @ (b @ c), rtol=1e-12)  # 1 + 1e-8, not 1


def test_matmul_assoc_batch_then_vector():
    """(A @ B) @ v with B 3-d comes out transposed (found by the fuzz test,
    where the rewritten chain stopped the compile with a TypeContradiction)."""
    A, B, v = et.dmatrix("A"), et.dtensor3("B"), et.dvector("v")
    a, b, x = np.array([[1.0, 2.0], [3.0, 4.0]]), np.arange(8.0).reshape(2, 2, 2), np.array([1.0, -1.0])
    np.testing.assert_allclose(eg.function([A, B, v], (A @ B) @ v)(a, b, x), (a @ b) @ x)


def test_matmul_assoc_vector_then_batch():
    """(v @ B) @ C with B, C 3-d stops the compile with a TypeContradiction (found by the fuzz test)."""
    v, B, C = et.dvector("v"), et.dtensor3("B"), et.dtensor3("C")
    x, b, c = np.array([1.0, -1.0]), np.arange(8.0).reshape(2, 2, 2), np.arange(8.0)[::-1].reshape(1, 2, 4)
    np.testing.assert_allclose(eg.function([v, B, C], (v @ B) @ C)(x, b, c), (x @ b) @ c)


def test_weak_constant_extracted_alone_keeps_its_dtype():
    """-ones_like(x * 1.0): mul-one and second-scalar leave Neg(1.0) (found by the fuzz test)."""
    x = et.fscalar("x")
    out = eg.function([x], -et.ones_like(x * 1.0))(np.float32(0.3))
    assert out.dtype == np.float32 and out == -1.0


def test_matmul_assoc_keeps_integer_products_integer():
    """Found by the fuzz test: NumPy's int64 product wraps to 0, eqgraph's does not."""
    A, B = et.tensor("A", "int64", (2, 2)), et.tensor("B", "int64", (2, 2))
    c = et.tensor("c", "float64", (2,))
    a, b, x = np.array([[2**62, 0], [0, 1]]), np.array([[4, 0], [0, 1]]), np.array([1.0, 1.0])
    np.testing.assert_array_equal(eg.function([A, B, c], (A @ B) @ c)(a, b, x), (a @ b) @ x)


def test_inc_subtensor_broadcasts_y_over_a_2d_index_array():
    """Found by the fuzz test: NumPy's add.at, left to broadcast y over a 2-d index array,
    read memory past y, so inc_subtensor returned different garbage on every call."""
    x, i = et.lvector("x"), et.lmatrix("i")
    f = eg.function([x, i], et.inc_subtensor(x[i], x), rulesets=[])
    idx = np.array([[1, 1], [-2, 1]])
    # out[idx[r, c]] += x[c]: x[1] lands on index 1 twice, x[0] on 1 and on 0
    np.testing.assert_array_equal(f(np.array([5, 2]), idx), [5 + 5, 2 + 5 + 2 + 2])
    np.testing.assert_array_equal(f(np.array([5, 2]), idx), [10, 11])


@pytest.mark.parametrize("dtype, x, want", [("float32", -90.0, 8.194012e-40), ("float64", -720.0, 2.0305e-313)])
@pytest.mark.parametrize("fusion", [True, False])
def test_sigmoid_keeps_subnormal_results(dtype, x, want, fusion):
    """Fuzz graph 11861: log(sigmoid(-90)) in float32 was -inf, NumPy -90. SciPy's expit
    computes 1 / (1 + exp(-x)), whose exp overflows where the true result is subnormal."""
    v = et.tensor("v", dtype, ())
    f = eg.function([v], [et.sigmoid(v), et.log(et.sigmoid(v))], rulesets=[], fusion=fusion)
    s, log_s = f(np.array(x, dtype))
    np.testing.assert_allclose(s, want, rtol=1e-3)
    np.testing.assert_allclose(log_s, x, rtol=1e-3)


def test_the_generated_kernels_compute_sigmoid_per_sign():
    """The Numba and CuPy sources had the same 1 / (1 + exp(-x)) that underflows to 0 for x far
    below 0, where sigmoid is exp(x) (a subnormal at -720)."""
    from eqgraph.exec.cupy.kernels import C_FORMS as CUPY_FORMS
    from eqgraph.exec.numba.kernels import FORMS as NUMBA_FORMS

    assert "exp({0})" in CUPY_FORMS["sigmoid"] and "exp(-{0})" in CUPY_FORMS["sigmoid"]  # a branch per sign
    sigmoid = eval("lambda x: " + NUMBA_FORMS["sigmoid"].format("x"), {"math": math})
    assert sigmoid(-720.0) == math.exp(-720.0) > 0.0
    assert sigmoid(-40.0) == math.exp(-40.0) / (1.0 + math.exp(-40.0))
    assert sigmoid(0.0) == 0.5 and sigmoid(720.0) == 1.0
    assert sigmoid(40.0) == 1.0 / (1.0 + math.exp(-40.0))


def test_int_quotient_of_a_cancelled_sum_by_itself_compiles():
    # fuzz graph 11697: x + -x is a fill of zeros for ints; the TrueDiv forms of gradclean's
    # fill-same-shape rules merged a 0-d quotient into the vector's e-class (TypeContradiction)
    x0 = et.tensor("x0", "int64", (None,))
    total = et.add(x0, et.neg(x0))
    f = eg.function([x0], et.true_div(total, total.dimshuffle(0)))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(f(np.array([-3, 1099511627776])), [np.nan, np.nan])
