"""A PyTensor mode whose linker hands the whole graph to eqgraph (``eqgraph.pytensor.mode()``).

PyTensor's function machinery keeps doing what it does for every linker: it puts shared variables
among the graph's inputs and their update expressions among its outputs, writes the updates back,
and guards outputs that are views of inputs. The linker's part (``JITLinker``'s contract, as in
PyTensor's JAX linker) is one callable from the graph's input values to its output values; here
that is ``eqgraph.function`` of the converted graph, whose outputs never share memory with its
inputs, so ``borrow`` needs nothing more.

A sampler calls the compiled function from its first step, thousands of times, so the linker
decides when the Numba forms are built (``compile``, for eqgraph's default "background"): where
every one of them is already in the disk cache, it loads them before returning and the first step
runs compiled; otherwise they compile in the background while the NumPy program serves the calls,
in a compile server started before the e-graph compile so that its own start costs no time.

``use()`` makes eqgraph PyTensor's default mode inside a ``with`` block, for the functions a
library compiles without asking its caller for a mode (PyMC's trace function): a graph that holds
an op with no translation (a random draw, say) then runs on PyTensor's ``PerformLinker`` rather
than failing, since the caller never chose eqgraph for it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytensor
import pytensor.compile.mode as pytensor_modes
from pytensor.compile.mode import Mode
from pytensor.graph.rewriting.db import RewriteDatabaseQuery
from pytensor.link.basic import JITLinker, PerformLinker

import eqgraph
from eqgraph.exec.numba import background
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.pytensor.convert import UnsupportedType, from_pytensor
from eqgraph.pytensor.ops import UnsupportedOp


class EqgraphLinker(JITLinker):
    """Compiles a PyTensor FunctionGraph with ``eqgraph.function``."""

    # eqgraph chooses its own in-place operations and rewrites; PyTensor's C-only and BLAS
    # rewrites would give it ops with no translation
    incompatible_rewrites = ("cxx_only", "BlasOpt", "inplace", "local_careduce_fusion", "fusion")

    #: the eqgraph function of the graph this linker compiled last
    eqgraph_function = None

    def fgraph_convert(self, fgraph, input_storage=None, storage_map=None, **kwargs):
        converted = from_pytensor(fgraph, shared_as_inputs=True)
        if eqgraph.config.compile == "background" and eqgraph.config.numba:
            background.prestart()   # its start overlaps the e-graph compile below
        if eqgraph.config.compile != "background":
            compiled = eqgraph.function(converted.inputs, converted.outputs, on_unused_input="ignore")
        else:
            compiled = eqgraph.function(converted.inputs, converted.outputs, on_unused_input="ignore",
                                        compile="deferred")
            _build_numba_forms(compiled)
        self.eqgraph_function = compiled
        return compiled

    def create_thunk_inputs(self, storage_map):
        return [storage_map[v] for v in self.fgraph.inputs]

    def jit_compile(self, fn):
        return fn


class EqgraphDefaultLinker(EqgraphLinker):
    """``EqgraphLinker`` for PyTensor's default mode (``use()``): a graph that holds an op with no
    translation, or a variable of a type with no counterpart, runs on PyTensor's ``PerformLinker``
    (each node's Python ``perform``: no C thunks, and no C virtual machine, whose first import
    compiles a C module). ``fallback`` says what sent it there: None, or the ``UnsupportedOp`` or
    ``UnsupportedType`` error."""

    fallback: UnsupportedOp | UnsupportedType | None = None

    def make_all(self, input_storage=None, output_storage=None, storage_map=None):
        try:
            return super().make_all(input_storage=input_storage, output_storage=output_storage,
                                    storage_map=storage_map)
        except (UnsupportedOp, UnsupportedType) as unsupported:
            self.fallback = unsupported
        python = PerformLinker(allow_gc=self.allow_gc).accept(self.fgraph, no_recycling=self.no_recycling)
        return python.make_all(input_storage=input_storage, output_storage=output_storage,
                               storage_map=storage_map)


def _build_numba_forms(compiled) -> None:
    """Load ``compiled``'s Numba forms now where all are in the disk cache, else start their
    background compile (``compiled`` was made with ``compile="deferred"``, which builds nothing
    until asked)."""
    compiles = compiled.program.compiles
    sources = [build.source for build in compiles.builds if build.source is not None]
    if sources and all(numba_kernels.on_disk(source) for source in sources):
        compiled.wait_compiled()   # a deferred program builds on this thread: loads, here
    elif compiles.mode == "deferred":  # Numba is on: compile as "background" would have
        compiles.mode = "background"
        compiles.start()


def mode() -> Mode:
    """A PyTensor ``Mode`` that compiles with eqgraph: for ``pytensor.function(..., mode=mode())``
    and PyMC's ``model.compile_logp(mode=mode())``. PyTensor only applies the rewrites every
    linker needs (``minimum_compile``); eqgraph's e-graph does the optimizing."""
    return Mode(EqgraphLinker(), RewriteDatabaseQuery(include=["minimum_compile"]))


def default_mode() -> Mode:
    """The mode ``use()`` makes PyTensor's default: ``mode()``'s, except that a graph with an op
    eqgraph cannot translate runs on PyTensor's ``PerformLinker`` (``EqgraphDefaultLinker``)."""
    return Mode(EqgraphDefaultLinker(), RewriteDatabaseQuery(include=["minimum_compile"]))


def python_mode() -> Mode:
    """What ``use()`` gives ``FAST_COMPILE`` requests: PyTensor's ``FAST_COMPILE`` rewrites, then
    each node's Python ``perform`` (``PerformLinker``). PyTensor's own ``FAST_COMPILE`` links with
    its virtual machine, whose module imports (and, with an empty compiledir, compiles) a C
    extension even when it runs no C thunk; a graph compiled for speed of compiling runs a few
    times, so eqgraph's e-graph would not pay for itself either."""
    return Mode(PerformLinker(), RewriteDatabaseQuery(include=["fast_compile", "py_only"]))


@contextlib.contextmanager
def use() -> Iterator[Mode]:
    """Inside the block, PyTensor functions compiled without a mode of their own compile with
    eqgraph (``default_mode()``) and ``FAST_COMPILE`` ones with ``python_mode()``, so that a
    library's own compiles (PyMC's trace function, its initial point, its start-point checks) stop
    waiting for PyTensor's C compiler. A compile that names another mode keeps it. Yields the
    eqgraph mode, to pass where a mode is asked for (``pm.sample(compile_kwargs={"mode": m})``).

    PyTensor has a setting for its default mode (``pytensor.config.mode``) but none for what
    ``FAST_COMPILE`` means, and PyMC asks for it by object (``pytensor.compile.mode.FAST_COMPILE``),
    so the block replaces that object and the name's entry in ``predefined_modes``, and puts both
    back on leaving: a process-wide change, as ``pytensor.config.change_flags`` is."""
    eqgraph_mode, fast_mode = default_mode(), python_mode()
    fast_compile = pytensor_modes.FAST_COMPILE, pytensor_modes.predefined_modes["FAST_COMPILE"]
    with pytensor.config.change_flags(mode=eqgraph_mode):
        pytensor_modes.FAST_COMPILE = pytensor_modes.predefined_modes["FAST_COMPILE"] = fast_mode
        try:
            yield eqgraph_mode
        finally:
            pytensor_modes.FAST_COMPILE, pytensor_modes.predefined_modes["FAST_COMPILE"] = fast_compile
