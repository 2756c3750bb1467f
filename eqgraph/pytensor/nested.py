"""PyTensor ops that hold another op or a graph (``Blockwise``, ``OpFromGraph``, ``Scan``): what
each becomes.

Translating them means translating what they hold, with the walk of ``convert.py``, which reads
this table and ``ops.py``'s. So an entry here is ``fn(node, inputs, walk)``, and ``walk`` (a
``Walk``) is how ``convert.py`` lends its walk: neither this module nor ``ops.py`` imports it.
"""

from __future__ import annotations

import itertools
from typing import Callable, NamedTuple

from pytensor.compile.builders import OpFromGraph
from pytensor.scan.op import Scan
from pytensor.tensor.blockwise import Blockwise

import eqgraph.tensor as et
from eqgraph.loops import scan, until
from eqgraph.tensor.blockwise import format_signature
from eqgraph.pytensor.ops import BLOCKWISE, UnsupportedOp


class Walk(NamedTuple):
    """``convert.py``'s walk, as the entries of this table use it."""

    #: ``graph(inner_inputs, inner_outputs, eqgraph inputs)`` -> the inner outputs, converted
    graph: Callable
    #: ``translation(op)`` -> ``fn(node, *eqgraph inputs)`` for any op, or None
    translation: Callable


def _inline(node, xs, walk: Walk):
    """An ``OpFromGraph``: its inner graph converted in place, reading the outer inputs."""
    return walk.graph(node.op.inner_inputs, node.op.inner_outputs, xs)


def _blockwise(node, xs, walk: Walk):
    """A ``Blockwise``: eqgraph's batched op where it has one; else, over a static batch shape, the
    core op's translation on each block, the blocks stacked back (the e-graph and the compiled
    program see every block); over batch axes of unknown size, eqgraph's ``vectorize`` of the
    core op's translation."""
    core = BLOCKWISE.get(type(node.op.core_op))
    if core is not None:
        return core(node, *xs)
    translate = walk.translation(node.op.core_op)
    if translate is None:
        raise UnsupportedOp(node.op, node)
    n = node.op.batch_ndim(node)
    batch = _batch_shape(node, n)
    if batch is None:
        return _vectorized(node, xs, translate)
    blocks = [_block(node, xs, translate, n, index) for index in itertools.product(*map(range, batch))]
    return [_stacked(outs, batch) for outs in zip(*blocks)]


def _vectorized(node, xs, translate) -> list:
    """The core op's translation vectorized over the batch axes (``et.vectorize``, whose
    ``Blockwise`` takes the batch sizes at call time). Only the inputs with batch axes are
    vectorized; the others, constants among them, are the same for every block."""
    batched = [k for k, (i, sig) in enumerate(zip(node.inputs, node.op.inputs_sig)) if i.type.ndim > len(sig)]

    def core(*core_xs):
        pt_args, eq_args = list(node.inputs), list(xs)
        for k, x in zip(batched, core_xs):
            i, sig = node.inputs[k], node.op.inputs_sig[k]
            pt_args[k] = i.type.clone(shape=i.type.shape[i.type.ndim - len(sig):])()
            eq_args[k] = x
        results = translate(node.op.core_op.make_node(*pt_args), *eq_args)
        return list(results) if isinstance(results, (list, tuple)) else [results]

    cores = [node.op.inputs_sig[k] for k in batched]
    signature = format_signature(cores, node.op.outputs_sig)
    results = et.vectorize(core, signature=signature)(*[xs[k] for k in batched])
    return list(results) if isinstance(results, (list, tuple)) else [results]


def _batch_shape(node, n: int):
    """The batch shape the inputs broadcast to, or None where a batch axis has no static size."""
    shape = [1] * n
    for i, sig in zip(node.inputs, node.op.inputs_sig):
        own = i.type.ndim - len(sig)
        for axis, size in enumerate(i.type.shape[:own], start=n - own):
            if size is None:
                return None
            shape[axis] = max(shape[axis], size)
    return tuple(shape)


