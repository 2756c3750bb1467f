"""The loops of the whole Numba function (eqgraph/exec/numba/program.py) on log-densities with
gradients, as PyMC writes them: each scalar step of a fused node computed once per element
(never again for another output, nor for a fill that reads only its argument's shape; steps on
scalars alone before the loop), and the values the hot program gives.  Tests that compile skip without Numba."""

import math

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.numba import kernels as numba_kernels

needs_numba = pytest.mark.skipif(numba_kernels.numba is None, reason="Numba is not installed")


def _negbin(n: int):
    """A negative-binomial GLM's log-density and its gradient: its data are constants of static
    length ``n``, the gradient of the log-likelihood's sum a fill of its shape."""
    rng = np.random.default_rng(1)
    X = et.constant(rng.normal(size=(n, 3)) * 0.3)
    y = rng.integers(0, 9, n)
    lgamma_y1 = et.constant(np.array([math.lgamma(v + 1) for v in y]))
    beta, log_alpha = et.dvector("beta"), et.dscalar("log_alpha")
    mu, alpha = et.exp(X @ beta), et.exp(log_alpha)
    yc = et.constant(y)
    lik = (et.gammaln(yc + alpha) - et.gammaln(alpha) - lgamma_y1 + alpha * et.log(alpha / (alpha + mu))
           + yc * et.log(mu / (alpha + mu)))
    logp = lik.sum() - 0.5 * (beta ** 2).sum() - 0.5 * log_alpha ** 2
    return [beta, log_alpha], [logp, *eg.grad(logp, [beta, log_alpha])]


def _in_loops(source: str) -> str:
    """The lines of ``source`` inside a loop over the elements of an array (run once per element)."""
    inside, looped = None, []
    for line in source.splitlines():
        depth = len(line) - len(line.lstrip())
        if inside is not None and depth <= inside:
            inside = None
        if inside is None and line.lstrip().startswith("for i"):
            inside = depth
        elif inside is not None:
            looped.append(line)
    return "\n".join(looped)


def _values():
    return [np.array([0.1, -0.2, 0.3]), np.asarray(0.5)]


def _whole_and_program(f, args):
    call = f.program.call
    assert hasattr(call, "whole_source"), "the graph has no whole function"
    f(*[np.copy(a) for a in args])
    assert hasattr(call.__globals__["hot"], "py_func"), "the whole function was not compiled"
    return f(*args), call.program(*args)


@needs_numba
@pytest.mark.parametrize("n", [1, 7, 300])
def test_each_libm_step_runs_once_per_element_and_gives_the_programs_bits(n, hot_at_once):
    f = eg.function(*_negbin(n))
    source = f.program.call.whole_source
    looped = _in_loops(source)
    if n > 1:   # (of one element, every array's steps run once, outside any loop)
        assert looped.count("math.lgamma(") == 1, source   # gammaln(y + alpha); gammaln(alpha) is a scalar
        assert looped.count("special.digamma(") == 1, source   # digamma(y + alpha)
        assert looped.count("math.exp(") == 1 and looped.count("math.log(") == 2, source
    got, want = _whole_and_program(f, _values())
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        # the program's psi is SciPy's, the whole function's digamma eqgraph's own (a few ulps
        # apart); at 300 elements the program's fused kernel also runs NumPy's SIMD exp and log,
        # and its matmul may pick another BLAS kernel than np.dot
        np.testing.assert_allclose(g, w, rtol=1e-14 if n < 100 else 1e-12)


@needs_numba
def test_outputs_of_one_loop_whose_own_inputs_broadcast_to_other_lengths_get_numpys_shapes(hot_at_once):
    x, y = et.dvector("x"), et.dvector("y")
    f = eg.function([x, y], [et.exp(x) * 2.0, et.exp(x) * y])   # one fused node, one loop
    source = f.program.call.whole_source
    assert _in_loops(source).count("math.exp(") == 1, source
    for xs, ys in [(np.array([0.5]), np.arange(4.0)), (np.arange(3.0), np.arange(3.0)), (np.arange(3.0), np.ones(1))]:
        got = f(xs, ys)
        want = [np.exp(xs) * 2.0, np.exp(xs) * ys]
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape
            np.testing.assert_array_equal(g, w)
