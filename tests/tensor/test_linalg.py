"""eqgraph.tensor.linalg: values against NumPy/SciPy, gradients against finite
differences, the rules of rulesets/linalg.egg in real compiles, and clear errors."""

import numpy as np
import pytest
import scipy.linalg

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.grad import NullTypeGradError
from eqgraph.testing import verify_grad
from eqgraph.tensor import linalg

RNG = np.random.default_rng(0)
A = RNG.random((4, 4)) + 2 * np.eye(4)   # well conditioned
SPD = A @ A.T                             # symmetric positive definite
B = RNG.random((4, 2))
b = RNG.random(4)
TALL = RNG.random((5, 3))

CASES = {  # name: (eqgraph function, reference, arguments)
    "inv": (linalg.inv, np.linalg.inv, [A]),
    "inv-float32": (linalg.inv, np.linalg.inv, [A.astype("float32")]),
    "inv-int": (linalg.inv, np.linalg.inv, [np.array([[2, 1], [1, 3]])]),
    "det": (linalg.det, np.linalg.det, [A]),
    "slogdet-sign": (lambda a: linalg.slogdet(-a)[0], lambda a: np.linalg.slogdet(-a)[0], [A]),
    "slogdet-log": (lambda a: linalg.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1], [A]),
    "cholesky": (linalg.cholesky, np.linalg.cholesky, [SPD]),
    "cholesky-upper": (lambda a: linalg.cholesky(a, lower=False), lambda a: scipy.linalg.cholesky(a), [SPD]),
    "solve-vector": (linalg.solve, np.linalg.solve, [A, b]),
    "solve-matrix": (linalg.solve, np.linalg.solve, [A, B]),
    "solve-pos": (lambda a, c: linalg.solve(a, c, assume_a="pos"),
                  lambda a, c: scipy.linalg.solve(a, c, assume_a="pos"), [SPD, B]),
    "solve-sym-lower": (lambda a, c: linalg.solve(a, c, assume_a="sym", lower=True),
                        lambda a, c: scipy.linalg.solve(a, c, assume_a="sym", lower=True), [A, B]),
    "solve_triangular-lower": (lambda a, c: linalg.solve_triangular(a, c, lower=True),
                               lambda a, c: scipy.linalg.solve_triangular(a, c, lower=True), [A, B]),
    "solve_triangular-trans": (lambda a, c: linalg.solve_triangular(a, c, trans="T", unit_diagonal=True),
                               lambda a, c: scipy.linalg.solve_triangular(a, c, trans="T", unit_diagonal=True), [A, b]),
    "solve-transposed": (lambda a, c: linalg.solve(a, c, transposed=True),
                         lambda a, c: scipy.linalg.solve(a, c, transposed=True), [A, B]),
    "solve-pos-transposed": (lambda a, c: linalg.solve(a, c, assume_a="positive definite", transposed=True),
                             lambda a, c: scipy.linalg.solve(a, c, assume_a="pos", lower=True), [SPD, b]),
    "solve-diagonal": (lambda a, c: linalg.solve(a, c, assume_a="diagonal"),
                       lambda a, c: scipy.linalg.solve(a, c, assume_a="diagonal"), [A, B]),
    "solve-diagonal-vector": (lambda a, c: linalg.solve(a, c, assume_a="diagonal"),
                              lambda a, c: scipy.linalg.solve(a, c, assume_a="diagonal"), [A, b]),
    "solve-tridiagonal": (lambda a, c: linalg.solve(a, c, assume_a="tridiagonal"),
                          lambda a, c: scipy.linalg.solve(a, c, assume_a="tridiagonal"), [A, B]),
    "solve-banded": (lambda a, c: linalg.solve(a, c, assume_a="banded"),
                     lambda a, c: scipy.linalg.solve(a, c, assume_a="banded"), [A, B]),
    "solve-upper-triangular-transposed": (
        lambda a, c: linalg.solve(a, c, assume_a="upper triangular", transposed=True),
        lambda a, c: scipy.linalg.solve_triangular(a, c, trans=1), [A, B]),
    "solve_triangular-C": (lambda a, c: linalg.solve_triangular(a, c, lower=True, trans="C"),
                           lambda a, c: scipy.linalg.solve_triangular(a, c, lower=True, trans="C"), [A, b]),
    "solve_triangular-2": (lambda a, c: linalg.solve_triangular(a, c, trans=2),
                           lambda a, c: scipy.linalg.solve_triangular(a, c, trans=2), [A, B]),
    "cho_solve": (lambda a, c: linalg.cho_solve((linalg.cholesky(a), True), c), np.linalg.solve, [SPD, B]),
    "cho_solve-upper": (lambda a, c: linalg.cho_solve((linalg.cholesky(a, lower=False), False), c),
                        np.linalg.solve, [SPD, b]),
    "eigvalsh": (linalg.eigvalsh, np.linalg.eigvalsh, [SPD]),
    "eigh-upper-values": (lambda a: linalg.eigh(a, "U")[0], lambda a: np.linalg.eigh(a, "U")[0], [A]),
    "svd-values": (lambda a: linalg.svd(a, compute_uv=False), lambda a: np.linalg.svd(a, compute_uv=False), [TALL]),
    "qr-r": (lambda a: et.abs(linalg.qr(a, mode="r")), lambda a: np.abs(np.linalg.qr(a, mode="r")), [TALL]),
    "pinv": (linalg.pinv, np.linalg.pinv, [TALL]),
    "norm": (linalg.norm, np.linalg.norm, [TALL]),
    "norm-vector-3": (lambda v: linalg.norm(v, 3), lambda v: np.linalg.norm(v, 3), [b]),
    "norm-vector-inf": (lambda v: linalg.norm(v, np.inf), lambda v: np.linalg.norm(v, np.inf), [b]),
    "norm-vector-0": (lambda v: linalg.norm(v, 0), lambda v: np.linalg.norm(v, 0), [b]),
    "norm-nuc": (lambda a: linalg.norm(a, "nuc"), lambda a: np.linalg.norm(a, "nuc"), [TALL]),
    "norm-2": (lambda a: linalg.norm(a, 2), lambda a: np.linalg.norm(a, 2), [TALL]),
    "norm--2": (lambda a: linalg.norm(a, -2), lambda a: np.linalg.norm(a, -2), [TALL]),
    "norm-1": (lambda a: linalg.norm(a, 1), lambda a: np.linalg.norm(a, 1), [TALL]),
    "norm-inf": (lambda a: linalg.norm(a, np.inf), lambda a: np.linalg.norm(a, np.inf), [TALL]),
    "norm-axis-keepdims": (lambda a: linalg.norm(a, axis=0, keepdims=True),
                           lambda a: np.linalg.norm(a, axis=0, keepdims=True), [TALL]),
    "matrix_power-5": (lambda a: linalg.matrix_power(a, 5), lambda a: np.linalg.matrix_power(a, 5), [A]),
    "matrix_power--2": (lambda a: linalg.matrix_power(a, -2), lambda a: np.linalg.matrix_power(a, -2), [A]),
    "matrix_power-0": (lambda a: linalg.matrix_power(a, 0), lambda a: np.linalg.matrix_power(a, 0), [A]),
    "kron": (linalg.kron, np.kron, [A, TALL]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_numpy_and_scipy(name):
    build, reference, args = CASES[name]
    inputs = [et.TensorType(a.dtype, a.shape)(f"a{i}") for i, a in enumerate(args)]
    out = build(*inputs)
    expected = np.asarray(reference(*args))
    got = eg.function(inputs, out, on_unused_input="ignore")(*args)  # matrix_power(a, 0) reads a's shape only
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got.dtype, got.shape, expected.shape)
    assert all(s is None or s == e for s, e in zip(out.type.shape, expected.shape))
    tol = 1e-4 if got.dtype == np.float32 else 1e-9
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def test_decompositions_reconstruct_their_matrix():
    a = et.dmatrix("a")
    u, s, vh = linalg.svd(a)
    ur, sr, vhr = linalg.svd(a, full_matrices=False)
    q, r = linalg.qr(a)
    qc, rc = linalg.qr(a, mode="complete")
    f = eg.function([a], [u, s, vh, ur, sr, vhr, q, r, qc, rc])
    u, s, vh, ur, sr, vhr, q, r, qc, rc = f(TALL)
    assert (u.shape, vh.shape, ur.shape, vhr.shape, qc.shape, rc.shape) == ((5, 5), (3, 3), (5, 3), (3, 3), (5, 5), (5, 3))
    np.testing.assert_allclose(u[:, :3] * s @ vh, TALL)
    np.testing.assert_allclose(ur * sr @ vhr, TALL)
    np.testing.assert_allclose(q @ r, TALL)
    np.testing.assert_allclose(qc @ rc, TALL)
    w, v = eg.function([a], list(linalg.eigh(a)))(SPD)
    np.testing.assert_allclose(v * w @ v.T, SPD)


