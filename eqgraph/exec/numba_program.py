"""The whole program as one Numba function, for calls on small arrays.

On small arrays the generated program (``program.py``) spends most of a call on NumPy's and
Numba's dispatch, once per node; a logistic regression with its gradient is about 15 such
lines, PyTensor's default mode one compiled function.  ``whole_program`` writes the same
node list as one ``@numba.njit`` function, from a table with one entry per kind of node
(``TRANSLATIONS``: op class -> the lines computing it), and puts a caller in front of the
program that calls it once it is compiled:

- fused and plain elementwise nodes (``Composite``, ``Elemwise``, ``Cast``) become explicit
  loops over the broadcast shape, each step written as ``numba_kernels.FORMS`` writes it
  (NumPy's NaN, inf and division semantics), with NumPy's broadcasting checks; steps on int64
  and bool values where Numba's scalars compute what NumPy's do (``_step_types_ok``);
- float64 sums and means, logsumexps, softmaxes and ``SumToShape`` call ``numba_reductions``'
  loops, which add in NumPy's pairwise order bit for bit; integer sums, products, maxima and
  minima over every axis are exact in any order;
- indexing (``Subtensor``, ``AdvancedSubtensor``, their increments) and array-making nodes
  (``Alloc``, ``ARange``, ``Join``, ``ExtractDiag``, ``CumOp``, ``SpecifyShape``) are written
  by ``numba_translate_indexing``, ``Cholesky`` and ``Solve`` by ``numba_translate_linalg``;
- ``matmul`` of vectors and matrices is ``np.dot`` (Numba calls SciPy's BLAS; a matrix of one
  row times a vector is a dot product of two vectors, as NumPy computes it): the same values
  as NumPy's ``matmul`` on the models measured, but not always to the last bit (NumPy computes
  ``x.T @ x`` with ``syrk``, and the two libraries' BLAS builds may pick other kernels);
- ``DimShuffle``, ``Shape`` and ``Reshape`` are views and small arrays, as in the program.

0-d values are Python scalars inside the function (0-d arrays again when returned).
Every value must have a dtype the entries handle (float64, int64, bool); otherwise there is no
whole function and the program runs alone.  A node without a translation (no entry, or one that
declines its types or shapes) is called in Python, its op's ``perform``, between Numba segments
of the rest (``_segmented``); where that leaves as many segments as nodes in Numba, or the node
is a fused one (``_FUSED``), there is no whole function either.  The function is compiled off
the calling thread (``numba_compile.py``), with Numba's disk cache (``numba_kernels.load_kernel``,
keyed by the source, which holds the argument types); until it is ready the program runs.  Then
a call runs the function on inputs of at most ``whole_below(order)`` elements, C-contiguous and
of the types it was compiled for; on anything else, and where the function raises (bad shapes:
it makes the checks the ops would), the program runs on the same arguments, so a bad input gets
the program's error naming the node.  Functions that read or update shared variables call the
program through its cells (``Function``) and keep it.
"""

from __future__ import annotations

import math
import re
import threading
import warnings

import numpy as np

from eqgraph.exec import numba_compile, numba_kernels, numba_reductions, numba_special
from eqgraph.exec import numba_translate_indexing as indexing
from eqgraph.exec import numba_translate_linalg as linalg
from eqgraph.exec import numba_translate_reductions as reductions
from eqgraph.exec.composite import Composite, step_name
from eqgraph.exec.numba_kernels import FORMS, LIBM_EXTRA_NS, STEP_NS, numba, numba_below
from eqgraph.exec.numba_reductions import SMALL as REDUCTION_SMALL
from eqgraph.exec.numba_reductions import KERNELS, reduction_kind, softmax_kind
from eqgraph.exec.reducing import ReducingComposite
from eqgraph.exec.source import define
from eqgraph.tensor.alloc import ARange, Alloc
from eqgraph.tensor.elemwise import Cast, DimShuffle, Elemwise
from eqgraph.tensor.extra_ops import CumOp
from eqgraph.tensor.join import Join
from eqgraph.tensor.linalg import Cholesky, Solve
from eqgraph.tensor.math import MatMul, Reduce, Softmax
from eqgraph.tensor.products import ExtractDiag
from eqgraph.tensor.shape import Reshape, Shape, SpecifyShape, SumToShape
from eqgraph.tensor.subtensor import AdvancedIncSubtensor, AdvancedSubtensor, IncSubtensor, Subtensor
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Constant

