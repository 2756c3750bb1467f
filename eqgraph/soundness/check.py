"""Check rewrite rules for soundness on random inputs (``eqgraph.check_rules``); what is drawn
is draws.py.

For each ``rewrite`` (and each direction of a ``birewrite``), many *bindings* of
the pattern variables are drawn: per tensor variable an ndim (0-3, cycling
through every mix), a dtype (one for all operands and the pattern's constants
during the first pass over the ndim mixes, then every mix in turn on every other draw; the real
dtypes, then in a second, shorter pass complex128 beside real ones), sizes from a small pool that includes 1 (so
operands broadcast), each axis static or unknown, and values of that shape;
per primitive variable a value (a constant, a dtype, an ndim...).  For each
binding that type-checks (``make_node``) and whose left side evaluates:

1. both sides are built as graphs and put in one e-graph with the rule alone:
   the rule's guards held if it made them one e-class;
2. then both sides are evaluated by running each node's ``perform`` (no
   rewriting, no compiling) and must agree: same dtype, ndim and shape, values
   equal to the dtype's tolerance (``values_eq_approx``).

Where ``make_node`` casts an operand (``sqrt`` of a bool reads ``Cast{float32}(x)``), the
e-graph's ``x`` is the cast, and so is the checker's, on the right side and in what its guards
read off ``x`` (``(= ds (dtype x))`` is float32 there).

A general rule whose one action unions the matched term with another,
``(rule ((= e LHS) guards...) ((union e RHS)))``, is checked as the rewrite ``LHS -> RHS``
(``two_sides``); index lists (``Subtensor_1``, ``Subtensor_2``, ``AdvancedSubtensor_2``,
``IncSubtensor_2``) are drawn for the operand's ndim. It runs with the rules of its file that
fill the relations its guards read, and its right side may read what its guards compute from
the left side (``guard_facts.py``); one whose right side reads anything else is reported,
not checked.

A run-time check (``CheckAndRaise``) that fails on the left side is that side's value: the
right side must fail the same check (a rule that drops a check, or one of its conditions, is
unsound wherever the check would have raised). A check's exception props are drawn as
exception names (``CHECK_EXCEPTIONS``).

A disagreement raises :class:`UnsoundRuleError` naming the rule, its file:line
and the counterexample; values are equal where both are NaN.  Draws come from
``numpy.random.default_rng``, seeded per rule, so a check is repeatable.

What is drawn follows the rule's kind (docs/numerics.md). A rule without ``:assumes`` must
keep inf, NaN and division by zero as NumPy has them: its float operands hold inf, -inf, NaN,
0.0 and -0.0 among ordinary values, integers hold 0 and booleans False. Some operands are
drawn as constants of size 1 instead of inputs, so that guards on types.egg's value facts
(``(known-finite y)``, which no input has) hold on some draws. A rule marked
``:assumes finite`` is checked where its assumption holds: finite, nonzero values only; so is
the documented exception, ``:exception reassociation`` (reordered sums of products).

A rule whose left side is defined only for some operands says so with ``:domain``
(``:domain (positive-definite A)``: it takes a Cholesky factor of ``A``). Random values
almost never land there (a stack of positive definite matrices), so every other binding draws
those operands inside it (``DOMAIN_VALUES``: ``A`` square, ``R @ R.mT + n * I``); the other
bindings are drawn as for any rule, so the domain only adds draws, it hides none.
"""

from __future__ import annotations

import itertools
import warnings
import zlib
from dataclasses import dataclass, field, replace

import numpy as np
from unification import isvar

import eqgraph.tensor as et
from eqgraph import egraph
from eqgraph.egraph.saturate import Limits, TypeContradiction
from eqgraph.rules.forms import _subforms
from eqgraph.rules.pattern import parse_pattern
from eqgraph.soundness.guard_facts import computed_by_guards, fact_rules, fact_tables
from eqgraph.rules.ruleset import Rule, Ruleset, load
from eqgraph.soundness.draws import (COMPLEX_PASS_DTYPES, COMPLEX_PASS_SHARE, DTYPES, NDIMS, Binding, Uncheckable,
                                     UnknownConstructor, _dtype_mixes, _dtype_variables, _every_mix_in_turn, _name,
                                     _variable_kinds)
