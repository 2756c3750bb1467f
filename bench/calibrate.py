"""Measure the cost model's constants on this machine and keep them as data.

    python bench/calibrate.py            # prints them; --write saves eqgraph/extract/calibrated.py
    python bench/calibrate.py --kernels-only --write     # only the Numba loop's costs (needs numba)
    python bench/calibrate.py --missing --write          # only the ops that have no cost yet

Every elementwise op of the registry (``SCALAR_OPS``) is measured, under its constructor's name
(``TrueDiv``: the cost model prices e-graph nodes), on inputs inside the op's ``domain``.

What it measures (medians of repeated timings, float64):

- ``dispatch_ns``: the run time one more unfused node adds to a compiled call (a chain of
  ``n`` adds on a 1-element vector, fusion off, against a chain of 1);
- ``step_ns``: the same for one more elementwise op inside a fused node (fusion on);
- ``element_ns``: per output element of each elementwise op on 100k elements, values in
  [0.5, 1.5] (NumPy's fast paths for special values are not what graphs see);
- ``kernel_element_ns``: per output element, what one more of each elementwise op adds inside a
  fused Numba loop (``exec/numba/kernels.py``'s form of it against a copy of the array),
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
import statistics
import timeit
from pathlib import Path

import numpy as np

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.egraph.schema import camel
from eqgraph.extract.calibrated import MEASURED
from eqgraph.tensor.elemwise import SCALAR_OPS

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


def inputs(name: str, rng) -> tuple:
    """Two arrays of SIZE values in [0.5, 1.5] (NumPy's fast paths for special values are not what
    graphs see), or, where that is outside the op's domain, in the middle half of the domain
    (cut to [-3, 3])."""
    lo, hi = SCALAR_OPS[name].domain or (-math.inf, math.inf)
    if lo <= 0.5 and 1.5 <= hi:
        lo, hi = 0.5, 1.5
    else:
        lo, hi = max(lo, -3.0), min(hi, 3.0)
        lo, hi = lo + (hi - lo) / 4, hi - (hi - lo) / 4
    return rng.uniform(lo, hi, SIZE), rng.uniform(lo, hi, SIZE)


def element_ns(names) -> dict:
    """ns per output element of NumPy's form of each op of ``names`` (constructor names), and of an add."""
    rng = np.random.default_rng(0)
    ten = np.full(1, 10.0)   # how x ** 10 runs: a (1,)-shaped constant broadcast
    out = {}
    x, y = inputs("add", rng)
    base = best_of(lambda: np.add(x, y), 50) / SIZE * 1e9
    for name in names:
        if name == "Cast":
            fn = lambda: x.astype(np.float32)  # noqa: E731
        else:
            op = CONSTRUCTORS[name]
            impl, (a, b) = SCALAR_OPS[op].impl(np), inputs(op, rng)
            flags = a > np.median(a)
            if op in ("and_", "or_", "xor", "invert"):
                args = (flags, ~flags)[: SCALAR_OPS[op].nin]
            elif op == "pow":
                args = (a, ten)
            elif op == "switch":
                args = (flags, a, b)
            elif op == "clip":
                args = (a, 0.7, 1.3)
            elif op == "polygamma":  # an integer order: a fractional one is NaN at once
                args = (np.full(a.shape, 2), a)
            else:
                args = (a, b, (a + b) / 2)[: SCALAR_OPS[op].nin]
            fn = lambda impl=impl, args=args: impl(*args)  # noqa: E731
        with np.errstate(all="ignore"):
            out[name] = round(best_of(fn, 20) / SIZE * 1e9, 2)
    out["_add_ns_per_element"] = round(base, 3)
    return out


#: constructor name -> the op's registry name (the calibrated data is keyed by constructor)
CONSTRUCTORS = {camel(name): name for name in SCALAR_OPS}


