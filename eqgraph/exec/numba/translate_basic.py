"""The whole function's writer and the translations of the basic nodes: elementwise and fused
nodes as loops, sums, means, softmaxes, matrix products and the shape nodes (``numba_program``
gathers them with the indexing, linalg and reduction translations into ``TRANSLATIONS``).

A translation takes the writer (``Writer``: the locals of the generated function) and a node, and
returns the lines computing the node, or None where it has none for the node's types.

Values may be float64, float32, bool or integers of any width (``scalar_steps.SCALAR_TYPES``);
an elementwise step is written as ``scalar_steps.step_form`` gives it, in NumPy's loop dtype.

NumPy adds a float array in the order it lies in memory, and lays an elementwise result out as
its operands lie (a transposed matrix gives a Fortran-ordered result); the loops here write C
order.  ``Writer.layout`` follows NumPy's layout through the graph, and the sums read their values
in that order (a transposed copy where NumPy's lies transposed), or stay Python calls.
"""

from __future__ import annotations

import math

import numpy as np

from eqgraph.exec.numba import translate_reductions as reductions
from eqgraph.exec.composite import Composite, step_name
from eqgraph.exec.numba.translate_layout import c_ordered, checks, memory_ordered, numpy_layout
from eqgraph.exec.numba.reductions import reduction_kind, softmax_kind
from eqgraph.exec.numba.scalar_steps import NUMPY_DTYPES, SCALAR_TYPES, cast_form, step_form
from eqgraph.exec.reducing import ReducingComposite
from eqgraph.tensor.elemwise import Cast, Elemwise
from eqgraph.tensor.dimshuffle_op import DimShuffle
from eqgraph.tensor.math import MatMul, Reduce, Softmax
from eqgraph.tensor.shape import Reshape, Shape, SumToShape


def _literal(value) -> str:
    """A one-element constant as a Python literal of the source."""
    item = np.asarray(value).reshape(()).item()
    if isinstance(item, (bool, int)):
        return repr(item)
    return repr(item) if math.isfinite(item) else {"inf": "math.inf", "-inf": "(-math.inf)"}.get(repr(item), "math.nan")


class Writer:
    """Locals of the generated function: a name for each value (a literal for a constant of one
    element), the constants passed as arguments, and fresh names.

    Small arrays that an op makes from scalars (a 0-d value given axes of length 1, a shape
    vector) are made only where an op reads them as arrays (``lazy``): a loop reads the scalar
    (``scalars``), a ``DimShuffle`` picking a length reads it from the shape (``lengths``)."""

    def __init__(self, constants: dict, fgraph=None):
        self.constants = constants     # variable -> its value, known at link time
        # variable -> its readers, nodes and outputs (a translation that updates a value in place
        # must be its only reader)
        self.readers: dict = {} if fgraph is None else {v: len(readers) for v, readers in fgraph.clients.items()}
        self.clients: dict = {} if fgraph is None else fgraph.clients
        self.shared: dict = {}         # node -> the expression of its output, written with another node's
        self.names: dict = {}          # variable -> local name or literal
        self.passed: list = []         # (parameter name, value) of constants passed as arguments
        self.scalars: dict = {}        # variable of one element -> the scalar expression it holds
        self.lengths: dict = {}        # shape vector -> the expressions of its entries
        self.lazy: dict = {}           # variable -> the expression making it, until an op reads it
        self.pending: list = []        # lines making lazy values, put before the current node's lines
        self.layouts: dict = {}        # variable -> how the program's NumPy lays it out (``layout``)
        self.count = 0

    def layout(self, var):
        """How the program lays ``var`` out in memory, which decides the order NumPy adds it in:
        ``(order, conditions)``, ``order`` "C" (C order) or "T" (a matrix lying as the transpose of a
        C-ordered one), where the run-time ``conditions`` (expressions) hold; None where unknown.
        The values this function computes are C-ordered whatever NumPy's layout."""
        if var not in self.layouts:
            self.layouts[var] = numpy_layout(self, var)
        return self.layouts[var]

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def define(self, var) -> str:
        self.names[var] = name = self.fresh("v")
        return name

    def one_element(self, var) -> str | None:
        """The scalar expression of ``var`` where it is a constant of one element (a literal) or
        a scalar given axes of length 1; else None."""
        if var in self.constants and np.size(self.constants[var]) == 1:
            return _literal(self.constants[var])
        return self.scalars.get(var)

    def value(self, var) -> str:
        """``var``'s name: a scalar for a 0-d value, else an array (a constant of one element
        with axes is passed as an argument here: the op reads it as an array)."""
        if var not in self.names and var in self.lazy:
            self.pending.append(f"{self.define(var)} = {self.lazy.pop(var)}")
        if var not in self.names:
            if var not in self.constants:
                raise KeyError(var)
            if var.ndim == 0:
                self.names[var] = _literal(self.constants[var])
            else:
                self.names[var] = name = self.fresh("k")
                self.passed.append((name, np.ascontiguousarray(self.constants[var])))
        return self.names[var]


