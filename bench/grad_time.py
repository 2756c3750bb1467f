"""Time to build a symbolic gradient (``eg.grad``) on large graphs: eqgraph vs PyTensor.

    python bench/grad_time.py [--steps 400 1200] [--layers 300] [--repeat 3]

Two graphs: the chain of bench/compile_time.py (5 nodes a step, so 1200 steps
is a 6k-node graph) and a stack of tanh dense layers (``h = tanh(h @ W_i + b_i)``,
4 nodes a layer, one weight per layer). The cost is the sum of the output; the
time is that of ``grad`` alone (building the gradient graph, no compilation),
best of --repeat. PyTensor's column is filled when it is importable (it is not a
dependency: pip install -e '.[bench]').
"""

from __future__ import annotations

import argparse
import time

from compile_time import chain_graph


def dense_stack(tensor_module, layers, width=8):
    """An MLP-like stack; returns (cost, [x] + weights) in either library."""
    x = tensor_module.dmatrix("x")
    params = [x]
    h = x
    for i in range(layers):
        w = tensor_module.dmatrix(f"w{i}")
        b = tensor_module.dvector(f"b{i}")
        params += [w, b]
        h = tensor_module.tanh(tensor_module.dot(h, w) + b)
    return h.sum(), params


def best_grad_seconds(grad, cost, wrt, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        grad(cost, wrt)
        best = min(best, time.perf_counter() - start)
    return best


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, nargs="+", default=[400, 1200])
    parser.add_argument("--layers", type=int, nargs="+", default=[300])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import eqgraph as eg
    import eqgraph.tensor as et

    try:
        import pytensor
        import pytensor.tensor as pt
    except ImportError:
        pytensor = pt = None
        print("(PyTensor not installed: pip install -e '.[bench]' to compare)")

    cases = [(f"chain, {5 * s} nodes", lambda lib, s=s: _chain_cost(lib, s)) for s in args.steps]
    cases += [(f"dense stack, {4 * n} nodes", lambda lib, n=n: dense_stack(lib, n)) for n in args.layers]
    print(f"{'graph':>24} {'eqgraph grad s':>15} {'pytensor grad s':>16}")
    for label, build in cases:
        cost, wrt = build(et)
        ours = best_grad_seconds(eg.grad, cost, wrt, args.repeat)
        shown = f"{'-':>16}"
        if pt is not None:
            cost, wrt = build(pt)
            try:
                shown = f"{best_grad_seconds(pytensor.grad, cost, wrt, args.repeat):16.3f}"
            except RecursionError:  # PyTensor's grad recurses once per node of a path
                shown = f"{'recursion':>16}"
        print(f"{label:>24} {ours:>15.3f} {shown}")


def _chain_cost(lib, steps):
    x, a = chain_graph(lib, steps)
    return a.sum(), [x]


if __name__ == "__main__":
    main()