def _stacked(outs, batch: tuple):
    """Block outputs (one per batch index, in C order) as one tensor of batch shape ``batch``;
    ``stack`` checks at run time that the blocks have one shape, as Blockwise requires."""
    if not batch:   # one block, no batch axes
        return outs[0]
    stacked = et.stack(list(outs))
    if len(batch) == 1:
        return stacked
    core_shape = [et.shape(outs[0])[axis] for axis in range(outs[0].ndim)]
    return et.reshape(stacked, [*batch, *core_shape], len(batch) + outs[0].ndim)


def _block(node, xs, translate, n: int, index: tuple) -> list:
    """The core op on block ``index``: each input indexed on its own batch axes (0 on an axis of
    size 1, which broadcasts), with a PyTensor node of its own so that constants read per block."""
    pt_args, eq_args = [], []
    for i, x, sig in zip(node.inputs, xs, node.op.inputs_sig):
        own = i.type.ndim - len(sig)
        at = tuple(0 if size == 1 else k for k, size in zip(index[n - own:], i.type.shape[:own]))
        pt_args.append(i[at] if at else i)
        eq_args.append(x[at] if at else x)
    results = translate(node.op.core_op.make_node(*pt_args), *eq_args)
    return list(results) if isinstance(results, (list, tuple)) else [results]


def _scan(node, xs, walk: Walk):
    """A ``Scan`` (sequences, states fed back at any taps, outputs not fed back, constants across
    steps, while loops, and the gradient scans' multiple-input-multiple-output states) as
    ``eqgraph.scan`` of its inner graph.

    PyTensor gives a fed-back state's outer input as a buffer whose first entries are the initial
    values at its taps and whose output is that buffer filled: the initial entries, then one per
    step. That is the initial entries followed by eqgraph's output, where the buffer has exactly
    one entry per step after them (a graph before PyTensor's memory-saving rewrites), which a
    check states. A multiple-input-multiple-output state (``_MitMot``), a buffer that each step
    reads and writes at its taps, is carried whole by eqgraph's scan. A while loop's last inner
    output is its condition, ``eqgraph.until``'s: both stop after the first step where it holds,
    and the outputs, buffers included, then hold the steps that ran."""
    info = node.op.info
    if info.n_untraced_sit_sot:
        raise UnsupportedOp(node.op, node, why="eqgraph converts scans without untraced states")
    n_steps, rest = xs[0], list(xs[1:])
    seqs, rest = rest[:info.n_seqs], rest[info.n_seqs:]
    mit_mots = [_MitMot(node, buffer, ins, outs, n_steps) for buffer, ins, outs in
                zip(rest, info.mit_mot_in_slices, info.mit_mot_out_slices)]
    rest = rest[len(mit_mots):]
    state_taps = [*info.mit_sot_in_slices, *info.sit_sot_in_slices]
    buffers, rest = rest[:len(state_taps)], rest[len(state_taps) + info.n_nit_sot:]
    non_seqs = rest[:info.n_non_seqs]
    initials = [_checked_initial(node, buffer, taps, n_steps) for buffer, taps in zip(buffers, state_taps)]
    # eqgraph's scan takes a state with taps [-1] as the value itself, not a buffer of one
    outputs_info = [initial[0] if tuple(taps) == (-1,) else {"initial": initial, "taps": list(taps)}
                    for initial, taps in zip(initials, state_taps)]
    sequences = [seq[:n_steps] for seq in seqs] + ([et.arange(n_steps, dtype="int64")] if mit_mots else [])
    step = _step(node, walk, info.n_seqs, mit_mots, info.as_while)
    outputs = scan(step, sequences=sequences, outputs_info=[m.buffer for m in mit_mots] + outputs_info
                   + [None] * info.n_nit_sot, non_sequences=non_seqs, n_steps=n_steps,
                   return_list=True, return_updates=False)
    filled = [m.filled(out) for m, out in zip(mit_mots, outputs)]
    outputs = outputs[len(mit_mots):]
    states = [et.concatenate([initial, out], axis=0) for initial, out in zip(initials, outputs)]
    return [*filled, *states, *outputs[len(states):]]