# -- elementwise nodes: loops over the broadcast shape -------------------------------------------
def _elementwise(w: Writer, node):
    """``Composite``, ``Elemwise`` and ``Cast`` nodes: each output computed by a loop over its own
    broadcast shape (that of the inputs it reads), the steps it needs inlined."""
    op = node.op
    if isinstance(op, Composite):
        nin, steps, outs = op.nin, op.steps, op.outs
        inner_inputs, inner = op.inner([v.type for v in node.inputs])
    else:
        nin, steps, outs = len(node.inputs), ((op, tuple(range(len(node.inputs)))),), (len(node.inputs),)
        inner_inputs, inner = node.inputs, [node]
    dtypes = [v.dtype for v in inner_inputs] + [n.outputs[0].dtype for n in inner]
    for (step_op, args), inner_node in zip(steps, inner):
        if step_form(step_op, [f"x{a}" for a in args], [dtypes[a] for a in args], inner_node.outputs[0].dtype) is None:
            return None
    # outputs of one static shape share a loop, which computes their common steps once; along an
    # axis of unknown length the loop checks that each one's own inputs broadcast to its length
    groups: dict = {}   # static shape -> (inputs read, output positions, the inputs each one reads)
    for k, reads in enumerate(op.inputs_read() if isinstance(op, Composite) else [set(range(nin))]):
        inputs, positions, own = groups.setdefault(node.outputs[k].type.shape, (set(), [], []))
        inputs.update(reads)
        positions.append(k)
        own.append(reads)
    lines = []
    for reads, positions, own in groups.values():
        lines += _loop(w, node, nin, steps, outs, dtypes, sorted(reads), positions, own)
    return lines


def _loop(w: Writer, node, nin, steps, outs, dtypes, reads, positions, own) -> list:
    """The lines computing outputs ``positions`` (all reading inputs ``reads``, each its ``own``)."""
    out_vars = [node.outputs[k] for k in positions]
    rank = out_vars[0].ndim
    needed = _needed_steps(nin, steps, [outs[k] for k in positions])
    lines, dims, index_of = [], [[] for _ in range(rank)], {}   # dims: (input, its length) per axis
    for k in reads:
        var = node.inputs[k]
        scalar = w.one_element(var)
        if scalar is not None or var.ndim == 0:
            index_of[k] = scalar if scalar is not None else w.value(var)
            continue
        name, subscripts = w.value(var), []
        for dd in range(var.ndim):
            d = rank - var.ndim + dd
            if var.type.shape[dd] == 1:
                subscripts.append("0")
                continue
            dims[d].append((k, f"{name}.shape[{dd}]"))
            moves = w.fresh("m")   # 0 where this input's axis has length 1: NumPy broadcasts it
            lines.append(f"{moves} = 1 if {name}.shape[{dd}] != 1 else 0")
            subscripts.append(f"i{d} * {moves}")
        index_of[k] = (name, subscripts)
    sizes = []
    for d in range(rank):
        sizes.append(w.fresh("n"))
        lines.append(f"{sizes[-1]} = {_broadcast([dim for _, dim in dims[d]])}")
        for reads_k in own:   # an output reading fewer inputs: NumPy gives it their broadcast length
            mine = [dim for k, dim in dims[d] if k in reads_k]
            if len(mine) < len(dims[d]) and out_vars[0].type.shape[d] is None:
                lines.append(f"if {_broadcast(mine)} != {sizes[-1]}: raise ValueError('outputs of other lengths')")
    outs_names = [w.define(v) for v in out_vars]
    indent, body = "    " * rank, []   # the loop's body; steps on scalars alone go before the loop
    element: list = []
    varies = set()   # the elements that differ from one element of the loop to the next
    for k in range(nin):
        entry = index_of.get(k)
        if isinstance(entry, tuple):
            name, subscripts = entry
            element.append(w.fresh("e"))
            read = f"{element[-1]} = {name}[{', '.join(subscripts)}]"
            if all(sub == "0" for sub in subscripts):   # of length 1 on every axis, by its type
                lines.append(read)
            else:
                varies.add(k)
                body.append(indent + read)
        else:
            element.append(entry)   # a scalar or literal, or an input this output does not read
    for j, (step_op, args) in enumerate(steps):
        element.append(None)
        if nin + j in needed:
            element[-1] = w.fresh("t")
            read = _read_args(step_op, args)   # a fill's first argument is not computed: "0" in its place
            value = step_form(step_op, [element[a] if a in read else "0" for a in args], [dtypes[a] for a in args],
                          dtypes[nin + j])
            if any(a in varies for a in read):
                varies.add(nin + j)
                body.append(f"{indent}{element[-1]} = {value}")
            else:
                lines.append(f"{element[-1]} = {value}")
    if rank:
        shape = f"({', '.join(sizes)},)"
        lines += [f"{o} = np.empty({shape}, dtype={NUMPY_DTYPES[v.dtype]})" for o, v in zip(outs_names, out_vars)]
        lines += [f"{'    ' * d}for i{d} in range({sizes[d]}):" for d in range(rank)]
    at = f"[{', '.join(f'i{d}' for d in range(rank))}]"
    for o, k in zip(outs_names, positions):
        body.append(f"{indent}{o}{at} = {element[outs[k]]}" if rank else f"{o} = {element[outs[k]]}")
    return lines + body


