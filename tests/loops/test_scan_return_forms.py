"""The forms of fn's return value that scan takes (PyTensor's and Aesara's): outputs, then
updates as a dict or a list of (shared variable, new value) pairs, then an ``until``, in a
list or a tuple; and what scan returns for a loop without outputs."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.terms.fgraph import MissingInputError


def _loop(step, xs):
    outs, updates = eg.scan(step, sequences=xs, outputs_info=[et.constant(0.0), None])
    return eg.function([xs], outs, updates=updates)


@pytest.mark.parametrize("pack", [list, tuple], ids=["list", "tuple"])
@pytest.mark.parametrize("as_pairs", [False, True], ids=["dict", "pairs"])
def test_outputs_then_updates_in_a_list_or_a_tuple(pack, as_pairs):
    total = eg.shared(0.0, "total")

    def step(v, acc):
        updates = {total: total + v}
        return pack([(acc + v, v * 2), list(updates.items()) if as_pairs else updates])

    f = _loop(step, et.dvector("xs"))
    sums, doubled = f(np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(sums, [1.0, 3.0, 6.0])
    np.testing.assert_array_equal(doubled, [2.0, 4.0, 6.0])
    assert total.get_value() == 6.0


def test_updates_alone_as_a_list_of_pairs():
    a, b = eg.shared(1.0, "a"), eg.shared(0.0, "b")
    outs, updates = eg.scan(lambda: [(a, a * 2), (b, b + a)], n_steps=3)
    assert outs is None                                  # no outputs: None, as PyTensor and Aesara
    eg.function([], [], updates=updates)()
    assert (a.get_value(), b.get_value()) == (8.0, 7.0)  # b gets 1 + 2 + 4


def test_outputs_updates_and_until_in_a_list():
    count = eg.shared(0.0, "count")
    x = et.dscalar("x")
    values, updates = eg.scan(lambda prev: [prev * 2, [(count, count + 1)], eg.until(prev * 2 > 10)],
                              outputs_info=x, n_steps=20)
    np.testing.assert_array_equal(eg.function([x], values, updates=updates)(1.0), [2.0, 4.0, 8.0, 16.0])
    assert count.get_value() == 4.0


def test_an_update_of_something_that_is_not_shared_is_refused():
    x = et.dscalar("x")
    with pytest.raises(TypeError, match="shared variables"):
        eg.scan(lambda: [(x, x + 1)], n_steps=2)


def test_strict_refuses_an_unlisted_variable_with_missing_input_error():
    # PyTensor's error for a variable a strict loop reads without being told
    w = eg.shared(np.eye(2), "w")
    x0 = et.dvector("x0")
    with pytest.raises(MissingInputError, match="w.*non_sequences"):
        eg.scan(lambda x: x @ w, outputs_info=[x0], n_steps=3, strict=True)
