"""PyTensor's jacobian and hessian shapes: ``expression.shape + wrt.shape`` for an expression of any
number of dimensions, and a tuple back for a tuple of ``wrt`` (a list for a list)."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et

RNG = np.random.default_rng(0)


def _numeric_jacobian(fn, value, eps=1e-6):
    """d fn / d value by central differences, of shape fn(value).shape + value.shape."""
    rows = []
    for i in np.ndindex(value.shape):
        step = np.zeros_like(value)
        step[i] = eps
        rows.append((fn(value + step) - fn(value - step)) / (2 * eps))
    return np.moveaxis(np.array(rows).reshape(value.shape + rows[0].shape), range(value.ndim),
                       range(-value.ndim, 0))


@pytest.mark.parametrize("static", [True, False])
def test_jacobian_of_a_matrix_expression_has_pytensors_shape(static):
    x = et.TensorType("float64", (2,) if static else (None,))("x")
    y = et.outer(x, x) * et.exp(x)
    value = np.array([1.0, 2.0])
    got = eg.function([x], eg.jacobian(y, x))(value)
    assert got.shape == (2, 2, 2)
    expected = _numeric_jacobian(lambda v: np.outer(v, v) * np.exp(v), value)
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_jacobian_of_a_matrix_for_a_matrix():
    a = et.dmatrix("a")
    y = et.tanh(a) @ a.T
    value = RNG.random((2, 3))
    got = eg.function([a], eg.jacobian(y, a))(value)
    expected = _numeric_jacobian(lambda v: np.tanh(v) @ v.T, value)
    assert got.shape == (2, 2, 2, 3)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9)


def test_jacobian_and_hessian_return_the_container_of_wrt():
    x, y = et.dvectors("x", "y")
    cost = (x ** 2).sum() * (y ** 3).sum()
    as_tuple = eg.jacobian(x * y.sum(), (x, y))
    as_list = eg.hessian(cost, [x, y])
    assert isinstance(as_tuple, tuple) and len(as_tuple) == 2
    assert isinstance(as_list, list) and len(as_list) == 2
    assert isinstance(eg.hessian(cost, (x, y)), tuple)
    jx, jy, hx, hy = eg.function([x, y], [*as_tuple, *as_list])(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    np.testing.assert_allclose(jx, np.eye(2) * 7.0)
    np.testing.assert_allclose(jy, np.array([[1.0, 1.0], [2.0, 2.0]]))
    np.testing.assert_allclose(hx, np.eye(2) * 2 * 91.0)
    np.testing.assert_allclose(hy, np.diag([6 * 3.0, 6 * 4.0]) * 5.0)


def test_hessian_of_a_vector_cost_is_refused():
    x = et.dvector("x")
    with pytest.raises(ValueError, match="hessian needs a scalar cost"):
        eg.hessian(x ** 2, x)
