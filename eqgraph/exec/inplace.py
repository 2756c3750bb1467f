"""Destructive variants: fused nodes that write their results over inputs nobody needs again.

After fusion, a ``Composite`` output may take the memory of one of its inputs (its
``destroy_map``, ``Composite.inplace``) when that input:

- has the output's dtype and rank, and no later step of the node reads it;
- is not protected: not an input of the function, a constant or a value computed from constants
  alone (the linker computes it once and keeps it), a shared value's storage, an output, nor a
  view of one (nor viewed by one);
- is read by nothing that may run after the node: every other reader of its memory (the
  input itself, and every view of the same array) is an ancestor of the node, so it runs
  first in every topological order the linker may pick.

The kernels then compute in place where the input has the output's full shape (a run-time
test: a broadcast input is smaller) and allocate otherwise, so a destroy_map is a permission,
never a different result.  The linker reads the destroy_map as any op's: views of the result
alias the input's memory, ``_destroy_copies`` would copy an input still needed (this pass
leaves it none), and no call hands out an array a later call writes into.

What it saves is memory, not time: on 1e5 float64 a ufunc into a fresh array costs about what
it costs into an old one, but a chain of fused nodes keeps one array alive instead of one per
node, so peak memory drops (``tests/exec/test_inplace.py`` measures it).
"""

from __future__ import annotations

from eqgraph.exec.composite import Composite
from eqgraph.exec.fusion import folds
from eqgraph.terms.basic import Constant
from eqgraph.terms.fgraph import FunctionGraph


def destroy_dead_inputs(fgraph: FunctionGraph) -> FunctionGraph:
    """``fgraph``, or a new graph (same inputs and outputs) in which fused nodes overwrite the
    inputs that the rules above allow (the function's shared values are among its inputs)."""
    order = fgraph.toposort()
    bit = {node: 1 << i for i, node in enumerate(order)}
    ancestors: dict = {}   # variable -> bit mask of the nodes it depends on
    root = {v: v for v in fgraph.variables}
    members: dict = {}     # root -> the variables made so far that hold its memory (itself and views)
    kept = set(fgraph.inputs) | {v for v in fgraph.variables if isinstance(v, Constant)}
    folded: set = set()    # what the linker computes once from constants
    chosen: dict = {}      # node -> its (output, input) pairs
    for node in order:
        above = 0
        for v in node.inputs:
            above |= ancestors.get(v, 0)
        pairs = _overwritable(node, above, bit, root, members, kept, fgraph) if type(node.op) is Composite else []
        if pairs:
            chosen[node] = pairs
        aliases = {**getattr(node.op, "view_map", {}), **getattr(node.op, "destroy_map", {}),
                   **{k: [j] for k, j in pairs}}
        if folds(node, folded):
            kept.update(node.outputs)
        for k, out in enumerate(node.outputs):
            ancestors[out] = above | bit[node]
            if aliases.get(k):
                root[out] = root[node.inputs[aliases[k][0]]]
            members.setdefault(root[out], []).append(out)
    return _rebuilt(fgraph, order, chosen) if chosen else fgraph


def _overwritable(node, above: int, bit: dict, root: dict, members: dict, kept: set, fgraph) -> list:
    """The (output, input) pairs of a Composite ``node`` that may share memory."""
    op = node.op
    pairs, used = [], set()
    for k, out in enumerate(node.outputs):
        step = op.outs[k] - op.nin
        later = set().union(*[set(args) for _, args in op.steps[step + 1:]])
        for j, var in enumerate(node.inputs):
            memory = root[var]
            if (j in used or j in later or var.owner is None or memory in kept or var.type.dtype != out.type.dtype
                    or var.ndim != out.ndim or out.ndim == 0 or _never_fits(var.type.shape, out.type.shape)):
                continue
            # the node reads this memory through input j only (not also through a view of it)
            if sum(root[v] is memory for v in node.inputs) != 1:
                continue
            # every reader of the memory: the clients of each variable holding it, the function's
            # outputs among them (a view made later is made by such a client, which must be an
            # ancestor: so no view is made later)
            readers = [c for v in members.get(memory, []) for c, _ in fgraph.clients.get(v, []) if c is not node]
            if all(c != "output" and bit[c] & above for c in readers):
                pairs.append((k, j))
                used.add(j)
                break
    return pairs


def _never_fits(shape, out_shape) -> bool:
    """An axis of length 1 where the output's may be longer: broadcast, never full size."""
    return any(s == 1 and o != 1 for s, o in zip(shape, out_shape))


def _rebuilt(fgraph, order, chosen: dict) -> FunctionGraph:
    replace: dict = {}
    for node in order:
        inputs = [replace.get(v, v) for v in node.inputs]
        if node in chosen:
            new = node.op.with_inplace(chosen[node]).make_node(*inputs)
            for old, fresh in zip(node.outputs, new.outputs):
                fresh.name = old.name
        else:
            new = node.clone_with_new_inputs(inputs)
        replace.update(zip(node.outputs, new.outputs))
    return FunctionGraph(fgraph.inputs, [replace.get(v, v) for v in fgraph.outputs], clone=False)


__all__ = ["destroy_dead_inputs"]
