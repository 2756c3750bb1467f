"""Complex numbers (complex64, complex128): types and upcasts, the elementwise rows that take
them and those that refuse them, values through the NumPy program and with Numba on, the rules
that hold for real numbers only, linear algebra against NumPy/SciPy, and gradients of a real
cost through complex values (PyTensor's convention: dC/d(re z) + i dC/d(im z))."""

import numpy as np
import pytest
import scipy.linalg

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.soundness.check import UnsoundRuleError, check_rules
from eqgraph.tensor.elemwise import COMPLEX_SUPPORT, SCALAR_OPS

RNG = np.random.default_rng(7)
linalg = et.linalg


def _complex_values(shape, dtype="complex128", scale=1.0):
    values = RNG.uniform(0.2, 2.0, shape) * RNG.choice([-1, 1], shape)
    values = values + 1j * RNG.uniform(0.2, 2.0, shape) * RNG.choice([-1, 1], shape)
    return (scale * values).astype(dtype)


# -- types and upcasts ---------------------------------------------------------------------------
@pytest.mark.parametrize("maker, dtype, ndim", [
    (et.cscalar, "complex64", 0), (et.zscalar, "complex128", 0), (et.cvector, "complex64", 1),
    (et.zvector, "complex128", 1), (et.cmatrix, "complex64", 2), (et.zmatrix, "complex128", 2),
    (et.ctensor3, "complex64", 3), (et.ztensor4, "complex128", 4)])
def test_the_complex_type_constructors(maker, dtype, ndim):
    x = maker("x")
    assert (x.dtype, x.ndim, x.type) == (dtype, ndim, maker)


@pytest.mark.parametrize("other, complex_dtype, expected", [
    ("float32", "complex64", "complex64"), ("float64", "complex64", "complex128"),
    ("float16", "complex64", "complex64"), ("int8", "complex64", "complex64"),
    ("int32", "complex64", "complex128"), ("int64", "complex64", "complex128"),
    ("bool", "complex64", "complex64"), ("float32", "complex128", "complex128")])
def test_upcasts_follow_pytensor(other, complex_dtype, expected):
    a, z = et.TensorType(other, (None,))("a"), et.TensorType(complex_dtype, (None,))("z")
    assert (a + z).dtype == (z * a).dtype == expected


def test_a_python_complex_number_is_a_weak_constant():
    c = et.cvector("c")
    assert (c * 2j).dtype == "complex64" and (et.fvector("f") + 1j).dtype == "complex64"


# -- the elementwise rows --------------------------------------------------------------------------
REFERENCES = {  # every row that takes complex numbers: NumPy's function of them
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "true_div": np.true_divide, "pow": np.power,
    "neg": np.negative, "sqr": np.square, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log,
    "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "tanh": np.tanh, "arcsinh": np.arcsinh, "arccosh": np.arccosh, "arctanh": np.arctanh,
    "abs": np.abs, "real": np.real, "imag": np.imag, "conj": np.conj, "angle": np.angle,
    "switch": np.where, "second": lambda a, b: np.broadcast_to(b, np.broadcast_shapes(a.shape, b.shape)),
    "eq": np.equal, "neq": np.not_equal, "isnan": np.isnan, "isinf": np.isinf,
    # NumPy (and PyTensor) order complex numbers by real part, then imaginary part
    "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
}
#: rows whose complex form PyTensor also gives: the result dtypes
REAL_RESULTS = {"abs", "real", "imag", "angle"}


def test_every_row_is_either_complex_or_refuses():
    takes = set(COMPLEX_SUPPORT) - {"complex", "complex_from_polar"}  # those two take real parts
    assert takes == set(REFERENCES)
    for name in set(SCALAR_OPS) - set(COMPLEX_SUPPORT):
        with pytest.raises(TypeError, match=rf"Elemwise{{{name}}}.*complex128"):
            et.ELEMWISE_OPS[name](*[et.zvector("z")] * SCALAR_OPS[name].nin)


