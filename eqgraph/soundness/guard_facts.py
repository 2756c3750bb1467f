"""What the soundness checker runs beside a rule so that its guards can hold.

A rule checked alone (``check._alone``) meets an e-graph with the type analyses and nothing
else of its file. A guard may read a relation that other rules of the same file fill:
``index-add`` asks for ``(broadcast-safe s t)``, which ``broadcast-safe-slice`` derives from
``(safe-slice s)``, which ``safe-slice`` derives from the index's facts. Checked without them,
such a rule never matches. ``fact_rules`` finds those rules (transitively); they add facts and
no equality, so they cannot make the two sides one e-class themselves.

A general rule's right side may also read what its guards compute from the left side (an
index's facts, the matched term's ndim, a term of its operands, a row of a fact table):
``computed_by_guards`` says how, ``guard_value`` computes it for a drawn left side. And
``alias_operands`` lets one operand stand for another, for guards that ask two operands for
one run-time shape.
"""

from __future__ import annotations

import functools
import re

from unification import isvar

from eqgraph.rules.forms import _subforms
from eqgraph.rules.ruleset import Rule, Ruleset

_DECLARED = re.compile(r"\((?:relation|function)\s+([^\s()]+)")


def fact_rules(ruleset: Ruleset, rule: Rule) -> tuple[list[Rule], int]:
    """(the rules of ``ruleset`` that fill the relations ``rule``'s guards read, transitively;
    how many layers deep they go). Only rules that union nothing are taken."""
    declared = set(_DECLARED.findall(ruleset.program))
    fillers = {}
    for other in ruleset.rules:
        if other.kind == "rule" and other.name != rule.name and "(union" not in other.text:
            for name in _filled(other) & declared:
                fillers.setdefault(name, []).append(other)
    wanted, found, depth = _read(rule) & declared, [], 0
    while wanted:
        layer = [r for name in sorted(wanted) for r in fillers.get(name, ()) if r not in found]
        if not layer:
            break
        found += list(dict.fromkeys(layer))
        depth += 1
        wanted = set().union(*(_read(r) & declared for r in layer))
    return found, depth


def _read(rule: Rule) -> set[str]:
    """The relations and functions a rule's query names."""
    parts = _subforms(rule.text)
    return _heads(parts[1]) if rule.kind == "rule" and len(parts) > 1 else _heads(rule.when or "")


def _filled(rule: Rule) -> set[str]:
    """The relations a rule's actions add rows to (``(broadcast-safe s t)``, ``(set (f x) v)``)."""
    parts = _subforms(rule.text)
    actions = _subforms(parts[2]) if len(parts) > 2 and parts[2].startswith("(") else []
    names = set()
    for action in actions:
        words = _subforms(action) if action.startswith("(") else []
        if words and words[0] == "set" and len(words) > 1 and words[1].startswith("("):
            names.add(_subforms(words[1])[0])
        elif words and words[0] not in ("let", "union", "delete", "panic"):
            names.add(words[0])
    return names


def _heads(text: str) -> set[str]:
    return set(re.findall(r"\(([^\s()]+)", text))


# -- values a general rule's guards compute, for the right side the checker builds ---------------
# ``(= j (vec-get t 1))`` reads j off the index's facts and ``(= ns (ndim e))`` the matched term's
# ndim; a right side built of j or ns is checkable once the left side is drawn. A set of one
# value (an analysis) is held as its element, as check.PRIMITIVES holds it.
_ANALYSES = {"dtype": lambda t: t.type.dtype, "ndim": lambda t: t.type.ndim}
_PRIMITIVES = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
               "min": min, "max": max, "neg": lambda a: -a, "vec-get": lambda v, i: v[i], "vec-length": len,
               "vec-of": lambda *items: tuple(items), "set-get": lambda one, i: one, "set-of": lambda one: one}


