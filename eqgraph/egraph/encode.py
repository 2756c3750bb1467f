"""Encode a FunctionGraph as egglog terms, in bulk and never recursively.

Every variable of the graph is an id term ``(N k)`` unioned with its
definition, e.g. ``(union (N 7) (Add (N 3) (N 5)))``, with its static type as
analysis facts (``dtype``, ``ndim``, ``dim`` per known axis).

Sending one egglog command per node costs time that grows with the e-graph, faster
than the graph does. So the encoder writes the graph as rows of tab-separated files
(terms: one relation per number of children, each row tagged with its (constructor,
props)), loads them with egglog's ``input`` command, and runs one rule per tag once:
graphs of 10^4-10^5 nodes load in bulk, and no step recurses or nests terms. A pooled
base keeps the relations and rules between compiles (``_Tables``), so a compile of ops
met before declares nothing.

Commutative ops (``ScalarOp.commutative``: add, mul, eq, ...) get their two arguments in
one canonical order, so ``x + y`` and ``y + x`` are one e-node and one e-class with no
commutativity rule (which would double every sum in the e-graph, and every match of every
rule on it). The order compares *structural* ids: equal subgraphs built twice get one id,
so ``exp(x) + y`` and ``y + exp(x)`` meet too; constants (and what is computed from constants
alone, a broadcast constant) go last (``x * 2``, never ``2 * x``), the only form rules in
``rulesets/`` need to match.

Constants: size-1 numbers are ``(Scalar value "dtype" ndim)`` and short integer
vectors ``(Ints (vec-of 2 3) "int64")``, both matchable by value in rules; other
arrays are ``(Array handle "dtype" "shape")`` with the data kept on the Python
side (equal arrays share a handle).
"""

from __future__ import annotations

import itertools
import math
import re
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from eqgraph.egraph import pool
from eqgraph.egraph.adapter import Session
from eqgraph.egraph.pool import Base
from eqgraph.egraph.schema import Schema, send_prelude
from eqgraph.egraph.shapes import shape_equalities
from eqgraph.tensor.elemwise import Elemwise, shape_inputs
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Constant, Variable
from eqgraph.terms.fgraph import FunctionGraph
from eqgraph.terms.graph import toposort

MULTI_OUTPUT_BASE = 10**12  # ids of whole multi-output nodes never clash with variables' ids
MAX_INTS = 8  # integer vectors up to this length are terms matchable by value (shapes)
I64_MAX = np.iinfo(np.int64).max
#: union rules a pooled base keeps between compiles; beyond, a compile declares its own after
#: the push (gone at the pop). Each kept rule adds a little to every compile's push and pop.
MAX_PERSISTED = 256


@dataclass
class EncodedGraph:
    """An e-graph holding a FunctionGraph, and what is needed to read it back."""

    session: Session                               # until the session scope ends (egraph/sessions.py)
    schema: Schema
    fgraph: FunctionGraph
    ids: dict[Variable, int]                       # variable -> k of its (N k)
    constants: dict[int, Constant] = field(default_factory=dict)   # Array handle -> constant
    ops: dict = field(default_factory=dict)        # (constructor, encoded props) -> op (user ops)
    n_rows: int = 0

    @property
    def output_ids(self) -> list[int]:
        return [self.ids[v] for v in self.fgraph.outputs]


def scalar_row(data: np.ndarray):
    """(value, dtype, ndim) for a finite size-1 real constant, else None.

    -0.0 is left out: egglog's f64 treats it as 0.0, so the two would share an
    e-class and ``1/(x*-0.0)`` could come back as ``+inf``. As an ``Array`` it is
    kept apart by its bytes (rules then cannot match it by value, which costs
    nothing: ``x + -0.0`` is the only identity it would enable).
    """
    if data.size != 1 or data.dtype.kind not in "biuf":
        return None
    value = float(data.reshape(-1)[0])
    if not math.isfinite(value) or (data.dtype.kind in "iu" and abs(value) > 2**53):
        return None
    if value == 0.0 and math.copysign(1.0, value) < 0:
        return None
    return (repr(value), data.dtype.name, data.ndim)


