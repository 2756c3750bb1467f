"""Reshapes on chunked Dask arrays that Dask's own reshape refuses (it merges or splits
existing axes only, and raises NotImplementedError with a message whose first line is empty)."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et

pytest.importorskip("dask.array")


@pytest.mark.parametrize("chunks", [(7,), (7, 3), (50, 3)])
@pytest.mark.parametrize("shape", [(-1, 4), (25, 16), (5, 10, 8), (2, 200), (400,)])
def test_a_reshape_across_chunks_runs_chunked_and_matches_numpy(chunks, shape):
    m = et.dmatrix("m")
    a = np.arange(400.0).reshape(50, 8)
    out = m.reshape(shape)
    result = eg.function([m], out, backend="dask", chunks=chunks)(a)
    np.testing.assert_array_equal(result, a.reshape(shape))


def test_a_reshape_across_chunks_stays_lazy_and_chunked():
    import dask.array as da

    m = et.dmatrix("m")
    a = da.from_array(np.arange(400.0).reshape(50, 8), chunks=(7, 3))
    result = eg.function([m], m.reshape((-1, 4)), backend="dask")(a)
    assert isinstance(result, da.Array) and result.numblocks[0] > 1
    np.testing.assert_array_equal(result.compute(), np.arange(400.0).reshape(100, 4))
