"""The ``Scan`` op: one node that runs an inner graph once per step.

What the outer e-graph sees
---------------------------
A scan is one e-node whose only prop is ``signature``: a SHA-256 of the inner graph's
structure (ops with their props, types, constants, wiring) and of the loop's layout
(taps, number of shared states, direction, gradient truncation). Ops compare by their
props, so two scans that run the same inner graph over the same outer inputs are the same
term and the e-graph merges them (common-subexpression elimination across loops); two scans
whose inner graphs differ have different signatures and are never merged. No rule looks
inside: the inner graph is opaque to the outer e-graph.

The inner graph is optimized by the same compiler: on the first run the op compiles it with
``eqgraph.function`` (its own e-graph, the default rulesets) and keeps the compiled step.
That is why this package sits above ``function`` in the layers, beside ``inspect``.

Loop-invariant work is pulled out when the scan is built (``build.py``), not by a rule: every
inner expression that depends on no per-step input becomes an outer input, computed once by
the outer graph (where the outer e-graph optimizes it with everything else).

Outer inputs, in order: ``n_steps`` (when given), the sequences, the initial states of the
outputs fed back (each with a leading axis over its taps), the current values of the
untraced states (a random generator in ``outputs_info``) and of the shared variables the loop
updates (the layout's ``n_shared``), then the loop-invariant values. Outer outputs: one array
per traced output (``n_steps`` entries, in the order computed), then the final value of each
untraced state and updated shared variable. Inner inputs: each sequence at each of its taps,
each fed-back output at each of its taps, each untraced state and updated shared variable,
each loop-invariant value. Inner outputs: the traced outputs, then the untraced states' and
shared variables' new values.
"""

from __future__ import annotations

import copy
import hashlib
import threading

import numpy as np

import eqgraph.tensor as et
from eqgraph.function import function
from eqgraph.loops.grad import ScanGrad
from eqgraph.loops.layout import Layout, ScanInfo
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Apply, Constant, Variable
from eqgraph.terms.graph import graph_inputs, toposort
from eqgraph.grad.types import NullTypeGradError
from eqgraph.loops.backward import is_float
from eqgraph.terms.null_type import DisconnectedType, disconnected, grad_undefined
from eqgraph.terms.op import Op
from eqgraph.xp import is_array


def graph_signature(inputs, outputs, layout: Layout) -> str:
    """A digest of the computation, equal for structurally equal inner graphs and layouts."""
    keys: dict[Variable, str] = {v: f"in{i}:{v.type!r}" for i, v in enumerate(inputs)}
    parts = [repr(layout)]
    for node in toposort(outputs, inputs):
        for var in node.inputs:
            if var not in keys:  # a constant: build.py moved every other outer variable to an input
                keys[var] = f"const:{var.signature()!r}" if isinstance(var, Constant) else f"free:{id(var)}"
        op = node.op
        # ops with __props__ are equal when their props are; an op without compares by identity
        op_key = (f"{type(op).__module__}.{type(op).__qualname__}{_stable(op._props())}"
                  if getattr(type(op), "__props__", None) is not None else f"op:{id(op)}")
        parts.append(f"{op_key}({','.join(keys[v] for v in node.inputs)})")
        for j, out in enumerate(node.outputs):
            keys[out] = f"n{len(parts)}.{j}:{out.type!r}"
    parts += [f"out:{keys.get(v) or repr(v.signature())}" for v in outputs]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def _stable(value) -> str:
    """``repr``, except that arrays are written whole (NumPy's repr elides long ones, and
    two ops differing only in the elided part must not share a signature)."""
    if isinstance(value, np.ndarray):
        return f"array({value.dtype},{value.shape},{hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()})"
    if isinstance(value, (tuple, list)):
        return f"({','.join(_stable(v) for v in value)})"
    return repr(value)


def _check_numpy(op, values) -> None:
    """The loop runs on NumPy (its buffers and its compiled step); other arrays are refused."""
    for value in values:  # arrays of another namespace; other values (a random generator) pass
        if is_array(value) and not isinstance(value, np.ndarray):
            raise TypeError(f"{op} runs on the NumPy backend only; one of its inputs is a "
                            f"{type(value).__module__}.{type(value).__name__}")


def _merge_shapes(a: tuple, b: tuple) -> tuple:
    return tuple(x if x is not None else y for x, y in zip(a, b))


def _outputs_reading(inputs, outputs) -> list[set[int]]:
    """Per variable of ``inputs``, the positions of the ``outputs`` that depend on it."""
    leaves = [set(graph_inputs([out])) for out in outputs]
    return [{k for k, read in enumerate(leaves) if var in read} for var in inputs]


