"""Reductions' dtypes as PyTensor defines them (``Sum``/``Prod``/``CAReduce`` and ``mean``):
the accumulator dtype, the output dtype, ``dtype=``/``acc_dtype=`` and the arguments refused."""

import numpy as np
import pytest

import eqgraph
import eqgraph.tensor as et


def test_float32_mean_accumulates_in_float64():
    # a float32 accumulator loses the 1 between 1e8 and -1e8 and gives 0
    v = np.asarray([1e8, 1, -1e8], dtype="float32")
    x = et.vector("x", dtype="float32")
    f = eqgraph.function([x], [x.mean(), x.sum()])
    mean, total = f(v)
    assert mean.dtype == np.float32 and total.dtype == np.float32
    np.testing.assert_allclose(mean, np.float32(1 / 3), rtol=1e-6)
    assert total == 1.0
