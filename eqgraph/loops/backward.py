"""Reverse mode through a scan, written as another scan: what second derivatives differentiate.

A scan's gradient is computed by ``ScanGrad`` (``grad.py``), a numeric walk that keeps one
accumulator per loop-invariant input. Its own gradient (``ScanGrad.L_op``) differentiates
the same backward pass written symbolically by ``backward_scan``: a second ``Scan`` node that
walks the forward steps from the last to the first. Because that is an ordinary scan whose
inner graph is the step's vector-Jacobian product (derived by ``eqgraph.grad``),
differentiating it again is the same construction one level up: ``grad`` of a gradient,
``hessian`` and ``jacobian`` of a loss computed through a loop work to any order. (Aesara
builds its scan gradient as a scan too.) The symbolic form is not the first derivative's
own, because a scan keeps every step's value of its states: summing the gradient of a
weight matrix as a state would store it once per step.

The backward loop, at forward step t:

- its sequences are what forward step t read (a slice of each sequence, or of the history
  of each fed-back output: initial entries then the forward outputs, one entry per step),
  and the cotangent of each output at step t;
- per fed-back output with taps down to ``-h``, a state holds the ``h`` pending cotangents:
  what later steps sent back to the values at steps t-h+1 .. t. The last of them completes
  the cotangent of step t's output; the vector-Jacobian product adds step t's contributions
  (its tap ``-k`` to entry ``h - k``) and the window moves down by one. After step 0 the
  window holds the gradient of the initial entries;
- per floating-point loop-invariant input, a state sums the gradient over the steps;
- per floating-point sequence slot, an output (not fed back) is that step's gradient, which
  the outer graph then adds into the sequence's gradient at the entries the step read.

Not for loops that update shared variables (their values between steps are no outputs) or
truncate their gradient: ``ScanGrad.L_op`` refuses those.
"""

from __future__ import annotations

import eqgraph.tensor as et
from eqgraph.grad.driver import grad
from eqgraph.loops.layout import Layout
from eqgraph.tensor.type import TensorType
from eqgraph.terms.graph import clone_replace


def is_float(var_type) -> bool:
    return isinstance(var_type, TensorType) and var_type.dtype.startswith(("float", "complex"))


class BackwardStep:
    """The backward loop's inner graph for the forward ``scan`` op: its inputs, outputs and
    layout, and which forward slots and outputs they stand for."""

    def __init__(self, scan):
        lay = scan.layout
        self.floats = [o for o, out in enumerate(scan.inner_outputs) if is_float(out.type)]
        by_slot = list(zip(scan.inner_slots(), scan.inner_inputs))
        # what each forward step reads from outside: a sequence entry or a past output
        self.step_slots = [(slot, var) for slot, var in by_slot if slot[0] in ("seq", "out")]
        inv_vars = [var for slot, var in by_slot if slot[0] == "invariant"]
        self.windowed = [o for o in self.floats if lay.out_taps[o]]
        self.float_inv = [j for j, var in enumerate(inv_vars) if is_float(var.type)]
        self.float_seq = [k for k, (slot, var) in enumerate(self.step_slots)
                          if slot[0] == "seq" and is_float(var.type)]

        # inner inputs, in Layout order: sequences (step values, cotangents), states, invariants
        b_step = [var.type(var.name) for _, var in self.step_slots]
        b_ct = [scan.inner_outputs[o].type(f"d_{scan.inner_outputs[o].name or f'out{o}'}") for o in self.floats]
        state_type = {o: dict(by_slot)[("out", o, lay.out_taps[o][0])].type for o in self.windowed}
        b_window = [TensorType(state_type[o].dtype, (lay.history(o), *state_type[o].shape))(f"pending{o}")
                    for o in self.windowed]
        b_acc = [inv_vars[j].type(f"sum_d_{inv_vars[j].name or j}") for j in self.float_inv]
        b_inv = [var.type(var.name) for var in inv_vars]

        # the step's vector-Jacobian product, on the backward loop's own variables
        step_outs = clone_replace(list(scan.inner_outputs),
                                  dict(zip([var for _, var in self.step_slots] + inv_vars, b_step + b_inv)))
        pending = dict(zip(self.windowed, b_window))
        terms = [et.sum(step_outs[o] * (ct + pending[o][-1] if o in pending else ct))
                 for o, ct in zip(self.floats, b_ct)]
        cost = terms[0]
        for term in terms[1:]:
            cost = cost + term
        wrt_step = [k for k, (_, var) in enumerate(self.step_slots) if is_float(var.type)]
        grads = grad(cost, [b_step[k] for k in wrt_step] + [b_inv[j] for j in self.float_inv],
                     disconnected_inputs="ignore", return_disconnected="zero")
        g_step = dict(zip(wrt_step, grads[:len(wrt_step)]))

        new_windows = [_moved_window(lay, o, window, self.step_slots, g_step)
                       for o, window in zip(self.windowed, b_window)]
        new_accs = [acc + g for acc, g in zip(b_acc, grads[len(wrt_step):])]
        seq_grads = [g_step[k] for k in self.float_seq]
        self.inputs = b_step + b_ct + b_window + b_acc + b_inv
        self.outputs = new_windows + new_accs + seq_grads
        n_states = len(b_window) + len(b_acc)
        self.layout = Layout(seq_taps=((0,),) * (len(b_step) + len(b_ct)),
                             out_taps=((-1,),) * n_states + ((),) * len(seq_grads), n_shared=0,
                             n_invariant=len(b_inv), has_n_steps=False, go_backwards=True, truncate_gradient=-1)


