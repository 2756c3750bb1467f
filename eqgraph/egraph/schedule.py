"""Schedulers: which rules of a step run, and how many matches each may apply.

A ``Runner`` (egraph/runner.py) owns the loop and the limits; before each step of a ruleset
it asks its scheduler for a plan (``Part``s: rules and how to run them), runs each part
through the scheduler, and hears back an ``Outcome``. Two schedulers:

- ``BackoffScheduler``, the simple one: every part is a fresh egglog back-off scheduler whose
  match limit is lowered until the most the step can add (matches times the e-nodes each
  rule's right-hand side builds) fits in the room left. Safe for any rule, but it rebuilds
  and re-runs every rule's search over the whole e-graph, at a hundred times the cost of
  egglog's plain ``run`` on a small e-graph;
- ``BoundScheduler``, the default: rules whose table sizes prove that they cannot pass the
  match limit and that, all matches applied, fit in the room left (rules/bounds.py) run as
  egglog's plain ``run``, which searches only what changed since the rule last ran; the
  others run as the simple scheduler runs them.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass, field
from typing import NamedTuple

from eqgraph.egraph.limits import StopReason, written
from eqgraph.rules import bounds
from eqgraph.rules import ruleset as rs


class Outcome(NamedTuple):
    """What a step did: whether it changed the e-graph, whether a rule was banned (more
    matches than the match limit), and the budget that held a rule back, if one did."""

    changed: bool = False
    banned: bool = False
    held_back: StopReason | None = None

    def then(self, later: Outcome) -> Outcome:
        """This outcome followed by ``later``'s: the latest budget to hold a rule back wins."""
        return Outcome(self.changed or later.changed, self.banned or later.banned,
                       later.held_back or self.held_back)


class Room(NamedTuple):
    """The e-graph's table ``sizes`` and ``size`` in term e-nodes, the most it may hold now
    (``cap``), and the budget that sets the cap (``Limits.nodes``, or the seconds left for
    extraction)."""

    sizes: dict[str, int]
    size: int
    cap: int
    budget: StopReason

    @property
    def free(self) -> int:
        return self.cap - self.size


class Part(NamedTuple):
    """Rules of one step that run together: the egglog ruleset ``step`` that holds just them,
    the ruleset reported (``label``), and whether egglog's plain ``run`` may run them."""

    step: str
    label: str
    rules: list
    plain: bool


@dataclass
class Prepared:
    """What a scheduler reads off a split ruleset (``Ruleset.split``: a rewrite ruleset, or an
    analysis that builds no e-node): the same for every compile, so it is read once per
    ruleset, not once per compile for each of its hundreds of rules."""

    ruleset: rs.Ruleset    # kept, so that its id (the key of ``_PREPARED``) is not reused
    pairs: list            # [(its one-rule ruleset, the rule)]
    swapped: tuple         # the operand orders its rules are sent in (``Ruleset.swapped_ops``)
    deferred: frozenset    # its rules sent only once they may match (``Ruleset.deferred``)
    alive: dict = field(default_factory=dict)   # tables with no row -> the pairs that may match

    @property
    def name(self) -> str:
        return self.ruleset.name

    def may_fire(self, empty: frozenset) -> list:
        """The pairs that may match while they run to a fixed point, the tables ``empty`` holding
        no row at the start and no e-node being built: those that ``may_match`` whose query's
        every table has rows, or gets them from the actions of another such rule."""
        key = ("fire", empty)
        if key not in self.alive:
            pairs, written, grew = self.may_match(empty), set(), True
            firing = set()
            while grew:
                grew = False
                for k, (_, rule) in enumerate(pairs):
                    if k not in firing and not (rule.reads() & empty) - written:
                        firing.add(k)
                        written |= rule.writes()
                        grew = True
            self.alive[key] = [pair for k, pair in enumerate(pairs) if k in firing]
        return self.alive[key]

    def may_match(self, empty: frozenset) -> list:
        """The pairs whose query may match with the tables ``empty`` holding no row
        (``Rule.may_match``): compiles meet the same few sets of empty tables again."""
        if empty not in self.alive:
            if len(self.alive) > 256:
                self.alive.clear()
            self.alive[empty] = [pair for pair in self.pairs if pair[1].may_match(empty)]
        return self.alive[empty]


