"""CuPy kernels for fused nodes (eqgraph/exec/cupy/kernels.py): the ElementwiseKernel source is
built and checked on the CPU; running it needs CuPy and a GPU (skipped otherwise)."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.composite import Composite
from eqgraph.exec.cupy.kernels import elementwise_source


def _node(inputs, outputs):
    f = eg.function(inputs, outputs, rulesets=[])
    [node] = [n for n in f.fgraph.toposort() if isinstance(n.op, Composite)]
    return f, node


def test_elementwise_source_computes_each_step_in_its_dtype():
    x, y = et.fvector("x"), et.dvector("y")
    f, node = _node([x, y], [et.exp(x) * 2 + et.cast(x > 0, "float64") * et.maximum(y, 1.0)])
    in_params, out_params, operation, name = elementwise_source(node.op, node)
    assert in_params.startswith("float32 i0, ") and out_params == "float64 o0"
    assert "float t0 = (float)exp(i0);" in operation
    assert "bool t" in operation and "(double)(t" in operation     # the comparison, then the cast
    assert "|| i" in operation and "!= i" in operation               # maximum propagates NaN
    assert operation.rstrip().endswith(";") and "o0 = t" in operation
    assert name.startswith("eqgraph_composite_exp")


def test_elementwise_source_refuses_integer_steps():
    i = et.lvector("i")
    _, node = _node([i], [(i * 3) // 2 + 1])
    assert elementwise_source(node.op, node) is None


def test_fused_node_runs_as_one_kernel_on_the_gpu():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no GPU")
    except cupy.cuda.runtime.CUDARuntimeError:
        pytest.skip("no GPU")
    x, y = et.dvector("x"), et.dvector("y")
    outs = [et.exp(x) * 2 + et.maximum(y, x), et.sigmoid(x - y)]
    f = eg.function([x, y], outs, backend="cupy")
    g = eg.function([x, y], outs, fusion=False)
    xv, yv = np.array([0.5, np.nan, -np.inf, 2.0]), np.array([1.0, 0.0, np.nan, -1.0])
    for a, b in zip(f(xv, yv), g(xv, yv)):
        np.testing.assert_allclose(a, b, rtol=1e-12, equal_nan=True)