from eqgraph.terms import FunctionGraph
from eqgraph.terms.graph import toposort
#: what building a pattern raises for bindings that do not type-check (or a constant c/0)
BUILD_ERRORS = (TypeError, ValueError, IndexError, ArithmeticError)
TRIES_PER_MIX = 3     # bindings drawn for one ndim mix before moving on to the next
TRIES_PER_DRAW = 10   # bindings drawn per binding asked for, at most (most mixes may not type-check)


class UnsoundRuleError(ValueError):
    """A rule whose two sides differ on some inputs; the message starts with ``file:line``."""

    def __init__(self, message: str, rule: Rule):
        super().__init__(message)
        self.rule = rule


@dataclass
class CheckReport:
    """What ``check_rules`` did for each rule of a file."""

    source: str
    checked: dict[str, int] = field(default_factory=dict)   # rule -> bindings compared on both sides
    unmatched: list[str] = field(default_factory=list)      # rules whose guards never held on a draw
    unchecked: dict[str, str] = field(default_factory=dict)  # rule -> why it cannot be checked
    general: list[str] = field(default_factory=list)        # (rule ...) commands: no two sides to compare

    def __str__(self):
        compared = {name: n for name, n in self.checked.items() if n}
        lines = [f"{self.source}: {len(compared)} rewrites checked, no counterexample"]
        lines += [f"  {n:>5} draws  {name}" for name, n in compared.items()]
        lines += [f"  never matched (its guards held on no draw, so it was not checked): {name}"
                  for name in self.unmatched]
        lines += [f"  not checked: {name}: {why}" for name, why in self.unchecked.items()]
        if self.general:
            lines.append(f"  {len(self.general)} general (rule ...) commands not checked: only rewrites and rules "
                         "that union a matched term with another have two sides to compare")
        return "\n".join(lines)


def check_rules(rules, draws: int = 100, seed: int = 0) -> CheckReport:
    """Check every rewrite of a rule file (a path, rule text, a built-in name or a Ruleset), and
    every general rule of the form ``(rule ((= e LHS) guards...) ((union e RHS)))``.

    ``draws`` bindings are tried per rule and direction.  Raises
    :class:`UnsoundRuleError` for the first rule found unsound; otherwise returns a
    report of how many bindings each rule was compared on and which rules never matched.
    """
    ruleset = load(rules)
    report = CheckReport(ruleset.source)
    for rule in (ruleset.written or ruleset).rules:   # the rules that assume something too
        if rule.kind == "rule":
            rule = two_sides(rule)
            if rule.lhs is None:
                report.general.append(rule.name)
                continue
        try:
            count = check_rule(rule, ruleset, draws, seed)
        except Uncheckable as err:
            report.unchecked[rule.name] = str(err)
            continue
        report.checked[rule.name] = count
        if not count:
            report.unmatched.append(rule.name)
    return report


def two_sides(rule: Rule) -> Rule:
    """A general rule ``(rule ((= e LHS) guards...) ((union e RHS)))`` with its two sides and
    guards read as a rewrite's (``lhs``, ``rhs``, ``when``), to be checked as one; any other
    rule as it is (no ``lhs``). The egglog command run is the rule's own text either way."""
    if rule.kind != "rule":
        return rule
    query, actions = (_subforms(p) for p in _subforms(rule.text)[1:3])
    first = _subforms(query[0]) if query and query[0].startswith("(") else []
    action = _subforms(actions[0]) if len(actions) == 1 and actions[0].startswith("(") else []
    if len(first) != 3 or first[0] != "=" or first[1].startswith("(") or len(action) != 3 or action[0] != "union":
        return rule
    matched, lhs = first[1], first[2]
    rhs = action[2] if action[1] == matched else action[1] if action[2] == matched else None
    if rhs is None:
        return rule
    return replace(rule, lhs=lhs, rhs=rhs, when=f"({' '.join(query[1:])})" if query[1:] else None)


