"""``Blockwise``: any op applied over leading batch axes (PyTensor's ``Blockwise``), and
``vectorize`` / ``vectorize_graph``, which turn a graph on core shapes into one on batched inputs.

A signature is NumPy's gufunc signature: ``"(m,m)->(m,m)"`` for a Cholesky factor,
``"(m,m),(m,n)->(m,n)"`` for a solve, ``"(),()->()"`` for a scalar op.  Each input has its
core axes last (as many as the signature names) and any number of batch axes before them;
the batch axes of the inputs broadcast as NumPy's do, and every output has the broadcast
batch axes followed by its core axes.
"""

from __future__ import annotations

import importlib
import itertools
import re

import numpy as np

from eqgraph.tensor.basic import as_tensor_variable, int64_const
from eqgraph.tensor.elemwise import ELEMWISE_OPS as E, Cast, Elemwise
from eqgraph.tensor.dimshuffle_op import DimShuffle, dimshuffle
from eqgraph.tensor.extra_ops import broadcast_to
from eqgraph.tensor.linalg import LinalgOp, Solve
from eqgraph.tensor.math import MatMul, Reduce, sum as sum_
from eqgraph.tensor.shape import Shape, SpecifyShape, shape, shape_of, sum_to_shape
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Apply, Constant, Variable
from eqgraph.terms.op import Op
from eqgraph.terms.walk import toposort
from eqgraph.xp import array_namespace, as_output

_CORE = r"\(\s*(?:\w+\s*(?:,\s*\w+\s*)*)?\)"
_SIGNATURE = re.compile(rf"^\s*{_CORE}(?:\s*,\s*{_CORE})*\s*->\s*{_CORE}(?:\s*,\s*{_CORE})*\s*$")


def parse_signature(signature: str) -> tuple[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]]:
    """``"(m,n),(n)->(m)"`` as ``((("m", "n"), ("n",)), (("m",),))``: per input, then per output,
    the names of its core axes."""
    if not isinstance(signature, str) or not _SIGNATURE.match(signature):
        raise ValueError(f"Blockwise: {signature!r} is not a gufunc signature such as '(m,n),(n)->(m)' "
                         "(one parenthesized list of axis names per input, '->', one per output)")
    ins, outs = signature.split("->")

    def cores(side):
        return tuple(tuple(name.strip() for name in group.split(",") if name.strip())
                     for group in re.findall(r"\(([^)]*)\)", side))

    return cores(ins), cores(outs)


def format_signature(inputs, outputs) -> str:
    def side(cores):
        return ",".join(f"({','.join(core)})" for core in cores)
    return f"{side(inputs)}->{side(outputs)}"


def node_signature(node) -> str:
    """A signature for ``node``'s op with every core axis of its inputs and outputs named apart:
    the most general one, which checks nothing the op does not check itself."""
    counter = itertools.count()

    def names(var):
        return tuple(f"d{next(counter)}" for _ in range(var.ndim))

    return format_signature([names(i) for i in node.inputs], [names(o) for o in node.outputs])


def default_signature(core_op) -> str:
    """The signature ``core_op`` states (``gufunc_signature``; a decomposition reads its own
    from its ``core_axes``)."""
    stated = getattr(core_op, "gufunc_signature", None)
    if stated is not None:
        return stated
    raise TypeError(f"Blockwise: {core_op} states no gufunc_signature; pass signature=, "
                    "such as '(m,n)->(n,m)'")


def op_key(op) -> str:
    """A text equal for two ops exactly when the ops are equal: the e-graph tells Blockwise
    terms apart by it, since the text of a core op (its ``str``) may leave props out."""
    props = getattr(type(op), "__props__", None)
    name = f"{type(op).__module__}.{type(op).__qualname__}"
    if props is None:  # such an op equals only itself
        return f"{name}@{id(op):x}"
    values = [op_key(v) if isinstance(v, Op) else f"array@{id(v):x}" if isinstance(v, np.ndarray) else repr(v)
              for v in op._props()]
    return f"{name}({', '.join(values)})"


