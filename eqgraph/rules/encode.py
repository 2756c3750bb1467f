"""Encode a FunctionGraph as egglog terms (DESIGN decision 9).

Every variable gets an id term ``(N k)`` unioned with its definition, e.g.
``(union (N 7) (Add (N 3) (N 5)))``, so no command nests deeper than one op:
graphs of 10^5 nodes encode without recursion, in batches of small commands.
Each id also gets its static type as analysis facts: ``dtype``, ``ndim`` and
``dim`` per known axis.

Constants: size-1 numbers are ``(Scalar value "dtype" ndim)``, matchable by
value in rules; other arrays are ``(Array handle "dtype" "shape")`` with the
data kept on the Python side (equal arrays share a handle).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from eqgraph.rules.adapter import Session
from eqgraph.rules.schema import ANALYSES, SORTS, Schema
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Constant, Variable
from eqgraph.terms.fgraph import FunctionGraph


@dataclass
class EncodedGraph:
    """An e-graph holding a FunctionGraph, and what is needed to read it back."""

    session: Session
    schema: Schema
    fgraph: FunctionGraph
    ids: dict[Variable, int]                       # variable -> k of its (N k)
    constants: dict[int, Constant] = field(default_factory=dict)   # Array handle -> constant
    ops: dict = field(default_factory=dict)        # (constructor, encoded props) -> op (user ops)
    n_commands: int = 0

    @property
    def output_ids(self) -> list[int]:
        return [self.ids[v] for v in self.fgraph.outputs]


def scalar_term(data: np.ndarray) -> str | None:
    """``(Scalar ...)`` for a finite size-1 real constant, else None."""
    if data.size != 1 or data.dtype.kind not in "biuf":
        return None
    value = float(data.reshape(-1)[0])
    if not math.isfinite(value) or (data.dtype.kind in "iu" and abs(value) > 2**53):
        return None
    return f'(Scalar {value!r} "{data.dtype.name}" {data.ndim})'


def type_facts(k: int, ttype) -> list[str]:
    if not isinstance(ttype, TensorType):
        return []
    facts = [f'(set (dtype (N {k})) (set-of "{ttype.dtype}"))', f"(set (ndim (N {k})) {ttype.ndim})"]
    facts += [f"(set (dim (N {k}) {i}) (set-of {s}))" for i, s in enumerate(ttype.shape) if s is not None]
    return facts


def encode(fgraph: FunctionGraph, batch: int = 256) -> EncodedGraph:
    """Put ``fgraph`` into a new e-graph; its variables become ``(N k)`` e-classes."""
    session, schema = Session(), Schema()
    session.run(SORTS + ANALYSES + schema.take_declarations())
    encoded = EncodedGraph(session, schema, fgraph, {})
    commands: list[str] = []
    handles: dict = {}

    def new_id(var) -> int:
        k = encoded.ids[var] = len(encoded.ids)
        return k

    def ref(var) -> str:
        if var not in encoded.ids:  # a constant, seen for the first time
            k = new_id(var)
            term = scalar_term(np.asarray(var.data)) if hasattr(var.data, "dtype") else None
            if term is None:
                handle = handles.setdefault(var.signature(), len(handles))
                encoded.constants[handle] = var
                dtype = getattr(var.type, "dtype", type(var.type).__name__)
                shape = getattr(var.type, "shape", ())
                term = f'(Array {handle} "{dtype}" "{shape}")'
            commands.append(f"(union (N {k}) {term})")
            commands.extend(type_facts(k, var.type))
        return f"(N {encoded.ids[var]})"

    for i, var in enumerate(fgraph.inputs):
        k = new_id(var)
        commands.append(f"(union (N {k}) (Var {i}))")
        commands.extend(type_facts(k, var.type))
    for node in fgraph.toposort():
        ctor = schema.constructor(node.op, len(node.inputs))
        if schema.pending:
            commands.append(schema.take_declarations())
        props = ctor.encode_props(node.op)
        encoded.ops.setdefault((ctor.name, tuple(props)), node.op)
        term = f"({ctor.name} {' '.join([ref(v) for v in node.inputs] + props)})"
        if len(node.outputs) == 1:
            out = node.outputs[0]
            k = new_id(out)
            commands.append(f"(union (N {k}) {term})")
            commands.extend(type_facts(k, out.type))
        else:
            node_id = len(encoded.ids) + 10**9  # ids of whole multi-output nodes never clash
            commands.append(f"(union (N {node_id}) {term})")
            for j, out in enumerate(node.outputs):
                k = new_id(out)
                commands.append(f"(union (N {k}) (Out (N {node_id}) {j}))")
                commands.extend(type_facts(k, out.type))
    for out in fgraph.outputs:  # an output that is a constant, or an input
        ref(out)
    session.run_batches(commands, batch)
    encoded.n_commands = len(commands)
    return encoded