def check_rule(rule: Rule, ruleset: Ruleset | None = None, draws: int = 100, seed: int = 0) -> int:
    """Check one rewrite (or general rule with two sides, ``two_sides``); return how many
    bindings both sides were compared on."""
    ruleset = ruleset or load(rule.ruleset)
    rule = two_sides(rule)
    if rule.lhs is None:
        raise Uncheckable(f"{rule.name} is a general rule that unions no matched term with another")
    alone = _alone(ruleset.written or ruleset, rule)
    # seeded by what the rule says, not by its name: rule text gets a ruleset name that
    # counts the strings loaded before it, which made a check depend on what ran earlier
    rng = np.random.default_rng([seed, zlib.crc32(f"{rule.lhs} {rule.rhs} {rule.when}".encode())])
    variables: dict = {}
    lhs, rhs = parse_pattern(rule.lhs, variables), parse_pattern(rule.rhs, variables)
    _variable_kinds(rhs)  # raises UnknownConstructor before anything is built
    domain = _domain(rule, variables, _variable_kinds(lhs))
    derived = _derived_from_guards(rule.when, variables, _matched(rule, variables), set(_pattern_variables(lhs)),
                                   fact_tables(ruleset.program, load("types").program))
    if rule.kind == "rule":
        _bound_by_its_left_side(rule, lhs, rhs, derived)
    directions = [(lhs, rhs)] + ([(rhs, lhs)] if rule.kind == "birewrite" else [])
    special = rule.assumes is None and rule.exception is None
    # then complex operands, drawn apart so that the real draws stay those of the seed
    complex_rng = np.random.default_rng([seed, zlib.crc32(f"{rule.lhs} {rule.rhs} {rule.when}".encode()), 1])
    complex_draws = max(1, round(draws * COMPLEX_PASS_SHARE))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sum(_check_direction(rule, alone, source, target, rng, draws, domain, derived, special)
                   + _check_direction(rule, alone, source, target, complex_rng, complex_draws, domain, derived,
                                      special, COMPLEX_PASS_DTYPES)
                   for source, target in directions)


def _bound_by_its_left_side(rule: Rule, lhs, rhs, derived: dict) -> None:
    """A general rule's right side may read what its guards compute ((= k (vec-get t 0))): the
    checker would draw those at random and build another right side than the rule's."""
    bound = set(_pattern_variables(lhs))
    bound |= {v for v, (kind, operand) in derived.items() if operand in bound or kind in ("guard", "term")}
    free = sorted(_name(v) for v in set(_pattern_variables(rhs)) - bound)
    if free:
        raise Uncheckable(f"its right side reads {', '.join(free)}, which its guards compute (the checker "
                          "draws only what its left side binds)")


def _pattern_variables(pattern):
    if isvar(pattern):
        yield pattern
    elif isinstance(pattern, tuple):
        for part in pattern[1:]:
            yield from _pattern_variables(part)


def _derived_from_guards(when: str | None, variables: dict, matched=None, bound: set = frozenset(),
                         tables: dict | None = None) -> dict:
    """Primitive variables a rewrite's guards read off an operand: ``(= ds (dtype x))`` then
    ``(= d (set-get ds 0))`` makes ``d`` x's dtype (``ndim`` likewise), so that a right side may
    build a constant of x's dtype and ndim (``(Scalar NaN d n)``).  Variable -> (prop, operand)."""
    derived: dict = {}
    facts = parse_pattern(f"(facts {when.strip()[1:-1]})", variables)[1:] if when else ()
    for fact in facts:
        if not (isinstance(fact, tuple) and fact[0] == "=" and isvar(fact[1]) and isinstance(fact[2], tuple)):
            continue
        head, *args = fact[2]
        if head in ("dtype", "ndim") and isvar(args[0]) and args[0] is not matched:
            derived[fact[1]] = (head, args[0])
        elif head == "set-get" and args[0] in derived:
            derived[fact[1]] = derived[args[0]]
    if matched is not None:  # a general rule: what its other guards compute (guard_facts)
        derived.update(computed_by_guards(facts, bound | set(derived), matched, tables or {}))
    return derived


def _matched(rule: Rule, variables: dict):
    """The variable a general rule names its matched term by (``e`` in ``(= e LHS)``), or None."""
    if rule.kind != "rule":
        return None
    first = _subforms(_subforms(_subforms(rule.text)[1])[0])
    return parse_pattern(first[1], variables)


