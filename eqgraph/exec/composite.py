"""`Composite`: one node that computes a whole elementwise subgraph.

The fusion pass (``fusion.py``) replaces each maximal group of elementwise nodes
by one ``Composite`` holding their *scalar graph*: a list of steps
``(op, argument indices)`` over a value list that starts with the node's inputs.
The steps are the original ``Elemwise``/``Cast`` op values, so the reference
``perform`` runs exactly the NumPy calls the unfused graph ran, with the same
dtypes at every step (results are bit-for-bit those of unfused execution, NaN
and inf included).  ``make_thunk`` picks the kernel: generated NumPy (``kernels.py``),
Numba once hot (``numba/kernels.py``), one CuPy ElementwiseKernel (``cupy/kernels.py``)
or the NumPy kernel on each Dask chunk (``dask/backend.py``).

It lives in ``exec`` rather than ``tensor`` because its VJP differentiates the
scalar graph with ``eqgraph.grad`` (one layer below).
"""

from __future__ import annotations

import numpy as np

from eqgraph.exec.cupy.kernels import cupy_kernel
from eqgraph.exec.dask.backend import dask_kernel
from eqgraph.exec.numpy.kernels import numpy_kernel
from eqgraph.exec.numba.loops import tiered
from eqgraph.grad.driver import grad
from eqgraph.tensor.elemwise import Cast, Elemwise
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Apply
from eqgraph.terms.null_type import DisconnectedType, disconnected
from eqgraph.terms.op import Op


def step_name(op) -> str:
    """The short name of a step's op: ``add``, ``exp``, ``cast_float32``."""
    return f"cast_{op.dtype}" if isinstance(op, Cast) else op.name