class _Tables:
    """Rows per relation, and the egglog text that declares and consumes them.

    Terms go into one relation per number of children, ``enc_t<n>`` with columns (tag, k,
    c0, ..., c<n-1>), and one rule per term matches its tag: ``(rule ((enc_t2 7 k c0 c1))
    ((union (N k) (Add (N c0) (N c1)))))``. A pooled base keeps the relations and (up to
    ``MAX_PERSISTED`` of) the rules at depth 0, so a compile of ops met before declares
    nothing: declaring the relations and their rules is most of a small graph's encoding.
    """

    def __init__(self):
        self.rows: dict[str, list] = defaultdict(list)
        self.schemas: dict[str, tuple] = {}       # fixed relation -> (column sorts, rule text)
        self.terms: dict[str, list] = {}          # union's term -> rows (k, c0, ...)
        self.arity: dict[str, int] = {}           # union's term -> number of children
        self.own: set[str] = set()                # terms naming a constructor the base lacks (a user op's)

    def relation(self, name: str, sorts: tuple, action: str, variables: tuple) -> str:
        if name not in self.schemas:
            pattern = f"({name} {' '.join(variables)})"
            rule = (f"(rule ({pattern}) ({action}) :ruleset encode)\n"
                    f"(rule ({pattern}) ((delete {pattern})) :ruleset encoded)")  # drop the rows after use
            self.schemas[name] = (sorts, rule)
        return name

    def term(self, term: str, n_children: int, own: bool = False) -> list:
        """The rows of ``term`` (written with children ``(N c0)`` ...); ``own``: it names a
        constructor declared by this compile only, so its rule must not outlive the compile."""
        if term not in self.terms:
            self.terms[term], self.arity[term] = [], n_children
            if own:
                self.own.add(term)
        return self.terms[term]

    def program(self, directory: Path, prefix: str = "", base: Base | None = None) -> str:
        """Everything a compile sends: what ``base`` lacks (or, without one, every declaration),
        the rows' files and the runs. With a base, what later compiles can reuse is first
        declared at depth 0 and the base is pushed (``pool.push``)."""
        tags = base.tags if base is not None else itertools.count()
        arities = sorted(set(self.arity.values()))
        persisted = {} if base is None else base.term_tags
        new_rules: list[tuple[str, int]] = []   # (term, tag) of rules this compile declares
        for term in self.terms:
            if term not in persisted:
                new_rules.append((term, next(tags)))
        if base is None:
            lines = self.declarations().splitlines() + [self._arity_declaration(n) for n in arities]
            lines += [self._rule(term, tag) for term, tag in new_rules]
        else:
            self._persist(base, arities, [(t, tag) for t, tag in new_rules if t not in self.own])
            pool.push(base)
            lines = [] if base.prepared else self.declarations().splitlines()
            lines += [self._rule(term, tag) for term, tag in new_rules if term not in base.term_tags]
        tag_of = {**persisted, **dict(new_rules)}
        for term, rows in self.terms.items():
            tag = tag_of[term]
            self.rows[f"enc_t{self.arity[term]}"].extend((tag, *row) for row in rows)
        for name, rows in self.rows.items():
            path = directory / f"{prefix}{name}.tsv"
            with open(path, "w") as fh:
                fh.writelines("\t".join(map(str, row)) + "\n" for row in rows)
            lines.append(f'(input {name} "{path.name}")')
        lines.append("(run encode 1)")
        lines.append("(run encoded 1)")
        return "\n".join(lines)

    def _persist(self, base: Base, arities: list[int], rules: list[tuple[str, int]]) -> None:
        """Declare in ``base``, at depth 0, the tagged relations it lacks and as many of
        ``rules`` as ``MAX_PERSISTED`` allows: a kept rule adds a little to every later
        compile's push and pop, and saves the compiles that meet it again a declaration,
        which costs a hundred times more."""
        kept = rules[:max(0, MAX_PERSISTED - len(base.term_tags))]
        depth0 = [self._arity_declaration(n) for n in arities if n not in base.arities]
        depth0 += [self._rule(term, tag) for term, tag in kept]
        if not depth0:
            return
        try:
            base.session.run("\n".join(depth0))
        except BaseException:
            pool.discard(base)  # it may hold half of these: no later compile may use it
            raise
        base.arities.update(arities)
        base.term_tags.update(kept)

    def constructors(self) -> set[str]:
        """The constructors of the terms the rows make."""
        made = [term for term in self.terms] + [self.schemas[name][1] for name in self.rows if name in self.schemas]
        return set(re.findall(r"\((?=[A-Z])([^\s()]+)", " ".join(made)))

    def declarations(self) -> str:
        """The encoder's rulesets, and every fixed relation with its rules (``declare_fixed``)."""
        return "\n".join(["(ruleset encode)", "(ruleset encoded)", *(line for name in self.schemas
                                                                      for line in self._declaration(name))])

    def _declaration(self, name: str) -> list[str]:
        sorts, rule = self.schemas[name]
        return [f"(relation {name} ({' '.join(sorts)}))", rule]

    @staticmethod
    def _arity_declaration(n: int) -> str:
        pattern = f"(enc_t{n} t k {' '.join(f'c{j}' for j in range(n))})"
        return (f"(relation enc_t{n} ({' '.join(['i64'] * (n + 2))}))\n"
                f"(rule ({pattern}) ((delete {pattern})) :ruleset encoded)")

    def _rule(self, term: str, tag: int) -> str:
        n = self.arity[term]
        pattern = f"(enc_t{n} {tag} k {' '.join(f'c{j}' for j in range(n))})"
        return f"(rule ({pattern}) ((union (N k) {term})) :ruleset encode)"


