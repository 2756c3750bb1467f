"""Walking, sorting, cloning and comparing graphs.

Every function here uses an explicit stack: graphs of 10^5 nodes (long chains
included) must not hit Python's recursion limit.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from eqgraph.terms.basic import Apply, Constant, Variable


def _as_list(xs) -> list:
    if isinstance(xs, Variable):
        return [xs]
    return list(xs)


def ancestors(outputs, blockers: Iterable[Variable] | None = None) -> list[Variable]:
    """Every variable that ``outputs`` depend on (outputs included), depth-first.

    The walk does not go past variables in ``blockers``.
    """
    blocked = set(blockers or ())
    seen: set[Variable] = set()
    order: list[Variable] = []
    stack = list(reversed(_as_list(outputs)))
    while stack:
        var = stack.pop()
        if var in seen:
            continue
        seen.add(var)
        order.append(var)
        if var.owner is not None and var not in blocked:
            stack.extend(reversed(var.owner.inputs))
    return order


def graph_inputs(outputs, blockers=None) -> list[Variable]:
    """The ownerless variables (inputs and constants) that ``outputs`` depend on."""
    blocked = set(blockers or ())
    return [v for v in ancestors(outputs, blocked) if v.owner is None or v in blocked]


def toposort(outputs, inputs: Sequence[Variable] | None = None) -> list[Apply]:
    """The Apply nodes between ``inputs`` and ``outputs``, each after its inputs' owners.

    The order is the post-order of a depth-first walk from the outputs, so it
    is deterministic and follows the order in which inputs are listed.  A graph
    edited into a cycle (``node.inputs[i] = a variable that depends on node``)
    raises GraphCycleError; every compile, gradient and print walks through here.
    """
    blocked = set(inputs or ())
    # node -> True once emitted; False while expanded but not yet emitted, that is, on the
    # path from an output: an input whose owner is on the path closes a cycle.
    emitted: dict[Apply, bool] = {}
    order: list[Apply] = []
    # Each stack entry is (node, expanded?): a node is emitted when popped the
    # second time, after all of its inputs' owners have been emitted.
    stack: list[tuple[Apply, bool]] = []
    for out in reversed(_as_list(outputs)):
        if out.owner is not None and out not in blocked:
            stack.append((out.owner, False))
    while stack:
        node, expanded = stack.pop()
        if emitted.get(node):
            continue
        if expanded:
            emitted[node] = True
            order.append(node)
            continue
        stack.append((node, True))
        emitted[node] = False
        for var in reversed(node.inputs):
            owner = var.owner
            if owner is not None and var not in blocked:
                state = emitted.get(owner)
                if state is None:
                    stack.append((owner, False))
                elif state is False:
                    raise GraphCycleError(_cycle(stack, owner))
    return order


class GraphCycleError(ValueError):
    """A variable depends on itself: the graph was edited (``owner.inputs``) into a cycle."""


def _cycle(stack, start: Apply) -> str:
    """The message for a cycle through ``start``: the expanded nodes on the stack from
    ``start`` to the top are the path that leads back to it."""
    path = [node for node, expanded in stack if expanded]
    path = path[path.index(start):]
    shown = " -> ".join(str(node) for node in path[:6]) + (" -> ..." if len(path) > 6 else "")
    return (f"The graph has a cycle of {len(path)} node(s): {shown} -> back to {start.op}. "
            "A variable cannot depend on itself; was an Apply's owner.inputs edited by hand?")


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


def clone_replace(outputs, replace=None):
    """Copy ``outputs``' graph with each key of ``replace`` substituted by its value.

    Returns a single variable when given one, else a list.
    """
    pairs = list((replace or {}).items()) if not isinstance(replace, list) else list(replace)
    single = isinstance(outputs, Variable)
    memo = {old: new for old, new in pairs}
    for node in toposort(outputs, list(memo)):
        new_inputs = [memo.get(v, v) for v in node.inputs]
        if all(new is old for new, old in zip(new_inputs, node.inputs)):
            continue
        new_node = node.clone_with_new_inputs(new_inputs, strict=False)
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
