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
    data, extraction, report = view.data, view.extraction, view.report
    class_ids = list(data.classes)
    class_index = {c: i for i, c in enumerate(class_ids)}
    node_ids = [n for c in class_ids for n in data.classes[c]]
    node_index = {n: i for i, n in enumerate(node_ids)}
    rules = sorted(report.rules.values(), key=lambda r: r.name)
    rule_index = {r.name: i for i, r in enumerate(rules)}
    explained = explain(data, rules)
    unstable = unstable_nodes(data, _patterns_run(report) if unstable is None else unstable)
    patterns = sorted(set(unstable.values()), key=str)
    pattern_index = {p: i for i, p in enumerate(patterns)}
    weight = _stability_weight(extraction, unstable)
    in_term = _unstable_in_chosen_terms(extraction, unstable, class_ids)
    names = _user_names(data)
    outputs = [data.class_of_id[k] for k in data.output_ids]

    def cost_of_class(c: str) -> float:
        return extraction.cost.get(c, INF) - weight * in_term.get(c, 0)

    touched: dict[int, set] = defaultdict(set)
    nodes = []
    for node_id in node_ids:
        node = data.nodes[node_id]
        own = extraction.node_cost.get(node_id, INF) - (weight if node_id in unstable else 0.0)
        children = [class_index[c] for c in node.children]
        orig = view.from_graph(node)
        # the user's own term was not added by a rule, though a rule may also derive it (a
        # birewrite's way back)
        why = [] if orig else [rule_index[r.name] for r in explained.get(node_id, ()) if r.name in rule_index]
        for r in why:
            touched[r].add(class_index[node.eclass])
        nodes.append({
            "op": node.op, "label": _label(data, node, names), "cls": class_index[node.eclass],
            "ch": children, "own": _number(own),
            "total": _number(own + math.fsum(cost_of_class(c) for c in set(node.children))),
            "orig": orig,
            "rules": why, "unstable": pattern_index[unstable[node_id]] if node_id in unstable else None,
        })
    classes = []
    for c in class_ids:
        chosen = extraction.choice.get(c)
        dtype, shape = data.static_type(c)
        classes.append({
            "id": c, "name": names.get(c), "type": str(extraction.types.get(c, "")),
            "dtype": dtype, "shape": _shape(shape), "nodes": [node_index[n] for n in data.classes[c]],
            "chosen": node_index[chosen] if chosen in node_index else None, "cost": _number(cost_of_class(c)),
            "parents": sorted({node_index[p] for p in data.parents.get(c, ())}),
            "shared": c in extraction.shared,
        })
    return {
        "title": title, "classes": classes, "nodes": nodes,
        "outputs": [{"cls": class_index[c], "name": _output_name(data, i)} for i, c in enumerate(outputs)],
        "rules": [_rule(r, report, sorted(touched.get(i, ()))) for i, r in enumerate(rules)],
        "unstable": [{"text": p.text, "why": p.why, "file": p.source[0], "line": p.source[1]} for p in patterns],
        "before": _reachable([class_index[c] for c in outputs], classes, nodes, _before_extraction(nodes)),
        "after": _reachable([class_index[c] for c in outputs], classes, nodes, None),
        "report": _report(report, extraction),
    }


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