#: the relations every encoding uses: (name, column sorts, the union or set a row makes, columns)
FIXED = (
    ("enc_type", ("i64", "String", "i64"), "(set (dtype (N k)) (set-of d)) (set (ndim (N k)) (set-of n))",
     ("k", "d", "n")),
    ("enc_dim", ("i64", "i64", "i64"), "(set (dim (N k) i) (set-of s))", ("k", "i", "s")),
    ("enc_var", ("i64", "i64"), "(union (N k) (Var i))", ("k", "i")),
    ("enc_scalar", ("i64", "f64", "String", "i64"), "(union (N k) (Scalar v d n))", ("k", "v", "d", "n")),
    ("enc_array", ("i64", "i64", "String", "String"), "(union (N k) (Array h d s))", ("k", "h", "d", "s")),
    ("enc_out", ("i64", "i64", "i64"), "(union (N k) (Out (N m) j))", ("k", "m", "j")),
    ("enc_same", ("i64", "i64"), "(union (N k) (N m))", ("k", "m")),
    ("enc_root", ("i64", "i64"), "(set (shape-root (N k)) r)", ("k", "r")),
)


def declare_fixed(session) -> None:
    """Send a pooled base the encoder's rulesets and ``FIXED`` relations with their rules once:
    declared by each compile, they would be much of a small graph's compile."""
    tables = _Tables()
    for spec in FIXED:
        tables.relation(*spec)
    session.run(tables.declarations())


def encode(fgraph: FunctionGraph, facts: str = "all", base: Base | None = None) -> EncodedGraph:
    """Put ``fgraph`` into an e-graph; its variables become ``(N k)`` e-classes.

    ``base``: a pooled session (egraph/pool.py), acquired and pushed, to encode into; without
    one, a fresh session. ``facts="leaves"`` states the static types of inputs and constants
    only, so that tests can check what the type rules derive for everything else.
    """
    schema = base.schema.copy() if base is not None else Schema()
    encoder = _Encoder(schema, facts, base)
    encoder.add_graph(fgraph)
    session = _load(encoder.tables, schema, base)
    return EncodedGraph(session, schema, fgraph, encoder.ids, encoder.constants, encoder.ops,
                        n_rows=sum(len(r) for r in encoder.tables.rows.values()))