def _broadcast(dims: list) -> str:
    """The length of an axis of the lengths ``dims`` broadcast together."""
    size = "1"
    for dim in dims:
        size = dim if size == "1" else f"broadcast_dim({size}, {dim})"
    return size


def _needed_steps(nin: int, steps, outputs: list) -> set:
    """The steps that ``outputs`` (indices into a fused node's values) read: not the first argument
    of a ``second`` (a fill), whose shape alone it reads, and the loop's length holds that."""
    needed, stack = set(), list(outputs)
    while stack:
        index = stack.pop()
        if index >= nin and index not in needed:
            needed.add(index)
            stack.extend(_read_args(*steps[index - nin]))
    return needed


def _read_args(step_op, args) -> tuple:
    """The arguments whose values a step reads: a ``second`` (a fill) reads its first one's shape alone."""
    return args[1:] if step_name(step_op) == "second" else args


def _reducing(w: Writer, node):
    """A ``ReducingComposite``: its elementwise part as a loop, then each sum or mean as
    ``_reduce`` writes it, in the order NumPy adds the values (``Writer.layout``)."""
    op = node.op
    values = op.elementwise().make_node(*node.inputs)   # the values written or reduced, as variables
    lines = _elementwise(w, values)
    if lines is None:
        return None
    for out, source, reduction in zip(node.outputs, op.sources(), op.reductions):
        value = values.outputs[source]
        if reduction is None:
            w.names[out] = w.names[value]
            continue
        reduced = reduction.make_node(value)
        more = _reduce(w, reduced)
        if more is None:
            return None
        lines += more
        w.names[out] = w.names[reduced.outputs[0]]
    return lines


# -- other nodes ---------------------------------------------------------------------------------
def one_of_a_stack(w: Writer, node, translate):
    """A node on stacks of one matrix each (every input and output 3-d, its first axis of static
    length 1, as PyTensor's batched ops give PyMC's solves and products): ``translate`` of the node
    on the matrices themselves, its result given the axis of length 1 back; None where the node is
    not one such or ``translate`` has no form.  NumPy's stacked functions call their routine once
    per matrix, on the same matrix, so the values are those of the one matrix's."""
    if not all(v.ndim == 3 and v.type.shape[0] == 1 for v in (*node.inputs, *node.outputs)):
        return None
    matrices = [v.type.clone(shape=v.type.shape[1:])() for v in node.inputs]
    for matrix, v in zip(matrices, node.inputs):
        w.names[matrix] = f"{w.value(v)}[0]"
    inner = node.op.make_node(*matrices)
    lines = translate(w, inner)
    if lines is None:
        return None
    return [*lines, f"{w.define(node.outputs[0])} = {w.names[inner.outputs[0]]}[None]"]


def _matmul(w: Writer, node):
    a, b = node.inputs
    if a.ndim == 3:
        return one_of_a_stack(w, node, _matmul)
    if a.ndim > 2 or b.ndim > 2 or {a.dtype, b.dtype, node.outputs[0].dtype} != {"float64"}:
        return None
    # np.dot checks that the shapes align (ValueError); Numba's needs SciPy's BLAS
    x, y = w.value(a), w.value(b)
    product = f"np.dot({x}, {y})"
    # NumPy's matmul takes a matrix of one row times a vector (a vector times a matrix of one
    # column) as the dot product of two vectors, Numba's np.dot as a gemv, which adds in
    # another order: the same BLAS call keeps the last bit
    if a.ndim == 2 and b.ndim == 1:
        product = f"(np.full(1, np.dot({x}[0], {y})) if {x}.shape[0] == 1 else {product})"
    elif a.ndim == 1 and b.ndim == 2:
        product = f"(np.full(1, np.dot({x}, np.ascontiguousarray({y}[:, 0]))) if {y}.shape[1] == 1 else {product})"
    return [f"{w.define(node.outputs[0])} = {product}"]


