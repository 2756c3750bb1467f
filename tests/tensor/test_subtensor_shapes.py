"""The symbolic shape of a slice whose step is a variable: NumPy's length for either sign."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et

STARTS = [None, -8, -5, -1, 0, 1, 4, 5, 8]
STEPS = [-6, -3, -1, 1, 2, 5]


@pytest.mark.parametrize("step", STEPS)
def test_length_of_a_slice_with_a_symbolic_step(step):
    x, s = et.dvector("x"), et.lscalar("s")
    length = eg.function([x, s], x[::s].shape[0])
    values = np.arange(5.0)
    assert length(values, step) == len(values[::step])


def test_length_of_a_slice_with_symbolic_start_stop_and_step():
    x, a, b, s = et.dvector("x"), et.lscalar("a"), et.lscalar("b"), et.lscalar("s")
    length = eg.function([x, a, b, s], x[a:b:s].shape[0])
    values = np.arange(5.0)
    for start in STARTS[1:]:
        for stop in STARTS[1:]:
            for step in STEPS:
                assert length(values, start, stop, step) == len(values[start:stop:step]), (start, stop, step)
