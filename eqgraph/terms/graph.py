"""Walking, sorting, cloning and comparing graphs.

Every function here uses an explicit stack: graphs of 10^5 nodes (long chains
included) must not hit Python's recursion limit.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from eqgraph.terms.basic import Apply, Constant, Variable
from eqgraph.terms.walk import GraphCycleError, _as_list, ancestors, graph_inputs, toposort

__all__ = ["GraphCycleError", "ancestors", "graph_inputs", "toposort", "applys_between", "vars_between",
           "clone_get_equiv", "clone", "clone_replace", "equal_computations"]


def applys_between(inputs, outputs) -> list[Apply]:
    """The Apply nodes on paths from ``inputs`` to ``outputs``, in topological order."""
    return toposort(outputs, inputs)


def vars_between(inputs, outputs) -> list[Variable]:
    """Every variable on the paths between ``inputs`` and ``outputs``."""
    return ancestors(outputs, inputs)


def clone_get_equiv(inputs, outputs, copy_inputs: bool = True, copy_orphans: bool = True, memo=None):
    """Clone the graph between ``inputs`` and ``outputs``; return ``{old: new}`` for
    every variable and Apply node."""
    memo = {} if memo is None else memo
    for var in _as_list(inputs):
        if var not in memo:
            memo[var] = var.clone() if copy_inputs else var
    for node in toposort(outputs, list(memo)):
        for var in node.inputs:
            if var not in memo:  # an orphan: a constant or a variable not listed as input
                memo[var] = var.clone() if copy_orphans else var
        new_node = node.clone_with_new_inputs([memo[v] for v in node.inputs], strict=True)
        memo[node] = new_node
        for old, new in zip(node.outputs, new_node.outputs):
            new.name = old.name
            memo[old] = new
    for var in _as_list(outputs):
        if var not in memo:
            memo[var] = var.clone() if copy_orphans else var
    return memo


def clone(inputs, outputs, copy_inputs: bool = True, copy_orphans: bool = True):
    """Copy the graph between ``inputs`` and ``outputs``; return ``(new_inputs, new_outputs)``."""
    memo = clone_get_equiv(inputs, outputs, copy_inputs, copy_orphans)
    return [memo[v] for v in _as_list(inputs)], [memo[v] for v in _as_list(outputs)]


def clone_replace(outputs, replace=None, rebuild_strict: bool = False):
    """Copy ``outputs``' graph with each key of ``replace`` substituted by its value.

    Each node is rebuilt by its op, so types follow the replacements; with ``rebuild_strict``
    (PyTensor's default) each replacement must fit the type it replaces and the nodes keep
    their output types. Returns a single variable when given one, else a list.
    """
    pairs = list((replace or {}).items()) if not isinstance(replace, list) else list(replace)
    single = isinstance(outputs, Variable)
    memo = {old: new for old, new in pairs}
    for node in toposort(outputs, list(memo)):
        new_inputs = [memo.get(v, v) for v in node.inputs]
        if all(new is old for new, old in zip(new_inputs, node.inputs)):
            continue
        new_node = node.clone_with_new_inputs(new_inputs, strict=rebuild_strict)
        for old, new in zip(node.outputs, new_node.outputs):
            new.name = old.name
            memo[old] = new
    result = [memo.get(v, v) for v in _as_list(outputs)]
    return result[0] if single else result


def equal_computations(xs, ys, in_xs=None, in_ys=None) -> bool:
    """True iff ``xs`` and ``ys`` compute the same thing from corresponding inputs.

    Ops must be equal, constants equal by value; ``in_xs[i]`` is matched with
    ``in_ys[i]``; any other ownerless variable only matches itself.  Sharing
    does not matter: a subterm used twice equals two equal copies of it.
    """
    xs, ys = _as_list(xs), _as_list(ys)
    if len(xs) != len(ys):
        return False
    inputs = dict(zip(in_xs or (), in_ys or ()))
    outputs_of = {y: x for x, y in inputs.items()}
    equal: set = set()
    stack = list(zip(xs, ys))
    while stack:
        x, y = stack.pop()
        if (x, y) in equal:
            continue
        if x in inputs or y in outputs_of:
            if inputs.get(x) is not y:
                return False
        elif x.type != y.type:
            return False
        elif isinstance(x, Constant) or isinstance(y, Constant):
            if not (isinstance(x, Constant) and x.equals(y)):
                return False
        elif x.owner is None or y.owner is None:
            if x is not y:
                return False
        else:
            nx, ny = x.owner, y.owner
            if x.index != y.index or nx.op != ny.op or len(nx.inputs) != len(ny.inputs):
                return False
            stack.extend(zip(nx.inputs, ny.inputs))
        equal.add((x, y))
    return True
