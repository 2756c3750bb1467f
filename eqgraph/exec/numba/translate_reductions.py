"""The whole Numba function's forms of the reductions ``numba_reductions`` has no loop for
(``numba_translate_basic._reduce`` hands it these nodes):

- ``logsumexp`` over a vector or the rows of a matrix: the steps of the op's ``perform`` (the
  maximum, 0 where it is not finite, the sum of the shifted exponentials, its log plus the
  shift), the sum added in NumPy's pairwise order by ``numba_reductions``' loops, so the values
  are the program's;
- maxima and minima of any dtype, sums and products of integers and booleans, ``any`` and
  ``all``, over any axes of any array: their results do not depend on the order (a NaN wins, as
  in NumPy; integers wrap), so a plain loop over the rows of a transposed copy gives NumPy's;
- ``argmax`` and ``argmin`` over one axis or all of them (the first extreme, or the first NaN);
- float64 sums and means over the last axes, the first axes or a run of axes between them of
  any array: NumPy's iterator makes those a pairwise sum per row, or running sums row after row
  (per element of the leading axes), which ``numba_reductions``' loops compute.  Over other sets
  of axes NumPy mixes the two; those nodes stay Python calls;
- float products over any axes: NumPy multiplies one element after the other, in C order.

The float sums and products read their array in C order: ``_reduce`` hands them only values
that NumPy lays out so (``Writer.layout``).
"""

from __future__ import annotations

import math

import numpy as np

from eqgraph.exec.numba.kernels import numba
from eqgraph.exec.numba.reductions import KERNELS, softmax_kind
from eqgraph.tensor.math import Softmax


def logsumexp(w, node):
    """``Reduce{logsumexp}`` of a float64 vector, or of a float64 matrix along its last axis."""
    op, (x,), out = node.op, node.inputs, node.outputs[0]
    if x.dtype != "float64" or out.dtype != "float64" or x.ndim not in (1, 2) or op.axis != (x.ndim - 1,):
        return None
    rows = w.value(x) if x.ndim == 2 else f"{w.value(x)}.reshape((1, {w.value(x)}.shape[0]))"
    soft = _softmax_of(w, x)
    if soft is None:
        lines, value = [], f"logsumexp_rows(np.ascontiguousarray({rows}))"
    else:   # a gradient's softmax of the same rows: their exponentials computed once, for both
        value, both = w.fresh("v"), w.fresh("v")   # "v": names the segments pass on (program._NAME)
        lines = [f"{value}, {both} = logsumexp_softmax_rows(np.ascontiguousarray({rows}), {soft.op.log})"]
        w.shared[soft] = both if x.ndim == 2 else f"{both}[0]"
    if x.ndim == 1:
        value = f"{value}[0]"
    if op.keepdims:
        value = f"np.full(1, {value})" if x.ndim == 1 else f"{value}.reshape(({w.value(x)}.shape[0], 1))"
    return [*lines, f"{w.define(out)} = {value}"]


def _softmax_of(w, x):
    """A ``Softmax`` node along the last axis of ``x`` (a float64 vector or matrix) that no
    translation has written yet, or None."""
    for client, _ in w.clients.get(x, ()):
        if client != "output" and isinstance(client.op, Softmax) and client not in w.shared \
                and client.outputs[0] not in w.names \
                and softmax_kind(x.dtype, client.outputs[0].dtype, x.ndim, client.op.axis) is not None:
            return client
    return None


_ORDERLESS = {"sum": 0, "prod": 1, "max": 2, "min": 3, "any": 4, "all": 5}


def _rows(name: str, ndim: int, axes: tuple) -> tuple[str, str, list]:
    """``(matrix, its row count, the kept axes' lengths)``: the values of ``name`` reduced over
    ``axes`` as the rows of a C-contiguous matrix, one row per element of the result, the reduced
    axes transposed to the end (a reshape where they already are)."""
    kept = [d for d in range(ndim) if d not in axes]
    lengths = [f"{name}.shape[{d}]" for d in kept]
    count = " * ".join(lengths) or "1"
    order = kept + list(axes)
    source = name if order == list(range(ndim)) else f"{name}.transpose(({''.join(f'{d}, ' for d in order)}))"
    return f"np.ascontiguousarray({source}).reshape(({count}, -1))", count, lengths