class Scan(Op):
    """A loop over an inner graph; built by ``eqgraph.scan`` (see the module docstring)."""

    __props__ = ("signature",)

    def __init__(self, inner_inputs, inner_outputs, layout: Layout, name: str | None = None, until=None):
        self.inner_inputs, self.inner_outputs = list(inner_inputs), list(inner_outputs)
        self.layout, self.name = layout, name
        self.until = until  # the inner stop condition (eg.until), or None: a loop of fixed length
        self.signature = self._sign()
        self._slots = self._layout_slots()
        self._lock = threading.RLock()
        self._compiled: dict = {}

    def __str__(self):
        return f"Scan{{{self.name or 'scan'}, {len(self.inner_outputs)} outputs}}"

    def __getstate__(self):
        state = dict(self.__dict__)
        del state["_lock"], state["_compiled"]  # compiled again after loading
        return state

    def __setstate__(self, state):
        self.__dict__.update(state, _lock=threading.RLock(), _compiled={})
        # ops compared by identity have new identities in this process: sign the graph again
        self.signature = self._sign()

    def _sign(self) -> str:
        return f"{self.name or 'scan'}-{graph_signature(self.inner_inputs, self._step_outputs(), self.layout)}"

    @property
    def info(self) -> ScanInfo:
        """The loop's layout in PyTensor's words (``layout.ScanInfo``)."""
        return ScanInfo.of(self.layout, as_while=self.until is not None)

    def _step_outputs(self) -> list:
        """What one step computes: the inner outputs, then the stop condition if there is one."""
        return self.inner_outputs + ([self.until] if self.until is not None else [])

    # -- the inner graph, by role --------------------------------------------------------------
    def compiled(self, key: str, build):
        """The inner function ``key``, compiled by ``build()`` on first use (once per op); a build
        may ask for another (the compiled gradient for its graph): the lock is reentrant."""
        with self._lock:
            if key not in self._compiled:
                self._compiled[key] = build()
            return self._compiled[key]

    def step(self):
        return self.compiled("step", lambda: function(self.inner_inputs, self._step_outputs(),
                                                      on_unused_input="ignore", name=f"{self.name or 'scan'} step"))

    def inner_slots(self) -> list[tuple]:
        """Per inner input, where its value comes from: ("seq", i, tap), ("out", o, tap),
        ("shared", j, None) or ("invariant", j, None)."""
        return self._slots

    def _layout_slots(self) -> list[tuple]:
        lay = self.layout
        slots = [("seq", i, tap) for i, taps in enumerate(lay.seq_taps) for tap in taps]
        slots += [("out", o, tap) for o, taps in enumerate(lay.out_taps) for tap in taps]
        slots += [("shared", j, None) for j in range(lay.n_shared)]
        slots += [("invariant", j, None) for j in range(lay.n_invariant)]
        return slots

    # -- building -------------------------------------------------------------------------------
    def make_node(self, *outer):
        lay = self.layout
        expected = (int(lay.has_n_steps) + len(lay.seq_taps) + sum(1 for t in lay.out_taps if t)
                    + lay.n_shared + lay.n_invariant)
        if len(outer) != expected:
            raise TypeError(f"{self} takes {expected} inputs, got {len(outer)}")
        outer = [v if isinstance(v, Variable) else et.as_tensor_variable(v) for v in outer]
        n_steps, seqs, inits, shared, invariants = lay.split(outer)
        if n_steps is not None and (n_steps.ndim != 0 or n_steps.dtype[:3] not in ("int", "uin")):
            raise TypeError(f"{self}: n_steps must be an integer scalar, got {n_steps} of type {n_steps.type}")
        by_slot = dict(zip(self.inner_slots(), self.inner_inputs))
        for i, seq in enumerate(seqs):
            self._check_outer(f"sequence {i}", seq, by_slot[("seq", i, lay.seq_taps[i][0])].type, leading=True)
        recurrent = [o for o, taps in enumerate(lay.out_taps) if taps]
        for o, init in zip(recurrent, inits):
            self._check_outer(f"initial state of output {o}", init,
                              by_slot[("out", o, lay.out_taps[o][0])].type, leading=True)
        for j, value in enumerate(shared):
            self._check_outer(f"shared variable {j}", value, by_slot[("shared", j, None)].type, leading=False)
        for j, value in enumerate(invariants):
            self._check_outer(f"non-sequence {j}", value, by_slot[("invariant", j, None)].type, leading=False)
        outputs, steps = [], self._static_steps(n_steps, seqs) if self.until is None else None
        for o, out in enumerate(self.inner_outputs[:lay.n_outputs]):
            shape = out.type.shape
            if lay.out_taps[o]:
                shape = _merge_shapes(shape, by_slot[("out", o, lay.out_taps[o][0])].type.shape)
            outputs.append(TensorType(out.dtype, (steps, *shape))())
        outputs += [v.type() for v in self.inner_outputs[lay.n_outputs:]]
        return Apply(self, outer, outputs)

    def _static_steps(self, n_steps, seqs) -> int | None:
        """The number of steps when the graph fixes it (a constant n_steps, or sequences
        of static lengths), else None."""
        if n_steps is not None:
            return int(n_steps.data) if isinstance(n_steps, Constant) and n_steps.data.size == 1 else None
        lengths = [seq.type.shape[0] for seq in seqs]
        if any(length is None for length in lengths):
            return None
        return max(0, min(length - self.layout.seq_span(i) for i, length in enumerate(lengths)))

    def _check_outer(self, what: str, var, inner_type, leading: bool) -> None:
        if not isinstance(inner_type, TensorType):  # a random generator, say: the same kind of value
            if type(var.type) is not type(inner_type):
                raise TypeError(f"{self}: the {what} must be of type {inner_type}, got {var} of type {var.type}")
            return
        ndim = inner_type.ndim + int(leading)
        if var.dtype != inner_type.dtype or var.ndim != ndim:
            raise TypeError(f"{self}: the {what} must be a {ndim}-d {inner_type.dtype} tensor "
                            f"(the loop was built for that), got {var} of type {var.type}")

    # -- running --------------------------------------------------------------------------------
    def n_steps(self, n_given, seqs) -> int:
        """The number of steps: ``n_steps`` if given, else what the sequences allow."""
        lay = self.layout
        needs = [len(seq) - lay.seq_span(i) for i, seq in enumerate(seqs)]
        n = int(n_given) if n_given is not None else min(needs)
        if n < 0 and n_given is not None:
            raise ValueError(f"{self}: n_steps must be >= 0, got {n}")
        for i, (seq, have) in enumerate(zip(seqs, needs)):
            if have < n or have < 0:
                raise ValueError(f"{self}: sequence {i} has {len(seq)} entries; {max(n, 0)} steps with taps "
                                 f"{list(lay.seq_taps[i])} need {max(n, 0) + lay.seq_span(i)}")
        return n

    def run(self, inputs, record: bool = False):
        """Run the loop on outer values: (outer outputs, each step's inner arguments if ``record``)."""
        lay = self.layout
        n_given, seqs, inits, shared, invariants = lay.split(inputs)
        _check_numpy(self, inputs)
        n = self.n_steps(n_given, seqs)
        buffers = self._buffers(n, inits)
        shared = list(shared)
        step, records = self.step(), []
        for t in range(n):
            args = self.step_inputs(t, seqs, buffers, shared, invariants)
            if record:
                records.append(args)
            results = step(*args)
            for o in range(lay.n_outputs):
                buffers[o] = self._store(buffers[o], o, lay.history(o) + t, results[o], n)
            shared = results[lay.n_outputs:lay.n_outputs + lay.n_shared]
            if self.until is not None and results[-1]:  # this step was the last
                n = t + 1
                break
        outputs = [self._finish(buffers[o], o, n) for o in range(lay.n_outputs)]
        # after no step the final value is the initial one: a copy, never the caller's array
        outputs += [copy.deepcopy(value) if n == 0 else value for value in shared]
        return outputs, records

    def step_inputs(self, t: int, seqs, histories, shared, invariants) -> list:
        """Step ``t``'s inner arguments; ``histories`` per fed-back output (initial entries,
        then one per step)."""
        lay = self.layout
        return [seqs[i][lay.seq_index(i, t, tap, len(seqs[i]))] if kind == "seq" else
                histories[i][lay.history(i) + t + tap] if kind == "out" else
                shared[i] if kind == "shared" else invariants[i]
                for kind, i, tap in self.inner_slots()]

    def _buffers(self, n: int, inits) -> list:
        """Per output, None (allocated at its first step) or its history: initial entries, then steps."""
        lay, buffers, inits = self.layout, [], iter(inits)
        for o, taps in enumerate(lay.out_taps):
            if not taps:
                buffers.append(None)
                continue
            init, k = next(inits), lay.history(o)
            if len(init) < k:
                raise ValueError(f"{self}: the initial state of output {o} has {len(init)} entries along "
                                 f"its first axis; taps {list(taps)} need {k}")
            buffer = np.empty((k + n, *init.shape[1:]), dtype=init.dtype)
            buffer[:k] = init[:k]
            buffers.append(buffer)
        return buffers

    def _store(self, buffer, o: int, index: int, value, n: int):
        value = np.asarray(value)
        if buffer is None:  # an output not fed back: its shape is known at its first step
            buffer = np.empty((n, *value.shape), dtype=self.inner_outputs[o].dtype)
        if value.shape != buffer.shape[1:]:
            what = "its initial state" if self.layout.out_taps[o] else "its first step"
            raise ValueError(f"{self}: output {o} has shape {value.shape} at step {index - self.layout.history(o)}, "
                             f"but {buffer.shape[1:]} at {what}; a scan's outputs keep their shape")
        buffer[index] = value
        return buffer

    def _finish(self, buffer, o: int, n: int):
        """Output ``o``'s ``n`` step values (fewer than allocated where ``until`` stopped the loop)."""
        if buffer is None:  # no step: an empty array of the static shape (unknown axes 0)
            out = self.inner_outputs[o].type
            return np.empty((0, *(s or 0 for s in out.shape)), dtype=out.dtype)
        start = self.layout.history(o)
        return buffer[start:start + n]

    def perform(self, node, inputs, output_storage):
        outputs, _ = self.run(inputs)
        for cell, value in zip(output_storage, outputs):
            cell[0] = value

    # -- differentiating ------------------------------------------------------------------------
    def connection_pattern(self, node):
        """Per outer input, the outer outputs it reaches: through the inner graph, and through
        every state it feeds on later steps (to a fixed point). n_steps changes how many
        values there are, not what they are: not connected."""
        slots = self.inner_slots()
        reads = _outputs_reading(self.inner_inputs, self.inner_outputs)
        # the inner inputs that inner output k is fed back into on the next step
        feeds = {k: [s for s, slot in enumerate(slots) if slot[0] == "out" and slot[1] == k]
                 for k in range(self.layout.n_outputs)}
        feeds.update({self.layout.n_outputs + j: [slots.index(("shared", j, None))] for j in range(self.layout.n_shared)})
        rows = []
        for outer_slots in self._outer_input_slots():
            reached, todo = set(), list(outer_slots)
            while todo:
                for k in reads[todo.pop()] - reached:
                    reached.add(k)
                    todo += feeds.get(k, [])
            rows.append([k in reached for k in range(len(node.outputs))])
        return rows

    def _outer_input_slots(self) -> list[list[int]]:
        """Per outer input, the inner inputs (by position) it supplies."""
        lay, slots = self.layout, self.inner_slots()
        recurrent = [o for o, taps in enumerate(lay.out_taps) if taps]
        groups = ([[]] if lay.has_n_steps else []) + [("seq", i) for i in range(len(lay.seq_taps))]
        groups += [("out", o) for o in recurrent] + [("shared", j) for j in range(lay.n_shared)]
        groups += [("invariant", j) for j in range(lay.n_invariant)]
        return [g if isinstance(g, list) else [s for s, slot in enumerate(slots) if slot[:2] == g] for g in groups]

    def L_op(self, inputs, outputs, output_grads):
        """Reverse mode through the steps that ran (``ScanGrad``). With ``until``, as in
        PyTensor, the number of steps is a fixed count for the derivative: the stop condition
        moves no value by an infinitesimal change."""
        from_outputs = [et.cast(g, o.dtype) if g is not None and isinstance(g.type, TensorType)
                        and isinstance(o.type, TensorType) and g.dtype != o.dtype else g
                        for g, o in zip(output_grads, outputs)]
        # an output that is not a tensor (a random generator) has no cotangent; ScanGrad never
        # reads that slot, and the output itself holds it
        cotangents = [o if not isinstance(o.type, TensorType) else
                      et.zeros_like(o) if g is None or isinstance(g.type, DisconnectedType) else g
                      for g, o in zip(from_outputs, outputs)]
        grad_op = ScanGrad(self)
        undefined = self._step_without_gradient(grad_op)
        if undefined is not None:
            return [grad_undefined(self, i, x, undefined) if grad_op.differentiable(i, x) else disconnected()
                    for i, x in enumerate(inputs)]
        grads = iter(grad_op(*inputs, *outputs, *cotangents, return_list=True))
        return [next(grads) if grad_op.differentiable(i, x) else disconnected() for i, x in enumerate(inputs)]

    @staticmethod
    def _step_without_gradient(grad_op) -> str | None:
        """Why the step has no gradient (an op in it has none, or an undefined one), or None."""
        if not grad_op.float_slots() or not any(is_float(o.type) for o in grad_op.scan.inner_outputs):
            return None
        try:
            grad_op.vjp_graph()
        except (NotImplementedError, NullTypeGradError) as err:
            return f"the gradient of its step is undefined: {err}"
        return None