def backward_scan(scan, inputs, outputs, cotangents) -> list:
    """The gradient per outer input of the forward ``scan`` node (``inputs`` -> ``outputs``),
    given a cotangent per output; None for an input with no gradient (n_steps, integers)."""
    lay = scan.layout
    _, seqs, inits, _, invariants = lay.split(inputs)
    if not any(is_float(out.type) for out in scan.inner_outputs):  # nothing differentiable flows out
        return [et.zeros_like(x) if is_float(x.type) else None for x in inputs]
    step = BackwardStep(scan)
    n = et.shape_of(outputs[step.floats[0]])[0]
    recurrent = [o for o, taps in enumerate(lay.out_taps) if taps]
    histories = {o: et.concatenate([init[:lay.history(o)], outputs[o]]) for o, init in zip(recurrent, inits)}
    # type(scan): the forward op's class, so that this module sits below op.py
    loop = type(scan)(step.inputs, step.outputs, step.layout, name=f"{scan.name or 'scan'}_grad")
    state_inits = ([et.zeros_like(histories[o][:lay.history(o)]) for o in step.windowed]
                   + [et.zeros_like(invariants[j]) for j in step.float_inv])
    results = loop(*[_per_step(lay, slot, seqs, histories, n) for slot, _ in step.step_slots],
                   *[cotangents[o] for o in step.floats], *[et.expand_dims(v, 0) for v in state_inits],
                   *invariants, return_list=True)
    n_states = len(state_inits)
    # each state's last value; every state starts at zero, so the sum of the last (at most one)
    # entry is also right after no step, where out[-1] would fail (and so would its gradient)
    last = [et.sum(out[-1:], axis=0) for out in results[:n_states]]
    init_grads = {o: et.set_subtensor(et.zeros_like(inits[recurrent.index(o)])[:lay.history(o)], g)
                  for o, g in zip(step.windowed, last)}
    inv_grads = dict(zip(step.float_inv, last[len(step.windowed):]))
    seq_g = _sequence_grads(lay, seqs, [step.step_slots[k][0] for k in step.float_seq], results[n_states:], n)

    result = [None] if lay.has_n_steps else []
    result += [seq_g.get(i, et.zeros_like(x) if is_float(x.type) else None) for i, x in enumerate(seqs)]
    result += [init_grads.get(o, et.zeros_like(init) if is_float(init.type) else None)
               for o, init in zip(recurrent, inits)]
    result += [inv_grads.get(j) for j in range(len(invariants))]
    # a gradient has its input's type: its dtype, and what the input's type knows statically
    # (the one entry of an expanded initial state, say) that the gradient's graph may not
    return [g if g is None else et.specify_shape(et.cast(g, x.dtype) if g.dtype != x.dtype else g, x.type.shape)
            for g, x in zip(result, inputs)]


def _moved_window(lay, o: int, window, step_slots, g_step):
    """Output ``o``'s pending cotangents for the step before: each entry moves down by one
    (the last was consumed by this step), plus this step's contributions at its taps."""
    h = lay.history(o)
    added = {}
    for k, ((kind, i, tap), _) in enumerate(step_slots):
        if kind == "out" and i == o and k in g_step:
            j = h + tap
            added[j] = g_step[k] if j not in added else added[j] + g_step[k]
    entries = []
    for j in range(h):
        carried = window[j - 1] if j else None
        if j in added:
            entries.append(added[j] if carried is None else carried + added[j])
        else:
            entries.append(carried if carried is not None else et.zeros_like(window[0]))
    return et.stack(entries)


def _first_read(lay, i: int, tap: int) -> int:
    """Step t reads sequence ``i`` at ``tap`` from entry ``first + t`` of the sequence, or of
    the reversed sequence when the loop goes backwards (``Layout.seq_index``)."""
    if lay.go_backwards:  # entry len - 1 - top + tap - t of the sequence as given
        return max(max(lay.seq_taps[i]), 0) - tap
    return tap - min(min(lay.seq_taps[i]), 0)


def _per_step(lay, slot, seqs, histories, n):
    """What forward step t read at ``slot``, for t = 0 .. n-1, stacked along a first axis."""
    kind, i, tap = slot
    if kind == "out":
        h = lay.history(i)
        return histories[i][h + tap:h + tap + n]
    first = _first_read(lay, i, tap)
    return (seqs[i][::-1] if lay.go_backwards else seqs[i])[first:first + n]


def _sequence_grads(lay, seqs, slots, step_grads, n) -> dict:
    """Per sequence, its gradient: each slot's per-step gradients added at the entries read."""
    grads = {}
    for slot, computed in zip(slots, step_grads):
        _, i, tap = slot
        # after no step an output not fed back has no known shape (Scan gives 0 for its unknown
        # axes): give it the shape of what the steps read; the backward loop ran from the
        # last step to the first
        by_step = et.reshape(computed, et.shape_of(_per_step(lay, slot, seqs, {}, n)))[::-1]
        first = _first_read(lay, i, tap)
        g = grads.get(i, et.zeros_like(seqs[i]))  # reversed when going backwards: turned back below
        grads[i] = et.inc_subtensor(g[first:first + n], by_step)
    return {i: g[::-1] if lay.go_backwards else g for i, g in grads.items()}
