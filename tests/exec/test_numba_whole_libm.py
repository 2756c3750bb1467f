"""The libm calls of the whole Numba function (eqgraph/exec/numba/program.py) on PyMC's
log-densities: forms that LLVM can share (``exp(-|x|)`` for ``sigmoid(x)``, ``sigmoid(-x)``,
``softplus(x)`` and ``softplus(-x)`` alike) are computed once per element, counted in the
optimized LLVM IR of the compiled function, and the values are the NumPy program's."""

import re

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.numba import kernels as numba_kernels

needs_numba = pytest.mark.skipif(numba_kernels.numba is None, reason="Numba is not installed")


def _calls(f, prefix: str) -> int:
    """How many calls of functions named ``prefix...`` the compiled whole function's IR holds."""
    hot = f.program.call.__globals__["hot"]
    assert hasattr(hot, "py_func"), "the whole function was not compiled"
    # compiled again without the disk cache: Numba keeps no IR of a function it loaded from there
    fresh = numba_kernels.numba.njit(error_model="numpy")(hot.py_func)
    fresh.compile(hot.signatures[0])
    ir = "\n".join(fresh.inspect_llvm().values())
    return sum(name.startswith(prefix) for name in re.findall(r"call [^@\n]*@([\w.]+)\(", ir))


def _logistic(n: int):
    """PyMC's Bernoulli(logit_p=X @ w) log-likelihood (a switch on the labels) and its gradient."""
    rng = np.random.default_rng(2)
    X, y = et.constant(rng.normal(size=(n, 3))), et.constant(rng.integers(0, 2, n))
    w = et.dvector("w")
    z = X @ w
    logp = et.switch(y, -et.softplus(-z), -et.softplus(z)).sum()
    return [w], [logp, eg.grad(logp, w)]


@needs_numba
def test_the_logistic_loss_and_gradient_take_one_exp_per_element(hot_at_once):
    f = eg.function(*_logistic(50))
    args = [np.array([0.3, -1.0, 2.0])]
    got = f(*args)
    assert _calls(f, "llvm.exp.") == 1, f.program.call.whole_source
    assert _calls(f, "log1p") == 1
    want = f.program.call.program(*args)
    for g, w in zip(got, want, strict=True):
        # the program's sigmoid is SciPy's expit
        np.testing.assert_allclose(g, w, rtol=1e-14)


@needs_numba
def test_sigmoid_gives_the_by_sign_forms_bits_at_zeros_infinities_and_the_tails(hot_at_once):
    from eqgraph.tensor.scalar_ops import _sigmoid_by_sign

    x = et.dvector("x")
    f = eg.function([x], [et.sigmoid(x), et.sigmoid(-x)])
    xs = np.array([0.0, -0.0, 1e-300, -1e-300, 0.5, -0.5, 30.0, -30.0, 745.0, -745.0, 800.0, -800.0,
                   np.inf, -np.inf, np.nan])
    got = f(xs)
    with np.errstate(all="ignore"):
        want = [_sigmoid_by_sign(np, xs), _sigmoid_by_sign(np, -xs)]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-15, atol=0)
        np.testing.assert_array_equal(np.signbit(g[:-1]), np.signbit(w[:-1]))   # (NaN's sign is libm's)


def _rows_with_every_kind_of_maximum(n: int) -> np.ndarray:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(7, n)) * 30
    x[1, 0] = np.inf
    x[2, -1] = np.nan
    x[3, :] = -np.inf
    x[4, n // 2] = -np.inf
    x[5, :] = 0.0
    return x


@needs_numba
@pytest.mark.parametrize("n", [1, 3, 9, 200])
@pytest.mark.parametrize("log", [False, True])
def test_logsumexp_and_softmax_of_the_same_rows_in_one_pass_give_each_ones_bits(n, log):
    from eqgraph.exec.numba.reductions import KERNELS
    from eqgraph.exec.numba.translate_reductions import logsumexp_rows, logsumexp_softmax_rows

    x = _rows_with_every_kind_of_maximum(n)
    total, soft = logsumexp_softmax_rows(x, log)
    np.testing.assert_array_equal(total, logsumexp_rows(x))
    np.testing.assert_array_equal(soft, KERNELS[("softmax", 2)](x, log))


@needs_numba
def test_logsumexp_rows_and_the_softmax_of_its_gradient_share_their_exponentials(hot_at_once):
    x, mu = et.dvector("x"), et.dvector("mu")
    data = et.constant(np.random.default_rng(4).normal(size=(40, 1)) * 3)
    comp = -0.5 * (data - mu) ** 2 + x
    logp = et.logsumexp(comp, axis=1).sum()
    f = eg.function([x, mu], [logp, *eg.grad(logp, [x, mu])])
    source = f.program.call.whole_source
    assert source.count("logsumexp_softmax_rows(") == 1 and "softmax_rows(" not in source.replace(
        "logsumexp_softmax_rows(", ""), source
    args = [np.array([0.1, -0.4, 0.2]), np.array([-2.0, 0.0, 3.0])]
    got, want = f(*args), f.program.call.program(*args)
    for g, w in zip(got, want, strict=True):
        # the program's exp and log are NumPy's SIMD loops, the whole function's libm's
        np.testing.assert_allclose(g, w, rtol=1e-13)
