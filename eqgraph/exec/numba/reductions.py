"""Float64 sums, means and softmaxes in Numba, adding in NumPy's own order.

On small arrays ``np.add.reduce(x, axis=(0,)) / np.intp(n)`` costs nearly all of its time in
NumPy's dispatch, and a gradient graph has several such reductions; a call of a compiled loop
costs a fraction of that.  The loops below add in the order NumPy 2 does on a
C-contiguous float64 array, so the values are NumPy's to the last bit, NaN and inf included
(``tests/exec/test_numba_reductions.py`` compares them on random shapes and values):

- a reduction over all axes, and each row of a reduction over the last axis of a matrix:
  NumPy's pairwise sum (``pairwise_sum`` in its ``loops_utils.h``) added to 0.0: fewer than 8
  elements one after the other, up to 128 in 8 running sums (one LLVM vector,
  ``simd.py``), more split in two halves;
- a reduction over the first axis of a matrix: row after row into the running sums,
  starting from 0.0 (a matrix of one column is one contiguous run: pairwise).

A mean is that sum divided by the count, as ``np.mean`` of float64 divides.  Anything else
(other dtypes and axes, views that are not C-contiguous, empty or large arrays) keeps the
NumPy call; so does a node until its loop is compiled, off the calling thread (``tiered_loop``;
once per process, then read from Numba's disk cache).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from eqgraph.exec.numba import background as numba_compile
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.exec.numba.kernels import numba

if numba is not None:
    from eqgraph.exec.numba.simd import add8, load8, tree8

#: the files whose code the compiled loops hold (kernels that call them name their ``VERSION``)
COMPILED_FROM = (Path(__file__), Path(__file__).with_name("simd.py"))
#: ``files_version`` of simd.py, written here: Numba's disk cache of the loops below is
#: keyed by this file alone, so a change of the vector type must change this file too
#: (``tests/exec/test_numba_reductions.py`` fails until it does)
SIMD_VERSION = "d1ba34a67336f6f9"
#: part of the source of every kernel that calls the loops below: one compiled against other
#: loops is not reused (their copy of the loops would answer the loops' own calls once loaded)
VERSION = numba_kernels.files_version(*COMPILED_FROM)

#: at most this many elements go to each kind of loop: above it NumPy's vectorized sums are as
#: fast (the sum waits on memory past 2 MiB) and the fixed cost of its call no longer matters;
#: sums over the first axis are running sums that NumPy vectorizes across the columns, so they
#: stay Numba's on smaller arrays only.  Softmax: Numba's scalar ``math.exp``, not the sum, loses
#: to NumPy's SIMD exp on long rows; above its bound, rows of at most ``SHORT_ROWS`` take
#: ``short_rows_softmax`` at any size
SMALL = {"whole": 262_144, "rows": 262_144, "columns": 1024, "softmax": 512, "short rows softmax": 2 ** 62}
#: longer rows keep NumPy's softmax: its reductions along a long row are SIMD loops
SHORT_ROWS = 256


def _block(a, start, n):
    """NumPy's ``pairwise_sum`` of ``a[start:start + n]`` for ``n <= 128``: fewer than 8
    elements one after the other, else 8 running sums (one ``Vec8``, ``simd.py``) added
    in a tree, then the rest.  Indexed by unsigned integers, which Numba does not test for
    wrapping around as it tests signed ones (a test per load keeps the loop from vectorizing)."""
    s = np.uint64(start)
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[s + np.uint64(i)]
        return res
    return rest(a, s, np.uint64(n), load8(a, s), np.uint64(8))


def _rest(a, s, n, sums, done):
    """The end of ``block(a, s, n)`` once its running ``sums`` hold the first ``done``
    elements (a multiple of 8)."""
    end = n - n % np.uint64(8)
    for j in range(done, end, np.uint64(8)):
        sums = add8(sums, load8(a, s + j))
    res = tree8(sums)
    for j in range(end, n):
        res += a[s + j]
    return res


def _half(n):
    """Where NumPy's ``pairwise_sum`` splits ``n > 128`` elements: half, down to a multiple of 8."""
    return n // 2 - n // 2 % 8


def _is_leaf(n):
    """Whether ``n`` elements are one leaf of ``pairwise_plan``: at most 128, or split once into
    halves of at most 128."""
    return n <= 128 or (n <= 256 and n - half(n) <= 128)


def _leaf(a, start, n):
    """``pairwise_sum`` of a leaf of ``pairwise_plan``: ``block`` of ``n <= 128`` elements, or
    the two blocks of a range split once, their add chains interleaved (one chain waits on each
    addition's latency; two overlap), then added."""
    if n <= 128:
        return block(a, start, n)
    n0 = half(n)
    n1 = n - n0
    s0, s1 = np.uint64(start), np.uint64(start + n0)
    both = np.uint64(n0 - n0 % 8)   # n0 <= n1, both at least 64
    r0, r1 = load8(a, s0), load8(a, s1)
    for j in range(np.uint64(8), both, np.uint64(8)):
        r0 = add8(r0, load8(a, s0 + j))
        r1 = add8(r1, load8(a, s1 + j))
    return rest(a, s0, np.uint64(n0), r0, both) + rest(a, s1, np.uint64(n1), r1, both)


