"""The CPU seconds of compiling each model's whole Numba function (``exec/numba/program.py``) in
a fresh process with empty caches, split into Numba's phases, and the generated source's size.

    OPENBLAS_NUM_THREADS=1 python bench/numba_compile.py [--only NAME ...] [--warm] [--names]

Each model of ``bench/models.py`` (its log-density and gradient) runs in a child process whose
Numba, kernel and graph caches are fresh temporary folders.  The child links the model with
``compile="deferred"`` (nothing compiled yet), compiles one trivial function (Numba's one-time
start-up, reported apart as "init"), then the whole function's module, timing on its own thread:

- typing: Numba's type inference passes, callees' included (each ``@njit`` helper the function
  calls is typed and compiled when the caller's typing reaches it);
- lowering: Numba's lowering to LLVM IR (its own pass time, LLVM's work below excluded);
- llvm opt: LLVM's function and module optimization passes, of the function and of each callee
  (a callee is optimized alone, then again inside its caller once linked in);
- codegen: machine code (MCJIT's ``finalize_object``);
- other: everything else (IR building, rewrites, the disk cache's write).

``callees`` counts the dispatchers compiled, the function included; ``source`` is its module's
size in characters and ``lines``; ``call`` the median microseconds of one call of the compiled
function on the model's values (the function alone, not the caller in front of it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

PHASES = ("typing", "lowering", "llvm opt", "codegen", "other")


class _Clock:
    """Exclusive CPU time of nested phases: time spent inside a nested phase is its own, not its
    parent's."""

    def __init__(self):
        self.stack, self.totals, self.compiling, self.by_function = [], dict.fromkeys(PHASES, 0.0), [], {}

    def start(self, phase: str) -> None:
        now = time.thread_time()
        if self.stack:
            self._add(self.stack[-1][0], now - self.stack[-1][1])
        self.stack.append([phase, now])

    def end(self) -> None:
        now = time.thread_time()
        phase, since = self.stack.pop()
        self._add(phase, now - since)
        if self.stack:
            self.stack[-1][1] = now

    def _add(self, phase: str, seconds: float) -> None:
        self.totals[phase] += seconds
        if self.compiling:   # the dispatcher being compiled, its callees' compiles excluded
            name = self.compiling[-1]
            self.by_function[name] = self.by_function.get(name, 0.0) + seconds


def _pass_phase(name: str) -> str:
    if "type_inference" in name:
        return "typing"
    return "lowering" if "lowering" in name else "other"


def _instrument(clock: _Clock) -> list:
    """Time Numba's passes (its event API) and LLVM's optimization and code generation (wrapped
    methods of Numba's code library); returns the names of the dispatchers compiled, in order."""
    from numba.core import codegen, event

    compiled = []

    class Passes(event.Listener):
        def on_start(self, ev):
            clock.start(_pass_phase(ev.data["name"]))

        def on_end(self, ev):
            clock.end()

    class Compiles(event.Listener):
        def on_start(self, ev):
            compiled.append(ev.data["dispatcher"].py_func.__qualname__)
            clock.start("other")
            clock.compiling.append(compiled[-1])

        def on_end(self, ev):
            clock.end()
            clock.compiling.pop()

    event.register("numba:run_pass", Passes())
    event.register("numba:compile", Compiles())

    def timed(cls, method, phase):
        original = getattr(cls, method)

        def wrapper(*args, **kwargs):
            clock.start(phase)
            try:
                return original(*args, **kwargs)
            finally:
                clock.end()

        setattr(cls, method, wrapper)

    timed(codegen.CPUCodeLibrary, "_optimize_functions", "llvm opt")
    timed(codegen.CPUCodeLibrary, "_optimize_final_module", "llvm opt")
    timed(codegen.JITCodeLibrary, "_finalize_specific", "codegen")
    return compiled


