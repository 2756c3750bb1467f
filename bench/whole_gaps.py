"""The nodes of bench/models.py's compiled programs that the whole Numba function calls in
Python (their op's ``perform``, between Numba segments): per model, the op classes whose
translation is missing or declines the node's types or shapes.

    python bench/whole_gaps.py [--only NAME ...]
"""

from __future__ import annotations

import argparse
import collections

import numpy as np

from eqgraph.exec import numba_program
from eqgraph.terms.basic import Constant
from models import EqgraphNS, model_table


def untranslated(f) -> collections.Counter:
    """Op class name -> how many nodes of ``f``'s program have no translation."""
    program = f.program
    constants = {v: v.data for v in program.fgraph.variables if isinstance(v, Constant)}
    constants.update({v: program.storage_map[v][0] for v in program.folded})
    return collections.Counter(type(node.op).__name__ for node in numba_program.untranslated_nodes(
        program.fgraph, program.order, constants))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*", help="model names (substrings) to list")
    args = parser.parse_args()
    lib = EqgraphNS()
    for model, (fn, params, data) in model_table(np.random.default_rng(0)).items():
        if args.only and not any(s.lower() in model.lower() for s in args.only):
            continue
        gaps = untranslated(lib.compile(fn, params, data))
        listed = ", ".join(f"{name} x{count}" for name, count in sorted(gaps.items())) or "none"
        print(f"{model:<26} {listed}", flush=True)


if __name__ == "__main__":
    main()
