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


def test_qr_gradient_of_an_unknown_shape_asks_for_a_static_shape_not_the_mode_in_use():
    a = et.dmatrix("A")
    r = et.linalg.qr(a)[1]
    with pytest.raises(eg.NullTypeGradError) as info:
        eg.function([a], eg.grad(r.sum(), a))
    message = str(info.value)
    assert "static shape" in message and "specify_shape" in message
    assert "use mode='reduced'" not in message


def test_qr_gradient_of_complete_mode_of_a_tall_matrix_suggests_reduced_mode():
    a = et.TensorType("float64", (4, 2))("A")
    q = et.linalg.qr(a, mode="complete")[0]
    with pytest.raises(eg.NullTypeGradError, match="not unique.*use mode='reduced'"):
        eg.function([a], eg.grad(q.sum(), a))
