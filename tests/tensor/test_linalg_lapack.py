"""eqgraph.tensor.linalg's names that SciPy computes (linalg/lapack.py): values, dtypes and shapes
against SciPy on matrices and stacks, gradients against finite differences, clear errors."""

import numpy as np
import pytest
import scipy.linalg

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.grad import NullTypeGradError
from eqgraph.testing import verify_grad
from eqgraph.tensor import linalg
from eqgraph.tensor.linalg import lapack

RNG = np.random.default_rng(0)
A = RNG.random((5, 5))
STACK = RNG.random((2, 3, 4, 4))
b = RNG.random(4)
B = RNG.random((4, 2))
B_STACK = RNG.random((3, 4, 2))   # its batch axes broadcast against STACK's
TALL_STACK = RNG.random((2, 5, 3))


def _each(fn, *arrays):
    """SciPy's ``fn`` of each matrix of the stacks ``arrays``, stacked again (SciPy's own batching
    differs between functions and versions)."""
    batch = arrays[0].shape[:-2]
    results = [fn(*(x[i] for x in arrays)) for i in np.ndindex(batch)]
    if not isinstance(results[0], tuple):
        return np.stack(results).reshape(batch + results[0].shape)
    return tuple(np.stack(r).reshape(batch + r[0].shape) for r in zip(*results))