#: a per-call cost decision, measured (bench/suite.py's models against the program at several
#: input sizes): the whole function runs only where every input has at most this many elements,
#: fewer where its libm steps cost more than the calls it saves (``whole_below``); above it the
#: program's NumPy SIMD loops and BLAS calls win
SMALL_INPUTS = 256
#: a per-call cost decision, measured: a program of one or two nodes calls its kernels directly,
#: which the whole function, behind its caller, does not beat
MIN_NODES = 3
#: calls the whole function may refuse (other types, bad shapes) before the program runs alone:
#: a refusal costs Numba's type dispatch and an exception, more than the call it would save
MISSES = 50
#: dtype -> its Numba type's name in the generated source
SCALAR_TYPES = {"float64": "float64", "bool": "boolean", "int64": "int64"}
NUMPY_DTYPES = {"float64": "np.float64", "bool": "np.bool_", "int64": "np.int64"}

_COMPARISONS = frozenset({"eq", "neq", "lt", "le", "gt", "ge"})
_LOGICAL = frozenset({"and_", "or_", "xor", "invert"})


#: the scalar steps' forms, with the casts between the dtypes the whole function handles
_FORMS = {**FORMS, "cast_int64": "np.int64({0})"}
#: int64 division and remainder as NumPy's: 0 for a zero divisor, and the minimum integer divided
#: by -1 wraps (Numba's ``//`` would trap there)
_INTEGER_FORMS = {"int_div": "(0 if {1} == 0 else ((0 - {0}) if {1} == -1 else {0} // {1}))",
                  "mod": "(0 if {1} == 0 or {1} == -1 else {0} % {1})"}
_INTEGER_STEPS = frozenset({"add", "sub", "mul", "neg", "maximum", "minimum"})
_NUMBERS = ("float64", "int64", "bool")


def _step_types_ok(key: str, ins: list, out: str) -> bool:
    """Whether ``FORMS[key]`` on scalars of dtypes ``ins`` computes what NumPy's step gives in
    dtype ``out``.  Numba's scalars promote int64 and bool to float64 as NumPy does, and int64
    arithmetic wraps as NumPy's; but Numba's ``True + True`` is 2, NumPy's is True (bool
    arithmetic is left out), and integer division and powers differ at zero and below."""
    if key not in _FORMS or not all(d in _NUMBERS for d in ins):
        return False
    if key == "cast_float64":
        return out == "float64"
    if key == "cast_bool":
        return out == "bool"
    if key == "cast_int64":   # from integers only: Numba's conversion of NaN or inf is undefined
        return out == "int64" and ins[0] != "float64"
    if key == "second":
        return out == ins[1]
    if key == "switch":
        return ins[1] == ins[2] == out or out == "float64" and "float64" in ins[1:] and "bool" not in ins[1:]
    if key in _COMPARISONS or key in ("isnan", "isinf"):
        return out == "bool" and (key in _COMPARISONS or ins[0] == "float64")
    if key in _LOGICAL:
        return out == "bool" and all(d == "bool" for d in ins)
    if out == "int64":
        return (key in _INTEGER_STEPS or key in _INTEGER_FORMS) and "int64" in ins
    return out == "float64" and "float64" in ins


def _literal(value) -> str:
    """A one-element constant as a Python literal of the source."""
    item = np.asarray(value).reshape(()).item()
    if isinstance(item, (bool, int)):
        return repr(item)
    return repr(item) if math.isfinite(item) else {"inf": "math.inf", "-inf": "(-math.inf)"}.get(repr(item), "math.nan")