class _Encoder:
    """Writes a graph's variables, nodes and constants as rows of ``_Tables``, in topological
    order and without recursion: every variable's id, its structural id (for the canonical
    order of commutative operands), its shape root and its type facts."""

    def __init__(self, schema: Schema, facts: str, base: Base | None):
        self.schema, self.facts, self.base = schema, facts, base
        self.tables = _Tables()
        for spec in FIXED:
            self.tables.relation(*spec)
        self.ids: dict[Variable, int] = {}
        self.constants: dict[int, Constant] = {}      # Array handle -> constant
        self.ops: dict = {}                           # (constructor, props) -> op
        self.handles: dict = {}                       # constant signature -> Array handle
        self.term_rows: dict = {}                     # (constructor, props, number of inputs) -> its rows
        self.encoded_ops: dict = {}                   # (id(op), number of inputs) -> (constructor, props)
        self.structural: dict[Variable, int] = {}     # variable -> id shared by every equal subgraph
        self.structures: dict = {}
        self.constant_only: set[Variable] = set()     # constants, and what is computed from them alone
        self.roots: dict[Variable, int] = {}          # variable -> id of a term of its shape at run time

    def add_graph(self, fgraph: FunctionGraph) -> None:
        """The inputs, every node (and those computing the shapes stated as equal), the outputs."""
        for i, var in enumerate(fgraph.inputs):
            self.tables.rows["enc_var"].append((self.new_id(var), i))
            self.same_structure(var, ("input", i))
        # x.shape as x's op infers it (egraph/shapes.py): graphs encoded after the user's own
        nodes = fgraph.toposort()
        shapes = shape_equalities(fgraph, nodes)
        if shapes:
            nodes += [n for n in toposort([b for _, b in shapes]) if n not in fgraph.apply_nodes]
        for node in nodes:
            self.add_node(node)
        for out in fgraph.outputs:  # an output that is a constant
            self.ref(out)
        self.tables.rows["enc_same"].extend((self.ids[a], self.ref(b)) for a, b in shapes)

    def add_node(self, node) -> None:
        """One apply node: a row of its term's relation, for its output or (several outputs)
        for the whole node, with an ``Out`` row per output."""
        ctor, props = self.constructor(node)
        key = (ctor.name, props)
        self.ops.setdefault(key, node.op)
        rows = self.rows_of(ctor, props, len(node.inputs))
        for v in node.inputs:
            self.ref(v)  # constants get their ids (and structural ids) here
        inputs = self.canonical_inputs(node)
        children = [self.ids[v] for v in inputs]
        for j, out in enumerate(node.outputs):
            self.same_structure(out, (key, tuple(self.structural[v] for v in inputs), j))
            if all(v in self.constant_only for v in inputs):
                self.constant_only.add(out)
        if len(node.outputs) == 1:
            rows.append((self.new_id(node.outputs[0]), *children))
            return
        node_k = MULTI_OUTPUT_BASE + len(self.ids)
        rows.append((node_k, *children))
        for j, out in enumerate(node.outputs):
            self.tables.rows["enc_out"].append((self.new_id(out), node_k, j))

    def constructor(self, node) -> tuple:
        """(the schema's constructor for ``node``'s op, its encoded props): most nodes share a few ops."""
        key = (id(node.op), len(node.inputs))
        if key not in self.encoded_ops:
            ctor = self.schema.constructor(node.op, len(node.inputs))
            self.encoded_ops[key] = (ctor, encoded_props(ctor, node.op))
        return self.encoded_ops[key]

    def rows_of(self, ctor, props: tuple, n_inputs: int) -> list:
        """The rows of the term ``ctor`` with ``props`` and ``n_inputs`` children: one rule per
        constructor and props (they are literals), and per number of inputs (a join's)."""
        key = (ctor.name, props, n_inputs)
        if key not in self.term_rows:
            own = self.base is None or ctor.name not in self.base.schema.by_name
            self.term_rows[key] = self.tables.term(term_text(ctor, props, n_inputs), n_inputs, own)
        return self.term_rows[key]

    def canonical_inputs(self, node) -> list:
        """``node``'s inputs, commutative ones in canonical order (the module's docstring)."""
        if not (isinstance(node.op, Elemwise) and node.op.scalar.commutative):
            return node.inputs
        return sorted(node.inputs, key=lambda v: (v in self.constant_only, self.structural[v]))

    def same_structure(self, var, key) -> None:
        self.structural[var] = self.structures.setdefault(key, len(self.structures))

    def new_id(self, var) -> int:
        """Give ``var`` the next id, with its type facts and shape root."""
        self.ids[var] = k = len(self.ids)
        if self.facts == "all" or var.owner is None:
            self.add_type_rows(k, var.type)
        known = self.facts == "all" and var.owner is not None
        self.roots[var] = self.shape_root(var.owner, k) if known else k
        self.tables.rows["enc_root"].append((k, self.roots[var]))
        return k

    def shape_root(self, node, k) -> int:
        """types.egg's shape-root of an encoded term, stated here rather than derived: the rules
        would carry a root up a chain one term per iteration. An elementwise output has the
        shape of the inputs ``shape_inputs`` names."""
        if not isinstance(node.op, Elemwise):
            return k
        shaped = {self.roots[v] for v in shape_inputs(node)}
        return shaped.pop() if len(shaped) == 1 else k

    def add_type_rows(self, k, ttype) -> None:
        if isinstance(ttype, TensorType):
            self.tables.rows["enc_type"].append((k, ttype.dtype, ttype.ndim))
            self.tables.rows["enc_dim"].extend((k, i, s) for i, s in enumerate(ttype.shape) if s is not None)

    def ref(self, var) -> int:
        """``var``'s id; a constant met for the first time is encoded here."""
        if var not in self.ids:
            self.add_constant(var)
        return self.ids[var]

    def add_constant(self, var) -> None:
        """A constant: a ``Scalar``, an ``Ints`` vector, or an ``Array`` handle (the data kept here)."""
        k = self.new_id(var)
        self.same_structure(var, ("constant", var.signature()))
        self.constant_only.add(var)
        data = np.asarray(var.data) if hasattr(var.data, "dtype") else None
        row = scalar_row(data) if data is not None else None
        if row is not None:
            self.tables.rows["enc_scalar"].append((k, *row))
        elif data is not None and data.ndim == 1 and 0 < data.size <= MAX_INTS and data.dtype.kind in "iu" \
                and int(data.max()) <= I64_MAX:  # egglog's literals are i64: a larger uint64 is an Array
            values = " ".join(str(int(v)) for v in data)  # one rule per value: it is a literal
            self.tables.term(f'(Ints (vec-of {values}) "{data.dtype.name}")', 0).append((k,))
        else:
            handle = self.handles.setdefault(var.signature(), len(self.handles))
            self.constants[handle] = var
            dtype = getattr(var.type, "dtype", type(var.type).__name__)
            shape = str(getattr(var.type, "shape", ()))
            self.tables.rows["enc_array"].append((k, handle, dtype, shape))


