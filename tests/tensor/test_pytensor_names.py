"""PyTensor's names and arguments that eqgraph offers under PyTensor's spelling: config.cast_policy,
Join()(axis, ...), verify_grad(mode=), jacobian(vectorize=), hessian_vector_product, and the
elementwise, shape and indexing functions. Values, dtypes and shapes against NumPy, gradients
against finite differences, and clear errors."""

import math
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.grad import hessian_vector_product
from eqgraph.tensor.basic import upcast
from eqgraph.tensor.join import join
from eqgraph.testing import verify_grad

RNG = np.random.default_rng(0)


def run(inputs, out, *values):
    return eg.function(inputs, out)(*values)


# -- config.cast_policy ---------------------------------------------------------------------------
def test_cast_policy_defaults_to_pytensors_custom_and_refuses_others():
    assert eg.config.cast_policy == "custom"
    with pytest.raises(ValueError, match="cast_policy must be one of custom, numpy\\+floatX"):
        eg.config.cast_policy = "numpy"


@pytest.mark.parametrize("policy, expected", [("custom", "int64"), ("numpy+floatX", str(np.arange(np.int32(1)).dtype))])
def test_arange_of_int32_bounds_follows_the_cast_policy(policy, expected):
    with eg.config.change_flags(cast_policy=policy):
        start, stop, step = et.iscalar(), et.iscalar(), et.iscalar()
        out = et.arange(start, stop, step)
        assert out.dtype == expected
        np.testing.assert_array_equal(run([start, stop, step], out, 10, 2, -2), np.arange(10, 2, -2))


@pytest.mark.parametrize("policy, floatx, expected", [
    ("custom", "float64", "float32"),                  # PyTensor's upcast of the bounds
    ("numpy+floatX", "float64", "float64"),            # np.arange of float32 bounds
    ("numpy+floatX", "float32", "float32"),            # ... kept in floatX
])
def test_arange_of_float32_bounds_follows_the_cast_policy(policy, floatx, expected):
    with eg.config.change_flags(cast_policy=policy, floatX=floatx):
        stop = et.fscalar()
        out = et.arange(stop)
        assert out.dtype == expected
        np.testing.assert_allclose(run([stop], out, np.float32(3.5)), np.arange(3.5))


def test_upcast_keeps_floatx_only_under_numpy_floatx():
    assert upcast("int32", "float32") == "float64"
    with eg.config.change_flags(cast_policy="numpy+floatX", floatX="float32"):
        assert upcast("int32", "float32") == "float32"
        assert upcast("int32", "float64") == "float64"     # an explicit float64 wins
        assert upcast("int8", "int16") == "int16"
    with eg.config.change_flags(cast_policy="numpy+floatX", floatX="float16"):
        assert upcast("int8", "float16") == "float16"
        assert upcast("float32", "float16") == "float32"


def test_python_ints_stay_weak_under_both_policies():
    """PyTensor's "custom" would make 100 an int8 and 100 + 100 wrap to -56; eqgraph's weak
    constants take their partner's dtype, so the sum is right under either policy."""
    for policy in ("custom", "numpy+floatX"):
        with eg.config.change_flags(cast_policy=policy):
            x = et.bscalar("x")
            assert (x + 1).dtype == "int8"
            assert et.constant(100).eval() + 100 == 200


# -- Join, join ------------------------------------------------------------------------------------
def test_join_op_takes_the_axis_as_first_input():
    x, y = et.dmatrix("x"), et.dmatrix("y")
    a, b = RNG.random((2, 3)), RNG.random((2, 4))
    out = et.Join()(1, x, y)
    np.testing.assert_array_equal(run([x, y], out, a, b), np.concatenate([a, b], axis=1))
    np.testing.assert_array_equal(run([x, y], join(-1, x, y), a, b), np.concatenate([a, b], axis=-1))
    assert join(0, x) is x