class _Writer:
    """Locals of the generated function: a name for each value (a literal for a constant of one
    element), the constants passed as arguments, and fresh names.

    Small arrays that an op makes from scalars (a 0-d value given axes of length 1, a shape
    vector) are made only where an op reads them as arrays (``lazy``): a loop reads the scalar
    (``scalars``), a ``DimShuffle`` picking a length reads it from the shape (``lengths``)."""

    def __init__(self, constants: dict):
        self.constants = constants     # variable -> its value, known at link time
        self.names: dict = {}          # variable -> local name or literal
        self.passed: list = []         # (parameter name, value) of constants passed as arguments
        self.scalars: dict = {}        # variable of one element -> the scalar expression it holds
        self.lengths: dict = {}        # shape vector -> the expressions of its entries
        self.lazy: dict = {}           # variable -> the expression making it, until an op reads it
        self.pending: list = []        # lines making lazy values, put before the current node's lines
        self.count = 0

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
def _elementwise(w: _Writer, node):
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
        if not _step_types_ok(step_name(step_op), [dtypes[a] for a in args], inner_node.outputs[0].dtype):
            return None
    # outputs of one shape share a loop: the same arrays read (scalars and constants of one
    # element leave the shape to them) and the same rank
    groups: dict = {}   # (arrays read, rank) -> (inputs read, output positions)
    for k, reads in enumerate(op.inputs_read() if isinstance(op, Composite) else [set(range(nin))]):
        arrays = frozenset(i for i in reads if node.inputs[i].ndim and w.one_element(node.inputs[i]) is None)
        inputs, positions = groups.setdefault((arrays, node.outputs[k].ndim), (set(), []))
        inputs.update(reads)
        positions.append(k)
    lines = []
    for reads, positions in groups.values():
        lines += _loop(w, node, nin, steps, outs, dtypes, sorted(reads), positions)
    return lines


def _loop(w: _Writer, node, nin, steps, outs, dtypes, reads, positions) -> list:
    """The lines computing outputs ``positions`` (all reading inputs ``reads``)."""
    out_vars = [node.outputs[k] for k in positions]
    rank = out_vars[0].ndim
    needed = set()
    stack = [outs[k] for k in positions]
    while stack:
        index = stack.pop()
        if index >= nin and index not in needed:
            needed.add(index)
            stack.extend(steps[index - nin][1])
    lines, dims, index_of = [], [[] for _ in range(rank)], {}
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
            dims[d].append(f"{name}.shape[{dd}]")
            moves = w.fresh("m")   # 0 where this input's axis has length 1: NumPy broadcasts it
            lines.append(f"{moves} = 1 if {name}.shape[{dd}] != 1 else 0")
            subscripts.append(f"i{d} * {moves}")
        index_of[k] = (name, subscripts)
    sizes = []
    for d in range(rank):
        size = "1"
        for dim in dims[d]:
            size = dim if size == "1" else f"broadcast_dim({size}, {dim})"
        sizes.append(w.fresh("n"))
        lines.append(f"{sizes[-1]} = {size}")
    outs_names = [w.define(v) for v in out_vars]
    indent = ""
    if rank:
        shape = f"({', '.join(sizes)},)"
        lines += [f"{o} = np.empty({shape}, dtype={NUMPY_DTYPES[v.dtype]})" for o, v in zip(outs_names, out_vars)]
        for d in range(rank):
            lines.append(f"{indent}for i{d} in range({sizes[d]}):")
            indent += "    "
    element: list = []
    for k in range(nin):
        entry = index_of.get(k)
        if isinstance(entry, tuple):
            name, subscripts = entry
            element.append(w.fresh("e"))
            lines.append(f"{indent}{element[-1]} = {name}[{', '.join(subscripts)}]")
        else:
            element.append(entry)   # a scalar or literal, or an input this output does not read
    for j, (step_op, args) in enumerate(steps):
        element.append(None)
        if nin + j in needed:
            element[-1] = w.fresh("t")
            value = _form(step_name(step_op), nin + j, dtypes).format(*[element[a] for a in args])
            lines.append(f"{indent}{element[-1]} = {value}")
    at = f"[{', '.join(f'i{d}' for d in range(rank))}]"
    for o, k in zip(outs_names, positions):
        lines.append(f"{indent}{o}{at} = {element[outs[k]]}" if rank else f"{o} = {element[outs[k]]}")
    return lines


