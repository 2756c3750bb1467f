"""Reverse mode through a scan: ``ScanGrad``, the op that ``Scan.L_op`` builds.

Given the scan's outer inputs, its outer outputs and a cotangent for each of them, it returns
the gradient with respect to every floating-point outer input (sequences, initial states,
shared values, non-sequences). Each step's inner arguments are read from the forward outputs
(the history of every fed-back output) rather than computed again; a loop that updates shared
variables runs forward once more, recording them, as their values between steps are not
outputs. The walk then goes backwards over the steps calling the inner graph's
vector-Jacobian product, itself derived by ``eqgraph.grad`` and compiled by the same e-graph
compiler as the step. Per fed-back output with taps down to -h, a window of h cotangents
holds what later steps sent back to the values they read, so a step's output cotangent is
complete (its own cotangent plus what every later step that read it sent back) when the
walk reaches it; the walk holds h values per output, not one per step.

``truncate_gradient=k`` (k > 0) walks back through the last k steps only, as in Theano. A loop
that ``until`` stopped early is walked back from the last step that ran.
Second derivatives: this op's own gradient differentiates the same backward pass written as
a scan (``backward.py``); for loops that update shared variables or truncate their gradient
it is not implemented (a NullType gradient says why).
"""

from __future__ import annotations

import numpy as np

import eqgraph.tensor as et
from eqgraph.function import function
from eqgraph.grad.driver import grad
from eqgraph.loops.backward import backward_scan, is_float
from eqgraph.terms.basic import Apply, Variable
from eqgraph.terms.graph import clone_replace
from eqgraph.terms.null_type import DisconnectedType, disconnected, grad_not_implemented
from eqgraph.terms.op import Op


