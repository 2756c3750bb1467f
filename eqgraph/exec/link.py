"""The linker: a FunctionGraph becomes a flat program of pre-bound thunks.

Each variable gets a one-element storage cell (``storage_map``) and a
one-element compute flag (``compute_map``: 0 not computed, 1 computed,
2 freed), as Theano's linker keeps them.  ``Program.run`` is the per-call hot path: a
loop over ``(thunk, cells to free)`` pairs, with no graph walking and no
lookups by name.  When a thunk raises, the compute flags tell which node failed,
and the error is raised again naming it (``node_errors.py``): the success path
pays nothing for that.

A program's cells belong to one caller at a time; ``Program.relink`` builds
another program over the same graph with cells of its own (one per thread).
"""

from __future__ import annotations

import time
from collections import ChainMap
from dataclasses import dataclass, field

from eqgraph.exec.numba import background as numba_compile
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.exec.lazy import is_lazy, lazy_run
from eqgraph.exec.node_errors import raise_with_node
from eqgraph.exec.numpy.program import known_at_link_time, straight_line
from eqgraph.settings import config
from eqgraph.terms.basic import Constant, Variable
from eqgraph.terms.fgraph import FunctionGraph
from eqgraph.xp import copy_array


@dataclass
class NodeStats:
    """What profiling records about one Apply node."""

    node: object
    calls: int = 0
    seconds: float = 0.0
    flops: int | None = None
    output_bytes: int | None = None


@dataclass
class Program:
    fgraph: FunctionGraph
    order: list
    storage_map: dict
    compute_map: dict
    input_cells: list
    output_cells: list
    thunks: list                     # run in order; each also frees what it was last to read
    reset_flags: list                # compute flags cleared at the start of each call
    folded: set = field(default_factory=set)    # variables computed once, at link time
    roots: dict = field(default_factory=dict)   # variable -> the variable whose memory it may alias
    stats: list | None = None        # per-node NodeStats when profiling
    copies: list = field(default_factory=list)  # human-readable list of destroy_map copies
    options: dict = field(default_factory=dict)  # link()'s keyword arguments, for relink
    source: str | None = None        # the generated program's source (program.py), if it runs one
    call: object = None              # that program without cells: call(*input values) -> [output values]
    compiles: numba_compile.Compiles = field(default_factory=lambda: numba_compile.Compiles("off"))  # Numba forms

    def __post_init__(self):
        flags, thunks = self.reset_flags, self.thunks

        def run() -> None:  # a closure over locals: the per-call loop does no attribute lookups
            for flag in flags:
                flag[0] = 0
            try:  # free unless something raises (Python 3.11's zero-cost exceptions)
                for thunk in thunks:
                    thunk()
            except Exception as err:  # noqa: BLE001  (re-raised, naming the node)
                self._raise_naming_the_node(err)

        self.run = run

    def relink(self) -> Program:
        """The same program with storage cells of its own (for another thread)."""
        return link(self.fgraph, **self.options)

    def failed_node(self):
        """The first node whose outputs were not computed in the last run, or None."""
        compute = self.compute_map
        return next((node for node in self.order if any(compute[o][0] == 0 for o in node.outputs)), None)

    def _raise_naming_the_node(self, err: Exception):
        node = self.failed_node()
        if node is None:
            raise err
        values = [self.storage_map[v][0] for v in node.inputs]
        raise_with_node(node, values, err)


def view_roots(order, fgraph) -> dict:
    """For each variable, the variable whose memory it may alias (through view/destroy maps)."""
    root = {v: v for v in fgraph.variables}
    for node in order:
        aliases = {**getattr(node.op, "view_map", {}), **getattr(node.op, "destroy_map", {})}
        for out_index, in_indices in aliases.items():
            if in_indices:
                root[node.outputs[out_index]] = root[node.inputs[in_indices[0]]]
    return root


