"""Real-world models, written the way PyMC builds their log-densities: eqgraph against PyTensor
(C and Numba modes) and JAX, side by side in one run.

    OPENBLAS_NUM_THREADS=1 python bench/models.py [--only NAME ...] [--calls 200] [--rounds 5]

Each model is one function of a namespace ``L`` (eqgraph, PyTensor or jax.numpy, through the
small adapters below) returning the log-density of its unconstrained parameters; every library
compiles the log-density together with its gradient. Data are constants, as in PyMC's graphs.
Reported per library: compile + first call (seconds), the per-call median after a warm-up long
enough for eqgraph's Numba tiers to take over (microseconds), and the ratios eqgraph / other.
Values and gradients are checked against each other before anything is timed.
A model that needs an op eqgraph lacks is listed with the missing name instead of a time.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
import timeit

import numpy as np

LOG_2PI = math.log(2 * math.pi)


# ---------------------------------------------------------------- the models


def normal_logp(L, x, mu, sigma):
    return -0.5 * ((x - mu) / sigma) ** 2 - L.log(sigma) - 0.5 * LOG_2PI


def eight_schools(L, p, d):
    mu, log_tau, theta_t = p
    tau = L.exp(log_tau)
    theta = mu + tau * theta_t
    prior = (normal_logp(L, mu, 0.0, 5.0) + L.log(2 / (math.pi * 5.0)) - L.log1p((tau / 5.0) ** 2) + log_tau
             + L.sum(normal_logp(L, theta_t, 0.0, 1.0)))
    return prior + L.sum(normal_logp(L, d["y"], theta, d["sigma"]))


def radon(L, p, d):
    mu_a, log_sa, mu_b, log_sb, a_off, b_off, log_eps = p
    sa, sb, eps = L.exp(log_sa), L.exp(log_sb), L.exp(log_eps)
    a = mu_a + sa * a_off
    b = mu_b + sb * b_off
    y_hat = L.take(a, d["county"]) + L.take(b, d["county"]) * d["floor"]
    half_normal = lambda s, log_s: -0.5 * (s / 5.0) ** 2 + math.log(math.sqrt(2 / math.pi) / 5.0) + log_s
    prior = (normal_logp(L, mu_a, 0.0, 10.0) + normal_logp(L, mu_b, 0.0, 10.0) + half_normal(sa, log_sa)
             + half_normal(sb, log_sb) + half_normal(eps, log_eps)
             + L.sum(normal_logp(L, a_off, 0.0, 1.0)) + L.sum(normal_logp(L, b_off, 0.0, 1.0)))
    return prior + L.sum(normal_logp(L, d["y"], y_hat, eps))


def logistic(L, p, d):
    w, b = p
    z = L.dot(d["X"], w) + b
    # PyMC's Bernoulli(logit_p=z): a switch on the integer labels
    lik = L.switch(d["y"], -L.softplus(-z), -L.softplus(z))
    return L.sum(normal_logp(L, w, 0.0, 1.0)) + normal_logp(L, b, 0.0, 1.0) + L.sum(lik)


def mixture(L, p, d):
    logits, mu, log_sigma = p
    log_w = logits - L.logsumexp(logits, axis=0)
    sigma = L.exp(log_sigma)
    comp = log_w + normal_logp(L, L.column(d["x"]), mu, sigma)
    prior = L.sum(normal_logp(L, mu, 0.0, 10.0)) + L.sum(normal_logp(L, log_sigma, 0.0, 1.0))
    return prior + L.sum(normal_logp(L, logits, 0.0, 1.0)) + L.sum(L.logsumexp(comp, axis=1))


def student_t_logp(L, x, mu, sigma, nu):
    const = math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2) - 0.5 * math.log(nu * math.pi)
    return const - L.log(sigma) - (nu + 1) / 2 * L.log1p(((x - mu) / sigma) ** 2 / nu)


def random_walk(L, p, d):
    log_s, steps = p
    s = L.exp(log_s)
    walk = L.cumsum(steps * s)
    prior = normal_logp(L, log_s, 0.0, 1.0) + L.sum(normal_logp(L, steps, 0.0, 1.0))
    return prior + L.sum(student_t_logp(L, d["y"], walk, 0.5, 4.0))


def gp_marginal(L, p, d):
    log_eta, log_ell, log_noise = p
    eta2, ell, noise2 = L.exp(2 * log_eta), L.exp(log_ell), L.exp(2 * log_noise)
    K = eta2 * L.exp(-0.5 * d["sqdist"] / ell**2) + (noise2 + 1e-6) * d["eye"]
    chol = L.cholesky(K)
    alpha = L.solve_lower(chol, d["y"])
    n = d["y"].shape[0]
    lik = -0.5 * L.sum(alpha**2) - L.sum(L.log(L.diagonal(chol))) - 0.5 * n * LOG_2PI
    return lik + normal_logp(L, log_eta, 0.0, 1.0) + normal_logp(L, log_ell, 0.0, 1.0) + normal_logp(L, log_noise, 0.0, 1.0)


def poisson_glm(L, p, d):
    (beta,) = p
    eta = L.dot(d["X"], beta)
    return L.sum(normal_logp(L, beta, 0.0, 1.0)) + L.sum(d["y"] * eta - L.exp(eta) - d["lgamma_y1"])


def negbin_glm(L, p, d):
    beta, log_alpha = p
    mu, alpha = L.exp(L.dot(d["X"], beta)), L.exp(log_alpha)
    y = d["y"]
    lik = (L.gammaln(y + alpha) - L.gammaln(alpha) - d["lgamma_y1"] + alpha * L.log(alpha / (alpha + mu))
           + y * L.log(mu / (alpha + mu)))
    return L.sum(normal_logp(L, beta, 0.0, 1.0)) + normal_logp(L, log_alpha, 0.0, 1.0) + L.sum(lik)


def mvnormal_chol(L, p, d):
    mu, off, log_diag = p
    k = d["k"]
    chol = L.set(L.zeros((k, k)), d["tril"], off) + L.diag(L.exp(log_diag))
    z = L.solve_lower(chol, L.transpose(d["x"] - mu))
    n = d["x"].shape[0]
    lik = -0.5 * L.sum(z**2) - n * L.sum(log_diag) - 0.5 * n * k * LOG_2PI
    # an LKJ-style prior on the factor: a Normal on its entries, a log-normal on its scales
    prior = L.sum(normal_logp(L, off, 0.0, 1.0)) + L.sum(normal_logp(L, log_diag, 0.0, 1.0))
    return lik + prior + L.sum(normal_logp(L, mu, 0.0, 10.0))


def zero_sum_normal(L, p, d):
    (v,) = p
    n = d["n"]
    # PyMC's ZeroSumTransform.backward: n - 1 free values extended to n that sum to zero
    total = L.sum(v)
    norm = total / (math.sqrt(n) + n)
    fill = norm - total / math.sqrt(n)
    x = L.concatenate([v, L.reshape(fill, (1,))]) - norm
    return L.sum(normal_logp(L, x, 0.0, 1.0)) + L.sum(normal_logp(L, d["y"], L.take(x, d["group"]), 1.0))


# ---------------------------------------------------------------- data and parameters


def model_table(rng):
    def glm_data(n, k, negbin=False):
        X = rng.normal(size=(n, k)) * 0.3
        mu = np.exp(X @ rng.normal(size=k) * 0.5)
        y = rng.negative_binomial(5, 5 / (5 + mu)) if negbin else rng.poisson(mu)
        return {"X": X, "y": y.astype(np.int64), "lgamma_y1": np.array([math.lgamma(v + 1) for v in y])}

    x_gp = np.sort(rng.uniform(0, 10, 200))
    mix = np.concatenate([rng.normal(-3, 1, 200), rng.normal(0, 0.5, 150), rng.normal(4, 1.5, 150)])
    k = 5
    tril = np.tril_indices(k, -1)
    return {
        "eight schools": (eight_schools, [("s", 0.0), ("s", 0.5), ("v", rng.normal(size=8))],
                          {"y": np.array([28.0, 8, -3, 7, -1, 1, 18, 12]),
                           "sigma": np.array([15.0, 10, 16, 11, 9, 11, 10, 18])}),
        "radon hierarchical": (radon, [("s", 1.0), ("s", -1.0), ("s", -0.5), ("s", -1.5),
                                       ("v", rng.normal(size=85)), ("v", rng.normal(size=85)), ("s", -0.3)],
                               {"county": rng.integers(0, 85, 919), "floor": (rng.random(919) < 0.3) * 1.0,
                                "y": rng.normal(1.0, 0.8, 919)}),
        "logistic 2000x20": (logistic, [("v", rng.normal(size=20) * 0.1), ("s", 0.1)],
                             {"X": rng.normal(size=(2000, 20)), "y": rng.integers(0, 2, 2000)}),
        "mixture (logsumexp)": (mixture, [("v", rng.normal(size=3)), ("v", np.array([-3.0, 0.0, 4.0])),
                                          ("v", np.zeros(3))], {"x": mix}),
        "random walk 1000": (random_walk, [("s", -1.0), ("v", rng.normal(size=1000))],
                             {"y": np.cumsum(rng.normal(size=1000)) * 0.3}),
        "GP marginal 200": (gp_marginal, [("s", 0.0), ("s", 0.5), ("s", -1.0)],
                            {"sqdist": (x_gp[:, None] - x_gp[None, :]) ** 2, "eye": np.eye(200),
                             "y": np.sin(x_gp) + rng.normal(0, 0.3, 200)}),
        "Poisson GLM": (poisson_glm, [("v", rng.normal(size=10) * 0.1)], glm_data(1000, 10)),
        "negative-binomial GLM": (negbin_glm, [("v", rng.normal(size=10) * 0.1), ("s", 1.0)],
                                  glm_data(1000, 10, negbin=True)),
        "MvNormal, Cholesky prior": (mvnormal_chol, [("v", np.zeros(k)), ("v", rng.normal(size=len(tril[0])) * 0.1),
                                                     ("v", np.zeros(k))],
                                     {"k": k, "tril": tril, "x": rng.normal(size=(300, k))}),
        "ZeroSumNormal": (zero_sum_normal, [("v", rng.normal(size=9) * 0.1)],
                          {"n": 10, "group": rng.integers(0, 10, 500), "y": rng.normal(size=500)}),
    }


# ---------------------------------------------------------------- the libraries


class EqgraphNS:
    name = "eqgraph"

    def __init__(self):
        import eqgraph as eg
        import eqgraph.tensor as et

        self.eg, self.et = eg, et
        for op in ("exp", "log", "log1p", "softplus", "switch", "cumsum", "concatenate", "reshape", "diag",
                   "diagonal", "zeros", "gammaln", "dot", "transpose"):
            if hasattr(et, op):
                setattr(self, op, getattr(et, op))
        self.cholesky = et.linalg.cholesky

    def sum(self, x):
        return x.sum()

    def logsumexp(self, x, axis):
        return self.et.logsumexp(x, axis=axis)

    def take(self, x, idx):
        return x[idx]

    def column(self, x):
        return x[:, None]

    def set(self, x, idx, values):
        return self.et.set_subtensor(x[idx], values)

    def solve_lower(self, a, b):
        return self.et.linalg.solve_triangular(a, b, lower=True)

    def constants(self, data):
        def const(v):
            if isinstance(v, tuple):
                return tuple(const(u) for u in v)
            return self.et.constant(v) if isinstance(v, np.ndarray) else v
        return {k: const(v) for k, v in data.items()}

    def compile(self, logp_fn, params, data):
        xs = [(self.et.dscalar if kind == "s" else self.et.dvector)(f"p{i}") for i, (kind, _) in enumerate(params)]
        logp = logp_fn(self, xs, self.constants(data))
        return self.eg.function(xs, [logp, *self.eg.grad(logp, xs)])


class PyTensorNS(EqgraphNS):
    def __init__(self, mode):
        import pytensor
        import pytensor.tensor as pt
        from pytensor.tensor.slinalg import solve_triangular

        self.name = {"FAST_RUN": "PyTensor C", "NUMBA": "PyTensor Numba"}[mode]
        self.pytensor, self.et, self.mode = pytensor, pt, mode
        for op in ("exp", "log", "log1p", "softplus", "switch", "cumsum", "concatenate", "reshape", "diag",
                   "diagonal", "zeros", "gammaln", "dot", "transpose"):
            setattr(self, op, getattr(pt, op))
        self.cholesky = pt.linalg.cholesky
        self._solve = solve_triangular

    def solve_lower(self, a, b):
        return self._solve(a, b, lower=True)

    def compile(self, logp_fn, params, data):
        pt = self.et
        xs = [(pt.dscalar if kind == "s" else pt.dvector)(f"p{i}") for i, (kind, _) in enumerate(params)]
        logp = logp_fn(self, xs, self.constants(data))
        return self.pytensor.function(xs, [logp, *self.pytensor.grad(logp, xs)], mode=self.mode)


class JaxNS:
    name = "JAX"

    def __init__(self):
        import jax

        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        import jax.scipy as jsp

        self.jax, self.jnp = jax, jnp
        for op in ("exp", "log", "log1p", "cumsum", "concatenate", "reshape", "diag", "diagonal", "zeros",
                   "dot", "transpose"):
            setattr(self, op, getattr(jnp, op))
        self.switch = lambda c, a, b: jnp.where(c != 0, a, b)
        self.softplus = jax.nn.softplus
        self.gammaln = jsp.special.gammaln
        self.cholesky = jnp.linalg.cholesky
        self.logsumexp = lambda x, axis: jsp.special.logsumexp(x, axis=axis)
        self._solve = jsp.linalg.solve_triangular

    def sum(self, x):
        return self.jnp.sum(x)

    def take(self, x, idx):
        return x[idx]

    def column(self, x):
        return x[:, None]

    def set(self, x, idx, values):
        return x.at[idx].set(values)

    def solve_lower(self, a, b):
        return self._solve(a, b, lower=True)

    def compile(self, logp_fn, params, data):
        data = {k: (self.jnp.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in data.items()}
        value_and_grad = self.jax.jit(self.jax.value_and_grad(lambda *xs: logp_fn(self, list(xs), data),
                                                              argnums=tuple(range(len(params)))))

        def call(*xs):
            value, grads = value_and_grad(*xs)
            return [np.asarray(value), *[np.asarray(g) for g in grads]]

        return call


def libraries():
    libs = [EqgraphNS()]
    try:
        libs += [PyTensorNS("FAST_RUN"), PyTensorNS("NUMBA")]
    except ImportError:
        print("(PyTensor not installed: pip install -e '.[bench]' to compare)")
    try:
        libs.append(JaxNS())
    except ImportError:
        print("(JAX not installed: pip install jax to compare)")
    return libs


# ---------------------------------------------------------------- measuring


def compile_timed(lib, fn, params, data, values):
    start = time.perf_counter()
    f = lib.compile(fn, params, data)
    out = f(*values)
    return f, time.perf_counter() - start, out


def per_call_medians(funcs, values, calls, rounds):
    """Median seconds per call of each function, the functions interleaved round by round."""
    times = {name: [] for name in funcs}
    for _ in range(rounds):
        for name, f in funcs.items():
            times[name].append(min(timeit.repeat(lambda: f(*values), number=calls, repeat=3)) / calls)
    return {name: statistics.median(t) for name, t in times.items()}


def disagreeing(outputs) -> list[str]:
    """The libraries whose log-density or gradient differs from the first library's."""
    ref = next(iter(outputs.values()))
    return [name for name, out in outputs.items()
            if not all(np.allclose(np.asarray(b), np.asarray(a), rtol=1e-8, atol=1e-8) for a, b in zip(ref, out))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*", help="model names (substrings) to run")
    parser.add_argument("--calls", type=int, default=200, help="calls per timing")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--warmup", type=int, default=3000, help="calls before timing (eqgraph's tiers)")
    args = parser.parse_args()
    libs = libraries()
    table = model_table(np.random.default_rng(0))
    names = [lib.name for lib in libs]
    print(f"{'compile + first call, s':<26}" + "".join(f"{n:>16}" for n in names))
    rows = []
    for model, (fn, params, data) in table.items():
        if args.only and not any(s.lower() in model.lower() for s in args.only):
            continue
        values = [np.asarray(v, dtype=np.float64) for _, v in params]
        funcs, compile_s, outputs = {}, {}, {}
        for lib in libs:
            try:
                funcs[lib.name], compile_s[lib.name], outputs[lib.name] = compile_timed(lib, fn, params, data, values)
            except (AttributeError, NotImplementedError) as err:
                print(f"{model:<26} {lib.name}: cannot be written yet ({type(err).__name__}: {err})")
        if names[0] not in funcs:
            continue
        if differ := disagreeing(outputs):
            print(f"{model:<26} VALUES DIFFER: {', '.join(differ)} against {names[0]}")
        print(f"{model:<26}" + "".join(f"{compile_s.get(n, float('nan')):>16.2f}" for n in names), flush=True)
        funcs[names[0]].wait_compiled()   # eqgraph's Numba forms, compiled in the background
        for _ in range(args.warmup):
            funcs[names[0]](*values)
        rows.append((model, per_call_medians(funcs, values, args.calls, args.rounds)))
        # at once too: on a loaded machine a run may be stopped before its table
        print(f"{'':<26}per call, us: " + ", ".join(f"{n} {t * 1e6:.1f}" for n, t in rows[-1][1].items())
              + f" (eqgraph's last call: {funcs[names[0]].stages.tier})", flush=True)
    print(f"\n{'per call, us':<26}" + "".join(f"{n:>16}" for n in names)
          + "".join(f"{'eq/' + n.split()[-1]:>10}" for n in names[1:]))
    for model, med in rows:
        ours = med[names[0]]
        print(f"{model:<26}" + "".join(f"{med[n] * 1e6:>16.1f}" if n in med else f"{'-':>16}" for n in names)
              + "".join(f"{ours / med[n]:>10.2f}" if n in med else f"{'-':>10}" for n in names[1:]))


if __name__ == "__main__":
    main()
