"""jacobian and hessian of vectors whose length is known only at run time (JacobianRows, a loop
over one row's gradient graph), and Rop through an op whose R_op returns None."""

import pickle

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.grad import NullTypeGradError
from eqgraph.grad.loop import JacobianRows
from eqgraph.terms import Apply, Op

POINT = np.array([0.5, 1.0, 2.0])


def _jacobian_by_hand(x):  # of y = exp(x) * sum(x) + x[::-1]
    n = len(x)
    return np.diag(np.exp(x)) * x.sum() + np.exp(x)[:, None] + np.eye(n)[::-1]


def test_jacobian_of_a_vector_of_unknown_length():
    x = et.dvector("x")
    y = et.exp(x) * x.sum() + x[::-1]
    J = eg.jacobian(y, x)
    assert isinstance(J.owner.op, JacobianRows) and J.type.shape == (None, None)
    f = eg.function([x], J)
    for point in (POINT, np.array([0.3]), np.arange(5.0)):
        np.testing.assert_allclose(f(point), _jacobian_by_hand(point))
    assert f(np.zeros(0)).shape == (0, 0)  # no rows: an empty stack shaped like x


def test_it_equals_the_unrolled_jacobian_of_a_static_length():
    x, xs = et.dvector("x"), et.TensorType("float64", (3,))("xs")
    loop = eg.function([x], eg.jacobian(et.tanh(x) * x[0], x))(POINT)
    unrolled = eg.function([xs], eg.jacobian(et.tanh(xs) * xs[0], xs))(POINT)
    np.testing.assert_allclose(loop, unrolled)


def test_several_wrt_and_a_matrix_wrt():
    x, w = et.dvector("x"), et.dmatrix("w")
    y = w @ x
    jx, jw = eg.jacobian(y, [x, w])
    wv = np.arange(6.0).reshape(2, 3)
    gx, gw = eg.function([x, w], [jx, jw])(POINT, wv)
    np.testing.assert_allclose(gx, wv)
    expected = np.zeros((2, 2, 3))
    expected[0, 0], expected[1, 1] = POINT, POINT
    np.testing.assert_allclose(gw, expected)


def test_hessian_of_unknown_length():
    x = et.dvector("x")
    H = eg.hessian((x ** 3).sum() + x.sum() ** 2, x)
    got = eg.function([x], H)(POINT)
    np.testing.assert_allclose(got, np.diag(6 * POINT) + 2)


def test_a_compiled_jacobian_pickles():
    x = et.dvector("x")
    f = eg.function([x], eg.jacobian(et.sin(x) * 2, x))
    g = pickle.loads(pickle.dumps(f))
    np.testing.assert_allclose(g(POINT), np.diag(2 * np.cos(POINT)))


class Floorish(Op):
    """Not differentiable: R_op returns None (which Theano's Op contract allows)."""

    __props__ = ()

    def make_node(self, x):
        x = et.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.floor(inputs[0])

    def R_op(self, inputs, eval_points):
        return None


class Twice(Op):
    __props__ = ()

    def make_node(self, x):
        x = et.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = 2 * inputs[0]

    def R_op(self, inputs, eval_points):
        return [2 * eval_points[0]]


@pytest.mark.parametrize("build", [lambda x: Floorish()(x), lambda x: Twice()(Floorish()(x))])
def test_rop_through_an_op_whose_r_op_returns_none(build):
    x, v = et.dvector("x"), et.dvector("v")
    with pytest.raises(NullTypeGradError, match="Floorish is not differentiable: its R_op returned None"):
        eg.Rop(build(x), x, v)


def test_rop_through_ops_with_r_op_still_works():
    x, v = et.dvector("x"), et.dvector("v")
    f = eg.function([x, v], eg.Rop(Twice()(Twice()(x)), x, v), on_unused_input="ignore")  # linear: x unused
    np.testing.assert_allclose(f(POINT, np.ones(3)), 4 * np.ones(3))
