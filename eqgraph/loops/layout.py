"""``Layout``: how a scan's outer and inner inputs and outputs line up (taps, states,
direction). A module of its own so that the forward op (``op.py``) and the backward pass
built as a scan (``backward.py``) both read it without importing each other."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Layout:
    """How the outer and inner inputs and outputs of a scan line up."""

    seq_taps: tuple      # per sequence, the taps it is read at (step t reads seq[t + tap - lowest])
    out_taps: tuple      # per output, the (negative) taps it is fed back at; () if not fed back
    n_shared: int        # shared variables updated in the loop (a state; the last value is returned)
    n_invariant: int     # loop-invariant inputs (non_sequences and what was pulled out)
    has_n_steps: bool    # whether n_steps is the first outer input
    go_backwards: bool
    truncate_gradient: int

    @property
    def n_outputs(self) -> int:
        return len(self.out_taps)

    def seq_span(self, i: int) -> int:
        """Entries of sequence ``i`` beyond the number of steps."""
        return max(max(self.seq_taps[i]), 0) - min(min(self.seq_taps[i]), 0)

    def seq_index(self, i: int, t: int, tap: int, length: int) -> int:
        """The entry of sequence ``i`` (of ``length`` entries) that step ``t`` reads at ``tap``.

        As in Aesara and PyTensor: each tap's slice is cut from the sequence in its own order
        (``x[tap - min(taps, 0):]``, cut to the same length), and going backwards reverses those
        slices; so tap +1 is always the entry after tap 0 in the sequence as given.
        """
        if self.go_backwards:
            return length - 1 - max(max(self.seq_taps[i]), 0) + tap - t
        return t + tap - min(min(self.seq_taps[i]), 0)

    def history(self, o: int) -> int:
        """Initial entries that output ``o`` needs (0 if it is not fed back)."""
        return -min(self.out_taps[o]) if self.out_taps[o] else 0

    def split(self, outer: list) -> tuple:
        """(n_steps or None, sequences, initial states, shared values, invariants)."""
        outer = list(outer)
        n_steps = outer.pop(0) if self.has_n_steps else None
        n_seq, n_rec = len(self.seq_taps), sum(1 for taps in self.out_taps if taps)
        seqs, outer = outer[:n_seq], outer[n_seq:]
        inits, outer = outer[:n_rec], outer[n_rec:]
        shared, invariants = outer[:self.n_shared], outer[self.n_shared:]
        return n_steps, seqs, inits, shared, invariants


@dataclass(frozen=True)
class ScanInfo:
    """A scan node's layout in PyTensor's words (``Scan.info``).

    Sequences, then the outputs by how they are fed back: mit-sot (taps other than ``[-1]``),
    sit-sot (tap ``-1``), nit-sot (not fed back), and untraced states (a state whose value
    after the last step alone is returned: a random generator in ``outputs_info``, or a shared
    variable the loop updates); then the non-sequences (everything loop-invariant the step
    reads). Unlike PyTensor's node, eqgraph's takes ``n_steps`` only where it was given
    (``has_n_steps``), one outer input per sequence whatever its taps (``seq_in_slices``), none
    for a nit-sot output, and keeps an ``until`` condition beside its inner outputs
    (``Scan.until``), not among them; the totals count eqgraph's node and op.
    """

    n_seqs: int
    seq_in_slices: tuple
    mit_sot_in_slices: tuple
    sit_sot_in_slices: tuple
    n_nit_sot: int
    n_untraced_sit_sot: int
    n_non_seqs: int
    as_while: bool
    has_n_steps: bool

    @classmethod
    def of(cls, layout: Layout, as_while: bool) -> ScanInfo:
        fed_back = [taps for taps in layout.out_taps if taps]
        return cls(n_seqs=len(layout.seq_taps), seq_in_slices=tuple(layout.seq_taps),
                   mit_sot_in_slices=tuple(t for t in fed_back if t != (-1,)),
                   sit_sot_in_slices=tuple(t for t in fed_back if t == (-1,)),
                   n_nit_sot=sum(1 for taps in layout.out_taps if not taps),
                   n_untraced_sit_sot=layout.n_shared, n_non_seqs=layout.n_invariant,
                   as_while=as_while, has_n_steps=layout.has_n_steps)

    @property
    def n_mit_sot(self) -> int:
        return len(self.mit_sot_in_slices)

    @property
    def n_sit_sot(self) -> int:
        return len(self.sit_sot_in_slices)

    @property
    def n_outer_inputs(self) -> int:
        return (int(self.has_n_steps) + self.n_seqs + self.n_mit_sot + self.n_sit_sot
                + self.n_untraced_sit_sot + self.n_non_seqs)

    @property
    def n_outer_outputs(self) -> int:
        return self.n_mit_sot + self.n_sit_sot + self.n_nit_sot + self.n_untraced_sit_sot

    @property
    def n_inner_inputs(self) -> int:
        taps = sum(map(len, self.seq_in_slices)) + sum(map(len, self.mit_sot_in_slices))
        return taps + self.n_sit_sot + self.n_untraced_sit_sot + self.n_non_seqs

    @property
    def n_inner_outputs(self) -> int:
        return self.n_outer_outputs
