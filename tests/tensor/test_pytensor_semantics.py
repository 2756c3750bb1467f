"""Where NumPy and PyTensor differ, a PyTensor name behaves as PyTensor's: each case here is
written from PyTensor's documented behaviour (its docstrings and its own tests), not from
eqgraph's code. The differences eqgraph keeps on purpose are in docs/conventions.md."""

import re

import numpy as np
import pytest

import eqgraph
import eqgraph.tensor as et
from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.tensor.variable import TensorConstant


# -- accumulator dtypes (CAReduce._acc_dtype) -------------------------------------------------
@pytest.mark.parametrize("dtype, acc", [("float16", "float32"), ("float32", "float64"),
                                        ("complex64", "complex128")])
def test_inexact_sums_accumulate_in_the_wider_dtype_and_keep_their_own(dtype, acc):
    # 1 between two values that cancel: lost when added up in the input's own precision
    big = {"float16": 2048, "float32": 1e8, "complex64": 1e8}[dtype]
    v = np.asarray([big, 1, -big], dtype=dtype)
    x = et.vector("x", dtype=dtype)
    total, mean = eqgraph.function([x], [x.sum(), x.mean()])(v)
    assert total.dtype == mean.dtype == np.dtype(dtype)
    assert total == 1
    np.testing.assert_allclose(mean, np.sum(v, dtype=acc) / 3, rtol=1e-3)


def test_a_product_accumulates_in_float64_for_float32():
    # 1e30 * 1e30 overflows float32 on the way, not in float64; the end result fits
    v = np.asarray([1e30, 1e30, 1e-30, 1e-30], dtype="float32")
    x = et.vector("x", dtype="float32")
    got = eqgraph.function([x], x.prod())(v)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, 1.0, rtol=1e-5)


def test_the_wider_accumulator_holds_on_every_backend_path():
    v = np.asarray([[1e8, 1, -1e8, 1]] * 3, dtype="float32")
    x = et.matrix("x", dtype="float32")
    outs = [x.sum(), x.sum(axis=1), x.mean(axis=0), x.mean(axis=1, keepdims=True)]
    want = [np.float32(6), np.full(3, 2, "float32"), np.asarray([1e8, 1, -1e8, 1], "float32"),
            np.full((3, 1), 0.5, "float32")]
    for kwargs in ({}, {"rulesets": [], "fusion": False}):
        f = eqgraph.function([x], outs, **kwargs)
        for got, w in zip(f(v), want):
            assert got.dtype == np.float32
            np.testing.assert_allclose(got, w, rtol=1e-6)


def test_log_sum_exp_in_float32_still_becomes_logsumexp_with_a_finite_gradient():
    # the sum must stay a sum that the stability rules see: exp(120) is inf in float32
    x = et.vector("x", dtype="float32")
    for cost in (et.log(et.sum(et.exp(x))), et.logsumexp(x)):
        g = eqgraph.grad(cost, x)
        assert g.dtype == "float32"
        value, grad = eqgraph.function([x], [cost, g])(np.asarray([120, 0], "float32"))
        np.testing.assert_allclose(value, 120, rtol=1e-6)
        assert np.isfinite(grad).all() and grad.dtype == np.float32
        np.testing.assert_allclose(grad, [1, 0], atol=1e-6)


# -- errors where PyTensor raises -------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64"])
def test_neg_of_unsigned_integers_is_refused(dtype):
    x = et.vector("x", dtype=dtype)
    with pytest.raises(TypeError, match=rf"neg.*x \({dtype}\).*unsigned"):
        -x
    assert (-et.vector(dtype="int8")).dtype == "int8"


def test_a_python_bool_is_refused():
    for value in (True, False):
        with pytest.raises(TypeError, match="Python bool"):
            as_tensor_variable(value)
    assert as_tensor_variable(np.array([True, False])).dtype == "bool"
    assert as_tensor_variable(np.bool_(True)).dtype == "bool"


def test_a_variables_dtype_is_left_alone():
    # "If x is already a Variable type, then the dtype will not be changed."
    x = et.dvector("x")
    assert as_tensor_variable(x, dtype="int64") is x
    assert as_tensor_variable(np.array([1], "int32"), dtype="int64").dtype == "int64"  # values are cast


def test_full_of_a_variable_still_has_the_dtype_asked_for():
    s = et.dscalar("s")
    y = et.full((2,), s, dtype="float32")
    assert y.dtype == "float32"
    np.testing.assert_array_equal(eqgraph.function([s], y)(1.5), np.full(2, 1.5, "float32"))