_PREPARED: dict[int, Prepared] = {}   # id(Ruleset) -> what it prepared


def prepared(ruleset: rs.Ruleset) -> Prepared:
    held = _PREPARED.get(id(ruleset))
    if held is None or held.ruleset is not ruleset:
        held = _PREPARED[id(ruleset)] = Prepared(ruleset, list(zip(ruleset.rule_rulesets(), ruleset.rules)),
                                                 ruleset.swapped_ops(), frozenset(ruleset.deferred()))
    return held


class BackoffScheduler:
    """Every part a bounded back-off step (see the module's docstring)."""

    def __init__(self):
        # steps whose lowered limit banned a rule once: they count their matches before
        # running from then on, as every back-off step searches the whole e-graph anew
        self.count_first: set[str] = set()

    def plan(self, runner, ruleset: Prepared, pairs: list, room: Room) -> list[Part]:
        """The parts that run ``pairs`` (rules of ``ruleset``) in a step, in order."""
        return [_part(runner.session, ruleset, pairs, plain=False)]

    def plan_analysis(self, runner, analysis: rs.Ruleset, room: Room) -> Part:
        """The one part that runs a step of ``analysis``, whole (its fixed point is the runner's)."""
        return Part(analysis.name, analysis.name, analysis.rules, plain=False)

    def run(self, runner, part: Part, room: Room) -> Outcome:
        """Run ``part`` keeping the e-graph within ``room.cap`` e-nodes."""
        if part.plain:
            return Outcome(runner.run_schedule(f"(run {part.step})", part.label).updated)
        return self._bounded(runner, part, room)

    def _bounded(self, runner, part: Part, room: Room) -> Outcome:
        """One back-off step within ``room``. The cap is enforced before egglog runs (egglog
        checks sizes only between iterations, when an explosive step may have passed the
        budget several times over): a rule with more matches than the limit is banned for the step, so the
        limit is lowered until the most the step can add fits."""
        match_limit = runner.match_limit
        new_per_match = sum(rule.max_new_nodes for rule in part.rules)
        if new_per_match * match_limit <= room.free:   # even the worst case fits
            changed, found = _backoff_step(runner, part, match_limit)
            return Outcome(changed, any(n > match_limit for n in found.values()))
        limit, changed, ran = room.free // max(new_per_match, 1), False, 0
        if part.step not in self.count_first:
            changed, found = _backoff_step(runner, part, limit) if limit > 0 else (False, {})
            ran = limit
            if limit > 0 and not any(n > limit for n in found.values()):
                return Outcome(changed)
            # such a step would otherwise search the whole e-graph twice every time (gradclean's
            # relation rules: thousands of matches and no e-node on a long chain)
            self.count_first.add(part.step)
        return Outcome(changed).then(self._fitted(runner, part, room, ran))

    @staticmethod
    def _fitted(runner, part: Part, room: Room, ran: int) -> Outcome:
        """The worst-case bound banned a rule: count each rule's matches (with limit 0, egglog
        searches, bans every rule and applies nothing), then let in the rules whose matches
        fit in the room left, fewest matches first. ``ran``: the limit a run of this step
        already applied."""
        match_limit = runner.match_limit
        _, found = _backoff_step(runner, part, 0)
        free = room.cap - runner.term_enodes()
        new_nodes = {name: n for rule in part.rules for name, n in rule.new_nodes_per_match().items()}
        fitted = fitting_match_limit(found, new_nodes, free, match_limit)
        changed = fitted > ran and _backoff_step(runner, part, fitted)[0]
        budget_bans = any(fitted < n <= match_limit for n in found.values())
        return Outcome(changed, budget_bans or any(n > match_limit for n in found.values()),
                       room.budget if budget_bans else None)


