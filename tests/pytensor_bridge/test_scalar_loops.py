"""PyTensor's ``Elemwise`` of a ``ScalarLoop`` (one scalar loop per element, the form of its
gradients of ``betainc``, ``gammainc`` and ``hyp2f1``) and its special functions with an order
or several parameters, converted by ``from_pytensor``: values as PyTensor's own function."""

from __future__ import annotations

import numpy as np
import pytest

pytensor = pytest.importorskip("pytensor")

import pytensor.scalar as ps  # noqa: E402
import pytensor.tensor as pt  # noqa: E402
from pytensor.scalar.loop import ScalarLoop  # noqa: E402
from pytensor.tensor.elemwise import Elemwise  # noqa: E402

import eqgraph as eg  # noqa: E402
from eqgraph.pytensor import from_pytensor  # noqa: E402


def both(inputs, outputs):
    """The eqgraph function of the converted ``outputs`` and PyTensor's own."""
    converted = from_pytensor(outputs, inputs=inputs)
    return (eg.function(converted.inputs, converted.outputs),
            pytensor.function(inputs, outputs, mode="FAST_COMPILE"))


def test_a_for_loop_runs_each_elements_own_number_of_steps():
    x, c = ps.float64("x"), ps.float64("c")
    loop = Elemwise(ScalarLoop(init=[x], update=[x * c + 1], constant=[c]))
    n, x0, rate = pt.lvector("n"), pt.dvector("x0"), pt.dvector("rate")
    ours, theirs = both([n, x0, rate], [loop(n, x0, rate)])
    counts = np.array([0, 1, 5, 2, 12])       # none, one, several, the most
    x_values, rates = np.linspace(-1, 1, 5), np.array([0.5, 2.0, -1.5, 3.0, 1.1])
    (got,), (want,) = ours(counts, x_values, rates), theirs(counts, x_values, rates)
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="negative number of steps"):   # as PyTensor refuses it
        ours(np.array([1, -2, 3, 1, 1]), x_values, rates)


def test_a_while_loop_stops_each_element_at_its_own_condition_and_says_which_stopped():
    x, c = ps.float64("x"), ps.float64("c")
    doubled = x * c
    loop = Elemwise(ScalarLoop(init=[x], update=[doubled], constant=[c], until=doubled > 10.0))
    n, x0, rate = pt.lvector("n"), pt.dvector("x0"), pt.dscalar("rate")   # the constant broadcasts
    ours, theirs = both([n, x0, rate], list(loop(n, x0, rate)))
    counts = np.array([20, 20, 2, 20])
    x_values = np.array([1.0, 30.0, 1.0, -1.0])   # stops at step 4, at step 1, runs out, never stops
    got, want = ours(counts, x_values, 2.0), theirs(counts, x_values, 2.0)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(got[1], [True, True, False, False])
    # a loop that never starts is done, as the op's documentation and PyTensor's C code say
    # (its Python implementation, FAST_COMPILE's, says not done)
    values, done = ours(np.array([0, -3]), np.array([1.0, 1.0]), 2.0)
    np.testing.assert_array_equal(values, [1.0, 1.0])
    np.testing.assert_array_equal(done, [True, True])


def test_the_gradient_of_betainc_with_respect_to_its_parameters():
    # PyTensor writes d betainc / da and / db as while loops over a series
    a, b, x = pt.dvector("a"), pt.dvector("b"), pt.dvector("x")
    value = pt.betainc(a, b, x)
    ours, theirs = both([a, b, x], [value, *pytensor.grad(value.sum(), [a, b, x])])
    rng = np.random.default_rng(0)
    for _ in range(5):
        points = rng.uniform(0.3, 8, 6), rng.uniform(0.3, 8, 6), rng.uniform(0.01, 0.99, 6)
        for g, w in zip(ours(*points), theirs(*points)):
            assert np.isfinite(g).all() == np.isfinite(w).all()
            # both sum PyTensor's series; eqgraph's rewrites may order a step's arithmetic differently
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-300)


def test_polygamma_keeps_its_integer_order():
    n, x = pt.lvector("n"), pt.dvector("x")
    ours, theirs = both([n, x], [pt.polygamma(n, x)])
    orders, points = np.array([0, 1, 2, 3]), np.array([0.5, 1.5, 7.0, 40.0])
    np.testing.assert_allclose(ours(orders, points)[0], theirs(orders, points)[0], rtol=1e-14)