S = RNG.random((3, 3)) + 2 * np.eye(3)
SPD3 = S @ S.T
TALL3 = RNG.random((3, 2))
GRADS = {
    "inv": (linalg.inv, [S]),
    "det": (linalg.det, [S]),
    "slogdet": (lambda a: linalg.slogdet(a)[1], [S]),
    "cholesky": (linalg.cholesky, [SPD3]),
    "cholesky-upper": (lambda a: linalg.cholesky(a, lower=False), [SPD3]),
    "solve": (linalg.solve, [S, TALL3]),
    "solve-pos": (lambda a, c: linalg.solve(a, c, assume_a="pos"), [SPD3, TALL3]),
    "solve-sym-lower": (lambda a, c: linalg.solve(a, c, assume_a="sym", lower=True), [S, TALL3[:, 0]]),
    "solve_triangular": (lambda a, c: linalg.solve_triangular(a, c, lower=True), [S, TALL3]),
    "solve_triangular-trans-unit": (lambda a, c: linalg.solve_triangular(a, c, trans=1, unit_diagonal=True),
                                    [S, TALL3[:, 1]]),
    "solve-transposed": (lambda a, c: linalg.solve(a, c, transposed=True), [S, TALL3]),
    "solve-sym-transposed": (lambda a, c: linalg.solve(a, c, assume_a="symmetric", transposed=True), [S, TALL3]),
    "solve-diagonal": (lambda a, c: linalg.solve(a, c, assume_a="diagonal"), [S, TALL3]),
    "solve-tridiagonal": (lambda a, c: linalg.solve(a, c, assume_a="tridiagonal"), [S, TALL3[:, 0]]),
    "solve-lower-triangular-transposed": (
        lambda a, c: linalg.solve(a, c, assume_a="lower triangular", transposed=True), [S, TALL3]),
    "solve_triangular-C": (lambda a, c: linalg.solve_triangular(a, c, trans="C"), [S, TALL3]),
    "eigh": (lambda a: linalg.eigh(a)[0] + linalg.eigh(a)[1] ** 2, [SPD3]),
    "eigh-upper": (lambda a: linalg.eigvalsh(a, "U"), [S]),
    "svd-values": (lambda a: linalg.svd(a, compute_uv=False), [TALL3]),
    "svd-reduced": (lambda a: sum((o * o).sum() * k for k, o in enumerate(linalg.svd(a, full_matrices=False), 1)), [TALL3]),
    "qr": (lambda a: linalg.qr(et.specify_shape(a, (3, 2)))[0] ** 2, [TALL3]),
    "qr-r": (lambda a: linalg.qr(et.specify_shape(a, (3, 2)))[1], [TALL3]),
    "qr-mode-r": (lambda a: linalg.qr(et.specify_shape(a, (3, 2)), mode="r"), [TALL3]),
    "qr-wide-q": (lambda a: linalg.qr(et.specify_shape(a, (2, 3)))[0] ** 2, [TALL3.T]),
    "qr-wide-r": (lambda a: linalg.qr(et.specify_shape(a, (2, 3)))[1], [TALL3.T]),
    "qr-wide-complete": (lambda a: sum(o.sum() * k for k, o in
                                       enumerate(linalg.qr(et.specify_shape(a, (2, 3)), mode="complete"), 1)),
                         [TALL3.T]),
    "qr-wide-mode-r": (lambda a: linalg.qr(et.specify_shape(a, (2, 3)), mode="r"), [TALL3.T]),
    "pinv": (linalg.pinv, [TALL3]),
    "norm-2": (lambda a: linalg.norm(a, 2), [S]),
    "norm-fro": (linalg.norm, [TALL3]),
    "matrix_power": (lambda a: linalg.matrix_power(a, -3), [S]),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_gradient_matches_finite_differences(name):
    fn, pt = GRADS[name]
    verify_grad(fn, pt, n_tests=1, rng=np.random.default_rng(2))


def _qr_sums(mode):
    """A cost of both of ``qr(a, mode)``'s factors, weighted apart."""
    return lambda a: sum(o.sum() * k for k, o in enumerate(linalg.qr(a, mode=mode), 1))


#: a matrix of unknown static shape: the gradient's formula is chosen from its sizes at run time
@pytest.mark.parametrize("value", [TALL3, TALL3.T, S, np.stack([TALL3.T, 2 * TALL3.T])], ids=["tall", "wide", "square", "stack"])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_gradient_of_a_matrix_of_unknown_shape_matches_finite_differences(value, mode):
    if mode == "complete" and value.shape[-2] > value.shape[-1]:
        pytest.skip("a tall matrix's complete Q has no gradient (the next test)")
    fn = (lambda a: linalg.qr(a, mode="r")) if mode == "r" else _qr_sums(mode)
    verify_grad(fn, [value], n_tests=1, rng=np.random.default_rng(2))


def test_qr_complete_gradient_of_r_alone_of_a_tall_matrix_of_unknown_shape():
    verify_grad(lambda a: linalg.qr(a, mode="complete")[1], [TALL3], n_tests=1, rng=np.random.default_rng(2))


def test_qr_complete_gradient_of_q_of_a_tall_matrix_of_unknown_shape_raises_when_run():
    a = et.dmatrix("a")
    f = eg.function([a], eg.grad(linalg.qr(a, mode="complete")[0].sum(), a))
    np.testing.assert_allclose(f(TALL3.T), _finite_difference(lambda v: np.linalg.qr(v, "complete")[0].sum(), TALL3.T),
                               atol=1e-6)
    with pytest.raises(ValueError, match="more rows than columns"):
        f(TALL3)


def _finite_difference(fn, x, eps=1e-6):
    """Central differences of the scalar ``fn`` at ``x``, entry by entry."""
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (fn(x + step) - fn(x - step)) / (2 * eps)
    return grad


def test_qr_gradient_that_does_not_exist_says_why():
    a = et.TensorType("float64", (3, 2))("a")
    with pytest.raises(NullTypeGradError, match="not unique"):
        eg.grad(linalg.qr(a, mode="complete")[0].sum(), a)


def test_svd_vectors_of_a_maybe_rectangular_matrix_have_no_gradient_yet():
    a = et.dmatrix("a")
    u, s, vh = linalg.svd(a)
    with pytest.raises(NullTypeGradError, match="full_matrices=False"):
        eg.grad(u.sum(), a)


# -- the rules of rulesets/linalg.egg, in compiles -----------------------------------------------
def test_inv_times_b_becomes_a_solve():
    a, v, m = et.dmatrix("a"), et.dvector("v"), et.dmatrix("m")
    f = eg.function([a, v, m], [linalg.inv(a) @ v, linalg.inv(a) @ m])
    text = _graph_text(f)
    assert "Solve{gen}" in text and "MatrixInverse" not in text
    x, y = f(A, b, B)
    np.testing.assert_allclose(x, np.linalg.solve(A, b))
    np.testing.assert_allclose(y, np.linalg.solve(A, B))
    # without the rules the inverse stays
    assert "MatrixInverse" in _graph_text(eg.function([a, v], linalg.inv(a) @ v, rulesets=[]))


def test_det_of_a_cholesky_factor_is_the_product_of_its_diagonal():
    a = et.dmatrix("a")
    factor = linalg.cholesky(a)
    f = eg.function([a], [linalg.det(factor), linalg.det(factor @ factor.T)])
    text = _graph_text(f)
    assert "Det" not in text and "ExtractDiag" in text
    got, squared = f(SPD)
    np.testing.assert_allclose(got, np.linalg.det(np.linalg.cholesky(SPD)))
    np.testing.assert_allclose(squared, np.linalg.det(SPD))


def test_solve_with_a_cholesky_product_becomes_two_triangular_solves():
    a, v = et.dmatrix("a"), et.dvector("v")
    factor = linalg.cholesky(a)
    f = eg.function([a, v], linalg.solve(factor @ factor.T, v))
    text = _graph_text(f)
    assert "Solve{gen}" not in text and text.count("SolveTriangular") == 2
    np.testing.assert_allclose(f(SPD, b), np.linalg.solve(SPD, b))


def _graph_text(f) -> str:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        eg.dprint(f)
    return out.getvalue()


@pytest.mark.parametrize("build, error, match", [
    (lambda: linalg.inv(et.TensorType("float64", (2, 3))("a")), ValueError, "square"),
    (lambda: linalg.det(et.dvector("a")), TypeError, "at least 2-d"),
    (lambda: linalg.inv(et.TensorType("float64", (4, 2, 3))("a")), ValueError, r"MatrixInverse.*\(4, 2, 3\)"),
    (lambda: linalg.cholesky(et.TensorType("float64", (None, 2, 3))("a")), ValueError, "square matrices"),
    (lambda: linalg.solve(et.dmatrix("a"), et.dscalar("b")), TypeError, r"vector \(M,\) or matrices"),
    (lambda: linalg.solve(et.TensorType("float64", (2, 3, 3))("a"), et.TensorType("float64", (3, 3, 1))("b")),
     ValueError, "cannot broadcast"),
    (lambda: linalg.solve(et.TensorType("float64", (3, 3))("a"), et.TensorType("float64", (2,))("b")),
     ValueError, "do not match"),
    (lambda: linalg.solve(et.dmatrix("a"), et.dvector("b"), assume_a="bogus"), ValueError, "assume_a"),
    (lambda: linalg.solve(et.zmatrix("a"), et.zvector("b"), assume_a="pos"), TypeError, "complex A.*'pos'"),
    (lambda: linalg.solve_triangular(et.dmatrix("a"), et.dvector("b"), trans="H"), ValueError, "trans"),
    (lambda: linalg.solve(et.dvector("a"), et.dvector("b"), transposed=True), TypeError, "solve.*at least 2-d"),
    (lambda: linalg.solve(et.dmatrix("a"), et.dvector("b"), assume_a="diagonal", b_ndim=2), ValueError, "b_ndim"),
    (lambda: linalg.solve(et.dmatrix("a"), et.dvector("b"), b_ndim=2), ValueError, "b_ndim"),
    (lambda: linalg.qr(et.dmatrix("a"), mode="bogus"), ValueError, "mode"),
    (lambda: linalg.norm(et.dscalar("x")), ValueError, "norm: x must be a vector"),
    (lambda: linalg.norm(et.dmatrix("a"), "bogus"), ValueError, "not a matrix norm"),
    (lambda: linalg.norm(et.dvector("v"), "fro", axis=0), ValueError, "matrix norm"),
    (lambda: linalg.matrix_power(et.dmatrix("a"), 1.5), TypeError, "Python int"),
])
def test_clear_errors(build, error, match):
    with pytest.raises(error, match=match):
        build()


def test_run_time_errors_name_the_op():
    a = et.dmatrix("a")
    with pytest.raises(ValueError, match="square"):
        eg.function([a], linalg.inv(a))(np.ones((2, 3)))
    with pytest.raises(np.linalg.LinAlgError, match="Cholesky"):
        eg.function([a], linalg.cholesky(a))(-np.eye(2))
    stack = et.dtensor3("stack")
    with pytest.raises(ValueError, match=r"Det.*square.*\(2, 2, 3\)"):
        eg.function([stack], linalg.det(stack))(np.ones((2, 2, 3)))
    with pytest.raises(ValueError, match=r"Solve.*\(2, 3, 3\).*\(2, 3\)"):  # NumPy 2: a 2-d b is a matrix
        eg.function([stack, a], linalg.solve(stack, a))(np.ones((2, 3, 3)), np.ones((2, 3)))


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int64", "int8", "bool"])
def test_the_type_rules_derive_what_make_node_computes(dtype):
    # rulesets/types.egg types these ops' terms (and so the terms rewrites create) exactly
    from egraph.test_types import check_exact

    a, sq = et.TensorType(dtype, (None, 3))("a"), et.TensorType(dtype, (3, None))("sq")
    v, m = et.TensorType(dtype, (3,))("v"), et.TensorType(dtype, (None, 2))("m")
    wide = et.TensorType(dtype, (3, 4))("wide")
    rhs = [et.fvector("f"), et.bvector("b"), et.lvector("l")]
    outs = [et.sort(a, 0), et.argsort(a), et.cumsum(a, 1), et.cumprod(a, 0), linalg.inv(sq),
            linalg.cholesky(sq, lower=False), linalg.det(sq), linalg.solve(sq, v), linalg.solve(sq, m),
            *[linalg.solve(sq, r) for r in rhs], et.diagonal(a, 1), et.diagonal(sq, -2, 1, 0),
            et.diagonal(wide, 1), et.diagonal(wide, -2, 1, 0), et.diagonal(wide, 5)]
    check_exact([a, sq, v, m, wide, *rhs], outs)


# -- stacks of matrices (..., M, N): NumPy's linalg, batch axes first --------------------------------
STACK = RNG.random((2, 3, 3)) + 2 * np.eye(3)
SPD_STACK = STACK @ np.swapaxes(STACK, -1, -2)
TALL_STACK = RNG.random((2, 1, 4, 3))
B_STACK = RNG.random((5, 1, 3, 2))   # its batch axes broadcast against STACK's
STACK_CASES = {  # name: (eqgraph function, reference, arguments)
    "inv": (linalg.inv, np.linalg.inv, [STACK]),
    "det": (linalg.det, np.linalg.det, [STACK]),
    "slogdet": (lambda a: linalg.slogdet(-a)[0] * linalg.slogdet(a)[1],
                lambda a: np.linalg.slogdet(-a)[0] * np.linalg.slogdet(a)[1], [STACK]),
    "cholesky-upper": (lambda a: linalg.cholesky(a, lower=False),
                       lambda a: np.swapaxes(np.linalg.cholesky(a), -1, -2), [SPD_STACK]),
    "eigh-upper": (lambda a: linalg.eigh(a, "U")[0], lambda a: np.linalg.eigh(a, "U")[0], [STACK]),
    "svd": (lambda a: linalg.svd(a)[1], lambda a: np.linalg.svd(a)[1], [TALL_STACK]),
    "svd-u": (lambda a: et.abs(linalg.svd(a, full_matrices=False)[0]),
              lambda a: np.abs(np.linalg.svd(a, full_matrices=False)[0]), [TALL_STACK]),
    "qr-complete": (lambda a: et.abs(linalg.qr(a, mode="complete")[0]),
                    lambda a: np.abs(np.linalg.qr(a, mode="complete")[0]), [TALL_STACK]),
    "qr-r": (lambda a: et.abs(linalg.qr(a, mode="r")), lambda a: np.abs(np.linalg.qr(a, mode="r")), [TALL_STACK]),
    "pinv": (linalg.pinv, np.linalg.pinv, [TALL_STACK]),
    "solve-vector": (linalg.solve, np.linalg.solve, [STACK, b[:3]]),
    "solve-matrix": (linalg.solve, np.linalg.solve, [STACK, B[:3]]),
    "solve-stacks-broadcast": (linalg.solve, np.linalg.solve, [STACK, B_STACK]),
    "solve-one-matrix-many-b": (linalg.solve, np.linalg.solve, [STACK[0], B_STACK]),
    "solve-pos": (lambda a, c: linalg.solve(a, c, assume_a="pos"), np.linalg.solve, [SPD_STACK, B_STACK]),
    "solve-sym-lower": (lambda a, c: linalg.solve(a, c, assume_a="sym", lower=True),
                        lambda a, c: np.linalg.solve(np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2), c), [STACK, b[:3]]),
    "solve_triangular-trans-unit": (
        lambda a, c: linalg.solve_triangular(a, c, trans=1, unit_diagonal=True),
        lambda a, c: np.linalg.solve(np.swapaxes(np.triu(a, 1) + np.eye(3), -1, -2), c), [STACK, B_STACK]),
    "cho_solve": (lambda a, c: linalg.cho_solve((linalg.cholesky(a), True), c), np.linalg.solve, [SPD_STACK, B_STACK]),
    "solve-stacked-vectors": (lambda a, c: linalg.solve(a, c, b_ndim=1),
                              lambda a, c: np.linalg.solve(a, c[..., None])[..., 0], [STACK, B_STACK[..., 0]]),
    "solve-transposed": (lambda a, c: linalg.solve(a, c, transposed=True),
                         lambda a, c: np.linalg.solve(np.swapaxes(a, -1, -2), c), [STACK, B_STACK]),
    "solve-diagonal-stacked-vectors": (
        lambda a, c: linalg.solve(a, c, assume_a="diagonal", b_ndim=1),
        lambda a, c: c / np.diagonal(a, 0, -2, -1), [STACK, B_STACK[..., 0]]),
    "solve-diagonal": (lambda a, c: linalg.solve(a, c, assume_a="diagonal"),
                       lambda a, c: c / np.diagonal(a, 0, -2, -1)[..., None], [STACK, B_STACK]),
    "solve-tridiagonal": (lambda a, c: linalg.solve(a, c, assume_a="tridiagonal"),
                          lambda a, c: np.linalg.solve(np.triu(np.tril(a, 1), -1), c), [STACK, b[:3]]),
    "solve_triangular-stacked-vectors": (
        lambda a, c: linalg.solve_triangular(a, c, lower=True, b_ndim=1),
        lambda a, c: np.linalg.solve(np.tril(a), c[..., None])[..., 0], [STACK, B_STACK[0, :, :, 0]]),
    "cho_solve-vector": (lambda a, c: linalg.cho_solve((linalg.cholesky(a, lower=False), False), c), np.linalg.solve,
                         [SPD_STACK, b[:3]]),
    "matrix_power-3": (lambda a: linalg.matrix_power(a, 3), lambda a: np.linalg.matrix_power(a, 3), [STACK]),
    "matrix_power--2": (lambda a: linalg.matrix_power(a, -2), lambda a: np.linalg.matrix_power(a, -2), [STACK]),
    "matrix_power-0": (lambda a: linalg.matrix_power(a, 0), lambda a: np.linalg.matrix_power(a, 0),
                       [STACK.astype("float32")]),
    "norm-2": (lambda a: linalg.norm(a, 2, axis=(-2, -1)), lambda a: np.linalg.norm(a, 2, axis=(-2, -1)), [TALL_STACK]),
    "norm-nuc-keepdims": (lambda a: linalg.norm(a, "nuc", axis=(3, 1), keepdims=True),
                          lambda a: np.linalg.norm(a, "nuc", axis=(3, 1), keepdims=True), [TALL_STACK]),
    "norm--2-axes-first": (lambda a: linalg.norm(a, -2, axis=(0, 2)), lambda a: np.linalg.norm(a, -2, axis=(0, 2)),
                           [TALL_STACK]),
    "norm-inf": (lambda a: linalg.norm(a, np.inf, axis=(-2, -1)), lambda a: np.linalg.norm(a, np.inf, axis=(-2, -1)),
                 [TALL_STACK]),
}


