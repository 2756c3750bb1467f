"""The Dask backend on a LocalCluster of 2 worker processes.

The cluster starts once for the module (a few seconds); every compiled function here
runs its chunks on those workers.  Results are compared with the NumPy backend.
"""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
pytest.importorskip("array_api_compat")

import dask  # noqa: E402

import eqgraph as eg  # noqa: E402
import eqgraph.tensor as et  # noqa: E402
from eqgraph.exec.dask.backend import ChunkedOpError, DaskBackend, DaskCostModel  # noqa: E402
from eqgraph.exec.node_errors import NodeError  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def _logistic(w):
    x, t = et.matrix("x"), et.vector("t")
    p = et.sigmoid(x @ w)
    loss = -(t * et.log(p) + (1 - t) * et.log(1 - p)).mean()
    return x, t, loss, eg.grad(loss, w)


@pytest.mark.filterwarnings("ignore:Sending large graph")  # the test's data travels in the graph
def test_logistic_regression_loss_and_gradient_over_8_chunks_equal_numpy(client):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400_000, 8))
    y = (rng.random(400_000) < 1 / (1 + np.exp(-X @ np.arange(8.0)))).astype("float64")
    w0 = rng.normal(size=8) * 0.1
    w = et.vector("w")
    x, t, loss, g = _logistic(w)
    on_numpy = eg.function([x, t, w], [loss, g])
    on_dask = eg.function([x, t, w], [loss, g], backend="dask")
    Xd, yd = da.from_array(X, chunks=(50_000, 8)), da.from_array(y, chunks=50_000)
    lazy = on_dask(Xd, yd, w0)
    assert all(isinstance(v, da.Array) for v in lazy)     # Dask in, lazy Dask out
    assert Xd.numblocks == (8, 1)
    got = dask.compute(*lazy)
    want = on_numpy(X, y, w0)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10, atol=1e-15)


def test_numpy_arguments_are_chunked_by_chunks_and_give_numpy_results(client):
    rng = np.random.default_rng(1)
    X, y, w0 = rng.normal(size=(4_000, 8)), (rng.random(4_000) < 0.5) * 1.0, rng.normal(size=8)
    w = et.vector("w")
    x, t, loss, g = _logistic(w)
    f = eg.function([x, t, w], [loss, g], backend="dask", chunks=(500,))
    got = f(X, y, w0)
    assert all(isinstance(v, np.ndarray) for v in got)
    want = eg.function([x, t, w], [loss, g])(X, y, w0)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10)


def test_leading_chunks_split_rows_of_matrices_and_vectors_alike():
    backend = DaskBackend(chunks=(3,))
    assert backend.to_device(np.ones((7, 4))).chunks == ((3, 3, 1), (4,))
    assert backend.to_device(np.ones(7)).chunks == ((3, 3, 1),)
    assert backend.to_device(np.float64(2.0)) == 2.0                   # scalars broadcast as they are


def test_chunks_is_for_the_dask_backend_only():
    v = et.vector("v")
    with pytest.raises(ValueError, match='chunks=.*backend="dask"'):
        eg.function([v], v * 2, chunks=(10,))


# -- ops on chunked inputs ----------------------------------------------------------------
X = np.random.default_rng(2).normal(size=(30, 6))
V = np.random.default_rng(3).normal(size=6)
IDX = np.array([0, 7, 29, 7, 3])


def _op_cases():
    x, v, i = et.matrix("x"), et.vector("v"), et.lvector("i")
    return [x, v, i], {
        "elementwise": et.exp(x) * 2 + et.tanh(x - v),
        "sigmoid_softplus": et.sigmoid(x) + et.softplus(-x),
        "sum": x.sum(),
        "max_axis0": x.max(axis=0),
        "mean_axis1": x.mean(axis=1),
        "std": x.std(axis=0),
        "logsumexp": et.logsumexp(x, axis=1),
        "matmul": x @ v,
        "gram": x.T @ x,
        "tensordot": et.tensordot(x, x, axes=[[0], [0]]),
        "slice": x[3:17:2, 1:4],
        "advanced_index": x[i],
        "boolean_mask_sum": x[x > 0].sum(),
        "reshape": x.reshape((3, 10, 6)),   # splits the chunked axis evenly
        "concatenate": et.concatenate([x, 2 * x], axis=0),
        "transpose": x.T + 1,
        "set_subtensor": et.set_subtensor(x[2:5], 0.0),
        "switch": et.switch(x > 0, x, -x),
        "argmax": et.argmax(x, axis=0),
    }


