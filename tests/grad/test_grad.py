"""Gradients: every differentiable op against finite differences, Theano's integer rules,
disconnected and null gradients, known_grads, Lop/Rop, jacobian/hessian, user ops."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from op_cases import CASES, split_inputs
from same_type_op import SameTypeOp

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.grad import vjps

DIFFERENTIABLE = [c for c in CASES if c.differentiable]


@pytest.mark.parametrize("case", DIFFERENTIABLE, ids=[c.name for c in DIFFERENTIABLE])
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_verify_grad_of_every_differentiable_op(case, data):
    arrays, extra = split_inputs(case, data.draw(case.inputs, label="inputs"))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31), label="seed"))
    # tiny jitter moves points off ties (max, abs, maximum...) where no derivative exists
    arrays = [a + 1e-3 * rng.standard_normal(a.shape) if a.dtype.kind == "f" else a for a in arrays]
    positions = case.differentiable

    def fun(*xs):
        full = list(arrays)
        consts = [et.constant(a) for a in arrays]
        for p, x in zip(positions, xs):
            full[p] = x
        return case.build(*[full[i] if i in positions else consts[i] for i in range(len(arrays))], *extra)

    eg.verify_grad(fun, [arrays[p] for p in positions], n_tests=1, rng=rng)


def test_every_differentiable_op_has_a_vjp():
    missing = [n for n in et.SCALAR_OPS if n not in vjps.VJPS and n not in vjps.NONDIFFERENTIABLE]
    missing += [n for n in et.REDUCTIONS if n not in vjps.VJPS and n not in vjps.NONDIFFERENTIABLE]
    op_classes = [et.Cast, et.DimShuffle, et.MatMul, et.Softmax, et.Shape, et.SpecifyShape, et.Reshape,
                  et.Alloc, et.ARange, et.MakeVector, et.Join, et.Subtensor, et.AdvancedSubtensor,
                  et.IncSubtensor, et.AdvancedIncSubtensor, et.SumToShape]
    missing += [c.__name__ for c in op_classes if c.__name__ not in vjps.VJPS and c.__name__ not in vjps.NONDIFFERENTIABLE]
    assert missing == []


def test_gradient_graphs_compile_and_simplify():
    x, w, y = et.dmatrix("x"), et.dvector("w"), et.dvector("y")
    p = et.sigmoid(x @ w)
    loss = -(y * et.log(p) + (1 - y) * et.log(1 - p)).mean()
    gw = eg.grad(loss, w)
    f = eg.function([x, w, y], gw)
    assert len(f.stages.optimized.apply_nodes) < len(f.stages.graph.apply_nodes)
    rng = np.random.default_rng(0)
    X, W, Y = rng.normal(size=(6, 3)), rng.normal(size=3), (rng.random(6) > 0.5) * 1.0
    P = 1 / (1 + np.exp(-X @ W))
    np.testing.assert_allclose(f(X, W, Y), X.T @ (P - Y) / 6, rtol=1e-9)


# -- Aesara's five integer-gradient examples ------------------------------------------------------
def test_seed_example_1_dot_of_integers_has_zero_gradient():
    x, y = et.ivector("x"), et.ivector("y")
    cost = et.cast(et.dot(x, y), "float64")  # the dot itself is integer-valued
    gx, gy = eg.grad(cost, [x, y])
    assert gx.dtype == "float64" and gy.dtype == "float64"
    f = eg.function([x, y], [gx, gy])
    a, b = f(np.array([1, 2], dtype="int32"), np.array([3, 4], dtype="int32"))
    np.testing.assert_array_equal(a, [0, 0]) and np.testing.assert_array_equal(b, [0, 0])


def test_seed_example_2_float_dot_integer_is_an_ordinary_gradient():
    x, y = et.dvector("x"), et.ivector("y")
    gx, gy = eg.grad(et.dot(x, y), [x, y])
    assert gy.dtype == "float64"
    f = eg.function([x, y], [gx, gy])
    a, b = f(np.array([1.5, 2.5]), np.array([3, 4], dtype="int32"))
    np.testing.assert_array_equal(a, [3, 4]) and np.testing.assert_array_equal(b, [1.5, 2.5])


def test_seed_example_3_argmax_has_zero_gradient():
    x = et.dmatrix("x")
    g = eg.grad(et.cast(et.argmax(x, axis=1), "float64").sum(), x)
    np.testing.assert_array_equal(eg.function([x], g)(np.ones((2, 3))), np.zeros((2, 3)))


def test_seed_example_4_alloc_shape_is_disconnected():
    x, n = et.dscalar("x"), et.lscalar("n")
    y = et.alloc(x, n)
    with pytest.raises(eg.DisconnectedInputError):
        eg.grad(y.sum(), n)
    assert eg.function([x, n], eg.grad(y.sum(), x))(2.0, 5) == 5.0


def test_seed_example_5_int_cast_blocks_but_float_of_int_passes():
    x, i = et.dscalar("x"), et.lscalar("i")
    f_of_x = et.cast(x, "int64")
    cost = 0.5 * et.cast(f_of_x, "float64") + 0.5 * et.cast(i, "float64")
    gx, gi = eg.grad(cost, [x, i])
    assert gi.dtype == "float64"
    values = eg.function([x, i], [gx, gi])(3.7, 2)
    assert values[0] == 0.0 and values[1] == 0.5


# -- disconnected and null gradients ---------------------------------------------------------------
def test_return_disconnected_modes():
    a, b = et.dscalar("a"), et.dscalar("b")
    with pytest.raises(eg.DisconnectedInputError, match="b"):
        eg.grad(a ** 2, b)
    with pytest.warns(UserWarning, match="does not depend"):
        eg.grad(a ** 2, b, disconnected_inputs="warn")
    zero = eg.grad(a ** 2, b, disconnected_inputs="ignore")
    assert eg.function([b], zero)(3.0) == 0.0
    assert eg.grad(a ** 2, b, disconnected_inputs="ignore", return_disconnected="none") is None
    d = eg.grad(a ** 2, b, disconnected_inputs="ignore", return_disconnected="disconnected")
    assert isinstance(d.type, eg.DisconnectedType)
    with pytest.raises(TypeError, match="disconnected"):
        eg.function([b], d)


class Floor2(SameTypeOp):
    def perform(self, node, inputs, out):
        out[0][0] = np.floor(inputs[0])

    def grad(self, inputs, output_grads):
        return [eg.grad_undefined(self, 0, inputs[0], "floor is not differentiable here")]


def test_null_gradients_modes_and_compiling_a_null_graph():
    s = et.dscalar("s")
    with pytest.raises(eg.NullTypeGradError, match="floor is not differentiable here"):
        eg.grad(Floor2()(s), s)
    g = eg.grad(Floor2()(s), s, null_gradients="return")
    assert isinstance(g.type, eg.NullType)
    with pytest.raises(TypeError, match="undefined gradient.*floor is not differentiable"):
        eg.function([s], g)
    g2 = eg.grad_not_implemented(Floor2(), 0, s, "todo")
    assert "not implemented" in g2.type.why_null


class Cube(SameTypeOp):
    """A user op with its own grad (Aesara's ``Op.grad``)."""

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] ** 3

    def grad(self, inputs, output_grads):
        return [3 * inputs[0] ** 2 * output_grads[0]]


