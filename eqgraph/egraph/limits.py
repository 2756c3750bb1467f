"""What bounds saturation (``Limits``), why it stopped (``StopReason``) and what it did (``Report``)."""

from __future__ import annotations

import enum
import functools
import math
import numbers
import re
from collections import defaultdict
from dataclasses import dataclass, field

from eqgraph.egraph.schema import BASE_CONSTRUCTORS

#: what snapshotting an e-graph and extraction's cheapest-first pass (which always runs)
#: cost per e-node, reserved out of Limits.seconds; set from the largest e-graphs of the
#: explosive test ruleset on a slow, loaded machine, so that it errs long
EXTRACTION_SECONDS_PER_ENODE = 45e-6


@dataclass(frozen=True)
class Limits:
    """Bounds on saturation: iterations, e-nodes and wall-clock seconds.

    ``nodes``: the e-graph never holds more term e-nodes, at any moment (a rule is
    banned for a step rather than let it overshoot). ``seconds`` bounds saturation
    and extraction's search for a cheaper graph together. ``match_limit`` caps how
    many matches one rule may apply per iteration (egglog's back-off scheduler bans
    a rule that exceeds it); by default it is twice the size of the encoded graph,
    so only explosive rules hit it.
    """

    iterations: int = 12
    nodes: int = 100_000
    seconds: float = 10.0
    match_limit: int | None = None

    def __post_init__(self):
        # checked here, where the user wrote them: a NaN or negative limit would let saturation
        # run as if there were none, or fail later with a message that named no argument
        set_field = functools.partial(object.__setattr__, self)  # the dataclass is frozen
        set_field("iterations", _count("iterations", self.iterations, "an integer >= 0", least=0))
        set_field("nodes", _count("nodes", self.nodes, "an integer >= 0", least=0))
        if self.match_limit is not None:
            expected = "None (twice the encoded graph's size) or an integer >= 1"
            set_field("match_limit", _count("match_limit", self.match_limit, expected, least=1))
        set_field("seconds", _seconds(self.seconds))

    def default_match_limit(self, encoded_size: int) -> int:
        """``match_limit``, or its default for an encoded graph of ``encoded_size`` e-nodes."""
        return self.match_limit or max(1000, 2 * encoded_size)


def _count(name: str, value, expected: str, least: int) -> int:
    """``value`` as a Python int of at least ``least``; else an error naming ``Limits.name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"Limits.{name} must be {expected}, not {_shown(value)}")
    if value < least:
        raise ValueError(f"Limits.{name} must be {expected}, not {value!r}")
    return int(value)


def _seconds(value) -> float:
    expected = "a finite number of seconds >= 0"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"Limits.seconds must be {expected}, not {_shown(value)}")
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"Limits.seconds must be {expected}, not {value!r}")
    return float(value)


def _shown(value) -> str:
    return f"{value!r} ({type(value).__name__})"


class StopReason(enum.StrEnum):
    """Why saturation stopped; each compares equal to its name as a string."""

    SATURATED = "saturated"     # a fixed point
    BANNED = "banned"           # nothing grew, as every rule that matched had more matches than match_limit
    NODES = "nodes"             # nothing more fits in Limits.nodes
    ITERATIONS = "iterations"   # Limits.iterations ran
    SECONDS = "seconds"         # no time left for another iteration, or for extracting a larger e-graph


@dataclass
class Report:
    """Why saturation stopped, how the e-graph grew, and what each rule did."""

    stop_reason: StopReason = StopReason.SATURATED
    sizes: list[int] = field(default_factory=list)          # e-nodes initially and after each iteration
    matches: dict[str, int] = field(default_factory=lambda: defaultdict(int))   # rule -> matches
    egglog_seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))  # egglog's, per rule
    ruleset_seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))  # wall clock
    rule_seconds: dict[str, float] = field(default_factory=dict)    # wall clock per rule, when profiled
    rules: dict = field(default_factory=dict)                # name -> Rule
    #: the most e-nodes the e-graph held after any step, the analyses' steps included
    #: (``sizes`` holds them at the ends of iterations only)
    peak: int = 0
    seconds: float = 0.0

    @property
    def iterations(self) -> int:
        return max(len(self.sizes) - 1, 0)

    def fired(self) -> dict[str, int]:
        """Rules with at least one match, most matches first."""
        return dict(sorted(((k, v) for k, v in self.matches.items() if v), key=lambda kv: -kv[1]))

    def assumed(self) -> dict[str, int]:
        """The rules that fired only because the compile granted their ``:assumes`` (``assume_finite``)."""
        return {k: v for k, v in self.fired().items() if getattr(self.rules.get(k), "assumes", None)}

    def add_run(self, run_report, label: str, seconds: float) -> None:
        """Count what one egglog run of ruleset ``label`` did, in ``seconds`` of wall clock."""
        self.ruleset_seconds[label] += seconds
        for name, count in run_report.num_matches_per_rule.items():
            self.matches[rule_name(name)] += count
        for name, delta in run_report.search_and_apply_time_per_rule.items():
            self.egglog_seconds[rule_name(name)] += delta.total_seconds()

    def __str__(self):
        lines = [f"saturation stopped: {self.stop_reason} after {self.iterations} iterations, "
                 f"{self.seconds:.3f} s; e-nodes per iteration: {self.sizes}, at most {self.peak}"]
        lines += self._rule_lines()
        if self.assumed():
            lines.append(f"  assuming finite values (assume_finite): {', '.join(self.assumed())}")
        # egglog's per-rule times leave out most of the work (rebuilding, merging): the wall
        # clock per ruleset is the number to trust
        for name, secs in sorted(self.ruleset_seconds.items(), key=lambda kv: -kv[1]):
            lines.append(f"  ruleset {name}: {secs:.4f} s wall")
        return "\n".join(lines)

    def _rule_lines(self) -> list[str]:
        timed = "wall ms" if self.rule_seconds else "egglog ms"
        seconds = self.rule_seconds or self.egglog_seconds
        lines = [f"  {'matches':>7}  {timed:>9}  rule"]
        for name, count in self.fired().items():
            rule = self.rules.get(name)
            where = f"  {rule.source[0]}:{rule.source[1]}" if rule else ""
            lines.append(f"  {count:>7}  {1e3 * seconds.get(name, 0.0):>9.3f}  {name}{where}")
        return lines


@functools.lru_cache(maxsize=8192)  # every compile reads the same few hundred names from egglog
def rule_name(egglog_name: str) -> str:
    """egglog reports the two directions of a birewrite as "name=>" and "name<="; a rule
    sent again with other operand orders is "name~k" (rules/ruleset.py ``operand_orders``)."""
    egglog_name = written(egglog_name)
    return egglog_name[:-2] if egglog_name.endswith(("=>", "<=")) else egglog_name


@functools.lru_cache(maxsize=8192)
def written(egglog_name: str) -> str:
    """The rule (or birewrite direction) that ``egglog_name`` was sent for."""
    return re.sub(r"~\d+$", "", egglog_name)


def enode_count(sizes: dict[str, int], constructors) -> int:
    """Term e-nodes, what ``Limits.nodes`` counts: rows of the tensor constructors (not of
    analyses or relations)."""
    return sum(n for name, n in sizes.items() if name in constructors or name in BASE_CONSTRUCTORS)
