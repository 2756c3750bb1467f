"""Run time per call of compiled graphs: eqgraph vs PyTensor's default mode vs NumPy by hand.

    python bench/suite.py [--only NAME,...] [--size small|medium|both]     (pip install -e ".[bench]")

Every case is built once per library from the same code (``T`` is ``eqgraph.tensor`` or
``pytensor.tensor``), at two sizes: 10 elements (dispatch-bound) and 1e5 (work-bound; the
50-op chain also at 1e6, the issue's target of at most 100 ms).  Sizes count the elements
of the main input (rows x 8 features for the models).  It prints, per case and size, the
median time per call of each, the ratios eqgraph/PyTensor and eqgraph/NumPy, whether
eqgraph agrees with NumPy, and compile times (first call included), with geometric means.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
import timeit
from dataclasses import dataclass
from typing import Callable

import numpy as np


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


@dataclass
class Lib:
    """What differs between eqgraph and PyTensor for these cases."""

    name: str
    T: object          # the tensor module
    function: Callable
    grad: Callable
    softmax: Callable
    log_softmax: Callable


@dataclass
class Case:
    name: str
    build: Callable    # (lib) -> (inputs, outputs)
    numpy: Callable    # (*values) -> outputs
    data: Callable     # (n, rng) -> values
    sizes: tuple = (10, 100_000)


def vec(n, rng, lo=-3.0, hi=3.0):
    return rng.uniform(lo, hi, n)


def positive_with_nan(n, rng):
    v = rng.uniform(0.1, 3.0, n)
    v[::7] = np.nan
    return v


def chain(T, x, steps=50):
    """A 50-op elementwise chain: sin, exp, multiplies and adds over one vector."""
    y = x
    for i in range(steps // 5):
        y = T.tanh(y * 0.9 + 0.1) * 0.5 - y * 0.25 + x
    return y


def np_chain(x, steps=50):
    y = x
    for i in range(steps // 5):
        y = np.tanh(y * 0.9 + 0.1) * 0.5 - y * 0.25 + x
    return y


def deep(T, x, levels=500):
    """About 2,000 nodes: a long dependent chain with a reduction every 50 levels."""
    y = x
    for i in range(levels):
        y = T.exp(-y * y) * 0.5 + y * 0.25 if i % 50 else y - y.mean()
    return y


def np_deep(x, levels=500):
    y = x
    for i in range(levels):
        y = np.exp(-y * y) * 0.5 + y * 0.25 if i % 50 else y - y.mean()
    return y


def model_data(n, rng, features=8, classes=None):
    rows = max(n // features, 2) if n > 10 else 10
    x = rng.normal(size=(rows, features))
    y = (rng.uniform(size=rows) > 0.5).astype(float) if classes is None else np.eye(classes)[rng.integers(0, classes, rows)]
    return x, y


def logreg(lib):
    T = lib.T
    x, y, w, b = T.dmatrix("x"), T.dvector("y"), T.dvector("w"), T.dscalar("b")
    p = T.sigmoid(x @ w + b)
    loss = -(y * T.log(p) + (1 - y) * T.log(1 - p)).mean()
    return [x, y, w, b], [loss, *lib.grad(loss, [w, b])]


def np_logreg(x, y, w, b):
    p = sigmoid(x @ w + b)
    loss = -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean()
    d = (p - y) / len(y)
    return loss, x.T @ d, d.sum()


def logreg_data(n, rng):
    x, y = model_data(n, rng)
    return x, y, rng.normal(size=8) * 0.1, np.float64(0.1)


def mlp(lib):
    T = lib.T
    x, y = T.dmatrix("x"), T.dvector("y")
    w1, b1, w2, b2 = T.dmatrix("w1"), T.dvector("b1"), T.dvector("w2"), T.dscalar("b2")
    h = T.tanh(x @ w1 + b1)
    loss = ((h @ w2 + b2 - y) ** 2).mean()
    return [x, y, w1, b1, w2, b2], [loss, *lib.grad(loss, [w1, b1, w2, b2])]


def np_mlp(x, y, w1, b1, w2, b2):
    h = np.tanh(x @ w1 + b1)
    r = h @ w2 + b2 - y
    loss = (r ** 2).mean()
    d = 2 * r / len(y)
    dh = np.outer(d, w2) * (1 - h ** 2)
    return loss, x.T @ dh, dh.sum(0), h.T @ d, d.sum()


def mlp_data(n, rng):
    x, y = model_data(n, rng)
    return x, y, rng.normal(size=(8, 16)) * 0.3, np.zeros(16), rng.normal(size=16) * 0.3, np.float64(0.0)


def xent(lib):
    T = lib.T
    x, y, w = T.dmatrix("x"), T.dmatrix("y"), T.dmatrix("w")
    loss = -(y * lib.log_softmax(x @ w)).sum(axis=1).mean()
    return [x, y, w], [loss, lib.grad(loss, w)]


def np_xent(x, y, w):
    z = x @ w
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    loss = -(y * logp).sum(axis=1).mean()
    return loss, x.T @ ((np.exp(logp) * y.sum(axis=1, keepdims=True) - y) / len(y))


def xent_data(n, rng):
    x, y = model_data(n, rng, classes=10)
    return x, y, rng.normal(size=(8, 10)) * 0.1


def huber(lib):
    T = lib.T
    x, y, w = T.dmatrix("x"), T.dvector("y"), T.dvector("w")
    r = x @ w - y
    loss = T.switch(T.abs(r) < 1, 0.5 * r ** 2, T.abs(r) - 0.5).mean()
    return [x, y, w], [loss, lib.grad(loss, w)]


def np_huber(x, y, w):
    r = x @ w - y
    small = np.abs(r) < 1
    loss = np.where(small, 0.5 * r ** 2, np.abs(r) - 0.5).mean()
    return loss, x.T @ (np.where(small, r, np.sign(r)) / len(y))


def huber_data(n, rng):
    x, y = model_data(n, rng)
    return x, y * 3, rng.normal(size=8)


def elementwise(name, build, ref, data=vec, sizes=(10, 100_000)):
    """A case of one vector input ``x``."""
    return Case(name, lambda lib: ([x := lib.T.dvector("x")], [build(lib.T, x)]), ref,
                lambda n, rng: (data(n, rng),), sizes)


CASES = [
    elementwise("a + a**10", lambda T, a: a + a ** 10, lambda a: a + a ** 10, lambda n, r: vec(n, r, -1, 1)),
    elementwise("exp(log x) [NaN]", lambda T, x: T.exp(T.log(x)), lambda x: np.exp(np.log(x)), positive_with_nan),
    elementwise("sqrt(x)**2 [NaN]", lambda T, x: T.sqrt(x) ** 2, lambda x: np.sqrt(x) ** 2, positive_with_nan),
    elementwise("sqrt(x*x)", lambda T, x: T.sqrt(x * x), lambda x: np.sqrt(x * x)),
    elementwise("log(sigmoid(x))", lambda T, x: T.log(T.sigmoid(x)), lambda x: np.log(sigmoid(x))),
    elementwise("log(1 + exp(x))", lambda T, x: T.log(1 + T.exp(x)), lambda x: np.log1p(np.exp(x))),
    elementwise("polynomial", lambda T, x: 3 * x ** 3 - 2 * x ** 2 + x - 1, lambda x: 3 * x ** 3 - 2 * x ** 2 + x - 1),
    elementwise("50-op chain", lambda T, x: chain(T, x), np_chain, sizes=(10, 100_000, 1_000_000)),
    elementwise("sum(exp(x))", lambda T, x: T.exp(x).sum(), lambda x: np.exp(x).sum()),
    elementwise("standardize", lambda T, x: (x - x.mean()) / T.sqrt(((x - x.mean()) ** 2).mean() + 1e-8),
                lambda x: (x - x.mean()) / np.sqrt(((x - x.mean()) ** 2).mean() + 1e-8)),
    elementwise("reshape, T, sum", lambda T, x: (x.reshape((2, -1)).T * 2).sum(axis=1),
                lambda x: (x.reshape((2, -1)).T * 2).sum(axis=1)),
    elementwise("x + 1 (overhead)", lambda T, x: x + 1, lambda x: x + 1, sizes=(1, 10)),
    elementwise("2,000-node graph", lambda T, x: deep(T, x), np_deep),
    Case("logistic regression + grad", logreg, np_logreg, logreg_data),
    Case("MLP + grad", mlp, np_mlp, mlp_data),
    Case("softmax x-entropy + grad", xent, np_xent, xent_data),
    Case("robust (Huber) loss + grad", huber, np_huber, huber_data),
]


def per_call(fn, budget=0.15) -> float:
    """Median seconds per call, calling ``fn`` for about ``budget`` seconds per repeat."""
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    number = max(1, int(budget / once))
    return statistics.median(timeit.repeat(fn, number=number, repeat=5)) / number


def compiled(lib, case):
    """(per-call function, compile seconds including the first call)."""
    start = time.perf_counter()
    inputs, outputs = case.build(lib)
    f = lib.function(inputs, outputs)
    return f, start


def agree(got, want) -> bool:
    return all(np.allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-9, equal_nan=True)
               for g, w in zip(got, want))


def libraries() -> list:
    import eqgraph as eg
    import eqgraph.tensor as et

    libs = [Lib("eqgraph", et, lambda i, o: eg.function(i, o, trust_input=True), eg.grad, et.softmax,
                et.log_softmax)]
    try:
        import pytensor
        import pytensor.tensor as pt
    except ImportError:
        print("(PyTensor not installed: pip install -e '.[bench]' to compare)")
        return libs
    libs.append(Lib("pytensor", pt, lambda i, o: pytensor.function(i, o, trust_input=True), pytensor.grad,
                    pt.special.softmax, pt.special.log_softmax))
    return libs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated substrings of case names")
    parser.add_argument("--size", default="both", choices=["small", "medium", "both"],
                        help="small: 10 elements or fewer; medium: 1e5 and more")
    args = parser.parse_args()
    keep = {"small": lambda n: n <= 10, "medium": lambda n: n > 10, "both": lambda n: True}[args.size]
    wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    libs = libraries()
    rng = np.random.default_rng(0)
    rows, compile_times = [], {lib.name: [] for lib in libs}
    print(f"{'case':<28} {'size':>8} {'eqgraph':>10} {'pytensor':>10} {'numpy':>10} {'eg/pt':>7} {'eg/np':>7}  ok")
    for case in CASES:
        if wanted and not any(w in case.name for w in wanted):
            continue
        functions = {}
        for lib in libs:
            f, start = compiled(lib, case)
            with np.errstate(all="ignore"):
                f(*case.data(case.sizes[0], rng))
            compile_times[lib.name].append(time.perf_counter() - start)
            functions[lib.name] = f
        for n in filter(keep, case.sizes):
            values = case.data(n, rng)
            times = {}
            with np.errstate(all="ignore"):
                want = case.numpy(*values)
                want = want if isinstance(want, tuple) else (want,)
                got = functions["eqgraph"](*values)
                for name, f in functions.items():
                    times[name] = per_call(lambda f=f: f(*values))
                times["numpy"] = per_call(lambda: case.numpy(*values))
            eg_t, pt_t, np_t = times["eqgraph"], times.get("pytensor", math.nan), times["numpy"]
            rows.append((case.name, n, eg_t / pt_t, eg_t / np_t))
            print(f"{case.name:<28} {n:>8} {eg_t * 1e6:>9.1f}µ {pt_t * 1e6:>9.1f}µ {np_t * 1e6:>9.1f}µ "
                  f"{eg_t / pt_t:>7.2f} {eg_t / np_t:>7.2f}  {'yes' if agree(got, want) else 'NO'}", flush=True)
    for label, pick in (("small (<= 10)", lambda n: n <= 10), ("medium (>= 1e5)", lambda n: n >= 100_000)):
        ratios = [r for _, n, r, _ in rows if pick(n) and not math.isnan(r)]
        if ratios:
            print(f"geomean eqgraph/pytensor, {label}: {math.exp(statistics.mean(map(math.log, ratios))):.2f} "
                  f"(worst {max(ratios):.2f})")
    names = [case.name for case in CASES if not wanted or any(w in case.name for w in wanted)]
    print("\ncompile + first call, seconds:", "  ".join(f"{lib.name:>9}" for lib in libs))
    for k, name in enumerate(names):
        print(f"  {name:<28}", "  ".join(f"{compile_times[lib.name][k]:9.3f}" for lib in libs))
    for name, times in compile_times.items():
        if times:
            print(f"compile + first call, {name}: geomean {math.exp(statistics.mean(map(math.log, times))):.3f} s, "
                  f"total {sum(times):.1f} s")


if __name__ == "__main__":
    main()
