"""Every op: perform matches NumPy, static shapes hold, infer_shape gives the real shape."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.terms import toposort
from op_cases import CASE_IDS, CASES, draw_case


def assert_same(got, expected):
    expected = np.asarray(expected)
    assert got.shape == expected.shape
    assert got.dtype == expected.dtype, f"dtype {got.dtype}, NumPy gives {expected.dtype}"
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-12)
    else:
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_op_matches_numpy(case, data):
    arrays, extra, xs, out = draw_case(case, data)
    expected = case.reference(*arrays, *extra)
    got = eg.function(xs, out, on_unused_input="ignore")(*arrays)
    assert_same(got, expected)
    assert out.ndim == got.ndim
    assert all(s is None or s == d for s, d in zip(out.type.shape, got.shape)), (out.type, got.shape)

    # infer_shape of every node in the graph, evaluated, equals the real shape
    nodes = toposort([out], xs)
    checks, inferred = [], []
    for node in nodes:
        shapes = [et.shape_of(i) for i in node.inputs]
        for var, shape in zip(node.outputs, node.op.infer_shape(None, node, shapes)):
            assert len(shape) == var.ndim, f"{node.op}.infer_shape gave {len(shape)} dims for a {var.ndim}-d output"
            checks.append(var)
            inferred.append(list(shape))
    flat = [d for shape in inferred for d in shape]
    values = eg.function(xs, checks + flat, on_unused_input="ignore")(*arrays)
    actual, dims = values[: len(checks)], iter(values[len(checks):])
    for var, value, shape in zip(checks, actual, inferred):
        assert tuple(int(next(dims)) for _ in shape) == value.shape, f"infer_shape of {var.owner.op}"