CASES = {  # name: (eqgraph function giving a tuple, SciPy's, arguments)
    "lu": (linalg.lu, scipy.linalg.lu, [A]),
    "lu-float32": (linalg.lu, scipy.linalg.lu, [A.astype("float32")]),
    "lu-int": (linalg.lu, lambda a: scipy.linalg.lu(a.astype(float)), [np.array([[1, 2], [3, 4]])]),
    "lu-p_indices": (lambda a: linalg.lu(a, p_indices=True), lambda a: scipy.linalg.lu(a, p_indices=True), [A]),
    "lu-permute_l": (lambda a: linalg.lu(a, permute_l=True), lambda a: scipy.linalg.lu(a, permute_l=True), [A]),
    "lu_factor": (linalg.lu_factor, scipy.linalg.lu_factor, [A]),
    "lu_solve": (lambda a, c: (linalg.lu_solve(linalg.lu_factor(a), c),),
                 lambda a, c: (scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), c),), [A, A[:, :2]]),
    "lu_solve-trans": (lambda a, c: (linalg.lu_solve(linalg.lu_factor(a), c, trans=1),),
                       lambda a, c: (scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), c, trans=1),), [A, A[0]]),
    "lu_solve-trans-2-float32": (
        lambda a, c: (linalg.lu_solve(linalg.lu_factor(a), c, trans=2),),
        lambda a, c: (scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), c, trans=2),),
        [A.astype("float32"), A[:, :3].astype("float32")]),
}
SMALL = 0.4 * RNG.random((4, 4))   # its eigenvalues inside the unit circle: the discrete equation has one solution
Q = RNG.random((4, 4))
CASES.update({
    "schur": (linalg.schur, scipy.linalg.schur, [A]),
    "schur-float32": (linalg.schur, scipy.linalg.schur, [A.astype("float32")]),
    "schur-complex-sorted": (lambda a: linalg.schur(a, "complex", "iuc"),
                             lambda a: scipy.linalg.schur(a, "complex", sort="iuc")[:2], [A]),
    "qz": (linalg.qz, scipy.linalg.qz, [A[:4, :4], Q]),
    "qz-complex": (lambda a, c: linalg.qz(a, c, "complex"), lambda a, c: scipy.linalg.qz(a, c, "complex"), [A[:4, :4], Q]),
    "qz-sorted-eigenvalues": (lambda a, c: linalg.qz(a, c, sort="lhp", return_eigenvalues=True),
                              lambda a, c: scipy.linalg.ordqz(a, c, sort="lhp"), [A[:4, :4], Q]),
    "ordqz": (lambda a, c: linalg.ordqz(a, c, "rhp"), lambda a, c: scipy.linalg.ordqz(a, c, "rhp"), [A[:4, :4], Q]),
    "qz-sorted": (lambda a, c: linalg.qz(a, c, "complex", "ouc"),
                  lambda a, c: [scipy.linalg.ordqz(a, c, "ouc", "complex")[i] for i in (0, 1, 4, 5)], [A[:4, :4], Q]),
    # the eigenvalues come with qz's own factors, in its order
    "qz-eigenvalues": (lambda a, c: [linalg.qz(a, c, return_eigenvalues=True)[i] for i in (0, 1, 4, 5)],
                       scipy.linalg.qz, [A[:4, :4], Q]),
    "solve_continuous_lyapunov": (lambda a, c: (linalg.solve_continuous_lyapunov(a, c),),
                                  lambda a, c: (scipy.linalg.solve_continuous_lyapunov(a, c),), [SMALL, Q]),
    "solve_discrete_lyapunov": (lambda a, c: (linalg.solve_discrete_lyapunov(a, c),),
                                lambda a, c: (scipy.linalg.solve_discrete_lyapunov(a, c),), [SMALL, Q]),
    "solve_discrete_lyapunov-direct-float32": (
        lambda a, c: (linalg.solve_discrete_lyapunov(a, c, method="direct"),),
        # float32 stays float32, as in NumPy's linalg (SciPy's solver returns float64)
        lambda a, c: (scipy.linalg.solve_discrete_lyapunov(a, c).astype("float32"),),
        [SMALL.astype("float32"), Q.astype("float32")]),
})
ZC = A + 1j * RNG.random((5, 5))   # complex matrices: SciPy's results, in the input's precision
ZQ = Q + 1j * RNG.random((4, 4))
for _dtype in ("complex128", "complex64"):
    _z, _zq, _zs = ZC.astype(_dtype), ZQ.astype(_dtype), (0.4 * ZC[:4, :4]).astype(_dtype)
    CASES.update({
        f"lu-{_dtype}": (linalg.lu, scipy.linalg.lu, [_z]),
        f"lu-p_indices-{_dtype}": (lambda a: linalg.lu(a, p_indices=True),
                                   lambda a: scipy.linalg.lu(a, p_indices=True), [_z]),
        f"lu_factor-{_dtype}": (linalg.lu_factor, scipy.linalg.lu_factor, [_z]),
        f"qr-pivoting-{_dtype}": (lambda a: linalg.qr(a, pivoting=True),
                                  lambda a: scipy.linalg.qr(a, mode="economic", pivoting=True), [_z]),
        f"schur-{_dtype}": (linalg.schur, scipy.linalg.schur, [_z]),
        f"schur-complex-{_dtype}": (lambda a: linalg.schur(a, "complex"),
                                    lambda a: scipy.linalg.schur(a, "complex"), [_z]),
        f"qz-{_dtype}": (linalg.qz, scipy.linalg.qz, [_z[:4, :4], _zq]),
        f"ordqz-{_dtype}": (lambda a, c: linalg.ordqz(a, c, "iuc"), lambda a, c: scipy.linalg.ordqz(a, c, "iuc"),
                            [_z[:4, :4], _zq]),
        f"solve_continuous_lyapunov-{_dtype}": (
            lambda a, c: (linalg.solve_continuous_lyapunov(a, c),),
            lambda a, c: (scipy.linalg.solve_continuous_lyapunov(a, c),), [_zs, _zq]),
        f"solve_discrete_lyapunov-{_dtype}": (
            lambda a, c: (linalg.solve_discrete_lyapunov(a, c),),
            lambda a, c: (scipy.linalg.solve_discrete_lyapunov(a, c).astype(a.dtype),), [_zs, _zq]),
    })
TALL, WIDE = RNG.random((5, 3)), RNG.random((3, 5))
for _mode, _scipy_mode in [("economic", "economic"), ("full", "full"), ("raw", "raw"), ("r", "r")]:
    for _pivoting in (False, True):
        for _name, _x in [("tall", TALL), ("wide", WIDE)]:
            CASES[f"qr-{_mode}-{_name}{'-pivoting' * _pivoting}"] = (
                lambda a, m=_mode, p=_pivoting: _as_tuple(linalg.qr(a, mode=m, pivoting=p)),
                lambda a, m=_scipy_mode, p=_pivoting: _scipy_qr(a, m, p), [_x])


