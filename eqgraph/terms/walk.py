"""Walking and sorting graphs: ancestors, inputs, topological order.

These walks read only ``variable.owner`` and ``apply.inputs``, so they sit below the
classes they walk (``terms/basic.py`` uses ``toposort`` to pickle).  Every function here
uses an explicit stack: graphs of 10^5 nodes (long chains included) must not hit
Python's recursion limit.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

# The classes are not imported (they import this module): annotations name them loosely.
Variable = Apply = Any


def _as_list(xs) -> list:
    if hasattr(xs, "owner"):  # one variable (a Variable, without importing the class)
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