class Blockwise(Op):
    """``core_op`` applied to every core block of its inputs, over their broadcast batch axes.

    ``signature`` (a gufunc signature, see the module docstring) defaults to the core op's
    ``gufunc_signature``.  ``perform`` loops over the batch, or computes the whole stack at once
    where the core op does that itself (``STACKED``) or names a NumPy function that does
    (``gufunc_spec``, as in PyTensor)."""

    __props__ = ("core_op", "signature")
    #: the e-graph encodes this text beside the props: equal texts, equal core ops (``op_key``)
    __egg_extras__ = ("core_key",)
    #: the core op's input cotangents for a core node, ``core_vjp(node, output_grads)``: the
    #: gradient driver sits a layer above this one and plugs its own in (eqgraph/grad/blockwise.py)
    core_vjp = None

    def __init__(self, core_op, signature=None):
        if not isinstance(core_op, Op):
            raise TypeError(f"Blockwise: core_op must be an Op, got {core_op!r}")
        if isinstance(core_op, Blockwise):  # a batch of batches is one batch
            signature, core_op = signature or core_op.signature, core_op.core_op
        self.core_op = core_op
        self.signature = format_signature(*parse_signature(signature or default_signature(core_op)))
        self.inputs_sig, self.outputs_sig = parse_signature(self.signature)
        self._core_nodes: dict = {}

    def __getstate__(self):
        return dict(self.__dict__, _core_nodes={})  # the cached nodes are rebuilt where needed

    @property
    def core_key(self) -> str:
        return op_key(self.core_op)

    def __str__(self):
        return f"Blockwise{{{self.core_op}, {self.signature}}}"

    # -- building ----------------------------------------------------------------------------
    def make_node(self, *inputs):
        if len(inputs) != len(self.inputs_sig):
            raise TypeError(f"{self} takes {len(self.inputs_sig)} inputs, got {len(inputs)}")
        inputs = [as_tensor_variable(x) for x in inputs]
        for i, (x, core) in enumerate(zip(inputs, self.inputs_sig)):
            if x.ndim < len(core):
                raise ValueError(f"{self}: input {i} ({x}, static shape {x.type.shape}) has {x.ndim} "
                                 f"dimensions, fewer than the {len(core)} core axes ({','.join(core)}) the "
                                 f"signature {self.signature} gives it")
        sizes = self._static_sizes(inputs)
        core_node = self.core_node(inputs)
        self._check_core_outputs(core_node)
        batch = _broadcast_batch(self, [x.type.shape[:x.ndim - len(c)]
                                        for x, c in zip(inputs, self.inputs_sig)])
        outputs = [TensorType(o.type.dtype, batch + tuple(s if s is not None else sizes.get(name)
                                                          for s, name in zip(o.type.shape, core)))()
                   for o, core in zip(core_node.outputs, self.outputs_sig)]
        return Apply(self, inputs, outputs)

    def _static_sizes(self, inputs) -> dict:
        """The static size of each named core axis, checked to agree across the inputs."""
        sizes, where = {}, {}
        for i, (x, core) in enumerate(zip(inputs, self.inputs_sig)):
            for name, size in zip(core, x.type.shape[x.ndim - len(core):]):
                if size is None:
                    continue
                if sizes.setdefault(name, size) != size:
                    j = where[name]
                    raise ValueError(f"{self}: core axis {name!r} of the signature {self.signature} is "
                                     f"{sizes[name]} in input {j} ({inputs[j]}, static shape "
                                     f"{inputs[j].type.shape}) but {size} in input {i} ({x}, static shape "
                                     f"{x.type.shape})")
                where.setdefault(name, i)
        return sizes

    def core_node(self, inputs):
        """The core op's node on stand-ins for one block of each of ``inputs`` (its core axes,
        with their static sizes); a constant without batch axes is passed as itself, since
        ops may read its value when they build their node."""
        key = tuple(x if isinstance(x, Constant) and x.ndim == len(c) else x.type
                    for x, c in zip(inputs, self.inputs_sig))
        try:
            return self._core_nodes[key]
        except (KeyError, TypeError):  # TypeError: a constant that cannot be hashed is built afresh
            pass
        node = self.core_op.make_node(*[_stand_in(x, len(c)) for x, c in zip(inputs, self.inputs_sig)])
        try:
            self._core_nodes[key] = node
        except TypeError:
            pass
        return node

    def _check_core_outputs(self, core_node):
        if len(core_node.outputs) != len(self.outputs_sig):
            raise ValueError(f"{self}: {self.core_op} has {len(core_node.outputs)} outputs, the signature "
                             f"{self.signature} names {len(self.outputs_sig)}")
        for j, (o, core) in enumerate(zip(core_node.outputs, self.outputs_sig)):
            if o.ndim != len(core):
                raise ValueError(f"{self}: output {j} of {self.core_op} on one block has {o.ndim} dimensions "
                                 f"(type {o.type}), the signature {self.signature} gives it {len(core)}")

    # -- running -----------------------------------------------------------------------------
    def perform(self, node, inputs, output_storage):
        self._check_core_sizes(inputs)
        if isinstance(self.core_op, STACKED) and len(inputs) == 1:
            self.core_op.perform(node, inputs, output_storage)
            return
        xp, batch = array_namespace(*inputs), _run_time_batch(self, inputs)
        gufunc = _gufunc(self.core_op) if xp is np else None
        if gufunc is not None:
            results = gufunc(*inputs)
            results = results if isinstance(results, tuple) else (results,)
            for cell, value, out in zip(output_storage, results, node.outputs):
                cell[0] = as_output(xp, np.array(value, copy=True), out.type)
            return
        core_node = self.core_node(node.inputs)
        blocks = [[] for _ in node.outputs]
        for index in np.ndindex(*batch):
            cells = [[None] for _ in node.outputs]
            self.core_op.perform(core_node, [_block(x, c, index, len(batch)) for x, c in
                                             zip(inputs, self.inputs_sig)], cells)
            for found, cell in zip(blocks, cells):
                found.append(cell[0])
        for j, (cell, found, out) in enumerate(zip(output_storage, blocks, node.outputs)):
            cell[0] = as_output(xp, self._stacked(xp, j, found, batch, core_node.outputs[j]), out.type)

    def _check_core_sizes(self, inputs):
        sizes = {}
        for i, (x, core) in enumerate(zip(inputs, self.inputs_sig)):
            if x.ndim < len(core):
                raise ValueError(f"{self}: input {i} of shape {x.shape} has fewer than the {len(core)} core "
                                 f"axes the signature {self.signature} gives it")
            for name, size in zip(core, x.shape[x.ndim - len(core):]):
                if sizes.setdefault(name, size) != size:
                    raise ValueError(f"{self}: core axis {name!r} of the signature {self.signature} has two "
                                     f"sizes, {sizes[name]} and {size}, in the inputs of shapes "
                                     f"{[tuple(v.shape) for v in inputs]}")

    def _stacked(self, xp, j, blocks, batch, core_out):
        """Output ``j`` from its blocks: all of one shape, stacked in the batch's layout."""
        if not blocks:  # an empty batch: the core shape must be static
            if any(s is None for s in core_out.type.shape):
                raise ValueError(f"{self}: the batch {batch} is empty and output {j}'s core shape "
                                 f"{core_out.type.shape} is not static, so its shape is unknown")
            return xp.zeros(batch + core_out.type.shape, dtype=getattr(xp, core_out.type.dtype))
        shapes = {tuple(b.shape) for b in blocks}
        if len(shapes) > 1:
            raise ValueError(f"{self}: output {j} of {self.core_op} has blocks of different shapes "
                             f"{sorted(shapes)} across the batch, which cannot be stacked")
        return xp.reshape(xp.stack([xp.asarray(b) for b in blocks]), batch + shapes.pop())

    # -- static information ------------------------------------------------------------------
    def infer_shape(self, fgraph, node, shapes):
        batch = self._batch_shape(node, shapes)
        sizes = {}
        for core, shp in zip(self.inputs_sig, shapes):
            for name, size in zip(core, shp[len(shp) - len(core):]):
                sizes.setdefault(name, size)
        core_shapes = None
        out = []
        for j, (o, core) in enumerate(zip(node.outputs, self.outputs_sig)):
            if all(name in sizes for name in core):
                out.append((*batch, *(sizes[name] for name in core)))
                continue
            if core_shapes is None:  # an axis the inputs do not name: the core op knows it
                core_node = self.core_node(node.inputs)
                core_in = [tuple(shp[len(shp) - len(c):]) for shp, c in zip(shapes, self.inputs_sig)]
                core_shapes = self.core_op.infer_shape(fgraph, core_node, core_in)
            out.append((*batch, *core_shapes[j]))
        return out

    def _batch_shape(self, node, shapes) -> tuple:
        n = node.outputs[0].ndim - len(self.outputs_sig[0])
        batch = []
        for axis in range(n):
            static = node.outputs[0].type.shape[axis]
            if static is not None:
                batch.append(int64_const(static))
                continue
            known = [shp[axis - n + len(shp) - len(c)] for shp, c in zip(shapes, self.inputs_sig)
                     if len(shp) - len(c) >= n - axis]
            size = known[0]
            for other in known[1:]:  # sizes that broadcast: 1 or the one size, so the largest
                size = E["maximum"](size, other)
            batch.append(size)
        return tuple(batch)

    def flops(self, inputs, outputs):
        core_in = [tuple(s[len(s) - len(c):]) for s, c in zip(inputs, self.inputs_sig)]
        core_out = [tuple(s[len(s) - len(c):]) for s, c in zip(outputs, self.outputs_sig)]
        core = self.core_op.flops(core_in, core_out)
        if core is None:
            return None
        n = len(outputs[0]) - len(self.outputs_sig[0])
        return int(np.prod([int(s) for s in outputs[0][:n]], dtype=np.int64)) * core

    # -- differentiation ---------------------------------------------------------------------
    def connection_pattern(self, node):
        return self.core_op.connection_pattern(self.core_node(node.inputs))

    def L_op(self, inputs, outputs, output_grads):
        """The core op's VJP on core-shaped stand-ins, vectorized over the batch; the batch axes
        an input was broadcast along are summed back."""
        if Blockwise.core_vjp is None:
            raise NotImplementedError(f"{self}: no gradient driver is plugged in (import eqgraph)")
        core_node = self.core_op.make_node(*[_stand_in(x, len(c)) for x, c in zip(inputs, self.inputs_sig)])
        replace = {s: x for s, x in zip(core_node.inputs, inputs) if s is not x}
        replace.update(zip(core_node.outputs, outputs))
        core_grads = []
        for g, o in zip(output_grads, core_node.outputs):
            if isinstance(g, Variable) and isinstance(g.type, TensorType):
                replace[stand_in := TensorType(g.type.dtype, o.type.shape)()] = g
                g = stand_in
            core_grads.append(g)
        cotangents = Blockwise.core_vjp(core_node, core_grads)
        cores = [(x, len(c)) for x, c in zip(inputs, self.inputs_sig)]
        out = []
        for i, (x, c) in enumerate(zip(inputs, cotangents)):
            if not (isinstance(c, Variable) and isinstance(c.type, TensorType)):
                out.append(c)  # disconnected, or undefined: as the core op says
                continue
            out.append(_sum_to_input(vectorize_graph(c, replace), x, cores[i][1], cores[:i] + cores[i + 1:]))
        return out