def encoded_props(ctor, op) -> tuple:
    """``op``'s props as the literals its constructor's term holds."""
    return tuple(ctor.encode_props(op))


def term_text(ctor, props: tuple, n_inputs: int) -> str:
    """The term a row of ``ctor`` unions with its id, children written ``(N c0)`` ...:
    ``(Add (N c0) (N c1))``, or for a vector constructor ``(Join (vec-of (N c0) (N c1)) axis)``."""
    inputs = [f"(N c{j})" for j in range(n_inputs)]
    if ctor.vector:
        inputs = [f"(vec-of {' '.join(inputs)})" if inputs else "(vec-empty)"]
    return f"({ctor.name} {' '.join(inputs + list(props))})"


def _load(tables: _Tables, schema: Schema, base: Base | None) -> Session:
    """Send ``tables`` to ``base``'s session (declaring at depth 0 what later compiles reuse,
    then pushing), or to a fresh session; the rows' files are gone afterwards."""
    if base is None:
        with tempfile.TemporaryDirectory(prefix="eqgraph-encode-") as directory:
            session = Session(fact_directory=directory)
            send_prelude(session, schema)
            session.run(tables.program(Path(directory)))
        return session
    directory = Path(base.directory.name)
    pool.send_family_copies(base, tables.constructors())
    try:
        program = tables.program(directory, base.file_prefix(), base)   # declares at depth 0, pushes
        if schema.pending:
            base.session.run(schema.take_declarations())
        base.session.run(program)
    finally:
        for path in directory.glob("*.tsv"):
            path.unlink()
    return base.session