def test_join_along_a_symbolic_axis_checks_it_when_run():
    x, axis = et.dmatrix("x"), et.lscalar("axis")
    value = RNG.random((2, 3))
    f = eg.function([x, axis], join(axis, x, x * 2))
    for a in (0, 1, -1, -2):
        np.testing.assert_array_equal(f(value, a), np.concatenate([value, value * 2], axis=a))
    with pytest.raises(ValueError, match="axis -3 is out of bounds"):
        f(value, -3)
    with pytest.raises(TypeError, match="axis must be an integer"):
        join(et.dscalar(), x, x)


def test_join_and_stack_errors_say_what_is_expected():
    with pytest.raises(TypeError, match="same number of dimensions"):
        et.Join()(0, et.dvector(), et.dmatrix())
    with pytest.raises(ValueError, match="must match exactly"):
        join(0, et.ones((2, 3)), et.ones((2, 5)))
    with pytest.raises(ValueError, match="No tensor arguments provided"):
        et.stack([])
    with pytest.raises(IndexError, match="axis 4 is out of bounds"):
        et.stack([et.dvector(), et.dvector()], 4)
    with pytest.raises(TypeError, match="should be a Sequence"):
        et.stack(et.dvector(), et.dvector())


# -- verify_grad, jacobian, hessian_vector_product -------------------------------------------------
def test_verify_grad_takes_pytensors_arguments():
    verify_grad(et.tanh, [RNG.random(3)], rng=np.random.default_rng(1), mode="FAST_RUN", no_debug_ref=False)
    verify_grad(et.tanh, [RNG.random(3).astype("float32")], rng=np.random.default_rng(1),
                cast_to_output_type=True, out_type="float32")
    with pytest.raises(TypeError, match="out_type"):
        verify_grad(et.tanh, [RNG.random(3)], out_type="float32")
    with pytest.raises(ValueError, match="mode must be one of"):
        verify_grad(et.tanh, [RNG.random(3)], mode="NO_SUCH_MODE")


def test_verify_grad_with_a_mode_still_catches_a_wrong_gradient():
    # zero_grad hides one factor's derivative: the symbolic gradient of v * v is then v, not 2 v
    with pytest.raises(eg.GradientError):
        verify_grad(lambda v: eg.zero_grad(v) * v, [np.array([0.3, 0.6])], rng=np.random.default_rng(0),
                    mode="FAST_RUN")


@pytest.mark.parametrize("shape", [(6,), (2, 3)])
def test_jacobian_vectorize_matches_the_row_by_row_jacobian(shape):
    v = et.dvector("v")
    expression = et.reshape(et.exp(et.concatenate([v, v * v])) * v.sum(), shape)
    value = RNG.random(3)
    looped, batched = run([v], [eg.jacobian(expression, v), eg.jacobian(expression, v, vectorize=True)], value)
    assert batched.shape == (*shape, 3)
    np.testing.assert_allclose(batched, looped, rtol=1e-12)


def test_jacobian_vectorize_of_a_disconnected_input_is_zeros():
    v, w = et.dvector("v"), et.dvector("w")
    jv, jw = eg.jacobian(et.exp(v), [v, w], vectorize=True, disconnected_inputs="ignore")
    out_v, out_w = eg.function([v, w], [jv, jw], on_unused_input="ignore")(np.zeros(2), np.zeros(4))
    np.testing.assert_array_equal(out_v, np.eye(2))
    np.testing.assert_array_equal(out_w, np.zeros((2, 4)))


def test_hessian_vector_product_is_the_hessian_times_p():
    v, p = et.dvector("v"), et.dvector("p")
    cost = (v ** 3).sum() + v[0] * v[1]
    value, direction = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    hp = run([v, p], hessian_vector_product(cost, v, p), value, direction)
    hessian = run([v], eg.hessian(cost, v), value)
    np.testing.assert_allclose(hp, hessian @ direction)
    both = hessian_vector_product(cost, [v], [p])
    assert isinstance(both, list) and len(both) == 1


