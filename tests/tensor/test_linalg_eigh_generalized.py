"""et.linalg.eigh(a, b): the generalized symmetric-definite eigenproblem against SciPy's (real and
complex, either triangle read, stacks), its gradient against finite differences, NumPy's
``eigh(a, "U")`` still read as the triangle."""

import numpy as np
import pytest
import scipy.linalg

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.testing import verify_grad
from eqgraph.tensor import linalg

RNG = np.random.default_rng(0)


def _problem(dtype):
    a, b = (RNG.standard_normal((4, 4)) + (1j * RNG.standard_normal((4, 4)) if dtype == "complex128" else 0)
            for _ in range(2))
    return a + a.conj().T, b @ b.conj().T + 4 * np.eye(4)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_generalized_eigh_matches_scipy_reading_one_triangle(dtype, lower):
    a_value, b_value = _problem(dtype)
    unread = (0, 3) if lower else (3, 0)   # a value in the triangle not read changes nothing
    a_seen, b_seen = a_value.copy(), b_value.copy()
    a_seen[unread], b_seen[unread] = 99.0, 77.0
    a, b = (et.TensorType(dtype, (None, None))(n) for n in "ab")
    w, v = eg.function([a, b], linalg.eigh(a, b, lower=lower))(a_seen, b_seen)
    w_ref, v_ref = scipy.linalg.eigh(a_value, b_value)
    assert w.dtype == np.float64 and v.dtype == dtype
    np.testing.assert_allclose(w, w_ref, rtol=1e-10)
    np.testing.assert_allclose(v.conj().T @ b_value @ v, np.eye(4), atol=1e-10)   # SciPy's normalization
    np.testing.assert_allclose(a_value @ v, b_value @ v * w, atol=1e-10)


def test_generalized_eigvalsh_of_stacks():
    problems = [_problem("float64") for _ in range(3)]
    a, b = et.dtensor3("a"), et.dtensor3("b")
    got = eg.function([a, b], linalg.eigvalsh(a, b))(*(np.stack(x) for x in zip(*problems)))
    np.testing.assert_allclose(got, [scipy.linalg.eigvalsh(x, y) for x, y in problems], rtol=1e-10)


@pytest.mark.parametrize("lower", [True, False])
def test_generalized_eigh_gradient_matches_finite_differences(lower):
    def spd(x):
        return x @ x.T + 10 * et.eye(4)

    values = [RNG.standard_normal((4, 4)), RNG.standard_normal((4, 4))]
    verify_grad(lambda a, b: linalg.eigh(a + a.T, spd(b), lower=lower)[0], values, n_tests=1, rng=RNG)
    verify_grad(lambda a, b: linalg.eigh(a + a.T, spd(b), lower=lower)[1] ** 2, values, n_tests=1, rng=RNG)


def test_numpys_second_argument_is_still_the_triangle():
    a_value = _problem("float64")[0]
    a_value[0, 3] = 50.0   # the upper triangle differs from the lower one
    a = et.dmatrix("a")
    np.testing.assert_allclose(eg.function([a], linalg.eigvalsh(a, "U"))(a_value), np.linalg.eigvalsh(a_value, "U"))