@pytest.fixture(scope="module")
def op_functions():
    inputs, outputs = _op_cases()
    names = list(outputs)
    exprs = [outputs[n] for n in names]
    # one compile per backend for all cases (each compile costs about a tenth of a second)
    on_numpy = eg.function(inputs, exprs)
    on_dask = eg.function(inputs, exprs, backend="dask")
    return names, on_numpy(X, V, IDX), on_dask


def test_ops_on_chunked_dask_inputs_equal_numpy(client, op_functions):
    names, want, on_dask = op_functions
    lazy = on_dask(da.from_array(X, chunks=(10, 3)), da.from_array(V, chunks=3), IDX)
    got = dask.compute(*lazy)
    bad = [n for n, a, b in zip(names, got, want) if a.shape != b.shape or not np.allclose(a, b, rtol=1e-12)]
    assert not bad, f"differ from NumPy: {bad}"


def test_fused_elementwise_node_runs_once_per_chunk(client):
    x = et.matrix("x")
    f = eg.function([x], [et.exp(x) * 2 + 1, et.log1p(et.exp(x) * 2 + 1)], backend="dask")
    assert len(f.stages.fused.toposort()) == 1                 # one Composite, two outputs
    xd = da.from_array(X, chunks=(10, 3))
    a, b = f(xd)
    assert a.numblocks == b.numblocks == (3, 2)               # chunk-local: no rechunking
    assert not any("rechunk" in name for name in a.dask.layers)
    ra, rb = dask.compute(a, b)
    np.testing.assert_array_equal(ra, np.exp(X) * 2 + 1)
    np.testing.assert_array_equal(rb, np.log1p(np.exp(X) * 2 + 1))


def test_composite_broadcasts_across_chunks(client):
    col, row = et.TensorType("float64", (None, 1))("col"), et.TensorType("float64", (1, None))("row")
    f = eg.function([col, row], et.exp(col) * row + 1, backend="dask")
    c, r = np.arange(12.0).reshape(12, 1) / 10, np.arange(8.0).reshape(1, 8)
    got = f(da.from_array(c, chunks=(5, 1)), da.from_array(r, chunks=(1, 3)))
    assert got.numblocks == (3, 3)
    np.testing.assert_allclose(got.compute(), np.exp(c) * r + 1, rtol=1e-15)


def test_composite_aligns_inputs_chunked_differently(client):
    # regression: map_blocks took the one-chunk input as broadcastable and paired it whole
    # with each 10-row chunk of the other ("operands could not be broadcast")
    x, y = et.vector("x"), et.vector("y")
    f = eg.function([x, y], [(x - y) ** 2, 2 * (x - y)], backend="dask")
    a, b = np.arange(40.0), np.linspace(0, 1, 40)
    sq, twice = dask.compute(*f(da.from_array(a, chunks=10), da.from_array(b, chunks=40)))
    np.testing.assert_array_equal(sq, (a - b) ** 2)
    np.testing.assert_array_equal(twice, 2 * (a - b))


# -- what Dask cannot run chunked -------------------------------------------------------------
def test_sort_along_a_chunked_axis_names_the_op_instead_of_gathering_it():
    x = et.matrix("x")
    f = eg.function([x], et.sort(x, axis=0), backend="dask")
    with pytest.raises(ChunkedOpError, match="sort needs axis 0 in one chunk.*3 chunks") as err:
        f(da.from_array(X, chunks=(10, 6)))
    assert isinstance(err.value, NodeError) and "Sort" in str(err.value.node.op)
    # along an axis that is one chunk, it runs
    got = f(da.from_array(X, chunks=(30, 2))).compute()
    np.testing.assert_array_equal(got, np.sort(X, axis=0))


def test_an_op_that_would_compute_its_input_raises_naming_the_node():
    x = et.matrix("x")
    f = eg.function([x], et.zeros((et.cast(x.sum(), "int64"),)), backend="dask")
    with pytest.raises(ChunkedOpError, match="cannot run on chunked Dask arrays") as err:
        f(da.ones((4, 3), chunks=2))
    assert "Alloc" in str(err.value) and "Apply node that caused the error" in str(err.value)


def test_the_refusing_scheduler_is_only_in_force_while_a_program_runs(client):
    x = et.matrix("x")
    f = eg.function([x], et.zeros((et.cast(x.sum(), "int64"),)), backend="dask")
    before = dask.config.get("scheduler", None)
    with pytest.raises(ChunkedOpError):
        f(da.ones((4, 3), chunks=2))
    assert dask.config.get("scheduler", None) == before
    assert da.ones(3, chunks=1).sum().compute() == 3  # computing works again


