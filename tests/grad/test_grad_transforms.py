"""grad_clip and grad_scale (PyTensor's): the identity in value, the gradient clipped or scaled."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.grad import grad_clip, grad_scale


def test_grad_clip_keeps_the_value_and_clips_the_gradient():
    x = et.dvector("x")
    y = grad_clip(x, -1.0, 1.0)
    f = eg.function([x], [y, eg.grad((y ** 2).sum(), x)])
    value = np.array([-3.0, -0.25, 0.4, 2.0])
    got, g = f(value)
    np.testing.assert_array_equal(got, value)
    np.testing.assert_array_equal(g, np.clip(2 * value, -1.0, 1.0))


def test_grad_clip_takes_symbolic_bounds_and_refuses_crossed_ones():
    x, lo, hi = et.dscalar("x"), et.dscalar("lo"), et.dscalar("hi")
    g = eg.grad(grad_clip(x, lo, hi) * 10.0, x)
    assert eg.function([x, lo, hi], g)(1.0, -2.0, 3.0) == 3.0
    with pytest.raises(ValueError, match="lower_bound 1 is above upper_bound -1"):
        grad_clip(x, 1, -1)
    with pytest.raises(TypeError, match="GradClip takes x and 2 scalar"):
        grad_clip(x, et.dvector("lo"), 1.0)


def test_grad_scale_keeps_the_value_and_scales_the_gradient():
    x, m = et.dvector("x"), et.dscalar("m")
    value = np.array([1.5, -2.0])
    y = grad_scale(x, 2.0)
    got, g = eg.function([x], [y, eg.grad((y ** 2).sum(), x)])(value)
    np.testing.assert_array_equal(got, value)
    np.testing.assert_array_equal(g, 2.0 * 2 * value)
    g = eg.grad((grad_scale(x, m) ** 2).sum(), x)
    np.testing.assert_array_equal(eg.function([x, m], g)(value, -0.5), -0.5 * 2 * value)


def test_the_bounds_and_the_factor_get_no_gradient():
    x, m = et.dscalar("x"), et.dscalar("m")
    with pytest.raises(eg.DisconnectedInputError):
        eg.grad(grad_scale(x, m) ** 2, m)
    assert eg.grad(grad_scale(x, m) ** 2, m, disconnected_inputs="ignore") is not None
