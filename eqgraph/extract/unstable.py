"""Numerically unstable compositions: declared in the rule files, found in the e-graph.

A rule file declares a composition unstable with a comment line next to the rules
that give its stable form (egglog never sees it; eqgraph reads it like the
``;; eqgraph: saturate`` line):

    ;; eqgraph: unstable (Log (Add (Scalar 1.0 d n) x))   ; log(1 + x) loses x below an ulp of 1

The pattern is written like a rule's left side.  An e-node is unstable when it
matches a pattern at its root, where a nested pattern matches a child e-class
that has *a member* matching it: ``Log(c)`` is unstable as soon as ``c`` can be
``1 + x``.  This makes instability a fixed property of the e-node, whatever the
extraction picks below it, so sharing cannot change it; and extraction ranks
DAGs by how many unstable e-nodes they hold before their run time (see
``extraction._Pricer``).

The operands of a commutative op (add, mul: ``ScalarOp.commutative``) match in
either order: ``y * x`` computes the same bits as ``x * y``, and the e-graph holds a
product in whichever order the encoder or a rule wrote it, so a pattern written for one
order must not let extraction keep the other (``s * (g/s + c)`` escaped
``(Mul (Add (TrueDiv g s) c) s)``).
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from dataclasses import dataclass

from unification import Var

from eqgraph.egraph.snapshot import EGraphData, ENode
from eqgraph.rules.pattern import parse_pattern
from eqgraph.rules.forms import RuleFileError, split_forms
from eqgraph.rules.ruleset import builtin_names, load
from eqgraph.tensor.elemwise import SCALAR_OPS, Elemwise

DIRECTIVE = re.compile(r"^;;\s*eqgraph:\s*unstable\b")
RULESET_DECLARATION = re.compile(r"^\(ruleset [^)\s]+\) ")  # what ruleset.parse_rules puts first


@dataclass(frozen=True)
class UnstablePattern:
    text: str                # "(Log (Add (Scalar 1.0 d n) x))"
    why: str                 # the comment after it
    source: tuple[str, int]  # (file, line)

    def __str__(self):
        return f"{self.text} ({self.source[0]}:{self.source[1]}{': ' + self.why if self.why else ''})"


def unstable_patterns(rulesets=None) -> list[UnstablePattern]:
    """The unstable compositions declared in ``rulesets`` (specs as ``eqgraph.function``
    takes them; default: every built-in rule file)."""
    specs = builtin_names() if rulesets is None else rulesets
    found: list[UnstablePattern] = []
    for spec in specs:
        ruleset = load(spec)
        if id(ruleset) in _SEEN:
            found.extend(_SEEN[id(ruleset)][1])
            continue
        mine = []
        # the program is the file line for line, after the ruleset's declaration on line 1
        program = RULESET_DECLARATION.sub("", ruleset.program, count=1)
        for number, line in enumerate(program.splitlines(), 1):
            m = DIRECTIVE.match(line.strip())
            if m:
                mine.append(_declaration(line.strip()[m.end():], (ruleset.source, number)))
        _SEEN[id(ruleset)] = (ruleset, mine)  # the Ruleset kept alive, so its id is not reused
        found.extend(mine)
    return found


def _declaration(rest: str, where: tuple[str, int]) -> UnstablePattern:
    """The pattern and the comment after it, from what follows ``;; eqgraph: unstable``."""
    pattern, why = rest.strip(), ""
    try:
        forms = split_forms(pattern.split(";", 1)[0], where[0])
        if len(forms) != 1:
            raise ValueError("expected one pattern")
        pattern = forms[0][0]
        why = rest.split(";", 1)[1].strip() if ";" in rest else ""
        parse_pattern(pattern, {})
    except (RuleFileError, ValueError, IndexError) as err:
        raise RuleFileError(f"{where[0]}:{where[1]}: an unstable declaration is ';; eqgraph: unstable "
                            f"(Op ...)  ; why', not {rest.strip()!r} ({err})") from None
    return UnstablePattern(pattern, why, where)


_SEEN: dict = {}  # id(Ruleset) -> (it, its declarations); load caches Rulesets, so this stays small


def unstable_nodes(data: EGraphData, patterns: list[UnstablePattern]) -> dict[str, UnstablePattern]:
    """e-node id -> the first pattern it matches at its root, for every unstable e-node."""
    by_op = _by_root(tuple(patterns))
    commutative = _commutative_constructors(data)
    found = {}
    for node_id in _candidates(data, by_op):
        node = data.nodes[node_id]
        for tree, p in by_op[node.op]:
            if next(_match_node(data, commutative, tree, node, {}), None) is not None:
                found[node.id] = p
                break
    return found


@functools.lru_cache(maxsize=64)  # every compile asks for the same patterns: parse them once
def _by_root(patterns: tuple[UnstablePattern, ...]) -> dict[str, list]:
    """Root constructor -> [(parsed pattern, its declaration)]."""
    by_op: dict[str, list] = {}
    for p in patterns:
        tree = parse_pattern(p.text, {})
        by_op.setdefault(tree[0], []).append((tree, p))
    return by_op


def _candidates(data: EGraphData, by_op: dict) -> list[str]:
    """The e-nodes that may match a pattern of ``by_op``, in e-graph order: those of a pattern's
    root constructor whose children hold the constructor of one of its sub-patterns. They are
    found from that constructor's e-nodes upwards, which are few, rather than by trying every
    e-node (on a large e-graph with no unstable term that search costs much and finds none)."""
    needs: dict[str, set] = defaultdict(set)   # constructor -> roots of patterns with it as a child
    anywhere = set()                            # roots of patterns whose operands are all variables
    for root, trees in by_op.items():
        for tree, _ in trees:
            inner = [sub[0] for sub in tree[1:] if isinstance(sub, tuple)]
            if inner:
                needs[inner[0]].add(root)
            else:
                anywhere.add(root)
    wanted = set()
    for node in data.nodes.values():
        if node.op in anywhere:
            wanted.add(node.id)
        for root in needs.get(node.op, ()):
            wanted.update(p for p in data.parents.get(node.eclass, ()) if data.nodes[p].op == root)
    return [node_id for node_id in data.nodes if node_id in wanted]


def _commutative_constructors(data: EGraphData) -> frozenset[str]:
    """The constructors of this e-graph whose two operands may be swapped."""
    return frozenset(name for name, ctor in data.constructors.items()
                     if ctor.op_class is Elemwise and SCALAR_OPS[ctor.fixed["name"]].commutative)


def _match_node(data: EGraphData, commutative, tree: tuple, node: ENode, bound: dict):
    """Every binding of the pattern's variables under which ``node`` matches ``tree``, with
    the operands of a ``commutative`` constructor in either order.  Children come first in
    a constructor, then its primitive arguments (egraph/schema.py)."""
    if node.op != tree[0] or len(tree) - 1 != len(node.children) + len(node.args):
        return
    for sub, value in zip(tree[1 + len(node.children):], node.args):
        bound = _match_value(sub, value, bound)
        if bound is None:
            return
    subs = tree[1:1 + len(node.children)]
    yield from _match_children(data, commutative, subs, node.children, bound)
    if node.op in commutative and len(node.children) == 2:
        yield from _match_children(data, commutative, subs, node.children[::-1], bound)


def _match_children(data: EGraphData, commutative, subs, classes, bound: dict):
    if not subs:
        yield bound
        return
    for first in _match_class(data, commutative, subs[0], classes[0], bound):
        yield from _match_children(data, commutative, subs[1:], classes[1:], first)


def _match_class(data: EGraphData, commutative, sub, eclass: str, bound: dict):
    if type(sub) is Var:  # not isinstance: Var's metaclass hashes the whole subpattern to check
        result = _bind(sub, ("class", eclass), bound)
        if result is not None:
            yield result
    elif isinstance(sub, tuple):  # any member of the class may match
        for member in data.classes.get(eclass, ()):
            yield from _match_node(data, commutative, sub, data.nodes[member], bound)


def _match_value(sub, value, bound: dict):
    if type(sub) is Var:
        return _bind(sub, ("value", repr(value)), bound)
    if isinstance(sub, tuple):
        return None  # egglog expressions over primitives ((vec-of 0)) are not patterns here
    return bound if sub == value and isinstance(sub, bool) == isinstance(value, bool) else None


def _bind(var: Var, what, bound: dict):
    if bound.get(var, what) != what:
        return None
    return {**bound, var: what}