def _shaped(value: str, out, ndim: int, axes: tuple, lengths: list) -> str:
    """``value``, a vector of one element per row, in ``out``'s shape (a scalar for a 0-d one)."""
    if out.ndim == 0:
        return f"{value}[0]"
    if len(axes) == ndim and out.ndim == ndim:   # every axis kept as length 1
        return f"{value}.reshape(({'1, ' * ndim}))"
    kept = iter(lengths)
    shape = [("1" if d in axes else next(kept)) for d in range(ndim)] if out.ndim == ndim else lengths
    return f"{value}.reshape(({''.join(f'{s}, ' for s in shape)}))"


def _accumulates(name: str, x: str, out: str) -> bool:
    """Whether ``Reduce{name}`` of dtype ``x`` into ``out`` is exact in any order: the extremes of
    any values (a NaN wins, as in NumPy), sums and products of integers and booleans (integers
    wrap; NumPy's accumulator is int64 or uint64, the result cast to ``out`` wraps the same),
    ``any`` and ``all``."""
    if name in ("max", "min"):
        return x == out
    if name in ("any", "all"):
        return out == "bool"
    integers = x == "bool" or x.startswith(("int", "uint"))
    return name in ("sum", "prod") and integers and out.startswith(("int", "uint"))


def orderless(w, node):
    """``Reduce`` over any axes whose result does not depend on the order (``_accumulates``), as a
    loop over the rows of ``_rows``; or None."""
    op, (x,), out = node.op, node.inputs, node.outputs[0]
    if op.name not in _ORDERLESS or not op.axis or x.ndim == 0 or not _accumulates(op.name, x.dtype, out.dtype):
        return None
    axes = tuple(sorted(op.axis))
    rows, count, lengths = _rows(w.value(x), x.ndim, axes)
    if op.name in ("any", "all"):
        value = f"truth_rows({rows}, {op.name == 'all'})"
    else:
        value = f"reduce_rows({rows}, {_ORDERLESS[op.name]}, np.{'ones' if op.name == 'prod' else 'zeros'}(1, dtype=np.{'bool_' if out.dtype == 'bool' else out.dtype}))"
    return [f"{w.define(out)} = {_shaped(value, out, x.ndim, axes, lengths)}"]


def product(w, node):
    """A float ``prod`` over any axes: NumPy multiplies each result's elements one after the other
    in C order of the reduced axes (no pairwise order, unlike its sums), in the accumulator's
    dtype, then casts to the result's; so does ``reduce_rows`` over the rows of ``_rows``.  The
    caller sees that NumPy lays ``x`` out in C order."""
    op, (x,), out = node.op, node.inputs, node.outputs[0]
    if op.name != "prod" or not op.axis or x.ndim == 0 or x.dtype not in _FLOATS or out.dtype != x.dtype:
        return None
    acc = op.accumulator(x.dtype) or x.dtype
    if acc not in _FLOATS:
        return None
    axes = tuple(sorted(op.axis))
    rows, _, lengths = _rows(w.value(x), x.ndim, axes)
    value = f"reduce_rows({rows}, 1, np.ones(1, dtype=np.{acc}))"
    if acc != out.dtype:
        value = f"{value}.astype(np.{out.dtype})"
    return [f"{w.define(out)} = {_shaped(value, out, x.ndim, axes, lengths)}"]


_FLOATS = ("float64", "float32")


def arg_extreme(w, node):
    """``Reduce{argmax}`` or ``argmin`` over one axis or every axis (an index into the flattened
    array, C order): the first position of the extreme, a NaN's first where there is one, as
    NumPy's."""
    op, (x,), out = node.op, node.inputs, node.outputs[0]
    if op.name not in ("argmax", "argmin") or x.ndim == 0 or out.dtype != "int64" or x.dtype == "bool":
        return None
    axes = tuple(sorted(op.axis))
    rows, _, lengths = _rows(w.value(x), x.ndim, axes)
    value = f"arg_rows({rows}, {op.name == 'argmax'})"
    return [f"{w.define(out)} = {_shaped(value, out, x.ndim, axes, lengths)}"]


