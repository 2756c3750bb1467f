"""et.linalg.solve_sylvester and solve_discrete_are (linalg/control.py): values, dtypes and shapes
against SciPy (matrices, broadcast stacks, float32, complex), gradients against finite
differences, NumPy's path without SciPy, clear errors."""

import numpy as np
import pytest
import scipy.linalg

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.testing import verify_grad
from complex_gradients import complex_numeric_gradient
from eqgraph.tensor import linalg
from eqgraph.tensor.linalg import control

RNG = np.random.default_rng(0)
A, B, Q = RNG.standard_normal((4, 4)), RNG.standard_normal((3, 3)), RNG.standard_normal((4, 3))
ZA, ZB, ZQ = (x + 1j * RNG.standard_normal(x.shape) for x in (A, B, Q))
A_STACK, Q_STACK = RNG.standard_normal((2, 4, 4)), RNG.standard_normal((5, 1, 4, 3))

# a discrete Riccati equation with a stabilizing solution (SciPy's example), and a random one
DARE = [np.array([[4.0, 3.0], [-4.5, -3.5]]), np.array([[1.0], [-1.0]]), np.array([[9.0, 6.0], [6.0, 4.0]]),
        np.array([[1.0]])]
_q, _r = RNG.standard_normal((4, 4)), RNG.standard_normal((2, 2))
DARE_RANDOM = [0.5 * RNG.standard_normal((4, 4)), RNG.standard_normal((4, 2)), _q @ _q.T + np.eye(4),
               _r @ _r.T + np.eye(2)]


def _each(fn, *arrays):
    """SciPy's ``fn`` of each matrix of the stacks ``arrays`` (broadcast), stacked again."""
    arrays = [np.asarray(x) for x in arrays]
    batch = np.broadcast_shapes(*(x.shape[:-2] for x in arrays))
    arrays = [np.broadcast_to(x, batch + x.shape[-2:]) for x in arrays]
    results = [fn(*(x[i] for x in arrays)) for i in np.ndindex(batch)]
    return np.stack(results).reshape(batch + results[0].shape)