@pytest.mark.parametrize("shape", [[], 1, [1, 2], np.r_[1, 2, 3]], ids=str)
@pytest.mark.parametrize("make", [et.zeros, et.ones], ids=["zeros", "ones"])
def test_zeros_and_ones_take_a_shape_as_a_list_or_a_constant_even_an_empty_one(make, shape):
    want = (np.zeros if make is et.zeros else np.ones)(shape)
    for given in (shape, et.constant(shape)):   # constant([]) is a float64 vector of length 0
        got = eqgraph.function([], make(given))()
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_ndim_drops_leading_broadcastable_axes_or_adds_them():
    row = et.TensorType("float64", (1, None))("row")
    assert as_tensor_variable(row, ndim=1).type.shape == (None,)
    assert as_tensor_variable(et.TensorType("float64", (1, 1))("c"), ndim=0).ndim == 0
    assert as_tensor_variable(et.dvector("v"), ndim=3).type.shape == (1, 1, None)
    with pytest.raises(ValueError, match=r"^Tensor of type.*0 dimensions: row has 2"):
        as_tensor_variable(row, ndim=0)


def test_a_range_is_a_vector():
    assert as_tensor_variable(range(3), ndim=1).ndim == 1
    with pytest.raises(ValueError, match="ndim for range must be 1, got ndim=2"):
        as_tensor_variable(range(10), ndim=2)


def test_a_list_of_constants_is_one_constant():
    a = as_tensor_variable([as_tensor_variable(1), as_tensor_variable(2)])
    assert isinstance(a, TensorConstant)
    np.testing.assert_array_equal(a.data, [1, 2])
    b = as_tensor_variable([et.constant(np.ones(2)), [3.0, 4.0]])
    assert isinstance(b, TensorConstant) and b.type.shape == (2, 2)
    x = et.dscalar("x")
    mixed = as_tensor_variable([x, as_tensor_variable(2.0)])
    assert not isinstance(mixed, TensorConstant) and mixed.type.shape == (2,)


def test_flatnonzero_of_a_0d_tensor_is_refused():
    with pytest.raises(ValueError, match=r"flatnonzero\(s\).*0-d"):
        et.flatnonzero(et.dscalar("s"))
    v = et.dvector("v")
    np.testing.assert_array_equal(eqgraph.function([v], et.flatnonzero(v))(np.array([0.0, 2, 0, 3])), [1, 3])


def test_alloc_takes_the_known_sizes_of_its_value():
    x = et.TensorType("float64", (None, 1, 5))("x")
    d0, d1 = et.lscalar("d0"), et.lscalar("d1")
    y = et.alloc(x, d0, 1, d1)
    assert y.type.shape == (None, 1, 5)
    f = eqgraph.function([x, d0, d1], y)
    assert f(np.ones((2, 1, 5)), 2, 5).shape == (2, 1, 5)
    with pytest.raises(ValueError, match="broadcast"):
        f(np.ones((2, 1, 5)), 2, 4)
    assert et.alloc(et.TensorType("float64", (1,))("one"), d0).type.shape == (None,)  # 1 broadcasts


# -- inputs PyTensor refuses when the graph is built -------------------------------------------
def test_repeat_refuses_uint64_repeats():
    # no safe cast from uint64 to int64 (np.repeat refuses them too); Repeat.make_node says so
    x = et.dvector("x")
    for repeats in (et.vector("r", dtype="uint64"), et.scalar("r", dtype="uint64")):
        with pytest.raises(TypeError, match=r"repeat: repeats r .*uint64"):
            et.repeat(x, repeats)
    f = eqgraph.function([x, r := et.vector("r", dtype="uint32")], et.repeat(x, r))
    np.testing.assert_array_equal(f(np.array([1.0, 2.0]), np.array([2, 1], "uint32")), [1.0, 1.0, 2.0])
    # a constant whose values fit in int64 is one, as PyTensor's as_tensor_variable(repeats, dtype=int64) makes it
    f = eqgraph.function([x], et.repeat(x, np.array([1, 2], "uint64")))
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [1.0, 2.0, 2.0])


@pytest.mark.parametrize("reps", [[2.0], [et.dscalar("s")], 2.5, [1, et.scalar("b", dtype="bool")]])
def test_tile_refuses_reps_that_are_not_integers(reps):
    with pytest.raises(TypeError, match=r"tile: reps must be integers"):
        et.tile(et.dvector("x"), reps)


def test_tile_takes_integer_reps_of_any_kind():
    x, n = et.dvector("x"), et.lscalar("n")
    f = eqgraph.function([x, n], et.tile(x, [np.int32(2), n]))
    np.testing.assert_array_equal(f(np.array([1.0, 2.0]), 2), np.tile([1.0, 2.0], (2, 2)))


@pytest.mark.parametrize("index", [True, np.bool_(False), np.array(True), et.constant(np.array(True)),
                                   et.scalar("b", dtype="bool")])
def test_a_scalar_boolean_index_is_refused(index):
    # NumPy reads x[True] as x[None] and x[False] as an empty x[None][:0]; PyTensor refuses it
    m = et.dmatrix("m")
    with pytest.raises(IndexError, match="boolean scalars are not supported"):
        m[index]
    with pytest.raises(IndexError, match="boolean scalars are not supported"):
        m[0, index]


