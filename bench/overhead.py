"""Per-call overhead of a compiled ``x + 1`` on a 1-element vector, side by side.

    python bench/overhead.py            (pip install -e ".[bench]" for PyTensor)

Prints the median time per call of eqgraph (checked and trust_input), PyTensor's
default mode and its C mode ("CVM"), and plain NumPy, each as a ratio to NumPy.
Targets (issue 3): eqgraph checked <= PyTensor CVM; eqgraph trust_input <= 2x NumPy.
"""

from __future__ import annotations

import statistics
import timeit

import numpy as np


def per_call(fn, number=20_000, repeat=7) -> float:
    fn()  # warm up
    times = timeit.repeat(fn, number=number, repeat=repeat)
    return statistics.median(times) / number


def main():
    import eqgraph as eg
    import eqgraph.tensor as et

    data = np.ones(1)
    one = np.float64(1.0)
    results = {"numpy x + 1": per_call(lambda: np.add(data, one))}

    x = et.dvector("x")
    f = eg.function([x], x + 1)
    results["eqgraph"] = per_call(lambda: f(data))
    f_trusted = eg.function([x], x + 1, trust_input=True)
    results["eqgraph trust_input"] = per_call(lambda: f_trusted(data))

    try:
        import pytensor
        import pytensor.tensor as pt
    except ImportError:
        print("(PyTensor not installed: pip install -e '.[bench]' to compare)")
    else:
        px = pt.dvector("x")
        for label, mode in (("pytensor default", None), ("pytensor CVM", "CVM")):
            g = pytensor.function([px], px + 1, mode=mode)
            results[label] = per_call(lambda g=g: g(data))
        g = pytensor.function([px], px + 1, mode="CVM", trust_input=True)
        results["pytensor CVM trust_input"] = per_call(lambda: g(data))

    base = results["numpy x + 1"]
    print(f"{'per call':<28} {'µs':>8} {'x numpy':>9}")
    for label, seconds in results.items():
        print(f"{label:<28} {seconds * 1e6:>8.2f} {seconds / base:>9.2f}")
    if "pytensor CVM" in results:
        print(f"\neqgraph / pytensor CVM: {results['eqgraph'] / results['pytensor CVM']:.2f} (target <= 1)")
    print(f"eqgraph trust_input / numpy: {results['eqgraph trust_input'] / base:.2f} (target <= 2)")


if __name__ == "__main__":
    main()