def _domain(rule: Rule, variables: dict, kinds: dict) -> dict:
    """Pattern variable -> the kind of operand its ``:domain`` asks for."""
    domain = {}
    for kind, name in rule.domain:
        if kinds.get(variables.get(name)) != "T":
            raise ValueError(f"{rule.source[0]}:{rule.source[1]}: rule {rule.name}: :domain ({kind} {name}) names "
                             f"{name}, which is no tensor of its left side")
        domain[variables[name]] = kind
    return domain


# -- one direction ------------------------------------------------------------------------------
@dataclass
class Draw:
    binding: Binding
    source: object   # the graph built from the source pattern
    target: object   # from the target pattern; None if it does not type-check
    target_error: Exception | None
    values: dict     # tensor variable -> array
    left: object     # the source's value


def _check_direction(rule, alone, source, target, rng, draws: int, domain: dict, derived: dict,
                     special: bool, dtypes=DTYPES) -> int:
    kinds = _variable_kinds(source)
    tensors = [v for v, kind in kinds.items() if kind == "T"]
    typed = tensors + _dtype_variables(source)   # what has a dtype: operands, and constants' dtypes
    ndim_mixes = list(itertools.product(NDIMS, repeat=len(tensors)))
    mixes = _every_mix_in_turn(ndim_mixes, rng)
    dtype_mixes = _dtype_mixes(len(typed), rng, first_pass=len(ndim_mixes), dtypes=dtypes)
    found: list[Draw] = []
    tries = 0
    while len(found) < draws and tries < TRIES_PER_DRAW * draws:
        ndims = dict(zip(tensors, next(mixes)))
        dtypes = dict(zip(typed, next(dtype_mixes)))
        for _ in range(TRIES_PER_MIX):  # sizes of 1 may not align (matmul): draw them again
            tries += 1  # every other binding draws the :domain operands inside it
            binding = Binding(ndims, rng, dtypes, domain if tries % 2 else {}, derived, special,
                              alias="shape-root" in (rule.when or ""))
            draw = _draw(binding, source, target)
            if draw is not None:
                found.append(draw)
                break
    compared = 0
    for draw, proven in zip(found, _proven_equal(alone, found)):
        if proven:
            _compare(rule, draw)
            compared += 1
    return compared


def left_sides(rule: Rule, draws: int, seed: int = 0) -> list[tuple[list, object]]:
    """Graphs of ``rule``'s left side (each side of a birewrite), ``draws`` per side at most, over
    operands drawn as ``check_rule`` draws them (every ndim, dtype and static/unknown shape mix
    in turn) that type-check and evaluate: ``[(inputs, output)]``. Compiling them with every
    rule finds rules that build ill-typed terms together, which checking each alone cannot."""
    rule = two_sides(rule)
    if rule.lhs is None:
        return []
    rng = np.random.default_rng([seed, zlib.crc32(f"{rule.lhs} {rule.rhs} {rule.when}".encode())])
    variables: dict = {}
    sides = [parse_pattern(rule.lhs, variables)]
    if rule.kind == "birewrite":
        sides.append(parse_pattern(rule.rhs, variables))
    found = []
    for side in sides:
        try:
            tensors = [v for v, kind in _variable_kinds(side).items() if kind == "T"]
        except UnknownConstructor:
            continue
        mixes = _every_mix_in_turn(list(itertools.product(NDIMS, repeat=len(tensors))), rng)
        typed = tensors + _dtype_variables(side)
        dtype_mixes = _dtype_mixes(len(typed), rng, first_pass=len(NDIMS) ** len(tensors))
        drawn = 0
        for _ in range(TRIES_PER_DRAW * draws):
            if drawn == draws:
                break
            binding = Binding(dict(zip(tensors, next(mixes))), rng, dict(zip(typed, next(dtype_mixes))))
            try:
                graph = binding.build(side)
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    evaluate([graph], binding.arrays())
            except Exception:  # noqa: BLE001  (outside the left side's domain, as in _draw)
                continue
            found.append((list(dict.fromkeys(binding.tensors.values())), graph))
            drawn += 1
    return found


