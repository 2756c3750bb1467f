"""The nodes of bench/models.py's compiled programs that the whole Numba function calls in
Python (their op's ``perform``, between Numba segments): per model, the op classes whose
translation is missing or declines the node's types or shapes.  With ``--time``, also the
per-call medians of the function (its whole function, once hot) and of the program it replaces,
interleaved in one process.

    OPENBLAS_NUM_THREADS=1 python bench/whole_gaps.py [--only NAME ...] [--time]
"""

from __future__ import annotations

import argparse
import collections
import statistics
import timeit

import numpy as np

from eqgraph.exec.numba import program as numba_program
from eqgraph.terms.basic import Constant
from models import EqgraphNS, model_table


def untranslated(f) -> collections.Counter:
    """Op class name -> how many nodes of ``f``'s program have no translation."""
    program = f.program
    constants = {v: v.data for v in program.fgraph.variables if isinstance(v, Constant)}
    constants.update({v: program.storage_map[v][0] for v in program.folded})
    return collections.Counter(type(node.op).__name__ for node in numba_program.untranslated_nodes(
        program.fgraph, program.order, constants))


def timed(f, values, warmup=3000, rounds=5) -> str:
    """Per-call medians of ``f`` and of the program behind its whole function, in microseconds."""
    f.wait_compiled()   # else the warm-up may end before the whole function takes over
    for _ in range(warmup):
        f(*values)
    program = getattr(f.program.call, "program", None)
    if program is None:
        return "no whole function"
    times = {"function": [], "program": []}
    for _ in range(rounds):
        times["function"].append(min(timeit.repeat(lambda: f(*values), number=100, repeat=3)) / 100)
        times["program"].append(min(timeit.repeat(lambda: program(*values), number=100, repeat=3)) / 100)
    whole, alone = (statistics.median(times[k]) * 1e6 for k in ("function", "program"))
    return f"program {alone:9.1f} us, function {whole:9.1f} us ({whole / alone:.2f})"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*", help="model names (substrings) to list")
    parser.add_argument("--time", action="store_true", help="time the function against its program")
    args = parser.parse_args()
    lib = EqgraphNS()
    for model, (fn, params, data) in model_table(np.random.default_rng(0)).items():
        if args.only and not any(s.lower() in model.lower() for s in args.only):
            continue
        f = lib.compile(fn, params, data)
        gaps = untranslated(f)
        listed = ", ".join(f"{name} x{count}" for name, count in sorted(gaps.items())) or "none"
        print(f"{model:<26} {listed}", flush=True)
        if args.time:
            print(f"{'':<26} {timed(f, [np.asarray(v, dtype=np.float64) for _, v in params])}", flush=True)


if __name__ == "__main__":
    main()