@pytest.mark.parametrize("name", list(STACK_CASES))
def test_stacks_of_matrices_match_numpy(name):
    """Static shapes equal NumPy's result's; with unknown shapes the values and infer_shape do."""
    build, reference, args = STACK_CASES[name]
    expected = np.asarray(reference(*args))
    static = build(*[et.TensorType(a.dtype, a.shape)(f"a{i}") for i, a in enumerate(args)])
    assert static.type.shape == expected.shape and static.dtype == expected.dtype, (static.type, expected.shape)
    inputs = [et.TensorType(a.dtype, (None,) * a.ndim)(f"a{i}") for i, a in enumerate(args)]
    out = build(*inputs)
    assert out.ndim == expected.ndim
    inferred = out.owner.op.infer_shape(None, out.owner, [et.shape_of(i) for i in out.owner.inputs])
    got, *dims = eg.function(inputs, [out, *inferred[out.owner.outputs.index(out)]], on_unused_input="ignore")(*args)
    assert got.dtype == expected.dtype and got.shape == expected.shape == tuple(int(d) for d in dims)
    tol = 1e-4 if got.dtype == np.float32 else 1e-9
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def test_decompositions_of_a_stack_reconstruct_each_matrix():
    a = et.dtensor4("a")
    (u, s, vh), (q, r), (w, v) = linalg.svd(a, full_matrices=False), linalg.qr(a), linalg.eigh(a[:, :, :3])
    u, s, vh, q, r, w, v = eg.function([a], [u, s, vh, q, r, w, v])(TALL_STACK)
    np.testing.assert_allclose(u * s[..., None, :] @ vh, TALL_STACK)
    np.testing.assert_allclose(q @ r, TALL_STACK)
    sym = np.tril(TALL_STACK[:, :, :3]) + np.swapaxes(np.tril(TALL_STACK[:, :, :3], -1), -1, -2)  # eigh reads "L"
    np.testing.assert_allclose(v * w[..., None, :] @ np.swapaxes(v, -1, -2), sym, atol=1e-12)