def kernel_costs(names) -> dict:
    """``kernel_element_ns``: ``{op: ns per element}`` inside a Numba loop for each op of ``names``
    (constructor names) that has a Numba form, and ``kernel_stream_ns``: half the copy loop
    ``out[i] = x[i]``'s time per element (the cost of reading one more array, or of writing
    one); {} without Numba."""
    try:
        import numba
    except ImportError:
        return {}
    from eqgraph.exec.numba import special as numba_special
    from eqgraph.exec.numba.kernels import FORMS

    rng = np.random.default_rng(0)
    x, y = inputs("add", rng)
    b, c = x > 1.0, y > 1.0
    out = np.empty(SIZE)

    def loop(expression: str, x=x):
        source = (f"def kernel(x, y, b, c, out):\n    for i in range(out.shape[0]):\n"
                  f"        out[i] = {expression}\n")
        namespace = {"math": math, "np": np, "special": numba_special}
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
    for name in names:
        op = CONSTRUCTORS.get(name)
        if op not in FORMS:
            continue
        nin, (a, _) = SCALAR_OPS[op].nin, inputs(op, rng)
        if op in ("and_", "or_", "xor", "invert"):
            args = ("b[i]", "c[i]")[:nin]
        elif op == "switch":
            args = ("b[i]", "x[i]", "1.5")
        elif op == "clip":
            args = ("x[i]", "0.7", "1.3")
        elif op == "pow":
            args = ("x[i]", "10.0")
        elif op == "polygamma":
            args = ("2.0", "x[i]")
        else:
            args = ("x[i]",) + (repr(float(np.median(a))),) * 2   # the other operands in the domain too
            args = args[:nin]
        value = FORMS[op].format(*args)
        boolean = op in ("eq", "neq", "lt", "le", "gt", "ge", "and_", "or_", "xor", "invert", "isnan", "isinf")
        expression = f"(x[i] if {value} else 1.5)" if boolean else value
        with np.errstate(all="ignore"):
            costs[name] = round(max(loop(expression, a) - base, 0.02), 2)
    return {"kernel_element_ns": costs, "kernel_stream_ns": round(base / 2, 3)}


#: what the cost model prices per element: every registered op, and casts
ALL = [camel(name) for name in SCALAR_OPS] + ["Cast"]


#: ops measured again beside the missing ones, to put the new costs on the scale of the stored ones
REFERENCES = ["Add", "Exp", "Log", "Tanh", "Sqrt"]


def missing() -> dict:
    """MEASURED with the costs of the ops it lacks measured and added (the rest as it is). The
    new costs are scaled by how much slower than when they were stored the references run now
    (the median ratio), so that a busy machine does not make the new ops look dear."""
    data = dict(MEASURED)
    for key, measure_now in (("element_ns", element_ns), ("kernel_element_ns", kernel_element_ns)):
        stored = MEASURED.get(key, {})
        new = [n for n in ALL if n not in stored]
        now = measure_now(new + [r for r in REFERENCES if r in stored])
        ratios = [stored[r] / now[r] for r in REFERENCES if r in stored and r in now and now[r] > 0]
        scale = statistics.median(ratios) if ratios else 1.0
        print(f"{key}: measured {sorted(set(new) & set(now))}, scaled by {scale:.3f}")
        data[key] = {**stored, **{n: round(now[n] * scale, 2) for n in new if n in now}}
    return data


def kernel_element_ns(names) -> dict:
    return kernel_costs(names).get("kernel_element_ns", {})


def measure() -> dict:
    dispatch = per_node_ns(fusion=False)
    step = per_node_ns(fusion=True)
    elements = element_ns(ALL)
    add = elements.pop("_add_ns_per_element")
    break_even = dispatch / add
    return {
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "numpy": np.__version__,
        "dispatch_ns": round(dispatch, 1),
        "step_ns": round(max(step, 1.0), 1),
        "unknown_size": int(10 ** round(np.log10(10 * break_even))),
        "element_ns": elements,
        **kernel_costs(ALL),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"save to {TARGET}")
    parser.add_argument("--kernels-only", action="store_true",
                        help="measure kernel_element_ns alone, keeping the other constants as they are")
    parser.add_argument("--missing", action="store_true",
                        help="measure only the ops with no cost yet, keeping the others as they are")
    args = parser.parse_args()
    if args.missing:
        data = missing()
    elif args.kernels_only:
        data = {**MEASURED, **kernel_costs(ALL)}
    else:
        data = measure()
    pprint.pprint(data, sort_dicts=False)
    if args.write:
        TARGET.write_text('"""The cost model\'s constants as measured by bench/calibrate.py (do not edit by hand:\n'
                          'run `python bench/calibrate.py --write`)."""\n\n'
                          f"MEASURED = {pprint.pformat(data, sort_dicts=False)}\n")
        print(f"wrote {TARGET}")


if __name__ == "__main__":
    main()
