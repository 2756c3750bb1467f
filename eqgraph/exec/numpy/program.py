"""The per-call program as one generated Python function.

The thunk loop (``link.py``) pays, for every node, a call of its thunk, a list of
input values built from storage cells, compute flags, and a wrapper that frees what
the node was last to read: several Python calls per node, which at small sizes are most
of the time of a call.  ``straight_line`` writes the whole linked graph as one
function instead, with a local variable per value, and prints like the fused kernels
(``program.source``)::

    def program(v0, v1):                         # the call's arguments
        try:
            v2 = f0(v0, k1)                      # Elemwise: its NumPy function, bound as f0
            v3, = g1(v2)                         # Composite: its kernel (kernels.py)
            p2(n2, [v3], c2)                     # any other op: its perform and output cells
            v4 = c2_0[0]; c2_0[0] = None
            del v2, v3                           # freed after their last reader
            return [v4, v1]                      # the results
        except Exception as err:
            fail(err, locals())

``Function`` calls it with its arguments where no shared value is read or updated; other
callers (shared values, the Dask backend) use ``run()``, which reads the input cells and
writes the output cells around it.

Each node is called the way its thunk would call it, so the values are the thunk
path's to the last bit:
- ``Elemwise`` on NumPy: its ufunc, and the thunk's cast to the output dtype where
  the ufunc's own loop may not give it (``kernels.step_source``); ``Cast``: one copy.
- ``Composite``: the kernel its thunk runs (``Composite.make_call``: NumPy, then Numba once compiled).
- an op with the default ``make_thunk``: ``perform`` with the node's output cells, so an op
  that reuses the array left in its cell still can; cells of handed-out results are
  emptied first (``no_recycling``), and cells of values freed at their last reader are
  emptied once read, as the thunk loop frees them.
- anything else (a ``make_thunk`` of its own, a ``destroy_map`` copy): its thunk, with
  the inputs put in their cells first.
- the count of a mean's gradient, ``Cast(DimShuffle{}(Shape(x)))`` (then maybe ``DimShuffle{x}``),
  four nodes that each make a small array, is one line where ``Shape`` was:
  ``array([x.shape[0]], dtype=float64)`` (``_count_chains``), the same value.

A failure raises where it happened, and the line number of the generated frame says which
node it was; its locals hold the node's inputs, so the error names the op, the inputs'
shapes and dtypes as the thunk loop does (``node_errors.py``).  Nothing is paid for that
on the success path.  Compute flags are not kept: this program is not lazy; graphs with
lazy nodes, profiling and debug mode keep the thunk loop, which has per-node hooks.
"""

from __future__ import annotations

import numpy as np

from eqgraph.exec.composite import Composite
from eqgraph.exec.numpy.kernels import exact_ufunc, step_source
from eqgraph.exec.node_errors import raise_with_node
from eqgraph.exec.numba.program import whole_program
from eqgraph.exec.numpy.calls import numpy_call
from eqgraph.exec.source import define
from eqgraph.tensor.elemwise import Cast, Elemwise
from eqgraph.tensor.dimshuffle_op import DimShuffle
from eqgraph.tensor.shape import Shape
from eqgraph.terms.basic import Constant
from eqgraph.terms.op import Op


