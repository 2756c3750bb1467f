"""The calls of a model while its Numba forms compile in the background, with nothing on disk
(a fresh kernel cache): how many ran, their median, mean and slowest time, against the same
number of calls of a function that compiles nothing; through the compile server (a child
process) or on the worker thread itself (``--on thread``: Numba's typing then holds the GIL).

    OPENBLAS_NUM_THREADS=1 python bench/background_compile.py [--model "eight schools"] [--on server|thread]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np

import eqgraph as eg
import models
from eqgraph.exec.numba import background as numba_compile


def timed_calls(f, values, until) -> np.ndarray:
    times = []
    while not until(len(times)):
        start = time.perf_counter()
        f(*values)
        times.append(time.perf_counter() - start)
    return np.array(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="eight schools")
    parser.add_argument("--on", choices=("server", "thread"), default="server")
    args = parser.parse_args()
    os.environ["EQGRAPH_KERNEL_CACHE"] = tempfile.mkdtemp()   # nothing on disk: a real compile
    if args.on == "thread":
        numba_compile._Worker._compile_in_server = lambda self, sources: {}
    fn, params, data = models.model_table(np.random.default_rng(0))[args.model]
    lib = models.EqgraphNS()
    values = [np.asarray(v, dtype=np.float64) for _, v in params]
    with eg.config.change_flags(compile="deferred"):
        numpy_only = lib.compile(fn, params, data)
    f = lib.compile(fn, params, data)
    start = time.perf_counter()
    during = timed_calls(f, values, lambda n: f.wait_compiled(0))
    wall = time.perf_counter() - start
    idle = timed_calls(numpy_only, values, lambda n: n == len(during))
    f(*values)
    print(f"{args.model}, compiled on the {args.on}: {wall:.1f} s, {len(during)} calls meanwhile; us per call "
          f"(compiling / idle): median {np.median(during) * 1e6:.1f} / {np.median(idle) * 1e6:.1f}, mean "
          f"{during.mean() * 1e6:.1f} / {idle.mean() * 1e6:.1f}, slowest {during.max() * 1e6:.0f} / "
          f"{idle.max() * 1e6:.0f}; then {f.stages.tier}")


if __name__ == "__main__":
    main()
