"""The whole Numba function's forms of the reductions ``numba_reductions`` has no loop for
(``numba_translate_basic._reduce`` hands it these nodes):

- ``logsumexp`` over a vector or the rows of a matrix: the steps of the op's ``perform`` (the
  maximum, 0 where it is not finite, the sum of the shifted exponentials, its log plus the
  shift), the sum added in NumPy's pairwise order by ``numba_reductions``' loops, so the values
  are the program's;
- maxima and minima of float64 and int64 values, sums and products of int64 and bool values,
  over any axes of a vector or a matrix: their results do not depend on the order (a NaN wins,
  as in NumPy; integers wrap), so a plain loop gives NumPy's.
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


_ORDERLESS = {"sum": 0, "prod": 1, "max": 2, "min": 3}


def orderless(w, node):
    """``Reduce`` of a vector or a matrix whose result does not depend on the order, or None."""
    op, (x,), out = node.op, node.inputs, node.outputs[0]
    floats = x.dtype == out.dtype == "float64" and op.name in ("max", "min")
    integers = x.dtype in ("int64", "bool") and out.dtype == "int64" and op.name in _ORDERLESS
    if not (floats or integers) or x.ndim not in (1, 2) or not op.axis:
        return None
    name, axes = w.value(x), tuple(sorted(op.axis))
    if axes == tuple(range(x.ndim)):   # every axis: one row of every element
        rows, kept = f"{name}.reshape((1, {name}.size))" if x.ndim == 2 else f"{name}.reshape((1, {name}.shape[0]))", \
            f"({'1, ' * x.ndim})"
    else:   # one axis of a matrix: its lines as rows
        rows = name if axes == (1,) else f"{name}.T"
        kept = f"({name}.shape[0], 1)" if axes == (1,) else f"(1, {name}.shape[1])"
    value = f"reduce_rows(np.ascontiguousarray({rows}), {_ORDERLESS[op.name]}, np.zeros(1, dtype=np.{out.dtype}))"
    if op.keepdims:
        value = f"{value}.reshape({kept})"
    elif out.ndim == 0:
        value = f"{value}[0]"
    return [f"{w.define(out)} = {value}"]


HELPERS = ("logsumexp_rows", "reduce_rows")

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

    @numba.njit(cache=True, error_model="numpy")
    def reduce_rows(x, kind, like):
        """The sum (kind 0), product (1), maximum (2) or minimum (3) of each row of a C-contiguous
        matrix, in the dtype of ``like`` (NumPy's ValueError for the extremes of empty rows)."""
        out = np.empty(x.shape[0], dtype=like.dtype)
        if kind >= 2 and x.shape[1] == 0:
            raise ValueError("zero-size array to reduction operation which has no identity")
        for i in range(x.shape[0]):
            if kind == 0:
                acc = like[0]
            elif kind == 1:
                acc = like[0] + 1
            else:
                acc = x[i, 0]
            for j in range(x.shape[1]):
                v = x[i, j]
                if kind == 0:
                    acc += v
                elif kind == 1:
                    acc *= v
                elif kind == 2:
                    acc = acc if (acc >= v or acc != acc) else v   # NumPy's maximum: a NaN wins
                else:
                    acc = acc if (acc <= v or acc != acc) else v
            out[i] = acc
        return out
else:
    logsumexp_rows = reduce_rows = None
