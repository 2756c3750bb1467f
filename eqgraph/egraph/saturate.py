"""Saturation: run rulesets on an encoded graph within limits, and report what happened.

One iteration = the analysis rulesets to a fixed point, then one step of each
rewrite ruleset (each followed by the analyses again).  eqgraph enforces the
limits itself (DESIGN decision 5): egglog checks sizes only between
iterations, and one iteration of an explosive ruleset can grow the e-graph
tenfold.  So before each step the match limit is lowered until the most the
step can add (matches times the e-nodes each rule's right-hand side builds)
fits in the room left: the e-graph never holds more than ``Limits.nodes``
term e-nodes, at any moment, and ``Report.sizes`` is what it holds. The analyses
are bounded too: one that builds e-nodes (fold.egg's scalars) reaches its fixed
point in steps bounded the same way, as its fixed point may not exist; one that
only fills analysis tables (types.egg) adds no e-node, and runs to egglog's own.

A step runs its rules in one of two ways:
- plain: egglog's own ``run``, which searches only what changed since the rule last
  ran. Only for rules whose table sizes prove that they cannot pass the match limit
  and that, all matches applied, they fit in the room left (rules/bounds.py);
- back-off: a fresh back-off scheduler with the lowered match limit. It rebuilds and
  re-runs every rule's search over the whole e-graph (8 ms a step on a 150-node
  e-graph, against 0.06 ms plain), so it is kept for the rules the bound cannot clear.
"""

from __future__ import annotations

import functools
import hashlib
import math
import numbers
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field

from eqgraph.egraph.adapter import EgglogPanic
from eqgraph.egraph.encode import EncodedGraph
from eqgraph.egraph.schema import BASE_CONSTRUCTORS
from eqgraph.egraph.snapshot import EGraphData
from eqgraph.rules import bounds
from eqgraph.rules import ruleset as rs

#: the default schedule, in one place: (ruleset, mode) pairs, analyses ("saturate": run to
#: a fixed point around every rewrite step) and rewrite rulesets ("step": one step each per
#: iteration, in this order). A bare name takes its file's default mode (ruleset.py).
DEFAULT_RULESETS = (("types", "saturate"), ("fold", "saturate"),
                    ("algebra", "step"), ("commute", "step"), ("shapes", "step"), ("reductions", "step"),
                    ("indexing", "step"), ("stability", "step"), ("gradclean", "step"), ("matmul", "step"),
                    ("linalg", "step"), ("ifelse", "step"), ("assertions", "step"))

#: what snapshotting an e-graph and extraction's cheapest-first pass (which always runs)
#: cost per e-node, reserved out of Limits.seconds: measured 2.2 s for 50k e-nodes of the
#: explosive test ruleset on a shared 2-core machine
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
        # checked here, where the user wrote them: a NaN or negative limit let saturation run
        # as if there were none, or failed later with a message that named no argument
        set_field = functools.partial(object.__setattr__, self)  # the dataclass is frozen
        set_field("iterations", _count("iterations", self.iterations, "an integer >= 0", least=0))
        set_field("nodes", _count("nodes", self.nodes, "an integer >= 0", least=0))
        if self.match_limit is not None:
            expected = "None (twice the encoded graph's size) or an integer >= 1"
            set_field("match_limit", _count("match_limit", self.match_limit, expected, least=1))
        expected = "a finite number of seconds >= 0"
        if isinstance(self.seconds, bool) or not isinstance(self.seconds, numbers.Real):
            raise TypeError(f"Limits.seconds must be {expected}, not {_shown(self.seconds)}")
        if not (math.isfinite(self.seconds) and self.seconds >= 0):
            raise ValueError(f"Limits.seconds must be {expected}, not {self.seconds!r}")
        set_field("seconds", float(self.seconds))