def child(model: str, calls: int, warm: bool) -> dict:
    import models

    import eqgraph as eg
    from eqgraph.exec.numba import kernels as numba_kernels

    fn, params, data = models.model_table(np.random.default_rng(0))[model]
    values = [np.asarray(v, dtype=np.float64) for _, v in params]
    with eg.config.change_flags(compile="deferred"):
        f = models.EqgraphNS().compile(fn, params, data)
    call = f.program.call
    if not hasattr(call, "whole_source"):
        return {"model": model, "error": "no whole function"}
    source = call.whole_source
    clock = _Clock()
    compiled = _instrument(clock)
    start = time.thread_time()
    numba_kernels.numba.njit(lambda x: x + 1)(1.0)   # Numba's one-time start-up
    if warm:   # as the compile server does on its start
        from eqgraph.exec.numba import program as numba_program

        numba_program.warm_up()
    init = time.thread_time() - start
    compiled.clear()
    clock.totals, clock.by_function = dict.fromkeys(PHASES, 0.0), {}
    start = time.thread_time()
    clock.start("other")
    kernel = numba_kernels.load_kernel(source)
    clock.end()
    total = time.thread_time() - start
    args = call.__globals__["passed"]
    arguments = [v[()] if v.ndim == 0 else v for v in values] + list(args)
    kernel(*arguments)
    times = []
    for _ in range(5):
        begin = time.perf_counter()
        for _ in range(calls):
            kernel(*arguments)
        times.append((time.perf_counter() - begin) / calls)
    return {"model": model, "init": init, "total": total, **clock.totals, "callees": len(compiled),
            "names": sorted(clock.by_function.items(), key=lambda item: -item[1]), "source": len(source), "lines": source.count("\n"),
            "call_us": float(np.median(times)) * 1e6}


def run_child(model: str, calls: int, timeout: float, warm: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=f"{tmp}/numba", EQGRAPH_KERNEL_CACHE=f"{tmp}/kernels",
                   EQGRAPH_GRAPH_CACHE=f"{tmp}/graphs", OPENBLAS_NUM_THREADS="1")
        try:
            out = subprocess.run([sys.executable, __file__, "--child", model, "--calls", str(calls), *(["--warm"] if warm else [])],
                                 env=env,
                                 capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"model": model, "error": f"stopped after {timeout:.0f} s (e-graph compile included)"}
    if out.returncode:
        return {"model": model, "error": out.stderr.strip().splitlines()[-1] if out.stderr else "failed"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*", help="model names (substrings) to run")
    parser.add_argument("--calls", type=int, default=2000, help="calls per timing of the compiled function")
    parser.add_argument("--timeout", type=float, default=180, help="seconds each model's process may take")
    parser.add_argument("--warm", action="store_true",
                        help="compile the common helpers first (program.warm_up, as the compile server does; in init)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--names", action="store_true", help="CPU seconds of each dispatcher compiled, its callees' excluded")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))
    if args.child:
        print(json.dumps(child(args.child, args.calls, args.warm)))
        return
    import models

    names = [m for m in models.model_table(np.random.default_rng(0))
             if not args.only or any(s.lower() in m.lower() for s in args.only)]
    print(f"{'CPU s':<26}{'total':>7}" + "".join(f"{p:>10}" for p in PHASES)
          + f"{'init':>7}{'callees':>8}{'source':>8}{'lines':>6}{'call us':>9}")
    for model in names:
        r = run_child(model, args.calls, args.timeout, args.warm)
        if "error" in r:
            print(f"{model:<26} {r['error']}")
            continue
        print(f"{model:<26}{r['total']:>7.2f}" + "".join(f"{r[p]:>10.2f}" for p in PHASES)
              + f"{r['init']:>7.2f}{r['callees']:>8}{r['source']:>8}{r['lines']:>6}{r['call_us']:>9.1f}", flush=True)
        if args.names:
            print(f"{'':<26}{', '.join(f'{n} {t:.2f}' for n, t in r['names'])}")


if __name__ == "__main__":
    main()
