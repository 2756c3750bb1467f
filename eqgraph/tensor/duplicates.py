"""Which writes of an indexed assignment land: for ``x[index] = y`` with integer arrays in
``index``, a place of ``x`` named twice keeps the last write (NumPy's rule).  ``inc_subtensor(...,
ignore_duplicates=True)`` zeroes the other writes and accumulates, so that each place gets
``x + y`` once and the gradient of ``y`` reaches only the writes that land.
"""

from __future__ import annotations

import numpy as np

from eqgraph.tensor.basic import constant
from eqgraph.tensor.elemwise import ELEMWISE_OPS as E, cast
from eqgraph.tensor.dimshuffle_op import dimshuffle
from eqgraph.tensor.join import concatenate
from eqgraph.tensor.shape import flatten, reshape, shape_of
from eqgraph.tensor.sorting import argsort


def last_writes(x, idx_list, index_inputs, block_at: int, view_ndim: int):
    """A boolean mask, broadcastable to ``x[index]``, true where the element is the last one
    written to its place of ``x``; None when no place can be named twice (no integer array)."""
    arrays, booleans = _index_arrays(idx_list, index_inputs)
    if not arrays:
        return None
    if booleans:
        raise NotImplementedError("inc_subtensor(ignore_duplicates=True) with both boolean and integer "
                                  "array indices is not supported; index with integer arrays only")
    sizes = shape_of(x)
    key = None  # each write's place, as one number: the row-major position over the indexed axes
    for array, axis in arrays:
        place = E["mod"](cast(array, "int64"), sizes[axis])  # a negative index names the same place
        key = place if key is None else key * sizes[axis] + place
    flat = flatten(key)
    order = argsort(flat)  # stable: among equal places, the later write comes later
    ranked = flat[order]
    # the last of each run of equal places: the next one differs (the end is followed by -1)
    following = concatenate([ranked[1:], constant(np.array([-1], dtype="int64"))])
    last = E["neq"](ranked, following)[argsort(order)]
    mask = reshape(last, shape_of(key), ndim=key.ndim)
    after = view_ndim - block_at - key.ndim
    return dimshuffle(mask, ("x",) * block_at + tuple(range(key.ndim)) + ("x",) * after)


def _index_arrays(idx_list, index_inputs):
    """([(integer array, the axis of x it indexes)], whether a boolean array is there too)."""
    inputs = iter(index_inputs)
    arrays, booleans, axis = [], False, 0
    for entry in idx_list:
        if entry is None:
            continue
        if isinstance(entry, tuple):  # a slice; its symbolic parts are inputs
            for part in entry[1:]:
                if part == "?":
                    next(inputs)
            axis += 1
        elif entry == "?":
            next(inputs)
            axis += 1
        elif entry == "a":
            array = next(inputs)
            if array.dtype == "bool":
                booleans = True
                axis += array.ndim
            else:
                arrays.append((array, axis))
                axis += 1
        else:
            axis += 1
    return arrays, booleans