#: reductions that over no axes are each element cast to the result's dtype (NumPy's ``np.sum(x,
#: axis=())`` is a copy of ``x``, ``np.all`` its truth)
_EMPTY_AXES = frozenset({"sum", "prod", "mean", "max", "min", "all", "any"})


def _reduce_no_axes(w: Writer, node):
    """A reduction over no axes (PyMC sums a scalar term's log-density so): ``x`` cast to the
    result's dtype, a copy for an array (the result may be an output, and ``x`` an input)."""
    op, (x,), out = node.op, node.inputs, node.outputs[0]
    if op.name not in _EMPTY_AXES or x.dtype not in SCALAR_TYPES or out.dtype not in SCALAR_TYPES:
        return None
    if x.ndim == 0:
        value = cast_form(w.value(x), x.dtype, out.dtype)
        return None if value is None else [f"{w.define(out)} = {value}"]
    name = w.value(x)
    if out.dtype == "bool":
        return [f"{w.define(out)} = {name} != 0"]
    if cast_form("v", x.dtype, out.dtype) is None:   # floats to integers: NumPy's values are the platform's
        return None
    return [f"{w.define(out)} = {name}.astype({NUMPY_DTYPES[out.dtype]})"]


def _reduce(w: Writer, node):
    op, (x,), out = node.op, node.inputs, node.outputs[0]
    if not op.axis:
        return _reduce_no_axes(w, node)
    if op.name == "logsumexp":
        return c_ordered(w, x, reductions.logsumexp, node)
    whole = x.ndim > 0 and tuple(sorted(op.axis)) == tuple(range(x.ndim))
    # a float32 sum or mean accumulating in float64 (the default) adds the values cast to float64
    # as a float64 sum adds them, then rounds once
    widened = x.dtype == out.dtype == "float32" and op.accumulator("float32") == "float64"
    dtype = "float64" if widened else x.dtype
    kind = reduction_kind(op.name, dtype, "float64" if widened else out.dtype, x.ndim, op.axis,
                          op.keepdims and not whole)
    if kind is None:
        return reductions.orderless(w, node) or c_ordered(w, x, reductions.product, node) \
            or c_ordered(w, x, reductions.summed, node) or reductions.arg_extreme(w, node)
    ordered = memory_ordered(w, x, kind)
    if ordered is None:
        return None
    checks, source, kind = ordered
    value = f"{KERNEL_NAMES[kind]}({source}{'.astype(np.float64)' if widened else ''}, {op.name == 'mean'})"
    if widened:
        value = f"np.float32({value})" if kind == ("whole", False) else f"{value}.astype(np.float32)"
    if whole and op.keepdims:   # a whole reduction keeping its axes: the one value in an array of ones
        value = f"np.full(({'1, ' * x.ndim}), {value})"
    return [*checks, f"{w.define(out)} = {value}"]


def _softmax(w: Writer, node):
    return c_ordered(w, node.inputs[0], _softmax_c_ordered, node)


def _softmax_c_ordered(w: Writer, node):
    op, (x,) = node.op, node.inputs
    kind = softmax_kind(x.dtype, node.outputs[0].dtype, x.ndim, op.axis)
    if kind is None:
        return None
    if node in w.shared:   # written with the logsumexp of the same rows
        return [f"{w.define(node.outputs[0])} = {w.shared[node]}"]
    return [f"{w.define(node.outputs[0])} = {KERNEL_NAMES[kind]}(np.ascontiguousarray({w.value(x)}), {op.log})"]


def _sum_to_shape(w: Writer, node):
    """``SumToShape`` of a float64 vector or matrix, added in the order NumPy lays ``g`` out: a
    matrix lying transposed is summed as its transpose, to the transposed shape."""
    g, like = node.inputs
    layout = w.layout(g)
    if g.ndim not in (1, 2) or g.dtype != "float64" or node.outputs[0].dtype != "float64" or layout is None:
        return None
    dims = [f"{w.value(like)}.shape[{d}]" for d in range(g.ndim)]
    value = f"sum_to_shape_{g.ndim}(np.ascontiguousarray({w.value(g)}), {', '.join(dims)})"
    if layout[0] == "T":
        value = f"sum_to_shape_2(np.ascontiguousarray({w.value(g)}.T), {dims[1]}, {dims[0]}).T"
    return [*checks(layout[1]), f"{w.define(node.outputs[0])} = {value}"]


