"""PyMC models from PyMC's docs and example gallery, small data made here (seeded).

``MODELS``: name -> (build, missing) where ``build()`` returns a ``pm.Model`` and ``missing`` names
the op eqgraph lacks for it (None: it converts). A model listed with a missing op is an expected
failure in the tests, which turns into a pass when the op lands.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
from pymc.pytensorf import collect_default_updates


def _rng():
    """A generator of its own for each model, so that a model's data do not depend on which
    models were built before it."""
    return np.random.default_rng(20261127)


def eight_schools_noncentered():
    y = np.array([28.0, 8, -3, 7, -1, 1, 18, 12])
    sigma = np.array([15.0, 10, 16, 11, 9, 11, 10, 18])
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 5)
        tau = pm.HalfCauchy("tau", 5)
        theta_t = pm.Normal("theta_t", 0, 1, shape=8)
        pm.Normal("obs", mu + tau * theta_t, sigma, observed=y)
    return model


def eight_schools_centered():
    y = np.array([28.0, 8, -3, 7, -1, 1, 18, 12])
    sigma = np.array([15.0, 10, 16, 11, 9, 11, 10, 18])
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 5)
        tau = pm.HalfNormal("tau", 5)
        theta = pm.Normal("theta", mu, tau, shape=8)
        pm.Normal("obs", theta, sigma, observed=y)
    return model


def radon_hierarchical():
    rng = _rng()
    n_counties, n = 12, 120
    county = rng.integers(0, n_counties, n)
    floor = (rng.random(n) < 0.3).astype("float64")
    log_radon = rng.normal(1.0, 0.8, n)
    with pm.Model(coords={"county": np.arange(n_counties)}) as model:
        floor_idx = pm.Data("floor_idx", floor)
        mu_a = pm.Normal("mu_a", 0, 10)
        sigma_a = pm.HalfNormal("sigma_a", 5)
        mu_b = pm.Normal("mu_b", 0, 10)
        sigma_b = pm.HalfNormal("sigma_b", 5)
        a = pm.Normal("a", mu_a, sigma_a, dims="county")
        b = pm.Normal("b", mu_b, sigma_b, dims="county")
        eps = pm.HalfCauchy("eps", 5)
        y_hat = a[county] + b[county] * floor_idx
        pm.Normal("y", y_hat, eps, observed=log_radon)
    return model


def logistic_regression():
    rng = _rng()
    X = rng.normal(size=(200, 4))
    y = (rng.random(200) < 1 / (1 + np.exp(-X @ np.array([1.0, -2, 0.5, 0])))).astype("int64")
    with pm.Model() as model:
        w = pm.Normal("w", 0, 1, shape=4)
        b = pm.Normal("b", 0, 1)
        pm.Bernoulli("y", logit_p=pt.dot(X, w) + b, observed=y)
    return model


def logistic_regression_p():
    rng = _rng()
    X = rng.normal(size=(100, 3))
    y = rng.integers(0, 2, 100)
    with pm.Model() as model:
        w = pm.Normal("w", 0, 1, shape=3)
        pm.Bernoulli("y", p=pm.math.sigmoid(pt.dot(X, w)), observed=y)
    return model


def linear_regression_glm():
    rng = _rng()
    X = rng.normal(size=(150, 3))
    y = X @ np.array([0.5, -1.0, 2.0]) + 1.0 + rng.normal(0, 0.5, 150)
    with pm.Model() as model:
        intercept = pm.Normal("intercept", 0, 10)
        beta = pm.Normal("beta", 0, 10, shape=3)
        sigma = pm.HalfNormal("sigma", 1)
        pm.Normal("y", intercept + pm.math.dot(X, beta), sigma, observed=y)
    return model


def uniform_sigma_regression():
    rng = _rng()
    x = np.linspace(0, 1, 50)
    y = 2 * x + rng.normal(0, 0.3, 50)
    with pm.Model() as model:
        slope = pm.Normal("slope", 0, 5)
        sigma = pm.Uniform("sigma", 0, 2)
        pm.Normal("y", slope * x, sigma, observed=y)
    return model


def mixture_fixed_weights():
    rng = _rng()
    data = np.concatenate([rng.normal(-2, 1, 60), rng.normal(3, 0.5, 40)])
    with pm.Model() as model:
        mu = pm.Normal("mu", [-1.0, 1.0], 5, transform=pm.distributions.transforms.ordered)
        sigma = pm.HalfNormal("sigma", 2, shape=2)
        pm.NormalMixture("x", w=np.array([0.6, 0.4]), mu=mu, sigma=sigma, observed=data)
    return model


def mixture_dirichlet():
    rng = _rng()
    data = np.concatenate([rng.normal(-2, 1, 60), rng.normal(3, 0.5, 40)])
    with pm.Model() as model:
        w = pm.Dirichlet("w", np.ones(2))
        mu = pm.Normal("mu", [-1.0, 1.0], 5, transform=pm.distributions.transforms.ordered)
        sigma = pm.HalfNormal("sigma", 2, shape=2)
        pm.NormalMixture("x", w=w, mu=mu, sigma=sigma, observed=data)
    return model


def gaussian_random_walk():
    rng = _rng()
    y = np.cumsum(rng.normal(0, 0.3, 40)) + rng.normal(0, 0.1, 40)
    with pm.Model() as model:
        sigma = pm.Exponential("sigma", 1.0)
        walk = pm.GaussianRandomWalk("walk", sigma=sigma, init_dist=pm.Normal.dist(0, 1), steps=39)
        pm.Normal("y", walk, 0.1, observed=y)
    return model


def stochastic_volatility_normal():
    rng = _rng()
    returns = rng.normal(0, 0.02, 60)
    with pm.Model() as model:
        step_size = pm.Exponential("step_size", 10)
        volatility = pm.GaussianRandomWalk("volatility", sigma=step_size, init_dist=pm.Normal.dist(0, 1),
                                           shape=60)
        pm.Normal("returns", 0, pt.exp(volatility), observed=returns)
    return model


def gp_marginal():
    rng = _rng()
    X = np.linspace(0, 5, 25)[:, None]
    y = np.sin(X[:, 0]) + rng.normal(0, 0.2, 25)
    with pm.Model() as model:
        ell = pm.LogNormal("ell", 0, 1)
        eta = pm.HalfNormal("eta", 1)
        cov = eta**2 * pm.gp.cov.ExpQuad(1, ell)
        gp = pm.gp.Marginal(cov_func=cov)
        sigma = pm.HalfNormal("sigma", 1)
        gp.marginal_likelihood("y", X=X, y=y, sigma=sigma)
    return model


def mvnormal_known_cov():
    rng = _rng()
    cov = np.array([[1.0, 0.3, 0.1], [0.3, 2.0, 0.2], [0.1, 0.2, 0.5]])
    data = rng.multivariate_normal(np.zeros(3), cov, 30)
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 2, shape=3)
        pm.MvNormal("x", mu=mu, cov=cov, observed=data)
    return model


def zero_sum_normal():
    rng = _rng()
    group = rng.integers(0, 5, 80)
    y = rng.normal(size=80)
    with pm.Model() as model:
        effect = pm.ZeroSumNormal("effect", sigma=1.0, shape=5)
        pm.Normal("y", effect[group], 1.0, observed=y)
    return model


def softmax_regression():
    rng = _rng()
    X = rng.normal(size=(60, 2))
    y = rng.integers(0, 3, 60)
    with pm.Model() as model:
        W = pm.Normal("W", 0, 1, shape=(2, 3))
        pm.Categorical("y", p=pm.math.softmax(pt.dot(X, W), axis=-1), observed=y)
    return model


def poisson_glm():
    rng = _rng()
    X = rng.normal(size=(80, 2)) * 0.5
    y = rng.poisson(np.exp(X @ np.array([0.5, -0.3])))
    with pm.Model() as model:
        beta = pm.Normal("beta", 0, 1, shape=2)
        pm.Poisson("y", pt.exp(pt.dot(X, beta)), observed=y)
    return model


def student_t_regression():
    rng = _rng()
    x = np.linspace(0, 1, 40)
    y = 1 + x + rng.standard_t(3, 40) * 0.2
    with pm.Model() as model:
        a = pm.Normal("a", 0, 5)
        sigma = pm.HalfNormal("sigma", 1)
        pm.StudentT("y", nu=4, mu=a * x, sigma=sigma, observed=y)
    return model


def lkj_cholesky_cov():
    rng = _rng()
    data = rng.multivariate_normal(np.zeros(2), [[1.0, 0.5], [0.5, 1.0]], 40)
    with pm.Model() as model:
        chol, _, _ = pm.LKJCholeskyCov("chol", n=2, eta=2.0, sd_dist=pm.Exponential.dist(1.0, shape=2))
        pm.MvNormal("x", mu=np.zeros(2), chol=chol, observed=data)
    return model


def beta_binomial_trials():
    n = np.array([20, 30, 25, 40])
    k = np.array([5, 12, 9, 20])
    with pm.Model() as model:
        p = pm.Beta("p", 2, 2, shape=4)
        pm.Binomial("k", n=n, p=p, observed=k)
    return model


def exponential_survival():
    rng = _rng()
    x = rng.normal(size=50)
    times = rng.exponential(np.exp(-0.5 * x))
    with pm.Model() as model:
        beta = pm.Normal("beta", 0, 1)
        log_rate0 = pm.Normal("log_rate0", 0, 2)
        pm.Exponential("t", lam=pt.exp(log_rate0 + beta * x), observed=times)
    return model


def robust_regression():
    rng = _rng()
    x = np.linspace(-1, 1, 60)
    y = 0.5 + 2 * x + rng.laplace(0, 0.3, 60)
    with pm.Model() as model:
        a = pm.Cauchy("a", 0, 5)
        b = pm.Laplace("b", 0, 5)
        scale = pm.LogNormal("scale", 0, 1)
        pm.Laplace("y", a + b * x, scale, observed=y)
    return model


def ordered_logistic():
    rng = _rng()
    x = rng.normal(size=80)
    y = np.digitize(x + rng.logistic(size=80), [-1.0, 0.5])
    with pm.Model() as model:
        beta = pm.Normal("beta", 0, 2)
        cutpoints = pm.Normal("cutpoints", [-1.0, 1.0], 5, transform=pm.distributions.transforms.ordered)
        pm.OrderedLogistic("y", eta=beta * x, cutpoints=cutpoints, observed=y)
    return model


def censored_normal():
    rng = _rng()
    y = np.clip(rng.normal(1.0, 1.0, 50), -np.inf, 2.0)
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 5)
        sigma = pm.HalfNormal("sigma", 2)
        pm.Censored("y", pm.Normal.dist(mu, sigma), lower=None, upper=2.0, observed=y)
    return model


def ar2_from_a_generative_scan():
    """PyMC's gallery "time series models derived from a generative graph": an AR(2) written as a
    scan that draws each step, whose log-density PyMC derives (a scan over the observed values)."""
    rng = _rng()
    y = np.zeros(60)
    for t in range(2, 60):
        y[t] = 0.6 * y[t - 1] - 0.3 * y[t - 2] + rng.normal(0, 0.5)

    def ar_dist(init, rho, sigma, size):
        def step(x_tm2, x_tm1, rho, sigma):
            x = rho[0] * x_tm1 + rho[1] * x_tm2 + pm.Normal.dist(0, sigma)
            return x, collect_default_updates([x])

        steps, _ = pytensor.scan(step, outputs_info=[{"initial": init, "taps": [-2, -1]}],
                                 non_sequences=[rho, sigma], n_steps=58, strict=True)
        return steps

    with pm.Model() as model:
        rho = pm.Normal("rho", 0, 0.4, shape=2)
        sigma = pm.HalfNormal("sigma", 1)
        pm.CustomDist("y", y[:2], rho, sigma, dist=ar_dist, observed=y[2:])
    return model


def garch11_logp_scan():
    """A GARCH(1,1) volatility model whose log-density (a ``pm.Potential``) is written with
    ``pytensor.scan``: each
    step's variance is fed back, so the gradient goes through a state of the loop."""
    rng = _rng()
    returns = rng.standard_t(5, 80) * 0.3

    def logp(r, omega, alpha, beta):
        variances = pytensor.scan(lambda r_tm1, v_tm1, omega, alpha, beta: omega + alpha * r_tm1**2 + beta * v_tm1,
                                  sequences=[r[:-1]], outputs_info=[pt.var(r)],
                                  non_sequences=[omega, alpha, beta], return_updates=False)
        v = pt.concatenate([pt.var(r)[None], variances])
        return pm.logp(pm.Normal.dist(0, pt.sqrt(v)), r)

    with pm.Model() as model:
        omega = pm.HalfNormal("omega", 0.2)
        alpha = pm.Beta("alpha", 2, 5)
        beta = pm.Beta("beta", 5, 2)
        pm.Potential("r", logp(pt.as_tensor(returns), omega, alpha, beta))
    return model


