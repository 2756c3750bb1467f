"""The runner: rulesets run on an encoded graph, within ``Limits``, with a ``Report``.

One iteration = the analysis rulesets to a fixed point, then one step of each rewrite
ruleset (each followed by the analyses again). The runner owns the loop, the limits, the
stop reason and the report; its scheduler (egraph/schedule.py) decides which rules each
step runs and how many matches each may apply.

eqgraph enforces the limits itself: egglog checks sizes only between iterations, and one
iteration of an explosive ruleset can grow the e-graph tenfold. So every step is given the
room left (``Room``), and the scheduler keeps it within: the e-graph never holds more than
``Limits.nodes`` term e-nodes, at any moment, and ``Report.sizes`` is what it holds. The
analyses are bounded too: one that builds e-nodes (fold.egg's scalars) reaches its fixed
point in steps bounded the same way, as its fixed point may not exist; one that only fills
analysis tables (types.egg) adds no e-node, and runs to egglog's own.
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import NamedTuple

from eqgraph.egraph.adapter import EgglogPanic
from eqgraph.egraph.encode import EncodedGraph
from eqgraph.egraph.limits import EXTRACTION_SECONDS_PER_ENODE, Limits, Report, StopReason, enode_count
from eqgraph.egraph.schedule import BackoffScheduler, BoundScheduler, Outcome, Prepared, Room, prepared, ruleset_of
from eqgraph.egraph.sending import send_deferred
from eqgraph.egraph.snapshot import EGraphData
from eqgraph.rules import ruleset as rs


class TypeContradiction(TypeError):
    """A rewrite merged terms whose static types cannot both hold."""


class _Step(NamedTuple):
    """One rewrite ruleset's step in an iteration: its rules, or (profiling) one rule alone."""

    ruleset: Prepared
    pairs: list     # [(one-rule ruleset, rule)]: the ruleset's own, or the one rule timed
    timed: bool


def _steps(rewrites: list[rs.Ruleset], time_rules: bool) -> list[_Step]:
    steps = []
    for ruleset in map(prepared, rewrites):
        if time_rules:
            steps += [_Step(ruleset, [pair], True) for pair in ruleset.pairs]
        else:
            steps.append(_Step(ruleset, ruleset.pairs, False))
    return steps


