"""One compiled function called from several threads at once gives each call its own answer,
and concurrent updates of shared variables are applied whole, one call after another."""

import sys
import threading

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from same_type_op import SameTypeOp

N_THREADS = 4
CALLS = 150


@pytest.fixture
def switch_often():
    """Make the interpreter switch threads very often, so interleavings actually happen."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def run_threads(work):
    """Run ``work(thread_index)`` in N_THREADS threads started together; re-raise any failure."""
    start = threading.Barrier(N_THREADS)
    errors = []

    def body(k):
        try:
            start.wait()
            work(k)
        except BaseException as err:  # noqa: BLE001  (reported below, with its thread)
            errors.append((k, err))

    threads = [threading.Thread(target=body, args=(k,)) for k in range(N_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        k, err = errors[0]
        raise AssertionError(f"thread {k} failed ({len(errors)} failures in all): {err!r}") from err


def test_concurrent_calls_give_each_caller_its_own_results(switch_often):
    x, y = et.dvector("x"), et.dvector("y")
    w = eg.shared(np.arange(3.0), name="w")
    single = eg.function([x], et.exp(x) * 2.0 + 1.0)
    several = eg.function([x, y], [(x * y).sum(), x - y, et.tanh(x) + w])
    trusted = eg.function([x], x * 3.0, trust_input=True)

    def work(k):
        rng = np.random.default_rng(k)
        for _ in range(CALLS):
            a, b = rng.normal(size=3), rng.normal(size=3)
            np.testing.assert_allclose(single(a), np.exp(a) * 2.0 + 1.0)
            total, diff, shifted = several(a, b)
            np.testing.assert_allclose(total, (a * b).sum())
            np.testing.assert_allclose(diff, a - b)
            np.testing.assert_allclose(shifted, np.tanh(a) + np.arange(3.0))
            np.testing.assert_allclose(trusted(a), a * 3.0)

    run_threads(work)


def test_concurrent_updates_are_applied_whole_and_none_is_lost(switch_often):
    x = et.dvector("x")
    count = eg.shared(0, name="count")
    total = eg.shared(np.zeros(3), name="total")
    a, b = eg.shared(10.0, name="a"), eg.shared(-10.0, name="b")
    step = eg.function([x], [count * 1, total.sum()],
                       updates={count: count + 1, total: total + x, a: a + 1.0, b: b - 1.0})
    balance = eg.function([], a + b)  # reads two shared values that step updates together

    def work(k):
        for i in range(CALLS):
            seen_count, _ = step(np.full(3, float(k)))
            assert 0 <= seen_count < N_THREADS * CALLS
            assert balance() == 0.0  # never a's new value with b's old one
            if i % 10 == 0:
                count.get_value()

    run_threads(work)
    assert count.get_value() == N_THREADS * CALLS
    np.testing.assert_allclose(total.get_value(), np.full(3, CALLS * sum(range(N_THREADS))))
    assert (a.get_value(), b.get_value()) == (10.0 + N_THREADS * CALLS, -10.0 - N_THREADS * CALLS)


def test_a_thread_gets_its_own_cells_and_profiles_add_up():
    x = et.dvector("x")
    f = eg.function([x], [x + 1.0, x * 2.0], profile=True)
    f(np.ones(2))
    results = {}

    def other():
        results["other"] = f(np.full(2, 5.0))

    t = threading.Thread(target=other)
    t.start()
    t.join()
    np.testing.assert_array_equal(results["other"][0], [6.0, 6.0])
    np.testing.assert_array_equal(f.program.output_cells[0][0], [2.0, 2.0])  # this thread's cells
    assert f.profile.calls == 2
    assert sum(s.calls for s in f.profile.nodes) == 2 * len(f.program.order)


class WaitInside(SameTypeOp):
    """Holds a call inside its perform until the test lets it go."""

    def __init__(self, started, release):
        self.started, self.release = started, release

    def perform(self, node, inputs, out):
        self.started.set()
        assert self.release.wait(timeout=60)
        out[0][0] = inputs[0] * 1.0


def test_set_value_waits_for_a_call_that_updates_the_variable():
    w = eg.shared(np.zeros(2), name="w")
    started, release = threading.Event(), threading.Event()
    step = eg.function([], WaitInside(started, release)(w), updates={w: w + 1.0})
    call = threading.Thread(target=step)
    call.start()
    assert started.wait(timeout=60)
    setter = threading.Thread(target=w.set_value, args=(np.full(2, 100.0),))
    setter.start()
    setter.join(timeout=0.2)
    waited = setter.is_alive()  # still blocked on the variable's lock (if it had not waited, it is done)
    release.set()
    call.join()
    setter.join()
    assert waited
    np.testing.assert_array_equal(w.get_value(), [100.0, 100.0])  # the update came first, not after
