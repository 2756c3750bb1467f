"""Shapes: x.shape from the ops' infer_shape, static sizes as constants,
reshape and dimshuffle chains, keepdims reductions; rulesets/shapes.egg on numbers (its
general rules are not drawn by the soundness checker)."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.egraph.shapes import inferred_shape
from eqgraph.terms import FunctionGraph
from tests.same_type_op import SameTypeOp

m = et.dmatrix("m")
M = np.arange(6.0).reshape(2, 3)


def ops_of(f) -> list[str]:
    return [str(n.op) for n in f.stages.optimized.toposort()]


class Twice(SameTypeOp):
    """A user op with an infer_shape: the shape of its output never needs it to run."""

    runs = 0

    def perform(self, node, inputs, output_storage):
        Twice.runs += 1
        output_storage[0][0] = inputs[0] * 2

    def infer_shape(self, fgraph, node, shapes):
        return [shapes[0]]


class Opaque(Twice):
    infer_shape = SameTypeOp.infer_shape   # none: Op's default raises NotImplementedError


def test_shape_of_an_elementwise_result_does_not_compute_it():
    f = eg.function([m], [et.exp(m).shape[0], et.exp(m).shape])
    assert "Elemwise{exp}" not in ops_of(f)
    first, shape = f(M)
    assert first == 2 and list(shape) == [2, 3]


def test_a_user_ops_infer_shape_is_used():
    f = eg.function([m], Twice()(m).shape)
    Twice.runs = 0
    np.testing.assert_array_equal(f(M), [2, 3])
    assert Twice.runs == 0 and "Twice" not in " ".join(ops_of(f))


def test_an_op_without_infer_shape_is_run():
    f = eg.function([m], Opaque()(m).shape[1])
    assert f(M) == 3


def test_static_sizes_become_constants():
    s = et.TensorType("float64", (3, None))("s")
    f = eg.function([s], [(s + 1).shape[0], et.exp(s).shape[1]])
    assert ops_of(f) == ["Shape", "Subtensor{1}"]      # s.shape[1], nothing computed from s
    assert [int(v) for v in f(np.ones((3, 5)))] == [3, 5]


@pytest.mark.parametrize("a, b", [((0,), (1,)), ((1,), (0,)), ((1,), (4,)), ((4,), (4,))])
def test_inferred_broadcast_shape_of_sizes_0_and_1(a, b):
    # the size of an axis is the operand's that is not 1 (max(0, 1) would say 1)
    x, y = et.dvector("x"), et.dvector("y")
    out = x + y
    shape = inferred_shape(FunctionGraph([x, y], [out]), out)
    got = eg.function([x, y], shape, rulesets=[])(np.ones(a), np.ones(b))
    np.testing.assert_array_equal(got, (np.ones(a) + np.ones(b)).shape)


def test_reshape_chains_and_reshapes_to_the_same_shape():
    s = et.TensorType("float64", (2, 3))("s")
    f = eg.function([m, s], [m.reshape((-1,)).reshape((3, -1)), m.reshape(m.shape), s.reshape((2, 3))])
    assert ops_of(f).count("Reshape{2}") == 1
    a, b, c = f(M, M)
    np.testing.assert_array_equal(a, M.reshape(3, -1))
    np.testing.assert_array_equal(b, M)
    np.testing.assert_array_equal(c, M)
    assert not np.shares_memory(b, M) and not np.shares_memory(c, M)


@pytest.mark.parametrize("build, want", [
    (lambda: m.T.T, M),
    (lambda: m.dimshuffle(0, "x", 1).dimshuffle(0, 2), M),           # expand, then squeeze
    (lambda: m[:, None][:, 0, :], M),
    (lambda: m.dimshuffle(1, 0).dimshuffle("x", 1, 0).dimshuffle(2, 1), M.T),
])
def test_dimshuffle_chains_collapse(build, want):
    f = eg.function([m], build())
    np.testing.assert_array_equal(f(M), want)
    assert len(ops_of(f)) <= 1


def test_sum_over_a_static_size_is_the_mean():
    s = et.TensorType("float64", (2, 3))("s")
    f = eg.function([s], [s.sum(1) / s.shape[1], s.sum(0) / 2])
    assert ops_of(f) == ["Mean{axis=(1,)}", "Mean{axis=(0,)}"]
    for got, want in zip(f(M), [M.mean(1), M.mean(0)]):
        np.testing.assert_allclose(got, want)


def test_a_keepdims_reduction_and_its_dimshuffle_are_computed_once():
    f = eg.function([m], (m - m.mean(1)[:, None]) / m.std(1)[:, None])
    assert sum("Mean" in op for op in ops_of(f)) == 2     # the mean, and the mean of the squares
    assert ops_of(f).count("Elemwise{sub}") == 1
    np.testing.assert_allclose(f(M), (M - M.mean(1)[:, None]) / M.std(1)[:, None])


def test_dimshuffles_move_below_elementwise_ops():
    assert eg.equivalent(et.exp(m).T, et.exp(m.T))
    f = eg.function([m], et.tanh(m.T).T)
    assert ops_of(f) == ["Elemwise{tanh}"]
    np.testing.assert_allclose(f(M), np.tanh(M))


t3 = et.tensor3("t3")


@pytest.mark.parametrize("x, build, want", [
    (m, lambda: m.flatten().shape[0], 6),
    (m, lambda: m.reshape((-1,)).shape[0], 6),
    (t3, lambda: et.flatten(t3, 2).shape[1], 12),
])
def test_the_size_of_a_flattened_result_does_not_compute_the_reshape(x, build, want):
    # the -1 of a flatten is the product of all sizes: no int_div by the empty product 1
    f = eg.function([x], build())
    assert not any("Reshape" in op for op in ops_of(f))
    assert int(f(np.ones((2, 3, 4)[: x.ndim]))) == want


def test_the_size_of_a_matrix_is_one_product_of_its_shape():
    f = eg.function([m], [m.flatten().shape[0], m.T.flatten().shape[0], m.shape[0] * m.shape[1]])
    assert sorted(ops_of(f)) == ["Prod{axis=(0,)}", "Shape"]
    assert [int(v) for v in f(np.ones((2, 5)))] == [10, 10, 10]
    assert [int(v) for v in f(np.ones((0, 5)))] == [0, 0, 0]


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_an_entry_of_a_vector_of_scalars_of_any_length_is_that_scalar(n):
    # shapes.egg's vector-entry rules: v[k] and v[-1] of MakeVector(s0, s1, ...) are s_k and the last
    scalars = [et.lscalar(f"s{i}") for i in range(n)]
    v = et.as_tensor_variable(scalars)
    f = eg.function(scalars, [v[n - 1] * 2, v[-1] + 1, v[0] * 3])
    assert not any(op.startswith(("MakeVector", "Subtensor")) for op in ops_of(f)), ops_of(f)
    assert [int(r) for r in f(*range(1, n + 1))] == [n * 2, n + 1, 3]
