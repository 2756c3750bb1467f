"""The CuPy backend: the same perform code runs on the GPU. Skipped without CuPy and a GPU."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import eqgraph as eg
from op_cases import CASES, draw_case

cupy = pytest.importorskip("cupy")
try:
    if cupy.cuda.runtime.getDeviceCount() < 1:
        pytest.skip("no GPU", allow_module_level=True)
except cupy.cuda.runtime.CUDARuntimeError:
    pytest.skip("no GPU", allow_module_level=True)

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_op_on_gpu_matches_numpy(case, data):
    arrays, extra, xs, out = draw_case(case, data, static=False)
    f = eg.function(xs, out, on_unused_input="ignore", backend="cupy")
    host = f(*arrays)                      # NumPy in, NumPy out
    assert isinstance(host, np.ndarray)
    device = f(*[cupy.asarray(a) for a in arrays])  # CuPy in, CuPy out
    assert isinstance(device, cupy.ndarray)
    expected = np.asarray(case.reference(*arrays, *extra))
    np.testing.assert_allclose(host, expected, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(device.get(), expected, rtol=1e-6, atol=1e-12)


def test_shared_updates_stay_on_the_device():
    import eqgraph.tensor as et

    w = eg.shared(np.zeros(3), "w")
    x = et.dvector("x")
    step = eg.function([x], (w * x).sum(), updates={w: w + x}, backend="cupy")
    step(np.ones(3))
    step(np.ones(3))
    assert isinstance(w.get_value(borrow=True), cupy.ndarray)
    np.testing.assert_array_equal(w.get_value(), [2.0, 2.0, 2.0])


def test_shared_variables_that_are_only_read_move_to_the_device():
    import eqgraph.tensor as et

    scale = eg.shared(np.full(3, 2.0), "scale")  # read, never updated
    x = et.dvector("x")
    f = eg.function([x], x * scale, backend="cupy")
    np.testing.assert_array_equal(f(np.ones(3)), [2.0, 2.0, 2.0])
