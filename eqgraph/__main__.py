"""Command line: ``python -m eqgraph check-rules FILE [--draws N] [--seed S]``.

Checks every rewrite of a rule file for soundness (``eqgraph.check_rules``):
prints the report and exits 0, or prints the counterexample and exits 1.
A file that cannot be read or parsed exits 2.
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
    args = parser.parse_args(argv)

    from eqgraph.rules.check import UnsoundRuleError, check_rules
    from eqgraph.rules.ruleset import RuleFileError

    try:
        print(check_rules(args.file, draws=args.draws, seed=args.seed))
    except UnsoundRuleError as err:
        print(err, file=sys.stderr)
        return 1
    except (RuleFileError, OSError) as err:
        print(f"{type(err).__name__}: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
