"""A snapshot of an e-graph: its e-classes, e-nodes and analysis values, read-only and
self-contained.

Built once from egglog's serialized JSON when a compile's saturation is done
(``egraph.session(...).snapshot()``). It copies everything extraction, inspection and
debug mode read: the e-nodes, the static types the analyses derived, and, from the encoded
graph, the user's graph, the id of each of its variables, the constants kept on the Python
side, the user's ops and the constructor table. It holds no reference to the
``EncodedGraph`` or to an egglog session, so it outlives both (the session goes back to its
pool; tests/rules/test_snapshot.py drops the encoded graph and still extracts from it).

Term e-nodes are those of sort ``T`` other than the ``(N k)`` ids; ``dtype``/``ndim``/``dim``
rows become the static type known for each e-class; ``dim-at-most`` and ``dim-within`` rows
bound sizes that are not static (for the cost model). Read-only: its tables are mappings that
cannot be assigned to, e-nodes are frozen with tuples of children and arguments, and its
attributes cannot be rebound.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from types import MappingProxyType

from eqgraph.egraph.encode import EncodedGraph

LEAVES = ("Var", "Scalar", "Array", "Ints")  # the constructors of inputs and constants
ANALYSES = frozenset({"dtype", "ndim", "dim", "dim-at-most", "dim-within", "type-error"})
_MISSING = object()


@dataclass(frozen=True)
class ENode:
    id: str
    op: str                 # the constructor name
    children: tuple         # e-classes of the T children
    args: tuple             # decoded primitive children (props, constant values; a Vec is a tuple)
    eclass: str


def _frozen(mapping: dict) -> MappingProxyType:
    return MappingProxyType(dict(mapping))


class EGraphData:
    """The snapshot (see the module docstring); ``EGraphData(encoded)`` reads ``encoded``'s
    e-graph, which must still be open, and keeps copies only."""

    def __init__(self, encoded: EncodedGraph):
        raw = encoded.session.serialize()["nodes"]
        reader = _Reader(raw)
        nodes: dict[str, ENode] = {}
        classes: dict[str, list[str]] = defaultdict(list)
        class_of_id: dict[int, str] = {}
        for node_id, node in raw.items():
            op, eclass = node["op"], node["eclass"]
            if op in ANALYSES:
                reader.analysis(op, node)
            elif not eclass.startswith("T-"):
                continue
            elif op == "N":
                class_of_id[reader.value(node["children"][0])] = eclass
            else:
                children, args = [], []
                for c in node["children"]:
                    child = raw[c]["eclass"]
                    if child.startswith("T-"):
                        children.append(child)
                    elif child.startswith("TVec-"):  # a join's vector of inputs: its entries are children
                        children.extend(raw[g]["eclass"] for g in raw[c]["children"])
                    else:
                        args.append(reader.value(c))
                children, args = tuple(children), tuple(args)
                nodes[node_id] = ENode(node_id, op, children, args, eclass)
                classes[eclass].append(node_id)
        parents: dict[str, list[str]] = {c: [] for c in classes}
        for node in nodes.values():
            for c in set(node.children):
                parents.setdefault(c, []).append(node.id)
        set_ = object.__setattr__  # the attributes are set once, here
        set_(self, "nodes", MappingProxyType(nodes))
        set_(self, "classes", MappingProxyType({c: tuple(ids) for c, ids in classes.items()}))
        #: e-class -> the e-nodes that use it (once each); every e-class has an entry
        set_(self, "parents", MappingProxyType({c: tuple(ids) for c, ids in parents.items()}))
        set_(self, "class_of_id", MappingProxyType(class_of_id))
        set_(self, "dtype", MappingProxyType(reader.dtype))
        set_(self, "ndim", MappingProxyType(reader.ndim))
        set_(self, "dims", MappingProxyType({c: MappingProxyType(d) for c, d in reader.dims.items()}))
        set_(self, "errors", tuple(reader.errors))
        set_(self, "bounds", MappingProxyType({c: MappingProxyType(d) for c, d in reader.bounds.items()}))
        set_(self, "within", MappingProxyType({c: MappingProxyType({a: tuple(w) for a, w in d.items()})
                                               for c, d in reader.within.items()}))
        # what the encoded graph knew, copied (the encoded graph and its session are not kept)
        set_(self, "fgraph", encoded.fgraph)                      # the user's graph, as encoded
        set_(self, "ids", _frozen(encoded.ids))                   # its variables -> k of (N k)
        set_(self, "output_ids", tuple(encoded.output_ids))
        set_(self, "constants", _frozen(encoded.constants))       # Array handle -> Constant
        set_(self, "ops", _frozen(encoded.ops))                   # (constructor, props) -> the user's op
        set_(self, "schema", encoded.schema.frozen())             # the constructors, read-only

    def __setattr__(self, name, value):
        raise AttributeError(f"an e-graph snapshot is read-only (setting {name!r})")

    __delattr__ = __setattr__

    # -- questions ------------------------------------------------------------------------------
    @property
    def constructors(self):
        """Constructor name -> ``schema.Constructor``, for every constructor of this e-graph."""
        return self.schema.by_name

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
        """The e-class of a variable of the encoded graph."""
        return self.class_of_id[self.ids[var]]

    def describe_node(self, node: ENode, depth: int = 1) -> str:
        parts = [self.describe_class(c, depth - 1) if depth > 0 else c for c in node.children]
        parts += [repr(a) if isinstance(a, str) else str(a) for a in node.args]
        return f"({node.op} {' '.join(parts)})" if parts else f"({node.op})"

    def describe_class(self, eclass: str, depth: int = 1) -> str:
        members = self.classes.get(eclass, ())
        if not members:
            return eclass
        leaf = next((m for m in members if self.nodes[m].op in LEAVES), members[0])
        return self.describe_node(self.nodes[leaf], depth)


class _Reader:
    """Decodes the serialized e-graph's primitive values and analysis rows (construction only)."""

    def __init__(self, raw: dict):
        self.raw = raw
        self.values: dict = {}
        self.dtype: dict[str, frozenset] = {}
        self.ndim: dict[str, int] = {}
        self.dims: dict[str, dict[int, frozenset]] = defaultdict(dict)
        self.errors: list[tuple[str, int]] = []
        self.bounds: dict[str, dict[int, int]] = defaultdict(dict)  # e-class -> axis -> at most this size
        self.within: dict[str, dict[int, list]] = defaultdict(dict)  # e-class -> axis -> [(e-class, its axis)]
        # the node holding each primitive value (analysis rows point at these classes)
        self.primitive = {n["eclass"]: i for i, n in raw.items()
                          if n["op"] not in ANALYSES and not n["eclass"].startswith("T-")}

    def value(self, node_id: str):
        """The Python value of a primitive node (i64, f64, String, bool; a Vec or Set is a tuple)."""
        cached = self.values.get(node_id, _MISSING)
        if cached is _MISSING:
            cached = self.values[node_id] = self._read(node_id)
        return cached

    def _read(self, node_id: str):
        node = self.raw[node_id]
        sort, op = node["eclass"].split("-", 1)[0], node["op"]
        if sort == "i64":
            return int(op)
        if sort == "f64":
            return float(op)
        if sort == "String":
            return json.loads(op)
        if sort == "bool":
            return op == "true"
        return tuple(self.value(c) for c in node["children"])

    def analysis(self, op: str, node) -> None:
        children = node["children"]
        eclass = self.raw[children[0]]["eclass"]
        if op == "type-error":
            self.errors.append((eclass, self.value(children[1])))
            return
        if op == "dim-at-most":  # a relation: several bounds may be known, the least counts
            axis, bound = self.value(children[1]), self.value(children[2])
            self.bounds[eclass][axis] = min(bound, self.bounds[eclass].get(axis, bound))
            return
        if op == "dim-within":  # axis j is at most as long as axis k of another e-class
            j, other, k = self.value(children[1]), self.raw[children[2]]["eclass"], self.value(children[3])
            self.within[eclass].setdefault(j, []).append((other, k))
            return
        result = self.value(self.primitive[node["eclass"]])
        if op == "dtype":
            self.dtype[eclass] = frozenset(result)
        elif op == "ndim":
            if len(result) == 1:
                self.ndim[eclass] = result[0]
        else:
            self.dims[eclass][self.value(children[1])] = frozenset(result)