def _draw(binding: Binding, source, target) -> Draw | None:
    """Both sides built for ``binding``, and the source's value; None if the source does not
    type-check or NumPy refuses its values (nothing to test)."""
    try:
        graph = binding.build_left(source)
        values = binding.arrays()
        [left] = _value_or_failed_check(graph, values)
    except Exception:  # noqa: BLE001  (make_node or NumPy refuse: outside the left side's domain)
        return None
    try:
        built, error = binding.build(target), None
    except BUILD_ERRORS as err:
        built, error = None, err
    return Draw(binding, graph, built, error, values, left)


def _proven_equal(alone: Ruleset, draws: list[Draw]) -> list[bool]:
    """Per draw: did the rule alone (with the type analyses) make its two sides one e-class?

    All draws share one e-graph; if the rule merges terms of contradicting static types,
    the draws are checked one by one to find the binding that shows it.
    """
    if not draws:
        return []
    try:
        return _run_rule(alone, draws)
    except TypeContradiction:
        pass
    return [x for draw in draws for x in _run_rule_or_raise(alone, draw)]


def _run_rule_or_raise(alone: Ruleset, draw: Draw) -> list[bool]:
    try:
        return _run_rule(alone, [draw])
    except TypeContradiction as err:
        contradiction = err
    # outside the except: the UnsoundRuleError is the whole story, with no chained traceback
    rule = alone.rules[0]
    _compare(rule, draw)  # the sides' types or values differ: say how, with the values
    target = draw.target.type if draw.target is not None else "(not built)"
    raise UnsoundRuleError(f"{rule.source[0]}:{rule.source[1]}: rule {rule.name} merges terms of different "
                           f"static types: {draw.source.type} and {target}\n"
                           f"{_describe(draw.binding, draw.values)}\n  ({contradiction})", rule)


def _run_rule(alone: Ruleset, draws: list[Draw]) -> list[bool]:
    inputs = list(dict.fromkeys(v for d in draws for v in d.binding.inputs()))
    outputs = [v for d in draws for v in (d.source, d.target) if v is not None]
    report, data = _saturate(alone, inputs, outputs)
    if not report.matches.get(alone.rules[0].name):
        return [False] * len(draws)
    # Where the e-graph's right side cannot be ours (ours does not type-check, or rounds a
    # constant the rule computed: 1/3 as a float32), a match on the left side alone says
    # that the guards held. Not for a general rule: its query may have matched an operand
    # that make_node broadcast (x in (Mul x (Scalar c d 2)) is DimShuffle(x) there), so a
    # right side of ours that does not type-check is no evidence.
    general = alone.rules[0].kind == "rule"
    return [(not general and _matched_alone(alone, d)) if d.target is None
            else _matched_alone(alone, d) if d.binding.rounded
            else data.class_of(d.source) == data.class_of(d.target) for d in draws]


def _matched_alone(alone: Ruleset, draw: Draw) -> bool:
    report, _ = _saturate(alone, draw.binding.inputs(), [draw.source])
    return bool(report.matches.get(alone.rules[0].name))


def _saturate(alone: Ruleset, inputs: list, outputs: list):
    """(report, e-graph) after one iteration of the rule alone, with the type analyses (and
    one more per layer of the rules that fill what its guards read)."""
    # commute.egg too: it unites y * x with x * y where the rule builds one beside the other
    # (the rule itself matches either operand order: rules/ruleset.py operand_orders)
    helpers = ["types"] + ([("commute", "saturate")] if alone.name != "commute" else [])
    with egraph.session([*helpers, alone], reuse=helpers) as session:  # a pooled session holds them
        session.encode(FunctionGraph(inputs, outputs, clone=False))
        return session.saturate(Limits(iterations=1 + fact_rules(alone, alone.rules[0])[1])), session.snapshot()


def _value_or_failed_check(graph, values: dict) -> list:
    """``[graph's value]``, or ``[FailedCheck]`` where one of its run-time checks raised."""
    try:
        return evaluate([graph], values)
    except FailedCheck as failed:
        return [failed]