def _form(key: str, index: int, dtypes: list) -> str:
    """The form of step ``key`` computing value ``index`` of the loop (``dtypes``: of every value)."""
    return _INTEGER_FORMS[key] if dtypes[index] == "int64" and key in _INTEGER_FORMS else _FORMS[key]


def _reducing(w: _Writer, node):
    """A ``ReducingComposite``: its elementwise part as a loop, then each sum or mean as
    ``_reduce`` writes it (the inputs are at most ``SMALL_INPUTS`` long here, so the values
    summed are a small array, and the sums keep NumPy's order)."""
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
def _matmul(w: _Writer, node):
    a, b = node.inputs
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


def _reduce(w: _Writer, node):
    op, (x,), out = node.op, node.inputs, node.outputs[0]
    if op.name == "logsumexp":
        return reductions.logsumexp(w, node)
    whole = x.ndim > 0 and tuple(sorted(op.axis)) == tuple(range(x.ndim))
    kind = reduction_kind(op.name, x.dtype, out.dtype, x.ndim, op.axis, op.keepdims and not whole)
    if kind is not None:
        value = f"{_KERNEL_NAMES[kind]}(np.ascontiguousarray({w.value(x)}), {op.name == 'mean'})"
    else:
        return reductions.orderless(w, node)
    if whole and op.keepdims:   # a whole reduction keeping its axes: the one value in an array of ones
        value = f"np.full(({'1, ' * x.ndim}), {value})"
    return [f"{w.define(out)} = {value}"]


def _softmax(w: _Writer, node):
    op, (x,) = node.op, node.inputs
    kind = softmax_kind(x.dtype, node.outputs[0].dtype, x.ndim, op.axis)
    if kind is None:
        return None
    return [f"{w.define(node.outputs[0])} = {_KERNEL_NAMES[kind]}(np.ascontiguousarray({w.value(x)}), {op.log})"]


def _sum_to_shape(w: _Writer, node):
    g, like = node.inputs
    if g.ndim not in (1, 2) or g.dtype != "float64" or node.outputs[0].dtype != "float64":
        return None
    shape = ", ".join(f"{w.value(like)}.shape[{d}]" for d in range(g.ndim))
    return [f"{w.define(node.outputs[0])} = sum_to_shape_{g.ndim}(np.ascontiguousarray({w.value(g)}), {shape})"]


def _dimshuffle(w: _Writer, node):
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


def _reshape(w: _Writer, node):
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


def _reshape_scalar(w: _Writer, name: str, shape: str, out) -> list:
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


def _shape(w: _Writer, node):
    (x,) = node.inputs
    if x.ndim == 0:
        return [f"{w.define(node.outputs[0])} = np.empty(0, dtype=np.int64)"]
    name, out = w.value(x), node.outputs[0]
    w.lengths[out] = [f"{name}.shape[{d}]" for d in range(x.ndim)]
    w.lazy[out] = f"np.array([{', '.join(w.lengths[out])}], dtype=np.int64)"
    return []


#: op class -> translation (writer, node) -> the lines computing the node, or None where it has
#: none (the program then runs).  One entry per kind of node: a new fused op adds one here.
TRANSLATIONS = {Composite: _elementwise, ReducingComposite: _reducing, Elemwise: _elementwise, Cast: _elementwise,
                MatMul: _matmul, Reduce: _reduce, Softmax: _softmax, SumToShape: _sum_to_shape,
                DimShuffle: _dimshuffle, Shape: _shape, Reshape: _reshape,
                Subtensor: indexing.subtensor, AdvancedSubtensor: indexing.advanced_subtensor,
                IncSubtensor: indexing.inc_subtensor, AdvancedIncSubtensor: indexing.advanced_inc_subtensor,
                SpecifyShape: indexing.specify_shape, Alloc: indexing.alloc, ARange: indexing.arange,
                Join: indexing.join, ExtractDiag: indexing.extract_diag, CumOp: indexing.cumulative,
                Cholesky: linalg.cholesky, Solve: linalg.solve}

