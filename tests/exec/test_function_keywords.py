"""A compiled function's keyword arguments and ``givens``, where PyTensor refuses what is ambiguous."""

import pytest

import eqgraph as eg
import eqgraph.tensor as et


def test_a_keyword_that_names_several_inputs_is_refused():
    a, x, s = et.dscalars("x", "x", "x")
    f = eg.function([a, x, s], a + 2 * x + 3 * s)
    assert f(1, 2, 3) == 14
    with pytest.raises(TypeError, match="'x' names inputs #0, #1 and #2"):
        f(1, 2, x=3)


def test_a_unique_keyword_still_names_its_input():
    a, b = et.dscalar("a"), et.dscalar("b")
    f = eg.function([a, b], a - b)
    assert f(b=1.0, a=3.0) == 2.0


def test_givens_cannot_replace_an_explicit_input():
    x = et.dscalar("x")
    with pytest.raises(RuntimeError, match="x is an input of the function"):
        eg.function([x], x * 2, givens={x: x + 1})


def test_dprint_is_debugprint_of_the_function():
    x = et.dscalar("x")
    f = eg.function([x], x + 1)
    assert f.dprint(file="str") == eg.debugprint(f, file="str")
