"""Saturation: run rulesets on an encoded graph within limits, and report what happened.

``saturate`` sends the rulesets and hands them to a ``Runner`` (egraph/runner.py), which owns
the loop, the ``Limits`` and the ``Report``; its scheduler (egraph/schedule.py) decides which
rules each step runs and how many matches each may apply.
"""

from __future__ import annotations

from eqgraph.egraph.encode import EncodedGraph
from eqgraph.egraph.limits import EXTRACTION_SECONDS_PER_ENODE, Limits, Report, StopReason, enode_count
from eqgraph.egraph.runner import Runner, TypeContradiction
from eqgraph.egraph.sending import send_rules
from eqgraph.rules import ruleset as rs

__all__ = ["DEFAULT_RULESETS", "EXTRACTION_SECONDS_PER_ENODE", "Limits", "Report", "StopReason",
           "TypeContradiction", "enode_count", "load_rulesets", "saturate"]

#: the default schedule, in one place: (ruleset, mode) pairs, analyses ("saturate": run to
#: a fixed point around every rewrite step) and rewrite rulesets ("step": one step each per
#: iteration, in this order). A bare name takes its file's default mode (ruleset.py).
DEFAULT_RULESETS = (("types", "saturate"), ("fold", "saturate"),
                    ("algebra", "step"), ("commute", "step"), ("shapes", "step"), ("reductions", "step"),
                    ("indexing", "step"), ("stability", "step"), ("gradclean", "step"), ("matmul", "step"),
                    ("linalg", "step"), ("ifelse", "step"), ("assertions", "step"))


def load_rulesets(specs) -> list[rs.Ruleset]:
    loaded = [rs.load(s) for s in specs]
    rs.check_unique(loaded)
    return loaded


def saturate(encoded: EncodedGraph, rulesets, limits: Limits = Limits(), time_rules: bool = False,
             sent=()) -> Report:
    """Run ``rulesets`` (names, paths, rule strings or Ruleset objects, each alone or in a
    pair ``(spec, "saturate" | "step")`` giving its mode) on ``encoded``.

    ``time_rules`` runs each rewrite rule on its own (in file order) to measure its
    wall time; the default runs a ruleset's rules together, which is faster.
    ``sent``: the Ruleset objects that ``encoded``'s session already holds (a pooled one).
    """
    loaded = load_rulesets(rulesets)
    for ruleset in loaded:
        if not any(ruleset is held for held in sent):  # a reused session has it
            send_rules(encoded.session, ruleset)
    return Runner(encoded, loaded, limits, time_rules=time_rules).run()
