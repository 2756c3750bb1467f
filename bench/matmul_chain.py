"""A @ B @ v with static shapes: eqgraph picks A @ (B @ v); without rules it runs (A @ B) @ v.

    python bench/matmul_chain.py [--n 1000]

Prints per-call time for eqgraph (default rules), eqgraph with rulesets=[],
PyTensor's default mode on the same graph, and NumPy's left-to-right A @ B @ v.
"""

from __future__ import annotations

import argparse
import statistics
import timeit

import numpy as np


def per_call(fn, number=3, repeat=5):
    fn()
    return statistics.median(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1000)
    n = parser.parse_args().n
    import eqgraph as eg
    import eqgraph.tensor as et

    rng = np.random.default_rng(0)
    a, b, v = rng.normal(size=(n, n)), rng.normal(size=(n, n)), rng.normal(size=n)
    A, B = et.TensorType("float64", (n, n))("A"), et.TensorType("float64", (n, n))("B")
    V = et.TensorType("float64", (n,))("v")
    results = {
        "numpy A @ B @ v": per_call(lambda: a @ b @ v),
        "eqgraph (rules)": per_call(lambda f=eg.function([A, B, V], A @ B @ V): f(a, b, v)),
        "eqgraph rulesets=[]": per_call(lambda f=eg.function([A, B, V], A @ B @ V, rulesets=[]): f(a, b, v)),
    }
    try:
        import pytensor
        import pytensor.tensor as pt

        PA, PB, PV = pt.dmatrix("A"), pt.dmatrix("B"), pt.dvector("v")
        g = pytensor.function([PA, PB, PV], PA @ PB @ PV)
        results["pytensor default"] = per_call(lambda: g(a, b, v))
    except ImportError:
        print("(PyTensor not installed)")
    base = results["eqgraph (rules)"]
    print(f"{'n = ' + str(n):<24} {'ms/call':>9} {'x eqgraph':>10}")
    for label, seconds in results.items():
        print(f"{label:<24} {seconds * 1e3:>9.3f} {seconds / base:>10.1f}")


if __name__ == "__main__":
    main()
