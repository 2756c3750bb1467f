"""Run time of compiled gradients at batch 1000: eqgraph vs PyTensor vs NumPy, side by side.

    python bench/grad_models.py [--batch 1000]

Two models: logistic regression (loss and gradients for w, b) and a 2-layer tanh
MLP (loss and gradients for all four parameters). The same graph is built in
both libraries and compiled with their default settings; the NumPy column is a
hand-written forward and backward pass. Ratios are to eqgraph.
"""

from __future__ import annotations

import argparse
import statistics
import timeit

import numpy as np


def per_call(fn, number=20, repeat=7):
    fn()
    return statistics.median(timeit.repeat(fn, number=number, repeat=repeat)) / number


def logreg(lib, T, x, y, w, b):
    p = lib.sigmoid(x @ w + b)
    return -(y * lib.log(p) + (1 - y) * lib.log(1 - p)).mean()


def mlp(lib, T, x, y, w1, b1, w2, b2):
    h = lib.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    return ((out - y) ** 2).mean()


def numpy_logreg(x, y, w, b):
    p = 1 / (1 + np.exp(-(x @ w + b)))
    loss = -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean()
    d = (p - y) / len(y)
    return loss, x.T @ d, d.sum()


def numpy_mlp(x, y, w1, b1, w2, b2):
    h = np.tanh(x @ w1 + b1)
    out = h @ w2 + b2
    loss = ((out - y) ** 2).mean()
    d_out = 2 * (out - y) / out.size
    dh = (d_out @ w2.T) * (1 - h * h)
    return loss, x.T @ dh, dh.sum(0), h.T @ d_out, d_out.sum(0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=1000)
    n = parser.parse_args().batch
    rng = np.random.default_rng(0)
    d, hidden = 100, 64
    data = {
        "logreg": ([rng.normal(size=(n, d)), (rng.random(n) > 0.5) * 1.0, rng.normal(size=d) * 0.1, 0.1],
                   logreg, numpy_logreg, ["matrix", "vector", "vector", "scalar"]),
        "mlp": ([rng.normal(size=(n, d)), rng.normal(size=(n, 1)), rng.normal(size=(d, hidden)) * 0.1,
                 np.zeros(hidden), rng.normal(size=(hidden, 1)) * 0.1, np.zeros(1)],
                mlp, numpy_mlp, ["matrix", "matrix", "matrix", "vector", "matrix", "vector"]),
    }
    import eqgraph as eg
    import eqgraph.tensor as et

    try:
        import pytensor
        import pytensor.tensor as pt
    except ImportError:
        pytensor = None
        print("(PyTensor not installed: pip install -e '.[bench]' to compare)")
    print(f"{'batch ' + str(n):<10} {'eqgraph ms':>11} {'pytensor ms':>12} {'numpy ms':>9} {'pytensor/eqgraph':>17}")
    for name, (values, model, by_hand, kinds) in data.items():
        xs = [getattr(et, kind)(f"v{i}") for i, kind in enumerate(kinds)]
        loss = model(et, None, *xs)
        f = eg.function(xs, [loss, *eg.grad(loss, xs[2:])])
        ours = per_call(lambda: f(*values))
        theirs = None
        if pytensor is not None:
            ps = [getattr(pt, kind)(f"v{i}") for i, kind in enumerate(kinds)]
            ploss = model(pt.math if hasattr(pt.math, "sigmoid") else pt, None, *ps)
            g = pytensor.function(ps, [ploss, *pytensor.grad(ploss, ps[2:])])
            theirs = per_call(lambda: g(*values))
        check = by_hand(*values)
        np.testing.assert_allclose(f(*values)[0], check[0], rtol=1e-8)
        base = per_call(lambda: by_hand(*values))
        shown = f"{theirs * 1e3:12.3f}" if theirs else f"{'-':>12}"
        ratio = f"{theirs / ours:17.2f}" if theirs else f"{'-':>17}"
        print(f"{name:<10} {ours * 1e3:>11.3f} {shown} {base * 1e3:>9.3f} {ratio}")


if __name__ == "__main__":
    main()