class ScanGrad(Op):
    """Gradients of a ``Scan`` node's floating-point inputs (see the module docstring)."""

    __props__ = ("signature",)

    def __init__(self, scan):
        self.scan = scan

    @property
    def signature(self) -> str:  # read from the scan: a loaded scan signs its graph again
        return f"grad-{self.scan.signature}"

    def __str__(self):
        return f"ScanGrad{{{self.scan.name or 'scan'}}}"

    def differentiable(self, i: int, var) -> bool:
        """Whether outer input ``i`` (``var``) gets a gradient output (n_steps never does)."""
        return not (i == 0 and self.scan.layout.has_n_steps) and is_float(var.type)

    def make_node(self, *inputs):
        """Inputs: the scan's inputs, its outputs, a cotangent per output."""
        inputs = [v if isinstance(v, Variable) else et.as_tensor_variable(v) for v in inputs]
        n_outer = len(inputs) - 2 * len(self.scan.inner_outputs)
        outputs = [x.type() for i, x in enumerate(inputs[:n_outer]) if self.differentiable(i, x)]
        return Apply(self, inputs, outputs)

    def L_op(self, inputs, outputs, output_grads):
        """Second derivatives: the gradient of the same backward pass written as a scan
        (``backward.py``), whose outputs stand in for this op's."""
        lay = self.scan.layout
        if lay.n_shared or lay.truncate_gradient != -1 or self.scan.until is not None:
            # shared values between steps are no outputs, so backward.py cannot read them; a truncated
            # gradient is no derivative, and differentiating it would truncate the walk through the
            # forward loop again: a number that matches nothing; backward.py walks n_steps, where
            # until may have stopped the loop earlier
            why = ("second derivatives through a scan that updates shared variables, truncates its gradient "
                   "or stops early (until) (its backward pass is a numeric walk only; "
                   "eqgraph/loops/backward.py writes the others as a scan)")
            return [grad_not_implemented(self, i, x, why) for i, x in enumerate(inputs)]
        # stand-ins for the inputs: partial derivatives, as if the forward outputs did not
        # depend on the forward inputs (the caller's walk adds that path through Scan.L_op)
        stand_ins = [x.type(x.name) for x in inputs]
        n_out = len(self.scan.inner_outputs)
        outer, forward, cotangents = stand_ins[:-2 * n_out], stand_ins[-2 * n_out:-n_out], stand_ins[-n_out:]
        symbolic = [g for i, (g, x) in enumerate(zip(backward_scan(self.scan, outer, forward, cotangents), outer))
                    if self.differentiable(i, x)]
        known = {s: et.cast(g, s.dtype) if g.dtype != s.dtype else g for s, g in zip(symbolic, output_grads)
                 if g is not None and not isinstance(g.type, DisconnectedType)}
        wrt = [i for i, x in enumerate(inputs) if is_float(x.type)]
        if not known:
            return [disconnected() for _ in inputs]
        grads = grad(None, [stand_ins[i] for i in wrt], known_grads=known, disconnected_inputs="ignore",
                     return_disconnected="none")
        connected = [(i, g) for i, g in zip(wrt, grads) if g is not None]
        actual = clone_replace([g for _, g in connected], dict(zip(stand_ins, inputs))) if connected else []
        by_input = {i: g for (i, _), g in zip(connected, actual)}
        return [by_input.get(i, disconnected()) for i in range(len(inputs))]

    # -- the inner graph's vector-Jacobian product -------------------------------------------
    def float_slots(self) -> list:
        """The inner inputs that get a gradient, with their slot (Scan.inner_slots)."""
        scan = self.scan
        return [(slot, var) for slot, var in zip(scan.inner_slots(), scan.inner_inputs) if is_float(var.type)]

    def vjp_graph(self) -> tuple[list, list]:
        """(inner inputs + a cotangent per floating-point inner output, a gradient per float_slots):
        built when the scan is differentiated, so that a step without a gradient is an error of
        ``grad``, not of the gradient's first call."""
        def build():
            scan = self.scan
            outs = [o for o in scan.inner_outputs if is_float(o.type)]
            cts = [o.type(f"d_{o.name or 'out'}") for o in outs]
            cost = et.sum(outs[0] * cts[0])
            for out, ct in zip(outs[1:], cts[1:]):
                cost = cost + et.sum(out * ct)
            wrt = [var for _, var in self.float_slots()]
            return scan.inner_inputs + cts, grad(cost, wrt, disconnected_inputs="ignore", return_disconnected="zero")
        return self.scan.compiled("vjp_graph", build)

    def vjp(self):
        """The compiled ``vjp_graph``."""
        def build():
            inputs, grads = self.vjp_graph()
            return function(inputs, grads, on_unused_input="ignore", name=f"{self.scan.name or 'scan'} step's gradient")
        return self.scan.compiled("vjp", build)

    # -- the backward walk ---------------------------------------------------------------------
    def perform(self, node, inputs, output_storage):
        scan, lay = self.scan, self.scan.layout
        n_out = len(scan.inner_outputs)
        outer, outputs, cotangents = inputs[:-2 * n_out], inputs[-2 * n_out:-n_out], inputs[-n_out:]
        cotangents = [np.broadcast_to(ct, np.shape(out)) if isinstance(out, np.ndarray) else None
                      for ct, out in zip(cotangents, outputs)]
        _, seqs, inits, shared, invariants = lay.split(outer)
        step_inputs, recorded = self._step_inputs(outer, outputs, seqs, inits, invariants)
        grads = [[np.zeros(np.shape(v), dtype=np.asarray(v).dtype) for v in group]
                 for group in (seqs, inits, shared, invariants)]
        seq_g, init_g, shared_g, inv_g = grads
        n = self._steps_run(outer, outputs, seqs, recorded)
        float_out = [is_float(o.type) for o in scan.inner_outputs]
        # per fed-back output with taps down to -h, the cotangents that later steps sent back
        # to the values at history positions t+1 .. t+h (initial entries are positions 0 .. h-1,
        # step t's output is h + t): the last completes step t's cotangent, and the window
        # moves down by one per step, so the walk holds h values, not one per step
        pending = {o: np.zeros((lay.history(o), *outputs[o].shape[1:]), dtype=outputs[o].dtype)
                   for o in range(lay.n_outputs) if lay.out_taps[o] and float_out[o]}
        carried = {j: np.array(cotangents[lay.n_outputs + j]) for j in range(lay.n_shared)
                   if float_out[lay.n_outputs + j]}
        slots = self.float_slots()
        stop = 0 if lay.truncate_gradient == -1 else max(0, n - lay.truncate_gradient)
        for t in reversed(range(stop, n) if slots else ()):
            out_cts = [cotangents[o][t] + pending[o][-1] if o in pending else cotangents[o][t]
                       for o in range(lay.n_outputs) if float_out[o]]
            out_cts += [carried[j] for j in sorted(carried)]
            step_grads = self.vjp()(*step_inputs(t), *out_cts)
            for window in pending.values():  # now positions t .. t+h-1
                window[1:] = window[:-1]
                window[0] = 0
            for ((kind, i, tap), _), g in zip(slots, step_grads):
                if kind == "seq":
                    seq_g[i][lay.seq_index(i, t, tap, len(seqs[i]))] += g
                elif kind == "out":
                    pending[i][lay.history(i) + tap] += g
                elif kind == "shared":
                    carried[i] = np.asarray(g)   # the state before step t: what step t - 1 produced
                else:
                    inv_g[i] += g
        recurrent = [o for o, taps in enumerate(lay.out_taps) if taps]
        for r, o in enumerate(recurrent):
            # the window now holds positions stop .. stop+h-1; those below h are initial entries
            if o in pending and stop < lay.history(o):
                init_g[r][stop:lay.history(o)] = pending[o][:lay.history(o) - stop]
        for j, value in carried.items():
            shared_g[j][...] = value
        flat = ([None] if lay.has_n_steps else []) + [g for group in grads for g in group]
        results = [g for i, (g, x) in enumerate(zip(flat, node.inputs)) if self.differentiable(i, x)]
        for cell, value in zip(output_storage, results):
            cell[0] = value

    def _steps_run(self, outer, outputs, seqs, recorded: int | None) -> int:
        """How many steps the forward loop ran: ``n_steps`` or what the sequences allow, or,
        where ``until`` stopped it, the steps recorded or the length of its outputs."""
        scan, lay = self.scan, self.scan.layout
        if scan.until is None:
            return scan.n_steps(outer[0] if lay.has_n_steps else None, seqs)
        return recorded if recorded is not None else len(outputs[0])

    def _step_inputs(self, outer, outputs, seqs, inits, invariants):
        """(t -> step t's inner arguments, the number of steps recorded or None). They are read
        from the forward outputs (the history of each fed-back output), except when the loop
        updates shared variables, whose values between steps are not outputs: then the loop
        runs again, recording."""
        scan, lay = self.scan, self.scan.layout
        if lay.n_shared:
            records = scan.run(outer, record=True)[1]
            return records.__getitem__, len(records)
        recurrent = [o for o, taps in enumerate(lay.out_taps) if taps]
        histories = [None] * lay.n_outputs
        for o, init in zip(recurrent, inits):
            histories[o] = _History(init[:lay.history(o)], outputs[o])
        return (lambda t: scan.step_inputs(t, seqs, histories, (), invariants)), None


class _History:
    """An output's initial entries, then its forward values, indexed as one array (by
    ``Scan.step_inputs``) without copying them into one."""

    def __init__(self, initial, steps):
        self.initial, self.steps = initial, steps

    def __getitem__(self, index: int):
        k = len(self.initial)
        return self.initial[index] if index < k else self.steps[index - k]