class NoGrad(SameTypeOp):
    def perform(self, node, inputs, out):
        out[0][0] = inputs[0]


def test_user_op_gradients():
    x = et.dvector("x")
    g = eg.grad(Cube()(x).sum(), x)
    np.testing.assert_allclose(eg.function([x], g)(np.array([1.0, 2.0])), [3.0, 12.0])
    eg.verify_grad(lambda v: Cube()(v), [np.array([0.5, -1.5])])
    with pytest.raises(NotImplementedError, match="NoGrad has no gradient"):
        eg.grad(NoGrad()(x).sum(), x)


def test_cost_must_be_scalar():
    with pytest.raises(TypeError, match="Cost must be a scalar"):
        eg.grad(et.dvector("v"), et.dvector("w"))


def test_known_grads_and_consider_constant():
    x = et.dvector("x")
    y = et.exp(x)
    g = eg.grad(None, x, known_grads={y: et.ones_like(y) * 2.0})
    np.testing.assert_allclose(eg.function([x], g)(np.zeros(2)), [2.0, 2.0])
    z = x * y
    g_const = eg.grad(z.sum(), x, consider_constant=[y])
    np.testing.assert_allclose(eg.function([x], g_const)(np.zeros(2)), [1.0, 1.0])
    g_zero = eg.grad((x * eg.zero_grad(y)).sum(), x)
    np.testing.assert_allclose(eg.function([x], g_zero)(np.zeros(2)), [1.0, 1.0])
    with pytest.raises(eg.DisconnectedInputError):
        eg.grad(eg.disconnected_grad(x).sum(), x)
    assert eg.function([x], eg.zero_grad(x) * 3.0)(np.ones(1))[0] == 3.0


def test_gradients_accumulate_over_several_uses_and_unbroadcast():
    x, m = et.dvector("x"), et.dmatrix("m")
    cost = (x * x).sum() + (m + x).sum()  # x broadcast over m's rows
    gx, gm = eg.grad(cost, [x, m])
    a, b = eg.function([x, m], [gx, gm])(np.array([1.0, 2.0]), np.ones((3, 2)))
    np.testing.assert_allclose(a, [2 + 3, 4 + 3])
    np.testing.assert_allclose(b, np.ones((3, 2)))
    r = et.dmatrix("r")  # a runtime (1, n) matrix broadcast against (3, n): decided at run time
    g = eg.grad((r * m).sum(), r)
    np.testing.assert_allclose(eg.function([r, m], g)(np.ones((1, 2)), np.ones((3, 2))), [[3.0, 3.0]])


