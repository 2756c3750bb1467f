"""Shapes from ``Op.infer_shape``: what ``x.shape`` equals without computing ``x``.

``Op.infer_shape`` is the one shape rule of every op, user ops included, and it is
Python, so it runs when a graph is encoded rather than as a rule: for each ``Shape(v)`` in
the graph, ``v``'s op is asked for ``v``'s shape in terms of its inputs' shapes, and the
answer is put in the e-graph in ``Shape(v)``'s e-class. ``exp(m).shape[0]`` then has the
member ``m.shape[0]`` (no ``exp`` computed), a static size becomes a constant, and the cost
model picks the cheapest. A shape that is fully static is simply that constant.
"""

from __future__ import annotations

import numpy as np

import eqgraph.tensor as et
from eqgraph.terms.basic import Constant, Variable
from eqgraph.terms.fgraph import FunctionGraph
from eqgraph.terms.graph import ancestors, toposort


def shape_equalities(fgraph: FunctionGraph, nodes: list) -> list[tuple[Variable, Variable]]:
    """Pairs ``(Shape(v), inferred)``: each ``Shape`` node among ``nodes`` (``fgraph``'s, in
    order; then those of the inferred shapes) with the int64 vector its input's op says it equals.

    Only where the answer can pay: a static shape always (a constant), a symbolic one only
    for a ``v`` computed for its shape alone. Where ``v`` is computed anyway, ``v.shape`` costs
    one dispatch, and a symbolic alternative (five nodes for a broadcast's size) is only more
    for extraction to weigh: on an MLP's loss and gradients, the e-graph grew by half
    and cheapest-first extraction picked the longer form (30 nodes instead of 26).
    """
    needed = _computed_anyway(fgraph, nodes)
    pairs = []
    todo = [node for node in nodes if isinstance(node.op, et.Shape)]
    seen = set()
    while todo:
        node = todo.pop()
        (var,) = node.inputs
        if var in seen:
            continue
        seen.add(var)
        static = getattr(var.type, "shape", None)
        if var in needed and not (static is not None and None not in static):
            continue
        inferred = inferred_shape(fgraph, var)
        if inferred is None:
            continue
        pairs.append((node.outputs[0], inferred))
        todo += [n for n in _new_nodes(inferred, fgraph) if isinstance(n.op, et.Shape)]
    return pairs


def _computed_anyway(fgraph: FunctionGraph, nodes: list) -> set:
    """The variables whose values (not only their shapes) the outputs need."""
    needed = set(fgraph.outputs)
    for node in reversed(nodes):
        if not isinstance(node.op, et.Shape) and any(out in needed for out in node.outputs):
            needed.update(node.inputs)
    return needed


def inferred_shape(fgraph, var: Variable) -> Variable | None:
    """``var``'s shape as an int64 vector built from its op's ``infer_shape`` (a constant when
    every size is static), or None where the op has none or answers with ``var`` itself."""
    static = getattr(var.type, "shape", None)
    if static is None:
        return None
    if all(s is not None for s in static):
        return et.constant(np.array(static, dtype="int64"))
    node = var.owner
    if node is None:  # an input: its static sizes as constants, the others read at run time
        return et.MakeVector("int64")(*et.shape_of(var)) if any(s is not None for s in static) else None
    if isinstance(node.op, et.Shape):
        return None
    try:
        shapes = node.op.infer_shape(fgraph, node, [et.shape_of(i) if hasattr(i.type, "shape") else None
                                                    for i in node.inputs])
    except (NotImplementedError, AttributeError, TypeError, ValueError):
        return None  # an op without infer_shape (or one that cannot say for these inputs)
    dims = [et.as_tensor_variable(d) for d in shapes[node.outputs.index(var)]]
    if len(dims) != len(static) or var in ancestors(dims):
        return None  # e.g. advanced indexing answers with var.shape itself
    if all(isinstance(d, Constant) for d in dims):
        return et.constant(np.array([int(d.data) for d in dims], dtype="int64"))
    return et.MakeVector("int64")(*dims)


def _new_nodes(var: Variable, fgraph: FunctionGraph) -> list:
    """The nodes of ``var``'s graph that are not in ``fgraph``."""
    return [n for n in toposort([var]) if n not in fgraph.apply_nodes]