TALL2 = RNG.random((2, 3, 2))
STACK_GRADS = {  # gradients on (2, 3, 3) stacks, against finite differences
    "inv": (linalg.inv, [STACK]),
    "det": (linalg.det, [STACK]),
    "slogdet": (lambda a: linalg.slogdet(a)[1], [STACK]),
    "cholesky-upper": (lambda a: linalg.cholesky(a, lower=False), [SPD_STACK]),
    "solve-vector": (linalg.solve, [STACK, b[:3]]),
    "solve-stacked-vectors": (lambda a, c: linalg.solve(a, c, b_ndim=1), [STACK, B_STACK[:2, 0, :, 0]]),
    "solve-broadcast": (linalg.solve, [STACK, B_STACK[:2, :, :, :1]]),
    "solve-pos": (lambda a, c: linalg.solve(a, c, assume_a="pos"), [SPD_STACK, TALL2]),
    "solve-transposed": (lambda a, c: linalg.solve(a, c, transposed=True), [STACK, TALL2]),
    "solve-diagonal": (lambda a, c: linalg.solve(a, c, assume_a="diagonal"), [STACK, b[:3]]),
    "solve_triangular-trans-unit": (lambda a, c: linalg.solve_triangular(a, c, trans=1, unit_diagonal=True),
                                    [STACK, b[:3]]),
    "eigh": (lambda a: linalg.eigh(a)[0] + (linalg.eigh(a)[1] ** 2).sum(-1), [SPD_STACK]),
    "svd-reduced": (lambda a: sum((o * o).sum() * k for k, o in enumerate(linalg.svd(a, full_matrices=False), 1)),
                    [TALL2]),
    "qr": (lambda a: linalg.qr(et.specify_shape(a, (2, 3, 2)))[0] ** 2, [TALL2]),
    "qr-wide": (lambda a: sum((o * o).sum() * k for k, o in enumerate(linalg.qr(et.specify_shape(a, (2, 2, 3))), 1)),
                [TALL2.transpose(0, 2, 1)]),
    "pinv": (linalg.pinv, [TALL2]),
}


