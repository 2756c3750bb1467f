"""Small float64 sums, means and softmaxes in Numba, adding in NumPy's own order (optional,
like ``numba_kernels.py``).

On 10 elements ``np.add.reduce(x, axis=(0,)) / np.intp(n)`` costs about 1.4 us, nearly all
of it NumPy's dispatch, and a gradient graph has several such reductions; one call of a
compiled loop costs about 0.25 us.  The loops below add in the order NumPy 2 does on a
C-contiguous float64 array, so the values are NumPy's to the last bit, NaN and inf included
(``tests/exec/test_numba_reductions.py`` compares them on random shapes and values):

- a reduction over all axes, and each row of a reduction over the last axis of a matrix:
  NumPy's pairwise sum (``pairwise_sum`` in its ``loops_utils.h``) from 0.0: fewer than 8
  elements one after the other, up to 128 in 8 running sums, more split in two halves;
- a reduction over the first axis of a matrix: row after row into the running sums,
  starting from 0.0 (a matrix of one column is one contiguous run: pairwise).

A mean is that sum divided by the count, as ``np.mean`` of float64 divides.  Anything else
(other dtypes and axes, views that are not C-contiguous, empty or large arrays) keeps the
NumPy call; so does a node until it has run ``HOT_CALLS`` times, so that cold compiles do not
wait for Numba (compiled once per process, then read from Numba's disk cache).
"""

from __future__ import annotations

import math

import numpy as np

from eqgraph.exec import numba_kernels
from eqgraph.exec.numba_kernels import numba

#: at most this many elements go to each kind of loop: above it NumPy's vectorized sums are as
#: fast and the fixed cost of its call no longer matters.  Measured (one run, best of 5, us,
#: Numba vs NumPy; matrices of 8 columns): over all axes 0.31 vs 0.90 at 10 elements, 0.83 vs
#: 1.19 at 1,000, 2.22 vs 1.87 at 4,096; rows 1.13 vs 1.12 at 100, 5.35 vs 3.34 at 1,000;
#: columns 2.82 vs 3.18 at 1,000, 9.50 vs 9.90 at 4,096, 58 vs 48 at 16,384
SMALL = {"whole": 2048, "rows": 128, "columns": 1024, "softmax": 512}


def _block(a, start, n):
    """NumPy's ``pairwise_sum`` of ``a[start:start + n]`` for ``n <= 128``: fewer than 8
    elements one after the other, else 8 running sums added in a tree, then the rest.
    Indexed by unsigned integers, which Numba does not test for wrapping around as it tests
    signed ones (2.2x slower that way, and slower than NumPy's own loop: 39 against 18 us
    for 1e5 float64 in blocks of 128)."""
    s = np.uint64(start)
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[s + np.uint64(i)]
        return res
    r0, r1, r2, r3 = a[s], a[s + np.uint64(1)], a[s + np.uint64(2)], a[s + np.uint64(3)]
    r4, r5, r6, r7 = a[s + np.uint64(4)], a[s + np.uint64(5)], a[s + np.uint64(6)], a[s + np.uint64(7)]
    end = n - n % 8
    for j in range(8, end, 8):
        i = s + np.uint64(j)
        r0 += a[i]
        r1 += a[i + np.uint64(1)]
        r2 += a[i + np.uint64(2)]
        r3 += a[i + np.uint64(3)]
        r4 += a[i + np.uint64(4)]
        r5 += a[i + np.uint64(5)]
        r6 += a[i + np.uint64(6)]
        r7 += a[i + np.uint64(7)]
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for j in range(end, n):
        res += a[s + np.uint64(j)]
    return res