def link(fgraph: FunctionGraph, input_cells=None, allow_gc: bool = True, profile: bool = False,
         transfer=None, impl: str | None = None, straight: bool = True, compile: str | None = None) -> Program:
    """Build the program for ``fgraph``.

    ``input_cells`` may give the cells of some inputs (shared variables bring
    their own containers); ``transfer`` moves constants to the backend's device;
    ``impl`` (the backend's name) is passed to each op's ``make_thunk``.
    ``straight``: run the graph as one generated function (``program.py``) where it can
    (on NumPy, not profiled, no lazy nodes); otherwise, and with ``straight=False``, the
    thunk loop, which keeps the compute flags and has per-node hooks.
    ``compile``: when the Numba forms of its nodes and of the whole program are built
    ("background", "eager" or "deferred": ``numba/background.py``; None reads ``config.compile``).
    """
    options = {"allow_gc": allow_gc, "profile": profile, "transfer": transfer, "impl": impl, "straight": straight,
               "compile": compile}
    with numba_compile.collecting((compile or config.compile) if numba_kernels.enabled() else None) as compiles:
        program = _link(fgraph, input_cells, options)
    program.compiles = compiles
    compiles.start()
    return program


def _link(fgraph: FunctionGraph, input_cells, options: dict) -> Program:
    allow_gc, profile, transfer, impl, straight = (options[k] for k in ("allow_gc", "profile", "transfer", "impl",
                                                                        "straight"))
    all_nodes = fgraph.toposort()
    lazy = is_lazy(all_nodes)  # e.g. an ifelse: a run in its own order, freeing at the end (exec/lazy.py)
    storage_map = {v: [None] for v in fgraph.variables}
    compute_map = {v: [0] for v in fgraph.variables}
    for var, cell in zip(fgraph.inputs, input_cells or [None] * len(fgraph.inputs)):
        if cell is not None:
            storage_map[var] = cell
        compute_map[var][0] = 1
    for var in fgraph.variables:
        if isinstance(var, Constant):
            storage_map[var][0] = transfer(var.data) if transfer else var.data
            compute_map[var][0] = 1

    straight = straight and not lazy and not profile and impl in (None, "numpy")
    with numba_compile.collecting(None):   # a folded node runs once: no Numba form for it
        folded = _fold_constants(fgraph, all_nodes, storage_map, compute_map, impl)
    order = [node for node in all_nodes if node.outputs[0] not in folded]
    position = {node: i for i, node in enumerate(order)}
    last_use = _last_uses(fgraph, position)
    roots = view_roots(order, fgraph)
    protected = _protected_roots(fgraph, roots) | {roots[v] for v in folded}
    handed_out = _handed_out(fgraph, roots)
    stats = [] if profile else None
    thunks, copies = [], []
    freed_at: dict[int, list[Variable]] = {}
    if allow_gc and not lazy:
        outputs = set(fgraph.outputs)
        for var, i in last_use.items():
            if (var.owner is not None and var not in outputs and var not in folded
                    and not _aliases_output(var, roots, outputs)):
                freed_at.setdefault(i, []).append(var)
    with_copies = set()
    for i, node in enumerate(order):
        node_storage, pre = _destroy_copies(node, i, fgraph, storage_map, roots, protected, position, copies)
        if straight:  # thunks are made below, only for the nodes that need theirs
            with_copies.update([i] if pre else [])
            continue
        fresh = [o for o in node.outputs if o in handed_out]
        thunk = node.op.make_thunk(node, node_storage, compute_map, no_recycling=fresh, impl=impl)
        if pre:
            thunk = _with_copies(pre, thunk)
        if profile:
            stats.append(NodeStats(node))
            thunk = _timed(thunk, stats[-1], node, storage_map)
        free = freed_at.get(i)
        if free:
            thunk = _then_free(thunk, [storage_map[v] for v in free], [compute_map[v] for v in free])
        thunks.append(thunk)
    reset = [compute_map[o] for node in order for o in node.outputs]
    program = Program(fgraph, order, storage_map, compute_map,
                      [storage_map[v] for v in fgraph.inputs], [storage_map[v] for v in fgraph.outputs],
                      thunks, reset, folded, roots, stats, copies, options)
    if lazy:
        program.run = lazy_run(program, free_after=allow_gc)
    elif straight:
        def thunk_of(i):
            node = order[i]
            node_storage, pre = _destroy_copies(node, i, fgraph, storage_map, roots, protected, position, [])
            fresh = [o for o in node.outputs if o in handed_out]
            thunk = node.op.make_thunk(node, node_storage, compute_map, no_recycling=fresh, impl=impl)
            return _with_copies(pre, thunk) if pre else thunk

        program.run = straight_line(fgraph, order, storage_map, known_at_link_time(fgraph, folded, order), freed_at,
                                    handed_out, thunk_of, with_copies,
                                    aliased={roots[v] for v in fgraph.variables if roots[v] is not v})
        program.source, program.call = program.run.source, program.run.call
    return program


