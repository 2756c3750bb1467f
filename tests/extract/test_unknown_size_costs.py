"""The cost model's guess for sizes unknown until run time: one length for every unknown
axis of a graph (extract/costs.py, ``CostModel.for_graph``), so that a vector is as long as
a row of the matrices beside it.  Each case below was mispriced when 10,000 elements were
spread over each value's own unknown axes (a (None,) vector 10,000 long next to a 100 x 100
matrix)."""

import numpy as np

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.dask.backend import DaskCostModel
from eqgraph.extract.costs import Bounded, CostModel

A, B, m = et.dmatrix("A"), et.dmatrix("B"), et.dmatrix("m")
v, s = et.dvector("v"), et.dscalar("s")
row = et.tensor("row", "float64", shape=(1, None))


def ops_of(f) -> list[str]:
    return [str(node.op) for node in f.stages.optimized.toposort()]


def test_a_matrix_chain_times_a_vector_is_two_matrix_vector_products():
    f = eg.function([A, B, v], (A @ B) @ v)
    products = [n for n in f.stages.optimized.toposort() if str(n.op) == "matmul"]
    assert all(n.outputs[0].ndim == 1 for n in products), ops_of(f)  # A @ (B @ v): no n x n product
    rng = np.random.default_rng(0)
    a, b, x = rng.normal(size=(3, 4)), rng.normal(size=(4, 5)), rng.normal(size=5)
    np.testing.assert_allclose(f(a, b, x), (a @ b) @ x, rtol=1e-12)


def test_row_sums_of_a_scaled_matrix_scale_the_sums():
    f = eg.function([m, s], (m * s).sum(axis=1))
    [mul] = [n for n in f.stages.optimized.toposort() if "mul" in str(n.op).lower()]
    assert mul.outputs[0].ndim == 1, ops_of(f)  # s * sum(m, axis=1): n multiplications, not n*n
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(f(x, 2.5), (x * 2.5).sum(axis=1))


def test_a_slice_of_a_sum_with_a_row_sums_the_slice():
    f = eg.function([m, row], (m + row)[:2])
    assert str(f.stages.optimized.toposort()[0].op).startswith("Subtensor"), ops_of(f)
    x, r = np.arange(12.0).reshape(4, 3), np.array([[1.0, -2.0, 0.5]])
    np.testing.assert_allclose(f(x, r), (x + r)[:2])


def test_every_unknown_axis_of_a_graph_gets_the_same_length():
    model = CostModel(unknown_size=10_000).for_graph([A.type, v.type, row.type, s.type])
    assert model.shape(A.type) == (100, 100)
    assert model.shape(v.type) == (100,) and model.shape(row.type) == (1, 100)
    # a graph of vectors only keeps the calibrated total: elementwise choices as for large arrays
    assert CostModel(unknown_size=10_000).for_graph([v.type, s.type]).shape(v.type) == (10_000,)
    # bounds still cap an axis (x[:10] holds at most 10)
    assert model.shape(Bounded(v.type, ((10,),))) == (10,)


def test_for_graph_keeps_the_model_given_and_its_subclass():
    class Slow(CostModel):
        pass
    base = Slow(dispatch=5.0)
    fitted = base.for_graph([A.type])
    assert type(fitted) is Slow and fitted.dispatch == 5.0 and fitted is not base
    assert base.shape(v.type) == base.for_graph([v.type]).shape(v.type)  # the model given is unchanged


def test_a_custom_cost_model_without_for_graph_still_prices_nodes():
    class Flat:
        def node_cost(self, enode, op, in_types, out_type, child_ops=()):
            return 1.0
    f = eg.function([A, B, v], (A @ B) @ v, cost_model=Flat())
    rng = np.random.default_rng(1)
    a, b, x = rng.normal(size=(2, 2)), rng.normal(size=(2, 3)), rng.normal(size=3)
    np.testing.assert_allclose(f(a, b, x), (a @ b) @ x, rtol=1e-12)


def test_a_subclass_with_its_own_axis_length_keeps_it():
    # DaskCostModel sets every unknown axis to its own axis_length: fitting must not reset it
    assert DaskCostModel(axis_length=1_000).for_graph([A.type, v.type]).shape(v.type) == (1_000,)
