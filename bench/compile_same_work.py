"""Compile time of compile_time.py's chain for the work every eqgraph version does alike:
only the ``types`` ruleset, no fusion, and the time spent generating and compiling the
straight-line program (issue 12's) subtracted. Used to compare with commits older than
fusion and the program, whose ``eqgraph.function`` has no ``fusion`` argument:

    PYTHONPATH=. python bench/compile_same_work.py                   # this checkout
    cd OTHER && PYTHONPATH=. python /path/to/bench/compile_same_work.py  # another one

Best of 5 compiles per size.
"""
import inspect
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import eqgraph as eg  # noqa: E402
import eqgraph.tensor as et  # noqa: E402
from compile_time import chain_graph  # noqa: E402

spent = [0.0]
try:  # the program generation, where this version has one
    import eqgraph.exec.link as link_module

    generate = link_module.straight_line

    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return generate(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - start

    link_module.straight_line = timed
except (ImportError, AttributeError):
    pass
options = {"rulesets": ["types"]}
if "fusion" in inspect.signature(eg.function).parameters:
    options["fusion"] = False
for steps in (400, 1000):
    best = best_without = float("inf")
    for _ in range(5):
        x, y = chain_graph(et, steps)
        spent[0] = 0.0
        start = time.perf_counter()
        eg.function([x], y, **options)
        took = time.perf_counter() - start
        best, best_without = min(best, took), min(best_without, took - spent[0])
    print(f"{5 * steps:6d} nodes  types only, no fusion: {best:.3f} s; "
          f"without the program's generation: {best_without:.3f} s", flush=True)
