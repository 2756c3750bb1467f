"""Both operand orders of Add and Mul: the extra commands that let a rule match a term whichever
order the encoder or another rule wrote its operands in (``operand_orders``)."""

from __future__ import annotations

import itertools
import re

from eqgraph.rules.forms import _subforms


#: constructors whose operands may be swapped: a rule's query is sent once per order of the
#: operands of each it names (``operand_orders``), so that it matches a term in whichever order
#: the encoder or a rule wrote it. Making the swapped e-node of every term instead would add an
#: e-node per Add and Mul term to every e-graph.
COMMUTATIVE = ("Add", "Mul")


def operand_orders(rule, text: str, ops=COMMUTATIVE) -> list[str]:
    """egglog commands for ``rule`` (a ``Rule``, sent as ``text``) with the operands of the Add and Mul
    terms of its query in the other orders: every combination but the written one, each
    named ``name~k`` (reported as ``name``); a birewrite's as rewrites, per direction. None
    where its query names a term and its swapped form itself (commute.egg's)."""
    if not re.search(rf"\((?:{'|'.join(map(re.escape, ops))})\s", text):   # no term to swap: nothing to read
        return []
    parts = _subforms(re.sub(r";[^\n]*", "", text))  # no comments: they may hold parentheses
    if rule.kind != "birewrite":
        return _variants(parts, f"{rule.name}~", ops)
    forward = ["rewrite", *parts[1:]]
    backward = ["rewrite", parts[2], parts[1], *parts[3:]]
    return _variants(forward, f"{rule.name}=>~", ops) + _variants(backward, f"{rule.name}<=~", ops)


def _variants(parts: list, prefix: str, ops) -> list[str]:
    """The command ``parts`` with its query (``parts[1]``) in each other operand order,
    each named ``prefix`` and a count."""
    query = parts[1]
    if _names_both_orders(query) or ":name" not in parts:
        return []
    found = []
    for k, variant in enumerate(_orders(query, ops)[1:], 1):
        new = list(parts)
        new[1] = variant
        if ":when" in parts:  # the guard of :same-dtype repeats the left side
            where = parts.index(":when") + 1
            new[where] = parts[where].replace(query, variant)
        new[parts.index(":name") + 1] = f'"{prefix}{k}"'
        found.append(re.sub(r"\s+", " ", "(" + " ".join(new) + ")"))
    return found


def _orders(form: str, ops=COMMUTATIVE) -> list[str]:
    """``form`` with the operands of each Add and Mul in it in either order: every
    combination, the form as written (its whitespace aside) first."""
    if not form.startswith("("):
        return [form]
    parts = _subforms(form)
    choices = [_orders(p, ops) for p in parts]
    found = ["(" + " ".join(combo) + ")" for combo in itertools.product(*choices)]
    if len(parts) == 3 and parts[0] in ops:
        found += [f"({parts[0]} {b} {a})" for a in choices[1] for b in choices[2]]
    return list(dict.fromkeys(found))


def _commutative_terms(form: str) -> list[tuple]:
    found, stack = [], [form]
    while stack:
        parts = _subforms(stack.pop())
        if len(parts) == 3 and parts[0] in COMMUTATIVE:
            found.append(tuple(parts))
        stack.extend(p for p in parts if p.startswith("("))
    return found


def _swapped(form: str) -> str | None:
    parts = _subforms(form) if form.startswith("(") else []  # (Op a b) as (Op b a)
    return f"({parts[0]} {parts[2]} {parts[1]})" if len(parts) == 3 else None


def _names_both_orders(query: str) -> bool:
    terms = set(_commutative_terms(query))
    return any((op, b, a) in terms for op, a, b in terms if a != b)
