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


def test_rebuild_strict_false_lets_givens_change_a_type():
    import numpy as np
    w, (x, y) = et.imatrix("w"), et.ivectors("x", "y")
    f = eg.function([w, y], x * y, givens=[(x, w)], rebuild_strict=False)
    out = f(np.ones((3, 5), dtype="int32"), np.arange(5, dtype="int32"))
    np.testing.assert_array_equal(out, np.ones((3, 5)) * np.arange(5))
    with pytest.raises(TypeError, match="givens cannot replace x"):
        eg.function([w, y], x * y, givens=[(x, w)])


def test_clone_replace_rebuilds_with_the_replacements_types_unless_strict():
    from eqgraph.terms.graph import clone_replace
    x, wide = et.TensorType("float64", (50,))("x"), et.dvector("wide")
    y = et.exp(x)
    assert clone_replace(y, {x: et.TensorType("float64", (100,))("n")}, rebuild_strict=False).type.shape == (100,)
    assert clone_replace(y, {x: wide}, rebuild_strict=True).type.shape == (50,)
