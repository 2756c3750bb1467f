"""eqgraph.scan against PyTensor's scan: the same loops, checked equal, then timed.

    python bench/scan_rnn.py [--steps 200] [--hidden 16]

First a cross-check of the semantics on loops with taps (sequence taps, output taps,
go_backwards, n_steps, truncate_gradient): outputs and gradients must agree with PyTensor's
to 1e-10. Then a tanh RNN over ``--steps`` steps, forward and forward + gradient, side by side
with a hand-written NumPy loop. Ratios are to eqgraph.
"""

from __future__ import annotations

import argparse
import statistics
import timeit

import numpy as np


def per_call(fn, number=5, repeat=5):
    fn()
    return statistics.median(timeit.repeat(fn, number=number, repeat=repeat)) / number


def tapped_loops(lib, tensor):
    """(name, builder(x, init, c) -> (output, its gradients)) pairs written for both libraries."""

    def with_taps(seq_taps, out_taps, go_backwards=False, n_steps=None, truncate=-1):
        def build(x, init, c):
            def fn(*args):
                total = args[-1]
                for i, a in enumerate(args[:len(seq_taps)]):
                    total = total + (i + 1) * a
                for j, a in enumerate(args[len(seq_taps):-1]):
                    total = total + tensor.sin(a) / (j + 2)
                return total
            out, _ = lib.scan(fn, sequences={"input": x, "taps": seq_taps},
                              outputs_info={"initial": init, "taps": out_taps}, non_sequences=c,
                              n_steps=n_steps, go_backwards=go_backwards, truncate_gradient=truncate)
            cost = (out * tensor.cos(out)).sum()
            return [out, *lib.grad(cost, [x, init, c])]
        return build

    return [("taps [0] / [-2, -1]", with_taps([0], [-2, -1])),
            ("taps [-2, 0, 1] / [-3, -1]", with_taps([-2, 0, 1], [-3, -1])),
            ("go_backwards", with_taps([-1, 1], [-2], go_backwards=True)),
            ("n_steps=3", with_taps([0, 2], [-1, -2], n_steps=3)),
            ("truncate_gradient=2", with_taps([0], [-2, -1], truncate=2)),
            ("backwards, n_steps, truncate", with_taps([-2, 0, 1], [-1], go_backwards=True, n_steps=3, truncate=2))]


def cross_check() -> None:
    import pytensor
    import pytensor.tensor as pt

    import eqgraph as eg
    import eqgraph.tensor as et

    rng = np.random.default_rng(0)
    values = [rng.standard_normal((8, 2)), rng.standard_normal((4, 2)), rng.standard_normal(2)]
    ours, theirs = tapped_loops(eg, et), tapped_loops(pytensor, pt)
    for (name, build), (_, build_pt) in zip(ours, theirs):
        xs = [et.dmatrix("x"), et.dmatrix("init"), et.dvector("c")]
        ps = [pt.dmatrix("x"), pt.dmatrix("init"), pt.dvector("c")]
        a = eg.function(xs, build(*xs))(*values)
        b = pytensor.function(ps, build_pt(*ps))(*values)
        worst = max(float(np.max(np.abs(u - v), initial=0.0)) for u, v in zip(a, b))
        status = "same" if worst < 1e-10 else "DIFFERENT"
        print(f"  {name:<28} {status} (largest difference {worst:.1e})")


def rnn(lib, tensor, x, h0, w, u):
    hs, _ = lib.scan(lambda xt, h, w, u: tensor.tanh(xt @ w + h @ u), sequences=x, outputs_info=h0,
                     non_sequences=[w, u])
    cost = (hs ** 2).sum()
    return cost, lib.grad(cost, [w, u])


def numpy_rnn(x, h0, w, u, grad=False):
    hs, h = [], h0
    for xt in x:
        h = np.tanh(xt @ w + h @ u)
        hs.append(h)
    if not grad:
        return hs
    gw, gu, carry = np.zeros_like(w), np.zeros_like(u), np.zeros_like(h0)
    for t in reversed(range(len(x))):
        d = (2 * hs[t] + carry) * (1 - hs[t] ** 2)
        prev = hs[t - 1] if t else h0
        gw += np.outer(x[t], d)
        gu += np.outer(prev, d)
        carry = d @ u.T
    return gw, gu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--hidden", type=int, default=16)
    args = parser.parse_args()
    import pytensor
    import pytensor.tensor as pt

    import eqgraph as eg
    import eqgraph.tensor as et

    print("semantics, eqgraph vs PyTensor:")
    cross_check()
    rng = np.random.default_rng(0)
    values = [rng.standard_normal((args.steps, 8)), np.zeros(args.hidden),
              0.3 * rng.standard_normal((8, args.hidden)), 0.3 * rng.standard_normal((args.hidden, args.hidden))]
    ours = [et.dmatrix("x"), et.dvector("h0"), et.dmatrix("w"), et.dmatrix("u")]
    theirs = [pt.dmatrix("x"), pt.dvector("h0"), pt.dmatrix("w"), pt.dmatrix("u")]
    cost, grads = rnn(eg, et, *ours)
    cost_pt, grads_pt = rnn(pytensor, pt, *theirs)
    rows = [("forward", eg.function(ours, cost), pytensor.function(theirs, cost_pt), lambda: numpy_rnn(*values)),
            ("forward + gradient", eg.function(ours, [cost, *grads]), pytensor.function(theirs, [cost_pt, *grads_pt]),
             lambda: numpy_rnn(*values, grad=True))]
    print(f"\ntanh RNN, {args.steps} steps, hidden {args.hidden} (per call; ratio to eqgraph):")
    for name, f, f_pt, f_np in rows:
        ours_s, theirs_s, numpy_s = per_call(lambda: f(*values)), per_call(lambda: f_pt(*values)), per_call(f_np)
        print(f"  {name:<20} eqgraph {ours_s * 1e3:7.2f} ms | PyTensor {theirs_s * 1e3:7.2f} ms "
              f"({theirs_s / ours_s:.2f}x) | NumPy loop {numpy_s * 1e3:7.2f} ms ({numpy_s / ours_s:.2f}x)")
    np.testing.assert_allclose(rows[1][1](*values)[1], numpy_rnn(*values, grad=True)[0], rtol=1e-8)


if __name__ == "__main__":
    main()
