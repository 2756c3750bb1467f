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
"""

from __future__ import annotations

from pytensor.compile.mode import Mode
from pytensor.graph.rewriting.db import RewriteDatabaseQuery
from pytensor.link.basic import JITLinker

import eqgraph
from eqgraph.exec.numba import background
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.pytensor.convert import from_pytensor


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