@pytest.mark.parametrize("name", sorted(REFERENCES))
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_values_and_dtypes_are_numpys(name, dtype):
    nin = SCALAR_OPS[name].nin
    inputs = [et.TensorType(dtype, (None,))(f"z{i}") for i in range(nin)]
    values = [_complex_values(5, dtype, 0.5) for _ in range(nin)]
    expected = np.asarray(REFERENCES[name](*values))
    got = eg.function(inputs, et.ELEMWISE_OPS[name](*inputs))(*values)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert (got.dtype.kind != "c") == (name in REAL_RESULTS | {"eq", "neq", "isnan", "isinf", "lt", "le", "gt", "ge"})
    np.testing.assert_allclose(got, expected, rtol=1e-5 if dtype == "complex64" else 1e-12)


@pytest.mark.parametrize("name, reason", [
    ("maximum", "no order"), ("minimum", "no order"), ("sign", "no order"),
    ("floor", "rounds"), ("ceil", "rounds"), ("round", "rounds"), ("int_div", "rounds"),
    ("sigmoid", "real numbers only"), ("erf", "real numbers only"), ("gammaln", "real numbers only"),
    ("softplus", "real numbers only"), ("log1mexp", "real numbers only")])
def test_a_row_without_a_complex_meaning_refuses_naming_op_and_dtype(name, reason):
    args = [et.cvector("c")] + [et.fvector("f")] * (SCALAR_OPS[name].nin - 1)
    with pytest.raises(TypeError, match=rf"Elemwise{{{name}}} does not take complex numbers \(complex64 input\).*{reason}"):
        et.ELEMWISE_OPS[name](*args)


def test_complex_comparisons_order_by_real_then_imaginary_part():
    z, w = et.zvector("z"), et.zvector("w")
    a = np.array([1 + 2j, 1 - 1j, 2 + 0j, 1 + 1j])
    b = np.array([1 + 1j, 1 + 0j, 1 + 5j, 1 + 1j])
    got = eg.function([z, w], [z < w, z <= w, z > w, z >= w])(a, b)
    for g, want in zip(got, [[False, True, False, False], [False, True, False, True],
                             [True, False, True, False], [True, False, True, True]]):
        np.testing.assert_array_equal(g, want)


def test_clip_of_complex_refuses():
    with pytest.raises(TypeError, match=r"Elemwise{clip}.*complex128.*no order"):
        et.clip(et.zvector("z"), 0.0, 1.0)


@pytest.mark.parametrize("dtype", ["int32", "float32", "float64", "bool"])
def test_a_cast_from_complex_to_real_refuses(dtype):
    with pytest.raises(TypeError, match=rf"Cast{{{dtype}}} cannot cast the complex z \(complex128\).*et.real"):
        et.cast(et.zvector("z"), dtype)


def test_casts_into_and_between_complex_dtypes():
    d, z = et.dvector("d"), et.zvector("z")
    f = eg.function([d, z], [et.cast(d, "complex64"), et.cast(z, "complex64")])
    dv, zv = RNG.normal(size=3), _complex_values(3)
    got = f(dv, zv)
    np.testing.assert_array_equal(got[0], dv.astype("complex64"))
    np.testing.assert_array_equal(got[1], zv.astype("complex64"))


def test_complex_of_complex_parts_refuses():
    with pytest.raises(TypeError, match="real numbers, not complex128"):
        et.complex(et.zvector("z"), et.dvector("d"))


# PyTensor's tests/tensor/test_complex.py, TestRealImag
def test_real_and_imag():
    x = et.zvector()
    xval = _complex_values(10)
    assert np.all(xval.real == eg.function([x], et.real(x))(xval))
    assert np.all(xval.imag == eg.function([x], et.imag(x))(xval))


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_real_and_imag_of_real_numbers(dtype):
    x = et.TensorType(dtype, (None, None))("x")
    xval = np.asarray(RNG.normal(size=(3, 3)) * 100, dtype=dtype)
    real, imag = eg.function([x], [et.real(x), et.imag(x)])(xval)
    np.testing.assert_array_equal(real, xval)
    np.testing.assert_array_equal(imag, np.zeros_like(xval))
    assert real.dtype == imag.dtype == dtype