def _as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _scipy_qr(a, mode, pivoting):
    """SciPy's qr as PyTensor's (and eqgraph's) qr returns it: "raw" flat, "r" with NumPy's K rows."""
    out = _as_tuple(scipy.linalg.qr(a, mode=mode, pivoting=pivoting))
    if mode == "raw":
        out = (*out[0], *out[1:])
    if mode == "r":
        out = (out[0][: min(a.shape)], *out[1:])
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_matches_scipy(name):
    build, reference, args = CASES[name]
    inputs = [et.TensorType(a.dtype, a.shape)(f"a{i}") for i, a in enumerate(args)]
    outs = build(*inputs)
    expected = [np.asarray(e) for e in reference(*args)]
    got = eg.function(inputs, list(outs))(*args)
    for out, g, e in zip(outs, got, expected):
        assert g.dtype == e.dtype and g.shape == e.shape == out.type.shape, (g.dtype, e.dtype, g.shape, out.type)
        tol = 1e-4 if g.dtype in (np.float32, np.complex64) else 1e-9
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)


STACK_CASES = {  # name: (eqgraph function giving a tuple, the reference on stacks, arguments)
    "lu": (linalg.lu, lambda a: _each(scipy.linalg.lu, a), [STACK]),
    "lu-p_indices": (lambda a: linalg.lu(a, p_indices=True),
                     lambda a: _each(lambda m: scipy.linalg.lu(m, p_indices=True), a), [STACK]),
    "lu-permute_l": (lambda a: linalg.lu(a, permute_l=True),
                     lambda a: _each(lambda m: scipy.linalg.lu(m, permute_l=True), a), [STACK]),
    "lu_factor": (linalg.lu_factor, lambda a: _each(scipy.linalg.lu_factor, a), [STACK]),
    "lu_solve-vector": (lambda a, c: (linalg.lu_solve(linalg.lu_factor(a), c),),
                        lambda a, c: (np.linalg.solve(a, c),), [STACK, b]),
    "lu_solve-broadcast": (lambda a, c: (linalg.lu_solve(linalg.lu_factor(a), c),),
                           lambda a, c: (np.linalg.solve(a, c),), [STACK, B_STACK]),
    "qr-pivoting": (lambda a: linalg.qr(a, pivoting=True),
                    lambda a: _each(lambda m: scipy.linalg.qr(m, mode="economic", pivoting=True), a), [TALL_STACK]),
    "qr-raw": (lambda a: linalg.qr(a, mode="raw"), lambda a: _each(lambda m: _scipy_qr(m, "raw", False), a),
               [TALL_STACK]),
    "qr-r-pivoting-wide": (lambda a: linalg.qr(a, mode="r", pivoting=True),
                           lambda a: _each(lambda m: _scipy_qr(m, "r", True), a), [np.swapaxes(TALL_STACK, -1, -2)]),
    "schur": (linalg.schur, lambda a: _each(scipy.linalg.schur, a), [STACK]),
    "schur-complex": (lambda a: linalg.schur(a, "complex"),
                      lambda a: _each(lambda m: scipy.linalg.schur(m, "complex"), a), [STACK]),
    "qz-broadcast": (linalg.qz, lambda a, c: _each(scipy.linalg.qz, *np.broadcast_arrays(a, c)),
                     [STACK, B_STACK[:, :, :1] + Q]),
    "solve_continuous_lyapunov-broadcast": (
        lambda a, c: (linalg.solve_continuous_lyapunov(a, c),),
        lambda a, c: (_each(scipy.linalg.solve_continuous_lyapunov, *np.broadcast_arrays(a, c)),), [STACK, Q]),
    "solve_discrete_lyapunov-broadcast": (
        lambda a, c: (linalg.solve_discrete_lyapunov(a, c),),
        lambda a, c: (_each(scipy.linalg.solve_discrete_lyapunov, *np.broadcast_arrays(a, c)),),
        [SMALL, 0.3 * STACK]),
    "lu_solve-stacked-vectors-trans": (
        lambda a, c: (linalg.lu_solve(linalg.lu_factor(a), c, trans=True, b_ndim=1),),
        lambda a, c: (np.linalg.solve(np.swapaxes(a, -1, -2), c[..., None])[..., 0],), [STACK, B_STACK[..., 0]]),
}