def _pairwise_plan(n):
    """The additions of NumPy's ``pairwise_sum`` of ``n`` elements, in its order: a positive
    entry is a leaf, that many elements summed by ``leaf`` (the next ones, left to right): at
    most 128, or a range whose two halves are at most 128; a 0 adds the last two sums (the two
    halves of one range).  Walked with a stack instead of recursion (a recursive function read
    back from Numba's disk cache crashed); every addition is the recursion's.  Fused reductions
    (``fused.py``) compute each leaf's values on the fly and add the leaves by this plan."""
    plan = np.empty(2 * (n // 64) + 8, np.int64)   # leaves hold at least 64 elements: enough room
    stack = np.empty(192, np.int64)   # sizes still to plan, last first; -1: add the last two sums
    stack[0] = n
    top, length = np.uint64(1), np.uint64(0)   # unsigned: Numba tests signed indices for wrapping around
    while top > 0:
        top -= np.uint64(1)
        m = stack[top]
        if not is_leaf(m):   # split: first half, second half, add them
            stack[top] = -1
            stack[top + np.uint64(1)] = m - half(m)
            stack[top + np.uint64(2)] = half(m)
            top += np.uint64(3)
            continue
        plan[length] = max(m, 0)
        length += np.uint64(1)
    return plan[:length]


def _fold(plan, sums):
    """The total of the leaves' sums (``sums``, in order), added as ``plan`` says.  ``sums`` is
    the stack of partial totals too (never longer than the leaves read): no array to allocate,
    which cost as much as the rest for rows of a few hundred elements."""
    count, leaf = np.uint64(0), np.uint64(0)   # unsigned: Numba tests signed indices for wrapping around
    for step in plan:
        if step > 0:
            sums[count] = sums[leaf]
            count += np.uint64(1)
            leaf += np.uint64(1)
        else:
            sums[count - np.uint64(2)] += sums[count - np.uint64(1)]
            count -= np.uint64(1)
    return sums[0]


#: values a fused kernel (``fused.py``) computes into its buffer before summing them, a run
#: of whole leaves: one long loop vectorizes better than one per leaf, and the leaves' add chains
#: then overlap
GROUP = 1024


def _leaf_group(plan, first):
    """``(last, size, leaves)``: the leaves of ``plan[first:last]`` hold ``size <= GROUP``
    values together, and there are ``leaves`` of them (at least one: a leaf holds at most 256)."""
    last, size, leaves = first, 0, 0
    while last < plan.shape[0] and size + plan[last] <= GROUP:
        size += plan[last]
        leaves += plan[last] > 0
        last += 1
    return last, size, leaves


def _leaf_sums(buffer, plan, first, last, sums, count):
    """The sums of the leaves of ``plan[first:last]``, laid one after the other in ``buffer``,
    written into ``sums`` from ``count`` on."""
    at = 0
    for e in range(first, last):   # not a slice of plan: Numba's slice iterator is the slower loop
        if plan[e] > 0:
            sums[count] = leaf(buffer, at, plan[e])
            at += plan[e]
            count += 1


def _planned(a, start, plan, sums):
    """``np.add.reduce`` of ``a`` from ``start`` as ``plan`` says (0.0 plus NumPy's ``pairwise_sum``,
    as ``pairwise``), the leaves' sums written into ``sums`` (as long as ``plan``; overwritten by
    ``fold``) on the way.  ``plan`` is of a length that is not one leaf (``is_leaf``): callers sum
    a leaf directly."""
    leaves = 0
    for step in plan:
        if step > 0:
            sums[leaves] = leaf(a, start, step)
            start += step
            leaves += 1
    return 0.0 + fold(plan, sums)


def _pairwise(a, start, n):
    """``np.add.reduce`` of ``a[start:start + n]`` (a 1-d array): its identity, 0.0, plus NumPy's
    ``pairwise_sum`` (so a sum of -0.0 is 0.0, as NumPy's, where ``pairwise_sum`` alone gives
    -0.0 from 8 elements on: its running sums start from the first 8)."""
    if is_leaf(n):
        return 0.0 + leaf(a, start, n)
    plan = pairwise_plan(n)
    return planned(a, start, plan, np.empty(plan.shape[0]))


def _whole(x, mean):
    flat = x.reshape(-1)
    total = pairwise(flat, 0, flat.shape[0])
    return total / flat.shape[0] if mean else total


def _rows(x, mean):
    out, flat, n = np.empty(x.shape[0]), x.reshape(-1), x.shape[1]
    if is_leaf(n):   # not x[i]: a view per row costs as much as its sum
        for i in range(x.shape[0]):
            out[i] = 0.0 + leaf(flat, i * n, n)   # np.add.reduce starts from 0.0 (``pairwise``)
    else:
        plan = pairwise_plan(n)   # once: every row is as long
        sums = np.empty(plan.shape[0])
        for i in range(x.shape[0]):
            out[i] = planned(flat, i * n, plan, sums)
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
    ``math.log`` are the C library's, within an ulp of NumPy's SIMD loops, not always equal.
    One flat view and one plan serve every row: a view or a plan made per row costs more than
    a short row's sum."""
    out = np.empty(x.shape)
    flat, n = out.reshape(-1), x.shape[1]
    leafy = is_leaf(n)
    plan = pairwise_plan(1 if leafy else n)
    sums = np.empty(plan.shape[0])
    for i in range(x.shape[0]):
        top = row_max(x, i)
        for j in range(n):
            out[i, j] = math.exp(x[i, j] - top)
        total = 0.0 + leaf(flat, i * n, n) if leafy else planned(flat, i * n, plan, sums)
        if log:
            shift = math.log(total)
            for j in range(n):
                out[i, j] = (x[i, j] - top) - shift
        else:
            for j in range(n):
                out[i, j] = out[i, j] / total
    return out


def _softmax_vector(x, log):
    return softmax_rows(x.reshape((1, x.shape[0])), log).reshape(x.shape[0])


def _row_max(x, i):
    """The maximum of row ``i`` of ``x``, as ``np.maximum.reduce`` finds it: NaN wins."""
    top = x[i, 0]
    for j in range(1, x.shape[1]):
        v = x[i, j]
        if not (top >= v or top != top):
            top = v
    return top


def _shifted_rows(x, out):
    """``out`` = each row of ``x`` minus its maximum (``row_max``)."""
    for i in range(x.shape[0]):
        top = row_max(x, i)
        for j in range(x.shape[1]):
            out[i, j] = x[i, j] - top
    return out


def _minus_rows(out, by):
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = out[i, j] - by[i]
    return out


def _over_rows(out, by):
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = out[i, j] / by[i]
    return out


def short_rows_softmax(x, log):
    """``Softmax.perform`` (or its log) along the short rows of a large float64 matrix, bit for bit:
    NumPy's ``exp`` and ``log`` (SIMD loops), Numba's loops for the rest.  NumPy's reductions and
    broadcast operations pay a fixed cost on every short row, and its temporaries page fault."""
    out = shifted_rows(x, np.empty(x.shape))
    if log:
        return minus_rows(out, np.log(rows(np.exp(out), False)))
    np.exp(out, out=out)
    return over_rows(out, rows(out, False))


if numba is not None:  # compiled on first call (Numba is lazy), cached on disk
    # 0/0 is NaN, as NumPy's; the GIL released, as NumPy releases it for large reductions (other threads run)
    _njit = numba.njit(cache=True, error_model="numpy", nogil=True)
    block, rest, half, is_leaf, leaf = _njit(_block), _njit(_rest), _njit(_half), _njit(_is_leaf), _njit(_leaf)
    pairwise_plan, fold, planned, pairwise = _njit(_pairwise_plan), _njit(_fold), _njit(_planned), _njit(_pairwise)
    leaf_group, leaf_sums = _njit(_leaf_group), _njit(_leaf_sums)
    rows, columns, softmax_rows = _njit(_rows), _njit(_columns), _njit(_softmax_rows)
    row_max, shifted_rows, minus_rows, over_rows = _njit(_row_max), _njit(_shifted_rows), _njit(_minus_rows), \
        _njit(_over_rows)
    KERNELS = {("whole", False): _njit(_whole), ("rows", False): rows, ("rows", True): _njit(_rows_kept),
               ("columns", False): columns, ("columns", True): _njit(_columns_kept),
               ("softmax", 2): softmax_rows, ("softmax", 1): _njit(_softmax_vector),
               ("short rows softmax", 2): short_rows_softmax}
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


def tiered_loop(kind, numpy_run, rebind, ndim: int):
    """``run(x, mean)``: ``numpy_run(x)`` until the loop ``KERNELS[kind]`` is compiled for
    C-contiguous float64 arrays of ``ndim`` axes, off the calling thread as the program being
    linked says (``numba_compile.collector``); then ``rebind`` gets the loop (same arguments),
    which the program calls from then on."""
    compiles = numba_compile.collector()
    if compiles is not None and kind in KERNELS:
        compiles.add(lambda: _compiled(KERNELS[kind], ndim), rebind)
    return lambda x, mean: numpy_run(x)


def _compiled(loop, ndim: int):
    """``loop``, compiled (or loaded from Numba's disk cache) for the arrays it will be called on."""
    loop(np.ones((1,) * ndim), False)
    return loop


__all__ = ["KERNELS", "SHORT_ROWS", "SMALL", "reduction_kind", "softmax_kind", "tiered_loop"]