# -- constants ---------------------------------------------------------------------------------------
def test_get_underlying_scalar_constant_value_takes_pytensors_keywords():
    three = et.constant(3.0)
    assert et.get_underlying_scalar_constant_value(three, only_process_constants=True) == 3.0
    cast = et.cast(three, "float32")
    assert et.get_underlying_scalar_constant_value(cast) == 3.0
    with pytest.raises(et.NotScalarConstantError):
        et.get_underlying_scalar_constant_value(cast, only_process_constants=True)
    with pytest.raises(et.NotScalarConstantError):
        et.get_underlying_scalar_constant_value(cast, elemwise=False)
    x = et.dscalar("x")
    assert et.get_underlying_scalar_constant_value(x, raise_not_constant=False) is x
    assert et.get_scalar_constant_value(x, raise_not_constant=False) is x


def test_get_underlying_scalar_constant_value_folds_elementwise_ops_of_constants():
    c = et.constant(np.float64(0.3))
    cases = [(c + 1, 1.3), (c - 1, -0.7), (c * 1.2, 0.36), (c < 0.5, True), (et.second(c, 0.4), 0.4),
             (9 + et.as_tensor([1.0]).shape[0], 10), (et.exp(et.constant(np.float32(0.0))), np.float32(1.0))]
    for v, want in cases:
        got = et.get_underlying_scalar_constant_value(v)
        assert got == pytest.approx(want) and got.dtype == v.dtype
    x = et.dscalar("x")
    with pytest.raises(et.NotScalarConstantError):
        et.get_underlying_scalar_constant_value(x + 1)
    # second(v, c) is c broadcast to v's shape: every entry is c, whatever v's shape
    assert et.get_underlying_scalar_constant_value(et.second(et.dvector("v"), c)) == 0.3
    with pytest.raises(et.NotScalarConstantError):
        et.get_underlying_scalar_constant_value(et.second(c, et.dvector("v")))
    with pytest.raises(et.NotScalarConstantError, match="elemwise=False"):
        et.get_underlying_scalar_constant_value(c + 1, elemwise=False)


def test_get_underlying_scalar_constant_value_gives_a_0d_array_of_the_dtype():
    for v, want in [(et.as_tensor(10), np.int64(10)), (np.array(10, dtype="int8"), np.int8(10)),
                    (et.stack([1, 2, 3])[1], np.int64(2)), (et.as_tensor_variable(np.full(3, 2.5)), 2.5),
                    (et.dvector("v").shape[0] * 0 + 4, None)]:
        if want is None:
            with pytest.raises(et.NotScalarConstantError):
                et.get_underlying_scalar_constant_value(v)
            continue
        got = et.get_underlying_scalar_constant_value(v)
        assert isinstance(got, np.ndarray) and got.shape == () and got == want
        assert got.dtype == np.asarray(want).dtype
    assert isinstance(et.get_scalar_constant_value(et.as_tensor(10)), np.integer)