def test_complex_of_two_rows():
    m = et.fmatrix()
    c = et.complex(m[0], m[1])
    assert c.type == et.cvector
    r, i = et.real(c), et.imag(c)
    assert r.type == i.type == et.fvector
    mval = RNG.normal(size=(2, 5)).astype("float32")
    rval, ival = eg.function([m], [r, i])(mval)
    np.testing.assert_array_equal(rval, mval[0])
    np.testing.assert_array_equal(ival, mval[1])


@pytest.mark.parametrize("dtypes, expected", [
    (("float32", "float32"), "complex64"), (("float64", "float32"), "complex128"),
    (("int32", "int32"), "complex128"), (("int8", "float16"), "complex64")])
def test_the_dtype_of_complex_and_complex_from_polar(dtypes, expected):
    a, b = (et.TensorType(d, (None,))(n) for d, n in zip(dtypes, "ab"))
    assert et.complex(a, b).dtype == et.complex_from_polar(a, b).dtype == expected


def test_complex_keeps_an_infinite_part_apart():
    a, b = et.dvector("a"), et.dvector("b")
    got = eg.function([a, b], et.complex(a, b))(np.array([1.0, np.inf]), np.array([np.inf, 2.0]))
    np.testing.assert_array_equal(got.real, [1.0, np.inf])  # 1 + 1j * inf would have a NaN real part
    np.testing.assert_array_equal(got.imag, [np.inf, 2.0])


def test_complex_from_polar():
    r, t = et.dvector("r"), et.dvector("t")
    rv, tv = RNG.uniform(0.1, 2, 6), RNG.uniform(-3, 3, 6)
    np.testing.assert_allclose(eg.function([r, t], et.complex_from_polar(r, t))(rv, tv), rv * np.exp(1j * tv))


# -- the rules that need real numbers --------------------------------------------------------------
IDENTITIES = {  # a graph a real-number rule would rewrite wrongly, and NumPy's value of it
    "log-exp": (lambda z: et.log(et.exp(z * 3)), lambda z: np.log(np.exp(z * 3))),
    "sqrt-sqr": (lambda z: et.sqrt(et.sqr(z)), lambda z: np.sqrt(np.square(z))),
    "exp-log": (lambda z: et.exp(et.log(z)), lambda z: z),
    "abs-sqr": (lambda z: et.abs(z) ** 2, lambda z: np.abs(z) ** 2),
    "softplus": (lambda z: et.log1p(et.exp(z)), lambda z: np.log1p(np.exp(z))),
    "log1mexp": (lambda z: et.log1p(-et.exp(z)), lambda z: np.log1p(-np.exp(z))),
    "logaddexp": (lambda z: et.log(et.exp(z) + et.exp(2 * z)), lambda z: np.log(np.exp(z) + np.exp(2 * z))),
    "logsumexp": (lambda z: et.log(et.sum(et.exp(z))), lambda z: np.log(np.sum(np.exp(z)))),
    "sigmoid": (lambda z: et.exp(z) / (et.exp(z) + 1), lambda z: np.exp(z) / (np.exp(z) + 1)),
}


@pytest.mark.parametrize("name", list(IDENTITIES))
def test_real_number_rules_do_not_fire_on_complex_values(name):
    build, reference = IDENTITIES[name]
    z = et.zvector("z")
    zv = _complex_values(6, scale=1.5)
    np.testing.assert_allclose(eg.function([z], build(z))(zv), reference(zv), rtol=1e-10)


def test_the_checker_draws_complex_values_and_finds_a_rule_unsound_there():
    # sound for real numbers, the imaginary part wraps modulo 2 pi for complex ones
    unguarded = '(rewrite (Log (Exp x)) x :same-dtype x :name "log-exp-unguarded")'
    with pytest.raises(UnsoundRuleError, match="(?s)log-exp-unguarded.*complex128"):
        check_rules(unguarded, draws=60, seed=0)
    guarded = '(rewrite (Log (Exp x)) x :same-dtype x :when ((real-dtypes (dtype x))) :name "log-exp-guarded")'
    assert check_rules(guarded, draws=60, seed=0).checked