def computed_by_guards(facts, known: set, matched, tables: dict) -> dict:
    """Variable -> how the checker computes it, for each guard whose variable nothing else binds
    and whose other parts read only ``known`` variables, the matched term ``matched`` and what
    earlier such guards computed:

    - ``(= v expression)`` or ``(= (ndim x) (set-of v))``: ("guard", (expression, matched));
    - ``(= v (Op ...))``, a term of known variables: ("term", the term), built as the left side is;
    - ``(relation ... v ...)`` of a relation the files state as facts (``tables``, ``fact_tables``):
      ("guard", (("@lookup", relation, arguments, position), matched)), the row that fits."""
    known, found = set(known) | {matched}, {}
    for fact in facts:
        if not isinstance(fact, tuple):
            continue
        if fact[0] in tables:
            unknown = [(k, a) for k, a in enumerate(fact[1:]) if isvar(a) and a not in known]
            if unknown and all(_reads_only(a, known) for a in fact[1:] if not any(a is u for _, u in unknown)):
                positions = tuple(k for k, _ in unknown)
                for position, v in unknown:
                    lookup = ("@lookup", fact[0], tuple(tables[fact[0]]), fact[1:], position, positions)
                    found[v] = ("guard", (lookup, matched))
                    known.add(v)
            continue
        if len(fact) != 3 or fact[0] != "=":
            continue
        a, b = fact[1], fact[2]
        if isinstance(b, tuple) and len(b) == 2 and b[0] == "set-of" and isvar(b[1]):
            a, b = b[1], a      # (= (ndim x) (set-of v)): v is x's ndim
        elif not isvar(a) or a in known:
            a, b = b, a
        if not isvar(a) or a in known:
            continue
        if _reads_only(b, known):
            found[a] = ("guard", (b, matched))
            known.add(a)
        elif isinstance(b, tuple) and b[0][:1].isupper() and _term_of(b, known):
            found[a] = ("term", b)
            known.add(a)
    return found


def _term_of(term, known: set) -> bool:
    """Whether ``term`` is a constructor term over ``known`` variables and constants."""
    if isvar(term):
        return term in known
    if not isinstance(term, tuple):
        return True
    return all(_term_of(a, known) for a in term[1:])


@functools.lru_cache(maxsize=64)
def fact_tables(*programs: str) -> dict:
    """Relation -> its rows, for the relations ``programs`` declare and state facts of
    (``(pads 0 1 (vec-of -1))``; vectors as tuples)."""
    from eqgraph.rules.pattern import parse_pattern
    from eqgraph.rules.ruleset import split_forms

    tables: dict = {}
    for program in programs:
        declared = set(re.findall(r"\(relation\s+([^\s()]+)", program))
        for form, _ in split_forms(program, "<facts>"):
            head = _subforms(form)[0] if form.startswith("(") else ""
            if head in declared:
                row = parse_pattern(form, {})[1:]
                tables.setdefault(head, []).append(tuple(_constant(v) for v in row))
    return tables


def _constant(value):
    if isinstance(value, tuple):
        return tuple(_constant(v) for v in value[1:]) if value[0] in ("vec-of", "vec-empty") else value
    return value


def _reads_only(expression, known: set) -> bool:
    if isvar(expression):
        return expression in known
    if not isinstance(expression, tuple):
        return True
    return (expression[0] in _ANALYSES or expression[0] in _PRIMITIVES) and all(
        _reads_only(a, known) for a in expression[1:])


def guard_value(expression, matched, primitives: dict, term_of):
    """The value of a guard's expression (``computed_by_guards``): variables from ``primitives``,
    analyses of tensors from ``term_of(variable)`` (the matched term for ``matched``)."""
    if isvar(expression):
        return primitives[expression]
    if not isinstance(expression, tuple):
        return expression
    head, args = expression[0], expression[1:]
    if head == "@lookup":   # the row of a fact table that fits the known arguments
        relation, rows, arguments, position, unknown = args
        values = [None if k in unknown else guard_value(a, matched, primitives, term_of)
                  for k, a in enumerate(arguments)]
        for row in rows:
            if all(v is None or v == r for v, r in zip(values, row)):
                return row[position]
        raise ValueError(f"no fact ({relation} {' '.join(map(str, values))}) holds")
    if head in _ANALYSES:
        return _ANALYSES[head](term_of(args[0]))
    return _PRIMITIVES[head](*[guard_value(a, matched, primitives, term_of) for a in args])


def alias_operands(tensors: dict, rng) -> None:
    """On half the draws, one tensor variable of ``tensors`` (pattern variable -> graph input)
    stands for another's input: ``(= r (shape-root x)) (= r (shape-root y))`` holds where x is y,
    and x = y is an instance of every pattern that names both."""
    names = list(tensors)
    if len(names) > 1 and rng.random() < 0.5:
        first, second = sorted(rng.choice(len(names), size=2, replace=False))
        tensors[names[second]] = tensors[names[first]]
