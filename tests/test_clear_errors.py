"""Errors that say what is wrong: each names the argument, op or rule at fault and what to do,
instead of a raw error from a library underneath (or advice that does not apply)."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et


@pytest.mark.parametrize("text", ["", "   ", "\n"])
def test_a_blank_rule_string_is_refused_naming_the_argument(text):
    x = et.dvector("x")
    with pytest.raises(ValueError, match=r"rulesets: .*blank.*no built-in ruleset.*leave it out"):
        eg.function([x], x * 2, rulesets=[*eg.DEFAULT_RULESETS, text])


def test_qr_gradient_of_complete_mode_of_a_tall_matrix_suggests_reduced_mode():
    a = et.TensorType("float64", (4, 2))("A")
    q = et.linalg.qr(a, mode="complete")[0]
    with pytest.raises(eg.NullTypeGradError, match="not unique.*use mode='reduced'"):
        eg.function([a], eg.grad(q.sum(), a))


@pytest.mark.parametrize("rulesets", [None, []])
@pytest.mark.parametrize("n, axis", [(1, -1), (2, -1), (1, 0)])
def test_diff_of_booleans_is_not_equal_as_in_numpy(rulesets, n, axis):
    """np.diff of booleans compares neighbours with != (booleans cannot be subtracted)."""
    m = et.dmatrix("m")
    kwargs = {} if rulesets is None else {"rulesets": rulesets}
    f = eg.function([m], et.diff(et.gt(m, 0), n=n, axis=axis), **kwargs)
    a = np.array([[1.0, -1.0, 2.0, 3.0], [-1.0, -2.0, 5.0, -3.0], [0.5, 0.5, -1.0, 1.0]])
    out = f(a)
    expected = np.diff(a > 0, n=n, axis=axis)
    assert out.dtype == expected.dtype == np.bool_
    np.testing.assert_array_equal(out, expected)