class Runner:
    """Runs ``rulesets`` (loaded, already sent to ``encoded``'s session) on ``encoded``; a
    family copy left for later (``Ruleset.deferred``) it sends before the first step that may match it.

    ``scheduler`` plans and runs each step (``BoundScheduler`` by default; one per run, as it
    learns which steps to count first). ``time_rules`` runs each rewrite rule on its own (in
    file order) to measure its wall time; the default runs a ruleset's rules together, which
    is faster."""

    def __init__(self, encoded: EncodedGraph, rulesets: list[rs.Ruleset], limits: Limits,
                 scheduler: BackoffScheduler | None = None, time_rules: bool = False):
        self.encoded, self.session, self.limits = encoded, encoded.session, limits
        self.scheduler = scheduler if scheduler is not None else BoundScheduler()
        self.rulesets = rulesets
        self.report = Report(rules={rule.name: rule for ruleset in rulesets for rule in ruleset.rules})
        if time_rules:
            self.report.rule_seconds = defaultdict(float)
        self.analyses = [r for r in rulesets if r.mode == "saturate"]
        self.steps = _steps([r for r in rulesets if r.mode == "step"], time_rules)
        self.start = time.perf_counter()
        self.match_limit = 0                   # set by ``run``, from the encoded graph's size
        self.sizes, self.size = {}, 0          # the e-graph as last checked
        self._empty_in, self._empty = None, frozenset()   # tables with no row, and the sizes read
        self.built: frozenset = frozenset()    # tables the steps since then may have added rows to

    def run(self) -> Report:
        """Saturate within the limits; the report says why it stopped."""
        self.start = time.perf_counter()
        self.sizes, size = self.measure()
        self.match_limit = self.limits.default_match_limit(size)   # for the first analyses
        # an analysis held back already stops the first iteration that changes nothing
        carried = self.analyse()._replace(changed=False)
        self.sizes, self.size = self.checked("the encoded graph")
        self.built = frozenset()
        self.report.sizes.append(self.size)
        self.match_limit = self.limits.default_match_limit(self.size)
        self.report.stop_reason = self._iterate_until_stopped(carried)
        self.report.seconds = time.perf_counter() - self.start
        return self.report

    def _iterate_until_stopped(self, carried: Outcome) -> StopReason:
        growth, last_seconds = 2.0, 0.0
        for _ in range(self.limits.iterations):
            # an iteration's time grows with the matches, which grow faster than the e-graph
            if self._out_of_time(last_seconds * growth * growth):
                return StopReason.SECONDS
            started = time.perf_counter()
            outcome = carried.then(self.iterate())
            carried = Outcome()
            last_seconds = time.perf_counter() - started
            growth = max(self.size / max(self.report.sizes[-1], 1), 1.0)
            self.report.sizes.append(self.size)
            if not outcome.changed:  # a fixed point, unless rules were banned or held back
                return outcome.held_back or (StopReason.BANNED if outcome.banned else StopReason.SATURATED)
        return StopReason.ITERATIONS

    def _out_of_time(self, next_iteration: float) -> bool:
        """Whether an iteration expected to take ``next_iteration`` seconds, and extracting the
        e-graph as it is, would pass ``Limits.seconds``."""
        elapsed = time.perf_counter() - self.start
        return elapsed + next_iteration + EXTRACTION_SECONDS_PER_ENODE * self.size > self.limits.seconds

    def iterate(self) -> Outcome:
        """One step of each rewrite ruleset (or of each rule, profiling)."""
        outcome = Outcome()
        for step in self.steps:
            started = time.perf_counter()
            outcome = outcome.then(self._step(step))
            if step.timed:
                self.report.rule_seconds[step.pairs[0][1].name] += time.perf_counter() - started
        return outcome

    def _step(self, step: _Step) -> Outcome:
        """One step of ``step``'s rules, as its scheduler plans it, each part followed by the
        analyses (if it changed anything: else they are still at their fixed point)."""
        # a rule whose query names a constructor with no e-node cannot match: left out of the
        # step, as a back-off step searches the whole e-graph for every rule it runs;
        # profiling times every rule
        alive = step.pairs if step.timed else step.ruleset.may_match(self._empty_tables())
        if not alive:
            return Outcome()
        if step.ruleset.deferred:   # most rulesets have no family copies
            send_deferred(self.session, step.ruleset.ruleset, [rule for _, rule in alive if rule in step.ruleset.deferred])
        label = step.pairs[0][1].name if step.timed else step.ruleset.name
        room = Room(self.sizes, self.size, *self.capacity())
        outcome = Outcome()
        for part in self.scheduler.plan(self, step.ruleset, alive, room):
            done = self.scheduler.run(self, part, room._replace(sizes=self.sizes, size=self.size))
            outcome = outcome.then(done)
            if done.changed:
                self.built = self.built.union(*(rule.writes() for rule in part.rules))
                outcome = outcome.then(self.analyse())
                self.sizes, self.size = self.checked(label)
                self.built = frozenset()
        return outcome

    def _empty_tables(self) -> frozenset:
        """The tables that have no row: none in the sizes last read, and none written since."""
        if self.sizes is not self._empty_in:
            self._empty_in = self.sizes
            self._empty = frozenset(name for name, rows in self.sizes.items() if not rows)
        return self._empty - self.built if self.built else self._empty

    def analyse(self) -> Outcome:
        """Each analysis to its fixed point. One that builds no e-node only fills tables keyed
        by the e-classes there are, so egglog's own fixed point ends within the node limit;
        one that builds e-nodes (fold's scalars) may not end at all, and runs in bounded steps."""
        outcome = Outcome()
        for analysis in self.analyses:
            if analysis.max_new_nodes:
                done = self._bounded_fixpoint(analysis)
                if done.changed:   # an analysis after it may meet the e-nodes it built
                    self.built = self.built.union(*(rule.writes() for rule in analysis.rules))
                outcome = outcome.then(done)
            else:
                outcome = outcome.then(self._fixpoint(analysis))
        return outcome

    def _fixpoint(self, analysis: rs.Ruleset) -> Outcome:
        """Run ``analysis``, which builds no e-node, to egglog's fixed point: only its rules whose
        query may match. Every iteration of a run costs something for each rule it holds, and
        most of a type analysis's rules are about ops the graph does not have; an analysis
        builds no e-node, so the constructors with none now have none throughout the run, and
        a table with no row gets rows only from the actions of its rules that may match."""
        held = prepared(analysis)
        alive = held.may_fire(self._empty_tables())
        if not alive:
            return Outcome()
        name = ruleset_of(self.session, held, alive)
        changed = self.run_schedule(f"(saturate (run {name}))", analysis.name).updated
        if changed:   # an analysis after it may read what it wrote
            self.built = self.built.union(*(rule.writes() for _, rule in alive))
        return Outcome(changed)

    def _bounded_fixpoint(self, analysis: rs.Ruleset) -> Outcome:
        """Run ``analysis`` one step at a time until a step changes nothing, each step kept
        within the node cap and match limit as a rewrite step is: its fixed point has no match
        limit and may not exist. Fold multiplies every pair of the scalars that inexact
        rewrites put in one e-class (1.0 and 1e8 * 1e-8), doubling them each round until
        egglog's allocator aborts the process."""
        changed = False
        while True:
            room = Room(*self.measure(), *self.capacity())
            done = self.scheduler.run(self, self.scheduler.plan_analysis(self, analysis, room), room)
            if not done.changed or done.banned or done.held_back:  # the caller measures what it left
                return done._replace(changed=changed or done.changed)
            changed = True

    def run_schedule(self, schedule: str, label: str):
        """Run an egglog ``schedule`` of ruleset ``label``, counted in the report."""
        started = time.perf_counter()
        try:
            run_report = self.session.run_schedule(schedule)
        except EgglogPanic as err:  # say which rules were running (file names, as no rule is known)
            sources = sorted({r.source for r in self.rulesets if r.name in schedule})
            raise EgglogPanic(f"{err} while running ruleset {label} ({', '.join(sources)})") from err
        self.report.add_run(run_report, label, time.perf_counter() - started)
        return run_report

    def measure(self) -> tuple[dict[str, int], int]:
        """(the e-graph's table sizes, the term e-nodes it holds), kept as the report's peak."""
        sizes = self.session.sizes()
        size = enode_count(sizes, self.encoded.schema.by_name)
        self.report.peak = max(self.report.peak, size)
        return sizes, size

    def checked(self, label: str) -> tuple[dict[str, int], int]:
        """``measure``, raising TypeContradiction if ``label``'s rules merged terms of
        different static types."""
        sizes = _check_types(self.encoded, self.report, label)
        size = enode_count(sizes, self.encoded.schema.by_name)
        self.report.peak = max(self.report.peak, size)
        return sizes, size

    def term_enodes(self) -> int:
        """The term e-nodes the e-graph holds now."""
        return enode_count(self.session.sizes(), self.encoded.schema.by_name)

    def capacity(self) -> tuple[int, StopReason]:
        """(the most e-nodes the e-graph may hold now, the budget that sets it). Limits.seconds
        covers extraction, whose first pass cannot be cut short and takes time in proportion
        to the e-nodes: the time left caps them too."""
        affordable = (self.limits.seconds - (time.perf_counter() - self.start)) / EXTRACTION_SECONDS_PER_ENODE
        if self.limits.nodes <= affordable:
            return self.limits.nodes, StopReason.NODES
        return int(affordable), StopReason.SECONDS


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
