"""A read-only Python view of an e-graph: e-classes, e-nodes and analysis values.

Built from egglog's serialized JSON.  Term e-nodes are those of sort ``T``
other than the ``(N k)`` ids; ``dtype``/``ndim``/``dim`` rows become the
static type known for each e-class; ``dim-at-most`` and ``dim-within`` rows
bound sizes that are not static (for the cost model).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass

from eqgraph.egraph.encode import EncodedGraph

LEAVES = ("Var", "Scalar", "Array", "Ints")  # the constructors of inputs and constants
_MISSING = object()


@dataclass
class ENode:
    id: str
    op: str                 # the constructor name
    children: list[str]     # e-classes of the T children
    args: list              # decoded primitive children (props, constant values)
    eclass: str


class EGraphData:
    def __init__(self, encoded: EncodedGraph):
        self.encoded = encoded
        raw = encoded.session.serialize()["nodes"]
        self._raw = raw
        self._values: dict = {}
        self.nodes: dict[str, ENode] = {}
        self.classes: dict[str, list[str]] = defaultdict(list)
        self.class_of_id: dict[int, str] = {}
        self.dtype: dict[str, set] = {}
        self.ndim: dict[str, int] = {}
        self.dims: dict[str, dict[int, set]] = defaultdict(dict)
        self.bounds: dict[str, dict[int, int]] = defaultdict(dict)  # e-class -> axis -> at most this size
        self.within: dict[str, dict[int, list]] = defaultdict(dict)  # e-class -> axis -> [(e-class, its axis)]
        self.errors: list[tuple[str, int]] = []
        analyses = {"dtype", "ndim", "dim", "dim-at-most", "dim-within", "type-error"}
        # the node holding each primitive value (analysis rows point at these classes)
        self._primitive = {n["eclass"]: i for i, n in raw.items()
                           if n["op"] not in analyses and not n["eclass"].startswith("T-")}
        for node_id, node in raw.items():
            op, eclass = node["op"], node["eclass"]
            if op in analyses:
                self._read_analysis(op, node)
                continue
            if not eclass.startswith("T-"):
                continue
            if op == "N":
                self.class_of_id[self.value(node["children"][0])] = eclass
                continue
            children = [raw[c]["eclass"] for c in node["children"] if raw[c]["eclass"].startswith("T-")]
            args = [self.value(c) for c in node["children"] if not raw[c]["eclass"].startswith("T-")]
            self.nodes[node_id] = ENode(node_id, op, children, args, eclass)
            self.classes[eclass].append(node_id)
        #: e-class -> the e-nodes that use it (once each)
        self.parents: dict[str, list[str]] = defaultdict(list)
        for node in self.nodes.values():
            for c in set(node.children):
                self.parents[c].append(node.id)

    # -- values ------------------------------------------------------------------------------
    def value(self, node_id: str):
        """The Python value of a primitive node (i64, f64, String, bool, Vec, Set)."""
        cached = self._values.get(node_id, _MISSING)
        if cached is _MISSING:
            cached = self._values[node_id] = self._read_value(node_id)
        return cached

    def _read_value(self, node_id: str):
        node = self._raw[node_id]
        sort, op = node["eclass"].split("-", 1)[0], node["op"]
        if sort == "i64":
            return int(op)
        if sort == "f64":
            return float(op)
        if sort == "String":
            return json.loads(op)
        if sort == "bool":
            return op == "true"
        return [self.value(c) for c in node["children"]]

    def _read_analysis(self, op: str, node) -> None:
        children = node["children"]
        eclass = self._raw[children[0]]["eclass"]
        if op == "type-error":
            self.errors.append((eclass, self.value(children[1])))
            return
        if op == "dim-at-most":  # a relation: several bounds may be known, the least counts
            axis, bound = self.value(children[1]), self.value(children[2])
            self.bounds[eclass][axis] = min(bound, self.bounds[eclass].get(axis, bound))
            return
        if op == "dim-within":  # axis j is at most as long as axis k of another e-class
            j, other, k = self.value(children[1]), self._raw[children[2]]["eclass"], self.value(children[3])
            self.within[eclass].setdefault(j, []).append((other, k))
            return
        result = self._value_of_class(node["eclass"])
        if op == "dtype":
            self.dtype[eclass] = set(result)
        elif op == "ndim":
            if len(result) == 1:
                self.ndim[eclass] = result[0]
        else:
            self.dims[eclass][self.value(children[1])] = set(result)

    def _value_of_class(self, eclass: str):
        return self.value(self._primitive[eclass])

    # -- questions ------------------------------------------------------------------------------
    def type_errors(self) -> list[tuple[str, int]]:
        return list(self.errors)

    def static_type(self, eclass: str):
        """(dtype or None, shape tuple or None) from the analyses."""
        dtype = self.dtype.get(eclass)
        dtype = next(iter(dtype)) if dtype and len(dtype) == 1 else None
        ndim = self.ndim.get(eclass)
        if ndim is None:
            return dtype, None
        dims = self.dims.get(eclass, {})
        shape = tuple(next(iter(dims[i])) if i in dims and len(dims[i]) == 1 else None for i in range(ndim))
        return dtype, shape

    def size_bounds(self, eclass: str) -> tuple | None:
        """Per axis, an upper bound on its size where one is known (``x[:10]`` of a vector
        of unknown length: at most 10), else None; or None if no axis has one."""
        bounds, ndim = self.bounds.get(eclass), self.ndim.get(eclass)
        if not bounds or ndim is None:
            return None
        return tuple(bounds.get(i) for i in range(ndim))

    def size_within(self, eclass: str) -> tuple | None:
        """Per axis, the (e-class, axis) pairs it is at most as long as (``m[0]`` is no longer
        than axis 1 of ``m``), else None; or None if no axis has one."""
        within, ndim = self.within.get(eclass), self.ndim.get(eclass)
        if not within or ndim is None:
            return None
        return tuple(within.get(i) for i in range(ndim))

    def class_of(self, var) -> str:
        return self.class_of_id[self.encoded.ids[var]]

    def describe_node(self, node: ENode, depth: int = 1) -> str:
        parts = [self.describe_class(c, depth - 1) if depth > 0 else c for c in node.children]
        parts += [repr(a) if isinstance(a, str) else str(a) for a in node.args]
        return f"({node.op} {' '.join(parts)})" if parts else f"({node.op})"

    def describe_class(self, eclass: str, depth: int = 1) -> str:
        members = self.classes.get(eclass, [])
        if not members:
            return eclass
        leaf = next((m for m in members if self.nodes[m].op in LEAVES), members[0])
        return self.describe_node(self.nodes[leaf], depth)