def _step(node, walk: Walk, n_seqs: int, mit_mots: list, as_while: bool) -> Callable:
    """The step function of ``_scan``: eqgraph's scan arguments (the sequences, then the step
    index when there are multiple-input-multiple-output states, the states, the non-sequences)
    in PyTensor's inner order, the inner graph converted, and its outputs as eqgraph's states
    (then the stop condition of a while loop)."""
    def step(*args):
        args = list(args)
        seq_args, args = args[:n_seqs], args[n_seqs:]
        if mit_mots:
            t, args = args[0], args[1:]
            buffers, args = args[:len(mit_mots)], args[len(mit_mots):]
            args = [value for m, buffer in zip(mit_mots, buffers) for value in m.read(buffer, t)] + args
        outs = list(walk.graph(node.op.inner_inputs, node.op.inner_outputs, [*seq_args, *args]))
        stop = [until(outs.pop())] if as_while else []
        written = []
        for m, buffer in zip(mit_mots, buffers if mit_mots else ()):
            written.append(m.write(buffer, t, outs[:len(m.out_taps)]))
            outs = outs[len(m.out_taps):]
        return [*written, *outs, *stop]
    return step


class _MitMot:
    """A multiple-input-multiple-output state of a (gradient) scan: PyTensor's buffer, which step
    ``t`` reads at ``t + tap - min(input taps)`` for each input tap, then writes at the same place
    for each output tap; the scan's output is the buffer after the last step. The buffer must
    reach the last step's highest place, which a check states: PyTensor's own implementations
    disagree on a shorter one (its C loop wraps around, its Python loop raises)."""

    def __init__(self, node, buffer, in_taps, out_taps, n_steps):
        self.in_taps, self.out_taps = tuple(in_taps), tuple(out_taps)
        self.start = -min(self.in_taps)
        if min(self.out_taps) + self.start < 0:
            raise UnsupportedOp(node.op, node, why=f"a multiple-input-multiple-output state writes at tap "
                                                   f"{min(self.out_taps)}, below its lowest input tap {-self.start}")
        reach = self.start + max(*self.in_taps, *self.out_taps)
        fits = et.ge(et.shape(buffer)[0], n_steps + reach)
        message = (f"{node.op}: a multiple-input-multiple-output state's buffer must hold n_steps + {reach} "
                   "entries, the places its steps read and write")
        self.buffer = et.CheckAndRaise(ValueError, message)(buffer, fits)

    def read(self, buffer, t) -> list:
        return [buffer[t + (self.start + tap)] for tap in self.in_taps]

    def write(self, buffer, t, values):
        for tap, value in zip(self.out_taps, values):
            buffer = et.set_subtensor(buffer[t + (self.start + tap)], value)
        return buffer

    def filled(self, steps):
        """The buffer after the last step, from eqgraph's per-step buffers (none for 0 steps)."""
        return et.concatenate([self.buffer[None], steps], axis=0)[-1]


def _checked_initial(node, buffer, taps, n_steps):
    """A state's initial entries, ``-min(taps)`` of them, checked to leave one entry per step."""
    first = -min(taps)
    fits = et.eq(et.shape(buffer)[0], n_steps + first)
    message = (f"{node.op}: a state's buffer must hold its {first} initial entries and one per step; "
               "eqgraph converts scans before PyTensor's memory-saving rewrites")
    return et.CheckAndRaise(ValueError, message)(buffer[:first], fits)


#: PyTensor op class -> fn(node, eqgraph inputs, walk); AllocDiag and PyMC's symbolic ops are
#: OpFromGraphs
NESTED_OPS = {
    Blockwise: _blockwise,
    OpFromGraph: _inline,
    Scan: _scan,
}


def nested_translation_of(op):
    """The entry for ``op`` (the nearest class in its MRO), or None."""
    for cls in type(op).__mro__:
        if cls in NESTED_OPS:
            return NESTED_OPS[cls]
    return None