MODELS = {
    "eight schools (non-centered)": (eight_schools_noncentered, None),
    "eight schools (centered)": (eight_schools_centered, None),
    "radon hierarchical (pm.Data)": (radon_hierarchical, None),
    "logistic regression, logit_p": (logistic_regression, None),
    "logistic regression, p=sigmoid": (logistic_regression_p, None),
    "linear regression GLM": (linear_regression_glm, None),
    "uniform sigma (interval transform)": (uniform_sigma_regression, None),
    "normal mixture, fixed weights (ordered)": (mixture_fixed_weights, None),
    "normal mixture, Dirichlet weights": (mixture_dirichlet, None),
    "Gaussian random walk": (gaussian_random_walk, None),
    "stochastic volatility (normal returns)": (stochastic_volatility_normal, None),
    "GP marginal (ExpQuad)": (gp_marginal, None),
    "MvNormal, known covariance": (mvnormal_known_cov, None),
    "ZeroSumNormal": (zero_sum_normal, None),
    "softmax regression (Categorical)": (softmax_regression, None),
    "Poisson GLM": (poisson_glm, None),
    "Student-t regression": (student_t_regression, None),
    "LKJ Cholesky covariance": (lkj_cholesky_cov, None),
    "beta-binomial trials": (beta_binomial_trials, None),
    "exponential survival": (exponential_survival, None),
    "robust regression (Cauchy, Laplace, LogNormal)": (robust_regression, None),
    "ordered logistic": (ordered_logistic, None),
    "censored normal": (censored_normal, None),
    "AR(2) from a generative scan (CustomDist dist=)": (ar2_from_a_generative_scan, None),
    "GARCH(1,1), log-density with a scan (Potential)": (garch11_logp_scan, None),
}