def test_lop_rop_jacobian_hessian():
    u = et.TensorType("float64", (2,))("u")
    v = et.dvector("v")
    point = np.array([1.0, 2.0])
    J = eg.jacobian(u ** 2, u)
    np.testing.assert_allclose(eg.function([u], J)(point), np.diag([2.0, 4.0]))
    H = eg.hessian((u ** 3).sum(), u)
    np.testing.assert_allclose(eg.function([u], H)(point), np.diag([6.0, 12.0]))
    rop = eg.Rop(u ** 2, u, v)
    np.testing.assert_allclose(eg.function([u, v], rop)(point, np.array([1.0, 1.0])), [2.0, 4.0])
    lop = eg.Lop(u ** 2, u, v)
    np.testing.assert_allclose(eg.function([u, v], lop)(point, np.array([1.0, 1.0])), [2.0, 4.0])
    A = et.dmatrix("A")
    rop2 = eg.Rop(A @ u, u, v)
    a = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(eg.function([A, u, v], rop2)(a, point, np.array([1.0, -1.0])), a @ [1.0, -1.0])
    w = et.dmatrix("w")  # a matrix expression: PyTensor's shape, tests/grad/test_jacobian_shapes.py
    assert eg.function([w], eg.jacobian(w ** 2, w))(np.ones((2, 3))).shape == (2, 3, 2, 3)


class CubeWithRop(Cube):
    calls = 0

    def R_op(self, inputs, eval_points):
        CubeWithRop.calls += 1
        return [3 * inputs[0] ** 2 * eval_points[0]]


def test_rop_uses_the_ops_own_r_op_when_every_op_has_one():
    x, v = et.dvector("x"), et.dvector("v")
    CubeWithRop.calls = 0
    r = eg.Rop(CubeWithRop()(CubeWithRop()(x)), x, v)
    assert CubeWithRop.calls == 2
    point, direction = np.array([0.5, 2.0]), np.array([1.0, -1.0])
    np.testing.assert_allclose(eg.function([x, v], r)(point, direction), 9 * point ** 8 * direction)
    r2 = eg.Rop(et.exp(CubeWithRop()(x)), x, v)  # exp has no R_op: the double L-op is used
    np.testing.assert_allclose(eg.function([x, v], r2)(point, direction),
                               np.exp(point ** 3) * 3 * point ** 2 * direction)


def test_rop_use_op_pushforward_chooses_the_r_ops_or_the_double_lop():
    x, v = et.dvector("x"), et.dvector("v")
    point, direction = np.array([0.5, 2.0]), np.array([1.0, -1.0])
    want = 9 * point ** 8 * direction
    CubeWithRop.calls = 0
    through_lop = eg.Rop(CubeWithRop()(CubeWithRop()(x)), x, v, use_op_pushforward=False)
    assert CubeWithRop.calls == 0
    np.testing.assert_allclose(eg.function([x, v], through_lop)(point, direction), want)
    forward = eg.Rop(CubeWithRop()(CubeWithRop()(x)), x, v, use_op_pushforward=True)
    assert CubeWithRop.calls == 2
    np.testing.assert_allclose(eg.function([x, v], forward)(point, direction), want)
    # exp has no R_op: the double L-op, the same product
    through_exp = eg.Rop(et.exp(CubeWithRop()(x)), x, v, use_op_pushforward=True)
    np.testing.assert_allclose(eg.function([x, v], through_exp)(point, direction),
                               np.exp(point ** 3) * 3 * point ** 2 * direction)


def test_rop_of_a_list_is_a_list_and_eval_points_must_match_wrt():
    m, v, dm, dv = et.dmatrix("m"), et.dvector("v"), et.dmatrix("dm"), et.dvector("dv")
    outs = eg.Rop([m, v, m + v], [m, v], [dm, dv])
    assert isinstance(outs, list) and len(outs) == 3
    assert isinstance(eg.Rop((m, v), [m, v], [dm, dv]), tuple)
    a, b, da, db = np.ones((3, 2)), np.arange(2.0), np.full((3, 2), 2.0), np.array([1.0, -1.0])
    got = eg.function([m, v, dm, dv], outs)(a, b, da, db)
    for g, w in zip(got, [da, db, da + db]):
        np.testing.assert_allclose(g, w)
    with pytest.raises(ValueError, match="must have the dimensions of"):
        eg.Rop(et.as_tensor_variable(0.0), [et.dmatrix()], [et.dvector()])


def test_verify_grad_reports_mismatches():
    class WrongGrad(Cube):
        def grad(self, inputs, output_grads):
            return [2 * inputs[0] ** 2 * output_grads[0]]

    with pytest.raises(eg.GradientError, match="analytic .* numeric"):
        eg.verify_grad(lambda v: WrongGrad()(v), [np.array([0.5, 1.5])])
