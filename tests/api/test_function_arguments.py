"""``eqgraph.function``'s arguments that used to be read too loosely: each form they accept
does what PyTensor's does, and any other value is a clear error naming the argument."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et


def _two_counters():
    x, y = eg.shared(0, name="x"), eg.shared(1, name="y")
    x.default_update = x + 2
    y.default_update = y + 10
    return x, y


@pytest.mark.parametrize("form, x_after, y_after", [
    (False, 2, 11),       # every default update applies
    (True, 0, 1),         # none does
    ([], 2, 11),          # an empty list suppresses nothing
    ("y", 2, 1),          # only y's
    ("x", 0, 11),         # only x's
    ("x y", 0, 1),        # both
])
def test_no_default_updates_suppresses_exactly_the_listed_variables(form, x_after, y_after):
    x, y = _two_counters()
    if isinstance(form, str):
        form = [{"x": x, "y": y}[name] for name in form.split()]
    f = eg.function([], [x + y], no_default_updates=form)
    f()
    assert (int(x.get_value()), int(y.get_value())) == (x_after, y_after)


def test_no_default_updates_of_one_generator_keeps_the_others_drawing():
    first, second = eg.RandomStream(1), eg.RandomStream(2)
    a, b = first.normal(size=(2,)), second.normal(size=(2,))
    frozen_rng = first.state_updates[0][0]
    f = eg.function([], [a, b], no_default_updates=[frozen_rng])
    (a1, b1), (a2, b2) = f(), f()
    np.testing.assert_array_equal(a1, a2)
    assert not np.array_equal(b1, b2)


@pytest.mark.parametrize("form, message", [
    ("x", "no_default_updates must be True, False or a list of shared variables, not str 'x'"),
    (1, "no_default_updates must be True, False or a list of shared variables, not int 1"),
    (None, "no_default_updates must be True, False or a list of shared variables, not NoneType None"),
    ([et.dscalar("z")], r"no_default_updates item #0 \(z\) is not a shared variable"),
    ([3], r"no_default_updates item #0 \(int 3\) is not a shared variable"),
])
def test_no_default_updates_refuses_other_values(form, message):
    x, _ = _two_counters()
    with pytest.raises(TypeError, match=message):
        eg.function([], [x * 1], no_default_updates=form)
