"""The Dask backend: the same compiled program on chunked, lazy Dask arrays.

``function(..., backend="dask", chunks=...)`` links the extracted, fused graph as
for NumPy; only the values differ.  Every ``perform`` asks ``array_namespace`` of
its inputs (``eqgraph/xp.py``), which is array-api-compat's wrapper of
``dask.array`` for Dask arrays, so reductions are Dask's tree reductions, ``matmul``
and ``tensordot`` are Dask's blocked ones, and indexing, reshape and concatenate
are Dask's.  A fused elementwise node (``Composite``) runs its NumPy kernel on each
chunk (``blockwise``, ``dask_kernel`` below).  Nothing is computed while the
program runs: a call builds the task graph, and the results are computed (all
together) only when the caller passed NumPy arrays.

An op that Dask cannot run chunked (one whose ``perform`` needs a whole value in
memory: a sort, a decomposition, a Python loop) would make Dask compute its input
in one piece.  While a program runs, the backend installs a scheduler that refuses
to compute, so such an op raises ``ChunkedOpError`` naming it (the linker adds the
node, its inputs and their shapes) instead of silently gathering the array.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
import threading

import numpy as np

from eqgraph.exec.backends import BackendUnavailable
from eqgraph.exec.numpy.kernels import numpy_kernel
from eqgraph.extract.costs import CostModel
from eqgraph.xp import ChunkedOpError


def _import_dask():
    try:
        import dask
        import dask.array as da
        import array_api_compat.dask.array  # noqa: F401  (the namespace xp.py hands to ops)
    except ImportError as err:
        raise BackendUnavailable('backend="dask" needs Dask: pip install "eqgraph[dask]"') from err
    return dask, da


class DaskBackend:
    """Inputs become Dask arrays; results stay lazy unless every argument was NumPy.

    chunks : how NumPy arguments and shared values are split: None (one chunk), or
        anything ``dask.array.from_array`` takes (``"auto"``, ``50_000``, ``{0: 50_000}``).
        A tuple shorter than an array's ndim chunks its leading axes (``(50_000,)`` splits
        rows and keeps columns whole), so one ``chunks`` serves inputs of any ndim.
        Dask arrays passed in keep their own chunks.
    """

    name = "dask"

    def __init__(self, chunks=None):
        self.dask, self.da = _import_dask()
        self.chunks = chunks

    # -- moving values ---------------------------------------------------------------
    def to_device(self, value):
        if not isinstance(value, np.ndarray) or value.ndim == 0:
            return value  # Dask arrays as they are; 0-d values broadcast into every chunk
        return self.da.from_array(value, chunks=self._chunks_for(value.ndim))

    def _chunks_for(self, ndim: int):
        chunks = self.chunks
        if chunks is None:
            return (-1,) * ndim
        if isinstance(chunks, (tuple, list)) and len(chunks) < ndim:
            return tuple(chunks) + (-1,) * (ndim - len(chunks))
        if isinstance(chunks, (tuple, list)) and len(chunks) > ndim:
            return tuple(chunks[:ndim])
        return chunks

    @staticmethod
    def constant_to_device(value):
        return value  # constants stay NumPy: array_namespace lets Dask take them in

    def to_host(self, value):
        return value.compute() if isinstance(value, self.da.Array) else value

    def all_to_host(self, values) -> list:
        """Compute every result in one pass, so shared intermediates are computed once."""
        return [np.asarray(v) for v in self.dask.compute(*values)]  # 0-d arrays, as NumPy's backend

    def is_device_array(self, value) -> bool:
        return isinstance(value, self.da.Array)

    def run(self, program_run) -> None:
        """Run a program, refusing any computation an op would start (``ChunkedOpError``).

        Dask's scheduler setting is global, so programs run one at a time (they only build
        task graphs: quick), and computations other threads start meanwhile go to the
        scheduler that was in force."""
        with _ONE_PROGRAM_AT_A_TIME:
            outer = self.dask.base.get_scheduler() or self.dask.threaded.get
            with self.dask.config.set(scheduler=functools.partial(_refuse_inside_programs, outer)):
                _inside.program = True
                try:
                    program_run()
                finally:
                    _inside.program = False

    @staticmethod
    def cost_model() -> CostModel:
        return DaskCostModel()


_ONE_PROGRAM_AT_A_TIME = threading.Lock()
_inside = threading.local()


def _refuse_inside_programs(outer, dsk, keys, **kwargs):
    if not getattr(_inside, "program", False):
        return outer(dsk, keys, **kwargs)
    raise ChunkedOpError(
        "this op cannot run on chunked Dask arrays: it asked Dask to compute its input in one "
        "piece, and eqgraph never gathers a Dask array into one chunk silently. Compute that "
        "part with backend=\"numpy\", or rewrite it with ops Dask runs per chunk")


class DaskCostModel(CostModel):
    """The cost model extraction uses for ``backend="dask"`` when none is given.

    Dask arrays are the large ones, chunked along their unknown axes; the default model
    spreads 10,000 elements over a value's unknown axes (a ``(None, None)`` matrix is
    100 x 100 but a ``(None,)`` vector 10,000 long), so an ``n x n`` intermediate looks
    no larger than a vector.  Here every unknown axis is ``axis_length`` long: ``(A @ B) @ v``
    then costs what it does on a cluster (an ``n x n`` product, every chunk of A meeting
    every chunk of B) and ``A @ (B @ v)`` is chosen.  A materialized intermediate also
    weighs ``byte_weight`` times more (it is written to worker memory and may travel
    between workers, while fused elementwise work stays inside a chunk).
    """

    def __init__(self, axis_length: int = 100_000, byte_weight: float = 10.0, **options):
        super().__init__(**options)
        self.axis_length = axis_length
        self.ns_per_byte *= byte_weight

    def shape(self, ttype) -> tuple:
        return tuple(self.axis_length if s is None else s for s in getattr(ttype, "shape", ()))


# -- fused elementwise nodes, one NumPy kernel per chunk ---------------------------------
def dask_kernel(op, node):
    """``run(*values) -> outputs`` for a ``Composite`` on Dask arrays, or None where the
    reference ``perform`` (each step through the Dask namespace) must run instead: an
    output that does not read every input has a smaller shape than the chunks'."""
    if not op.outputs_read_every_input():
        return None
    dask, da = _import_dask()
    out_types = [o.type for o in node.outputs]
    ndim = node.outputs[0].ndim
    kernel = ChunkKernel(op, [v.type for v in node.inputs])
    metas = [np.empty((0,) * ndim, dtype=t.numpy_dtype) for t in out_types]

    def run(*values):
        if not any(isinstance(v, da.Array) for v in values):
            return kernel.all_outputs(*values)  # constants only: plain NumPy
        # blockwise with NumPy's right-aligned axes, as dask.array's own elementwise ops: it
        # rechunks inputs to common chunks (map_blocks would broadcast a one-chunk input)
        pairs = []
        for v in values:
            if isinstance(v, np.ndarray) and v.ndim:
                v = da.from_array(v)
            pairs += [v, tuple(range(v.ndim))[::-1]] if isinstance(v, da.Array) else [v, None]
        out_index = tuple(range(ndim))[::-1]
        layer = f"composite-{dask.base.tokenize(kernel, *values)}"
        if len(out_types) == 1:
            return [da.blockwise(kernel, out_index, *pairs, dtype=out_types[0].numpy_dtype, meta=metas[0],
                                 name=layer)]
        all_outputs = da.blockwise(kernel, out_index, *pairs, dtype=object,
                                   meta=np.empty((0,) * ndim, dtype=object), name=layer)
        return [all_outputs.map_blocks(_pick, k, dtype=t.numpy_dtype, meta=meta)
                for k, (t, meta) in enumerate(zip(out_types, metas))]

    return run