#: numba_reductions.KERNELS key -> the name the generated module imports it as
_KERNEL_NAMES = {("whole", False): "sum_whole", ("rows", False): "sum_rows", ("rows", True): "sum_rows_kept",
                 ("columns", False): "sum_columns", ("columns", True): "sum_columns_kept",
                 ("softmax", 2): "softmax_rows", ("softmax", 1): "softmax_vector"}
_HEADER = ["import math", "import numba", "import numpy as np", numba_special.IMPORT,
           "from eqgraph.exec.numba_reductions import KERNELS",
           f"# compiled against {numba_reductions.VERSION} "
           f"{' '.join(numba_kernels.files_version(path) for path in (__file__, indexing.__file__, linalg.__file__, reductions.__file__))}",
           "from eqgraph.exec.numba_program import broadcast_dim, sum_to_shape_1, sum_to_shape_2",
           f"from eqgraph.exec.numba_translate_indexing import {', '.join(indexing.HELPERS)}",
           f"from eqgraph.exec.numba_translate_linalg import {', '.join(linalg.HELPERS)}",
           f"from eqgraph.exec.numba_translate_reductions import {', '.join(reductions.HELPERS)}", "",
           *[f"{name} = KERNELS[{key!r}]" for key, name in _KERNEL_NAMES.items()], ""]


def whole_below(order) -> float:
    """The input size under which the whole function beats the program: each node it saves is
    ``STEP_NS`` of dispatch (one node's worth pays for the function's own call); each element
    of a libm step costs ``LIBM_EXTRA_NS`` more than NumPy's SIMD loop, where the program runs
    that loop: always for a plain ``Elemwise``, above ``numba_below(op)`` for a fused node
    (below it the program runs Numba's scalar libm too), above ``numba_reductions.SMALL`` for a
    softmax.  At most ``SMALL_INPUTS``; 0 for programs of fewer than ``MIN_NODES`` nodes."""
    if len(order) < MIN_NODES:
        return 0
    costs = []   # (size above which the program runs NumPy's loop, libm extra per element)
    for node in order:
        op = node.op
        if isinstance(op, Composite):
            costs.append((numba_below(op), sum(LIBM_EXTRA_NS.get(step_name(s), 0.0) for s, _ in op.steps)))
        elif isinstance(op, Elemwise):
            costs.append((0, LIBM_EXTRA_NS.get(step_name(op), 0.0)))
        elif isinstance(op, Softmax):
            costs.append((REDUCTION_SMALL["softmax"], LIBM_EXTRA_NS["exp"]))
    saved, limit, extra = STEP_NS * (len(order) - 1), float(SMALL_INPUTS), 0.0
    for below, cost in sorted(costs):
        if below >= limit:
            break
        extra += cost
        if extra:
            limit = min(limit, max(below, saved / extra))
    return limit


def _arg_type(var) -> str:
    if var.ndim == 0:
        return f"numba.{SCALAR_TYPES[var.dtype]}"
    # read-only: such a signature takes writable arrays too, and an input is never written
    return f"numba.types.Array(numba.{SCALAR_TYPES[var.dtype]}, {var.ndim}, 'C', readonly=True)"


