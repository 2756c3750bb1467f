"""Numba kernels for ``Composite`` nodes.

A fused node's scalar graph becomes one ``numba.guvectorize`` function over scalars
(layout ``(),()->()``; ``numba.vectorize`` where it has one input and one output), a NumPy
ufunc, so broadcasting comes with it: one call for the whole group instead of one NumPy
call per step.  That wins where the NumPy calls' fixed cost dominates (small arrays, long
groups) and loses on long arrays of transcendental functions, where NumPy's SIMD loops beat
the scalar libm calls Numba makes.  So arithmetic-only kernels use Numba at every size, and
kernels with transcendental steps only below ``numba_below(op)`` elements (a per-call cost
decision, from the measured ``STEP_NS`` and ``LIBM_EXTRA_NS``).  Kernels are compiled off the
calling thread (``tier``, ``background.py``): the NumPy kernel runs until the Numba one is
ready.

Only float64 and bool values are compiled, and only ops whose scalar form below has
NumPy's semantics for NaN, inf and division by zero (Numba's ufuncs follow NumPy's
error model: 1/0 is inf); anything else keeps the NumPy kernel.  Kernels are cached on disk
(``EQGRAPH_KERNEL_CACHE``, default ``~/.cache/eqgraph/kernels``) as a module file named
by the hash of its source, which includes the dtypes, and Numba's own cache next to it,
so a process that has seen a kernel loads it instead of compiling it.

``EQGRAPH_NUMBA=0`` in the environment keeps Numba from being imported at all (``numba`` is
None here, as where it is not installed); ``eqgraph.config.numba = False`` turns the Numba
tiers off for the functions compiled after it (``enabled``).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import math
import os
import sys
import threading
import warnings
from pathlib import Path

import numpy as np

try:
    import fcntl
except ImportError:   # not POSIX
    fcntl = None

from eqgraph.exec.numba import background as numba_compile
from eqgraph.exec.numpy.kernels import fits
from eqgraph.exec.numba.special import IMPORT as special_import
from eqgraph.exec.numba.special import numba  # None where Numba is missing or EQGRAPH_NUMBA=0
from eqgraph.exec.source import define
from eqgraph.settings import config
from eqgraph.tensor.elemwise import SCALAR_OPS, Cast
from eqgraph.tensor.scalar_ops import No
from eqgraph.terms.basic import Constant


def enabled() -> bool:
    """Whether functions compiled now use Numba: installed, and not turned off (``config.numba``)."""
    return numba is not None and config.numba


#: measured by bench/suite.py: one NumPy call of a step costs about STEP_NS however small the array.
#: Arithmetic and comparisons are faster in Numba's single loop at every size; Numba's scalar libm
#: calls are slower than NumPy's SIMD loops by LIBM_EXTRA_NS[name] per element, each elementwise op's
#: ``libm_ns`` (tensor/elemwise.py says how it is measured); ops priced at the lowest price were no
#: faster in NumPy, so long arrays of them keep NumPy's loops.
STEP_NS = 500.0
LIBM_EXTRA_NS = {name: s.libm_ns for name, s in SCALAR_OPS.items() if s.libm_ns is not None}
TRANSCENDENTAL = frozenset(LIBM_EXTRA_NS)


def numba_below(op) -> float:
    """The array size under which Numba's one loop beats NumPy's calls for ``op``: NumPy pays
    ``STEP_NS`` a step, Numba ``LIBM_EXTRA_NS`` more per element for each libm step."""
    extra = sum(LIBM_EXTRA_NS.get(getattr(step, "name", ""), 0.0) for step, _ in op.steps)
    return math.inf if not extra else STEP_NS * len(op.steps) / extra

#: step name -> scalar expression over its arguments, with NumPy's semantics on float64/bool: each
#: elementwise op's ``numba`` form, and the casts
FORMS = {name: s.numba for name, s in SCALAR_OPS.items() if isinstance(s.numba, str)}
FORMS.update({"cast_float64": "(1.0 * {0})", "cast_bool": "({0} != 0)"})  # Numba has no float(bool); 1.0 * x is x
#: elementwise ops with no Numba form, and why: a fused group with one of them keeps the NumPy kernel
NO_FORM = {name: s.numba.reason for name, s in SCALAR_OPS.items() if isinstance(s.numba, No)}
NUMBA_TYPES = {"float64": "float64", "bool": "boolean"}


def baked_constants(op, node) -> dict:
    """``{input index: Python literal}`` for the inputs of ``node`` that are one-element
    constants, written into the kernel's source instead of passed: a kernel of one array and
    its constants then has one input (``vectorize``, below), and no input is read through a
    stride of 0.  Only constants that leave the output's shape to the other inputs (of no
    higher rank than they have, and not all an output reads)."""
    literals = {}
    for k, var in enumerate(node.inputs):
        value = getattr(var, "data", None)
        if isinstance(var, Constant) and np.size(value) == 1 and var.dtype in NUMBA_TYPES:
            item = np.asarray(value).reshape(()).item()
            literals[k] = repr(item) if isinstance(item, bool) or math.isfinite(item) else \
                {"inf": "math.inf", "-inf": "(-math.inf)"}.get(repr(item), "math.nan")
    arrays = [v for k, v in enumerate(node.inputs) if k not in literals]
    if not arrays or any(node.inputs[k].ndim > max(v.ndim for v in arrays) for k in literals) \
            or any(reads <= set(literals) for reads in op.inputs_read()):
        return {}
    return literals


def scalar_steps(op, names: list, indent: str):
    """The lines computing each step of ``op``'s scalar graph into ``t0, t1, ...`` from ``names``
    (an expression for each input; each step's ``t{j}`` is appended), or None where a step has
    no scalar form with NumPy's semantics."""
    body = []
    for j, (step_op, args) in enumerate(op.steps):
        key = f"cast_{step_op.dtype}" if isinstance(step_op, Cast) else step_op.name
        if key not in FORMS:
            return None
        body.append(f"{indent}t{j} = {FORMS[key].format(*[names[a] for a in args])}")
        names.append(f"t{j}")
    return body


def kernel_source(op, node) -> str | None:
    """The module source of ``node``'s Numba kernel, or None where it is not supported."""
    dtypes = op.value_dtypes(node)
    if any(d not in NUMBA_TYPES for d in dtypes):
        return None
    literals = baked_constants(op, node)
    names = [literals.get(k, f"i{k}") for k in range(op.nin)]
    kept = [k for k in range(op.nin) if k not in literals]
    body = scalar_steps(op, names, "    ")
    if body is None:
        return None
    in_types = ", ".join(NUMBA_TYPES[dtypes[k]] for k in kept)
    params = [f"i{k}" for k in kept]
    if len(op.outs) == 1 and len(kept) == 1:
        # vectorize: Numba writes the loop, with the scalar function inlined, so LLVM can use SIMD,
        # where guvectorize makes a call per element; with more inputs it is no faster
        body.append(f"    return {names[op.outs[0]]}")
        decorator = f"@numba.vectorize(['{NUMBA_TYPES[dtypes[op.outs[0]]]}({in_types})'], nopython=True, cache=True)"
    else:
        outs = [f"o{k}" for k in range(len(op.outs))]
        body += [f"    {o}[0] = {names[index]}" for o, index in zip(outs, op.outs)]
        out_types = ", ".join(f"{NUMBA_TYPES[dtypes[o]]}[:]" for o in op.outs)
        layout = ",".join("()" for _ in kept) + "->" + ",".join("()" for _ in outs)
        decorator = f"@numba.guvectorize(['void({in_types}, {out_types})'], '{layout}', nopython=True, cache=True)"
        params += outs
    return "\n".join(["import math", "import numba", "import numpy as np", special_import, "", decorator,
                      f"def kernel({', '.join(params)}):", *body, ""])


def cache_dir() -> Path:
    return Path(os.environ.get("EQGRAPH_KERNEL_CACHE", Path.home() / ".cache" / "eqgraph" / "kernels"))


#: part of every kernel's key: a change of the cache's layout makes new keys, so kernels cached
#: in another layout are not reused
CACHE_FORMAT = 2
_loaded: dict = {}
_lock = threading.Lock()


def files_version(*paths) -> str:
    """A hash of the files at ``paths``.  A kernel that calls compiled functions of eqgraph's
    modules (the summing loops) carries a copy of them in Numba's cache, and once loaded that copy
    answers the functions' own calls too; so its source names the version of those files, and a
    change of theirs is a new kernel, not a stale one."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()[:16]


def _key(source: str) -> str:
    return hashlib.sha256(f"{CACHE_FORMAT}\n{numba.__version__}\n{source}".encode()).hexdigest()[:24]


def _on_disk(folder: Path, key: str) -> bool:
    return (folder / f"k_{key}.py").exists() and any(folder.glob(f"__pycache__/*k_{key}*.nbi"))


def on_disk(source: str) -> bool:
    """Whether ``source``'s kernel is compiled in the disk cache (its module alone is there while a
    process compiles it: loading it then would wait for that compile)."""
    return _on_disk(cache_dir(), _key(source))


def load_kernel(source: str):
    """The compiled kernel of ``source``: the one this process has loaded (once per process), else
    from the disk cache (``kernel.cache_hit`` is True), else compiled and cached (False).  A source
    that the compile server could not compile raises its error again (``numba_compile.FAILED``)."""
    if source in numba_compile.FAILED:
        raise RuntimeError(numba_compile.FAILED[source])
    key = _key(source)
    name = f"eqgraph_kernel_{key}"
    with _lock:
        if key in _loaded:
            return _loaded[key]
        if getattr(sys.modules.get(name), "kernel", None) is not None:
            # loaded before, from another cache folder or memo: a second copy would define the same
            # symbols, and Numba would leave the copy's environment unset (its arrays box with no dtype)
            _loaded[key] = sys.modules[name].kernel
            return _loaded[key]
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        with _key_locked(folder, key):
            kernel = _import_kernel(folder, key, name, source)
        _loaded[key] = kernel
        return kernel


def _import_kernel(folder: Path, key: str, name: str, source: str):
    """Import ``source`` as module ``name`` from the cache ``folder``: Numba compiles it, or loads
    what it cached (``kernel.cache_hit``)."""
    path = folder / f"k_{key}.py"
    hit = _on_disk(folder, key)
    if not path.exists():
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(source)
        tmp.replace(path)  # atomic: another process never imports half a file
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # Numba's cache re-imports the module by name when loading
    try:
        spec.loader.exec_module(module)  # compiles, or loads Numba's cache
    except BaseException:
        del sys.modules[name]   # no half-made module for the next load to take as loaded
        raise
    kernel = module.kernel
    kernel.cache_hit = hit
    return kernel


@contextlib.contextmanager
def _key_locked(folder: Path, key: str):
    """Hold the lock file of ``key`` in ``folder``: a process that needs a module another one is
    compiling waits for that compile and loads its result instead of compiling it again (a whole
    function is many CPU seconds of Numba). Where there are no POSIX file locks, or the file
    cannot be opened, the processes compile side by side."""
    if fcntl is None:
        yield
        return
    try:
        handle = open(folder / f"k_{key}.lock", "a")
    except OSError:
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)   # released when the file closes, or the process ends
        yield


def load_or_warn(source: str, what: str):
    """``load_kernel(source)``, or None with a warning where Numba fails (a broken cache, a Numba
    bug): the NumPy kernel keeps running ``what``."""
    try:
        return load_kernel(source)
    except Exception as err:  # noqa: BLE001
        warnings.warn(f"eqgraph: Numba could not build {what}; NumPy runs it instead ({err})",
                      RuntimeWarning, stacklevel=3)
        return None


def numba_kernel(op, node, numpy_run=None, below=math.inf):
    """``run(*inputs) -> tuple of outputs`` with Numba, or None where Numba is missing or the node
    is not supported.

    ``guvectorize`` gives every output the full broadcast shape of all the inputs.  An output
    that reads only some inputs has that shape exactly when one of those inputs has it (its
    own broadcast shape then contains the full one); on a call where none does, ``numpy_run``
    computes the outputs instead.  Without ``numpy_run``, such nodes get no kernel.  So does
    a call with an input of ``below`` elements or more (``numba_below``)."""
    if numba is None:
        return None
    source = kernel_source(op, node)
    baked = set(baked_constants(op, node))   # not passed; they never change the output's shape
    kept = [k for k in range(op.nin) if k not in baked]
    partial = {tuple(sorted(reads - baked)) for reads in op.inputs_read() if len(reads - baked) < len(kept)}
    if source is None or ((partial or below != math.inf) and numpy_run is None):
        return None
    loaded = load_or_warn(source, "a fused kernel")
    if loaded is None:
        return None
    # with scalar core dimensions only, Numba builds a plain NumPy ufunc: call it directly
    kernel = getattr(loaded, "ufunc", None) or loaded
    scalar = all(o.ndim == 0 for o in node.outputs)   # a ufunc returns NumPy scalars then: made 0-d arrays
    # a one-output kernel writes over the input its op may destroy (Composite.inplace), where that fits
    inplace = op.inplace[0][1] if op.inplace and len(op.outs) == 1 and not scalar else None
    return _caller(kernel, op.nin, kept, len(op.outs) == 1, sorted(partial), numpy_run, below, scalar, inplace)


def _caller(kernel, nin: int, kept: list, single: bool, partial: list, numpy_run, below=math.inf, scalar=False,
            inplace=None):
    """``run(*inputs) -> outputs`` calling ``kernel`` on the inputs ``kept`` (not baked into it),
    generated as one function: on 10 elements a Python loop over the outputs (or a lambda
    more) costs as much as the kernel itself.  ``partial``: the input sets of outputs that
    read only some inputs; where none of an output's inputs has the kernel's shape,
    ``numpy_run`` runs instead, as it does where an input has ``below`` elements or more
    (baked inputs are constants of one element, below any ``numba_below``).  ``scalar``: the
    outputs have no axes, and each is returned as a 0-d array, as NumPy's kernel returns it.
    ``inplace``: the input the one output is written into, where that fits (``kernels.fits``)."""
    params = ", ".join(f"i{k}" for k in range(nin))
    call = f"kernel({', '.join(f'i{k}' for k in kept)})"
    if inplace is not None and inplace in kept:
        target = f"i{inplace}"
        call = f"({call[:-1]}, out={target}) if {fits(target, [f'i{k}' for k in kept])} else {call})"
    lines = [f"def run({params}):"]
    if below != math.inf:
        lines += [f"    if {' or '.join(f'i{k}.size >= below' for k in kept)}:",
                  f"        return numpy_run({params})  # NumPy's SIMD loops win on long arrays"]
    if scalar:
        lines.append(f"    outs = {'(asarray(' + call + '),)' if single else 'tuple(map(asarray, ' + call + '))'}")
    else:
        lines.append(f"    outs = {'(' + call + ',)' if single else call}")
    if partial:
        tests = ["(" + " or ".join(f"i{k}.shape == shape" for k in reads) + ")" for reads in partial]
        lines += ["    shape = outs[0].shape",
                  f"    if not ({' and '.join(tests)}):",
                  f"        return numpy_run({params})  # an output is smaller than the kernel made it"]
    lines.append("    return outs")
    namespace = {"kernel": kernel, "numpy_run": numpy_run, "below": below, "asarray": np.asarray}
    define("\n".join(lines) + "\n", "<eqgraph numba caller>", namespace)
    return namespace["run"]


def tiered(op, node, numpy_run, rebind=None):
    """``numpy_run`` until the node's Numba kernel is ready (``tier``), then that kernel on arrays
    smaller than ``numba_below(op)``; ``numpy_run`` itself where Numba is off or cannot compile
    the node."""
    ranks = {o.ndim for o in node.outputs}
    source = None if numba_compile.collector() is None else kernel_source(op, node)
    if source is None or (0 in ranks and len(ranks) > 1):
        return numpy_run   # (outputs of no axes beside others: the kernel would broadcast them)
    below = numba_below(op)
    return tier(numpy_run, lambda: numba_kernel(op, node, numpy_run, below), rebind, source=source)


def tier(numpy_run, build, rebind=None, below=math.inf, source=None):
    """``run(*inputs)``: ``numpy_run`` until ``build()`` (a run that tests the sizes itself:
    ``below`` is its business) is made, off the calling thread as the program being linked says
    (``numba_compile.collector``); then that run.  ``numpy_run`` itself where no program is being
    linked with Numba.  ``source``: the module ``build`` compiles, which the compile server can
    compile into the disk cache first.

    ``rebind(fast)``, if given, is called once the kernel is built, with that ``run``: the
    generated program puts it where it called this one, which saves a Python call on every
    later call."""
    compiles = numba_compile.collector()
    if compiles is None:
        return numpy_run
    current = [numpy_run]

    def install(fast):
        current[0] = fast
        if rebind is not None:
            rebind(fast)

    compiles.add(build, install, source)
    return lambda *inputs: current[0](*inputs)


__all__ = ["baked_constants", "enabled", "numba_below", "cache_dir", "on_disk", "files_version", "kernel_source",
           "load_kernel", "load_or_warn", "numba_kernel", "scalar_steps", "tier", "tiered"]
