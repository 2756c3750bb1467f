"""What the explorer page shows, as plain data: e-classes, e-nodes, rules, the report.

Built once in Python from an ``EGraphView`` (the snapshot, the extraction and the
saturation report) and embedded in the page as JSON, so the page needs no server. E-classes,
e-nodes and rules are lists referred to by index, which keeps a 20,000-e-node e-graph to a
few megabytes.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

from eqgraph.egraph.snapshot import LEAVES
from eqgraph.explore.provenance import explain
from eqgraph.extract.unstable import unstable_nodes, unstable_patterns

INF = float("inf")


def build(view, title: str = "eqgraph e-graph", unstable=None) -> dict:
    """The page's data for ``view`` (an ``EGraphView``): see ``explorer.js`` for its use.
    ``unstable``: the ``UnstablePattern``s extraction avoided (default: those declared in the
    rule files that were run, as ``eqgraph.function`` reads them)."""
    rows = _Rows(view, _patterns_run(view.report) if unstable is None else unstable)
    nodes = [rows.node(n) for n in rows.node_ids]
    classes = [rows.eclass(c) for c in rows.class_ids]
    outputs = [rows.class_index[view.data.class_of_id[k]] for k in view.data.output_ids]
    return {
        "title": title, "classes": classes, "nodes": nodes,
        "outputs": [{"cls": c, "name": _output_name(view.data, i)} for i, c in enumerate(outputs)],
        "rules": [_rule(r, view.report, sorted(rows.touched.get(i, ()))) for i, r in enumerate(rows.rules)],
        "unstable": [{"text": p.text, "why": p.why, "file": p.source[0], "line": p.source[1]} for p in rows.patterns],
        "before": _reachable(outputs, classes, nodes, _before_extraction(nodes)),
        "after": _reachable(outputs, classes, nodes, None),
        "report": _report(view.report, view.extraction),
    }


class _Rows:
    """The page's rows for e-nodes and e-classes, and the indices they refer to each other by."""

    def __init__(self, view, patterns):
        self.view, data = view, view.data
        self.class_ids = list(data.classes)
        self.class_index = {c: i for i, c in enumerate(self.class_ids)}
        self.node_ids = [n for c in self.class_ids for n in data.classes[c]]
        self.node_index = {n: i for i, n in enumerate(self.node_ids)}
        self.rules = sorted(view.report.rules.values(), key=lambda r: r.name)
        self.rule_index = {r.name: i for i, r in enumerate(self.rules)}
        self.explained = explain(data, self.rules)
        self.unstable = unstable_nodes(data, patterns)
        self.patterns = sorted(set(self.unstable.values()), key=str)
        self.pattern_index = {p: i for i, p in enumerate(self.patterns)}
        self.weight = _stability_weight(view.extraction, self.unstable)
        self.in_term = _unstable_in_chosen_terms(view.extraction, self.unstable, self.class_ids)
        self.names = _user_names(data)
        self.touched: dict[int, set] = defaultdict(set)  # rule -> e-classes it explains a member of

    def class_cost(self, c: str) -> float:
        """The cost of ``c``'s chosen term, without the weight that ranks unstable terms last."""
        return self.view.extraction.cost.get(c, INF) - self.weight * self.in_term.get(c, 0)

    def node(self, node_id: str) -> dict:
        node, unstable = self.view.data.nodes[node_id], self.unstable
        own = self.view.extraction.node_cost.get(node_id, INF) - (self.weight if node_id in unstable else 0.0)
        orig = self.view.from_graph(node)
        # the user's own term was not added by a rule, though a rule may derive it too (a
        # birewrite's way back)
        why = [] if orig else [self.rule_index[r.name] for r in self.explained.get(node_id, ())
                               if r.name in self.rule_index]
        for r in why:
            self.touched[r].add(self.class_index[node.eclass])
        return {"op": node.op, "label": _label(self.view.data, node, self.names), "cls": self.class_index[node.eclass],
                "ch": [self.class_index[c] for c in node.children], "own": _number(own),
                "total": _number(own + math.fsum(self.class_cost(c) for c in set(node.children))),
                "orig": orig, "rules": why,
                "unstable": self.pattern_index[unstable[node_id]] if node_id in unstable else None}

    def eclass(self, c: str) -> dict:
        data, extraction = self.view.data, self.view.extraction
        chosen = extraction.choice.get(c)
        dtype, shape = data.static_type(c)
        return {"id": c, "name": self.names.get(c), "type": str(extraction.types.get(c, "")),
                "dtype": dtype, "shape": _shape(shape), "nodes": [self.node_index[n] for n in data.classes[c]],
                "chosen": self.node_index.get(chosen), "cost": _number(self.class_cost(c)),
                "parents": sorted({self.node_index[p] for p in data.parents.get(c, ())}),
                "shared": c in extraction.shared}


def _patterns_run(report) -> list:
    """The unstable compositions declared in the rule files whose rules saturation ran. A
    ruleset passed as a string has no file to read again: its declarations are not known."""
    files = sorted({rule.source[0] for rule in report.rules.values() if Path(rule.source[0]).is_file()})
    return unstable_patterns(files)


