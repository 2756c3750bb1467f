"""The whole program as one Numba function, for hot calls on small arrays (issue 12; optional,
like ``numba_kernels.py``).

At 10 elements the generated program (``program.py``) spends 0.5-1 us per node on
NumPy's and Numba's dispatch: a logistic regression with its gradient is about 15 such
lines, PyTensor's default mode one compiled function.  ``whole_program`` writes the same
node list as one ``@numba.njit`` function, from a table with one entry per kind of node
(``TRANSLATIONS``: op class -> the lines computing it), and puts a caller in front of the
program that calls it once the function is hot:

- fused and plain elementwise nodes (``Composite``, ``Elemwise``, ``Cast``) become explicit
  loops over the broadcast shape, each step written as ``numba_kernels.FORMS`` writes it
  (NumPy's NaN, inf and division semantics), with NumPy's broadcasting checks;
- float64 sums and means, softmaxes and ``SumToShape`` call ``numba_reductions``' loops,
  which add in NumPy's pairwise order bit for bit;
- ``matmul`` of vectors and matrices is ``np.dot`` (Numba calls SciPy's BLAS; a matrix of one
  row times a vector is a dot product of two vectors, as NumPy computes it): the same values
  as NumPy's ``matmul`` on the models measured, but not always to the last bit (NumPy computes
  ``x.T @ x`` with ``syrk``, and the two libraries' BLAS builds may pick other kernels);
- ``DimShuffle``, ``Shape`` and ``Reshape`` are views and small arrays, as in the program.

0-d values are Python scalars inside the function (0-d arrays again when returned).
Every node must have an entry and every value a dtype the entries handle (float64, bool,
and int64 for shapes); otherwise there is no whole function and the program runs as
before.  A call runs the function only once the program has had ``HOT_CALLS`` calls on
inputs of at most ``whole_below(order)`` elements, and only on such inputs, C-contiguous and
of the types it was compiled for; on anything else, and where the function raises (bad
shapes: it makes the checks the ops would), the program runs on the same arguments, so a
bad input gets the program's error naming the node.  The function is compiled at that
hot call (not by ``eg.function``), with Numba's disk cache (``numba_kernels.load_kernel``,
keyed by the source, which holds the argument types).  Functions that read or update shared
variables call the program through its cells (``Function``) and keep it.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from eqgraph.exec import numba_kernels, numba_reductions, numba_special
from eqgraph.exec.composite import Composite, step_name
from eqgraph.exec.numba_kernels import FORMS, LIBM_EXTRA_NS, STEP_NS, numba, numba_below
from eqgraph.exec.numba_reductions import SMALL as REDUCTION_SMALL
from eqgraph.exec.numba_reductions import KERNELS, reduction_kind, softmax_kind
from eqgraph.exec.reducing import ReducingComposite
from eqgraph.exec.source import define
from eqgraph.tensor.elemwise import Cast, DimShuffle, Elemwise
from eqgraph.tensor.math import MatMul, Reduce, Softmax
from eqgraph.tensor.shape import Reshape, Shape, SumToShape
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Constant

#: the whole function runs only where every input has at most this many elements (fewer where
#: its libm steps cost more than the calls it saves: ``whole_below``).  Measured against the hot
#: program (time ratio, one run, bench/suite.py's data at 10 / 80 / 320 / 2,000 input elements):
#: logistic regression + grad 0.38 / 0.39 / 0.46 / 0.68, MLP + grad 0.59 / 0.60 / 1.06 / 3.37
#: (its tanh runs on twice the elements, in libm, where the program uses NumPy's SIMD loop),
#: softmax x-entropy + grad 0.37 / 0.37 / 0.60 / 1.02, standardize 0.33 / 0.33 / 0.44 / 0.57
SMALL_INPUTS = 256
#: more calls a function waits for, once hot, where its compiled form is not on disk yet: Numba
#: takes 1-3 s to compile the models (5.6 s the 2,000-node graph), which a few hundred calls
#: that save microseconds each would not repay; loaded from disk it takes 24-38 ms
COLD_CALLS = 2000
#: a program of one or two nodes calls its kernels directly, which the whole function does not beat
#: (``x + 1`` on 10 elements: 0.47 us as the program, 0.80 us as a Numba function; ``sum(exp(x))``
#: 1.08 vs 0.84 us, but 1.17x slower through the caller)
MIN_NODES = 3
#: dtype -> its Numba type's name in the generated source
SCALAR_TYPES = {"float64": "float64", "bool": "boolean", "int64": "int64"}
NUMPY_DTYPES = {"float64": "np.float64", "bool": "np.bool_", "int64": "np.int64"}

_COMPARISONS = frozenset({"eq", "neq", "lt", "le", "gt", "ge"})
_LOGICAL = frozenset({"and_", "or_", "xor", "invert"})


def _step_types_ok(key: str, ins: list, out: str) -> bool:
    """Whether ``FORMS[key]`` on scalars of dtypes ``ins`` computes what NumPy's step gives in
    dtype ``out`` (Numba's ``True + True`` is 2, NumPy's is True: bool arithmetic is left out)."""
    if key not in FORMS:
        return False
    if key == "cast_float64":
        return out == "float64" and ins[0] in SCALAR_TYPES
    if key == "cast_bool":
        return out == "bool" and ins[0] == "float64"
    if key == "second":
        return out == ins[1] and ins[1] in ("float64", "bool")
    if key == "switch":
        return ins[0] == "bool" and ins[1] == ins[2] == out and out in ("float64", "bool")
    if key in _COMPARISONS or key in ("isnan", "isinf"):
        return out == "bool" and all(d == "float64" for d in ins)
    if key in _LOGICAL:
        return out == "bool" and all(d == "bool" for d in ins)
    return out == "float64" and all(d == "float64" for d in ins)


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
            lines.append(f"{indent}{element[-1]} = {FORMS[step_name(step_op)].format(*[element[a] for a in args])}")
    at = f"[{', '.join(f'i{d}' for d in range(rank))}]"
    for o, k in zip(outs_names, positions):
        lines.append(f"{indent}{o}{at} = {element[outs[k]]}" if rank else f"{o} = {element[outs[k]]}")
    return lines


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
    op, (x,) = node.op, node.inputs
    kind = reduction_kind(op.name, x.dtype, node.outputs[0].dtype, x.ndim, op.axis, op.keepdims)
    if kind is None:
        return None
    return [f"{w.define(node.outputs[0])} = {_KERNEL_NAMES[kind]}(np.ascontiguousarray({w.value(x)}), "
            f"{op.name == 'mean'})"]


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
    if out.ndim == 0 or shape.dtype != "int64":
        return None
    # perform: np.reshape(x, the first ndim entries of the shape vector); a copy where x is not contiguous
    items = ", ".join(f"{w.value(shape)}[{d}]" for d in range(out.ndim))
    return [f"if {w.value(shape)}.shape[0] < {out.ndim}: raise ValueError('reshape: too few entries')",
            f"{w.define(out)} = np.ascontiguousarray({w.value(x)}).reshape(({items},))"]


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
                DimShuffle: _dimshuffle, Shape: _shape, Reshape: _reshape}

#: numba_reductions.KERNELS key -> the name the generated module imports it as
_KERNEL_NAMES = {("whole", False): "sum_whole", ("rows", False): "sum_rows", ("rows", True): "sum_rows_kept",
                 ("columns", False): "sum_columns", ("columns", True): "sum_columns_kept",
                 ("softmax", 2): "softmax_rows", ("softmax", 1): "softmax_vector"}
_HEADER = ["import math", "import numba", "import numpy as np", numba_special.IMPORT,
           "from eqgraph.exec.numba_reductions import KERNELS",
           f"# compiled against {numba_reductions.VERSION} {numba_kernels.files_version(__file__)}",
           "from eqgraph.exec.numba_program import broadcast_dim, sum_to_shape_1, sum_to_shape_2", "",
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
    """``(module source, constants passed after the inputs)`` of the whole function of ``order``
    (the program's nodes), or None where a node or a value has no translation."""
    values = list(fgraph.variables)
    if any(type(v.type) is not TensorType or v.dtype not in SCALAR_TYPES for v in values) or \
            any(isinstance(v, Constant) or v in constants or v.owner is None and v not in fgraph.inputs
                for v in fgraph.outputs) or len(set(fgraph.inputs)) != len(fgraph.inputs):
        return None
    w = _Writer(constants)
    params = [w.fresh("a") for _ in fgraph.inputs]
    body = []
    for var, param in zip(fgraph.inputs, params):
        w.names[var] = param
        for d, size in enumerate(var.type.shape):   # the input's static shape, as the program's filter checks
            if size is not None:
                body.append(f"if {param}.shape[{d}] != {size}: raise ValueError('input shape')")
    for node in order:
        translate = TRANSLATIONS.get(type(node.op))
        lines = translate(w, node) if translate is not None else None
        if lines is None:
            return None
        body += w.pending + lines
        w.pending = []
    results = []
    for var in fgraph.outputs:
        name = w.value(var)
        body += w.pending
        w.pending = []
        if var.ndim == 0:   # a 0-d array, as the program returns
            boxed = w.fresh("r")
            body += [f"{boxed} = np.empty((), dtype={NUMPY_DTYPES[var.dtype]})", f"{boxed}[()] = {name}"]
            name = boxed
        results.append(name)
    types = [_arg_type(v) for v in fgraph.inputs] + \
            [f"numba.types.Array(numba.{SCALAR_TYPES[value.dtype.name]}, {value.ndim}, 'C', readonly=True)"
             for _, value in w.passed]
    signature = f"({', '.join(types)},)"
    source = "\n".join([*_HEADER, f"@numba.njit({signature}, cache=True, error_model='numpy')",
                        f"def kernel({', '.join(params + [name for name, _ in w.passed])}):",
                        *["    " + line for line in body], f"    return ({', '.join(results)},)", ""])
    return source, [value for _, value in w.passed]


class _Cold(Exception):
    """Raised by the caller's stand-in for the whole function until it is compiled."""


def whole_program(fgraph, order, constants: dict, program):
    """``run(*inputs) -> [outputs]``: ``program`` until hot, then the whole Numba function on
    small inputs; ``program`` itself where Numba is missing or a node has no translation."""
    below = whole_below(order)
    if numba is None or below < 1:
        return program
    try:
        made = whole_source(fgraph, order, constants)
    except KeyError:   # a value no node computes before it is read (a translation gap)
        return program
    if made is None:
        return program
    source, passed = made
    namespace = {"program": program, "passed": passed, "Cold": _Cold}
    calls = misses = 0
    wait = None   # calls after HOT_CALLS before compiling: none where the function is on disk

    def cold(*args):
        nonlocal calls, wait
        calls += 1
        if calls >= numba_kernels.HOT_CALLS:
            if wait is None:
                wait = 0 if numba_kernels.is_cached(source) else COLD_CALLS
            if calls >= numba_kernels.HOT_CALLS + wait:
                namespace["hot"] = _compile(source) or _never
        raise _Cold

    def missed():
        """A call the function refused (types it was not compiled for, bad shapes): Numba's
        refusal costs up to 20 us, so after ``HOT_CALLS`` of them the program runs alone."""
        nonlocal misses
        misses += 1
        if misses >= numba_kernels.HOT_CALLS:
            namespace["hot"] = _never

    namespace["hot"], namespace["missed"] = cold, missed
    params = [f"v{k}" for k in range(len(fgraph.inputs))]
    args = [f"{p}[()]" if v.ndim == 0 else p for p, v in zip(params, fgraph.inputs)]
    args += [f"passed[{k}]" for k in range(len(passed))]
    small = " and ".join(f"{p}.size <= {int(below)}" for p, v in zip(params, fgraph.inputs) if v.ndim) or "True"
    lines = [f"def run({', '.join(params)}):",
             "    try:",
             f"        if {small}:",
             f"            return [*hot({', '.join(args)})]",
             "    except Cold:",
             "        pass",
             "    except Exception:  # noqa: BLE001  (other types, bad shapes: the program runs, or says what is wrong)",
             "        missed()",
             f"    return program({', '.join(params)})"]
    define("\n".join(lines) + "\n", "<eqgraph whole-program caller>", namespace)
    run = namespace["run"]
    run.whole_source, run.program = source, program
    return run


def _never(*args):
    raise _Cold


def _compile(source: str):
    try:
        with warnings.catch_warnings():   # Numba's advice (np.dot on a view that is not contiguous, ...)
            warnings.simplefilter("ignore", numba.NumbaPerformanceWarning)
            return numba_kernels.load_kernel(source)
    except Exception as err:  # noqa: BLE001  (a Numba gap or bug: the program keeps running)
        warnings.warn(f"eqgraph: Numba could not build the whole-program function; the program runs instead "
                      f"({type(err).__name__}: {str(err)[:200]})", RuntimeWarning, stacklevel=3)
        return None


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
