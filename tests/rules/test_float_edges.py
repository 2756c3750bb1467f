"""Float edge cases the rules must respect: 0.0 and -0.0 are different constants (egglog's
f64 treats them as one value, so the encoder must never let them share an e-class, and
folding must not create a zero whose sign egglog would forget); x/c is x*(1/c) only where
1/c is a normal number."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et

X = np.array([1.0, -2.0, 0.0, -0.0])


def _same_bits(a, b):
    return np.array_equal(np.signbit(a), np.signbit(b)) and np.allclose(a, b, equal_nan=True)


@pytest.mark.parametrize("rulesets", [[], eg.DEFAULT_RULESETS], ids=["no-rules", "default-rules"])
def test_negative_zero_constant_keeps_its_sign_next_to_positive_zero(rulesets):
    x = et.dvector("x")
    f = eg.function([x], [x + 0.0, 1 / (x * -0.0), x * 0.0], rulesets=rulesets)
    with np.errstate(divide="ignore", invalid="ignore"):
        got = f(X)
        expected = [X + 0.0, 1 / (X * -0.0), X * 0.0]
    for g, e in zip(got, expected):
        assert _same_bits(g, e), (g, e)


@pytest.mark.parametrize("build", [lambda: et.constant(0.0) * -1.0, lambda: -et.constant(0.0),
                                   lambda: et.constant(-0.0) - 0.0, lambda: et.constant(-0.0) + -0.0],
                         ids=["mul", "neg", "sub", "add"])
def test_folding_a_signed_zero_keeps_its_sign(build):
    x = et.dvector("x")
    zero = build()
    f = eg.function([x], [1 / (x * zero), 1 / (x * 0.0)])
    with np.errstate(divide="ignore", invalid="ignore"):
        got = f(np.array([1.0]))
        expected_zero = zero.eval() if hasattr(zero, "eval") else None
    sign = -1.0 if np.signbit(expected_zero) else 1.0
    assert got[0][0] == sign * np.inf
    assert got[1][0] == np.inf


@pytest.mark.parametrize("c", [1e-310, 1e308, 3.0])
def test_division_by_a_constant_whose_reciprocal_is_not_normal_stays_a_division(c):
    x = et.dvector("x")
    data = np.array([1e-300, 2.0, -7.5])
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(eg.function([x], x / c)(data), data / c, rtol=1e-15)
