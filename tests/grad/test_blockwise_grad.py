"""Gradients of Blockwise: the core op's VJP vectorized over the batch, checked against finite
differences and against a NumPy loop of per-block gradients; broadcast batch axes summed back."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.grad import DisconnectedType
from eqgraph.tensor import linalg
from eqgraph.tensor.blockwise import Blockwise, vectorize
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Apply
from eqgraph.terms.op import Op
from eqgraph.testing import verify_grad

RNG = np.random.default_rng(0)


def spd(*batch, n=3):
    a = RNG.normal(size=(*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def symmetrized(a):
    """A positive definite matrix per block of ``a``, so finite differences stay inside the domain."""
    return a @ et.matrix_transpose(a) + 3 * et.eye(a.type.shape[-1])


CASES = {
    "cholesky": (lambda a: Blockwise(linalg.Cholesky())(symmetrized(a)), [RNG.normal(size=(2, 3, 3))]),
    "inv": (lambda a: Blockwise(linalg.MatrixInverse())(symmetrized(a)), [RNG.normal(size=(2, 3, 3))]),
    "det": (lambda a: Blockwise(linalg.Det())(a), [RNG.normal(size=(2, 2, 3, 3))]),
    "solve-vectors": (lambda a, b: Blockwise(linalg.Solve(), "(m,m),(m)->(m)")(symmetrized(a), b),
                      [RNG.normal(size=(2, 3, 3)), RNG.normal(size=(2, 3))]),
    "solve-a-broadcast": (lambda a, b: Blockwise(linalg.Solve(), "(m,m),(m)->(m)")(symmetrized(a), b),
                          [RNG.normal(size=(1, 3, 3)), RNG.normal(size=(4, 3))]),
    "solve-b-broadcast": (lambda a, b: Blockwise(linalg.Solve(), "(m,m),(m)->(m)")(symmetrized(a), b),
                          [RNG.normal(size=(4, 3, 3)), RNG.normal(size=(3,))]),
    "matrix-times-vector": (lambda a, v: Blockwise(et.MatMul(), "(m,k),(k)->(m)")(a, v),
                            [RNG.normal(size=(3, 2, 4)), RNG.normal(size=(3, 4))]),
    "slogdet": (lambda a: Blockwise(linalg.SlogDet())(symmetrized(a))[1], [RNG.normal(size=(2, 3, 3))]),
    "eigvalsh": (lambda a: Blockwise(linalg.Eigh())(symmetrized(a))[0], [RNG.normal(size=(2, 3, 3))]),
    "pinv": (lambda a: Blockwise(linalg.Pinv())(a), [RNG.normal(size=(2, 3, 3))]),
    "qr": (lambda a: Blockwise(linalg.QR())(a)[1], [RNG.normal(size=(2, 3, 3))]),
    "solve-matrices": (lambda a, b: Blockwise(linalg.Solve(), "(m,m),(m,k)->(m,k)")(symmetrized(a), b),
                       [RNG.normal(size=(2, 1, 3, 3)), RNG.normal(size=(3, 3, 2))]),
    "triangular-solve": (lambda a, b: Blockwise(linalg.Solve("gen", True, triangular=True), "(m,m),(m)->(m)")(
        symmetrized(a), b), [RNG.normal(size=(2, 3, 3)), RNG.normal(size=(2, 3))]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_finite_differences(name):
    fn, pt = CASES[name]
    pt = [p.copy() for p in pt]
    # static core sizes: symmetrized's eye needs the matrix size
    static = [TensorType("float64", (None,) * (p.ndim - 2) + p.shape[-2:]) if p.ndim >= 2 else None for p in pt]

    def with_static(*xs):
        return fn(*[et.specify_shape(x, (None,) * (x.ndim - 2) + s.shape[-2:]) if s is not None else x
                    for x, s in zip(xs, static)])

    verify_grad(with_static, pt, n_tests=1, rng=np.random.default_rng(1))


def test_gradient_of_det_matches_a_numpy_loop():
    a = TensorType("float64", (None, None, 3, 3))("a")
    g = eg.grad(Blockwise(linalg.Det())(a).sum(), a)
    value = RNG.normal(size=(2, 4, 3, 3))
    expected = np.stack([np.linalg.det(m) * np.linalg.inv(m).T for m in value.reshape(-1, 3, 3)]).reshape(value.shape)
    np.testing.assert_allclose(eg.function([a], g)(value), expected)


def test_a_matrix_shared_by_the_batch_gets_the_sum_of_its_cotangents():
    a, b = TensorType("float64", (3, 3))("a"), TensorType("float64", (None, 3))("b")
    x = Blockwise(linalg.Solve(), "(m,m),(m)->(m)")(a, b)
    ga = eg.grad(x.sum(), a)
    assert ga.type.shape == (3, 3)
    av, bv = spd(), RNG.normal(size=(5, 3))
    # d(sum x)/dA = -A^-T 1 x^T per right-hand side, summed over them
    ones_solved = np.linalg.solve(av.T, np.ones(3))
    expected = sum(-np.outer(ones_solved, np.linalg.solve(av, row)) for row in bv)
    np.testing.assert_allclose(eg.function([a, b], ga)(av, bv), expected)


def test_a_batch_axis_of_size_one_unknown_until_run_time_is_summed_back():
    a, b = TensorType("float64", (None, 3, 3))("a"), TensorType("float64", (None, 3))("b")
    x = Blockwise(linalg.Solve(), "(m,m),(m)->(m)")(a, b)
    ga = eg.grad(x.sum(), a)
    av, bv = spd(1), RNG.normal(size=(4, 3))
    got = eg.function([a, b], ga)(av, bv)
    expected = eg.function([a, b], eg.grad(x.sum(), a))(np.repeat(av, 4, axis=0), bv).sum(axis=0, keepdims=True)
    assert got.shape == (1, 3, 3)
    np.testing.assert_allclose(got, expected)


class ScaledTrace(Op):
    """``k * trace(a)`` of one matrix, with its own L_op: a user op's gradient, vectorized."""

    __props__ = ("k",)
    gufunc_signature = "(m,m)->()"

    def __init__(self, k=2.0):
        self.k = k

    def make_node(self, a):
        a = et.as_tensor_variable(a)
        return Apply(self, [a], [TensorType("float64", ())()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(self.k * np.trace(inputs[0]))

    def infer_shape(self, fgraph, node, shapes):
        return [()]

    def L_op(self, inputs, outputs, output_grads):
        (a,), (g,) = inputs, output_grads
        return [self.k * g * et.eye(a.shape[0], a.shape[1])]


def test_a_user_ops_own_gradient_is_vectorized():
    verify_grad(lambda a: Blockwise(ScaledTrace(3.0))(a), [RNG.normal(size=(2, 4, 4))], n_tests=1,
                rng=np.random.default_rng(1))


class NoGradient(Op):
    __props__ = ()
    gufunc_signature = "(n)->(n)"

    def make_node(self, a):
        a = et.as_tensor_variable(a)
        return Apply(self, [a], [a.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0].copy()


def test_a_core_op_without_a_gradient_says_so():
    a = et.dmatrix("a")
    with pytest.raises(NotImplementedError, match="NoGradient has no gradient"):
        eg.grad(Blockwise(NoGradient())(a).sum(), a)


def test_an_output_without_a_cotangent_is_disconnected():
    a = TensorType("float64", (None, 3, 3))("a")
    sign, logdet = Blockwise(linalg.SlogDet())(a)
    g = eg.grad(logdet.sum(), a)
    value = spd(2)
    np.testing.assert_allclose(eg.function([a], g)(value), np.linalg.inv(value).transpose(0, 2, 1))
    assert not isinstance(g.type, DisconnectedType)


def test_gradient_through_vectorize():
    f = vectorize(lambda x: et.exp(x) / et.sum(et.exp(x)), signature="(a)->(a)")
    verify_grad(lambda x: f(x)[:, 0], [RNG.normal(size=(3, 4))], n_tests=1, rng=np.random.default_rng(1))


@st.composite
def batch_pair(draw):
    """Two batch shapes that broadcast (sizes 1 or the axis' size, either may be shorter), and per
    axis whether its size is static."""
    sizes = draw(st.lists(st.integers(2, 3), min_size=0, max_size=3))
    shapes = []
    for _ in range(2):
        n = draw(st.integers(0, len(sizes)))
        shape = tuple(draw(st.sampled_from([1, s])) for s in sizes[len(sizes) - n:])
        static = tuple(s if draw(st.booleans()) else None for s in shape)
        shapes.append((shape, static))
    return shapes


def solve_cotangents(av, bv, w):
    """d sum(w * solve(a, b)) for each block, summed onto the blocks of a and b they came from."""
    batch = np.broadcast_shapes(av.shape[:-2], bv.shape[:-1])
    ga, gb = np.zeros_like(av), np.zeros_like(bv)
    for i in np.ndindex(*batch):
        ia = tuple(0 if n == 1 else k for n, k in zip(av.shape[:-2], i[len(i) - av.ndim + 2:]))
        ib = tuple(0 if n == 1 else k for n, k in zip(bv.shape[:-1], i[len(i) - bv.ndim + 1:]))
        a, b = av[ia], bv[ib]
        u = np.linalg.solve(a.T, w[i])
        ga[ia] -= np.outer(u, np.linalg.solve(a, b))
        gb[ib] += u
    return ga, gb


def check_broadcast_gradient(pair):
    (a_batch, a_static), (b_batch, b_static) = pair
    a, b = TensorType("float64", a_static + (3, 3))("a"), TensorType("float64", b_static + (3,))("b")
    x = Blockwise(linalg.Solve(), "(m,m),(m)->(m)")(a, b)
    w = TensorType("float64", (None,) * x.ndim)("w")
    grads = eg.grad((x * w).sum(), [a, b])
    av, bv = spd(*a_batch), RNG.normal(size=(*b_batch, 3))
    wv = RNG.normal(size=np.broadcast_shapes(a_batch, b_batch) + (3,))
    got = eg.function([a, b, w], grads)(av, bv, wv)
    for g, expected in zip(got, solve_cotangents(av, bv, wv)):
        assert g.shape == expected.shape
        np.testing.assert_allclose(g, expected, rtol=1e-7, atol=1e-10)


@settings(max_examples=4, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(pair=batch_pair())
def test_broadcast_batches_get_their_summed_cotangents(pair):
    check_broadcast_gradient(pair)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pair=batch_pair())
def test_broadcast_batches_get_their_summed_cotangents_many(pair):
    check_broadcast_gradient(pair)


def test_rop_is_the_jacobian_times_a_direction():
    a, b = TensorType("float64", (None, 3, 3))("a"), TensorType("float64", (None, 3))("b")
    v = TensorType("float64", (None, 3))("v")
    x = Blockwise(linalg.Solve(), "(m,m),(m)->(m)")(a, b)
    av, bv, vv = spd(2), RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    got = eg.function([a, b, v], eg.Rop(x, b, v))(av, bv, vv)
    np.testing.assert_allclose(got, np.linalg.solve(av, vv[..., None])[..., 0])


def test_second_derivatives_go_through_the_vectorized_gradient():
    rng = np.random.default_rng(3)
    solve = Blockwise(linalg.Solve(), "(m,m),(m)->(m)")
    verify_grad(lambda a, b: eg.grad((solve(a, b) ** 2).sum(), a), [spd(2), rng.normal(size=(2, 3))],
                n_tests=1, rng=rng)
    matvec = Blockwise(et.MatMul(), "(m,k),(k)->(m)")
    verify_grad(lambda a: eg.grad(matvec(a, a[..., 0]).sum() ** 2, a), [rng.normal(size=(2, 3, 3))],
                n_tests=1, rng=rng)
