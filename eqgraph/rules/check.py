"""Check rewrite rules for soundness on random inputs (``eqgraph.check_rules``).

For each ``rewrite`` (and each direction of a ``birewrite``), many *bindings* of
the pattern variables are drawn: per tensor variable an ndim (0-3, cycling
through every mix), a dtype (one for all operands and the pattern's constants
during the first pass over the ndim mixes, then every mix in turn on every other draw), sizes from a small pool that includes 1 (so
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
the left side (rules/guard_facts.py); one whose right side reads anything else is reported,
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
import math
import warnings
import zlib
from dataclasses import dataclass, field, replace

import numpy as np
from unification import isvar

import eqgraph.tensor as et
from eqgraph import egraph
from eqgraph.egraph.saturate import Limits, TypeContradiction
from eqgraph.egraph.schema import Schema, encode_index
from eqgraph.rules.guard_facts import alias_operands, computed_by_guards, fact_rules, fact_tables, guard_value
from eqgraph.rules.pattern import parse_pattern
from eqgraph.rules.ruleset import Rule, Ruleset, _subforms, load
from eqgraph.tensor.subtensor import FULL_SLICE
from eqgraph.terms import Constant, FunctionGraph
from eqgraph.terms.graph import toposort

DTYPES = ("float64", "float32", "int64", "bool")
NDIMS = (0, 1, 2, 3)
CONSTANTS = (0.0, 0.5, 1.0, -1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 10.0, -1.5)  # for f64 variables
#: the exceptions a drawn run-time check raises (its props name the class)
CHECK_EXCEPTIONS = ("AssertionError", "ValueError")
#: egglog's primitive functions that rule patterns use, for building right-hand sides
PRIMITIVES = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
              "/": lambda a, b: a / b, "%": lambda a, b: a % b, "neg": lambda a: -a, "min": min, "max": max,
              "vec-length": len, "vec-of": lambda *items: tuple(items), "vec-empty": tuple,
              "vec-get": lambda vec, i: vec[i],
              "set-get": lambda one, i: one}  # a guard-bound set of one (derived) is held as its element
SCHEMA = Schema()
#: what building a pattern raises for bindings that do not type-check (or a constant c/0)
BUILD_ERRORS = (TypeError, ValueError, IndexError, ArithmeticError)
TRIES_PER_MIX = 3     # bindings drawn for one ndim mix before moving on to the next
TRIES_PER_DRAW = 10   # bindings drawn per binding asked for, at most (most mixes may not type-check)
#: the values IEEE arithmetic gets wrong as real-number identities: a rule that assumes nothing keeps them
SPECIAL_FLOATS = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0])
SPECIAL_SHARE = 0.3   # of the drawn elements, for such a rule
CONSTANT_SHARE = 0.3  # of its operands drawn as constants, for guards that read value facts


def _positive_definite(rng, shape, dtype):
    """A stack of symmetric positive definite matrices: ``R @ R.mT + n * I`` (the identity for bool)."""
    n = shape[-1]
    identity = np.broadcast_to(np.eye(n, dtype=dtype), shape)
    if dtype == "bool":
        return identity.copy()
    r = rng.integers(-3, 4, size=shape) if dtype.startswith("int") else rng.uniform(-2.0, 2.0, size=shape)
    return np.asarray(r @ np.swapaxes(r, -1, -2) + n * identity, dtype=dtype)


#: the operands a rule's ``:domain`` asks for (ruleset.DOMAINS), drawn from (rng, shape, dtype);
#: their last two axes are drawn equal
DOMAIN_VALUES = {"positive-definite": _positive_definite}
#: ops whose index list (``idx_list``) is drawn for the operand's ndim, and the entry that reads
#: their one index input (a 0-d integer "?", an array "a"; None: no index input); the other props
#: they carry (``slicing``, ``int_indices``, ``block_at``) are derived from it
INDEXED = {"Subtensor_1": None, "IncSubtensor_2": None, "Subtensor_2": "?", "AdvancedSubtensor_2": "a"}
#: the entries an index is drawn from: in range for every axis size the draws use (1 or more)
INDEX_ENTRIES = (0, -1, FULL_SLICE, ("slice", 1, None, None), ("slice", None, None, -1),
                 ("slice", 0, 1, None), ("slice", None, -1, None))


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
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return sum(_check_direction(rule, alone, source, target, rng, draws, domain, derived, rule.assumes is None and rule.exception is None)
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


class Uncheckable(ValueError):
    """A rule the checker cannot check (the message says why): reported, not raised."""


class UnknownConstructor(Uncheckable):
    """A pattern names a constructor the checker cannot build."""


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
                     special: bool) -> int:
    kinds = _variable_kinds(source)
    tensors = [v for v, kind in kinds.items() if kind == "T"]
    typed = tensors + _dtype_variables(source)   # what has a dtype: operands, and constants' dtypes
    ndim_mixes = list(itertools.product(NDIMS, repeat=len(tensors)))
    mixes = _every_mix_in_turn(ndim_mixes, rng)
    dtype_mixes = _dtype_mixes(len(typed), rng, first_pass=len(ndim_mixes))
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


def _every_mix_in_turn(mixes: list, rng):
    """Each of ``mixes`` once per pass, in a new order each pass: ndim and dtype mixes come
    from two such schedules, and a fixed order would pair them the same way every pass."""
    while True:
        for i in rng.permutation(len(mixes)):
            yield mixes[i]


def _dtype_mixes(n: int, rng, first_pass: int):
    """Dtypes for ``n`` typed pattern variables.  The first ``first_pass`` draws (one pass over
    the ndim mixes) give them all one dtype, since guards mostly ask for that; after it, every
    mix in turn on every other draw.  So a rule wrong for one mix of dtypes (x float64 over an
    int64 constant) meets it within ``first_pass + 2 * len(DTYPES) ** n`` draws, not by luck."""
    same = _every_mix_in_turn([(d,) * n for d in DTYPES], rng)
    mixed = _every_mix_in_turn(list(itertools.product(DTYPES, repeat=n)), rng)
    for _ in range(first_pass):
        yield next(same)
    while True:
        yield next(same)
        yield next(mixed)


def _dtype_variables(pattern) -> list:
    """The pattern variables that stand for a dtype: of a constant (``Scalar``, ``Ints``) or a
    ``dtype`` prop (``Cast``), in order of appearance."""
    found = []

    def visit(p):
        if not isinstance(p, tuple):
            return
        head, args = p[0], p[1:]
        if head in ("Scalar", "Ints"):
            positions = [1]
        elif head in SCHEMA.by_name:
            ctor = SCHEMA.by_name[head]
            positions = [ctor.n_inputs + i for i, prop in enumerate(ctor.props) if prop == "dtype"]
            for a in args[:ctor.n_inputs]:
                visit(a)
        else:
            positions = []
        for i in positions:
            if i < len(args) and isvar(args[i]) and args[i] not in found:
                found.append(args[i])

    visit(pattern)
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


# -- bindings: pattern variables -> graphs and values -------------------------------------------
def _variable_kinds(pattern, kinds=None) -> dict:
    """Pattern variable -> "T" (a tensor) or the egglog sort of the primitive it stands for."""
    kinds = {} if kinds is None else kinds
    if isvar(pattern):
        kinds.setdefault(pattern, "T")
        return kinds
    if not isinstance(pattern, tuple):
        return kinds
    head, args = pattern[0], pattern[1:]
    if head == "Scalar":
        sorts, n_inputs = ("f64", "String", "i64"), 0
    elif head == "Ints":
        sorts, n_inputs = ("IntVec", "String"), 0
    elif head in SCHEMA.by_name:
        ctor = SCHEMA.by_name[head]
        sorts, n_inputs = tuple(c.sort for c in ctor.codecs), ctor.n_inputs
    else:
        raise UnknownConstructor(f"constructor {head} is not a built-in op (the checker builds built-in ops only)")
    for a in args[:n_inputs]:
        _variable_kinds(a, kinds)
    for a, sort in zip(args[n_inputs:], sorts):
        if isvar(a):
            kinds.setdefault(a, sort)
    return kinds


def _name(variable) -> str:
    return str(variable).lstrip("~")  # kanren prints its variables as ~x


class Binding:
    """Values for a pattern's variables: tensor types (then inputs and arrays) and primitives."""

    def __init__(self, ndims: dict, rng, dtypes: dict, domain: dict | None = None, derived: dict | None = None,
                 special: bool = False, alias: bool = False):
        self.rng = rng
        self.special = special  # draw inf, NaN and zeros (a rule that assumes nothing must keep them)
        self.size = int(rng.integers(2, 4))  # every axis is this size or 1, so operands broadcast
        self.tensors: dict = {}   # pattern variable -> input variable
        self.operands: dict = {}  # pattern variable -> the term it matches in the left side (build_left)
        self._matching: dict | None = None  # pattern variable -> the terms it met, while build_left runs
        self.derived = derived or {}
        self.shapes: dict = {}    # input variable -> its runtime shape
        self.domain: dict = {}    # input variable -> the kind of operand its rule's :domain asks for
        for v, ndim in ndims.items():
            dtype = dtypes[v]
            shape = tuple(1 if rng.random() < 0.25 else self.size for _ in range(ndim))
            if v in (domain or {}) and ndim >= 2:  # square matrices, values drawn in arrays()
                shape = shape[:-1] + shape[-2:-1]
            static = tuple(s if rng.random() < 0.5 else None for s in shape)
            if special and v not in (domain or {}) and rng.random() < CONSTANT_SHARE:
                shape = (1,) * ndim   # a size-1 constant: the encoder writes its value, types.egg knows facts of it
                self.tensors[v] = et.constant(self._values(shape, str(dtype)), name=_name(v))
            else:
                self.tensors[v] = et.TensorType(str(dtype), static)(_name(v))
            self.shapes[self.tensors[v]] = shape
            if v in (domain or {}) and ndim >= 2:
                self.domain[self.tensors[v]] = domain[v]
        if alias:  # guards that ask two operands for one run-time shape (shape-root) hold where they are one
            alias_operands(self.tensors, rng)
        # the dtypes of constants and casts come from the mix too
        self.primitives: dict = {v: d for v, d in dtypes.items() if v not in ndims}
        self.rounded = False  # a constant built from a rule's arithmetic was rounded to its dtype
        for v, (prop, operand) in (derived or {}).items():  # read off an operand by the guards
            if operand in self.tensors:
                self.primitives[v] = getattr(self.tensors[operand].type, prop)

    def build_left(self, pattern):
        """The left side's graph; after it, a tensor variable that ``make_node`` cast stands for
        the cast, as in the e-graph (``sqrt`` of a bool reads ``Cast{float32}(x)``): the right
        side is built of it, and a dtype or ndim its guards read off ``x`` is the cast's.

        A broadcast operand (``DimShuffle(x)``) keeps the term drawn, as a right side built of
        it is another e-class there: NumPy's power of size-1 arrays is C's ``pow`` (inf at
        ``(-inf) ** 0.5``) where a broadcast exponent takes its ``sqrt`` path (NaN), so values
        on those draws follow the layout drawn, not the rule."""
        self._matching = {}
        try:
            graph = self.build(pattern)
        finally:
            matching, self._matching = self._matching, None
        for v, terms in matching.items():
            if {t.type.dtype for t in terms} == {self.tensors[v].type.dtype}:
                continue
            if len(set(terms)) > 1:   # no one term for v: this graph is no instance of the pattern
                raise ValueError(f"{_name(v)} matches {len(set(terms))} different terms in the left side")
            self.operands[v] = terms[0]
        for v, (prop, operand) in self.derived.items():
            if prop == "guard":   # computed by a general rule's guards from what is bound by now
                expression, matched = operand
                self.primitives[v] = guard_value(expression, matched, self.primitives,
                                                 lambda t: graph if t is matched else self.operands.get(t, self.tensors[t]))
            elif operand in self.operands:
                self.primitives[v] = getattr(self.operands[operand].type, prop)
        return graph

    def inputs(self) -> list:
        """The tensors drawn as graph inputs (the others are constants)."""
        return [t for t in dict.fromkeys(self.tensors.values()) if not isinstance(t, Constant)]

    def tensors_by_name(self):
        return [(_name(v), t) for v, t in self.tensors.items()]

    def primitives_by_name(self):
        return [(_name(v), p) for v, p in self.primitives.items()]

    def arrays(self) -> dict:
        """Nonzero values of each tensor's runtime shape (which its static shape allows); a
        ``:domain`` operand's values lie in its domain."""
        out = {}
        for t in self.inputs():
            shape, dtype = self.shapes[t], t.type.dtype
            if t in self.domain:
                out[t] = np.asarray(DOMAIN_VALUES[self.domain[t]](self.rng, shape, dtype), dtype=dtype)
            else:
                out[t] = self._values(shape, dtype)
        return out

    def _values(self, shape: tuple, dtype: str) -> np.ndarray:
        """Nonzero finite values; for a rule that assumes nothing, some of them (a share
        ``SPECIAL_SHARE``) inf, -inf, NaN, 0.0 or -0.0 (0 or False for integers and booleans)."""
        rng = self.rng
        if dtype == "bool":
            value = np.ones(shape, dtype=bool)
        elif dtype.startswith("int"):
            value = rng.integers(1, 4, size=shape) * rng.choice([-1, 1], size=shape)
        else:
            value = rng.uniform(0.1, 2.0, size=shape) * rng.choice([-1, 1], size=shape)
        value = np.asarray(value, dtype=dtype)
        if self.special:
            specials = SPECIAL_FLOATS if dtype.startswith("float") else np.zeros(1)
            where = rng.random(shape) < SPECIAL_SHARE
            value[where] = rng.choice(specials, size=int(where.sum())).astype(dtype)
        return value

    def primitive(self, v, sort: str):
        if isinstance(v, tuple):  # an egglog primitive expression, e.g. (/ c 2.0)
            return PRIMITIVES[v[0]](*[self.primitive(a, sort) for a in v[1:]])
        if not isvar(v):
            return v
        if v not in self.primitives:
            self.primitives[v] = self._draw_primitive(sort)
        return self.primitives[v]

    def _draw_primitive(self, sort: str):
        rng = self.rng
        drawn = list(self.tensors.values())
        likely = drawn and rng.random() < 0.75  # the ndim or dtype of an operand: guards compare them
        if sort == "f64":
            return float(rng.choice(CONSTANTS))
        if sort == "String":
            return drawn[rng.integers(len(drawn))].type.dtype if likely else str(rng.choice(DTYPES))
        if sort == "i64":
            return drawn[rng.integers(len(drawn))].type.ndim if likely else int(rng.choice(NDIMS))
        if sort == "bool":
            return bool(rng.random() < 0.5)
        if sort == "IntVec":
            return tuple(int(i) for i in rng.permutation(int(rng.choice(NDIMS))))
        raise UnknownConstructor(f"cannot draw a value of sort {sort}")

    def build(self, pattern):
        if isvar(pattern) and self.derived.get(pattern, ("",))[0] == "term":  # a term a guard names
            return self.build(self.derived[pattern][1])
        if isvar(pattern):
            return self.operands.get(pattern, self.tensors[pattern])
        head, args = pattern[0], pattern[1:]
        if head == "Scalar":
            value, dtype, ndim = (self.primitive(a, s) for a, s in zip(args, ("f64", "String", "i64")))
            data = np.full((1,) * ndim, value, dtype=dtype)
            stored = data.reshape(-1)[0]
            if stored != value and not (math.isnan(value) and np.isnan(stored)):  # 0.5 as an int64 is another constant
                raise ValueError(f"{value} is not a {dtype}")
            # 1/3 as a float32; or NaN/inf, which the encoder keeps as an Array (encode.scalar_row), not
            # the Scalar the rule builds: either way the e-graph's right side is not the one built here
            self.rounded |= not math.isfinite(value) or float(stored) != value
            return et.constant(data)
        if head == "Ints":
            return et.constant(np.asarray(self.primitive(args[0], "IntVec"), dtype=self.primitive(args[1], "String")))
        ctor = SCHEMA.by_name[head]
        inputs = [self.build(a) for a in args[: ctor.n_inputs]]
        if head in INDEXED:
            self._bind_index(ctor, args[ctor.n_inputs:], inputs[0].ndim)
        props = [self._prop(head, a, c, inputs) for a, c in zip(args[ctor.n_inputs:], ctor.codecs)]
        # -1 is "x"; an index list is four numbers an entry (schema.encode_index)
        props = [c.decode(p) if c.kind in ("vec", "index", "repr") else p for p, c in zip(props, ctor.codecs)]
        node = ctor.make_op(props).make_node(*inputs)
        if self._matching is not None:
            for arg, term in zip(args[: ctor.n_inputs], node.inputs):
                if isvar(arg):
                    self._matching.setdefault(arg, []).append(term)
        return node.outputs[0]

    def _bind_index(self, ctor, props: tuple, ndim: int) -> None:
        """Draw an index list of ``ndim`` entries (as the op stores it: padded with whole slices)
        for an unbound ``idx_list`` variable, and bind the props derived from it as the op has them."""
        idx = props[0]
        if not isvar(idx) or idx in self.primitives:
            return
        if ndim == 0:
            raise IndexError("a 0-d operand has no axis to index")
        touched = int(self.rng.integers(1, ndim + 1))
        entries = [INDEX_ENTRIES[i] for i in self.rng.integers(len(INDEX_ENTRIES), size=touched)]
        if INDEXED[ctor.name] is not None:  # the index input takes one of the touched axes
            entries[int(self.rng.integers(touched))] = INDEXED[ctor.name]
        idx_list = tuple(entries) + (FULL_SLICE,) * (ndim - touched)
        self.primitives[idx] = encode_index(idx_list)
        op = ctor.make_op([idx_list] + [None] * (len(ctor.props) - 1))
        for arg, prop, codec in zip(props[1:], ctor.props[1:], ctor.codecs[1:]):
            if isvar(arg) and arg not in self.primitives:
                value = getattr(op, prop)
                self.primitives[arg] = tuple(value) if codec.kind == "vec" else value

    def _prop(self, head, arg, codec, inputs):
        # props that must agree with an input to type-check: drawn from that input
        if isvar(arg) and arg not in self.primitives and inputs:
            x = inputs[0]
            if head == "DimShuffle" and codec.sort == "i64":  # the input's ndim
                self.primitives[arg] = x.ndim
            elif head == "DimShuffle" and codec.sort == "IntVec":  # a permutation, maybe a new axis
                order = [int(i) for i in self.rng.permutation(x.ndim)]
                if len(order) < 3 and self.rng.random() < 0.5:
                    order.insert(int(self.rng.integers(len(order) + 1)), "x")
                self.primitives[arg] = tuple(order)
            elif head == "Softmax" and codec.sort == "i64":  # an axis of the input
                if x.ndim == 0:
                    raise TypeError("softmax needs an axis")
                self.primitives[arg] = int(self.rng.integers(x.ndim))
            elif head.startswith("CheckAndRaise_") and codec.sort == "String":  # an exception's name (or message)
                self.primitives[arg] = str(self.rng.choice(CHECK_EXCEPTIONS))
        return self.primitive(arg, codec.sort)