def whole_source(fgraph, order, constants: dict):
    """``(module source, values passed after the inputs)`` of the whole function of ``order``
    (the program's nodes), or None where a value has no translation.  Where every node has a
    translation the module's ``kernel`` is one ``@njit`` function; else ``kernel`` is Python
    calling Numba segments and, between them, the nodes without one (``_PythonCall``, passed
    after the constants)."""
    values = list(fgraph.variables)
    if any(type(v.type) is not TensorType or v.dtype not in SCALAR_TYPES for v in values) or \
            any(isinstance(v, Constant) or v in constants or v.owner is None and v not in fgraph.inputs
                for v in fgraph.outputs) or len(set(fgraph.inputs)) != len(fgraph.inputs):
        return None
    w = _Writer(constants)
    params = [w.fresh("a") for _ in fgraph.inputs]
    pieces = [[]]   # lines of Numba code, and between them one line calling a node in Python
    for var, param in zip(fgraph.inputs, params):
        w.names[var] = param
        for d, size in enumerate(var.type.shape):   # the input's static shape, as the program's filter checks
            if size is not None:
                pieces[0].append(f"if {param}.shape[{d}] != {size}: raise ValueError('input shape')")
    calls, translated = [], 0
    for node in order:
        lines = _translated(w, node)
        pieces[-1] += w.pending
        w.pending = []
        if lines is None:
            if isinstance(node.op, _FUSED):
                return None
            calls.append(_PythonCall(node, constants))
            pieces += [_call_line(w, node, f"c{len(calls)}"), []]
            pieces[-3] += w.pending   # the lazy values the call reads, made before it
            w.pending = []
        else:
            pieces[-1] += lines
            translated += 1
    if calls and translated <= len(calls) + 1:   # no more nodes in Numba than calls of segments: nothing saved
        return None
    results = []
    for var in fgraph.outputs:
        name = w.value(var)
        pieces[-1] += w.pending
        w.pending = []
        if var.ndim == 0:   # a 0-d array, as the program returns
            boxed = w.fresh("r")
            pieces[-1] += [f"{boxed} = np.empty((), dtype={NUMPY_DTYPES[var.dtype]})", f"{boxed}[()] = {name}"]
            name = boxed
        results.append(name)
    names = params + [name for name, _ in w.passed]
    if not calls:
        types = [_arg_type(v) for v in fgraph.inputs] + \
                [f"numba.types.Array(numba.{SCALAR_TYPES[value.dtype.name]}, {value.ndim}, 'C', readonly=True)"
                 for _, value in w.passed]
        body = [f"@numba.njit(({', '.join(types)},), cache=True, error_model='numpy')",
                f"def kernel({', '.join(names)}):", *["    " + line for line in pieces[0]],
                f"    return ({', '.join(results)},)"]
    else:
        body = _segmented(pieces, names, [f"c{k + 1}" for k in range(len(calls))], results)
    source = "\n".join([*_HEADER, *body, ""])
    return source, [value for _, value in w.passed] + calls


#: nodes never called in Python: a fused node's ``perform`` steps through its scalar ops one NumPy
#: call each, where the program runs its compiled kernel (three times slower on the
#: negative-binomial GLM's psi nodes)
_FUSED = (Composite, ReducingComposite)


def _translated(w: _Writer, node):
    """The lines computing ``node``, or None where it has no translation (it reads a value that
    no translation defines: an input of a node called in Python, read as the op would not)."""
    translate = TRANSLATIONS.get(type(node.op))
    try:
        return translate(w, node) if translate is not None else None
    except KeyError:
        return None


def _call_line(w: _Writer, node, callee: str) -> str:
    """The line of the Python kernel calling ``node``'s ``perform`` on the values it reads."""
    args = [w.value(v) for v in node.inputs if v not in w.constants]
    outs = [w.define(v) for v in node.outputs]
    return f"{', '.join(outs)}, = {callee}({', '.join(args)})"


_NAME = re.compile(r"\b[vkamnetrg][0-9]+\b")   # the names ``_Writer.fresh`` makes (not loop indices)