def test_sign_facts_are_for_real_numbers_only():
    # sqr(z) is no non-negative number: x * y / y with y = sqr(z) must not lean on it
    z = et.zvector("z")
    zv = _complex_values(4)
    got = eg.function([z], et.sqrt(et.sqr(z) ** 0.5))(zv)
    np.testing.assert_allclose(got, np.sqrt(np.square(zv) ** 0.5), rtol=1e-10)


# -- the NumPy program and Numba -----------------------------------------------------------------
@pytest.mark.parametrize("numba", [False, True])
def test_a_fused_complex_graph_gives_numpys_values_with_numba_on_or_off(numba):
    z, d = et.zvector("z"), et.dvector("d")
    out = [et.exp(z) * d + et.sqr(z) / (z + 2), et.abs(et.sin(z)) + d, et.real(z) * d + et.imag(z)]
    zv, dv = _complex_values(50), RNG.normal(size=50)
    with eg.config.change_flags(numba=numba):
        f = eg.function([z, d], out, compile="eager")
        got = f(zv, dv)
    expected = [np.exp(zv) * dv + np.square(zv) / (zv + 2), np.abs(np.sin(zv)) + dv, zv.real * dv + zv.imag]
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-12)


def test_a_complex_graph_runs_the_numpy_program_visibly_with_numba_on():
    # the Numba kernels hold real dtypes only: the whole program stays NumPy's, and says so
    z = et.zvector("z")
    with eg.config.change_flags(numba=True):
        f = eg.function([z], et.exp(z) * 2 + et.sqr(z), compile="eager")
    zv = _complex_values(8)
    np.testing.assert_allclose(f(zv), np.exp(zv) * 2 + np.square(zv), rtol=1e-12)
    assert f.stages.tier == "numpy"


# -- linear algebra --------------------------------------------------------------------------------
def _matrix(n=4, dtype="complex128"):
    return _complex_values((n, n), dtype)


def _hermitian(n=4, dtype="complex128"):
    a = _complex_values((n, n))
    return (a @ a.conj().T + n * np.eye(n)).astype(dtype)


def _upper_only(n=4):
    """A Hermitian matrix's upper triangle, and anything below it."""
    return np.triu(_hermitian(n)) + np.tril(_complex_values((n, n)), -1)


LINALG = {  # name: (eqgraph function, NumPy's or SciPy's, argument makers)
    "inv": (linalg.inv, np.linalg.inv, [_matrix]),
    "det": (linalg.det, np.linalg.det, [_matrix]),
    "slogdet": (linalg.slogdet, np.linalg.slogdet, [_matrix]),
    "cholesky": (linalg.cholesky, np.linalg.cholesky, [_hermitian]),
    "cholesky-upper": (lambda a: linalg.cholesky(a, lower=False), lambda a: scipy.linalg.cholesky(a), [_hermitian]),
    "eigh": (linalg.eigh, np.linalg.eigh, [_hermitian]),
    "eigvalsh-upper": (lambda a: linalg.eigvalsh(a, "U"), lambda a: np.linalg.eigvalsh(a, "U"), [_upper_only]),
    "eigvalsh": (linalg.eigvalsh, np.linalg.eigvalsh, [_hermitian]),
    "svd": (linalg.svd, np.linalg.svd, [_matrix]),
    "svd-values": (lambda a: linalg.svd(a, compute_uv=False), lambda a: np.linalg.svd(a, compute_uv=False), [_matrix]),
    "qr": (linalg.qr, np.linalg.qr, [_matrix]),
    "pinv": (linalg.pinv, np.linalg.pinv, [_matrix]),
    "solve": (linalg.solve, np.linalg.solve, [_matrix, lambda: _complex_values(4)]),
    "solve-sym": (lambda a, b: linalg.solve(a, b, assume_a="sym", lower=True),
                  lambda a, b: scipy.linalg.solve(a, b, assume_a="sym", lower=True), [_matrix, lambda: _complex_values(4)]),
    "solve_triangular": (lambda a, b: linalg.solve_triangular(a, b, lower=True),
                         lambda a, b: scipy.linalg.solve_triangular(a, b, lower=True), [_matrix, lambda: _complex_values(4)]),
    "matmul": (et.matmul, np.matmul, [_matrix, _matrix]),
    "dot": (et.dot, np.dot, [_matrix, lambda: _complex_values(4)]),
}