def _compare(rule: Rule, draw: Draw) -> None:
    """Raise UnsoundRuleError unless the target has the source's type and value (or, where the
    source's run-time check failed, the target's same check fails)."""
    source, target, right, failure = draw.source, draw.target, None, None
    if target is not None:
        try:
            [right] = _value_or_failed_check(target, draw.values)
        except Exception as err:  # noqa: BLE001  (the counterexample: the left side ran, this did not)
            failure = f"{type(err).__name__}: {err}"
    if target is None:
        problem = f"the right side does not type-check: {draw.target_error}"
    elif (target.type.dtype, target.type.ndim) != (source.type.dtype, source.type.ndim):
        problem = f"the right side has type {target.type}, the left side {source.type}"
    elif failure is not None:
        problem = f"the right side fails: {failure}"
    elif isinstance(draw.left, FailedCheck) or isinstance(right, FailedCheck):
        if isinstance(draw.left, FailedCheck) and isinstance(right, FailedCheck) and draw.left.op == right.op:
            return
        problem = _check_difference(draw.left, right)
    elif np.shape(right) != np.shape(draw.left):
        problem = f"shapes differ: {np.shape(draw.left)} and {np.shape(right)}"
    elif not source.type.values_eq_approx(draw.left, right):
        problem = "values differ"
    else:
        return
    raise UnsoundRuleError(
        f"{rule.source[0]}:{rule.source[1]}: rule {rule.name} is unsound: {problem}\n"
        f"  rule: {rule.lhs}  ->  {rule.rhs}\n{_describe(draw.binding, draw.values)}\n"
        f"  left side:  {source} = {_show(draw.left)}\n"
        f"  right side: {target if target is not None else '(not built)'} = "
        f"{_show(right) if right is not None else '-'}", rule)


def _check_difference(left, right) -> str:
    """How the run-time checks of two sides differ, where at least one failed."""
    if not isinstance(right, FailedCheck):
        return f"the left side's check fails ({left.op}), the right side raises nothing"
    if not isinstance(left, FailedCheck):
        return f"the right side's check fails ({right.op}), the left side raises nothing"
    return f"the left side's check {left.op} fails, the right side's is another: {right.op}"


def _describe(binding: Binding, values: dict) -> str:
    rows = [f"  {name} = {_show(values[v] if v in values else v.data)}  ({v.type}{', a constant' if v not in values else ''})"
            for name, v in binding.tensors_by_name()]
    rows += [f"  {_name(v)} is {term} in the left side (make_node cast it)"
             for v, term in binding.operands.items() if term is not binding.tensors[v]]
    rows += [f"  {name} = {value!r}" for name, value in binding.primitives_by_name()]
    return "  inputs:\n" + "\n".join("  " + r for r in rows)


def _show(value) -> str:
    return np.array2string(np.asarray(value), precision=6, separator=", ", threshold=30).replace("\n", " ")


def _alone(ruleset: Ruleset, rule: Rule) -> Ruleset:
    """``ruleset`` with only ``rule`` and the rules that fill what its guards read
    (``guard_facts``; its other commands kept: a rule may use them); same lines."""
    helpers, _ = fact_rules(ruleset, rule)
    kept = {rule.name, *(h.name for h in helpers)}
    program = ruleset.program
    for other in ruleset.rules:
        if other.name not in kept:  # by name: ``rule`` may be the two_sides copy of the file's
            program = program.replace(other.text, "\n" * other.text.count("\n"), 1)
    return Ruleset(ruleset.name, [rule, *helpers], program, ruleset.source, ruleset.saturate)


# -- evaluation: the meaning of a graph, node by node ------------------------------------------
class FailedCheck(Exception):
    """A run-time check (``CheckAndRaise``) of the graph raised: the graph's meaning on these
    values, which the other side of a rule must have too (the same check failing)."""

    def __init__(self, op):
        super().__init__(f"{op} raised")
        self.op = op


def evaluate(outputs, values: dict) -> list:
    """The values of ``outputs``, running each node's ``perform`` on ``values`` (copied)."""
    cells = {v: np.array(x, copy=True) for v, x in values.items()}
    for node in toposort(outputs):
        storage = [[None] for _ in node.outputs]
        inputs = [cells[v] if v in cells else v.data for v in node.inputs]
        try:
            node.op.perform(node, inputs, storage)
        except Exception as err:
            if isinstance(node.op, et.CheckAndRaise) and isinstance(err, node.op.exc_type):
                raise FailedCheck(node.op) from err
            raise
        cells.update(zip(node.outputs, (cell[0] for cell in storage)))
    return [cells[v] if v in cells else v.data for v in outputs]