def summed(w, node):
    """A float64 ``sum`` or ``mean`` over the last axes of an array (each result element a row of
    ``_rows``, added in NumPy's pairwise order) or over its first axes (row after row into running
    sums, as NumPy adds over leading axes of a C-contiguous array), or over a run of axes between
    (those running sums per element of the leading axes), by ``numba_reductions``' loops; None
    over other sets of axes (NumPy's iterator mixes pairwise and running sums there)."""
    op, (x,), out = node.op, node.inputs, node.outputs[0]
    if op.name not in ("sum", "mean") or x.dtype != "float64" or out.dtype != "float64" or x.ndim == 0:
        return None
    axes, ndim = tuple(sorted(op.axis)), x.ndim
    if not axes or len(axes) == ndim:
        return None
    name = w.value(x)
    if axes == tuple(range(ndim - len(axes), ndim)):   # the last axes
        rows, _, lengths = _rows(name, ndim, axes)
        value = f"sum_nd({rows}, {op.name == 'mean'}, True)"
    elif axes == tuple(range(len(axes))):   # the first axes
        lengths = [f"{name}.shape[{d}]" for d in range(len(axes), ndim)]
        columns = f"np.ascontiguousarray({name}).reshape((-1, {' * '.join(lengths)}))"
        value = f"sum_nd({columns}, {op.name == 'mean'}, False)"
    elif axes == tuple(range(axes[0], axes[-1] + 1)):   # a run of axes in the middle
        lengths = [f"{name}.shape[{d}]" for d in range(ndim) if d not in axes]
        counts = [" * ".join(f"{name}.shape[{d}]" for d in part) for part in
                  (range(axes[0]), axes, range(axes[-1] + 1, ndim))]
        value = f"sum_middle(np.ascontiguousarray({name}).reshape(({', '.join(counts)})), {op.name == 'mean'})"
    else:
        return None
    return [f"{w.define(out)} = {_shaped(value, out, ndim, axes, lengths)}"]


HELPERS = ("logsumexp_rows", "logsumexp_softmax_rows", "reduce_rows", "truth_rows", "arg_rows", "sum_nd", "sum_middle")