def straight_line(fgraph, order, storage_map, constants, freed_at, handed_out, thunk_of, own_thunk=(),
                  aliased=frozenset()):
    """``run()`` for ``order`` (the linked nodes): reads the input cells, writes the output cells;
    ``run.call(*input values) -> [output values]`` is the program itself, without cells.

    constants: the variables whose values are known at link time (constants, folded values);
    freed_at: {node position: variables freed after it} (empty with ``allow_gc=False``);
    handed_out: variables whose memory a call returns (their ops must not recycle cells);
    thunk_of(i): the thunk for node ``i``, for the nodes that must run through theirs:
    those in ``own_thunk`` (positions) and those of ops with a ``make_thunk`` of their own;
    aliased: variables whose memory another variable views (never written in place).
    """
    writer = _Writer(storage_map, gc=bool(freed_at))
    freeable = {v for vs in freed_at.values() for v in vs}
    params = [writer.local(var) for var in fgraph.inputs]
    lines = [f"def program({', '.join(params)}):", "    try:"]
    for var in constants:
        writer.known[var] = storage_map[var][0]
        writer.names[var] = writer.bind(f"k{len(writer.names)}", storage_map[var][0])
    line_of_node: dict[int, int] = {}   # first line of each node in the source -> node position
    counts, in_counts = _count_chains(fgraph, order, own_thunk)
    for i, node in enumerate(order):
        freed = freed_at.get(i, [])
        first = len(lines) + 1
        kind = "thunk" if i in own_thunk else _kind(node.op)
        writer.dead_here = {v for v in freed if v not in aliased and v not in constants}
        if i in counts:
            kind, node_lines = "numpy", [_count_line(writer, node.inputs[0], *counts[i])]
        else:
            node_lines = [] if i in in_counts else _node_lines(writer, i, node, kind, handed_out, freeable, thunk_of)
        for line in node_lines:
            lines.append("        " + line)
        writer.made_by.update((o, kind) for o in node.outputs)
        for lineno in range(first, len(lines) + 1):
            line_of_node[lineno] = i
        dead = [writer.names.pop(v) for v in freed if v in writer.names and v not in constants]
        if dead:
            lines.append(f"        del {', '.join(dead)}")
    lines.append(f"        return [{', '.join(writer.names[var] for var in fgraph.outputs)}]")
    lines.append("    except Exception as err:  # noqa: BLE001")
    lines.append("        fail(err, locals())")
    source = "\n".join(lines) + "\n"

    def fail(err, values):
        lineno = err.__traceback__.tb_lineno
        i = line_of_node.get(lineno)
        if i is None:
            raise err
        node = order[i]
        inputs = [storage_map[v][0] if v in constants else values.get(writer.locals.get(v)) for v in node.inputs]
        if isinstance(node.op, Composite) and writer.kinds.get(i) == "call":
            err = _chained(node.op.step_error(node, inputs, err), err)
        raise_with_node(node, inputs, err)

    writer.namespace["fail"] = fail
    define(source, "<eqgraph program>", writer.namespace)
    call = writer.namespace["program"]
    call.source = source
    run = _cell_runner(call, fgraph, storage_map, constants)
    # the caller Function uses: the whole graph as one Numba function once compiled, where it can be
    run.source, run.call = source, whole_program(fgraph, order, {v: storage_map[v][0] for v in constants}, call)
    return run


def _cell_runner(call, fgraph, storage_map, constants):
    """``run()``: ``call`` on the values in the input cells, its results put in the output cells
    (those of inputs and constants hold them already).  ``Function`` calls ``call`` directly
    where no shared value is read or updated: its arguments are the program's, its results are
    the program's (less per call than going through cells)."""
    namespace = {"call": call}
    args = ", ".join(f"{_bound(namespace, f'i{k}', storage_map[v])}[0]" for k, v in enumerate(fgraph.inputs))
    outs = [f"{_bound(namespace, f'o{k}', storage_map[v])}[0]" if v.owner is not None and v not in constants else "_"
            for k, v in enumerate(fgraph.outputs)]
    body = f"    {', '.join(outs)}, = call({args})" if outs else f"    call({args})"
    return define(f"def run():\n{body}\n", "<eqgraph program cells>", namespace)["run"]


def _bound(namespace: dict, name: str, value) -> str:
    namespace[name] = value
    return name


class _Writer:
    """Names of values and of the constants bound into the generated function."""

    def __init__(self, storage_map, gc: bool):
        self.storage_map = storage_map
        self.gc = gc                # empty the cells that a thunk read, once it ran
        self.names: dict = {}       # variable -> the local (or bound constant) holding it, while live
        self.locals: dict = {}      # variable -> its local, for the error of a failing node
        self.namespace: dict = {"array": np.array, "asarray": np.asarray, "ndarray": np.ndarray}
        self.kinds: dict = {}       # node position -> how it is called
        self.made_by: dict = {}     # variable -> how the node computing it is called
        self.known: dict = {}       # variable -> its value, known at link time
        self.dead_here: set = set() # values the current node is the last to read (not viewed by others)
        self.count = 0

    def local(self, var) -> str:
        self.names[var] = self.locals[var] = name = f"v{self.count}"
        self.count += 1
        return name

    def bind(self, name: str, value) -> str:
        self.namespace[name] = value
        return name

    def args(self, node) -> str:
        return ", ".join(self.names[v] for v in node.inputs)

    def broadcast_args(self, node) -> str:
        """``args``, with each constant of one element that another input's rank covers bound
        as a 0-d array: NumPy broadcasts a 0-d operand by its scalar path, where a ``(1,)``
        array costs a broadcast, and the result
        and the loop are the same (same dtype, same value, the shape set by the other input)."""
        names = []
        for v in node.inputs:
            value = self.known.get(v)
            if (value is not None and np.ndim(value) > 0 and np.size(value) == 1 and isinstance(value, np.ndarray)
                    and any(u is not v and u.ndim >= v.ndim for u in node.inputs)):
                names.append(self.bind(f"{self.names[v]}_0d", value.reshape(())))
            else:
                names.append(self.names[v])
        return ", ".join(names)