def _dimshuffle(w: Writer, node):
    op, (x,), out = node.op, node.inputs, node.outputs[0]
    if out.dtype not in SCALAR_TYPES:
        return None
    if x in w.lengths and out.ndim == 0:   # a length picked from a shape vector
        w.names[out] = w.lengths[x][0]
        return []
    name = w.value(x)
    if x.ndim == 0:   # a scalar: a new array of ones along the added axes, made where an op needs it
        if not op.new_order:
            w.names[out] = name
            return []
        w.scalars[out] = name
        w.lazy[out] = f"np.full(({', '.join('1' for _ in op.new_order)},), {name})"
        return []
    target = w.define(out)
    expr = name
    if op.drop:
        expr += "[" + ", ".join("0" if i in op.drop else ":" for i in range(op.input_ndim)) + "]"
    if out.ndim == 0:
        return [f"{target} = {expr}"]
    if op.permutation == (1, 0):   # Numba types ``.T`` of a C array as Fortran-ordered: BLAS reads it as is
        expr = f"{expr}.T"
    elif op.permutation != tuple(sorted(op.permutation)):
        expr = f"{expr}.transpose({op.permutation})"
    if "x" in op.new_order:
        expr += "[" + ", ".join("None" if o == "x" else ":" for o in op.new_order) + "]"
    return [f"{target} = {expr}"]


def _reshape(w: Writer, node):
    (x, shape), out = node.inputs, node.outputs[0]
    if shape.dtype != "int64":
        return None
    if x.ndim == 0:
        return _reshape_scalar(w, w.value(x), w.value(shape), out)
    if out.ndim == 0:   # the one element of x, as a scalar (0-d values are scalars here)
        name = w.value(x)
        return [f"if {name}.size != 1: raise ValueError('reshape: not one element')",
                f"{w.define(out)} = np.ascontiguousarray({name}).reshape(1)[0]"]
    # perform: np.reshape(x, the first ndim entries of the shape vector); a copy where x is not contiguous
    items = ", ".join(f"{w.value(shape)}[{d}]" for d in range(out.ndim))
    return [f"if {w.value(shape)}.shape[0] < {out.ndim}: raise ValueError('reshape: too few entries')",
            f"{w.define(out)} = np.ascontiguousarray({w.value(x)}).reshape(({items},))"]


def _reshape_scalar(w: Writer, name: str, shape: str, out) -> list:
    """A 0-d value reshaped: itself, or an array of ones along axes each of length 1 or -1 (at most
    one -1), as NumPy's reshape allows."""
    if out.ndim == 0:
        w.names[out] = name
        return []
    entries = [f"{shape}[{d}]" for d in range(out.ndim)]
    unknown = " + ".join(f"({e} == -1)" for e in entries)
    return [f"if {shape}.shape[0] < {out.ndim}: raise ValueError('reshape: too few entries')",
            *[f"if {e} != 1 and {e} != -1: raise ValueError('reshape: one element')" for e in entries],
            f"if {unknown} > 1: raise ValueError('reshape: more than one unknown length')",
            f"{w.define(out)} = np.full(({'1, ' * out.ndim}), {name})"]


def _shape(w: Writer, node):
    (x,) = node.inputs
    if x.ndim == 0:
        return [f"{w.define(node.outputs[0])} = np.empty(0, dtype=np.int64)"]
    name, out = w.value(x), node.outputs[0]
    w.lengths[out] = [f"{name}.shape[{d}]" for d in range(x.ndim)]
    w.lazy[out] = f"np.array([{', '.join(w.lengths[out])}], dtype=np.int64)"
    return []


#: numba_reductions.KERNELS key -> the name the generated module imports it as
KERNEL_NAMES = {("whole", False): "sum_whole", ("rows", False): "sum_rows", ("rows", True): "sum_rows_kept",
                ("columns", False): "sum_columns", ("columns", True): "sum_columns_kept",
                ("softmax", 2): "softmax_rows", ("softmax", 1): "softmax_vector"}
#: op class -> translation, for the nodes of this module
TRANSLATIONS = {Composite: _elementwise, ReducingComposite: _reducing, Elemwise: _elementwise, Cast: _elementwise,
                MatMul: _matmul, Reduce: _reduce, Softmax: _softmax, SumToShape: _sum_to_shape,
                DimShuffle: _dimshuffle, Shape: _shape, Reshape: _reshape}