class BoundScheduler(BackoffScheduler):
    """Rules that the table sizes prove safe run plain; the rest as ``BackoffScheduler`` runs them."""

    def plan(self, runner, ruleset: Prepared, pairs: list, room: Room) -> list[Part]:
        plain, rest = _split_by_bound(pairs, ruleset.swapped, room.sizes, room.free, runner.match_limit)
        return [_part(runner.session, ruleset, part, plain=part is plain) for part in (plain, rest) if part]

    def plan_analysis(self, runner, analysis: rs.Ruleset, room: Room) -> Part:
        """Plain when every rule's bound fits together, as one analysis step runs whole."""
        swapped = analysis.swapped_ops()
        bounded = [bounds.most_matches_and_nodes(rule, swapped, room.sizes) for rule in analysis.rules]
        most, nodes = zip(*bounded)
        plain = max(most) <= runner.match_limit and sum(nodes) <= room.free
        return Part(analysis.name, analysis.name, analysis.rules, plain=plain)


def _part(session, ruleset: Prepared, pairs: list, plain: bool) -> Part:
    return Part(ruleset_of(session, ruleset, pairs), ruleset.name, [rule for _, rule in pairs], plain)


def ruleset_of(session, ruleset: Prepared, pairs: list) -> str:
    """The egglog ruleset that runs just the rules ``pairs`` ((one-rule ruleset, rule) pairs
    of ``ruleset``): the ruleset itself when all are, one rule's own ruleset, or their union,
    declared once per session (a pooled session forgets it when the compile's snapshot is
    popped). The union's name is made from its rules: egglog keeps a report per ruleset name
    for good, so a name made anew by each compile would grow a pooled session's reports."""
    if len(pairs) == len(ruleset.pairs):
        return ruleset.name
    if len(pairs) == 1:
        return pairs[0][0]
    key = " ".join(step for step, _ in pairs)
    name = f"{ruleset.name}__some_{hashlib.blake2b(key.encode(), digest_size=8).hexdigest()}"
    session.declare_once(name, f"(unstable-combined-ruleset {name} {key})")
    return name


def _split_by_bound(pairs: list, swapped_ops: tuple, sizes: dict[str, int], room: int, match_limit: int):
    """(the (ruleset, rule) pairs that a plain egglog step may run, the rest).

    A plain step applies every match it finds. It may run the rules that the e-graph's
    ``sizes`` prove can have at most ``match_limit`` matches each (none would be banned) and
    whose e-nodes, all matches applied, fit in ``room`` together (rules/bounds.py)."""
    plain, rest, added = [], [], 0
    for pair in pairs:
        most, nodes = bounds.most_matches_and_nodes(pair[1], swapped_ops, sizes)
        if most <= match_limit and added + nodes <= room:
            plain.append(pair)
            added += nodes
        else:
            rest.append(pair)
    return plain, rest


def _backoff_step(runner, part: Part, limit: int) -> tuple[bool, dict[str, int]]:
    """Run ``part`` once under a fresh back-off scheduler with match limit ``limit``:
    (whether it changed the e-graph, the matches each rule found)."""
    schedule = f"(let-scheduler bo (back-off :match-limit {limit})) (repeat 1 (run-with bo {part.step}))"
    return _changed_and_matches(runner.run_schedule(schedule, part.label))


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


def fitting_match_limit(found: dict[str, int], new_nodes: dict[str, int], room: int, match_limit: int) -> int:
    """The largest match limit (at most ``match_limit``) under which the rules it lets
    through, ``found[rule]`` matches each adding ``new_nodes[rule]`` e-nodes, fit in ``room``."""
    added: dict[int, int] = defaultdict(int)  # match count -> e-nodes the rules with that count add
    for rule, n in found.items():  # a rule sent in another operand order adds what the rule does
        added[n] += n * new_nodes.get(written(rule), max(new_nodes.values(), default=1))
    limit, used = 0, 0
    for n in sorted(added):
        used += added[n]
        if n > match_limit or used > room:
            break
        limit = n
    return limit
