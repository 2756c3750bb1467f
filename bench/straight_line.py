"""The generated per-call program (exec/numpy/program.py) against the thunk loop, in one process.

    python bench/straight_line.py [--only NAME,...] [--size 10]

For each case of bench/suite.py, both programs are linked over the same compiled graph and
run alternately on the same inputs (after 60 calls each, so that Numba kernels are hot where
installed), so the machine's load moves both alike: the ratio is what to read.
"""

from __future__ import annotations

import argparse
import statistics
import timeit

import numpy as np
import suite

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.link import link


def linked(fgraph, straight: bool, values):
    program = link(fgraph, straight=straight)
    for cell, value in zip(program.input_cells, values):
        cell[0] = value
    return program


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated substrings of case names")
    parser.add_argument("--size", type=int, default=10)
    args = parser.parse_args()
    wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    lib = suite.Lib("eqgraph", et, lambda i, o: eg.function(i, o), eg.grad, et.softmax, et.log_softmax)
    rng = np.random.default_rng(0)
    print(f"{'case':<28} {'nodes':>5} {'program':>10} {'thunks':>10} {'ratio':>6}")
    ratios = []
    for case in suite.CASES:
        if wanted and not any(w in case.name for w in wanted):
            continue
        inputs, outputs = case.build(lib)
        fgraph = lib.function(inputs, outputs).fgraph
        values = case.data(args.size, rng)
        straight, thunks = linked(fgraph, True, values), linked(fgraph, False, values)
        with np.errstate(all="ignore"):
            for _ in range(60):
                straight.run()
                thunks.run()
            times = {True: [], False: []}
            for _ in range(7):
                for kind, program in ((True, straight), (False, thunks)):
                    times[kind].append(min(timeit.repeat(program.run, number=200, repeat=3)) / 200)
        a, b = statistics.median(times[True]), statistics.median(times[False])
        ratios.append(a / b)
        print(f"{case.name:<28} {len(straight.order):>5} {a * 1e6:>9.1f}µ {b * 1e6:>9.1f}µ {a / b:>6.2f}", flush=True)
    print(f"geomean program/thunks: {statistics.geometric_mean(ratios):.2f}")


if __name__ == "__main__":
    main()