def test_constant_value_and_variable_methods():
    c = et.constant(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(c.value, c.data)
    np.testing.assert_array_equal(c.take([2, 0]).eval(), np.take(c.data, [2, 0]))
    np.testing.assert_array_equal(c.take([2, 0], axis=1).eval(), np.take(c.data, [2, 0], axis=1))
    zeros = c.zeros_like()
    assert zeros.dtype == "float64"
    np.testing.assert_array_equal(zeros.eval(), np.zeros((2, 3)))


# -- elementwise compositions -------------------------------------------------------------------------
ODD = np.array([-2.5, -1.5, -0.5, -0.0, 0.0, 0.49999999999999994, 0.5, 1.5, 2.5, 3.7, -3.7, np.inf, -np.inf, np.nan])


def _round_half_up(v: float) -> float:
    """C's round(): exact decimal rounding of halves away from zero, the sign of zero kept."""
    if not math.isfinite(v):
        return v
    return math.copysign(float(Decimal(v).quantize(Decimal(1), rounding=ROUND_HALF_UP)), v)


@pytest.mark.parametrize("name, reference", [
    ("trunc", np.trunc),
    ("round_half_to_even", np.round),
    ("round_half_away_from_zero", lambda a: np.array([_round_half_up(v) for v in a])),
    ("deg2rad", np.deg2rad),
    ("rad2deg", np.rad2deg),
    ("reciprocal", np.reciprocal),
])
def test_elementwise_names_match_numpy(name, reference):
    x = et.dvector("x")
    with np.errstate(divide="ignore"):
        expected = reference(ODD)
    got = run([x], getattr(et, name)(x), ODD)
    np.testing.assert_array_equal(got, expected)
    assert np.array_equal(np.signbit(got), np.signbit(expected))  # -0.0 where NumPy gives it


@pytest.mark.parametrize("name", ["deg2rad", "rad2deg", "reciprocal"])
def test_elementwise_gradients(name):
    verify_grad(getattr(et, name), [RNG.random(4) + 0.5], rng=np.random.default_rng(2))


@pytest.mark.parametrize("name", ["trunc", "round_half_to_even", "round_half_away_from_zero"])
def test_rounding_gradients_are_zero(name):
    x = et.dvector("x")
    np.testing.assert_array_equal(run([x], eg.grad(getattr(et, name)(x).sum(), x), np.array([0.3, 1.7])), 0.0)


def test_ceil_intdiv_matches_ceil_of_the_quotient():
    a, b = et.lvector("a"), et.lvector("b")
    av = np.array([7, -7, 7, -7, 6, 0, 1])
    bv = np.array([2, 2, -2, -2, 3, 5, 7])
    out = et.ceil_intdiv(a, b)
    assert out.dtype == "int64"
    np.testing.assert_array_equal(run([a, b], out, av, bv), -(-av // bv))


def test_dense_dot_is_dot():
    a, b = et.dmatrix("a"), et.dvector("b")
    av, bv = RNG.random((2, 3)), RNG.random(3)
    np.testing.assert_allclose(run([a, b], et.dense_dot(a, b), av, bv), av @ bv)


# -- shapes and indexing ----------------------------------------------------------------------------
def test_swapaxes_and_moveaxis_match_numpy():
    x = et.dtensor3("x")
    value = RNG.random((2, 3, 4))
    np.testing.assert_array_equal(run([x], et.swapaxes(x, 0, -1), value), np.swapaxes(value, 0, -1))
    for source, dest in [(0, -1), ([0, 1], [2, 0]), (2, 0)]:
        np.testing.assert_array_equal(run([x], et.moveaxis(x, source, dest), value), np.moveaxis(value, source, dest))
    with pytest.raises(np.exceptions.AxisError, match="swapaxes: axis 3"):
        et.swapaxes(x, 0, 3)
    with pytest.raises(ValueError, match="same number"):
        et.moveaxis(x, [0, 1], [0])


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)])
def test_flip_matches_numpy(axis):
    x = et.dmatrix("x")
    value = RNG.random((3, 4))
    np.testing.assert_array_equal(run([x], et.flip(x, axis), value), np.flip(value, axis))


def test_flip_gradient():
    verify_grad(lambda x: et.flip(x, 0) * et.arange(3.0), [RNG.random(3)], rng=np.random.default_rng(3))


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_take_matches_numpy(mode):
    x, i = et.dmatrix("x"), et.lvector("i")
    value = RNG.random((3, 4))
    index = np.array([0, 2, 5, -1]) if mode != "raise" else np.array([0, 2, -1])
    np.testing.assert_array_equal(run([x, i], et.take(x, i, axis=1, mode=mode), value, index),
                                  np.take(value, index, axis=1, mode=mode))
    np.testing.assert_array_equal(run([x, i], et.take(x, i, mode=mode), value, index),
                                  np.take(value, index, mode=mode))


def test_take_refuses_float_indices():
    with pytest.raises(TypeError, match="take: the indices must be integers"):
        et.take(et.dvector(), et.dvector())


