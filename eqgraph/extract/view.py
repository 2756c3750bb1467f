"""The e-graph of a compiled function, opened (``f.stages.egraph``): e-classes, their members
with costs, which one extraction chose, and why each member is there.

That last question is a relation between rule patterns and e-nodes, answered with kanren
(unification over terms): a rule explains a member if its right-hand side matches the
member and its left-hand side matches the same e-class.

A view over an ``Extraction`` (and the saturation ``Report``), so it sits with extraction,
below the compiler that offers it; ``eqgraph.inspect`` re-exports it.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from kanren import conde, eq, lall, run, var
from kanren.core import fail
from unification import isvar

from eqgraph.egraph.snapshot import LEAVES
from eqgraph.rules.pattern import parse_pattern
from eqgraph.rules.ruleset import Rule


# -- patterns as kanren relations ------------------------------------------------------------
def matcho(pattern, eclass: str, data, depth: int = 6):
    """Goal: ``pattern`` matches some term of ``eclass`` (variables bind to e-classes/values)."""
    if isvar(pattern):
        return eq(pattern, eclass)
    if not isinstance(pattern, tuple) or depth == 0:
        return fail
    head, args = pattern[0], pattern[1:]
    options = []
    for node_id in data.classes.get(eclass, ()):
        node = data.nodes[node_id]
        if node.op != head or len(args) != len(node.children) + len(node.args):
            continue
        goals = [matcho(p, c, data, depth - 1) for p, c in zip(args, node.children)]
        goals += [eq(p, a) for p, a in zip(args[len(node.children):], node.args)]
        options.append([lall(*goals)] if goals else [eq(1, 1)])
    return conde(*options) if options else fail


def _matches(pattern_text: str, eclass: str, data, top_node=None) -> bool:
    variables: dict = {}
    pattern = parse_pattern(pattern_text, variables)
    if top_node is not None:
        node = data.nodes[top_node]
        if isvar(pattern) or not isinstance(pattern, tuple) or pattern[0] != node.op:
            return False
        args = pattern[1:]
        if len(args) != len(node.children) + len(node.args):
            return False
        goals = [matcho(p, c, data) for p, c in zip(args, node.children)]
        goals += [eq(p, a) for p, a in zip(args[len(node.children):], node.args)]
        goal = lall(*goals) if goals else eq(1, 1)
    else:
        goal = matcho(pattern, eclass, data)
    q = var()
    return bool(run(1, q, goal))


def explaining_rules(rules, data, eclass: str, node_id: str) -> list[Rule]:
    """Rules whose one side matches this member and whose other side matches its e-class."""
    found = []
    for rule in rules:
        if rule.lhs is None:
            continue
        directions = [(rule.lhs, rule.rhs)] + ([(rule.rhs, rule.lhs)] if rule.kind == "birewrite" else [])
        for lhs, rhs in directions:
            if _matches(rhs, eclass, data, top_node=node_id) and _matches(lhs, eclass, data):
                found.append(rule)
                break
    return found


# -- the view ---------------------------------------------------------------------------------------
@dataclass
class Member:
    term: str
    cost: float
    chosen: bool
    from_graph: bool
    rules: list = field(default_factory=list)
    shares_work: bool = False  # chosen although dearer as a tree: its children are computed anyway

    def __str__(self):
        mark = "*" if self.chosen else " "
        origin = "from the graph" if self.from_graph else ""
        why = ", ".join(r.name for r in self.rules)
        sharing = "chosen for sharing: the graph computes its inputs anyway" if self.shares_work else ""
        reason = "; ".join(x for x in (origin, f"rules: {why}" if why else "", sharing) if x)
        return f"{mark} {self.term:<50} cost {self.cost:>12.1f}  {reason}"


@dataclass
class EClass:
    id: str
    type: object
    members: list[Member]

    @property
    def chosen(self) -> Member:
        return next(m for m in self.members if m.chosen)

    def __str__(self):
        head = f"e-class {self.id} : {self.type}  ({len(self.members)} members, * = chosen)"
        return "\n".join([head] + [f"  {m}" for m in self.members])


class EGraphView:
    """Inspection of a compiled function's e-graph (``f.stages.egraph``)."""

    #: writes the explorer page of a view (``explore``). The explorer sits layers above this one
    #: (it extracts and runs graphs), so it plugs itself in (``eqgraph/explore``, imported by
    #: ``import eqgraph``) rather than being imported here.
    page_writer = None

    def __init__(self, extraction, report):
        self.extraction = extraction
        self.data = extraction.data
        self.report = report
        self.rules = list(report.rules.values())
        # the e-nodes of the user's graph: (e-class, constructor, child e-classes)
        data = self.data
        self._original_terms = set()
        for v, k in data.ids.items():
            eclass = data.class_of_id.get(k)
            if v.owner is None:
                self._original_terms.update((eclass, op, ()) for op in LEAVES)
            else:
                name = data.schema.constructor(v.owner.op, len(v.owner.inputs)).name
                children = tuple(data.class_of_id.get(data.ids.get(i)) for i in v.owner.inputs)
                self._original_terms.add((eclass, name, children))

    def class_id(self, var) -> str:
        """The e-class of a variable of the user's graph (or of the compiled graph)."""
        data = self.data
        if var in data.ids:
            return data.class_of(var)
        clone = getattr(data.fgraph, "equiv", {}).get(var)
        if clone is not None and clone in data.ids:
            return data.class_of(clone)
        for eclass, built in self.extraction.variables.items():
            if built is var:
                return eclass
        raise KeyError(f"{var} is not in this e-graph")

    def eclass(self, var_or_id) -> EClass:
        eclass = var_or_id if isinstance(var_or_id, str) else self.class_id(var_or_id)
        chosen = self.extraction.choice.get(eclass)
        members = []
        for node_id in self.data.classes.get(eclass, ()):
            node = self.data.nodes[node_id]
            cost = self.extraction.node_cost.get(node_id, float("inf"))
            cost += sum(self.extraction.cost.get(c, float("inf")) for c in set(node.children))
            members.append(Member(self.data.describe_node(node, depth=1), cost, node_id == chosen,
                                  (eclass, node.op, tuple(node.children)) in self._original_terms,
                                  explaining_rules(self.rules, self.data, eclass, node_id),
                                  node_id == chosen and eclass in self.extraction.shared))
        members.sort(key=lambda m: m.cost)
        return EClass(eclass, self.extraction.types.get(eclass), members)

    def fired(self) -> dict[str, int]:
        return self.report.fired()

    def from_graph(self, node) -> bool:
        """Whether e-node ``node`` (an ``ENode``) is a term of the user's graph, not a rule's."""
        return (node.eclass, node.op, tuple(node.children)) in self._original_terms

    def explore(self, path=None, title: str = "eqgraph e-graph"):
        """Write the interactive explorer page (one self-contained HTML file) and return it
        as an ``ExplorerPage``: its ``path``, and shown inline in Jupyter. ``path``: where to
        write it (default: a new file in the temporary directory)."""
        return EGraphView.page_writer(self, path, title)

    # -- pictures ------------------------------------------------------------------------------
    def neighbourhood(self, var=None, depth: int = 2) -> list[str]:
        if var is None:
            return list(self.data.classes)
        start = self.class_id(var) if not isinstance(var, str) else var
        seen, frontier = {start}, [start]
        for _ in range(depth):
            nxt = []
            for eclass in frontier:
                for node_id in self.data.classes.get(eclass, ()):
                    nxt.extend(self.data.nodes[node_id].children)
                nxt.extend(self.data.nodes[p].eclass for p in self.data.parents.get(eclass, ()))
            frontier = [c for c in nxt if c not in seen]
            seen.update(frontier)
        return sorted(seen)

    def to_dot(self, var=None, depth: int = 2) -> str:
        """The e-graph (or the neighbourhood of ``var``'s e-class) in Graphviz DOT."""
        classes = self.neighbourhood(var, depth)
        keep = set(classes)
        lines = ["digraph egraph {", "  compound=true; node [shape=box, fontname=monospace];"]
        for eclass in classes:
            lines.append(f'  subgraph "cluster_{eclass}" {{ label="{eclass}"; style=rounded;')
            for node_id in self.data.classes.get(eclass, ()):
                node = self.data.nodes[node_id]
                label = node.op + "".join(f" {a}" for a in node.args)
                style = ", style=filled, fillcolor=lightblue" if self.extraction.choice.get(eclass) == node_id else ""
                lines.append(f'    "{node_id}" [label="{html.escape(label)}"{style}];')
            lines.append("  }")
        for eclass in classes:
            for node_id in self.data.classes.get(eclass, ()):
                for c in self.data.nodes[node_id].children:
                    if c in keep and self.data.classes.get(c):
                        target = self.data.classes[c][0]
                        lines.append(f'  "{node_id}" -> "{target}" [lhead="cluster_{c}"];')
        lines.append("}")
        return "\n".join(lines)

    def to_html(self, path=None, var=None, depth: int = 2, max_classes: int = 500) -> str:
        """A self-contained HTML page: the report, each e-class with its members, and the DOT."""
        classes = self.neighbourhood(var, depth)[:max_classes]
        parts = ["<!doctype html><html><head><meta charset='utf-8'><title>eqgraph e-graph</title>",
                 "<style>body{font-family:sans-serif} pre{background:#f6f6f6;padding:8px}"
                 " td{padding:2px 8px;font-family:monospace} tr.chosen{background:#dbeafe}</style></head><body>",
                 "<h1>eqgraph e-graph</h1>", f"<pre>{html.escape(str(self.report))}</pre>"]
        for eclass in classes:
            view = self.eclass(eclass)
            parts.append(f"<details open><summary><b>{eclass}</b> {html.escape(str(view.type))}</summary><table>")
            parts.append("<tr><th></th><th>term</th><th>cost</th><th>why</th></tr>")
            for m in view.members:
                why = ", ".join(r.name for r in m.rules) or ("from the graph" if m.from_graph else "")
                parts.append(f"<tr class='{'chosen' if m.chosen else ''}'><td>{'*' if m.chosen else ''}</td>"
                             f"<td>{html.escape(m.term)}</td><td>{m.cost:.1f}</td><td>{html.escape(why)}</td></tr>")
            parts.append("</table></details>")
        parts.append(f"<h2>DOT</h2><pre>{html.escape(self.to_dot(var, depth))}</pre></body></html>")
        text = "\n".join(parts)
        if path is not None:
            with open(path, "w") as fh:
                fh.write(text)
        return text
