"""Measure the cost model's constants on this machine and keep them as data.

    python bench/calibrate.py            # prints them; --write saves eqgraph/extract/calibrated.py

What it measures (medians of repeated timings, float64):

- ``dispatch_ns``: the run time one more unfused node adds to a compiled call (a chain of
  ``n`` adds on a 1-element vector, fusion off, against a chain of 1);
- ``step_ns``: the same for one more elementwise op inside a fused node (fusion on);
- ``element_ns``: per output element of each elementwise op on 100k elements, values in
  [0.5, 1.5] (NumPy's fast paths for special values are not what graphs see);
- ``unknown_size``: the size assumed for an axis of unknown length.  It is not a timing
  but follows from two: ten times the break-even size where an add's work equals one
  dispatch.  Below that size every plan costs a few dispatches, so a wrong choice loses
  microseconds; above it the per-element work decides, and assuming arrays tiny there is
  what made ``a + a**10`` run 61x slower than PyTensor on 1e5 elements (issue 12).
"""

from __future__ import annotations

import argparse
import platform
import pprint
import re
import statistics
import timeit
from pathlib import Path

import numpy as np

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.extract.costs import ELEMENT_COST
from eqgraph.tensor.elemwise import ELEMWISE_OPS

TARGET = Path(__file__).resolve().parent.parent / "eqgraph" / "extract" / "calibrated.py"
SIZE = 100_000


def best_of(fn, number: int, repeat: int = 5) -> float:
    fn()
    return statistics.median(timeit.repeat(fn, number=number, repeat=repeat)) / number


def per_node_ns(fusion: bool, n: int = 40) -> float:
    """What one more add in a compiled chain costs on a 1-element vector."""
    x = et.dvector("x")
    short, long = x + 1.5, x + 1.5
    for _ in range(n - 1):
        long = long + 1.5
    data = np.ones(1)
    f1 = eg.function([x], short, rulesets=[], fusion=fusion, trust_input=True)
    fn = eg.function([x], long, rulesets=[], fusion=fusion, trust_input=True)
    return (best_of(lambda: fn(data), 2000) - best_of(lambda: f1(data), 2000)) / (n - 1) * 1e9


def snake(name: str) -> str:
    """The SCALAR_OPS name of an e-graph constructor: TrueDiv -> true_div, And -> and_."""
    s = re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()
    return s + "_" if s in ("and", "or") else s


def element_ns() -> dict:
    rng = np.random.default_rng(0)
    x, y = rng.uniform(0.5, 1.5, SIZE), rng.uniform(0.5, 1.5, SIZE)
    flags = x > 1.0
    ten = np.full(1, 10.0)   # how x ** 10 runs: a (1,)-shaped constant broadcast
    out = {}
    base = best_of(lambda: np.add(x, y), 50) / SIZE * 1e9
    for name in ELEMENT_COST:
        if name == "Cast":
            fn = lambda: x.astype(np.float32)  # noqa: E731
        else:
            op = ELEMWISE_OPS[snake(name)]
            impl = op.scalar.impl(np)
            if op.name in ("and_", "or_", "xor", "invert"):
                args = (flags, ~flags)[: op.nin]
            elif op.name == "pow":
                args = (x, ten)
            elif op.name == "switch":
                args = (flags, x, y)
            elif op.name == "clip":
                args = (x, 0.7, 1.3)
            else:
                args = (x, y)[: op.nin]
            fn = lambda impl=impl, args=args: impl(*args)  # noqa: E731
        with np.errstate(all="ignore"):
            out[name] = round(best_of(fn, 20) / SIZE * 1e9, 2)
    out["_add_ns_per_element"] = round(base, 3)
    return out


def measure() -> dict:
    dispatch = per_node_ns(fusion=False)
    step = per_node_ns(fusion=True)
    elements = element_ns()
    add = elements.pop("_add_ns_per_element")
    break_even = dispatch / add
    return {
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "numpy": np.__version__,
        "dispatch_ns": round(dispatch, 1),
        "step_ns": round(max(step, 1.0), 1),
        "unknown_size": int(10 ** round(np.log10(10 * break_even))),
        "element_ns": elements,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"save to {TARGET}")
    args = parser.parse_args()
    data = measure()
    pprint.pprint(data, sort_dicts=False)
    if args.write:
        TARGET.write_text('"""The cost model\'s constants as measured by bench/calibrate.py (do not edit by hand:\n'
                          'run `python bench/calibrate.py --write`)."""\n\n'
                          f"MEASURED = {pprint.pformat(data, sort_dicts=False)}\n")
        print(f"wrote {TARGET}")


if __name__ == "__main__":
    main()