def test_flatten_keeps_the_static_sizes_it_can_and_refuses_ndim_out_of_bounds():
    t = et.TensorType("float64", (2, 3, 4))("t")
    assert et.flatten(t, 2).type.shape == (2, 12)
    assert et.flatten(t, 1).type.shape == (24,)
    assert et.flatten(t, 3).type.shape == (2, 3, 4)
    assert et.flatten(et.TensorType("float64", (2, None, 4))("p"), 2).type.shape == (2, None)
    # the collapsed axes' sizes are known, the leading one is not
    assert et.flatten(et.TensorType("float64", (None, 1, 1, 1))("q"), 2).type.shape == (None, 1)
    assert et.flatten(et.TensorType("float64", (None, 2, 3))("r"), 2).type.shape == (None, 6)
    assert et.flatten(et.dscalar("s")).type.shape == (1,)   # any tensor flattens to a vector
    for ndim in (0, 4):
        with pytest.raises(ValueError, match=rf"flatten\(t, ndim={ndim}\): ndim must be between 1 and 3"):
            et.flatten(t, ndim)
    np.testing.assert_array_equal(eqgraph.function([t], et.flatten(t, 2))(np.arange(24.0).reshape(2, 3, 4)),
                                  np.arange(24.0).reshape(2, 12))


def test_a_tensor_of_more_dimensions_than_numpy_allows_is_refused_when_built():
    from eqgraph.tensor.type import MAX_DIMS

    x = et.TensorType("float64", (None,) * MAX_DIMS)("x")   # NumPy's limit is fine
    with pytest.raises(ValueError, match=f"is currently {MAX_DIMS}, found {MAX_DIMS + 1}: .*at most {MAX_DIMS} dim"):
        et.shape_padleft(x)


def test_squeeze_of_an_axis_of_unknown_size_checks_it_is_1_when_run():
    x = et.dvector("x")
    f = eqgraph.function([x], et.squeeze(x, 0))
    assert f(np.array([4.0])) == 4.0 and f(np.array([4.0])).shape == ()
    with pytest.raises(ValueError, match="expected shape \\(1,\\), got \\(3,\\)"):
        f(np.zeros(3))
    m = et.dmatrix("m")
    np.testing.assert_array_equal(eqgraph.function([m], et.squeeze(m, axis=(-1,)))(np.ones((2, 1))), np.ones(2))


def test_squeeze_of_a_0d_tensor_takes_axis_0_and_refuses_others_as_numpy():
    s = et.dscalar("s")
    assert et.squeeze(s, axis=(0,)) is s and et.squeeze(s, axis=-1) is s
    with pytest.raises(np.exceptions.AxisError, match=r"axis \(1,\) is out of bounds for array of dimension 0"):
        et.squeeze(s, axis=1)
    with pytest.raises(np.exceptions.AxisError, match="out of bounds"):
        et.squeeze(et.dvector("v"), axis=2)


@pytest.mark.parametrize("op, ufunc, shapes", [(et.add, np.add, ((3, 5), (7, 1, 3))),
                                               (et.mul, np.multiply, ((2, 3), (1, 4)))], ids=["add", "mul"])
def test_elemwise_outer_is_numpys_ufunc_outer(op, ufunc, shapes):
    a, b = np.arange(np.prod(shapes[0]), dtype=float).reshape(shapes[0]), np.linspace(-1, 1, int(np.prod(shapes[1])))
    b = b.reshape(shapes[1])
    x, y = et.tensor("x", dtype="float64", shape=shapes[0]), et.tensor("y", dtype="float64", shape=shapes[1])
    got = eqgraph.function([x, y], op.outer(x, y))(a, b)
    np.testing.assert_array_equal(got, ufunc.outer(a, b))
    with pytest.raises(TypeError, match=r"Elemwise\{exp\} takes 1 inputs, got 2"):
        et.exp.outer(x, y)


def test_static_shapes_that_cannot_broadcast_are_refused_in_pytensors_words():
    x, y = et.tensor("x", dtype="float64", shape=(2,)), et.tensor("y", dtype="float64", shape=(3,))
    with pytest.raises(ValueError, match=re.escape("Incompatible Elemwise input shapes [(2,), (3,)]")):
        x + y


def test_empty_has_the_shape_and_dtype_asked_for():
    x = et.TensorType("float64", (50,))("x")
    y = et.empty(x.shape, dtype="int32")
    assert y.type.shape == (50,) and y.dtype == "int32"
    got = eqgraph.function([x], y)(np.zeros(50))
    assert got.shape == (50,) and got.dtype == np.int32
    assert et.empty((2, 3)).dtype == eqgraph.config.floatX
