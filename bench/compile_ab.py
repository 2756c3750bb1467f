"""Compile time of this tree against another git revision, measured in one interleaved run.

    python bench/compile_ab.py [--base 1c38533] [--rounds 3] [--cases elementwise10 logreg_grad ...]

The base revision is checked out into a temporary ``git worktree``. Every round runs each case
once per tree, alternating base and head, each in a fresh Python process whose PYTHONPATH is
that tree, so both see the same machine load. A process imports eqgraph (not timed), builds
the case's graph and times:

- ``first``: its first ``eqgraph.function`` call, which loads, parses and sends the rules;
- ``second``: a second compile of the same graph, built anew, in the same process.

Times are the process's CPU seconds (``time.process_time``): on a shared machine wall time
mostly measures the other processes' load. Numba is off in both (``EQGRAPH_NUMBA=0``) unless
``--numba``: its background compile would be counted as the compile's CPU. The on-disk graph
cache is off in both (``EQGRAPH_GRAPH_CACHE=""``), so every compile saturates.
Prints the median of each over the rounds and the ratio head / base (below 1: head is faster).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_BASE = "1c38533"  # main just before the op registry was merged (1585376)


def elementwise10(et):
    """A 10-node elementwise graph of two vectors."""
    x, y = et.dvector("x"), et.dvector("y")
    a = et.exp(x) + y
    b = et.tanh(y) * 2.0
    out = (a - b) / (1.0 + x * x) + et.log(1.0 + et.exp(-a))
    return [x, y], [out]


def logreg_grad(et, eg):
    """Logistic regression's loss and its gradient in the weights and the bias."""
    X, y, w, b = et.dmatrix("X"), et.dvector("y"), et.dvector("w"), et.dscalar("b")
    p = 1.0 / (1.0 + et.exp(-(X @ w + b)))
    loss = -(y * et.log(p) + (1.0 - y) * et.log(1.0 - p)).mean()
    return [X, y, w, b], [loss, *eg.grad(loss, [w, b])]


def chain(steps):
    def build(et):
        from compile_time import chain_graph
        x, y = chain_graph(et, steps)
        return [x], [y]
    return build


CASES = {"elementwise10": elementwise10, "logreg_grad": logreg_grad, "chain100": chain(100),
         "chain400": chain(400)}


def child(case: str) -> None:
    """In a fresh process: the first and the second compile of ``case``, as JSON on stdout."""
    import eqgraph as eg
    import eqgraph.tensor as et

    def build():
        maker = CASES[case]
        return maker(et, eg) if maker is logreg_grad else maker(et)

    times = []
    for _ in range(2):
        inputs, outputs = build()
        start = time.process_time()
        eg.function(inputs, outputs)
        times.append(time.process_time() - start)
    print(json.dumps({"file": eg.__file__, "first": times[0], "second": times[1]}))


def run_case(tree: Path, case: str, numba: bool) -> dict:
    # The on-disk graph cache is off: a hit would load the graph an earlier round compiled
    # instead of saturating it, and a base revision without the cache would pay for both.
    env = {**os.environ, "PYTHONPATH": str(tree), "EQGRAPH_NUMBA": "1" if numba else "0",
           "EQGRAPH_GRAPH_CACHE": ""}
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", case], env=env,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"case {case} in {tree} failed:\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if not result["file"].startswith(str(tree)):
        raise RuntimeError(f"case {case} imported {result['file']}, not the tree {tree}")
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default=DEFAULT_BASE, help="the git revision to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--numba", action="store_true", help="leave Numba's background compile on")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child)
    with tempfile.TemporaryDirectory(prefix="eqgraph-ab-") as scratch:
        base = Path(scratch) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), args.base],
                       check=True, capture_output=True)
        try:
            compare(base, args)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=True)


def compare(base: Path, args) -> None:
    trees = {"base": base, "head": ROOT}
    times = {(tree, case, when): [] for tree in trees for case in args.cases for when in ("first", "second")}
    for k in range(args.rounds):
        order = list(trees) if k % 2 == 0 else list(reversed(trees))
        for case in args.cases:
            for tree in order:
                result = run_case(trees[tree], case, args.numba)
                for when in ("first", "second"):
                    times[tree, case, when].append(result[when])
    print(f"base {args.base}, head {ROOT}; medians of {args.rounds} rounds, CPU seconds")
    print(f"{'case':>14} {'compile':>8} {'base':>8} {'head':>8} {'head/base':>10}")
    for case in args.cases:
        for when in ("first", "second"):
            old, new = (statistics.median(times[tree, case, when]) for tree in trees)
            print(f"{case:>14} {when:>8} {old:8.3f} {new:8.3f} {new / old:10.2f}")


if __name__ == "__main__":
    main()