def _pick(block_outputs, k):
    return block_outputs[k]


class ChunkKernel:
    """A Composite's NumPy kernel as a picklable callable: workers (other processes)
    receive the op and its input types and generate the kernel on first use.

    It holds a fresh copy of the op: the original's cache of inner nodes reaches the
    compiled graph, its shared variables and their (Dask) values, which would travel
    with every task and make the pickled graph refer to itself."""

    def __init__(self, op, in_types):
        self.op = type(op)(op.nin, op.steps, op.outs)
        self.in_types = tuple(in_types)
        self._run = None
        # Dask names each task graph layer by a hash of its function: hash the op once
        self._token = hashlib.sha256(pickle.dumps((self.op, self.in_types))).hexdigest()

    def all_outputs(self, *blocks) -> list:
        if self._run is None:
            node = self.op.make_node(*[t() for t in self.in_types])
            self._run = numpy_kernel(self.op, node)  # no reusable buffers: chunks are kept
        return self._run(*blocks)

    def __call__(self, *blocks):
        results = self.all_outputs(*blocks)
        return results[0] if len(results) == 1 else tuple(results)

    def __dask_tokenize__(self):
        return self._token

    def __getstate__(self):
        return {"op": self.op, "in_types": self.in_types, "token": self._token}

    def __setstate__(self, state):
        self.op, self.in_types, self._token, self._run = state["op"], state["in_types"], state["token"], None