def _fold_constants(fgraph, order, storage_map, compute_map, impl) -> set:
    """Run, once, the nodes whose inputs are all known at link time; return their outputs.

    The graph is unchanged (``dprint`` still shows these nodes); only the
    per-call program skips them.  ``Op.do_constant_folding`` can refuse.
    """
    known = {v for v in fgraph.variables if isinstance(v, Constant)}
    folded = set()
    for node in order:
        if all(v in known for v in node.inputs) and node.op.do_constant_folding(fgraph, node):
            try:
                node.op.make_thunk(node, storage_map, compute_map, no_recycling=[], impl=impl)()
            except Exception:  # noqa: BLE001  (a failure belongs to call time, where it is reported)
                continue
            known.update(node.outputs)
            folded.update(node.outputs)
    return folded


def _then_free(thunk, cells, flags):
    def run():
        thunk()
        for cell in cells:
            cell[0] = None
        for flag in flags:
            flag[0] = 2

    return run


def _last_uses(fgraph, position) -> dict:
    """For each variable, the position of the last node that reads it."""
    last = {}
    for var, clients in fgraph.clients.items():
        nodes = [position[c] for c, _ in clients if c in position]  # folded nodes are not in it
        if nodes:
            last[var] = max(nodes)
    return last


def _aliases_output(var, roots, outputs) -> bool:
    return any(roots.get(o) is roots.get(var) for o in outputs)


def _handed_out(fgraph, roots) -> set:
    """Computed variables whose memory a call hands out (an output, an update, or a view
    of one): their ops get ``no_recycling``, so that no call writes into an array that an
    earlier call returned."""
    results = {roots[o] for o in fgraph.outputs}
    return {v for v in fgraph.variables if v.owner is not None and roots[v] in results}


def _protected_roots(fgraph, roots) -> set:
    """Memory that no op may overwrite: inputs and constants (outputs: ``_destroy_copies``)."""
    protected = {roots[v] for v in fgraph.inputs}
    protected |= {roots[v] for v in fgraph.variables if isinstance(v, Constant)}
    return protected


def _destroy_copies(node, i, fgraph, storage_map, roots, protected, position, copies):
    """Give a destroying node private copies of inputs that are still needed elsewhere."""
    destroyed = {j for js in getattr(node.op, "destroy_map", {}).values() for j in js}
    if not destroyed:
        return storage_map, []
    override, pre = {}, []
    for j in sorted(destroyed):
        var = node.inputs[j]
        root = roots[var]
        # values made before this node that share the memory and are read after it, or returned
        # (a client "output"); the node's own outputs hold the overwritten value, and what is
        # made from them later is newer still: the call may return those
        later = any(roots[v] is root and (v.owner is None or position.get(v.owner, -1) < i)
                    and any(c == "output" or position.get(c, -1) > i for c, _ in clients)
                    for v, clients in fgraph.clients.items())
        if root in protected or later:
            cell = [None]
            override[var] = cell
            pre.append((storage_map[var], cell))
            copies.append(f"{node.op} copies input {j} ({var}) before overwriting it")
    return (ChainMap(override, storage_map) if override else storage_map), pre


def _with_copies(pre, thunk):
    def run():
        for source, private in pre:
            private[0] = copy_array(source[0])
        thunk()

    return run


def _timed(thunk, stats: NodeStats, node, storage_map):
    clock = time.perf_counter
    out_cells = [storage_map[o] for o in node.outputs]
    in_cells = [storage_map[v] for v in node.inputs]

    def run():
        start = clock()
        needed = thunk()  # a lazy thunk's answer (exec/lazy.py), None otherwise
        stats.seconds += clock() - start
        stats.calls += 1
        if stats.flops is None:
            shapes_in = [tuple(getattr(c[0], "shape", ())) for c in in_cells]
            shapes_out = [tuple(getattr(c[0], "shape", ())) for c in out_cells]
            try:
                stats.flops = node.op.flops(shapes_in, shapes_out)
            except (NotImplementedError, TypeError, ValueError, IndexError):
                stats.flops = None
            try:
                stats.output_bytes = sum(o.type.get_size(o.type.get_shape_info(c[0]))
                                         for o, c in zip(node.outputs, out_cells))
            except (NotImplementedError, AttributeError, TypeError):
                stats.output_bytes = None
        return needed

    return run