#: core ops whose ``perform`` computes a stack of blocks at once, batch axes first
STACKED = (LinalgOp,)


def _gufunc(core_op):
    """The NumPy function that a core op states computes its stacks (PyTensor's ``gufunc_spec``:
    its dotted name, and its numbers of inputs and outputs), or None."""
    spec = getattr(core_op, "gufunc_spec", None)
    if spec is None:
        return None
    module, _, name = spec[0].rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        raise ValueError(f"Blockwise: the gufunc_spec {spec!r} of {core_op} names no function") from None


def _stand_in(x, core_ndim):
    """A variable like one block of ``x``; a constant without batch axes is kept, since ops may
    read its value when they build their node."""
    if isinstance(x, Constant) and x.ndim == core_ndim:
        return x
    return TensorType(x.type.dtype, x.type.shape[x.ndim - core_ndim:])()


def _sum_to_input(c, x, core_ndim, others):
    """The cotangent ``c`` of ``x`` with ``x``'s shape: the batch axes ``x`` was broadcast along
    summed, batch axes the cotangent does not vary along broadcast.  ``others`` are the other
    inputs, with their core ndims: on a batch axis of unknown size, ``x`` was broadcast only if
    another input may have set the size."""
    if c.ndim > x.ndim:
        c = sum_(c, axis=tuple(range(c.ndim - x.ndim)))
    elif c.ndim < x.ndim:
        return broadcast_to(c, shape_of(x))
    batch = x.ndim - core_ndim
    summed, unknown = [], False
    for axis in range(batch):
        size, out = x.type.shape[axis], c.type.shape[axis]
        if size == 1 and out != 1:
            summed.append(axis)
        elif size is None and out != 1 and _may_set(batch - axis, others):
            unknown = True  # x may have size 1 at run time where another input does not
    if unknown:
        return sum_to_shape(c, x)
    return sum_(c, axis=tuple(summed), keepdims=True) if summed else c