def _close(got, expected, dtype):
    tol = 1e-4 if dtype == "complex64" else 1e-10
    for g, e in zip(got if isinstance(got, list) else [got], expected if isinstance(expected, tuple) else [expected]):
        e = np.asarray(e)
        assert g.dtype == e.dtype.name.replace("complex128", "complex64" if dtype == "complex64" else "complex128") \
            .replace("float64", "float32" if dtype == "complex64" else "float64"), (g.dtype, e.dtype)
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", list(LINALG))
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_linalg_of_complex_matrices_is_numpys(name, dtype):
    build, reference, makers = LINALG[name]
    values = [np.asarray(make()).astype(dtype) for make in makers]
    inputs = [et.TensorType(dtype, (None,) * v.ndim)(f"a{i}") for i, v in enumerate(values)]
    outputs = build(*inputs)
    got = eg.function(inputs, list(outputs) if isinstance(outputs, (list, tuple)) else outputs)(*values)
    _close(got, reference(*values), dtype)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_of_a_hermitian_triangle_diagonalizes_it(uplo):
    # eigenvectors are unique up to a phase each: the decomposition itself is compared
    a = et.zmatrix("a")
    values = _upper_only() if uplo == "U" else _upper_only().conj().T
    w, v = eg.function([a], linalg.eigh(a, uplo))(values)
    hermitian = np.triu(values) + np.triu(values, 1).conj().T if uplo == "U" else \
        np.tril(values) + np.tril(values, -1).conj().T
    np.testing.assert_allclose(w, np.linalg.eigvalsh(values, uplo), rtol=1e-10)
    np.testing.assert_allclose(hermitian @ v, v * w, atol=1e-10)
    np.testing.assert_allclose(v.conj().T @ v, np.eye(4), atol=1e-10)


@pytest.mark.parametrize("dtype, expected", [("float64", "complex128"), ("float32", "complex64"),
                                             ("complex64", "complex64"), ("complex128", "complex128")])
def test_eig_is_complex_whatever_the_input(dtype, expected):
    a = et.TensorType(dtype, (None, None))("a")
    w, v = linalg.eig(a)
    assert w.dtype == v.dtype == linalg.eigvals(a).dtype == expected
    values = np.array([[2.0, 1.0], [1.0, 3.0]]).astype(dtype)  # real eigenvalues: NumPy's are real then
    got_w, got_v = eg.function([a], [w, v])(values)
    expected_w, expected_v = np.linalg.eig(values)
    assert got_w.dtype == expected
    np.testing.assert_allclose(got_w, expected_w, rtol=1e-5)
    np.testing.assert_allclose(got_v, expected_v, rtol=1e-5, atol=1e-6)


def test_eig_of_a_rotation_has_complex_eigenvalues():
    a = et.dmatrix("a")
    got = eg.function([a], linalg.eigvals(a))(np.array([[0.0, -1.0], [1.0, 0.0]]))
    np.testing.assert_allclose(sorted(got, key=lambda c: c.imag), [-1j, 1j])


@pytest.mark.parametrize("build, op", [(lambda z: linalg.solve(z, z[0], assume_a="pos"), "Solve")])
def test_the_linalg_that_refuses_complex_matrices_names_the_op(build, op):
    with pytest.raises(TypeError, match=rf"{op}.*complex.*complex128"):
        build(et.zmatrix("z"))


