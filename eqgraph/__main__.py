"""Command line.

``python -m eqgraph check-rules FILE [--draws N] [--seed S]`` checks every rewrite of a
rule file for soundness (``eqgraph.check_rules``): prints the report and exits 0, or prints
the counterexample and exits 1. A file that cannot be read or parsed exits 2.

``python -m eqgraph explore SCRIPT.py:FUNCTION [-o PAGE.html] [--open]`` runs the script,
calls FUNCTION with no arguments, and writes the e-graph explorer page of what it returns:
a compiled function (``eqgraph.function(...)``: its e-graph) or a graph (a variable or a
list of them: the e-graph ``eqgraph.rewrite`` would extract from). Prints the page's path;
a script, function or result it cannot use exits 2.
"""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eqgraph")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check-rules", help="check a rule file's rewrites on random inputs")
    check.add_argument("file", help="a .egg rule file")
    check.add_argument("--draws", type=int, default=100, help="bindings tried per rule and direction (100)")
    check.add_argument("--seed", type=int, default=0, help="seed of the random draws (0)")
    explore = commands.add_parser("explore", help="write the e-graph explorer page of a function in a script")
    explore.add_argument("target", help="SCRIPT.py:FUNCTION, a function of no arguments returning an "
                                        "eqgraph.function or a graph (a variable or a list of them)")
    explore.add_argument("-o", "--output", help="where to write the page (default: a temporary file)")
    explore.add_argument("--open", action="store_true", help="open the page in a web browser")
    args = parser.parse_args(argv)
    if args.command == "explore":
        return _explore(args)

    from eqgraph.soundness import UnsoundRuleError, check_rules
    from eqgraph.rules.forms import RuleFileError

    try:
        print(check_rules(args.file, draws=args.draws, seed=args.seed))
    except UnsoundRuleError as err:
        print(err, file=sys.stderr)
        return 1
    except (RuleFileError, OSError) as err:
        print(f"{type(err).__name__}: {err}", file=sys.stderr)
        return 2
    return 0


def _explore(args) -> int:
    from eqgraph.explore.script import ScriptError, explore_target

    try:
        page = explore_target(args.target, args.output)
    except ScriptError as err:
        print(f"explore: {err}", file=sys.stderr)
        return 2
    print(page.path)
    if args.open and not page.open():
        print("explore: no web browser to open the page with", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