def _may_set(offset, others) -> bool:
    """Whether one of ``others`` may have a size other than 1 on the batch axis ``offset`` from
    the right of the batch axes."""
    for o, core_ndim in others:
        batch = o.ndim - core_ndim
        if batch >= offset and o.type.shape[batch - offset] != 1:
            return True
    return False


def _broadcast_batch(op, batches) -> tuple:
    """The static broadcast of batch shapes (left-padded with 1s), as NumPy broadcasts."""
    n = max((len(b) for b in batches), default=0)
    padded = [(1,) * (n - len(b)) + tuple(b) for b in batches]
    out = []
    for axis, sizes in enumerate(zip(*padded)):
        known = {s for s in sizes if s is not None and s != 1}
        if len(known) > 1:
            raise ValueError(f"{op}: the batch shapes {[tuple(b) for b in batches]} of its inputs do not "
                             f"broadcast (batch axis {axis} has sizes {sorted(known)})")
        out.append(known.pop() if known else (1 if all(s == 1 for s in sizes) else None))
    return tuple(out)


def _run_time_batch(op, inputs) -> tuple:
    batches = [tuple(x.shape[:x.ndim - len(c)]) for x, c in zip(inputs, op.inputs_sig)]
    try:
        return tuple(np.broadcast_shapes(*batches))
    except ValueError:
        raise ValueError(f"{op}: the batch axes of its inputs, of shapes {[tuple(x.shape) for x in inputs]}, "
                         f"do not broadcast (signature {op.signature})") from None


