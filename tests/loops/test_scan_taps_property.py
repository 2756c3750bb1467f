"""Random tap layouts (sequence taps, output taps, direction, n_steps given or not) against a
NumPy loop written from Aesara's documented semantics, and their gradients against finite
differences. A few derandomized draws run by default; ``-m slow`` runs many."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import eqgraph as eg
import eqgraph.tensor as et

layouts = st.fixed_dictionaries({
    "seq_taps": st.lists(st.integers(-2, 2), min_size=1, max_size=3, unique=True),
    "out_taps": st.lists(st.integers(-3, -1), min_size=1, max_size=2, unique=True),
    "go_backwards": st.booleans(),
    "n_steps": st.one_of(st.none(), st.integers(0, 4)),
    "extra": st.integers(0, 2),   # sequence entries beyond what the steps need
    "seed": st.integers(0, 2**16),
})


def step(seq_values, out_values, c):
    """The step both implementations run: a mix of every tap, kept bounded by sin."""
    total = c
    for i, v in enumerate(seq_values):
        total = total + (i + 1) * v
    for j, v in enumerate(out_values):
        total = total + np.sin(v) / (j + 2) if isinstance(v, np.ndarray) else total + et.sin(v) / (j + 2)
    return total


def reference(x, init, c, layout):
    """Aesara's semantics (checked against PyTensor by bench/scan_rnn.py), written out: step t
    reads x[t + tap - min(taps, 0)], or going backwards x[len(x) - 1 - max(taps, 0) + tap - t]
    (each tap's slice is reversed, so tap +1 is still the next entry of x), and the outputs of
    steps t + tap, the first -min(taps) of them being init[0], init[1], ... (with taps [-1],
    init is the state itself)"""
    seq_taps, out_taps = layout["seq_taps"], layout["out_taps"]
    low, high = min(min(seq_taps), 0), max(max(seq_taps), 0)
    n = layout["n_steps"] if layout["n_steps"] is not None else len(x) - (high - low)
    k = -min(out_taps)
    history = [init] if out_taps == [-1] else list(init[:k])
    for t in range(n):
        if layout["go_backwards"]:
            seq_values = [x[len(x) - 1 - high + tap - t] for tap in seq_taps]
        else:
            seq_values = [x[t + tap - low] for tap in seq_taps]
        out_values = [history[k + t + tap] for tap in out_taps]
        history.append(step(seq_values, out_values, c))
    return np.array(history[k:]).reshape((n, *x.shape[1:]))


def build(layout):
    def fn(*args):
        n_seq = len(layout["seq_taps"])
        return step(args[:n_seq], args[n_seq:-1], args[-1])

    def loop(x, init, c):
        out, _ = eg.scan(fn, sequences={"input": x, "taps": layout["seq_taps"]},
                         outputs_info={"initial": init, "taps": layout["out_taps"]}, non_sequences=c,
                         n_steps=layout["n_steps"], go_backwards=layout["go_backwards"])
        return out
    return loop


def values(layout):
    rng = np.random.default_rng(layout["seed"])
    span = max(max(layout["seq_taps"]), 0) - min(min(layout["seq_taps"]), 0)
    steps = layout["n_steps"] if layout["n_steps"] is not None else 3
    x = rng.standard_normal((steps + span + layout["extra"], 2))
    init = rng.standard_normal((-min(layout["out_taps"]) + layout["extra"], 2))
    if layout["out_taps"] == [-1]:  # the initial value is then the state itself
        init = init[0]
    return x, init, rng.standard_normal(2)


def check(layout):
    x, init, c = values(layout)
    xv, initv, cv = et.dmatrix("x"), et.tensor("init", "float64", (None,) * init.ndim), et.dvector("c")
    result = eg.function([xv, initv, cv], build(layout)(xv, initv, cv))(x, init, c)
    np.testing.assert_allclose(result, reference(x, init, c, layout), rtol=1e-12, atol=1e-12)
    if len(result):
        eg.verify_grad(build(layout), [x, init, c], n_tests=1, rng=np.random.default_rng(0))


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout=layouts)
def test_random_tap_layouts(layout):
    check(layout)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=False)
@given(layout=layouts)
def test_random_tap_layouts_long(layout):
    check(layout)