def test_advanced_subtensor_functions():
    x, i, y = et.dmatrix("x"), et.lvector("i"), et.dvector("y")
    value, index = RNG.random((4, 3)), np.array([3, 0, 3])
    np.testing.assert_array_equal(run([x, i], et.advanced_subtensor1(x, i), value, index), value[index])
    np.testing.assert_array_equal(run([x, i], et.advanced_subtensor(x, i, 1), value, index), value[index, 1])
    expected = value.copy()
    np.add.at(expected, (index, 1), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(run([x, i, y], et.advanced_inc_subtensor(x, y, i, 1), value, index,
                                      np.array([1.0, 2.0, 3.0])), expected)
    with pytest.raises(TypeError, match="vector of integers"):
        et.advanced_subtensor1(x, et.dvector())


def test_inc_subtensor_set_instead_of_inc():
    x, y = et.dvector("x"), et.dscalar("y")
    out = et.inc_subtensor(x[1:3], y, set_instead_of_inc=True)
    np.testing.assert_array_equal(run([x, y], out, np.zeros(4) + 1, 5.0), [1.0, 5.0, 5.0, 1.0])
    with pytest.raises(ValueError, match="inplace"):
        et.inc_subtensor(x[1:3], y, inplace=True)


# -- extra ops --------------------------------------------------------------------------------------
def test_broadcast_shape_matches_numpy():
    a, b = et.dmatrix("a"), et.dtensor3("b")
    shape = et.broadcast_shape(a, b)
    values = eg.function([a, b], list(shape))(np.zeros((1, 3)), np.zeros((2, 4, 1)))
    assert tuple(int(v) for v in values) == np.broadcast_shapes((1, 3), (2, 4, 1))
    assert [int(d.eval()) for d in et.broadcast_shape((2, 1), (1, 5), arrays_are_shapes=True)] == [2, 5]
    with pytest.raises(ValueError, match="do not broadcast"):
        et.broadcast_shape(et.tensor(shape=(2,)), et.tensor(shape=(3,)))


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_compress_matches_numpy(axis):
    c, x = et.bvector("c"), et.dmatrix("x")
    cond, value = np.array([1, 0, 1], dtype="int8"), RNG.random((3, 4))
    np.testing.assert_array_equal(run([c, x], et.compress(c, x, axis=axis), cond, value),
                                  np.compress(cond, value, axis=axis))


@pytest.mark.parametrize("m", [-1, 0, 1, 2, 5, 6])
def test_bartlett_matches_numpy(m):
    n = et.lscalar("n")
    out = run([n], et.bartlett(n), m)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, np.bartlett(m), atol=1e-15)


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose_matches_numpy(mode):
    a = et.lmatrix("a")
    choices = [et.dmatrix("c0"), et.dvector("c1"), et.dmatrix("c2")]
    index = np.array([[0, 1, 2], [2, 1, 0]]) if mode == "raise" else np.array([[0, 4, -1], [2, 1, 3]])
    values = [RNG.random((2, 3)), RNG.random(3), RNG.random((1, 3))]
    expected = np.choose(index, values, mode=mode)
    np.testing.assert_array_equal(run([a, *choices], et.choose(a, choices, mode=mode), index, *values), expected)
    stacked = et.dtensor3("s")
    value = RNG.random((3, 2, 3))
    np.testing.assert_array_equal(run([a, stacked], et.choose(a, stacked, mode=mode), index, value),
                                  np.choose(index, value, mode=mode))


def test_choose_gradient():
    a = et.constant(np.array([0, 1, 1, 0]))
    verify_grad(lambda x, y: et.choose(a, [x, y]), [RNG.random(4), RNG.random(4)], rng=np.random.default_rng(4))


def test_inverse_permutation_and_permute_row_elements():
    p = et.ivector("p")
    perm = np.array([2, 0, 3, 1], dtype="int32")
    out = et.inverse_permutation(p)
    assert out.dtype == "int32"
    np.testing.assert_array_equal(run([p], out, perm), np.argsort(perm))
    x, q = et.dmatrix("x"), et.lvector("q")
    value = RNG.random((2, 4))
    np.testing.assert_array_equal(run([x, q], et.permute_row_elements(x, q), value, perm), value[:, perm])
    inverse = run([x, q], et.permute_row_elements(x, q, inverse=True), value, perm)
    expected = np.empty_like(value)
    expected[:, perm] = value
    np.testing.assert_array_equal(inverse, expected)