def _number(x: float):
    """JSON has no infinity: an e-node that cannot be built costs None."""
    return None if x is None or math.isinf(x) or math.isnan(x) else round(x, 3)


def _shape(shape):
    return None if shape is None else [None if s is None else int(s) for s in shape]


def _user_names(data) -> dict[str, str]:
    """e-class -> the name the user gave a variable of it (inputs first: ``x`` rather than
    a name given to ``x + 0``)."""
    names: dict[str, str] = {}
    ordered = sorted(data.ids.items(), key=lambda kv: kv[0].owner is not None)
    for var, k in ordered:
        eclass = data.class_of_id.get(k)
        if var.name and eclass is not None:
            names.setdefault(eclass, var.name)
    return names


def _output_name(data, i: int) -> str:
    var = data.fgraph.outputs[i]
    return var.name or f"output {i}"


def _label(data, node, names: dict) -> str:
    """What a box shows for an e-node: the user's name for an input, a constant's value, or
    the constructor with its primitive arguments."""
    if node.op == "Var":
        return names.get(node.eclass) or f"Var {node.args[0]}"
    if node.op == "Scalar":
        return repr(node.args[0]) if len(node.args) else "Scalar"
    if node.op == "Array":
        const = data.constants.get(node.args[0])
        text = str(const) if const is not None else f"Array {node.args[0]}"
        return text if len(text) <= 40 else text[:37] + "..."
    args = " ".join(str(a) for a in node.args)
    return f"{node.op} {args}" if args else node.op


def _stability_weight(extraction, unstable: dict) -> float:
    """The weight extraction added to each unstable e-node's own cost (``_Pricer``: one more
    than the sum of every priced e-node's cost), recovered from the prices so that the page
    shows run-time costs; 0 where the prices do not fit that shape."""
    priced = [(n, c) for n, c in extraction.node_cost.items() if c < INF]
    n_unstable = sum(1 for n, _ in priced if n in unstable)
    if not n_unstable:
        return 0.0
    weight = (math.fsum(c for _, c in priced) + 1.0) / (1 + n_unstable)
    return weight if all(c >= weight for n, c in priced if n in unstable) else 0.0


def _unstable_in_chosen_terms(extraction, unstable: dict, class_ids) -> dict[str, int]:
    """e-class -> unstable e-nodes in its chosen term (each use counted, as ``choose`` does)."""
    counts: dict[str, int] = {}
    for root in class_ids:
        stack = [(root, False)]
        while stack:  # iterative: chains of thousands of e-classes
            c, ready = stack.pop()
            if c in counts or c not in extraction.choice:
                continue
            node = extraction.data.nodes[extraction.choice[c]]
            if not ready:
                stack.append((c, True))
                stack.extend((child, False) for child in set(node.children) if child not in counts)
                continue
            counts[c] = (node.id in unstable) + sum(counts.get(child, 0) for child in set(node.children))
    return counts


def _before_extraction(nodes: list):
    """How the graph before extraction picks an e-class's member: the user's term, else one
    that no rule explains (the encoder folds some terms, a broadcast constant, so the
    user's ``1 + exp(x)`` is an ``Add`` over other children), else none."""
    def pick(members: list[int]):
        mine = next((n for n in members if nodes[n]["orig"]), None)  # an index: 0 is one
        return mine if mine is not None else next((n for n in members if not nodes[n]["rules"]), None)
    return pick


def _reachable(roots: list[int], classes: list, nodes: list, pick) -> list[int]:
    """The e-nodes of one graph below ``roots``: per e-class the chosen e-node (``pick``
    None: the extracted graph) or the member ``pick(members)`` returns (the user's graph)."""
    seen, order, stack = set(), [], list(roots)
    while stack:
        c = stack.pop()
        if c in seen:
            continue
        seen.add(c)
        members = classes[c]["nodes"]
        node = classes[c]["chosen"] if pick is None else pick(members)
        if node is None:
            continue
        order.append(node)
        stack.extend(nodes[node]["ch"])
    return order


def _rule(rule, report, touched: list[int]) -> dict:
    seconds = report.rule_seconds or report.egglog_seconds
    return {"name": rule.name, "ruleset": rule.ruleset, "kind": rule.kind, "file": rule.source[0],
            "line": rule.source[1], "lhs": rule.lhs, "rhs": rule.rhs, "when": rule.when,
            "matches": int(report.matches.get(rule.name, 0)), "ms": round(1e3 * seconds.get(rule.name, 0.0), 3),
            "classes": touched}


def _report(report, extraction) -> dict:
    return {"stop": report.stop_reason, "iterations": report.iterations, "sizes": list(report.sizes),
            "seconds": round(report.seconds, 4), "timed": "wall" if report.rule_seconds else "egglog",
            "rulesets": {k: round(v, 4) for k, v in sorted(report.ruleset_seconds.items(), key=lambda kv: -kv[1])},
            "dag_cost": _number(extraction.dag_cost), "stopped": extraction.stopped,
            "leaves": list(LEAVES)}
