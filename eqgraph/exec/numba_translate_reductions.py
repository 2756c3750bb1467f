"""The whole Numba function's form of ``logsumexp`` over a vector or the rows of a matrix
(``numba_program._reduce`` hands it these nodes): the steps of the op's ``perform`` (the maximum,
0 where it is not finite, the sum of the shifted exponentials, its log plus the shift), the sum
added in NumPy's pairwise order by ``numba_reductions``' loops, so the values are the program's.
"""

from __future__ import annotations

import math

import numpy as np

from eqgraph.exec.numba_kernels import numba
from eqgraph.exec.numba_reductions import KERNELS


def logsumexp(w, node):
    """``Reduce{logsumexp}`` of a float64 vector, or of a float64 matrix along its last axis."""
    op, (x,), out = node.op, node.inputs, node.outputs[0]
    if x.dtype != "float64" or out.dtype != "float64" or x.ndim not in (1, 2) or op.axis != (x.ndim - 1,):
        return None
    rows = w.value(x) if x.ndim == 2 else f"{w.value(x)}.reshape((1, {w.value(x)}.shape[0]))"
    value = f"logsumexp_rows(np.ascontiguousarray({rows}))"
    if x.ndim == 1:
        value = f"{value}[0]"
    if op.keepdims:
        value = f"np.full(1, {value})" if x.ndim == 1 else f"{value}.reshape(({w.value(x)}.shape[0], 1))"
    return [f"{w.define(out)} = {value}"]


HELPERS = ("logsumexp_rows",)

if numba is not None:
    _sum_rows = KERNELS[("rows", False)]

    @numba.njit(cache=True, error_model="numpy")
    def logsumexp_rows(x):
        """``logsumexp`` of each row of a C-contiguous matrix (NumPy's ValueError for empty rows)."""
        if x.shape[1] == 0:
            raise ValueError("zero-size array to reduction operation maximum which has no identity")
        shifts = np.empty(x.shape[0])
        shifted = np.empty(x.shape)
        for i in range(x.shape[0]):
            top = x[i, 0]
            for j in range(1, x.shape[1]):   # NumPy's maximum: a NaN wins
                if not (top >= x[i, j] or top != top):
                    top = x[i, j]
            shifts[i] = top if math.isfinite(top) else 0.0
            for j in range(x.shape[1]):
                shifted[i, j] = math.exp(x[i, j] - shifts[i])
        sums = _sum_rows(shifted, False)
        out = np.empty(x.shape[0])
        for i in range(x.shape[0]):
            out[i] = math.log(sums[i]) + shifts[i]
        return out
else:
    logsumexp_rows = None