@pytest.mark.parametrize("name", list(STACK_GRADS))
def test_gradient_of_a_stack_matches_finite_differences(name):
    fn, pt = STACK_GRADS[name]
    verify_grad(fn, pt, n_tests=1, rng=np.random.default_rng(2))


def test_inv_times_b_becomes_a_solve_on_stacks():
    # each on its own: an inverse shared by several products (or by b's broadcast batch) may
    # rightly stay, as NumPy's solve factors A again for every system
    a, v, m = et.dtensor3("a"), et.dvector("v"), et.dtensor3("m")
    static_a, static_m = et.TensorType("float64", (2, 3, 3))("sa"), et.TensorType("float64", (3, 2))("sm")
    ms = B_STACK[0]
    for inputs, out, args, expected in [
        ([a, v], linalg.inv(a) @ v, (STACK, b[:3]), np.linalg.solve(STACK, b[:3])),
        ([a, m], linalg.inv(a) @ m, (STACK, ms), np.linalg.solve(STACK, ms)),
        ([static_a, static_m], linalg.inv(static_a) @ static_m, (STACK, B[:3]), np.linalg.solve(STACK, B[:3])),
    ]:
        f = eg.function(inputs, out)
        text = _graph_text(f)
        assert "Solve{gen}" in text and "MatrixInverse" not in text, text
        np.testing.assert_allclose(f(*args), expected)


