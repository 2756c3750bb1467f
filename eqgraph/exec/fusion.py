"""Elementwise fusion: after extraction, each maximal group of connected elementwise
nodes becomes one ``Composite`` node (``composite.py``), so a call pays one dispatch
and one loop for the group rather than one per op.

Why after extraction rather than inside it: extraction already prices elementwise
nodes as fused (``extract/costs.py`` charges them per element, not a dispatch each),
so the graph it picks is the one fusion would have picked; grouping is then a
linear pass over a few hundred nodes instead of a search over the e-graph.

Grouping walks the nodes in topological order and merges a node with the groups
of its elementwise producers.  A merge is refused when it would make a cycle: when
some path leaves a group and comes back into it (``x = f(group)`` computed outside,
then ``g(x, group)`` inside).  Paths are tracked as bit masks: ``ancestors[v]`` has
one bit per elementwise node that ``v`` depends on.  Nodes whose inputs are all
constants are left alone: the linker folds them once (``link._fold_constants``).

Before grouping, a gradient's ``SumToShape(g, like)`` is dropped where ``g`` and ``like``
provably have one shape (``drop_same_shape_sums``): it returns ``g`` itself then, and as a node
it splits the elementwise group around it and makes ``like`` a value computed only for
its shape.

After grouping, a float64 sum or mean of a fused result joins the fused node that computes it
(``fuse_reductions``, ``reducing.py``): the Numba kernel adds values up as it computes them.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

from eqgraph.exec.numba import loops as numba_loops
from eqgraph.exec.composite import Composite, is_fusable
from eqgraph.exec.numba.fused import layout
from eqgraph.exec.numba.kernels import LIBM_EXTRA_NS, STEP_NS, TRANSCENDENTAL, numba
from eqgraph.exec.reducing import ReducingComposite
from eqgraph.tensor.elemwise import shape_inputs
from eqgraph.tensor.math import Reduce
from eqgraph.tensor.shape import SumToShape
from eqgraph.terms.basic import Constant
from eqgraph.terms.fgraph import FunctionGraph


@dataclass(eq=False)   # compared by identity
class _Group:
    nodes: list                       # in topological order
    members: int                      # bit mask of its nodes
    outside_ancestors: int = 0        # elementwise nodes its outside inputs depend on
    produced: set = field(default_factory=set)   # variables its nodes compute (set at the end)
    libm_ns: float = 0.0              # its nodes' LIBM_EXTRA_NS, kept as nodes join (``_replicated``)


def fuse(fgraph: FunctionGraph) -> FunctionGraph:
    """A new FunctionGraph (same inputs and outputs, in order) with every group of two or
    more connected elementwise nodes replaced by one ``Composite``; ``fgraph`` is unchanged."""
    order = fgraph.toposort()
    for rewrite in (drop_same_shape_sums, recompute_for_late_readers):
        rewritten = rewrite(fgraph, order)
        if rewritten is not fgraph:
            fgraph, order = rewritten, rewritten.toposort()
    groups = _group(order)
    fused = [g for g in groups if len(g.nodes) > 1 or _worth_fusing_alone(g.nodes[0])]
    if fused:
        fgraph = _rebuild(fgraph, order, fused)
    return fuse_reductions(fgraph)


def shape_sources(order) -> dict:
    """For each variable an elementwise node computes, the variables whose shapes broadcast
    to its shape (a frozenset); any other variable is its own source.

    An elementwise result has the broadcast shape of the inputs ``shape_inputs`` names
    (tensor/elemwise.py), so two results of one rank with the same sources have the same
    shape: ``x * 2`` and ``exp(x) + b.dimshuffle('x')`` both have the sources ``{x}``."""
    sources: dict = {}
    for node in order:
        if not is_fusable(node.op):
            continue
        found: set = set()
        for v in shape_inputs(node):
            found |= sources.get(v, {v})
        sources[node.outputs[0]] = frozenset(found)
    return sources


def drop_same_shape_sums(fgraph: FunctionGraph, order=None) -> FunctionGraph:
    """``fgraph`` with each ``SumToShape(g, like)`` whose operands provably share a shape
    (``shape_sources``, same rank, same type) replaced by ``g``, what it returns then; of the
    others, a ``like`` computed elementwise from one variable of its own type reads that
    variable's shape instead, so that ``like`` is not computed only to be measured.
    ``fgraph`` itself when there is nothing to change; ``order``: its toposort, if known."""
    order = fgraph.toposort() if order is None else order
    if not any(type(node.op) is SumToShape for node in order):
        return fgraph  # no gradient's un-broadcast: no shape sources to trace
    sources = shape_sources(order)
    outputs = set(fgraph.outputs)
    same, lighter = {}, {}
    for node in order:
        if type(node.op) is not SumToShape or node.outputs[0] in outputs:
            continue
        g, like = node.inputs
        if g.type == node.outputs[0].type and sources.get(g, {g}) == sources.get(like, {like}):
            same[node.outputs[0]] = g
        elif len(sources.get(like, ())) == 1:
            (source,) = sources[like]
            if source.type == like.type:
                lighter[node] = source
    if not same and not lighter:
        return fgraph
    replace: dict = {}
    for node in order:
        if node.outputs[0] in same:
            g = same[node.outputs[0]]
            replace[node.outputs[0]] = replace.get(g, g)
        elif node in lighter or any(v in replace for v in node.inputs):
            inputs = [replace.get(v, v) for v in node.inputs]
            if node in lighter:
                inputs[1] = replace.get(lighter[node], lighter[node])
            new = node.clone_with_new_inputs(inputs)
            replace.update(zip(node.outputs, new.outputs))
    return FunctionGraph(fgraph.inputs, [replace.get(v, v) for v in fgraph.outputs], clone=False)


def recompute_for_late_readers(fgraph: FunctionGraph, order=None) -> FunctionGraph:
    """``fgraph`` where a cheap elementwise value that is also read after a reduction of it is
    computed again for those late readers, so that it need not be written.

    In ``(x - m) / sqrt(mean((x - m)**2))`` the division reads ``x - m`` after the mean of its
    square: the division can never join the group computing ``x - m``, so that group wrote
    ``x - m`` out (on long arrays, a pass as long as the fused sum of squares) only for the
    division to read it back.  Computing ``x - m`` again inside the division reads ``x``
    instead, as much memory, and leaves nothing to write.  Only where that is so: a step with no
    libm call, at most one input that is more than one element by its type, and every reader
    that is not late an elementwise node or a fusable sum (so the value is not written anyway).
    Only where sums are fused (``FUSE_REDUCTIONS``): without Numba the value is written for its
    sum anyway, and computing it again costs a pass.
    ``fgraph`` itself when there is nothing to change; ``order``: its toposort, if known."""
    if not FUSE_REDUCTIONS:
        return fgraph
    order = fgraph.toposort() if order is None else order
    position = {n: i for i, n in enumerate(order)}
    above: dict = {}     # variable -> bit mask of the elementwise nodes it depends on
    barred: dict = {}    # variable -> those of them it depends on through some other node
    for node in order:
        mask = barred_mask = 0
        for v in node.inputs:
            mask |= above.get(v, 0)
            barred_mask |= barred.get(v, 0)
        if is_fusable(node.op):
            mask |= 1 << position[node]
        else:
            barred_mask |= mask
        for out in node.outputs:
            above[out], barred[out] = mask, barred_mask
    again: dict = {}     # (reader, input index) -> the node to compute again for it
    for node in order:
        if not _cheap_to_recompute(node):
            continue
        bit, late, others = 1 << position[node], [], []
        for client, index in fgraph.clients[node.outputs[0]]:
            if client != "output" and is_fusable(client.op) and any(
                    barred.get(v, 0) & bit for v in client.inputs if v is not node.outputs[0]):
                late.append((client, index))
            else:
                others.append(client)
        if late and all(c != "output" and (is_fusable(c.op) or _fusable_reduction(c)) for c in others):
            again.update(dict.fromkeys(late, node))
    if not again:
        return fgraph
    replace: dict = {}
    for node in order:
        inputs = [replace.get(v, v) for v in node.inputs]
        for index, v in enumerate(node.inputs):
            if (node, index) in again:
                copied = again[(node, index)]
                inputs[index] = copied.clone_with_new_inputs([replace.get(u, u) for u in copied.inputs]).outputs[0]
        if any(a is not b for a, b in zip(inputs, node.inputs)):
            replace.update(zip(node.outputs, node.clone_with_new_inputs(inputs).outputs))
    return FunctionGraph(fgraph.inputs, [replace.get(v, v) for v in fgraph.outputs], clone=False)


def _cheap_to_recompute(node) -> bool:
    return (is_fusable(node.op) and len(node.outputs) == 1 and getattr(node.op, "name", "") not in TRANSCENDENTAL
            and sum(not all(v.type.broadcastable) for v in node.inputs) <= 1)


def _worth_fusing_alone(node) -> bool:
    """Whether a lone elementwise node becomes a Composite of one step, for a kernel that computes
    it faster than NumPy once hot: an op whose NumPy form makes several passes (``softplus``
    makes six), or a division by an
    invariant value (the loop kernel of ``numba_loops``)."""
    if numba is None or not is_fusable(node.op):
        return False
    if getattr(getattr(node.op, "scalar", None), "passes", 1) > 1:
        return True
    if getattr(node.op, "name", "") != "true_div":
        return False
    op = Composite(len(node.inputs), [(node.op, tuple(range(len(node.inputs))))], [len(node.inputs)])
    return numba_loops.kernel_source(op, op.make_node(*node.inputs)) is not None


def folds(node, known: set) -> bool:
    """Whether the linker folds ``node`` (its inputs are constants or folded): then its outputs
    join ``known``, the variables computable at link time."""
    if all(isinstance(v, Constant) or v in known for v in node.inputs):
        known.update(node.outputs)
        return True
    return False


def _group(order) -> list[_Group]:
    """Elementwise groups, each closed under the merges that keep the graph acyclic."""
    position = {n: i for i, n in enumerate(order)}
    known = set()          # variables computable at link time (constants and what folds from them)
    ancestors: dict = {}   # variable -> bit mask of the elementwise nodes it depends on
    group_of: dict = {}    # node -> its _Group
    live: dict = {}        # id -> each group not merged into another
    for node in order:
        above = 0
        for v in node.inputs:
            above |= ancestors.get(v, 0)
        if not folds(node, known) and is_fusable(node.op):
            bit = 1 << position[node]
            _merge(node, bit, ancestors, group_of, live)
            above |= bit
        for out in node.outputs:
            ancestors[out] = above
    groups = list(live.values())
    for g in groups:
        g.nodes.sort(key=position.get)  # the original order is topological within a group too
        g.produced = {o for n in g.nodes for o in n.outputs}
    return groups


def _merge(node, bit: int, ancestors: dict, group_of: dict, live: dict) -> None:
    """Join ``node`` to as many of its producers' groups as can be without a cycle, and that
    ``_replicated`` does not keep apart."""
    unique = list({id(g): g for v in node.inputs
                   if (g := group_of.get(v.owner)) is not None and not _replicated(g, v, node)}.values())
    options = [unique] + [[g] for g in sorted(unique, key=lambda g: -len(g.nodes))] + [[]]
    for chosen in options:
        if _acyclic(node, chosen, ancestors, group_of, live):
            _join(node, bit, chosen, ancestors, group_of, live)
            return


def _replicated(group: _Group, value, node) -> bool:
    """Whether fusing ``group``, which computes ``value``, into ``node`` would cost more than the
    node it saves: a fused loop runs every step once per element of its output, so a group whose
    output ``node`` broadcasts along an axis computes its libm steps again for each element of that
    axis (``exp(log_sigma)`` of a mixture's components, once per data row).  Priced as the
    program's dispatch of one more node (``STEP_NS``) against the repeated libm steps, each at
    least its ``LIBM_EXTRA_NS``; an axis of unknown length counts as long."""
    libm = group.libm_ns
    if not libm:
        return False
    out = node.outputs[0].type.shape
    shape = (1,) * (len(out) - value.ndim) + tuple(value.type.shape)
    repeats = 1.0
    for size, out_size in zip(shape, out):
        if size == 1 and out_size != 1:
            repeats *= math.inf if out_size is None else out_size
    return (repeats - 1) * libm > STEP_NS


def _acyclic(node, chosen, ancestors, group_of, live) -> bool:
    """Whether ``chosen`` and ``node`` form one group without a path leaving it and coming back.

    Such a path may run through a third group: it enters that group at one member and leaves
    from another that does not depend on the first, a path only once the group is one node.
    So what the new group reads from outside is closed over every group it reaches."""
    members = 0
    for g in chosen:
        members |= g.members
    if not members:
        return True
    reach = 0
    for g in chosen:
        reach |= g.outside_ancestors
    for v in node.inputs:
        if group_of.get(v.owner) not in chosen:
            reach |= ancestors.get(v, 0)
    others = [g for g in live.values() if all(g is not c for c in chosen)]
    grew = True
    while grew and not reach & members:
        grew = False
        for g in others:
            if g.members & reach and (g.outside_ancestors | g.members) & ~reach:
                reach |= g.outside_ancestors | g.members
                grew = True
    return not reach & members


def _join(node, bit, chosen, ancestors, group_of, live) -> None:
    """Merge ``chosen`` and ``node`` into the largest chosen group (or a new one), in place:
    only the smaller groups' nodes move, so a long chain costs linear time."""
    chosen = sorted(chosen, key=lambda g: -len(g.nodes))
    base = chosen[0] if chosen else _Group([], 0)
    live[id(base)] = base
    outside = base.outside_ancestors
    for g in chosen[1:]:
        del live[id(g)]
        base.members |= g.members
        base.libm_ns += g.libm_ns
        outside |= g.outside_ancestors
        base.nodes.extend(g.nodes)
        for n in g.nodes:
            group_of[n] = base
    for v in node.inputs:
        if group_of.get(v.owner) not in chosen:
            outside |= ancestors.get(v, 0)
    base.members |= bit
    base.nodes.append(node)
    base.libm_ns += LIBM_EXTRA_NS.get(getattr(node.op, "name", ""), 0.0)
    base.outside_ancestors = outside & ~base.members
    group_of[node] = base


def _rebuild(fgraph, order, fused) -> FunctionGraph:
    """The graph with each group replaced by its Composite: units (groups and single nodes)
    are emitted in a topological order of their own (a group may need another group's
    output that the original order computes after some of its nodes)."""
    position = {n: i for i, n in enumerate(order)}
    unit_of = {}
    units = []
    for group in fused:
        for n in group.nodes:
            unit_of[n] = len(units)
        units.append(group)
    for n in order:
        if n not in unit_of:
            unit_of[n] = len(units)
            units.append(n)
    needs = [set() for _ in units]
    users = [[] for _ in units]
    for u, unit in enumerate(units):
        for n in (unit.nodes if isinstance(unit, _Group) else [unit]):
            for v in n.inputs:
                if v.owner is not None and unit_of[v.owner] != u:
                    needs[u].add(unit_of[v.owner])
        for d in needs[u]:
            users[d].append(u)

    def first(u):
        unit = units[u]
        return min(position[n] for n in unit.nodes) if isinstance(unit, _Group) else position[unit]

    ready = [(first(u), u) for u in range(len(units)) if not needs[u]]
    heapq.heapify(ready)
    replace: dict = {}
    emitted = 0
    while ready:
        _, u = heapq.heappop(ready)
        emitted += 1
        unit = units[u]
        if isinstance(unit, _Group):
            _emit_group(unit, fgraph, replace)
        else:
            new = unit.clone_with_new_inputs([replace.get(v, v) for v in unit.inputs])
            replace.update(zip(unit.outputs, new.outputs))
        for w in users[u]:
            needs[w].discard(u)
            if not needs[w]:
                heapq.heappush(ready, (first(w), w))
    if emitted < len(units):
        raise AssertionError(f"fusion left {len(units) - emitted} of {len(units)} groups and nodes in a cycle")
    outputs = [replace.get(v, v) for v in fgraph.outputs]
    return FunctionGraph(fgraph.inputs, outputs, clone=False)


def _emit_group(group: _Group, fgraph, replace) -> None:
    """Build ``group``'s Composite over the new graph's variables; record what it replaces."""
    index = {}
    inputs = []
    for n in group.nodes:
        for v in n.inputs:
            if v not in group.produced and v not in index:
                index[v] = len(inputs)
                inputs.append(v)
    nin = len(inputs)
    steps = []
    for j, n in enumerate(group.nodes):
        steps.append((n.op, tuple(index[v] for v in n.inputs)))
        index[n.outputs[0]] = nin + j
    members = set(group.nodes)
    results = [n.outputs[0] for n in group.nodes
               if any(c == "output" or c not in members for c, _ in fgraph.clients[n.outputs[0]])]
    op = Composite(nin, steps, [index[v] for v in results])
    op.adopt(inputs, group.nodes)  # the nodes it fuses are its scalar graph: no need to build them again
    node = op.make_node(*[replace.get(v, v) for v in inputs])
    for old, new in zip(results, node.outputs):
        if new.type != old.type:
            raise AssertionError(f"fusion changed the type of {old}: {old.type} -> {new.type}")
        new.name = old.name
        replace[old] = new


#: a reduction of a value that something else reads too (so it is written anyway) is fused only
#: into nodes of at least this many steps: for a short ``y`` (``[y.sum(), y]`` with ``y = 2x + 1``)
#: the fused node is slower up to 1e5 elements, for a 32-step arithmetic ``y`` it is no slower, and
#: for long chains (bench/suite.py's 2,000-node graph) it is faster
WRITTEN_FROM_STEPS = 32
#: without Numba the fused node runs the same NumPy calls with a Python call or two more, and is
#: no faster on long arrays: then nothing is fused
FUSE_REDUCTIONS = numba is not None


def fuse_reductions(fgraph: FunctionGraph) -> FunctionGraph:
    """``fgraph`` with each float64 sum or mean of a fused node's result (or of a lone
    elementwise node's) taken into that node, a ``ReducingComposite`` (``reducing.py``): the
    value is then added up as it is computed, and not written where nothing else reads it (a
    value that something else reads too is fused only into long nodes, ``WRITTEN_FROM_STEPS``).
    A node takes the reductions of one axis set (the first one met), over its last or first axes
    (``numba_fused.layout``; others gain nothing from fusing).  ``fgraph`` itself when there is
    nothing to take."""
    if not FUSE_REDUCTIONS:
        return fgraph
    order = fgraph.toposort()
    known: set = set()
    taken: dict = {}   # producing node -> the Reduce nodes it takes
    for node in order:
        if folds(node, known) or not _fusable_reduction(node):
            continue
        producer = node.inputs[0].owner
        if producer is None or producer.outputs[0] in known or not (
                type(producer.op) is Composite or is_fusable(producer.op)):
            continue
        if type(producer.op) is not Composite and getattr(producer.op, "name", "") in TRANSCENDENTAL:
            continue   # sum(exp(x)): Numba's scalar exp is slower than NumPy's from 100 elements on
        steps = len(producer.op.steps) if type(producer.op) is Composite else 1
        if steps < WRITTEN_FROM_STEPS and any(client == "output" or not _fusable_reduction(client)
                                              for client, _ in fgraph.clients[node.inputs[0]]):
            continue   # the value is written anyway, and the node is short: see WRITTEN_FROM_STEPS
        reductions = taken.setdefault(producer, [])
        if not reductions or sorted(reductions[0].op.axis) == sorted(node.op.axis):
            reductions.append(node)
    if not taken:
        return fgraph
    absorbed = {r for reductions in taken.values() for r in reductions}
    replace: dict = {}
    for node in order:
        if node in absorbed:
            continue
        inputs = [replace.get(v, v) for v in node.inputs]
        if node in taken:
            _emit_reducing(node, taken[node], inputs, fgraph, absorbed, replace)
        elif any(a is not b for a, b in zip(inputs, node.inputs)):
            replace.update(zip(node.outputs, node.clone_with_new_inputs(inputs).outputs))
    return FunctionGraph(fgraph.inputs, [replace.get(v, v) for v in fgraph.outputs], clone=False)


def _fusable_reduction(node) -> bool:
    op = node.op
    return (type(op) is Reduce and op.name in ("sum", "mean") and node.inputs[0].dtype == "float64"
            and node.outputs[0].dtype == "float64" and layout(node.inputs[0].ndim, op.axis) is not None)


def _emit_reducing(producer, reductions, inputs, fgraph, absorbed, replace) -> None:
    """``producer`` (a Composite, or a lone elementwise node) and ``reductions`` of its outputs
    as one ``ReducingComposite``; its values that something else reads are outputs too."""
    op = producer.op
    steps, outs = (op.steps, op.outs) if isinstance(op, Composite) else ([(op, range(len(inputs)))], [len(inputs)])
    new_outs, reduce_ops, targets = [], [], []
    for k, var in enumerate(producer.outputs):
        if any(client == "output" or client not in absorbed for client, _ in fgraph.clients[var]):
            new_outs.append(outs[k])
            reduce_ops.append(None)
            targets.append(var)
    for r in reductions:
        new_outs.append(outs[producer.outputs.index(r.inputs[0])])
        reduce_ops.append(r.op)
        targets.append(r.outputs[0])
    node = ReducingComposite(len(inputs), steps, new_outs, reduce_ops).make_node(*inputs)
    for old, new in zip(targets, node.outputs):
        if new.type != old.type:
            raise AssertionError(f"fusing reductions changed the type of {old}: {old.type} -> {new.type}")
        new.name = old.name
        replace[old] = new


__all__ = ["drop_same_shape_sums", "folds", "fuse", "fuse_reductions", "recompute_for_late_readers", "shape_sources"]