@pytest.mark.parametrize("name", list(STACK_CASES))
def test_stacks_match_scipy_one_matrix_at_a_time(name):
    """Static shapes equal the reference's; with unknown shapes the values and infer_shape do."""
    build, reference, args = STACK_CASES[name]
    expected = [np.asarray(e) for e in reference(*args)]
    static = build(*[et.TensorType(a.dtype, a.shape)(f"a{i}") for i, a in enumerate(args)])
    assert [o.type for o in static] == [et.TensorType(e.dtype, e.shape) for e in expected]
    inputs = [et.TensorType(a.dtype, (None,) * a.ndim)(f"a{i}") for i, a in enumerate(args)]
    outs = build(*inputs)
    node = outs[0].owner
    inferred = node.op.infer_shape(None, node, [et.shape_of(i) for i in node.inputs])
    shapes = [inferred[node.outputs.index(o)] for o in outs] if all(o.owner is node for o in outs) else []
    got = eg.function(inputs, [*outs, *[d for s in shapes for d in s]])(*args)
    dims = iter(int(d) for d in got[len(outs):])
    for i, (g, e) in enumerate(zip(got, expected)):
        assert g.dtype == e.dtype and g.shape == e.shape
        assert not shapes or tuple(next(dims) for _ in shapes[i]) == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-9)


def _weighted(outs):
    """A scalar that weighs each output differently, so that a cotangent sent to the wrong output fails."""
    return sum((o * (k + RNG.random(o.type.shape if None not in o.type.shape else ()))).sum()
               for k, o in enumerate(outs, 1) if o.dtype.startswith("float"))