# -- gradients ----------------------------------------------------------------------------------------
def _numeric_gradient(fn, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (fn(up) - fn(down)) / (2 * eps)
    return grad


def _c(m):
    return et.complex(m[0], m[1])


COSTS = {  # PyTensor's own (skipped there: "Complex grads not enabled"), then holomorphic chains
    "complex_grads": lambda m: (0.5 * et.real(_c(m)) + 0.9 * et.imag(_c(m))).sum(),
    "mul_mixed0": lambda m: et.abs(_c(m) ** 2).sum(),
    "mul_mixed1": lambda m: et.abs(_c(m)).sum(),
    "mul_mixed": lambda m: et.abs((_c(m) * m[1]) ** 2).sum(),
    "polar_grads": lambda m: (0.5 * et.real(et.complex_from_polar(et.abs(m[0]), m[1]))
                              + 0.9 * et.imag(et.complex_from_polar(et.abs(m[0]), m[1]))).sum(),
    "abs_grad": lambda m: (0.5 * et.abs(_c(m))).sum(),
    "angle-exp-log-conj": lambda m: (et.angle(et.exp(_c(m) * 0.7))
                                     + et.real(et.log(_c(m)) * et.conj(et.complex(m[1], m[0])))).sum(),
    "sin-div-mixed": lambda m: et.real(et.sin(_c(m)) / et.complex(m[1], m[0]) + m[0] * _c(m)).sum(),
    "sqrt-tanh-pow": lambda m: et.imag(et.sqrt(_c(m)) * et.tanh(_c(m) * 0.3) + _c(m) ** 3).sum(),
    "matmul-sum": lambda m: et.abs(_c(m).dimshuffle(0, "x") * et.complex(m[1], m[0]) @ et.complex(m[0], m[0])).sum(),
    "inv-det": lambda m: et.abs(linalg.det(et.outer(_c(m), _c(m)) + 3 * et.eye(4))) +
                         et.real(linalg.inv(et.outer(_c(m), et.conj(_c(m))) + 4 * et.eye(4))).sum(),
    "solve": lambda m: et.abs(linalg.solve(et.outer(_c(m), _c(m)) + 3 * et.eye(4), _c(m))).sum(),
}


@pytest.mark.parametrize("name", list(COSTS))
def test_the_gradient_of_a_real_cost_through_complex_values(name):
    m = et.dmatrix("m")
    cost = COSTS[name](m)
    f = eg.function([m], [cost, eg.grad(cost, m)])
    mv = RNG.uniform(0.3, 1.5, (2, 4)) * RNG.choice([-1, 1], (2, 4))
    numeric = _numeric_gradient(lambda v: f(v)[0], mv)
    np.testing.assert_allclose(f(mv)[1], numeric, rtol=1e-5, atol=1e-6)


def test_the_gradient_with_respect_to_a_complex_input():
    # C = |z|^2 = re^2 + im^2: dC/d(re z) + i dC/d(im z) is 2z
    z = et.zvector("z")
    zv = _complex_values(5)
    g = eg.function([z], eg.grad(et.sum(et.real(z * et.conj(z))), z))(zv)
    assert g.dtype == "complex128"
    np.testing.assert_allclose(g, 2 * zv, rtol=1e-12)


def test_a_complex_cost_refuses():
    z = et.zvector("z")
    with pytest.raises(TypeError, match=r"grad: the cost .* is complex \(complex128\).*et.real\(cost\)"):
        eg.grad(et.sum(z), z)


@pytest.mark.parametrize("build, op", [
    (lambda z: et.sum(linalg.eigh(z)[0]), "Eigh"), (lambda z: et.sum(linalg.svd(z, compute_uv=False)), "SVD"),
    (lambda z: et.sum(et.abs(linalg.cholesky(z))), "Cholesky"),
    (lambda z: et.sum(et.real(linalg.eigvals(z))), "Eig")])
def test_the_gradient_through_a_non_holomorphic_op_refuses_naming_it(build, op):
    z = et.zmatrix("z")
    with pytest.raises(NotImplementedError, match=rf"{op}.*no gradient through complex values.*complex128"):
        eg.grad(build(z), z)


def test_eig_of_a_real_matrix_has_no_gradient_either():
    a = et.dmatrix("a")
    with pytest.raises(NotImplementedError, match="Eig.*no gradient through complex values"):
        eg.grad(et.sum(et.real(linalg.eigvals(a))), a)