def _block(x, core, index, n):
    """The block of ``x`` at the batch ``index`` (of ``n`` axes), broadcast as NumPy does."""
    batch = x.ndim - len(core)
    return x[tuple(0 if x.shape[axis] == 1 else i for axis, i in zip(range(batch), index[n - batch:]))]


# -- vectorizing graphs ------------------------------------------------------------------------
def vectorize_graph(outputs, replace):
    """``outputs`` rebuilt on the batched variables of ``replace`` ({core variable: the variable with
    batch axes added on the left}), as PyTensor's ``vectorize_graph``.

    Elementwise ops, reductions, transposes and ops that take stacks themselves keep their op
    with batched inputs; every other node becomes a ``Blockwise`` of its op.  An output that
    does not depend on a batched variable keeps its core shape (it broadcasts)."""
    single = isinstance(outputs, Variable)
    outs = [outputs] if single else list(outputs)
    new = {}
    for old, value in replace.items():
        value = as_tensor_variable(value)
        if value.ndim < old.ndim:
            raise ValueError(f"vectorize_graph: the replacement {value} (static shape {value.type.shape}) of "
                             f"{old} (static shape {old.type.shape}) has fewer dimensions: batch axes go on "
                             "the left")
        new[old] = value
    for node in toposort(outs, list(new)):
        inputs = [new.get(i, i) for i in node.inputs]
        if all(a is b for a, b in zip(inputs, node.inputs)):
            continue
        batched = vectorize_node(node, *inputs)
        for o, b in zip(node.outputs, batched):
            new.setdefault(o, b)
    result = [new.get(o, o) for o in outs]
    return result[0] if single else result


