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
Every value must have a dtype the entries handle (float64, float32, bool and the integers:
``scalar_steps.SCALAR_TYPES``), or be a random generator (the caller passes a copy of
each: ``numba_translate_random``'s draws advance it in place); otherwise there is no whole
function and the program runs alone.  A node without a translation (no entry, or one that
declines its types or shapes) is called in Python, its op's ``perform``, between Numba segments
of the rest (``_segmented``); where that leaves as many segments as nodes in Numba, or the node
is a fused one (``_FUSED``), there is no whole function either.  The function is compiled off
the calling thread (``background.py``), with Numba's disk cache (``numba_kernels.load_kernel``,
keyed by the source, which holds the argument types); until it is ready the program runs.  Then
a call runs the function where it is the faster: on inputs of at most ``whole_below(order)``
elements (the cost model's bound), and above it on the input sizes where its first calls,
timed against the program's, were faster (``_measuring``); the arguments must be C-contiguous and
of the types it was compiled for; on anything else, and where the function raises (bad shapes:
it makes the checks the ops would), the program runs on the same arguments, so a bad input gets
the program's error naming the node.  Shared values are arguments like the others, and updates
results (``Function`` reads and writes them around the call).
"""

from __future__ import annotations

import math
import re
import threading
import time
import warnings

import numpy as np

from eqgraph.exec.numba import background as numba_compile
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.exec.numba import reductions as numba_reductions
from eqgraph.exec.numba import special as numba_special
from eqgraph.exec.numba import translate_basic as basic
from eqgraph.exec.numba import translate_indexing as indexing
from eqgraph.exec.numba import translate_linalg as linalg
from eqgraph.exec.numba import translate_layout as layout
from eqgraph.exec.numba import translate_linalg2 as linalg2
from eqgraph.exec.numba import translate_products as products
from eqgraph.exec.numba import translate_random as random
from eqgraph.exec.numba import translate_reductions as reductions
from eqgraph.exec.numba import translate_sorting as sorting
from eqgraph.exec.composite import Composite, step_name
from eqgraph.exec.numba.kernels import LIBM_EXTRA_NS, STEP_NS, numba, numba_below
from eqgraph.exec.numba.reductions import SMALL as REDUCTION_SMALL
from eqgraph.exec.numba.reductions import KERNELS
from eqgraph.exec.reducing import ReducingComposite
from eqgraph.exec.source import define
from eqgraph.tensor.alloc import ARange, Alloc
from eqgraph.tensor.elemwise import Elemwise
from eqgraph.tensor.extra_ops import CumOp
from eqgraph.tensor.join import Join
from eqgraph.tensor.linalg import Cholesky, Solve
from eqgraph.tensor.math import Softmax
from eqgraph.tensor.products import Einsum, ExtractDiag
from eqgraph.tensor.assertion import CheckAndRaise
from eqgraph.tensor.shape import MakeVector, SpecifyShape
from eqgraph.tensor.sorting import Sort
from eqgraph.tensor.subtensor import AdvancedIncSubtensor, AdvancedSubtensor, IncSubtensor, Subtensor
from eqgraph.exec.numba import scalar_steps
from eqgraph.exec.numba.scalar_steps import NUMPY_DTYPES, SCALAR_TYPES
from eqgraph.exec.numba.translate_basic import Writer
from eqgraph.tensor.rng_type import RandomGeneratorType, copy_generator
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Constant

#: inputs of at most this many elements run the whole function whatever ``whole_below`` says
#: (0: the cost model and the measured calls decide; tests raise it to force the whole function)
SMALL_INPUTS = 0
#: calls of each of the whole function and the program timed on inputs of sizes above
#: ``whole_below`` before the faster one serves those sizes: the cost model prices the libm steps
#: the program would run in NumPy's SIMD loops, not the Python work of its nodes, so above its
#: bound the choice is measured on the caller's own arrays (0: the program runs there)
TRIALS = 5
#: input-size combinations measured per function; others above ``whole_below`` run the program
MEASURED_SIZES = 64
#: a per-call cost decision, measured: a program of one or two nodes calls its kernels directly,
#: which the whole function, behind its caller, does not beat
MIN_NODES = 3
#: calls the whole function may refuse (other types, bad shapes) before the program runs alone:
#: a refusal costs Numba's type dispatch and an exception, more than the call it would save
MISSES = 50
#: op class -> translation (writer, node) -> the lines computing the node, or None where it has
#: none (the program then runs).  One entry per kind of node: a new fused op adds one here.
TRANSLATIONS = {**basic.TRANSLATIONS, **random.TRANSLATIONS, **linalg2.TRANSLATIONS,
                Subtensor: indexing.subtensor, AdvancedSubtensor: indexing.advanced_subtensor,
                IncSubtensor: indexing.inc_subtensor, AdvancedIncSubtensor: indexing.advanced_inc_subtensor,
                SpecifyShape: indexing.specify_shape, Alloc: indexing.alloc, ARange: indexing.arange,
                Join: indexing.join, ExtractDiag: indexing.extract_diag, CumOp: indexing.cumulative,
                Cholesky: linalg.cholesky, Solve: linalg.solve,
                Sort: sorting.sort, MakeVector: indexing.make_vector, CheckAndRaise: indexing.check_and_raise,
                Einsum: products.einsum}

_HEADER = ["import math", "import numba", "import numpy as np", numba_special.IMPORT,
           "from eqgraph.exec.numba.reductions import KERNELS",
           f"# compiled against {numba_reductions.VERSION} "
           f"{' '.join(numba_kernels.files_version(path) for path in (__file__, basic.__file__, scalar_steps.__file__, layout.__file__, random.__file__, indexing.__file__, linalg.__file__, reductions.__file__, linalg2.__file__, sorting.__file__, products.__file__))}",
           "from eqgraph.exec.numba.program import broadcast_dim, sum_to_shape_1, sum_to_shape_2",
           f"from eqgraph.exec.numba.translate_indexing import {', '.join(indexing.HELPERS)}",
           f"from eqgraph.exec.numba.translate_linalg import {', '.join(linalg.HELPERS)}",
           f"from eqgraph.exec.numba.translate_reductions import {', '.join(reductions.HELPERS)}",
           f"from eqgraph.exec.numba.translate_linalg2 import {', '.join(linalg2.HELPERS)}",
           f"from eqgraph.exec.numba.translate_sorting import {', '.join(sorting.HELPERS)}",
           f"from eqgraph.exec.numba.translate_products import {', '.join(products.HELPERS)}", "",
           *[f"{name} = KERNELS[{key!r}]" for key, name in basic.KERNEL_NAMES.items()], ""]


def whole_below(order) -> float:
    """The input size under which the whole function beats the program: each node it saves is
    ``STEP_NS`` of dispatch (one node's worth pays for the function's own call); each element
    of a libm step costs ``LIBM_EXTRA_NS`` more than NumPy's SIMD loop, where the program runs
    that loop: always for a plain ``Elemwise``, above ``numba_below(op)`` for a fused node
    (below it the program runs Numba's scalar libm too), above ``numba_reductions.SMALL`` for a
    softmax.  Infinite where no step costs more in Numba; at least ``SMALL_INPUTS``."""
    costs = []   # (size above which the program runs NumPy's loop, libm extra per element)
    for node in order:
        op = node.op
        if isinstance(op, Composite):
            costs.append((numba_below(op), sum(LIBM_EXTRA_NS.get(step_name(s), 0.0) for s, _ in op.steps)))
        elif isinstance(op, Elemwise):
            costs.append((0, LIBM_EXTRA_NS.get(step_name(op), 0.0)))
        elif isinstance(op, Softmax):
            costs.append((REDUCTION_SMALL["softmax"], LIBM_EXTRA_NS["exp"]))
    saved, limit, extra = STEP_NS * (len(order) - 1), math.inf, 0.0
    for below, cost in sorted(costs):
        if below >= limit:
            break
        extra += cost
        if extra:
            limit = min(limit, max(below, saved / extra))
    return max(limit, float(SMALL_INPUTS))


def _generator(var) -> bool:
    """Whether ``var`` holds a random generator (which the caller copies: a draw advances it)."""
    return isinstance(var.type, RandomGeneratorType)


def _arg_type(var) -> str:
    if _generator(var):
        return "numba.types.npy_rng"
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
    if any(not _generator(v) and (type(v.type) is not TensorType or v.dtype not in SCALAR_TYPES) for v in values) or \
            any(isinstance(v, Constant) or v in constants or v.owner is None and v not in fgraph.inputs
                for v in fgraph.outputs) or len(set(fgraph.inputs)) != len(fgraph.inputs):
        return None
    w = Writer(constants, fgraph)
    params = [w.fresh("a") for _ in fgraph.inputs]
    pieces = [[]]   # lines of Numba code, and between them one line calling a node in Python
    for var, param in zip(fgraph.inputs, params):
        w.names[var] = param
        for d, size in enumerate(getattr(var.type, "shape", ())):   # the input's static shape, as the program's filter checks
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
        if _returns_float(var):   # a float, which the caller makes a 0-d array (``_caller``)
            boxed = w.fresh("r")
            pieces[-1] += [f"{boxed} = np.float64({name})"]
            name = boxed
        elif not _generator(var) and var.ndim == 0:   # a 0-d array, as the program returns
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


def _returns_float(var) -> bool:
    """Whether the whole function returns output ``var`` as a float, made a 0-d array by its
    caller: Numba boxes a 0-d array at about twice the cost of a float and ``np.asarray`` of it."""
    return not _generator(var) and var.ndim == 0 and var.dtype == "float64"


#: nodes never called in Python: a fused node's ``perform`` steps through its scalar ops one NumPy
#: call each, where the program runs its compiled kernel
_FUSED = (Composite, ReducingComposite)


def _translated(w: Writer, node):
    """The lines computing ``node``, or None where it has no translation (it reads a value that
    no translation defines: an input of a node called in Python, read as the op would not)."""
    translate = TRANSLATIONS.get(type(node.op))
    try:
        return translate(w, node) if translate is not None else None
    except KeyError:
        return None


def _call_line(w: Writer, node, callee: str) -> str:
    """The line of the Python kernel calling ``node``'s ``perform`` on the values it reads."""
    args = [w.value(v) for v in node.inputs if v not in w.constants]
    outs = [w.define(v) for v in node.outputs]
    return f"{', '.join(outs)}, = {callee}({', '.join(args)})"


_NAME = re.compile(r"\b[vkamnetrg][0-9]+\b")   # the names ``Writer.fresh`` makes (not loop indices)


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
        self.dtypes = [None if _generator(v) else v.dtype for v in node.inputs]
        self.destroyed = {k for ks in getattr(node.op, "destroy_map", {}).values() for k in ks}

    def __call__(self, *passed):
        given = iter(passed)
        inputs = []
        for k, dtype in enumerate(self.dtypes):
            value = self.fixed[k] if k in self.fixed else next(given)
            value = value if dtype is None else np.asarray(value, dtype=dtype)
            inputs.append(np.array(value, copy=True) if k in self.destroyed else value)
        storage = [[None] for _ in self.node.outputs]
        self.node.op.perform(self.node, inputs, storage)
        return tuple(cell[0][()] if not _generator(out) and out.ndim == 0 else cell[0]
                     for cell, out in zip(storage, self.node.outputs))


def untranslated_nodes(fgraph, order, constants: dict) -> list:
    """The nodes of ``order`` that no translation writes (the op has no entry, or its entry
    declines these types): the whole function calls them in Python, between Numba segments."""
    w, missing = Writer(constants, fgraph), []
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
    that function where the cost model or the measured calls say it is faster (``_caller``);
    ``program`` itself where Numba is off or a node has no translation."""
    compiles = numba_compile.collector()
    if compiles is None or len(order) < MIN_NODES:
        return program
    try:
        made = whole_source(fgraph, order, constants)
    except KeyError:   # a value no node computes before it is read (a translation gap)
        return program
    if made is None:
        return program
    source, passed = made
    namespace = {"program": program, "passed": passed, "hot": None, "last": False, "copy_generator": copy_generator}
    misses = 0

    def missed():
        """A call the function refused (types it was not compiled for, bad shapes): each refusal
        costs more than the call it would save, so after ``MISSES`` of them the program runs alone."""
        nonlocal misses
        misses += 1
        if misses >= MISSES:
            namespace["hot"] = None

    def install(kernel):
        if any(isinstance(p, _PythonCall) for p in passed) and compiles.mode != "eager":
            namespace["warm"] = _warming(kernel, namespace)   # its segments compile at a first call
        else:
            namespace["hot"] = kernel

    namespace["missed"], namespace["warm"] = missed, None
    namespace["chosen"], namespace["measure"] = _measuring(namespace)
    compiles.add(lambda: _compile(source), install, source, whole=True)
    compiles.whole_globals = namespace
    floats = [k for k, var in enumerate(fgraph.outputs) if _returns_float(var)]
    namespace["asarray"] = np.asarray
    define(_caller(fgraph.inputs, len(passed), whole_below(order), len(fgraph.outputs), floats),
           "<eqgraph whole-program caller>", namespace)
    run = namespace["run"]
    run.whole_source, run.program = source, program
    return run


def _caller(inputs, passed: int, below: float, outputs: int, floats: list) -> str:
    """The source of ``run``: the whole function on inputs of at most ``below`` elements, and
    above that on the sizes where it was measured faster; ``measure`` times the first calls on
    sizes not measured yet.  ``outputs`` results, those at ``floats`` returned as floats and
    given back as 0-d arrays; ``results`` does that for ``measure``."""
    params = [f"v{k}" for k in range(len(inputs))]
    args = ", ".join([_argument(p, v) for p, v in zip(params, inputs)] + [f"passed[{k}]" for k in range(passed)])
    arrays = [p for p, v in zip(params, inputs) if not _generator(v) and v.ndim]
    results = f"[{', '.join(f'asarray(out[{k}])' if k in floats else f'out[{k}]' for k in range(outputs))}]"
    lines = ["def results(out):", f"    return {results}", "", f"def run({', '.join(params)}):",
             "    global last",
             "    if warm is not None:",
             f"        warm({args})",
             "    if hot is not None:"]
    if arrays and below < math.inf:
        small = " and ".join(f"{p}.size <= {int(below)}" for p in arrays)
        sizes = f"({''.join(f'{p}.size, ' for p in arrays)})"
        lines += [f"        if not ({small} or chosen.get({sizes})):",
                  f"            if {sizes} not in chosen:",
                  f"                return measure({sizes}, ({args},), ({''.join(p + ', ' for p in params)}))",
                  "            last = False",
                  f"            return program({', '.join(params)})"]
    lines += ["        try:",
              f"            out = hot({args})",
              "        except Exception:  # noqa: BLE001  (other types, bad shapes: the program runs, or says what is wrong)",
              "            missed()",
              "        else:",
              "            last = True",
              f"            return {results}",
              "    last = False",
              f"    return program({', '.join(params)})"]
    return "\n".join(lines) + "\n"


def _argument(param: str, var) -> str:
    """The caller's expression passing input ``var``: a 0-d array's scalar, a copy of a generator
    (the function's draws advance it, where the program's draw from copies), else the array."""
    if _generator(var):
        return f"copy_generator({param})"
    return f"{param}[()]" if var.ndim == 0 else param


#: the clock the measured calls read
_clock = time.perf_counter_ns


def _measuring(namespace: dict):
    """``(chosen, measure)``: ``chosen`` maps input sizes to whether the whole function serves
    them; ``measure(sizes, args, params)`` runs one call, the whole function's or the program's
    in turn, timed, until ``TRIALS`` of each pick the faster (the fastest call of each: the least
    disturbed by other work on the machine)."""
    chosen, times = {}, {}

    def measure(sizes, args, params):
        program = namespace["program"]
        if sizes not in times and (TRIALS < 1 or len(chosen) + len(times) >= MEASURED_SIZES):
            namespace["last"] = False
            return program(*params)
        whole, alone = times.setdefault(sizes, ([], []))
        start = _clock()
        if len(whole) <= len(alone):
            try:
                out = namespace["results"](namespace["hot"](*args))
            except Exception:  # noqa: BLE001  (bad shapes: the program says what is wrong)
                namespace["missed"]()
                namespace["last"] = False
                return program(*params)
            whole.append(_clock() - start)
            namespace["last"] = True
        else:
            out = program(*params)
            alone.append(_clock() - start)
            namespace["last"] = False
        if len(alone) >= TRIALS:
            chosen[sizes] = min(whole) <= min(alone)
            del times[sizes]
        return out

    return chosen, measure


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


def warm_up(stop=lambda: False) -> None:
    """Compile (or load from Numba's disk cache) the helpers that most whole functions call, for
    the argument types the translations give them, the vector sums first; ``stop()``, asked
    before each helper, ends it early.  The compile server does this on its start, while its
    parent's e-graph runs, so that a whole function sent to it later compiles only its own code
    (the pairwise sum alone is most of a small model's compile).  A literal argument (a sum's
    ``mean``) is a type of its own to Numba, so the signatures hold the literal the generated code
    passes."""
    if numba is None:
        return
    types = numba.types
    vector, matrix, size, no = (types.Array(types.float64, 1, "C"), types.Array(types.float64, 2, "C"),
                                types.int64, types.literal(False))
    for helper, signature in ((broadcast_dim, (size, size)), (_whole, (vector, no)), (sum_to_shape_1, (vector, size)),
                              (_whole, (matrix, no)), (KERNELS[("rows", False)], (matrix, no)),
                              (KERNELS[("columns", False)], (matrix, no)), (sum_to_shape_2, (matrix, size, size))):
        if stop():
            return
        helper.compile(signature)
    if not stop():   # Numba's np.dot, typed (and compiled) once per process for each pair of array types
        constant = types.Array(types.float64, 2, "C", readonly=True)
        numba.njit((constant, types.Array(types.float64, 1, "C", readonly=True)), error_model="numpy")(_dots)


def _dots(m, v):
    """``np.dot`` of a matrix and a vector, and of two vectors (a matrix of one row), as whole
    functions call it: a constant (read-only) on the left, on the right a read-only argument or a
    vector the function made."""
    w = np.empty(v.shape[0])
    w[:] = v
    return np.dot(m, v) + np.dot(m, w), np.dot(v, v) + np.dot(v, w)


__all__ = ["MIN_NODES", "SMALL_INPUTS", "TRANSLATIONS", "warm_up", "whole_below", "whole_program", "whole_source"]
