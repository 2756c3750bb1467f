"""Compile time of a large elementwise graph: eqgraph vs PyTensor, side by side.

    python bench/compile_time.py [--steps 100 400 1000 4000] [--pytensor-max-nodes 2000]

The graph is a chain of ``t = tanh(a); a = t*0.5 + t*x`` steps (5 nodes a step,
each tanh used twice). Prints compile seconds per graph size for eqgraph
(default rulesets and limits) and, up to --pytensor-max-nodes, PyTensor's
default mode, warm (a second compile in the same process, so C/Numba caches
are hot). Reports the ratio and how eqgraph's time grows with size.
"""

from __future__ import annotations

import argparse
import time


def chain_graph(tensor_module, steps):
    """The same graph in eqgraph.tensor or pytensor.tensor (both spell dvector and tanh alike)."""
    x = tensor_module.dvector("x")
    a = x
    for _ in range(steps):
        t = tensor_module.tanh(a)
        a = t * 0.5 + t * x
    return x, a


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, nargs="+", default=[100, 400, 1000, 4000])
    parser.add_argument("--pytensor-max-nodes", type=int, default=2000)
    args = parser.parse_args()
    import eqgraph as eg
    import eqgraph.tensor as et

    try:
        import pytensor
    except ImportError:
        pytensor = None
        print("(PyTensor not installed: pip install -e '.[bench]' to compare)")
    print(f"{'nodes':>7} {'eqgraph s':>10} {'pytensor warm s':>16} {'pytensor / eqgraph':>19}  stop reason")
    previous = None
    for steps in args.steps:
        nodes = 5 * steps
        x, y = chain_graph(et, steps)
        start = time.perf_counter()
        f = eg.function([x], y)
        ours = time.perf_counter() - start
        theirs = None
        if pytensor is not None and nodes <= args.pytensor_max_nodes:
            import pytensor.tensor as pt

            px, py = chain_graph(pt, steps)
            pytensor.function([px], py)  # cold: fills the caches
            px, py = chain_graph(pt, steps)
            start = time.perf_counter()
            pytensor.function([px], py)
            theirs = time.perf_counter() - start
        ratio = f"{theirs / ours:19.1f}" if theirs else f"{'-':>19}"
        growth = f"  (x{ours / previous[1]:.2f} time for x{nodes / previous[0]:.1f} nodes)" if previous else ""
        shown = f"{theirs:16.2f}" if theirs else f"{'-':>16}"
        print(f"{nodes:>7} {ours:>10.2f} {shown} {ratio}  {f.stages.report.stop_reason}{growth}")
        previous = (nodes, ours)


if __name__ == "__main__":
    main()