def test_det_of_a_stack_of_cholesky_factors_is_the_product_of_each_diagonal():
    a = et.dtensor3("a")
    factor = linalg.cholesky(a)
    f = eg.function([a], [linalg.det(factor), linalg.det(factor @ et.matrix_transpose(factor))])
    assert "Det" not in _graph_text(f)
    got, squared = f(SPD_STACK)
    np.testing.assert_allclose(got, np.linalg.det(np.linalg.cholesky(SPD_STACK)))
    np.testing.assert_allclose(squared, np.linalg.det(SPD_STACK))


def test_matrix_transpose_swaps_the_last_two_axes():
    x = et.dtensor4("x")
    assert et.matrix_transpose(et.TensorType("float64", (2, 1, 4, 3))("s")).type.shape == (2, 1, 3, 4)
    np.testing.assert_array_equal(eg.function([x], et.matrix_transpose(x))(TALL_STACK),
                                  np.matrix_transpose(TALL_STACK))
    np.testing.assert_array_equal(eg.function([x], x.mT)(TALL_STACK), TALL_STACK.mT)  # NumPy's and PyTensor's name
    with pytest.raises(ValueError, match="at least 2-dimensional"):
        et.matrix_transpose(et.dvector("v"))


def test_solve_with_a_stack_of_cholesky_products_becomes_two_triangular_solves():
    a, m, v = et.dtensor3("a"), et.dmatrix("m"), et.dvector("v")
    factor = linalg.cholesky(a)
    product = factor @ et.matrix_transpose(factor)
    rhs = np.arange(6.0).reshape(SPD_STACK.shape[-1], -1)
    for b in (m, m[None]):  # matrices, broadcast against the stack
        f = eg.function([a, m], linalg.solve(product, b))
        text = _graph_text(f)
        assert "Solve{gen}" not in text and text.count("SolveTriangular") == 2, text
        np.testing.assert_allclose(f(SPD_STACK, rhs), np.linalg.solve(SPD_STACK, rhs))
    # both at once: the product is shared, yet two general solves (a factorization each) still
    # cost more than four triangular ones (a triangular solve was priced at 2n^2 per column, not n^2)
    both = eg.function([a, m], [linalg.solve(product, m), linalg.solve(product, m[None])])
    text = _graph_text(both)
    assert "Solve{gen}" not in text and text.count("SolveTriangular") == 4, text
    # a vector b is solved with each matrix, (..., M): the rule would read that as one matrix
    g = eg.function([a, v], linalg.solve(product, v))
    assert "Solve{gen}" in _graph_text(g)
    np.testing.assert_allclose(g(SPD_STACK, rhs[:, 0]), np.linalg.solve(SPD_STACK, rhs[:, 0]))


