"""``clip`` is PyTensor's: below ``lo`` gives ``lo``, else above ``hi`` gives ``hi``, else ``x``.
It equals ``np.clip`` where ``lo <= hi``; with ``lo > hi`` (NumPy gives ``hi`` everywhere) or
a NaN bound it follows PyTensor, on every backend and in the gradient."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et


def _pytensor_clip(x, lo, hi):
    return np.where(x < lo, lo, np.where(x > hi, hi, x))


X = np.array([-3.0, 0.0, 0.5, 2.0, np.nan])


@pytest.mark.parametrize("lo, hi", [(1.0, -1.0), (-1.0, 1.0), (np.nan, 1.0), (-1.0, np.nan), (0.5, 0.5)])
@pytest.mark.parametrize("fusion", [True, False])
def test_clip_follows_pytensor_when_the_bounds_are_backwards_or_nan(lo, hi, fusion):
    x = et.dvector("x")
    f = eg.function([x], et.clip(x, lo, hi) * 1.0, fusion=fusion)
    np.testing.assert_array_equal(f(X), _pytensor_clip(X, lo, hi))


def test_backwards_clip_matches_pytensor_s_expected_values():
    x = et.dvector("x")
    a = np.array([-3.0, 0.0, 0.5, 2.0])
    np.testing.assert_array_equal(eg.function([x], et.clip(x, 1.0, -1.0))(a), [1.0, 1.0, 1.0, -1.0])


def test_the_gradient_of_a_backwards_clip_goes_to_the_chosen_operand():
    x, lo, hi = et.dvector("x"), et.dscalar("lo"), et.dscalar("hi")
    grads = eg.grad(et.clip(x, lo, hi).sum(), [x, lo, hi])
    gx, glo, ghi = eg.function([x, lo, hi], grads)(np.array([-3.0, 0.5, 2.0]), 1.0, -1.0)
    np.testing.assert_array_equal(gx, [0.0, 0.0, 0.0])   # -3 and 0.5 are below lo; 2 above hi
    assert (glo, ghi) == (2.0, 1.0)


def test_the_numba_whole_function_clips_as_pytensor_does(monkeypatch):
    from eqgraph.exec.numba import kernels as numba_kernels
    from eqgraph.exec.numba import program as numba_program
    if numba_kernels.numba is None:
        pytest.skip("Numba is not installed")
    monkeypatch.setattr(eg.config, "compile", "eager")
    monkeypatch.setattr(numba_program, "SMALL_INPUTS", 10**9)
    monkeypatch.setattr(numba_program, "MIN_NODES", 1)
    x, lo, hi = et.dvector("x"), et.dscalar("lo"), et.dscalar("hi")
    f = eg.function([x, lo, hi], et.clip(x * 2.0, lo, hi) + 1.0)
    call = f.program.call
    assert hasattr(call, "whole_source")
    f(X, 1.0, -1.0)
    assert hasattr(call.__globals__["hot"], "py_func"), "the whole function was not compiled"
    for lo_v, hi_v in [(1.0, -1.0), (np.nan, 1.0), (-1.0, 1.0)]:
        np.testing.assert_array_equal(f(X, lo_v, hi_v), _pytensor_clip(X * 2.0, lo_v, hi_v) + 1.0)