def _pairwise_plan(n):
    """The additions of NumPy's ``pairwise_sum`` of ``n`` elements (``n > 128``), in its order:
    a positive entry is a leaf, that many elements summed by ``block`` (the next ones, left to
    right); a 0 adds the last two sums (the two halves of one range, the first half a multiple
    of 8 long).  Walked with a stack instead of recursion (a recursive function read back from
    Numba's disk cache crashed); every addition is the recursion's.  Fused reductions
    (``numba_fused.py``) compute each leaf's values on the fly and add the leaves by this plan."""
    plan = np.empty(2 * (n // 64) + 8, np.int64)   # leaves hold at least 64 elements: enough room
    starts, sizes, stage = np.empty(64, np.int64), np.empty(64, np.int64), np.zeros(64, np.int64)
    top, length = 0, 0
    starts[0], sizes[0] = 0, n
    while top >= 0:
        s, m = starts[top], sizes[top]
        if m <= 128:
            plan[length] = m
            length += 1
            top -= 1
            continue
        if stage[top] == 2:          # both halves planned: add them
            plan[length] = 0
            length += 1
            top -= 1
            continue
        half = m // 2
        half -= half % 8
        stage[top] += 1
        first = stage[top] == 1
        top += 1
        starts[top], sizes[top], stage[top] = (s, half, 0) if first else (s + half, m - half, 0)
    return plan[:length]


def _fold(plan, leaf_sums):
    """The total of the leaves' sums (in order), added as ``plan`` says."""
    values = np.empty(64)
    count, leaf = 0, 0
    for step in plan:
        if step > 0:
            values[count] = leaf_sums[leaf]
            count += 1
            leaf += 1
        else:
            values[count - 2] += values[count - 1]
            count -= 1
    return values[0]


def _pairwise(a, start, n):
    """NumPy's ``pairwise_sum`` of ``a[start:start + n]`` (a 1-d array): a block of at most 128
    elements, or the leaves of ``pairwise_plan`` added by it."""
    if n <= 128:
        return block(a, start, n)
    plan = pairwise_plan(n)
    sums = np.empty(plan.shape[0])
    leaves = 0
    for step in plan:
        if step > 0:
            sums[leaves] = block(a, start, step)
            start += step
            leaves += 1
    return fold(plan, sums)


def _whole(x, mean):
    flat = x.reshape(-1)
    total = pairwise(flat, 0, flat.shape[0])
    return total / flat.shape[0] if mean else total


def _rows(x, mean):
    out, flat, n = np.empty(x.shape[0]), x.reshape(-1), x.shape[1]
    for i in range(x.shape[0]):
        out[i] = pairwise(flat, i * n, n)   # not x[i]: a view per row costs as much as its sum
    return out / n if mean else out


def _columns(x, mean):
    if x.shape[1] == 1:
        out = np.empty(1)
        out[0] = pairwise(x.reshape(-1), 0, x.shape[0])
    else:
        out = np.zeros(x.shape[1])
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                out[j] += x[i, j]
    return out / x.shape[0] if mean else out


def _rows_kept(x, mean):
    return rows(x, mean).reshape((x.shape[0], 1))


def _columns_kept(x, mean):
    return columns(x, mean).reshape((1, x.shape[1]))


def _softmax_rows(x, log):
    """``Softmax.perform`` (or its log) along the rows of a float64 matrix: the row's maximum
    (NaN if any is), subtracted; the exponentials summed in NumPy's order.  ``math.exp`` and
    ``math.log`` are the C library's, within an ulp of NumPy's SIMD loops, not always equal."""
    out = np.empty(x.shape)
    for i in range(x.shape[0]):
        top = x[i, 0]
        for j in range(1, x.shape[1]):
            v = x[i, j]
            if not (top >= v or top != top):   # np.maximum: NaN wins
                top = v
        for j in range(x.shape[1]):
            out[i, j] = math.exp(x[i, j] - top)
        total = pairwise(out.reshape(-1), i * x.shape[1], x.shape[1])
        if log:
            shift = math.log(total)
            for j in range(x.shape[1]):
                out[i, j] = (x[i, j] - top) - shift
        else:
            for j in range(x.shape[1]):
                out[i, j] = out[i, j] / total
    return out


def _softmax_vector(x, log):
    return softmax_rows(x.reshape((1, x.shape[0])), log).reshape(x.shape[0])


if numba is not None:  # compiled on first call (Numba is lazy), cached on disk
    _njit = numba.njit(cache=True, error_model="numpy")   # 0/0 is NaN, as NumPy's
    block, pairwise_plan, fold = _njit(_block), _njit(_pairwise_plan), _njit(_fold)
    pairwise = _njit(_pairwise)
    rows, columns, softmax_rows = _njit(_rows), _njit(_columns), _njit(_softmax_rows)
    KERNELS = {("whole", False): _njit(_whole), ("rows", False): rows, ("rows", True): _njit(_rows_kept),
               ("columns", False): columns, ("columns", True): _njit(_columns_kept),
               ("softmax", 2): softmax_rows, ("softmax", 1): _njit(_softmax_vector)}
else:
    KERNELS = {}


def reduction_kind(name: str, in_dtype: str, out_dtype: str, ndim: int, axis, keepdims: bool):
    """``(kind, keepdims)``, the key in ``KERNELS`` of the kernel that computes
    ``Reduce{name, axis, keepdims}`` of a C-contiguous array, or None where there is none
    (or Numba is missing)."""
    if numba is None or name not in ("sum", "mean") or in_dtype != "float64" or out_dtype != "float64":
        return None
    axis = tuple(sorted(axis))
    if ndim > 0 and axis == tuple(range(ndim)) and not keepdims:
        return ("whole", False)
    if ndim == 2 and axis in ((0,), (1,)):
        return ("columns" if axis == (0,) else "rows", bool(keepdims))
    return None


def softmax_kind(in_dtype: str, out_dtype: str, ndim: int, axis: int):
    """The key in ``KERNELS`` of the kernel computing ``Softmax{axis}`` (or its log), or None."""
    if numba is None or in_dtype != "float64" or out_dtype != "float64" or axis != ndim - 1 or ndim not in (1, 2):
        return None
    return ("softmax", ndim)


def tiered_loop(kind, numpy_run, rebind):
    """``run(x, mean)``: ``numpy_run(x)`` for the first ``numba_kernels.HOT_CALLS`` calls; then ``rebind``
    gets the kernel (same arguments), which the program calls from then on."""
    calls = 0

    def run(x, mean):
        nonlocal calls
        calls += 1
        if calls == numba_kernels.HOT_CALLS:
            rebind(KERNELS[kind])
        return numpy_run(x)

    return run


__all__ = ["KERNELS", "SMALL", "reduction_kind", "softmax_kind", "tiered_loop"]