def _segmented(pieces: list, params: list, callees: list, results: list) -> list:
    """A Python ``kernel`` running Numba segments (``pieces[0]``, ``pieces[2]``, ...) and the calls
    between them: each segment takes the values it reads that exist before it, and returns those
    that later code reads."""
    later = [set(_NAME.findall("\n".join(str(p) for p in pieces[k + 1:]) + " " + " ".join(results)))
             for k in range(len(pieces))]
    known, segments, driver, count = set(params), [], [], 0
    for k, piece in enumerate(pieces):
        if isinstance(piece, str):   # a call in Python
            driver.append(piece)
            known.update(_NAME.findall(piece.split("=")[0]))
            continue
        used = set(_NAME.findall("\n".join(piece)))
        reads = sorted(used & known, key=_name_order)
        gives = sorted((used - known) & later[k], key=_name_order)
        if not piece:
            continue
        count += 1
        name = f"segment{count}"
        segments += ["@numba.njit(cache=True, error_model='numpy')", f"def {name}({', '.join(reads)}):",
                     *["    " + line for line in piece], f"    return ({''.join(g + ', ' for g in gives)})", ""]
        driver.append(f"({''.join(g + ', ' for g in gives)}) = {name}({', '.join(reads)})")
        known.update(gives)
    return [*segments, f"def kernel({', '.join(params + callees)}):", *["    " + line for line in driver],
            f"    return ({', '.join(results)},)"]


def _name_order(name: str) -> tuple:
    return name[0], int(name[1:])


class _PythonCall:
    """A node without a translation, called from the whole function's Python kernel: its op's
    ``perform`` on the values the Numba segments pass (0-d ones as scalars) and its constants;
    inputs the op destroys are copied first (they may be the caller's arrays)."""

    def __init__(self, node, constants: dict):
        self.node = node
        self.fixed = {k: constants[v] for k, v in enumerate(node.inputs) if v in constants}
        self.dtypes = [v.dtype for v in node.inputs]
        self.destroyed = {k for ks in getattr(node.op, "destroy_map", {}).values() for k in ks}

    def __call__(self, *passed):
        given = iter(passed)
        inputs = []
        for k, dtype in enumerate(self.dtypes):
            value = self.fixed[k] if k in self.fixed else np.asarray(next(given), dtype=dtype)
            inputs.append(np.array(value, copy=True) if k in self.destroyed else value)
        storage = [[None] for _ in self.node.outputs]
        self.node.op.perform(self.node, inputs, storage)
        return tuple(cell[0][()] if out.ndim == 0 else cell[0] for cell, out in zip(storage, self.node.outputs))


def untranslated_nodes(fgraph, order, constants: dict) -> list:
    """The nodes of ``order`` that no translation writes (the op has no entry, or its entry
    declines these types): the whole function calls them in Python, between Numba segments."""
    w, missing = _Writer(constants), []
    for var in fgraph.inputs:
        w.define(var)
    for node in order:
        lines = _translated(w, node)
        w.pending = []
        if lines is None:
            missing.append(node)
            for out in node.outputs:
                w.define(out)
    return missing


def whole_program(fgraph, order, constants: dict, program):
    """``run(*inputs) -> [outputs]``: ``program`` until the whole Numba function is built (off
    the calling thread, as the program being linked says: ``numba_compile.collector``), then
    that function on small inputs; ``program`` itself where Numba is off or a node has no
    translation."""
    compiles = numba_compile.collector()
    below = whole_below(order)
    if compiles is None or below < 1:
        return program
    try:
        made = whole_source(fgraph, order, constants)
    except KeyError:   # a value no node computes before it is read (a translation gap)
        return program
    if made is None:
        return program
    source, passed = made
    namespace = {"program": program, "passed": passed, "hot": None, "last": False}
    misses = 0

    def missed():
        """A call the function refused (types it was not compiled for, bad shapes): each refusal
        costs more than the call it would save, so after ``MISSES`` of them the program runs alone."""
        nonlocal misses
        misses += 1
        if misses >= MISSES:
            namespace["hot"] = None

    def install(kernel):
        if "def segment1(" in source and compiles.mode != "eager":
            namespace["warm"] = _warming(kernel, namespace)   # its segments compile at a first call
        else:
            namespace["hot"] = kernel

    namespace["missed"], namespace["warm"] = missed, None
    compiles.add(lambda: _compile(source), install, source, whole=True)
    compiles.whole_globals = namespace
    params = [f"v{k}" for k in range(len(fgraph.inputs))]
    args = [f"{p}[()]" if v.ndim == 0 else p for p, v in zip(params, fgraph.inputs)]
    args += [f"passed[{k}]" for k in range(len(passed))]
    small = "".join(f" and {p}.size <= {int(below)}" for p, v in zip(params, fgraph.inputs) if v.ndim)
    lines = [f"def run({', '.join(params)}):",
             "    global last",
             "    if warm is not None:",
             f"        warm({', '.join(args)})",
             f"    if hot is not None{small}:",
             "        try:",
             f"            out = hot({', '.join(args)})",
             "        except Exception:  # noqa: BLE001  (other types, bad shapes: the program runs, or says what is wrong)",
             "            missed()",
             "        else:",
             "            last = True",
             "            return [*out]",
             "    last = False",
             f"    return program({', '.join(params)})"]
    define("\n".join(lines) + "\n", "<eqgraph whole-program caller>", namespace)
    run = namespace["run"]
    run.whole_source, run.program = source, program
    return run


