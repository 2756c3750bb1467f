"""Aesara's shorthands over ``scan``: ``map``, ``reduce``, ``foldl``, ``foldr``.

A module of their own: defined beside ``scan``, ``map`` and ``reduce`` shadowed Python's
built-ins for the builder's own code (``map(str, ...)`` there ran a scan).
"""

from __future__ import annotations

from eqgraph.loops.build import scan


def map(fn, sequences, non_sequences=None, truncate_gradient=-1, go_backwards=False, mode=None, name=None):
    """``fn`` applied to each step of ``sequences``: a scan whose outputs are not fed back."""
    return scan(fn, sequences=sequences, outputs_info=None, non_sequences=non_sequences,
                truncate_gradient=truncate_gradient, go_backwards=go_backwards, mode=mode, name=name)


def reduce(fn, sequences, outputs_info, non_sequences=None, go_backwards=False, mode=None, name=None):
    """A scan that returns only each output's last value (and the updates)."""
    outputs, updates = scan(fn, sequences=sequences, outputs_info=outputs_info, non_sequences=non_sequences,
                            go_backwards=go_backwards, mode=mode, name=name, return_list=True)
    last = [out[-1] for out in outputs]
    return (last[0] if len(last) == 1 else last), updates


def foldl(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None):
    """``reduce`` from the first step to the last."""
    return reduce(fn, sequences, outputs_info, non_sequences, go_backwards=False, mode=mode, name=name)


def foldr(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None):
    """``reduce`` from the last step to the first."""
    return reduce(fn, sequences, outputs_info, non_sequences, go_backwards=True, mode=mode, name=name)
