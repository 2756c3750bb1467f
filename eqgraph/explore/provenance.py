"""Which rewrite rule added each e-node: found by matching, after saturation.

egglog 13 keeps no record of which rule's union made an e-node, and recording it ourselves
would mean rewriting every rule's actions. So the
question is answered as the text view answers it (``extract/view.explaining_rules``), but
with one binding for both sides: a rule explains an e-node when its right-hand side matches
the e-node at its root and its left-hand side matches another member of the same e-class
*under the same bindings* of the pattern variables. That is what a firing of the rule there
would have produced. It is an explanation, not a log: a rule whose ``:when`` guard failed
still explains a member that another rule made the same way, and a member built by a
plain ``(rule ... (union ...))`` is explained by none.

A pattern's primitive sub-expressions (``(* 2.0 c)`` computing a constant) match any value:
they are computed by egglog, not matched.
"""

from __future__ import annotations

from collections import defaultdict

from unification import Var

from eqgraph.egraph.snapshot import EGraphData, ENode
from eqgraph.rules.pattern import parse_pattern


def rule_sides(rules) -> dict[str, list]:
    """Root constructor of a right-hand side -> [(rule, parsed lhs, parsed rhs)], both
    directions of a birewrite. Rules with no patterns, or a bare variable on the right
    (``(rewrite (Mul x 1) x)`` merges two e-classes and adds no e-node), are left out."""
    by_root: dict[str, list] = defaultdict(list)
    for rule in rules:
        if rule.lhs is None or rule.rhs is None:
            continue
        directions = [(rule.lhs, rule.rhs)] + ([(rule.rhs, rule.lhs)] if rule.kind == "birewrite" else [])
        for lhs, rhs in directions:
            variables: dict = {}  # shared: the two sides bind the same variables
            left, right = parse_pattern(lhs, variables), parse_pattern(rhs, variables)
            if isinstance(right, tuple):
                by_root[right[0]].append((rule, left, right))
    return by_root


def explain(data: EGraphData, rules) -> dict[str, list]:
    """e-node id -> the rules that explain it (see the module docstring), for every e-node
    that some rule explains."""
    by_root = rule_sides(rules)
    found: dict[str, list] = {}
    for node in data.nodes.values():
        for rule, left, right in by_root.get(node.op, ()):
            if _explains(data, node, left, right) and rule not in found.get(node.id, ()):
                found.setdefault(node.id, []).append(rule)
    return found


def _explains(data: EGraphData, node: ENode, left, right) -> bool:
    for bound in _match_node(data, right, node, {}):
        if type(left) is Var:  # (rewrite x (...)): the left side is the e-class itself
            if _bind(left, node.eclass, bound) is not None:
                return True
            continue
        for member in data.classes[node.eclass]:
            if member != node.id and next(_match_node(data, left, data.nodes[member], bound), None) is not None:
                return True
    return False


def _match_node(data: EGraphData, tree: tuple, node: ENode, bound: dict):
    """Every binding under which ``node`` matches ``tree`` at its root. A constructor's
    children come first, then its primitive arguments (egraph/schema.py)."""
    if node.op != tree[0] or len(tree) - 1 != len(node.children) + len(node.args):
        return
    for sub, value in zip(tree[1 + len(node.children):], node.args):
        if isinstance(sub, tuple):
            continue  # a primitive expression: egglog computed it
        bound = _bind(sub, ("value", repr(value)), bound) if type(sub) is Var else (
            bound if sub == value and isinstance(sub, bool) == isinstance(value, bool) else None)
        if bound is None:
            return
    yield from _match_children(data, tree[1:1 + len(node.children)], node.children, bound)


def _match_children(data: EGraphData, subs, classes, bound: dict):
    if not subs:
        yield bound
        return
    for first in _match_class(data, subs[0], classes[0], bound):
        yield from _match_children(data, subs[1:], classes[1:], first)


def _match_class(data: EGraphData, sub, eclass: str, bound: dict):
    if type(sub) is Var:  # not isinstance: Var's metaclass hashes the whole subpattern to check
        result = _bind(sub, eclass, bound)
        if result is not None:
            yield result
    elif isinstance(sub, tuple):  # any member of the e-class may match
        for member in data.classes.get(eclass, ()):
            yield from _match_node(data, sub, data.nodes[member], bound)


def _bind(var: Var, what, bound: dict):
    if bound.get(var, what) != what:
        return None
    return {**bound, var: what}