class Composite(Op):
    """Elementwise ops fused into one node.

    ``steps``: ``((op, (argument indices...)), ...)``; index ``k < nin`` is input ``k``,
    index ``nin + j`` is step ``j``'s result.  ``outs``: the value indices returned.
    ``inplace``: ``((output, input), ...)``, outputs that may be written into the memory of
    an input nobody reads afterwards (``destroy_map``; chosen by ``exec/inplace.py``).  The
    kernels do so where that input has the output's shape, and allocate otherwise.
    """

    __props__ = ("nin", "steps", "outs", "inplace")

    def __init__(self, nin: int, steps, outs, inplace=()):
        self.nin = int(nin)
        self.steps = tuple((op, tuple(int(a) for a in args)) for op, args in steps)
        self.outs = tuple(int(o) for o in outs)
        self.inplace = tuple((int(k), int(j)) for k, j in inplace)
        self.destroy_map = {k: [j] for k, j in self.inplace}
        for j, (op, args) in enumerate(self.steps):
            if not isinstance(op, (Elemwise, Cast)):
                raise TypeError(f"Composite step {j} must be an Elemwise or Cast op, not {op!r}")
            if any(not 0 <= a < self.nin + j for a in args):
                raise ValueError(f"Composite step {j} ({op}) reads {args}: only inputs and earlier steps exist")
        if not self.outs or any(not self.nin <= o < self.nin + len(self.steps) for o in self.outs):
            raise ValueError(f"Composite outputs {self.outs} must name steps")
        for k, j in self.inplace:
            if not (0 <= k < len(self.outs) and 0 <= j < self.nin) or any(j in args for _, args in
                                                                         self.steps[self.outs[k] - self.nin + 1:]):
                raise ValueError(f"Composite output {k} cannot overwrite input {j}: a later step reads it")
        self._inner: dict = {}  # input types -> (inner input variables, inner nodes)

    # -- what it computes, for people ----------------------------------------------
    def expression(self, limit: int = 160, shown=None) -> str:
        """The outputs as nested calls over ``i0, i1, ...``; a step read twice, or read
        once and also returned, gets a name (``t3=...``) so nothing is printed twice.
        ``shown(k, text)``, if given, is how output ``k`` computed by ``text`` is printed."""
        uses = [0] * (self.nin + len(self.steps))
        for _, args in self.steps:
            for a in args:
                uses[a] += 1
        text: list[str] = [f"i{k}" for k in range(self.nin)]
        lets = []
        for j, (op, args) in enumerate(self.steps):
            call = f"{step_name(op)}({', '.join(text[a] for a in args)})"
            index = self.nin + j
            if uses[index] > 1 or (uses[index] and index in self.outs):
                lets.append(f"t{j}={call}")
                call = f"t{j}"
            text.append(call)
        outs = [text[o] if shown is None else shown(k, text[o]) for k, o in enumerate(self.outs)]
        body = "; ".join(lets + outs)
        return body if len(body) <= limit else body[: limit - 3] + "..."

    def __str__(self):
        # Aesara's notation for an in-place pattern: [(output, input)]
        return f"Composite{{{self.expression()}}}" + (f"{list(self.inplace)}" if self.inplace else "")

    def with_inplace(self, inplace) -> "Composite":
        """The same fused node, writing outputs into the inputs ``inplace`` names."""
        twin = Composite(self.nin, self.steps, self.outs, inplace)
        twin._inner = self._inner  # the same scalar graph
        return twin

    # -- building ------------------------------------------------------------------
    def inner(self, in_types):
        """The scalar graph over fresh variables of ``in_types``: (inputs, nodes)."""
        key = tuple(in_types)
        if key not in self._inner:
            values: list = [TensorType(t.dtype, t.shape)() for t in key]
            inputs, nodes = list(values), []
            for op, args in self.steps:
                node = op.make_node(*[values[a] for a in args])
                nodes.append(node)
                values.append(node.outputs[0])
            self._inner[key] = (inputs, nodes)
        return self._inner[key]

    def value_dtypes(self, node) -> list[str]:
        """The dtype of every value of ``node``'s scalar graph: its inputs, then each step's
        output (what a kernel generator declares its locals as)."""
        inputs, inner = self.inner([v.type for v in node.inputs])
        return [v.dtype for v in inputs] + [n.outputs[0].dtype for n in inner]

    def adopt(self, inputs, nodes) -> None:
        """Take ``nodes`` (over ``inputs``, one per step) as the scalar graph for inputs of
        these types: the fusion pass hands over the nodes it fused."""
        if [n.op for n in nodes] != [op for op, _ in self.steps]:
            raise ValueError(f"{self}: the nodes given are not its steps")
        self._inner[tuple(v.type for v in inputs)] = (list(inputs), list(nodes))

    def make_node(self, *inputs):
        if len(inputs) != self.nin:
            raise TypeError(f"{self} takes {self.nin} inputs, got {len(inputs)}")
        for k, var in enumerate(inputs):
            if not isinstance(getattr(var, "type", None), TensorType):
                raise TypeError(f"{self}: input {k} must be a tensor variable, not {var!r}")
        try:
            _, nodes = self.inner([v.type for v in inputs])
        except (TypeError, ValueError) as err:
            raise TypeError(f"{self} cannot take inputs of types {[str(v.type) for v in inputs]}: {err}") from err
        out_types = [nodes[o - self.nin].outputs[0].type for o in self.outs]
        return Apply(self, list(inputs), [TensorType(t.dtype, t.shape)() for t in out_types])

    def expand(self, inputs) -> list:
        """The outputs rebuilt as ordinary elementwise nodes over ``inputs``."""
        values = list(inputs)
        for op, args in self.steps:
            values.append(op(*[values[a] for a in args]))
        return [values[o] for o in self.outs]

    # -- running -------------------------------------------------------------------
    def perform(self, node, inputs, output_storage):
        """The reference: each step's own ``perform``, in order (NumPy, CuPy, ...)."""
        _, nodes = self.inner([v.type for v in node.inputs])
        values = list(inputs)
        cell = [None]
        for (_, args), inner_node in zip(self.steps, nodes):
            inner_node.op.perform(inner_node, [values[a] for a in args], [cell])
            values.append(cell[0])
        for k, o in enumerate(self.outs):
            value = values[o]
            # an output never shares memory with an input (a Cast to the same dtype may return it)
            output_storage[k][0] = value.copy() if any(value is v for v in inputs) else value

    def inputs_read(self) -> list[set]:
        """For each output, the inputs it depends on (directly or through other steps)."""
        reads = [{k} for k in range(self.nin)]
        for _, args in self.steps:
            reads.append(set().union(*(reads[a] for a in args)))
        return [reads[o] for o in self.outs]

    def outputs_read_every_input(self) -> bool:
        """Whether every output depends on every input (then all outputs have the inputs'
        broadcast shape, as one-loop kernels make them)."""
        return all(len(reads) == self.nin for reads in self.inputs_read())

    def make_call(self, node, no_recycling=(), impl=None, rebind=None):
        """``run(*input values) -> output values`` (a list or tuple) on backend ``impl``, or None where
        there is no kernel for it (then ``perform`` runs).  The linker's thunk and the
        straight-line program (``program.py``) both call it; ``rebind(run)`` is called where
        a faster ``run`` replaces the first one (the Numba kernel, once hot: ``tiered``)."""
        if impl in (None, "numpy"):
            handed_out = set(no_recycling or ())  # outputs a call returns: fresh memory each call
            reusable = [k for k, out in enumerate(node.outputs) if out not in handed_out]
            return tiered(self, node, numpy_kernel(self, node, reusable), rebind)  # Numba once hot, if installed
        if impl == "cupy":
            return cupy_kernel(self, node)                       # one ElementwiseKernel
        if impl == "dask":
            return dask_kernel(self, node)                       # the NumPy kernel per chunk
        return None

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
        run = self.make_call(node, no_recycling, impl)
        if run is None:
            return super().make_thunk(node, storage_map, compute_map, no_recycling, impl)
        from_cells = [storage_map[v] for v in node.inputs]
        out_cells = [storage_map[v] for v in node.outputs]
        flags = [compute_map[v] for v in node.outputs]

        def thunk():
            values = [c[0] for c in from_cells]
            try:
                results = run(*values)
            except Exception as err:  # noqa: BLE001  (re-raised naming the step that failed)
                raise self.step_error(node, values, err) from err
            for cell, value in zip(out_cells, results):
                cell[0] = value
            for flag in flags:
                flag[0] = 1

        return thunk

    def step_error(self, node, values, err: Exception) -> Exception:
        """``err`` said again naming the step that raised it (found by running the steps
        one at a time); the linker then names this node, its inputs and their shapes."""
        _, nodes = self.inner([v.type for v in node.inputs])
        computed, cell = list(values), [None]
        for j, ((op, args), inner_node) in enumerate(zip(self.steps, nodes)):
            try:
                op.perform(inner_node, [computed[a] for a in args], [cell])
            except Exception as step_err:  # noqa: BLE001  (this is the one)
                shapes = ", ".join(str(getattr(computed[a], "shape", "?")) for a in args)
                try:
                    return type(step_err)(f"step {j} of the fused node, {op} of shapes ({shapes}): {step_err}")
                except Exception:  # noqa: BLE001  (an exception class with other arguments)
                    return step_err
            computed.append(cell[0])
        return err

    # -- static information ----------------------------------------------------------
    def infer_shape(self, fgraph, node, shapes):
        inner_inputs, nodes = self.inner([v.type for v in node.inputs])
        known = dict(zip(inner_inputs, shapes))
        for inner_node in nodes:
            (known[inner_node.outputs[0]],) = inner_node.op.infer_shape(
                fgraph, inner_node, [known[v] for v in inner_node.inputs])
        return [known[nodes[o - self.nin].outputs[0]] for o in self.outs]

    def flops(self, inputs, outputs):
        return int(sum(np.prod(outputs[0], dtype=np.int64) for _ in self.steps))

    # -- differentiation -------------------------------------------------------------
    def L_op(self, inputs, outputs, output_grads):
        """The VJP through the scalar graph: expand it and let ``grad`` walk it."""
        expanded = self.expand(inputs)
        known = {out: g for out, g in zip(expanded, output_grads)
                 if not isinstance(getattr(g, "type", None), DisconnectedType)}
        if not known:
            return [disconnected() for _ in inputs]
        return grad(None, list(inputs), known_grads=known, disconnected_inputs="ignore",
                    return_disconnected="disconnected")


def is_fusable(op) -> bool:
    """Whether the fusion pass may put a node of ``op`` inside a Composite."""
    return isinstance(op, (Elemwise, Cast))


__all__ = ["Composite", "is_fusable", "step_name"]