def _node_lines(w: _Writer, i, node, kind, handed_out, freeable, thunk_of) -> list[str]:
    op = node.op
    w.kinds[i] = kind
    if kind == "elemwise":
        fn, dtype = op.scalar.impl(np), node.outputs[0].type.numpy_dtype
        exact = node.outputs[0].ndim > 0 and exact_ufunc(fn, tuple(v.type.numpy_dtype for v in node.inputs), dtype)
        reuse = _dead_buffer(w, node) if exact else None
        if reuse is None:
            return _step(w, i, node, fn, dtype, exact, w.broadcast_args(node))
        buffer, same_shape = reuse  # in place: a dead intermediate's array holds the result
        call, target = f"{w.bind(f'f{i}', fn)}({w.broadcast_args(node)}", w.local(node.outputs[0])
        if not same_shape:
            return [f"{target} = {call}, out={buffer})"]
        return [f"{target} = {call}, out={buffer}) if {same_shape} else {call})"]
    if kind == "cast":
        return _step(w, i, node, None, node.outputs[0].type.numpy_dtype, False)
    if kind == "call":
        name = f"g{i}"   # the program reads it from its globals on each call, so rebinding it takes effect
        run = op.make_call(node, [o for o in node.outputs if o in handed_out],
                           rebind=lambda fast: w.bind(name, fast))
        call = f"{w.bind(name, run)}({w.args(node)})"
        return [f"{', '.join(w.local(o) for o in node.outputs)}, = {call}"]
    if kind == "perform" and len(node.outputs) == 1:
        numpy = numpy_call(op, node, [w.names[v] for v in node.inputs], w.bind)
        if numpy is not None:
            w.kinds[i] = "numpy"
            expr, cast = numpy
            target = w.local(node.outputs[0])
            w.bind(f"d{i}", node.outputs[0].type.numpy_dtype)
            return [f"{target} = {expr}"] + (step_source(target, i, target, False, False)[1:] if cast else [])
    cells = [w.bind(f"c{i}_{k}", w.storage_map[o]) for k, o in enumerate(node.outputs)]
    lines = [f"{cell}[0] = None" for cell, o in zip(cells, node.outputs) if o in handed_out]
    if kind == "perform":
        w.bind(f"n{i}", node)
        lines.append(f"{w.bind(f'p{i}', op.perform)}(n{i}, [{w.args(node)}], "
                     f"{w.bind(f'c{i}', [w.storage_map[o] for o in node.outputs])})")
    else:  # its own thunk, reading its input cells (those of computed values are filled here)
        # the values it reads that are locals here (computed, or the call's arguments), not bound constants
        computed = [v for v in node.inputs if w.names.get(v, "").startswith("v")]
        filled = [w.bind(f"a{i}_{k}", w.storage_map[v]) for k, v in enumerate(computed)]
        lines += [f"{cell}[0] = {w.names[v]}" for cell, v in zip(filled, computed)]
        lines.append(f"{w.bind(f't{i}', thunk_of(i))}()")
        if w.gc:
            lines += [f"{cell}[0] = None" for cell in filled]
    for cell, o in zip(cells, node.outputs):
        lines.append(f"{w.local(o)} = {cell}[0]" + (f"; {cell}[0] = None" if o in freeable else ""))
    return lines