def test_permute_row_elements_gradient():
    perm = et.constant(np.array([2, 0, 1]))
    verify_grad(lambda x: et.permute_row_elements(x, perm), [RNG.random((2, 3))], rng=np.random.default_rng(5))


@pytest.mark.parametrize("offset", [0, 1, -2])
def test_alloc_diag_of_a_vector_is_np_diag(offset):
    v = et.dvector("v")
    value = np.array([1.0, np.inf, 3.0])
    np.testing.assert_array_equal(run([v], et.alloc_diag(v, offset), value), np.diag(value, offset))


def test_alloc_diag_of_a_batch_puts_the_diagonal_on_axis1_axis2():
    d = et.dmatrix("d")
    value = RNG.random((2, 3))
    out = run([d], et.alloc_diag(d, 1, axis1=0, axis2=2), value)
    assert out.shape == (4, 2, 4)
    for b in range(2):
        np.testing.assert_array_equal(np.diagonal(out[:, b, :], 1), value[b])
    verify_grad(lambda x: et.alloc_diag(x, -1), [RNG.random(3)], rng=np.random.default_rng(6))


@pytest.mark.parametrize("mode, order", [("raise", "C"), ("wrap", "F"), ("clip", "C")])
def test_ravel_multi_index_matches_numpy(mode, order):
    i, j = et.lvector("i"), et.lvector("j")
    rows, cols = (np.array([0, 2, 1]), np.array([3, 0, 1])) if mode == "raise" else \
        (np.array([0, 5, -1]), np.array([7, 0, 1]))
    out = run([i, j], et.ravel_multi_index([i, j], (3, 4), mode=mode, order=order), rows, cols)
    np.testing.assert_array_equal(out, np.ravel_multi_index((rows, cols), (3, 4), mode=mode, order=order))


def test_ravel_multi_index_raises_out_of_range():
    i, j = et.lvector("i"), et.lvector("j")
    f = eg.function([i, j], et.ravel_multi_index([i, j], (3, 4)))
    with pytest.raises(ValueError, match="invalid entry in coordinates array"):
        f(np.array([0, 3]), np.array([0, 0]))


# -- sort kind ---------------------------------------------------------------------------------------
def test_sort_records_pytensors_kind_and_stays_stable():
    x = et.dvector("x")
    assert et.sort(x).owner.op.kind == "quicksort"
    assert et.argsort(x, stable=True).owner.op.kind == "stable"
    ties = np.array([1.0, 0.0, 1.0, 0.0])
    np.testing.assert_array_equal(run([x], et.argsort(x, kind="quicksort"), ties), np.argsort(ties, kind="stable"))
    with pytest.raises(ValueError, match="kind must be one of"):
        et.sort(x, kind="bubble")


# -- arctan2, a registry row ------------------------------------------------------------------------
def test_arctan2_matches_numpy_in_every_quadrant_and_at_signed_zeros():
    a, b = et.dvector("a"), et.dvector("b")
    ys = np.array([1.0, 1.0, -1.0, -1.0, 0.0, -0.0, 0.0, -0.0, np.inf, 2.0, np.nan])
    xs = np.array([1.0, -1.0, 1.0, -1.0, -0.0, -0.0, 0.0, 0.0, np.inf, -np.inf, 1.0])
    got = run([a, b], et.arctan2(a, b), ys, xs)
    np.testing.assert_array_equal(got, np.arctan2(ys, xs))
    assert np.array_equal(np.signbit(got), np.signbit(np.arctan2(ys, xs)))
    assert et.arctan2(et.fvector(), et.fvector()).dtype == "float32"


def test_arctan2_gradient():
    verify_grad(et.arctan2, [RNG.random(4) - 0.5, RNG.random(4) + 0.5], rng=np.random.default_rng(7))
