"""A snapshot of an e-graph: its e-classes, e-nodes and analysis values, read-only and
self-contained.

Built once from egglog's tables when a compile's saturation is done
(``egraph.session(...).snapshot()``). It copies everything extraction, inspection and
debug mode read: the e-nodes, the static types the analyses derived, and, from the encoded
graph, the user's graph, the id of each of its variables, the constants kept on the Python
side, the user's ops and the constructor table. It holds no reference to the
``EncodedGraph`` or to an egglog session, so it outlives both (the session goes back to its
pool; tests/egraph/test_snapshot.py drops the encoded graph and still extracts from it).

Term e-nodes are those of sort ``T`` other than the ``(N k)`` ids; ``dtype``/``ndim``/``dim``
rows become the static type known for each e-class; ``dim-at-most`` and ``dim-within`` rows
bound sizes that are not static (for the cost model). Read-only: its tables are mappings that
cannot be assigned to, e-nodes are frozen with tuples of children and arguments, and its
attributes cannot be rebound.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from types import MappingProxyType

from eqgraph.egraph.encode import EncodedGraph
from eqgraph.egraph.schema import BASE_CONSTRUCTORS, CONTAINER_SORTS

LEAVES = ("Var", "Scalar", "Array", "Ints")  # the constructors of inputs and constants
ANALYSES = frozenset({"dtype", "ndim", "dim", "dim-at-most", "dim-within", "type-error"})


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
        by_name = encoded.schema.by_name
        tables = encoded.session.tables([*BASE_CONSTRUCTORS, *by_name, *ANALYSES], CONTAINER_SORTS)
        nodes: dict[str, ENode] = {}
        classes: dict[str, list[str]] = defaultdict(list)
        class_of_id: dict[int, str] = {}
        analyses = _Analyses()
        for name, rows in tables.items():
            if name in ANALYSES:
                analyses.read(name, rows)
            elif name == "N":
                class_of_id.update((k, f"T-{eclass}") for k, eclass in rows)
            else:
                # which inputs are e-classes, a vector of them (a join's inputs), or primitives
                kinds = _input_kinds(name, by_name)
                for i, row in enumerate(rows):
                    children, args = [], []
                    for kind, value in zip(kinds, row):
                        if kind == "T":
                            children.append(f"T-{value}")
                        elif kind == "TVec":  # its entries are children
                            children.extend(f"T-{v}" for v in value)
                        else:
                            args.append(value)
                    node_id, eclass = f"function-{i}-{name}", f"T-{row[-1]}"  # the ids egglog serializes
                    nodes[node_id] = ENode(node_id, name, tuple(children), tuple(args), eclass)
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
        set_(self, "dtype", MappingProxyType(analyses.dtype))
        set_(self, "ndim", MappingProxyType(analyses.ndim))
        set_(self, "dims", MappingProxyType({c: MappingProxyType(d) for c, d in analyses.dims.items()}))
        set_(self, "errors", tuple(analyses.errors))
        set_(self, "bounds", MappingProxyType({c: MappingProxyType(d) for c, d in analyses.bounds.items()}))
        set_(self, "within", MappingProxyType({c: MappingProxyType({a: tuple(w) for a, w in d.items()})
                                               for c, d in analyses.within.items()}))
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


#: the input sorts of the constructors that SORTS declares (schema.py)
_BASE_INPUTS = {"N": ("i64",), "Var": ("i64",), "Scalar": ("f64", "String", "i64"), "Ints": ("IntVec", "String"),
                "Array": ("i64", "String", "String"), "Out": ("T", "i64")}


def _input_kinds(name: str, by_name) -> tuple:
    """Per input of constructor ``name``'s rows: "T" (an e-class), "TVec" (a vector of them)
    or "value" (a primitive: a prop or a constant's value)."""
    if name in _BASE_INPUTS:
        return tuple(kind if kind == "T" else "value" for kind in _BASE_INPUTS[name])
    ctor = by_name[name]
    inputs = ("TVec",) if ctor.vector else ("T",) * ctor.n_inputs
    return inputs + ("value",) * len(ctor.codecs)


class _Analyses:
    """The static types and size bounds, from the analyses' rows (construction only)."""

    def __init__(self):
        self.dtype: dict[str, frozenset] = {}
        self.ndim: dict[str, int] = {}
        self.dims: dict[str, dict[int, frozenset]] = defaultdict(dict)
        self.errors: list[tuple[str, int]] = []
        self.bounds: dict[str, dict[int, int]] = defaultdict(dict)  # e-class -> axis -> at most this size
        self.within: dict[str, dict[int, list]] = defaultdict(dict)  # e-class -> axis -> [(e-class, its axis)]

    def read(self, op: str, rows) -> None:
        for row in rows:
            eclass = f"T-{row[0]}"
            if op == "type-error":
                self.errors.append((eclass, row[1]))
            elif op == "dim-at-most":  # a relation: several bounds may be known, the least counts
                axis, bound = row[1], row[2]
                self.bounds[eclass][axis] = min(bound, self.bounds[eclass].get(axis, bound))
            elif op == "dim-within":  # axis j is at most as long as axis k of another e-class
                self.within[eclass].setdefault(row[1], []).append((f"T-{row[2]}", row[3]))
            elif op == "dtype":
                self.dtype[eclass] = row[1]
            elif op == "ndim":
                if len(row[1]) == 1:
                    self.ndim[eclass] = next(iter(row[1]))
            else:
                self.dims[eclass][row[1]] = row[2]
