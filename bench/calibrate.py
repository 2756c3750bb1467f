"""Measure the cost model's constants on this machine and keep them as data.

    python bench/calibrate.py            # prints them; --write saves eqgraph/extract/calibrated.py
    python bench/calibrate.py --kernels-only --write     # only the Numba loop's costs (needs numba)

What it measures (medians of repeated timings, float64):

- ``dispatch_ns``: the run time one more unfused node adds to a compiled call (a chain of
  ``n`` adds on a 1-element vector, fusion off, against a chain of 1);
- ``step_ns``: the same for one more elementwise op inside a fused node (fusion on);
- ``element_ns``: per output element of each elementwise op on 100k elements, values in
  [0.5, 1.5] (NumPy's fast paths for special values are not what graphs see);
- ``kernel_element_ns``: per output element, what one more of each elementwise op adds inside a
  fused Numba loop (``exec/numba_kernels.py``'s form of it against a copy of the array),
  where the op has such a form and Numba is installed.  Arithmetic, comparisons and selects are
  nearly free there (the loop's memory traffic is paid once), while NumPy pays a pass for each:
  ``where`` costs 4.9 ns per element in NumPy and about 0.1 in the loop; ``kernel_stream_ns``:
  what the loop pays per element for each array it reads;
- ``unknown_size``: the size assumed for an axis of unknown length.  It is not a timing
  but follows from two: ten times the break-even size where an add's work equals one
  dispatch.  Below that size every plan costs a few dispatches, so a wrong choice loses
  microseconds; above it the per-element work decides, and assuming arrays tiny there is
  what made ``a + a**10`` run 61x slower than PyTensor on 1e5 elements (issue 12).
"""

from __future__ import annotations

import argparse
import math
import platform
import pprint
import re
import statistics
import timeit
from pathlib import Path

import numpy as np

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.extract.calibrated import MEASURED
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


def kernel_costs() -> dict:
    """``kernel_element_ns``: ``{op: ns per element}`` inside a Numba loop, and
    ``kernel_stream_ns``: half the copy loop ``out[i] = x[i]``'s time per element (the cost of
    reading one more array, or of writing one); {} without Numba."""
    try:
        import numba
    except ImportError:
        return {}
    from eqgraph.exec.numba_kernels import FORMS

    rng = np.random.default_rng(0)
    x, y = rng.uniform(0.5, 1.5, SIZE), rng.uniform(0.5, 1.5, SIZE)
    b, c = x > 1.0, y > 1.0
    out = np.empty(SIZE)

    def loop(expression: str):
        source = (f"def kernel(x, y, b, c, out):\n    for i in range(out.shape[0]):\n"
                  f"        out[i] = {expression}\n")
        namespace = {"math": math, "np": np}
        exec(source, namespace)  # noqa: S102 (our own source)
        kernel = numba.njit(namespace["kernel"])
        kernel(x, y, b, c, out)
        # the fastest of many runs: the differences measured are tenths of a nanosecond, which
        # a median on a shared machine does not resolve
        return min(timeit.repeat(lambda: kernel(x, y, b, c, out), number=20, repeat=25)) / 20 / SIZE * 1e9

    # against a copy, the lightest loop (one read, one write): an op's work shows where memory
    # would hide it in a heavier loop (sqrt: 0.74 ns per element over a copy, 0.4 over x + y)
    base = loop("x[i]")
    costs = {}
    for name in ELEMENT_COST:
        op = ELEMWISE_OPS.get(snake(name))
        if op is None or op.name not in FORMS:
            continue
        if op.name in ("and_", "or_", "xor", "invert"):
            args = ("b[i]", "c[i]")[: op.nin]
        elif op.name == "switch":
            args = ("b[i]", "x[i]", "1.5")
        elif op.name == "clip":
            args = ("x[i]", "0.7", "1.3")
        elif op.name == "pow":
            args = ("x[i]", "10.0")
        else:
            args = ("x[i]", "1.25")[: op.nin]
        value = FORMS[op.name].format(*args)
        boolean = op.name in ("eq", "neq", "lt", "le", "gt", "ge", "and_", "or_", "xor", "invert", "isnan", "isinf")
        expression = f"(x[i] if {value} else 1.5)" if boolean else value
        with np.errstate(all="ignore"):
            costs[name] = round(max(loop(expression) - base, 0.02), 2)
    return {"kernel_element_ns": costs, "kernel_stream_ns": round(base / 2, 3)}


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
        **kernel_costs(),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"save to {TARGET}")
    parser.add_argument("--kernels-only", action="store_true",
                        help="measure kernel_element_ns alone, keeping the other constants as they are")
    args = parser.parse_args()
    data = {**MEASURED, **kernel_costs()} if args.kernels_only else measure()
    pprint.pprint(data, sort_dicts=False)
    if args.write:
        TARGET.write_text('"""The cost model\'s constants as measured by bench/calibrate.py (do not edit by hand:\n'
                          'run `python bench/calibrate.py --write`)."""\n\n'
                          f"MEASURED = {pprint.pformat(data, sort_dicts=False)}\n")
        print(f"wrote {TARGET}")


if __name__ == "__main__":
    main()