# -- norm of every ord on stacks: NumPy's types and values, gradients by finite differences ------------
MATRIX_ORDS = [None, "fro", 1, -1, 2, -2, np.inf, -np.inf, "nuc"]
VECTOR_ORDS = [None, 2, np.inf, -np.inf, 0, 1, 3, -1, 0.5]
NORMS = [(o, (-2, -1), k) for o in MATRIX_ORDS for k in (False, True)] + [(o, (2, 0), False) for o in MATRIX_ORDS] \
    + [(o, -1, k) for o in VECTOR_ORDS for k in (False, True)] + [(o, 0, False) for o in VECTOR_ORDS]
NORM_STACK = RNG.random((2, 3, 4)) + 0.1


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool"])
def test_norm_of_every_ord_on_a_stack_has_numpys_type_and_value(dtype):
    x = (NORM_STACK * 4).astype(dtype)
    static, unknown = et.TensorType(dtype, x.shape)("s"), et.TensorType(dtype, (None,) * 3)("u")
    outs = [linalg.norm(unknown, o, axis=a, keepdims=k) for o, a, k in NORMS]
    for (o, a, k), got in zip(NORMS, eg.function([unknown], outs)(x)):
        expected = np.linalg.norm(x, o, axis=a, keepdims=k)
        assert linalg.norm(static, o, axis=a, keepdims=k).type == et.TensorType(expected.dtype, expected.shape)
        assert got.dtype == expected.dtype, (o, a, k, got.dtype, expected.dtype)  # an integer x: float64
        np.testing.assert_allclose(got, expected, rtol=1e-5 if dtype == "float32" else 1e-9, err_msg=f"{o}, {a}, {k}")