def vectorize_node(node, *inputs) -> list:
    """``node`` applied to ``inputs``, which are its inputs with batch axes added on the left."""
    op, batch = node.op, [new.ndim - old.ndim for old, new in zip(node.inputs, inputs)]
    n = max(batch)
    core = [old.ndim for old in node.inputs]
    if isinstance(op, (Elemwise, Cast)):
        width = max(core)
        return op.make_node(*[_pad(x, b, n, c, width) for x, b, c in zip(inputs, batch, core)]).outputs
    if isinstance(op, DimShuffle):
        order = tuple(range(n)) + tuple(a if a == "x" else a + n for a in op.new_order)
        return [dimshuffle(_pad(inputs[0], batch[0], n, core[0]), order)]
    if isinstance(op, Reduce):
        return Reduce(op.name, tuple(a + n for a in op.axis), op.keepdims, op.acc_dtype).make_node(inputs[0]).outputs
    if isinstance(op, SpecifyShape):
        return SpecifyShape(inputs[0].type.shape[:batch[0]] + op.shape).make_node(inputs[0]).outputs
    if isinstance(op, Shape):  # the shape of each block: the core axes' sizes, alike for all
        return [shape(inputs[0])[batch[0]:]]
    if _takes_stacks(op, core):
        return op.make_node(*[_pad(x, b, n, c) for x, b, c in zip(inputs, batch, core)]).outputs
    block_op = op if isinstance(op, Blockwise) else Blockwise(op, node_signature(node))
    return block_op.make_node(*inputs).outputs


def _takes_stacks(op, core) -> bool:
    """Whether ``op`` reads leading axes of its inputs as a batch, broadcast between them, as a
    Blockwise would: decompositions, and products and solves of matrices (a vector would be read
    as one more axis of a matrix)."""
    if isinstance(op, LinalgOp):
        return True
    return isinstance(op, (MatMul, Solve)) and all(c == 2 for c in core)


def _pad(x, batch, n, core, width=None):
    """``x`` (``batch`` batch axes, then ``core`` core axes) with size-1 axes added: ``n`` batch
    axes, then ``width`` core axes (default ``core``), so operands line up axis for axis."""
    width = core if width is None else width
    if batch == n and core == width:
        return x
    order = (("x",) * (n - batch) + tuple(range(batch))
             + ("x",) * (width - core) + tuple(range(batch, batch + core)))
    return dimshuffle(x, order)


def vectorize(func, signature=None):
    """``func``, a Python function of core-shaped tensors, applied to tensors with batch axes on the
    left (PyTensor's ``vectorize``, like ``numpy.vectorize``).  Without ``signature`` every input's
    core is a scalar; with one, its inputs' core axes and its outputs' number of axes are checked."""
    inputs_sig, outputs_sig = parse_signature(signature) if signature is not None else (None, None)

    def vectorized(*inputs):
        inputs = [as_tensor_variable(x) for x in inputs]
        cores = inputs_sig if inputs_sig is not None else [()] * len(inputs)
        if len(cores) != len(inputs):
            raise TypeError(f"vectorize: the signature {signature} names {len(cores)} inputs, "
                            f"got {len(inputs)}")
        for i, (x, c) in enumerate(zip(inputs, cores)):
            if x.ndim < len(c):
                raise ValueError(f"vectorize: input {i} ({x}, static shape {x.type.shape}) has {x.ndim} "
                                 f"dimensions, fewer than the {len(c)} core axes the signature {signature} "
                                 "gives it")
        core_inputs = [_stand_in(x, len(c)) for x, c in zip(inputs, cores)]
        core_outputs = func(*core_inputs)
        _check_outputs(signature, outputs_sig, core_outputs)
        return vectorize_graph(core_outputs, dict(zip(core_inputs, inputs)))

    return vectorized


def _check_outputs(signature, outputs_sig, core_outputs):
    if outputs_sig is None:
        return
    outs = [core_outputs] if isinstance(core_outputs, Variable) else list(core_outputs)
    if len(outs) != len(outputs_sig) or any(o.ndim != len(c) for o, c in zip(outs, outputs_sig)):
        raise ValueError(f"vectorize: the function returned {len(outs)} outputs of "
                         f"{[o.ndim for o in outs]} dimensions, the signature {signature} gives "
                         f"{[len(c) for c in outputs_sig]}")


__all__ = ["Blockwise", "vectorize", "vectorize_graph", "vectorize_node", "parse_signature"]