CASES = {  # name: (eqgraph function, SciPy's, arguments)
    "sylvester": (linalg.solve_sylvester, scipy.linalg.solve_sylvester, [A, B, Q]),
    "sylvester-float32": (linalg.solve_sylvester, scipy.linalg.solve_sylvester, [A.astype("float32"),
                                                                                  B.astype("float32"),
                                                                                  Q.astype("float32")]),
    "sylvester-complex": (linalg.solve_sylvester, scipy.linalg.solve_sylvester, [ZA, ZB, ZQ]),
    "sylvester-complex64": (linalg.solve_sylvester, scipy.linalg.solve_sylvester,
                            [ZA.astype("complex64"), ZB.astype("complex64"), ZQ.astype("complex64")]),
    "sylvester-broadcast": (linalg.solve_sylvester, scipy.linalg.solve_sylvester, [A_STACK, B, Q_STACK]),
    "dare": (linalg.solve_discrete_are, scipy.linalg.solve_discrete_are, DARE),
    "dare-random": (linalg.solve_discrete_are, scipy.linalg.solve_discrete_are, DARE_RANDOM),
    "dare-float32": (linalg.solve_discrete_are, scipy.linalg.solve_discrete_are, [x.astype("float32") for x in DARE]),
    "dare-complex": (linalg.solve_discrete_are, scipy.linalg.solve_discrete_are,
                     [DARE_RANDOM[0] + 0.1j * np.eye(4), DARE_RANDOM[1] + 1j, *DARE_RANDOM[2:]]),
    "dare-stack": (linalg.solve_discrete_are, scipy.linalg.solve_discrete_are,
                   [np.stack([DARE[0], 0.5 * DARE[0]]), *DARE[1:]]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_scipy(name):
    build, reference, args = CASES[name]
    inputs = [et.TensorType(x.dtype, x.shape)(f"x{i}") for i, x in enumerate(args)]
    out = build(*inputs)
    got = eg.function(inputs, out)(*args)
    expected = _each(reference, *args).astype(out.dtype)
    assert got.dtype == out.dtype and got.shape == expected.shape == out.type.shape
    tol = 1e-4 if got.dtype in (np.float32, np.complex64) else 1e-9
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)


def test_the_static_shape_comes_from_each_argument_that_knows_it():
    a, b = et.TensorType("float64", (None, 4, None))("a"), et.TensorType("float64", (None, 3))("b")
    q = et.TensorType("float64", (5, 1, None, None))("q")
    assert linalg.solve_sylvester(a, b, q).type.shape == (5, None, 4, 3)
    x = linalg.solve_discrete_are(et.dmatrix("a"), et.TensorType("float64", (2, 1))("b"), et.dmatrix("q"),
                                  et.dmatrix("r"))
    assert x.type.shape == (2, 2)


def test_the_shape_is_inferred_without_solving():
    a, b, q = et.dtensor3("a"), et.dmatrix("b"), et.dtensor3("q")
    f = eg.function([a, b, q], linalg.solve_sylvester(a, b, q).shape)
    assert "SolveSylvester" not in eg.pprint(f)
    np.testing.assert_array_equal(f(A_STACK, B, Q_STACK[0]), (2, 4, 3))


GRADS = {
    "sylvester": (linalg.solve_sylvester, [A, B, Q]),
    "sylvester-broadcast": (linalg.solve_sylvester, [A_STACK, B, Q_STACK[0]]),
    "dare": (linalg.solve_discrete_are, DARE),
    "dare-random": (linalg.solve_discrete_are, DARE_RANDOM),
    "dare-stack": (linalg.solve_discrete_are, [np.stack([DARE_RANDOM[0], 0.5 * DARE_RANDOM[0]]), *DARE_RANDOM[1:]]),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_gradient_matches_finite_differences(name):
    fn, args = GRADS[name]
    verify_grad(fn, args, n_tests=1, rng=np.random.default_rng(1))


def test_sylvester_gradient_through_complex_values():
    # PyTensor's convention for a real cost C of a complex z: dC/d(re z) + i dC/d(im z)
    a = et.zmatrix("a")
    weights = RNG.standard_normal(Q.shape)
    x = linalg.solve_sylvester(a, ZB, ZQ)
    got = eg.function([a], eg.grad((et.real(x) * weights).sum(), a))(ZA)

    def cost(v):
        return (scipy.linalg.solve_sylvester(v, ZB, ZQ).real * weights).sum()

    np.testing.assert_allclose(got, complex_numeric_gradient(cost, ZA), atol=1e-6)


def test_dare_reads_the_symmetric_parts_of_q_and_r():
    a, b, q, r = (et.dmatrix(n) for n in "abqr")
    f = eg.function([a, b, q, r], linalg.solve_discrete_are(a, b, q, r))
    skew = np.array([[0.0, 1.0], [-1.0, 0.0]])
    np.testing.assert_allclose(f(DARE[0], DARE[1], DARE[2] + skew, DARE[3]), scipy.linalg.solve_discrete_are(*DARE))


def test_dare_without_a_stabilizing_solution_is_nan():
    # A unstable and B zero: no control can stabilize it (SciPy raises LinAlgError)
    a, b, q, r = (et.dmatrix(n) for n in "abqr")
    got = eg.function([a, b, q, r], linalg.solve_discrete_are(a, b, q, r))(2 * np.eye(2), np.zeros((2, 1)),
                                                                        np.eye(2), np.eye(1))
    assert np.isnan(got).all() and got.shape == (2, 2)


def test_dare_gradient_through_complex_values_is_refused_naming_the_op():
    a = et.zmatrix("a")
    with pytest.raises(NotImplementedError, match="SolveDiscreteARE.*no gradient through complex"):
        eg.grad(et.real(linalg.solve_discrete_are(a, ZQ[:, :2], ZA, np.eye(2))).sum(), a)


def test_without_scipy_sylvester_is_numpys(monkeypatch):
    a, b, q = et.dtensor3("a"), et.dmatrix("b"), et.dtensor4("q")
    f = eg.function([a, b, q], linalg.solve_sylvester(a, b, q))
    monkeypatch.setattr(control, "optional_module", lambda name: None)
    np.testing.assert_allclose(f(A_STACK, B, Q_STACK), _each(scipy.linalg.solve_sylvester, A_STACK, B, Q_STACK))


def test_bad_arguments_are_refused_naming_the_op_and_the_argument():
    with pytest.raises(TypeError, match="SolveSylvester: b must be a matrix"):
        linalg.solve_sylvester(et.dmatrix("a"), et.dvector("b"), et.dmatrix("q"))
    with pytest.raises(ValueError, match=r"SolveSylvester: the arguments .*q .* of shape \(4, 2\).* 'n'"):
        linalg.solve_sylvester(et.dmatrix("a"), et.TensorType("float64", (3, 3))("b"),
                               et.TensorType("float64", (4, 2))("q"))
    with pytest.raises(ValueError, match="SolveDiscreteARE: the arguments"):
        linalg.solve_discrete_are(*(et.TensorType("float64", s)(n) for n, s in
                                    zip("abqr", [(2, 2), (3, 1), (2, 2), (1, 1)])))
    a, b, q = et.dmatrix("a"), et.dmatrix("b"), et.dmatrix("q")
    f = eg.function([a, b, q], linalg.solve_sylvester(a, b, q))
    with pytest.raises(ValueError, match=r"SolveSylvester: the matrices' shapes a \(4, 4\), b \(3, 3\), q \(3, 3\)"):
        f(A, B, np.ones((3, 3)))