def _count_chains(fgraph, order, own_thunk) -> tuple[dict, set]:
    """``({position of a Shape node: (the chain's last variable, axes it adds)}, positions
    of the chains' other nodes)`` for each ``Cast(DimShuffle{}(Shape(x)))`` of a vector ``x``
    (a length, as a mean's gradient divides by), followed by ``DimShuffle{x,...}`` where that
    is the cast's only reader, whose inner values have no other reader."""
    position = {node: i for i, node in enumerate(order)}

    def only_reader(var):
        clients = fgraph.clients.get(var, [])
        node = clients[0][0] if len(clients) == 1 else None
        return node if node in position and position[node] not in own_thunk else None

    counts, inner = {}, set()
    for i, shape in enumerate(order):
        if type(shape.op) is not Shape or i in own_thunk or shape.inputs[0].ndim != 1:
            continue
        pick = only_reader(shape.outputs[0])
        if pick is None or type(pick.op) is not DimShuffle or pick.op.new_order != ():
            continue
        cast = only_reader(pick.outputs[0])
        if cast is None or type(cast.op) is not Cast or cast.op.dtype not in ("float32", "float64"):
            continue  # a length (below 2**53) is exact as a float64, and rounds once to a float32
        chain = [pick, cast]
        expand = only_reader(cast.outputs[0])
        if (expand is not None and type(expand.op) is DimShuffle and expand.op.input_ndim == 0
                and all(o == "x" for o in expand.op.new_order)):
            chain.append(expand)
        counts[i] = (chain[-1].outputs[0], len(chain[-1].outputs[0].type.shape))
        inner.update(position[n] for n in chain)
    return counts, inner


def _count_line(w: _Writer, x, out, axes: int) -> str:
    """``out`` (a length of vector ``x``, cast, with ``axes`` axes of length 1) in one call."""
    w.bind(f"dtype_{w.count}", out.type.numpy_dtype)
    dtype = f"dtype_{w.count}"
    return f"{w.local(out)} = array({'[' * axes}{w.names[x]}.shape[0]{']' * axes}, dtype={dtype})"


def _dead_buffer(w: _Writer, node):
    """``(local, condition)``: an input whose array an Elemwise node may write its result into
    (``out=``), and the run-time test that the result has its shape; or None.

    Only a value this node is the last to read, that no other variable views, and that an
    Elemwise or a Cast of this program made (a fresh array of its own: never an input, a
    constant, a shared value, a result handed out or an op's kept buffer), of the output's
    dtype and rank; the ufunc's own loop gives that dtype (``exact``), so writing in place
    computes the same values.  The other inputs must have that rank (their shapes are
    compared at run time) or be constants of one element."""
    out = node.outputs[0]
    for var in dict.fromkeys(node.inputs):
        if (var not in w.dead_here or w.made_by.get(var) not in ("elemwise", "cast")
                or var.type.numpy_dtype != out.type.numpy_dtype or var.ndim != out.ndim):
            continue
        name, checks = w.names[var], []  # the other inputs must not make the result larger
        for other in node.inputs:
            if other is var:
                continue
            if other in w.known and np.ndim(w.known[other]) <= out.ndim and np.size(w.known[other]) == 1:
                continue
            if other.ndim != out.ndim:
                break
            checks.append(f"{w.names[other]}.shape == {name}.shape")
        else:
            return name, " and ".join(checks)
    return None


def _step(w: _Writer, i, node, fn, dtype, exact, args=None) -> list[str]:
    w.bind(f"f{i}", fn)
    w.bind(f"d{i}", dtype)
    return step_source(w.local(node.outputs[0]), i, args or w.args(node), fn is None, exact)


def _kind(op) -> str:
    """How the program calls a node of ``op`` (see the module's docstring)."""
    cls = type(op)
    if cls.make_thunk is Elemwise.make_thunk and isinstance(op, Elemwise) and cls.perform is Elemwise.perform:
        return "elemwise"
    if cls is Cast:
        return "cast"
    if cls.make_thunk is Composite.make_thunk and isinstance(op, Composite):
        return "call"
    if cls.make_thunk is Op.make_thunk:
        return "perform"
    return "thunk"


def _chained(new: Exception, cause: Exception) -> Exception:
    if new is not cause:
        new.__cause__ = cause
    return new


def known_at_link_time(fgraph, folded, order) -> list:
    """The variables bound as constants of the program: constants and folded values that ``order``
    (the linked nodes) reads or the graph returns, in the order they are first met: not in the
    order of ``fgraph.variables``, a set, whose order changes from one compile of a graph to the
    next, and with it the program's text, which is compiled once per text (``source.py``)."""
    met = [v for node in order for v in node.inputs] + list(fgraph.outputs)
    return list(dict.fromkeys(v for v in met if isinstance(v, Constant) or v in folded))


__all__ = ["known_at_link_time", "straight_line"]