if numba is not None:
    _sum_rows, _sum_columns = KERNELS[("rows", False)], KERNELS[("columns", False)]
    _softmax_rows = KERNELS[("softmax", 2)]

    @numba.njit(cache=True, error_model="numpy")
    def sum_nd(x, mean, rows):
        """The sums (or means) of the ``rows`` of a C-contiguous matrix (each added pairwise), else
        of its columns (row after row into running sums); an axis of no elements sums to 0."""
        if x.shape[1 if rows else 0] == 0:
            out = np.zeros(x.shape[0 if rows else 1])
            return out / 0.0 if mean else out
        return _sum_rows(x, mean) if rows else _sum_columns(x, mean)

    @numba.njit(cache=True, error_model="numpy")
    def sum_middle(x, mean):
        """The sums (or means) over the middle axis of a C-contiguous 3-d array, one vector per
        element of its first axis, laid end to end: each matrix ``x[i]``'s columns, as ``sum_nd``."""
        n = x.shape[2]
        out = np.empty(x.shape[0] * n)
        for i in range(x.shape[0]):
            out[i * n:(i + 1) * n] = sum_nd(x[i], mean, False)
        return out

    @numba.njit(cache=True, error_model="numpy")
    def _row_exponentials(x):
        """Per row of a C-contiguous matrix: whether its maximum (NumPy's: a NaN wins) is finite,
        the shift it gives (0 where it is not), ``exp(x - shift)`` and the row sums of that (NumPy's
        ValueError for empty rows)."""
        if x.shape[1] == 0:
            raise ValueError("zero-size array to reduction operation maximum which has no identity")
        shifts = np.empty(x.shape[0])
        finite = np.empty(x.shape[0], dtype=np.bool_)
        shifted = np.empty(x.shape)
        for i in range(x.shape[0]):
            top = x[i, 0]
            for j in range(1, x.shape[1]):
                if not (top >= x[i, j] or top != top):
                    top = x[i, j]
            finite[i] = math.isfinite(top)
            shifts[i] = top if finite[i] else 0.0
            for j in range(x.shape[1]):
                shifted[i, j] = math.exp(x[i, j] - shifts[i])
        return finite, shifts, shifted, _sum_rows(shifted, False)

    @numba.njit(cache=True, error_model="numpy")
    def logsumexp_rows(x):
        """``logsumexp`` of each row of a C-contiguous matrix."""
        _, shifts, _, sums = _row_exponentials(x)
        out = np.empty(x.shape[0])
        for i in range(x.shape[0]):
            out[i] = math.log(sums[i]) + shifts[i]
        return out

    @numba.njit(cache=True, error_model="numpy")
    def logsumexp_softmax_rows(x, log):
        """``(logsumexp_rows(x), softmax_rows(x, log))``, each exponential computed once: a row
        whose maximum is finite is shifted by it in both, so logsumexp's exponentials and sums are
        the softmax's, added in the same order; a row whose maximum is not takes the softmax's
        own form (``softmax_rows`` of that row)."""
        finite, shifts, shifted, sums = _row_exponentials(x)
        total = np.empty(x.shape[0])
        soft = np.empty(x.shape)
        for i in range(x.shape[0]):
            shift = math.log(sums[i])
            total[i] = shift + shifts[i]
            if not finite[i]:
                soft[i:i + 1] = _softmax_rows(x[i:i + 1], log)
            elif log:
                for j in range(x.shape[1]):
                    soft[i, j] = (x[i, j] - shifts[i]) - shift
            else:
                for j in range(x.shape[1]):
                    soft[i, j] = shifted[i, j] / sums[i]
        return total, soft

    @numba.njit(cache=True, error_model="numpy")
    def reduce_rows(x, kind, like):
        """The sum (kind 0), product (1), maximum (2) or minimum (3) of each row of a C-contiguous
        matrix, in the dtype of ``like``, which holds the identity of a sum or product (NumPy's
        ValueError for the extremes of empty rows).  (An identity of 1 computed here would be an
        int64, and Numba unifies int64 with uint64 as float64, which loses bits.)"""
        out = np.empty(x.shape[0], dtype=like.dtype)
        if kind >= 2 and x.shape[1] == 0:
            raise ValueError("zero-size array to reduction operation which has no identity")
        for i in range(x.shape[0]):
            if kind <= 1:
                acc = like[0]
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

    @numba.njit(cache=True, error_model="numpy")
    def truth_rows(x, every):
        """``all`` (``every``) or ``any`` of each row of a C-contiguous matrix (NaN is true)."""
        out = np.empty(x.shape[0], dtype=np.bool_)
        for i in range(x.shape[0]):
            out[i] = every
            for j in range(x.shape[1]):
                if (x[i, j] != 0) != every:
                    out[i] = not every
                    break
        return out
    @numba.njit(cache=True, error_model="numpy")
    def arg_rows(x, largest):
        """The position of the first maximum (``largest``) or minimum of each row of a C-contiguous
        matrix; a NaN's, where the row has one (NumPy's ValueError for empty rows)."""
        if x.shape[1] == 0:
            raise ValueError("attempt to get argmax of an empty sequence")
        out = np.empty(x.shape[0], dtype=np.int64)
        for i in range(x.shape[0]):
            best, at = x[i, 0], 0
            for j in range(1, x.shape[1]):
                if best != best:
                    break
                v = x[i, j]
                if v != v or (v > best if largest else v < best):
                    best, at = v, j
            out[i] = at
        return out

else:
    logsumexp_rows = reduce_rows = truth_rows = arg_rows = sum_nd = sum_middle = None
