"""et.linalg.expm: values, dtypes and shapes against SciPy (matrices, stacks, float32, complex,
integers), the gradient against finite differences (real and through complex values), clear errors."""

import numpy as np
import pytest
import scipy.linalg

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.testing import verify_grad
from complex_gradients import complex_numeric_gradient
from eqgraph.tensor import linalg

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 4))
STACK = RNG.standard_normal((2, 3, 3, 3))
Z = A + 1j * RNG.standard_normal((4, 4))

VALUES = {"float64": A, "float32": A.astype("float32"), "stack": STACK, "complex128": Z,
          "complex64": Z.astype("complex64"), "int64": np.array([[1, 2], [0, -1]]), "empty-stack": np.zeros((0, 3, 3))}


@pytest.mark.parametrize("name", list(VALUES))
def test_expm_matches_scipy(name):
    value = VALUES[name]
    a = et.TensorType(value.dtype, (None,) * value.ndim)("a")
    out = linalg.expm(a)
    got = eg.function([a], out)(value)
    expected = scipy.linalg.expm(value.astype(float) if value.dtype.kind == "i" else value)
    assert got.dtype == out.dtype == expected.dtype and got.shape == expected.shape
    tol = 1e-5 if got.dtype in (np.float32, np.complex64) else 1e-12
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def test_expm_keeps_the_static_shape():
    assert linalg.expm(et.TensorType("float64", (2, 5, 5))("a")).type.shape == (2, 5, 5)


@pytest.mark.parametrize("value", [A, A + A.T, STACK[0]], ids=["general", "symmetric", "stack"])
def test_expm_gradient_matches_finite_differences(value):
    verify_grad(linalg.expm, [value], n_tests=1, rng=np.random.default_rng(1), abs_tol=1e-6, rel_tol=1e-6)


def test_expm_gradient_through_complex_values():
    # PyTensor's convention for a real cost C of a complex z: dC/d(re z) + i dC/d(im z)
    z = et.zmatrix("z")
    weights = np.arange(16.0).reshape(4, 4)
    out = linalg.expm(z)
    got = eg.function([z], eg.grad((et.real(out) * weights).sum() + et.imag(out).sum(), z))(Z)

    def cost(v):
        e = scipy.linalg.expm(v)
        return (e.real * weights).sum() + e.imag.sum()

    np.testing.assert_allclose(got, complex_numeric_gradient(cost, Z), atol=1e-6)


def test_expm_refuses_what_is_not_a_square_matrix():
    with pytest.raises(TypeError, match="Expm: a must be a matrix"):
        linalg.expm(et.dvector("v"))
    with pytest.raises(ValueError, match=r"Expm: a must be square.*\(2, 3\)"):
        linalg.expm(et.TensorType("float64", (2, 3))("a"))
    a = et.dmatrix("a")
    with pytest.raises(ValueError, match=r"Expm needs square matrices.*\(2, 3\)"):
        eg.function([a], linalg.expm(a))(np.ones((2, 3)))
