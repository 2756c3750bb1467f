"""``pm.sample`` with eqgraph compiling the log-density and its gradient
(``compile_kwargs={"mode": eqgraph.pytensor.mode()}``) agrees with PyMC's default mode.

Two samplers on the same seed do not give the same draws: the two compilers round differently in
the last bit, and a NUTS trajectory amplifies any difference until the chains part. So the draws
are compared as samples of one posterior: each posterior mean and standard deviation agrees
within a few Monte Carlo standard errors of the two runs combined. The functions the sampler
calls are compared directly, at the draws, to 1e-10 relative.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytensor")
pm = pytest.importorskip("pymc")

import arviz as az  # noqa: E402
from pymc_models import MODELS  # noqa: E402

from eqgraph.pytensor import mode  # noqa: E402

#: model -> draws (and as many tuning steps) per chain: fewer where a gradient costs more
SAMPLED = {"eight schools (non-centered)": 250, "logistic regression, logit_p": 250,
           "radon hierarchical (pm.Data)": 150}
#: sampled only in the slow run: eqgraph's gradient of it is the slowest of the three per call
SLOW = {"radon hierarchical (pm.Data)"}
#: how many combined Monte Carlo standard errors two estimates may differ by: at 5, a correct
#: sampler fails one of the ~60 compared quantities with a probability under 1e-4
MCSE_BOUND = 5.0


def sample(model, draws: int, **kwargs):
    with model:
        return pm.sample(draws=draws, tune=draws, chains=2, cores=1, random_seed=20261128, progressbar=False,
                         compute_convergence_checks=False, **kwargs)


def _assert_same_posterior(got, want):
    """Each scalar's posterior mean and sd agree within ``MCSE_BOUND`` combined standard errors:
    a mean's ``sd / sqrt(ess)``, an sd's ``sd / sqrt(2 ess)`` (a normal posterior's), with ArviZ's
    bulk effective sample size."""
    ess = {run: az.ess(idata, method="bulk") for run, idata in (("got", got), ("want", want))}
    for name in want.posterior.data_vars:
        stats = {}
        for run, idata in (("got", got), ("want", want)):
            draws = idata.posterior[name]
            sd = draws.std(("chain", "draw"))
            stats[run] = (draws.mean(("chain", "draw")), sd, sd / np.sqrt(ess[run][name]),
                          sd / np.sqrt(2 * ess[run][name]))
        for k, what in ((0, "mean"), (1, "sd")):
            g, w = stats["got"][k], stats["want"][k]
            bound = MCSE_BOUND * np.sqrt(stats["got"][k + 2] ** 2 + stats["want"][k + 2] ** 2)
            assert (abs(g - w) <= bound).all(), \
                f"{name} {what}: eqgraph {g.values}, PyTensor {w.values}, bound {bound.values}"


def _assert_same_logp_dlogp(model, points: int = 5):
    """The raveled logp-and-gradient function that NUTS calls, compiled both ways, at points
    around the initial point (in the unconstrained space the sampler moves in)."""
    got = model.logp_dlogp_function(ravel_inputs=True, mode=mode())
    want = model.logp_dlogp_function(ravel_inputs=True)
    got.set_extra_values({})
    want.set_extra_values({})
    start = model.initial_point()
    x0 = np.concatenate([np.ravel(start[v.name]) for v in model.value_vars])
    rng = np.random.default_rng(0)
    for _ in range(points):
        x = x0 + rng.normal(0, 0.5, x0.shape)
        (g_logp, g_dlogp), (w_logp, w_dlogp) = got(x), want(x)
        np.testing.assert_allclose(g_logp, w_logp, rtol=1e-10)
        # relative to the gradient's size: a component that cancels to near 0 has no relative digits
        np.testing.assert_allclose(g_dlogp, w_dlogp, rtol=1e-10, atol=1e-10 * np.abs(w_dlogp).max())


@pytest.mark.parametrize("name", [pytest.param(name, marks=[pytest.mark.slow] if name in SLOW else [])
                                  for name in SAMPLED])
def test_pm_sample_on_eqgraph_matches_pytensor(name):
    model = MODELS[name][0]()
    want = sample(model, SAMPLED[name])
    got = sample(model, SAMPLED[name], compile_kwargs={"mode": mode()})
    _assert_same_posterior(got, want)
    _assert_same_logp_dlogp(model)