@pytest.mark.parametrize("ord_, axis, keepdims", [n for n in NORMS if n[0] != 0], ids=str)
def test_gradient_of_norm_of_every_ord_on_a_stack(ord_, axis, keepdims):
    verify_grad(lambda a: linalg.norm(a, ord_, axis=axis, keepdims=keepdims), [NORM_STACK], n_tests=1,
                rng=np.random.default_rng(1))


def test_gradient_of_the_count_of_nonzeros_is_zero():
    x = et.dtensor3("x")
    assert not eg.function([x], eg.grad(linalg.norm(x, 0, axis=-1).sum(), x))(NORM_STACK).any()


@pytest.mark.parametrize("decompose", [et.linalg.svd, et.linalg.qr, et.linalg.eigh])
def test_a_decomposition_returns_a_list_of_outputs_as_pytensor_does(decompose):
    # code written for PyTensor passes `out if isinstance(out, list) else [out]` to function
    a = et.dmatrix("a")
    out = decompose(a)
    assert isinstance(out, list)
    values = eg.function([a], out if isinstance(out, list) else [out])(np.eye(2) * 2)
    assert len(values) == len(out)


@pytest.mark.parametrize("ord", [None, "fro", 1, np.inf, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_norm_of_a_stack_of_matrices_is_one_norm_per_matrix_as_in_pytensor(ord, keepdims):
    # np.linalg.norm(X) would flatten X; PyTensor's norm batches the leading axes
    stack = RNG.standard_normal((2, 4, 3))
    x = et.dtensor3("x")
    got = eg.function([x], linalg.norm(x, ord=ord, keepdims=keepdims))(stack)
    expected = np.array([np.linalg.norm(m, ord=ord) for m in stack])
    np.testing.assert_allclose(got, expected[:, None, None] if keepdims else expected)


STACK4 = RNG.random((2, 1, 3, 4)) - 0.5


@pytest.mark.parametrize("ord_", MATRIX_ORDS + ["inf", "-inf"], ids=str)
def test_norm_of_a_stack_without_axis_is_one_norm_per_matrix(ord_):
    # PyTensor's norm of a stack (..., M, N) is the norm of each matrix, whatever the ord (NumPy's
    # flattens it for ord=None and refuses the others)
    x = et.dtensor4("x")
    numpy_ord = {"inf": np.inf, "-inf": -np.inf}.get(ord_, ord_)
    for keepdims in (False, True):
        expected = np.linalg.norm(STACK4, numpy_ord, axis=(-2, -1), keepdims=keepdims)
        out = linalg.norm(x, ord_, keepdims=keepdims)
        np.testing.assert_allclose(eg.function([x], out)(STACK4), expected, rtol=1e-12)
        assert linalg.norm(et.TensorType("float64", STACK4.shape)("s"), ord_, keepdims=keepdims).type.shape == \
            expected.shape


@pytest.mark.parametrize("ord_", [None, "nuc", -1], ids=str)
def test_gradient_of_the_norm_of_each_matrix_of_a_stack(ord_):
    verify_grad(lambda a: linalg.norm(a, ord_), [STACK4], n_tests=1, rng=np.random.default_rng(1))
