"""Matrices built from other matrices: ``block_diag`` (SciPy's, batched over the leading axes as
PyTensor's is) and ``matrix_dot`` (a chain of ``dot``). Both are compositions of ordinary ops,
so their gradients and rewrites come from those ops."""

from __future__ import annotations

import functools

import numpy as np

from eqgraph.tensor.alloc import zeros, zeros_like
from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.tensor.elemwise import cast
from eqgraph.tensor.join import concatenate
from eqgraph.tensor.math import dot
from eqgraph.tensor.shape import shape_of


def _size(x, axis: int):
    """``x``'s size along ``axis``: an int where it is known statically, so results keep it."""
    known = x.type.shape[axis]
    return known if known is not None else shape_of(x)[axis]


def _total(sizes):
    return functools.reduce(lambda a, b: a + b, sizes)


def block_diag(*matrices):
    """``scipy.linalg.block_diag``: the matrices down the diagonal of one matrix, zeros elsewhere;
    the leading axes of each input are a batch, broadcast together (PyTensor's)."""
    matrices = [as_tensor_variable(m) for m in matrices]
    for i, m in enumerate(matrices):
        if m.ndim < 2:
            raise ValueError(f"block_diag: matrices[{i}] ({m}, of type {m.type}) must have at least 2 dimensions")
    dtype = np.result_type(*[m.dtype for m in matrices]).name
    ndim = max(m.ndim for m in matrices)
    corner = (slice(None),) * (ndim - 2) + (slice(0, 1), slice(0, 1))
    # zeros of the broadcast batch shape (then 1, 1): adding it broadcasts each block's batch
    batch = _total([zeros_like(m[corner[-m.ndim:]], dtype=dtype) for m in matrices])
    blocks = [cast(m, dtype) + batch for m in matrices]
    batch_shape = [_size(batch, a) for a in range(ndim - 2)]
    rows, cols = [_size(b, -2) for b in blocks], [_size(b, -1) for b in blocks]
    out_rows = []
    for i, block in enumerate(blocks):
        left, right = cols[:i], cols[i + 1:]
        parts = ([zeros(batch_shape + [rows[i], _total(left)], dtype)] if left else []) + [block] + \
            ([zeros(batch_shape + [rows[i], _total(right)], dtype)] if right else [])
        out_rows.append(concatenate(parts, axis=-1))
    return concatenate(out_rows, axis=-2)


def matrix_dot(*matrices):
    """``matrices[0] @ matrices[1] @ ...`` as a chain of ``dot`` (PyTensor's ``matrix_dot``)."""
    if not matrices:
        raise TypeError("matrix_dot: give at least one matrix")
    return functools.reduce(dot, matrices)