def _count(name: str, value, expected: str, least: int) -> int:
    """``value`` as a Python int of at least ``least``; else an error naming ``Limits.name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"Limits.{name} must be {expected}, not {_shown(value)}")
    if value < least:
        raise ValueError(f"Limits.{name} must be {expected}, not {value!r}")
    return int(value)


def _shown(value) -> str:
    return f"{value!r} ({type(value).__name__})"


@dataclass
class Report:
    """Why saturation stopped, how the e-graph grew, and what each rule did."""

    #: saturated: a fixed point | banned: nothing grew, as every rule that matched had more
    #: matches than ``match_limit`` | nodes: nothing more fits in ``Limits.nodes`` | iterations |
    #: seconds: no time left for another iteration, or for extracting a larger e-graph
    stop_reason: str = "saturated"
    sizes: list[int] = field(default_factory=list)          # e-nodes initially and after each iteration
    matches: dict[str, int] = field(default_factory=lambda: defaultdict(int))   # rule -> matches
    egglog_seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))  # rule -> egglog's time
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

    def __str__(self):
        lines = [f"saturation stopped: {self.stop_reason} after {self.iterations} iterations, "
                 f"{self.seconds:.3f} s; e-nodes per iteration: {self.sizes}, at most {self.peak}"]
        timed = "wall ms" if self.rule_seconds else "egglog ms"
        seconds = self.rule_seconds or self.egglog_seconds
        lines.append(f"  {'matches':>7}  {timed:>9}  rule")
        for name, count in self.fired().items():
            rule = self.rules.get(name)
            where = f"  {rule.source[0]}:{rule.source[1]}" if rule else ""
            lines.append(f"  {count:>7}  {1e3 * seconds.get(name, 0.0):>9.3f}  {name}{where}")
        if self.assumed():
            lines.append(f"  assuming finite values (assume_finite): {', '.join(self.assumed())}")
        # egglog's per-rule times leave out most of the work (rebuilding, merging): the wall
        # clock per ruleset is the number to trust
        for name, secs in sorted(self.ruleset_seconds.items(), key=lambda kv: -kv[1]):
            lines.append(f"  ruleset {name}: {secs:.4f} s wall")
        return "\n".join(lines)


class TypeContradiction(TypeError):
    """A rewrite merged terms whose static types cannot both hold."""


@functools.lru_cache(maxsize=8192)  # a compile reads ~500 names from egglog's reports
def _rule_name(egglog_name: str) -> str:
    """egglog reports the two directions of a birewrite as "name=>" and "name<="; a rule
    sent again with other operand orders is "name~k" (rules/ruleset.py ``operand_orders``)."""
    egglog_name = _written(egglog_name)
    return egglog_name[:-2] if egglog_name.endswith(("=>", "<=")) else egglog_name


@functools.lru_cache(maxsize=8192)
def _written(egglog_name: str) -> str:
    """The rule (or birewrite direction) that ``egglog_name`` was sent for."""
    return re.sub(r"~\d+$", "", egglog_name)


def enode_count(sizes: dict[str, int], constructors) -> int:
    """Term e-nodes: rows of the tensor constructors (not of analyses or relations)."""
    return sum(n for name, n in sizes.items() if name in constructors or name in BASE_CONSTRUCTORS)


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
    session, report = encoded.session, Report()
    loaded = load_rulesets(rulesets)
    for ruleset in loaded:
        if not any(ruleset is held for held in sent):  # a reused session has it
            rs.send(session, ruleset)
        report.rules.update((r.name, r) for r in ruleset.rules)
    analyses = [r for r in loaded if r.mode == "saturate"]
    # (ruleset reported, [(its one-rule ruleset, the rule)], whether each rule is timed alone)
    prepared = {r.name: _prepared(r) for r in loaded if r.mode == "step"}
    steps = [(name, p.pairs, False) for name, p in prepared.items()]
    if time_rules:
        steps = [(name, [pair], True) for name, p in prepared.items() for pair in p.pairs]
        report.rule_seconds = defaultdict(float)
    start = time.perf_counter()

    def run(schedule: str, label: str):
        t = time.perf_counter()
        try:
            run_report = session.run_schedule(schedule)
        except EgglogPanic as err:  # say which rules were running (file names, as no rule is known)
            sources = sorted({r.source for r in loaded if r.name in schedule})
            raise EgglogPanic(f"{err} while running ruleset {label} ({', '.join(sources)})") from err
        report.ruleset_seconds[label] += time.perf_counter() - t
        for name, count in run_report.num_matches_per_rule.items():
            report.matches[_rule_name(name)] += count
        for name, delta in run_report.search_and_apply_time_per_rule.items():
            report.egglog_seconds[_rule_name(name)] += delta.total_seconds()
        return run_report

    def analyse() -> tuple[bool, bool, str | None]:
        """Each analysis to its fixed point: (changed, a rule was banned, the budget that held
        one back). An analysis that builds no e-node only fills tables keyed by the e-classes
        there are, so egglog's own fixed point ends within the node limit; one that builds
        e-nodes (fold's scalars) may not end at all, and runs in bounded steps."""
        changed, banned, held_back = False, False, None
        for analysis in analyses:
            if analysis.max_new_nodes:
                more, was_banned, held = bounded_fixpoint(analysis)
                changed, banned, held_back = changed or more, banned or was_banned, held or held_back
            else:
                changed |= run(f"(saturate (run {analysis.name}))", analysis.name).updated
        return changed, banned, held_back

    def bounded_fixpoint(analysis: rs.Ruleset) -> tuple[bool, bool, str | None]:
        """Run ``analysis`` one step at a time until a step changes nothing, each step kept
        within the node cap and match limit as a rewrite step is: its fixed point has no match
        limit, and fold's multiplied every pair of the scalars that inexact rewrites had put in
        one e-class, doubling them each round (1.0 and 1e8 * 1e-8 gave 13,000 scalars in 13
        rounds, then egglog's allocator aborted the process)."""
        name, changed = analysis.name, False
        swapped = analysis.swapped_ops()
        while True:
            sizes, size = measure()
            cap, budget = capacity()
            most, nodes = zip(*[bounds.most_matches_and_nodes(rule, swapped, sizes) for rule in analysis.rules])
            if max(most) <= match_limit and sum(nodes) <= cap - size:
                step_changed, banned, held = run(f"(run {name})", name).updated, False, False
            else:
                step_changed, banned, held = bounded_step(name, name, analysis.rules, size, cap)
            if not step_changed or banned or held:  # the caller measures the e-graph it left
                return changed or step_changed, banned, budget if held else None
            changed = True

    def checked(label: str) -> tuple[dict[str, int], int]:
        """``measure``, raising TypeContradiction if ``label``'s rules merged terms of
        different static types."""
        sizes = _check_types(encoded, report, label)
        size = enode_count(sizes, encoded.schema.by_name)
        report.peak = max(report.peak, size)
        return sizes, size

    def measure() -> tuple[dict[str, int], int]:
        """(the e-graph's table sizes, the term e-nodes it holds), kept as the report's peak."""
        sizes = session.sizes()
        size = enode_count(sizes, encoded.schema.by_name)
        report.peak = max(report.peak, size)
        return sizes, size

    def capacity() -> tuple[int, str]:
        """(the most e-nodes the e-graph may hold now, the budget that sets it). Limits.seconds
        covers extraction, whose first pass cannot be cut short and takes time in proportion
        to the e-nodes: the time left caps them too."""
        affordable = (limits.seconds - (time.perf_counter() - start)) / EXTRACTION_SECONDS_PER_ENODE
        return (limits.nodes, "nodes") if limits.nodes <= affordable else (int(affordable), "seconds")

    def run_step(step: str, label: str, limit: int) -> tuple[bool, dict[str, int]]:
        """One back-off step: (whether it changed the e-graph, matches found per rule)."""
        scheduler = f"(let-scheduler bo (back-off :match-limit {limit}))"
        return _changed_and_matches(run(f"{scheduler} (repeat 1 (run-with bo {step}))", label))

    def bounded_step(step: str, label: str, rules: list, size: int, cap: int) -> tuple[bool, bool, bool]:
        """Run one step keeping the e-graph within ``cap`` e-nodes: (changed, a rule was
        banned, the cap held a rule back). The cap is enforced before egglog runs (egglog
        checks sizes only between iterations: 1.85x the budget was measured at 10k
        e-nodes, 4x at 100k): a rule with more matches than the limit is banned for the
        step (back-off), so the limit is lowered until the most the step can add fits."""
        new_per_match = sum(rule.max_new_nodes for rule in rules)
        room = cap - size
        worst_case_fits = new_per_match * match_limit <= room
        limit = match_limit if worst_case_fits else room // max(new_per_match, 1)
        changed, ran = False, 0  # ran: the limit a run of this step already applied
        if worst_case_fits or step not in count_first:
            changed, found = run_step(step, label, limit) if limit > 0 else (False, {})
            ran = limit
            over = any(n > limit for n in found.values())
            if worst_case_fits or (limit > 0 and not over):
                return changed, over, False
            # every step searches the whole e-graph (a fresh scheduler), so a step whose
            # lowered limit banned a rule once counts first from now on: one search fewer
            # (gradclean's relation rules, 4,001 matches and no e-node, on the compile_time chain)
            count_first.add(step)
        # the worst-case bound banned a rule: count each rule's matches now (with limit 0,
        # egglog searches, bans every rule and applies nothing), then let in the rules
        # whose matches fit in the room left, fewest matches first
        _, found = run_step(step, label, 0)
        room = cap - enode_count(session.sizes(), encoded.schema.by_name)
        new_nodes = {name: n for rule in rules for name, n in rule.new_nodes_per_match().items()}
        fitted = _fitting_match_limit(found, new_nodes, room, match_limit)
        if fitted > ran:
            more, _ = run_step(step, label, fitted)
            changed |= more
        budget_bans = any(fitted < n <= match_limit for n in found.values())
        return changed, budget_bans or any(n > match_limit for n in found.values()), budget_bans

    count_first: set[str] = set()  # steps that count their matches before running (bounded_step)
    match_limit = limits.match_limit or max(1000, 2 * measure()[1])  # for the analyses of the encoded graph
    # an analysis held back already stops the first iteration that changes nothing
    carried = analyse()[1:]
    sizes, size = checked("the encoded graph")
    report.sizes.append(size)
    match_limit = limits.match_limit or max(1000, 2 * size)
    growth, last_seconds = 2.0, 0.0
    empty_in, empty = None, frozenset()  # the tables with no row, and the sizes they were read from
    report.stop_reason = "iterations"
    for _ in range(limits.iterations):
        elapsed = time.perf_counter() - start
        # an iteration's time grows with the matches, which grow faster than the e-graph
        if elapsed + last_seconds * growth * growth + EXTRACTION_SECONDS_PER_ENODE * size > limits.seconds:
            report.stop_reason = "seconds"
            break
        t = time.perf_counter()
        changed, (banned, held_back), carried = False, carried, (False, None)  # held back: by which budget
        for ruleset_name, rules, timed in steps:
            if sizes is not empty_in:  # the tables changed since ``empty`` was read off them
                empty_in, empty = sizes, frozenset(name for name, rows in sizes.items() if not rows)
            # a rule whose query names a constructor with no e-node cannot match: leave it out
            # of the step (a back-off step searches the whole e-graph for every rule it runs);
            # profiling times every rule
            alive = rules if timed else prepared[ruleset_name].may_match(empty)
            if not alive:
                continue
            rule_name = alive[0][1].name if timed else None
            started = time.perf_counter()
            cap, budget = capacity()
            # the rules whose table sizes prove they stay within the limits run as egglog's
            # plain step, which searches only what changed since they last ran; the others
            # run as a back-off step, which searches the whole e-graph (rules/bounds.py)
            plain, searched = _split_by_bound(alive, prepared[ruleset_name].swapped, sizes, cap - size, match_limit)
            for part in (plain, searched):
                if not part:
                    continue
                step = _ruleset_of(session, ruleset_name, part, len(prepared[ruleset_name].pairs))
                if part is plain:
                    step_changed, step_banned, step_held_back = run(f"(run {step})", ruleset_name).updated, False, False
                else:
                    step_changed, step_banned, step_held_back = bounded_step(step, ruleset_name,
                                                                             [rule for _, rule in part], size, cap)
                changed |= step_changed
                banned |= step_banned
                held_back = budget if step_held_back else held_back
                if step_changed:  # else the analyses are still at their fixed point: nothing to run
                    analysed, analysis_banned, analysis_held_back = analyse()
                    changed |= analysed
                    banned |= analysis_banned
                    held_back = analysis_held_back or held_back
                    sizes, size = checked(rule_name or ruleset_name)
            if rule_name is not None:
                report.rule_seconds[rule_name] += time.perf_counter() - started
        last_seconds = time.perf_counter() - t
        growth = max(size / max(report.sizes[-1], 1), 1.0)
        report.sizes.append(size)
        if not changed:  # a fixed point, unless rules were banned (too many matches)
            report.stop_reason = held_back or ("banned" if banned else "saturated")
            break
    report.seconds = time.perf_counter() - start
    return report


@dataclass
class _Prepared:
    """What saturation reads off a rewrite ruleset: the same for every compile (read off 600
    rules each time, and ``may_match`` asked 600 times, it took 2 ms a compile)."""

    ruleset: rs.Ruleset    # kept, so that its id (the key of ``_PREPARED``) is not reused
    pairs: list            # [(its one-rule ruleset, the rule)]
    swapped: tuple         # the operand orders its rules are sent in (``Ruleset.swapped_ops``)
    alive: dict = field(default_factory=dict)   # tables with no row -> the pairs that may match

    def may_match(self, empty: frozenset) -> list:
        """The pairs whose query may match with the tables ``empty`` holding no row
        (``Rule.may_match``): compiles meet the same few sets of empty tables again."""
        if empty not in self.alive:
            if len(self.alive) > 256:
                self.alive.clear()
            self.alive[empty] = [pair for pair in self.pairs if pair[1].may_match(empty)]
        return self.alive[empty]


_PREPARED: dict[int, _Prepared] = {}   # id(Ruleset) -> what it prepared


def _prepared(ruleset: rs.Ruleset) -> _Prepared:
    held = _PREPARED.get(id(ruleset))
    if held is None or held.ruleset is not ruleset:
        held = _PREPARED[id(ruleset)] = _Prepared(ruleset, list(zip(ruleset.rule_rulesets(), ruleset.rules)),
                                                  ruleset.swapped_ops())
    return held


def _ruleset_of(session, ruleset: str, alive: list, n_rules: int) -> str:
    """The egglog ruleset that runs just the rules ``alive`` ((one-rule ruleset, rule) pairs
    of ``ruleset``, which has ``n_rules``): the ruleset itself when all are, one rule's own
    ruleset, or their union, declared once per session (a pooled session forgets it when the
    compile's snapshot is popped). The union's name is made from its rules: egglog keeps a
    report per ruleset name for good, and a pooled session cloned a longer one on every
    compile while each compile named its unions anew."""
    if len(alive) == n_rules:
        return ruleset
    if len(alive) == 1:
        return alive[0][0]
    key = " ".join(step for step, _ in alive)
    name = f"{ruleset}__some_{hashlib.blake2b(key.encode(), digest_size=8).hexdigest()}"
    session.declare_once(name, f"(unstable-combined-ruleset {name} {key})")
    return name


def _split_by_bound(alive: list, swapped_ops: tuple, sizes: dict[str, int], room: int, match_limit: int):
    """(the (ruleset, rule) pairs of ``alive`` that a plain egglog step may run, the rest).

    A plain step applies every match it finds. It may run the rules that the e-graph's
    ``sizes`` prove can have at most ``match_limit`` matches each (none would be banned) and
    whose e-nodes, all matches applied, fit in ``room`` together (rules/bounds.py)."""
    plain, rest, added = [], [], 0
    for pair in alive:
        most, nodes = bounds.most_matches_and_nodes(pair[1], swapped_ops, sizes)
        if most <= match_limit and added + nodes <= room:
            plain.append(pair)
            added += nodes
        else:
            rest.append(pair)
    return plain, rest


def _changed_and_matches(run_report) -> tuple[bool, dict[str, int]]:
    """(whether a back-off step changed the e-graph, the matches each rule found).

    Its ``updated`` will not do: egglog says "updated" while any rule is banned (so
    that a plain run goes on) and leaves banned rules out of ``num_matches_per_rule``;
    the per-iteration reports hold both facts (a rule found more matches than the
    limit: it was banned)."""
    changed, found = False, {}
    for iteration in run_report.iterations:
        rules = iteration.rule_set_report
        changed |= rules.changed
        for name, reports in rules.rule_reports.items():
            found[name] = max([found.get(name, 0)] + [r.num_matches for r in reports])
    return changed, found


def _fitting_match_limit(found: dict[str, int], new_nodes: dict[str, int], room: int, match_limit: int) -> int:
    """The largest match limit (at most ``match_limit``) under which the rules it lets
    through, ``found[rule]`` matches each adding ``new_nodes[rule]`` e-nodes, fit in ``room``."""
    added: dict[int, int] = defaultdict(int)  # match count -> e-nodes the rules with that count add
    for rule, n in found.items():  # a rule sent in another operand order adds what the rule does
        added[n] += n * new_nodes.get(_written(rule), max(new_nodes.values(), default=1))
    limit, used = 0, 0
    for n in sorted(added):
        used += added[n]
        if n > match_limit or used > room:
            break
        limit = n
    return limit


def _check_types(encoded: EncodedGraph, report: Report, label: str) -> dict[str, int]:
    """The e-graph's table sizes; raise TypeContradiction if a union left an e-class with no
    possible dtype or size."""
    sizes = encoded.session.sizes()
    if not sizes.get("type-error"):
        return sizes
    data = EGraphData(encoded)
    errors = data.type_errors()
    culprits = [r for r, n in report.matches.items() if n and not r.startswith(("types", "fold"))]
    eclass, axis = errors[0]
    if axis == -3:
        problem = ("is an elementwise term whose operands differ in number of dimensions (make_node "
                   "pads them to one): a rule built a term no graph can hold")
    else:
        what = {-1: "dtype", -2: "number of dimensions"}.get(axis, f"size of axis {axis}")
        problem = f"has no possible {what}: terms of different static types were merged"
    raise TypeContradiction(
        f"e-class {eclass} ({data.describe_class(eclass)}) {problem} while running ruleset {label!r}. "
        f"Rules that matched so far: {', '.join(culprits) or 'none'}")