def test_calls_from_several_threads_build_and_compute_their_own_graphs(client):
    from concurrent.futures import ThreadPoolExecutor

    x = et.vector("x")
    f = eg.function([x], [et.exp(x).sum(), (x * 3).max()], backend="dask", chunks=(5,))
    inputs = [np.arange(20.0) / (k + 1) for k in range(6)]
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(f, inputs))
    for a, (total, largest) in zip(inputs, results):
        np.testing.assert_allclose(total, np.exp(a).sum(), rtol=1e-13)
        assert largest == (a * 3).max()
    assert da.ones(3, chunks=1).sum().compute() == 3


# -- shapes --------------------------------------------------------------------------------------
def test_unknown_chunk_sizes_pass_filter_and_static_shape_checks():
    v = et.TensorType("float64", (4, 3))("v")   # static length 4; the Dask array's is NaN
    f = eg.function([v], (v * 2).sum(axis=0), backend="dask")
    dv = da.from_array(np.arange(24.0).reshape(8, 3), chunks=(3, 3))
    masked = dv[dv[:, 0] > 10]
    assert np.isnan(masked.shape[0])
    np.testing.assert_array_equal(f(masked).compute(), (np.arange(24.0).reshape(8, 3)[4:] * 2).sum(axis=0))


def test_fills_broadcast_to_chunks_of_unknown_size():
    # second(x, 0) (zeros_like) broadcast with np.broadcast_shapes, which refused NaN lengths
    x = et.dvector("x")
    f = eg.function([x], [et.zeros_like(x), et.full_like(x, -0.0) + x * 0 + 2.5], backend="dask")
    dv = da.from_array(np.arange(10.0), chunks=5)
    zeros, filled = f(dv[dv > 3])
    np.testing.assert_array_equal(zeros.compute(), np.zeros(6))
    np.testing.assert_array_equal(filled.compute(), np.full(6, 2.5))


def test_a_shape_that_is_unknown_until_computed_is_a_clear_error():
    x = et.matrix("x")
    f = eg.function([x], x.sum() / x.shape[0], backend="dask")
    dv = da.from_array(np.arange(24.0).reshape(8, 3), chunks=(3, 3))
    with pytest.raises(ValueError, match=r"axis 0 of this Dask array is unknown \(NaN\)"):
        f(dv[dv[:, 0] > 10])


# -- shared variables ------------------------------------------------------------------------------
def test_shared_updates_stay_lazy_and_match_numpy(client):
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(2_000, 8)), (rng.random(2_000) < 0.5) * 1.0
    W = eg.shared(np.zeros(8), name="W")
    x, t, loss, g = _logistic(W)
    step = eg.function([x, t], loss, updates={W: W - 0.5 * g}, backend="dask", chunks=(500,))
    step(X, y)
    step(X, y)
    assert isinstance(W.get_value(borrow=True, return_internal_type=True), da.Array)  # not computed yet
    w = np.zeros(8)
    for _ in range(2):
        w = w - 0.5 * X.T @ (1 / (1 + np.exp(-X @ w)) - y) / len(y)
    np.testing.assert_allclose(W.get_value(), w, rtol=1e-12)


def test_a_shared_variable_may_hold_a_dask_array(client):
    S = eg.shared(da.from_array(X, chunks=(10, 6)), name="S")
    f = eg.function([], S.sum(axis=0), backend="dask")
    np.testing.assert_allclose(f(), X.sum(axis=0), rtol=1e-13)


# -- cost model ---------------------------------------------------------------------------------------
def test_dask_cost_model_avoids_the_n_by_n_intermediate_of_a_matrix_chain(client):
    A, B, v = et.matrix("A"), et.matrix("B"), et.vector("v")
    f = eg.function([A, B, v], (A @ B) @ v, backend="dask")
    top = f.stages.optimized.outputs[0].owner
    assert top.inputs[0] is f.stages.optimized.inputs[0]          # A @ (B @ v): no A @ B
    a, b, w = X[:6], X[:, :6].T @ X[:, :6], V
    np.testing.assert_allclose(f(a, b, w), (a @ b) @ w, rtol=1e-12)


def test_dask_cost_model_gives_every_unknown_axis_one_length_and_weighs_bytes_more():
    default, on_dask = eg.extract.CostModel(), DaskCostModel(axis_length=1_000)
    assert on_dask.ns_per_byte == 10 * default.ns_per_byte
    assert on_dask.shape(et.matrix().type) == (1_000, 1_000) and on_dask.shape(et.vector().type) == (1_000,)
    assert on_dask.shape(et.TensorType("float64", (None, 3))) == (1_000, 3)
