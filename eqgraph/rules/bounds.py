"""The most matches a rule's query can have, read off the e-graph's table sizes.

egglog matches a query by joining tables: each application of a constructor, function or
relation in it is an atom over that function's table (its inputs, then its output). The
matches are at most the product of the tables' sizes, and an atom whose inputs the rest of
the query already binds adds no factor at all: a table holds one row per input tuple. So

    (rewrite (Mul x (Scalar 1.0 d n)) x :when ((= (set-of n) (ndim x))))

has at most |Scalar| x |Mul| matches: once a Scalar row and a Mul row are chosen, ``ndim x``
is a lookup and ``set-of`` a computation. ``most_matches`` takes the atoms in a greedy order
(lookups first, else the smallest table) and multiplies; any order gives an upper bound.

Saturation (egraph/saturate.py) uses the bound to run a step as egglog's plain, incremental
``run`` when the bound proves that no rule could exceed the match limit and the step cannot
outgrow the node cap, the two things a back-off step checks by searching the whole e-graph.
"""

from __future__ import annotations

import functools
import itertools
import math
import re

from eqgraph.rules.forms import _subforms
from eqgraph.rules.orders import operand_orders
from eqgraph.rules.ruleset import Rule

#: tokens that are values, not variables (egglog's literals)
_LITERAL = re.compile(r'^(-?\d[\d.e+-]*|"[^"]*"|true|false|NaN|-?inf)$')


class Query:
    """One egglog query as atoms ``(function, inputs, output)`` over variable names."""

    def __init__(self, facts: list[str]):
        self.atoms: list[tuple[str, tuple[str, ...], str]] = []
        self.constants: set[str] = set()
        self._parent: dict[str, str] = {}
        self._fresh = itertools.count()
        for fact in facts:
            self._fact(fact)
        find = self._find
        self.atoms = [(f, tuple(find(i) for i in inputs), find(out)) for f, inputs, out in self.atoms]
        self.constants = {find(c) for c in self.constants}
        self.tables = tuple(dict.fromkeys(f for f, _, _ in self.atoms))
        self._known: dict[tuple, float] = {}  # the sizes of ``tables`` -> the bound

    def most_matches(self, sizes: dict[str, int]) -> float:
        """At most how many matches the query has in an e-graph whose tables hold ``sizes`` rows
        (``math.inf`` where an atom can neither be looked up nor enumerated)."""
        key = tuple(sizes.get(t) for t in self.tables)  # saturation asks again while they stay the same
        if key not in self._known:
            if len(self._known) > 64:
                self._known.clear()
            self._known[key] = self._most_matches(sizes)
        return self._known[key]

    def _most_matches(self, sizes: dict[str, int]) -> float:
        bound, matches, pending = set(self.constants), 1, list(self.atoms)
        while pending:
            ready = [atom for atom in pending if bound.issuperset(atom[1])]
            if ready:  # a lookup or a computation: one row at most
                for atom in ready:
                    bound.add(atom[2])
                    pending.remove(atom)
                continue
            tables = [atom for atom in pending if atom[0] in sizes]
            if not tables:  # a primitive whose inputs nothing binds: egglog would refuse the rule
                return math.inf
            atom = min(tables, key=lambda a: sizes[a[0]])
            matches *= sizes[atom[0]]
            if not matches:
                return 0
            bound.update(atom[1])
            bound.add(atom[2])
            pending.remove(atom)
        return matches

    def _fact(self, fact: str) -> None:
        parts = _subforms(fact) if fact.startswith("(") else []
        if parts and parts[0] == "=":
            first, *rest = [self._term(p) for p in parts[1:]]
            for other in rest:
                self._parent[self._find(other)] = self._find(first)
        else:
            self._term(fact)

    def _term(self, text: str) -> str:
        """The variable standing for ``text``'s value, adding an atom per application."""
        if not text.startswith("("):
            if _LITERAL.match(text):
                self.constants.add(text)
            return text
        head, *args = _subforms(text)
        inputs = tuple(self._term(a) for a in args)
        output = f"%{next(self._fresh)}"  # not a name egglog accepts: no clash with the rule's
        self.atoms.append((head, inputs, output))
        return output

    def _find(self, name: str) -> str:
        while name in self._parent:
            name = self._parent[name]
        return name


@functools.cache
def queries(rule: Rule, swapped_ops: tuple) -> tuple[tuple[Query, int], ...]:
    """Per direction of ``rule`` (a birewrite has two): its query and how many egglog rules run
    it (the rule itself and its ``operand_orders`` for ``swapped_ops``, which match the same
    number of times)."""
    if rule.kind == "rule":
        body = _subforms(rule.text)[1]
        return ((Query(_subforms(body)), 1 + len(operand_orders(rule, rule.text, swapped_ops))),)
    guards = _subforms(rule.when) if rule.when else []
    variants = operand_orders(rule, rule.text, swapped_ops)
    if rule.kind == "rewrite":
        return ((Query([rule.lhs, *guards]), 1 + len(variants)),)
    # a birewrite's variants are named "name=>~k" and "name<=~k", one direction each
    return tuple((Query([side, *guards]), 1 + sum(f'{arrow}~' in v for v in variants))
                 for arrow, side in (("=>", rule.lhs), ("<=", rule.rhs)))


def most_matches_and_nodes(rule: Rule, swapped_ops: tuple, sizes: dict[str, int]) -> tuple[float, float]:
    """(the most matches any one of the egglog rules sent for ``rule`` can have, the most
    e-nodes all of them together can add in one step), in an e-graph of table sizes ``sizes``."""
    most, nodes = 0, 0
    for (query, sent), per_match in zip(queries(rule, swapped_ops), rule.new_nodes_per_match().values()):
        matches = query.most_matches(sizes)
        most, nodes = max(most, matches), nodes + matches * sent * per_match
    return most, nodes
