"""Peak memory and time of a scan's gradient: ``eg.scan`` against ``eg.scan_checkpoints``.

    python bench/scan_memory.py [--steps 2000] [--hidden 2000] [--every 50]

A loop h_t = tanh(h_{t-1} * w + x_t) over ``--steps`` steps of a state of ``--hidden``
floats; the gradient of the last state's sum with respect to w and h0. Peak memory is
tracemalloc's (NumPy reports its buffers to it) over one call of the compiled gradient.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

import eqgraph as eg
import eqgraph.tensor as et


def measure(loop, steps: int, hidden: int, **kwargs) -> tuple[float, float, list]:
    x, h0, w = et.dvector("x"), et.dvector("h0"), et.dvector("w")
    hs, _ = loop(lambda xt, h, w: et.tanh(h * w + xt), sequences=x, outputs_info=h0, non_sequences=w, **kwargs)
    f = eg.function([x, h0, w], eg.grad(hs[-1].sum(), [w, h0]))
    values = [np.linspace(-1, 1, steps), np.full(hidden, 0.1), np.full(hidden, 0.9)]
    f(*values)  # compile the inner steps first
    tracemalloc.start()
    start = time.perf_counter()
    grads = f(*values)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2 ** 20, seconds, grads


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--hidden", type=int, default=2000)
    parser.add_argument("--every", type=int, default=50)
    args = parser.parse_args()
    full_mb, full_s, full_g = measure(eg.scan, args.steps, args.hidden)
    ck_mb, ck_s, ck_g = measure(eg.scan_checkpoints, args.steps, args.hidden, save_every_N=args.every)
    for a, b in zip(full_g, ck_g):
        np.testing.assert_allclose(a, b, rtol=1e-10)
    states_mb = args.steps * args.hidden * 8 / 2 ** 20
    print(f"{args.steps} steps of {args.hidden} float64 ({states_mb:.1f} MiB of states), gradient wrt w and h0")
    print(f"  scan                              peak {full_mb:7.1f} MiB  {full_s * 1e3:8.1f} ms")
    print(f"  scan_checkpoints(save_every_N={args.every:<3}) peak {ck_mb:7.1f} MiB  {ck_s * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
