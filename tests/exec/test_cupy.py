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
    if "no-gpu" in case.tags:
        pytest.skip(f"{case.name} has no CuPy form (it refuses by name on the GPU)")
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
    assert isinstance(w.get_value(borrow=True, return_internal_type=True), cupy.ndarray)
    np.testing.assert_array_equal(w.get_value(), [2.0, 2.0, 2.0])


def test_shared_variables_that_are_only_read_move_to_the_device():
    import eqgraph.tensor as et

    scale = eg.shared(np.full(3, 2.0), "scale")  # read, never updated
    x = et.dvector("x")
    f = eg.function([x], x * scale, backend="cupy")
    np.testing.assert_array_equal(f(np.ones(3)), [2.0, 2.0, 2.0])


# -- random draws on the device ------------------------------------------------------------
def test_normal_draws_are_made_on_the_device():
    import eqgraph.tensor as et

    loc = et.dvector("loc")
    draw = eg.RandomStream(7).normal(loc, 2.0)
    f_gpu = eg.function([loc], draw, backend="cupy")
    out = f_gpu(cupy.full(1_000_000, 3.0))
    assert isinstance(out, cupy.ndarray) and out.dtype == cupy.float64
    assert abs(float(out.mean()) - 3.0) < 0.01 and abs(float(out.std()) - 2.0) < 0.01
    again = eg.function([loc], eg.RandomStream(7).normal(loc, 2.0), backend="cupy")
    first = again(cupy.zeros(5)).get()
    # the same seed gives the same stream; a call moves it on
    np.testing.assert_array_equal(first, eg.function([loc], eg.RandomStream(7).normal(loc, 2.0),
                                                     backend="cupy")(cupy.zeros(5)).get())
    assert not np.array_equal(first, again(cupy.zeros(5)).get())
    # drawn by CuPy's generator, not NumPy's: other numbers than the host backend's
    host = eg.function([loc], eg.RandomStream(7).normal(loc, 2.0))(np.zeros(5))
    assert not np.array_equal(first, host)


def test_uniform_and_bernoulli_on_the_device_keep_their_ranges_and_dtypes():
    srng = eg.RandomStream(3)
    u = srng.uniform(-1.0, 4.0, size=(200_000,), dtype="float32")
    b = srng.bernoulli(0.25, size=(200_000,))
    f = eg.function([], [u, b], backend="cupy")
    u_val, b_val = f()
    assert u_val.dtype == np.float32 and u_val.min() >= -1.0 and u_val.max() < 4.0
    assert abs(u_val.mean() - 1.5) < 0.02
    assert b_val.dtype == np.int64 and set(np.unique(b_val)) == {0, 1}
    assert abs(b_val.mean() - 0.25) < 0.01


DEVICE_DRAWS = [  # (distribution, arguments, a check of the values drawn)
    ("integers", (0, 10, (1000,)), lambda v: v.min() >= 0 and v.max() < 10 and len(np.unique(v)) == 10),
    ("binomial", (np.array([3, 9]), 0.5, (500, 2)), lambda v: v.min() >= 0 and (v.max(axis=0) <= [3, 9]).all()),
    ("multinomial", (6, np.array([0.2, 0.3, 0.5]), (400,)), lambda v: (v.sum(axis=-1) == 6).all()),
    ("choice", (np.arange(10.0), (10,), False), lambda v: sorted(v) == list(range(10))),
    ("permutation", (50,), lambda v: sorted(v) == list(range(50))),
]


@pytest.mark.parametrize("name, args, check", DEVICE_DRAWS, ids=[d[0] for d in DEVICE_DRAWS])
def test_every_distribution_is_drawn_on_the_device(monkeypatch, name, args, check):
    from eqgraph.tensor import random_draws

    made = []
    device_draw = random_draws.DRAWS[name]
    monkeypatch.setitem(random_draws.DRAWS, name, lambda xp, *a, **k: made.append(xp) or device_draw(xp, *a, **k))
    f = eg.function([], getattr(eg.RandomStream(11), name)(*args), backend="cupy")
    first, second = f(), f()  # drawn on the device; with no CuPy input, returned as NumPy
    assert made == [cupy, cupy]
    assert check(first)
    assert not np.array_equal(first, second)  # a call moves the stream on
    again = eg.function([], getattr(eg.RandomStream(11), name)(*args), backend="cupy")()
    np.testing.assert_array_equal(first, again)  # the same seed, the same numbers
    host = eg.function([], getattr(eg.RandomStream(11), name)(*args))()
    assert not np.array_equal(first, host)  # CuPy's generator, not NumPy's


def test_a_symbolic_size_draws_on_the_device():
    import eqgraph.tensor as et

    n = et.lscalar("n")
    draw = eg.RandomStream(5).integers(0, 10, size=(n,))
    out = eg.function([n], draw, backend="cupy")(cupy.asarray(1000))
    assert isinstance(out, cupy.ndarray) and out.dtype == cupy.int64
    assert int(out.min()) >= 0 and int(out.max()) < 10