S = RNG.random((4, 4))
S_STACK = RNG.random((2, 3, 3))
GRADS = {
    "lu": (lambda a: _weighted(linalg.lu(a)), [S]),
    "lu-p_indices": (lambda a: _weighted(linalg.lu(a, p_indices=True)), [S]),
    "lu-permute_l": (lambda a: _weighted(linalg.lu(a, permute_l=True)), [S]),
    "lu-L-only": (lambda a: linalg.lu(a)[1], [S]),
    "lu-stack": (lambda a: _weighted(linalg.lu(et.specify_shape(a, (2, 3, 3)))), [S_STACK]),
    "lu_factor": (lambda a: _weighted(linalg.lu_factor(a)), [S]),
    "lu_factor-stack": (lambda a: linalg.lu_factor(a)[0] ** 2, [S_STACK]),
    "lu_solve": (lambda a, c: linalg.lu_solve(linalg.lu_factor(a), c), [S, B]),
    "qr-pivoting": (lambda a: _weighted(linalg.qr(et.specify_shape(a, (5, 3)), pivoting=True)), [TALL]),
    "qr-economic-pivoting-wide": (lambda a: _weighted(linalg.qr(et.specify_shape(a, (3, 5)), "economic", True)),
                                  [WIDE]),
    "qr-full-pivoting-wide": (lambda a: _weighted(linalg.qr(et.specify_shape(a, (3, 5)), "full", True)), [WIDE]),
    "qr-r-pivoting": (lambda a: linalg.qr(et.specify_shape(a, (5, 3)), "r", True)[0], [TALL]),
    "qr-pivoting-stack": (lambda a: _weighted(linalg.qr(et.specify_shape(a, (2, 5, 3)), pivoting=True)), [TALL_STACK]),
    "solve_continuous_lyapunov": (linalg.solve_continuous_lyapunov, [S, Q]),
    "solve_discrete_lyapunov": (linalg.solve_discrete_lyapunov, [0.5 * S, Q]),
    "solve_continuous_lyapunov-broadcast": (linalg.solve_continuous_lyapunov, [S_STACK, Q[:3, :3]]),
    "solve_discrete_lyapunov-broadcast": (linalg.solve_discrete_lyapunov, [0.4 * S[:3, :3], S_STACK]),
    "lu_solve-trans-vector-stack": (lambda a, c: linalg.lu_solve(linalg.lu_factor(a), c, trans=1), [S_STACK, b[:3]]),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_gradient_matches_finite_differences(name):
    fn, pt = GRADS[name]
    verify_grad(fn, pt, n_tests=1, rng=np.random.default_rng(3))


@pytest.mark.parametrize("build, error, match", [
    (lambda: linalg.lu(et.dvector("a")), TypeError, r"LU.*at least 2-d"),
    (lambda: linalg.qr(et.dvector("a"), pivoting=True), TypeError, r"PivotedQR.*at least 2-d"),
    (lambda: linalg.qr(et.dmatrix("a"), mode="thin"), ValueError, r"qr: mode must be one of"),
    (lambda: linalg.schur(et.TensorType("float64", (3, 2))("a")), ValueError, r"Schur.*square.*\(3, 2\)"),
    (lambda: linalg.schur(et.dmatrix("a"), output="imaginary"), ValueError, "schur: output must be"),
    (lambda: linalg.schur(et.dmatrix("a"), sort="up"), ValueError, "schur: sort must be"),
    (lambda: linalg.qz(et.dmatrix("a"), et.dvector("v")), TypeError, r"QZ.*: b must be a matrix.*at least 2-d"),
    (lambda: linalg.qz(et.TensorType("float64", (3, 3))("a"), et.TensorType("float64", (2, 2))("b")), ValueError,
     "QZ.*same size"),
    (lambda: linalg.qz(et.TensorType("float64", (2, 3, 3))("a"), et.TensorType("float64", (4, 3, 3))("b")),
     ValueError, "cannot broadcast"),
    (lambda: linalg.solve_continuous_lyapunov(et.TensorType("float64", (3, 3))("a"),
                                              et.TensorType("float64", (2, 2))("q")),
     ValueError, r"SolveLyapunov\{continuous\}.*same size"),
    (lambda: linalg.solve_discrete_lyapunov(et.dmatrix("a"), et.TensorType("float64", (2, 3))("q")), ValueError,
     r"SolveLyapunov\{discrete\}: q must be square"),
    (lambda: linalg.solve_discrete_lyapunov(et.dmatrix("a"), et.dmatrix("q"), method="schur"), ValueError, "method"),
    (lambda: linalg.lu(et.TensorType("float64", (2, 3))("a")), ValueError, r"LU.*square.*\(2, 3\)"),
    (lambda: linalg.lu(et.dmatrix("a"), permute_l=True, p_indices=True), ValueError, "permute_l and p_indices"),
    (lambda: linalg.lu_factor(et.TensorType("float64", (4, 2, 3))("a")), ValueError, r"LUFactor.*square"),
    (lambda: linalg.lu_solve((et.dvector("x"), et.ivector("p")), et.dvector("b")), TypeError, "lu_solve: lu must be.*2-d"),
    (lambda: linalg.lu_solve(linalg.lu_factor(et.dmatrix("a")), et.dvector("b"), trans="T"), ValueError, "trans"),
    (lambda: linalg.lu_solve(linalg.lu_factor(et.dmatrix("a")), et.dscalar("b")), ValueError, r"b must be a vector"),
    (lambda: linalg.lu_solve((et.dmatrix("lu"), et.dvector("p")), et.dvector("b")), TypeError, "integer pivots"),
])
def test_clear_errors(build, error, match):
    with pytest.raises(error, match=match):
        build()


def test_raw_qr_has_no_gradient_and_says_so():
    a = et.TensorType("float64", (5, 3))("a")
    with pytest.raises(NullTypeGradError, match="mode='raw'"):
        eg.grad(linalg.qr(a, mode="raw")[2].sum(), a)


@pytest.mark.parametrize("output", ["real", "complex"])
def test_qz_eigenvalues_are_the_generalized_eigenvalues_of_each_pair(output):
    a, c = et.dtensor4("a"), et.dmatrix("c")
    outs = linalg.qz(a, c, output, return_eigenvalues=True)
    aa, bb, alpha, beta, q, z = eg.function([a, c], list(outs))(STACK, Q)
    assert alpha.dtype == np.complex128 and beta.dtype == (np.float64 if output == "real" else np.complex128)
    for i in np.ndindex(STACK.shape[:-2]):  # the factors are qz's, the eigenvalues alpha / beta
        for got, expected in zip((aa[i], bb[i], q[i], z[i]), scipy.linalg.qz(STACK[i], Q, output)):
            np.testing.assert_allclose(got, expected, atol=1e-12)
        np.testing.assert_allclose(_sorted(alpha[i] / beta[i]), _sorted(scipy.linalg.eigvals(STACK[i], Q)))


def _sorted(values):
    """Complex values by real part, then imaginary part (a pair's real parts may differ by rounding)."""
    return values[np.lexsort((values.imag, np.round(values.real, 8)))]


def test_schur_and_qz_have_no_gradient_and_say_why():
    a, c = et.dmatrix("a"), et.dmatrix("c")
    with pytest.raises(NullTypeGradError, match="Schur.*not unique"):
        eg.grad(linalg.schur(a)[0].sum(), a)
    with pytest.raises(NullTypeGradError, match="QZ.*not unique"):
        eg.grad(linalg.qz(a, c)[1].sum(), c)


def test_without_scipy_the_lyapunov_solves_are_numpys(monkeypatch):
    a, c = et.dtensor4("a"), et.dmatrix("c")
    f = eg.function([a, c], [linalg.solve_continuous_lyapunov(a, c), linalg.solve_discrete_lyapunov(0.3 * a, c)])
    monkeypatch.setattr(lapack, "optional_module", lambda name: None)
    continuous, discrete = f(STACK, Q)
    q = np.broadcast_to(Q, STACK.shape)
    np.testing.assert_allclose(continuous, _each(scipy.linalg.solve_continuous_lyapunov, STACK, q))
    np.testing.assert_allclose(discrete, _each(scipy.linalg.solve_discrete_lyapunov, 0.3 * STACK, q))


def test_without_scipy_the_lyapunov_solves_of_complex_matrices_are_numpys(monkeypatch):
    a, c = et.zmatrix("a"), et.zmatrix("c")
    f = eg.function([a, c], [linalg.solve_continuous_lyapunov(a, c), linalg.solve_discrete_lyapunov(a, c)])
    monkeypatch.setattr(lapack, "optional_module", lambda name: None)
    small = 0.4 * ZC[:4, :4]
    continuous, discrete = f(small, ZQ)
    np.testing.assert_allclose(continuous, scipy.linalg.solve_continuous_lyapunov(small, ZQ))
    np.testing.assert_allclose(discrete, scipy.linalg.solve_discrete_lyapunov(small, ZQ))


def test_complex_matrices_have_no_gradient_through_the_lapack_ops():
    z = et.zmatrix("z")
    for name, out in [("LU", linalg.lu(z)[1]), ("SolveLyapunov", linalg.solve_discrete_lyapunov(z, z))]:
        with pytest.raises(NotImplementedError, match=f"{name}.*no gradient through complex"):
            eg.grad(et.real(out).sum(), z)


@pytest.mark.parametrize("inverse", [False, True])
def test_pivot_to_permutation_gives_scipys_rows(inverse):
    _, piv = scipy.linalg.lu_factor(A)
    rows = scipy.linalg.lu(A, p_indices=True)[0]
    stack = np.stack([piv, scipy.linalg.lu_factor(A.T)[1]])
    expected = np.stack([rows, scipy.linalg.lu(A.T, p_indices=True)[0]])
    got = eg.function([], linalg.pivot_to_permutation(et.constant(stack), inverse=inverse))()
    np.testing.assert_array_equal(got, np.argsort(expected, axis=-1) if inverse else expected)


def test_run_time_errors_name_the_op():
    a, c = et.dmatrix("a"), et.dmatrix("c")
    with pytest.raises(ValueError, match=r"LU.*square.*\(2, 3\)"):
        eg.function([a], linalg.lu(a)[1])(np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"QZ.*\(3, 3\).*\(2, 2\).*same size"):
        eg.function([a, c], linalg.qz(a, c)[0])(np.ones((3, 3)), np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"SolveLyapunov.*same size"):
        eg.function([a, c], linalg.solve_continuous_lyapunov(a, c))(np.ones((3, 3)), np.ones((2, 2)))


def test_without_scipy_the_op_says_it_needs_it(monkeypatch):
    a = et.dmatrix("a")
    f = eg.function([a], linalg.lu_factor(a)[0])
    monkeypatch.setattr(lapack, "optional_module", lambda name: None)
    with pytest.raises(ImportError, match="LUFactor needs SciPy"):
        f(A)


# -- complex input: NumPy's result, or a refusal when the graph is built that names the op and dtype -----
Z, ZV, D, DV = et.zmatrix("z"), et.zvector("zv"), et.dmatrix("d"), et.dvector("dv")
REFUSED = {  # name: (build, the op or function the error names); the others: tests/tensor/test_complex.py
    "solve-pos": (lambda: linalg.solve(Z, DV, assume_a="pos"), "Solve"),
    "lu_solve": (lambda: linalg.lu_solve(linalg.lu_factor(D), ZV), "lu_solve"),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_complex_input_is_refused_when_the_graph_is_built(name):
    build, op = REFUSED[name]
    with pytest.raises(TypeError, match=rf"{op}.*complex.*complex128"):
        build()


ZA = np.array([[2 + 1j, 0.5], [0.5 - 2j, 1 - 1j]])
COMPUTED = {  # name: (eqgraph function, NumPy's, arguments)
    "norm": (linalg.norm, np.linalg.norm, [ZA]),
    "norm-1": (lambda z: linalg.norm(z, 1), lambda z: np.linalg.norm(z, 1), [ZA]),
    "norm-inf": (lambda z: linalg.norm(z, "inf"), lambda z: np.linalg.norm(z, np.inf), [ZA]),
    "norm-vector-3": (lambda z: linalg.norm(z, 3, axis=-1), lambda z: np.linalg.norm(z, 3, axis=-1), [ZA]),
    "norm-complex64": (linalg.norm, np.linalg.norm, [ZA.astype("complex64")]),
    "norm-stack": (lambda z: linalg.norm(z, "fro"), lambda z: np.linalg.norm(z, "fro", axis=(-2, -1)),
                   [np.stack([ZA, 2j * ZA])]),
    "kron": (linalg.kron, np.kron, [ZA, ZA.T]),
    "solve-diagonal-complex-b": (lambda a, c: linalg.solve(a, c, assume_a="diagonal"),
                                 lambda a, c: c / np.diagonal(a), [ZA.real, ZA[0]]),
    "norm-nuc": (lambda z: linalg.norm(z, "nuc"), lambda z: np.linalg.norm(z, "nuc"), [ZA]),
    "norm-2": (lambda z: linalg.norm(z, 2), lambda z: np.linalg.norm(z, 2), [ZA]),
    "matrix_power": (lambda z: linalg.matrix_power(z, 3), lambda z: np.linalg.matrix_power(z, 3), [ZA]),
    "solve-b": (linalg.solve, np.linalg.solve, [ZA.real, ZA[0]]),
    "solve-diagonal": (lambda a, c: linalg.solve(a, c, assume_a="diagonal"),
                       lambda a, c: c / np.diagonal(a), [ZA, ZA[0].real]),
    "solve_triangular-b": (lambda a, c: linalg.solve_triangular(a, c, trans="C"),
                           lambda a, c: scipy.linalg.solve_triangular(a, c, trans="C"), [ZA.real, ZA[0]]),
    "cho_solve": (lambda c, b: linalg.cho_solve((c, True), b), lambda c, b: scipy.linalg.cho_solve((c, True), b),
                  [np.linalg.cholesky(ZA @ ZA.conj().T + 2 * np.eye(2)), ZA[0]]),
    "cho_solve-upper": (lambda c, b: linalg.cho_solve((c, False), b), lambda c, b: scipy.linalg.cho_solve((c, False), b),
                        [np.linalg.cholesky(ZA @ ZA.conj().T + 2 * np.eye(2)).conj().T, ZA[0]]),
}


@pytest.mark.parametrize("name", list(COMPUTED))
def test_complex_input_that_is_computed_gives_numpys_result(name):
    build, reference, args = COMPUTED[name]
    inputs = [et.TensorType(a.dtype, a.shape)(f"a{i}") for i, a in enumerate(args)]
    got, expected = eg.function(inputs, build(*inputs))(*args), np.asarray(reference(*args))
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got.dtype, expected.dtype)
    np.testing.assert_allclose(got, expected, rtol=1e-6 if got.dtype in (np.float32, np.complex64) else 1e-12)
