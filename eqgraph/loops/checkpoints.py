"""``eqgraph.scan_checkpoints``: a scan whose gradient needs less memory (Aesara's name and meaning).

A scan keeps every step's state, because its gradient reads them. Here the steps are cut into
blocks of ``save_every_N``: an outer scan runs one block per step, each block an inner scan
from the block's first state, and keeps only the state at the end of each block (the
checkpoints). The gradient of the outer scan reads those checkpoints and, block by block from
the last, runs the block's inner scan again from its checkpoint and walks back through it:
about ``n / N + N`` states held instead of ``n``, for one more forward pass.

The result, as in Aesara, holds only the checkpoints: for ``n`` steps, ``ceil(n / N)`` values
per output (the states after steps N-1, 2N-1, ..., and after the last step). Its last entry
is the last entry of the plain ``scan``; so is its gradient.
"""

from __future__ import annotations

import eqgraph.tensor as et
from eqgraph.loops.build import as_list, n_steps_variable, scan
from eqgraph.terms.basic import Constant


def scan_checkpoints(fn, sequences=(), outputs_info=None, non_sequences=(), n_steps=None, save_every_N=10,
                     padding=True, name=None):
    """Like ``scan(fn, sequences, outputs_info, non_sequences, n_steps)``, but each output holds
    only every ``save_every_N``-th state (and the last), and the gradient recomputes the rest.

    sequences : variables iterated over their first axis (no taps).
    outputs_info : per output, its initial state (fed back at tap -1, taps ``[-1]`` only) or
        None for an output that is not fed back.
    n_steps : the number of steps; without it, the shortest sequence decides.
    save_every_N : steps per block (a positive Python int).
    padding : the sequences are cut into blocks of ``save_every_N``; where their length is no
        multiple of it, pad them with zeros (the last block then runs fewer steps). With
        ``padding=False`` the number of steps must be a multiple of ``save_every_N``.

    Returns ``(outputs, updates)`` as ``scan``: each output has ``ceil(n_steps / save_every_N)``
    entries along its first axis.
    """
    if not isinstance(save_every_N, int) or isinstance(save_every_N, bool) or save_every_N < 1:
        raise ValueError(f"scan_checkpoints: save_every_N must be a positive int, got {save_every_N!r}")
    seqs = [_plain_sequence(s, i) for i, s in enumerate(as_list(sequences))]
    infos = [_plain_state(info, o) for o, info in enumerate(as_list(outputs_info))]
    non_seqs = as_list(non_sequences)
    if n_steps is None and not seqs:
        raise ValueError("scan_checkpoints needs sequences or n_steps to know how many steps to run")
    n = _n_steps(n_steps, seqs)
    size = save_every_N
    n_blocks = (n + (size - 1)) // size
    if not padding and seqs:
        _check_multiple(n_steps, seqs, size)
    # the blocks' sequences: each (n_blocks, N, ...), cut to n steps (and padded with zeros)
    blocks = [_blocked(et.as_tensor_variable(s), n, n_blocks, size, padding) for s in seqs]
    # steps per block: N, except the last, which runs what is left
    block_steps = et.minimum(size, n - et.arange(n_blocks, dtype="int64") * size)
    recurrent = [info is not None for info in infos]
    prefix = f"{name}_" if name else ""

    def block(*args):
        block_seqs, steps = args[:len(blocks)], args[len(blocks)]
        states = iter(args[len(blocks) + 1:len(blocks) + 1 + sum(recurrent)])
        inner_infos = [next(states) if fed_back else None for fed_back in recurrent] if infos else None
        outputs, updates = scan(fn, sequences=list(block_seqs), outputs_info=inner_infos,
                                non_sequences=list(args[len(blocks) + 1 + sum(recurrent):]), n_steps=steps,
                                name=f"{prefix}block", return_list=True)
        return [out[-1] for out in outputs], updates  # the checkpoint: the state at the block's end

    return scan(block, sequences=blocks + [block_steps], outputs_info=infos or None, non_sequences=non_seqs,
                n_steps=n_blocks, name=f"{prefix}checkpoints")


def _plain_sequence(seq, i: int):
    if isinstance(seq, dict):
        taps = seq.get("taps", [0])
        if list(taps) != [0]:
            raise ValueError(f"scan_checkpoints: sequences[{i}] has taps {list(taps)}; checkpointed scans read "
                             "each sequence at tap 0 only (use scan for other taps)")
        seq = seq["input"]
    return seq


def _plain_state(info, o: int):
    if isinstance(info, dict):
        taps = info.get("taps", [-1])
        if info.get("initial") is not None and list(taps) != [-1]:
            raise ValueError(f"scan_checkpoints: outputs_info[{o}] has taps {list(taps)}; a checkpoint holds one "
                             "state per output, so only tap -1 is supported (use scan for other taps)")
        return info.get("initial")
    return info


def _n_steps(n_steps, seqs):
    """The number of steps, an int64 scalar: n_steps, else the shortest sequence's length."""
    if n_steps is not None:
        return n_steps_variable(n_steps)
    lengths = [et.shape_of(et.as_tensor_variable(s))[0] for s in seqs]
    n = lengths[0]
    for length in lengths[1:]:
        n = et.minimum(n, length)
    return n


def _check_multiple(n_steps, seqs, size: int) -> None:
    """Without padding, a number of steps known when the graph is built must be a multiple of
    ``size`` (one known only at run time fails in the reshape of the sequences)."""
    if n_steps is not None:
        known = int(n_steps) if isinstance(n_steps, int) else \
            int(n_steps.data) if isinstance(n_steps, Constant) else None
    else:
        lengths = [et.as_tensor_variable(s).type.shape[0] for s in seqs]
        known = None if None in lengths else min(lengths)
    if known is not None and known % size:
        raise ValueError(f"scan_checkpoints(padding=False): {known} steps are no multiple of "
                         f"save_every_N={size}; pass padding=True, or a multiple")


def _blocked(seq, n, n_blocks, size: int, padding: bool):
    """``seq[:n]``, zero-padded to ``n_blocks * size`` entries, as ``(n_blocks, size, ...)``;
    without padding, a length that is no multiple of ``size`` fails in the reshape."""
    if seq.ndim < 1:
        raise ValueError(f"scan_checkpoints: sequence {seq} (type {seq.type}) is a scalar; a sequence is "
                         "iterated over its first axis")
    rest = [et.shape_of(seq)[k] for k in range(1, seq.ndim)]
    cut = seq[:n]
    if padding:
        cut = et.concatenate([cut, et.zeros([n_blocks * size - n, *rest], dtype=seq.dtype)])
    return et.reshape(cut, [n_blocks, size, *rest])
