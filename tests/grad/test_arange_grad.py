"""The gradient of a float ``arange(start, stop, step)``: each element is ``start + i * step``, so
``start`` gets the summed cotangent and ``step`` the cotangent weighted by ``i``; ``stop`` only
sets the length (disconnected, as in PyTensor). An integer arange has zero gradients."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et

RULES = [pytest.param({}, id="default-rules"), pytest.param({"rulesets": []}, id="no-rules")]


@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize("start, stop, step", [(1.0, 5.1, 0.5), (5.1, 0.0, -0.5), (0.0, 4.9, 1.0)])
def test_float_arange_gradient_reaches_start_and_step(start, stop, step, rules):
    a, b, c = et.dscalar("a"), et.dscalar("b"), et.dscalar("c")
    out = et.arange(a, b, c)
    cost = et.sum(out * out)
    f = eg.function([a, b, c], eg.grad(cost, [a, c]), on_unused_input="ignore", **rules)
    got_start, got_step = f(start, stop, step)
    values = np.arange(start, stop, step)
    index = np.arange(len(values))
    np.testing.assert_allclose(got_start, np.sum(2 * values))
    np.testing.assert_allclose(got_step, np.sum(2 * values * index))


def test_float_arange_stop_is_disconnected():
    a, b, c = et.dscalar("a"), et.dscalar("b"), et.dscalar("c")
    with pytest.raises(eg.DisconnectedInputError):
        eg.grad(et.sum(et.arange(a, b, c)), b)


def test_arange_gradient_passes_verify_grad():
    eg.verify_grad(lambda a, c: et.arange(a, et.constant(5.1), c), [np.asarray(1.0), np.asarray(0.5)],
                   rng=np.random.default_rng(0))


def test_integer_arange_has_zero_gradient():
    n = et.lscalar("n")
    x = et.dscalar("x")
    cost = et.sum(et.cast(et.arange(n), "float64")) * x
    f = eg.function([n, x], eg.grad(cost, x))
    assert f(4, 2.0) == 6.0