def _warming(kernel, namespace: dict):
    """``warm(*args)``: on its first call, a daemon thread runs ``kernel`` once on copies of the
    arguments, so that Numba compiles its segments (their types are known only then) while the
    program serves the calls; then ``kernel`` takes over."""
    def warm(*args):
        namespace["warm"] = None
        copies = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]

        def first_call():
            try:
                kernel(*copies)
            except Exception:  # noqa: BLE001  (bad shapes: compiled all the same; such calls fall back)
                pass
            namespace["hot"] = kernel

        threading.Thread(target=first_call, name="eqgraph-numba-warm", daemon=True).start()

    return warm


def _compile(source: str):
    with warnings.catch_warnings():   # Numba's advice (np.dot on a view that is not contiguous, ...)
        warnings.simplefilter("ignore", numba.NumbaPerformanceWarning)
        return numba_kernels.load_kernel(source)


if numba is not None:
    # Numba's advice on generated code (np.dot of a view that is not contiguous) is no warning for
    # the user: the segments of a whole function compile at their first call, after ``_compile``
    warnings.filterwarnings("ignore", category=numba.NumbaPerformanceWarning, module=r".*k_[0-9a-f]+$")

if numba is not None:  # helpers the generated functions call (compiled on first use, cached on disk)
    _njit = numba.njit(cache=True, error_model="numpy")
    _whole, _rows_kept, _columns_kept = KERNELS[("whole", False)], KERNELS[("rows", True)], KERNELS[("columns", True)]

    @_njit
    def broadcast_dim(n, m):
        """The length of an axis of lengths ``n`` and ``m`` broadcast together, or a ValueError."""
        if n == 1 or n == m:
            return m
        if m == 1:
            return n
        raise ValueError("operands could not be broadcast together")

    @_njit
    def sum_to_shape_1(g, n):
        """``SumToShape`` of a C-contiguous vector to length ``n``: itself, or its sum."""
        if g.shape[0] == n:
            return g
        if n != 1:
            raise ValueError("SumToShape: the shapes do not broadcast")
        out = np.empty(1)
        out[0] = _whole(g, False)
        return out

    @_njit
    def sum_to_shape_2(g, n0, n1):
        """``SumToShape`` of a C-contiguous matrix to shape ``(n0, n1)``, summing in NumPy's order."""
        if g.shape[0] == n0 and g.shape[1] == n1:
            return g
        if n0 == 1 and g.shape[1] == n1:
            return _columns_kept(g, False)
        if n1 == 1 and g.shape[0] == n0:
            return _rows_kept(g, False)
        if n0 == 1 and n1 == 1:
            out = np.empty((1, 1))
            out[0, 0] = _whole(g, False)
            return out
        raise ValueError("SumToShape: the shapes do not broadcast")
else:
    broadcast_dim = sum_to_shape_1 = sum_to_shape_2 = None


__all__ = ["MIN_NODES", "SMALL_INPUTS", "TRANSLATIONS", "whole_below", "whole_program", "whole_source"]
