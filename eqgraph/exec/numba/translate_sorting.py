"""The whole Numba function's form of ``Sort`` (values or, with ``arg``, indices) along any axis
(``numba_program``'s ``TRANSLATIONS`` lists it).

The op sorts stably, as NumPy's ``stable=True`` does: equal values keep their order, which shows
in the indices and in the bits of the values (``-0.0`` and ``0.0`` compare equal).  Numba's
``np.sort`` is a quicksort, so each line along the axis is ordered by Numba's merge sort of its
indices (``kind="mergesort"``, stable; NaN after every number, as in NumPy), and the values are
read through those indices.
"""

from __future__ import annotations

from eqgraph.exec.numba.kernels import numba
from eqgraph.exec.numba.scalar_steps import SCALAR_TYPES


def sort(w, node):
    """``Sort{axis, arg}`` of an array of any dtype the whole function handles, along any axis."""
    op, (x,), out = node.op, node.inputs, node.outputs[0]
    if x.dtype not in SCALAR_TYPES or x.ndim == 0:
        return None
    name, axis, ndim = w.value(x), op.axis, x.ndim
    others = [d for d in range(ndim) if d != axis]
    order = others + [axis]
    moved = name if axis == ndim - 1 else f"{name}.transpose(({''.join(f'{d}, ' for d in order)}))"
    lines = f"np.ascontiguousarray({moved}).reshape((-1, {name}.shape[{axis}]))"
    value = f"{'argsort_rows' if op.arg else 'sort_rows'}({lines})"
    shape = "".join(f"{name}.shape[{d}], " for d in order)
    value = f"{value}.reshape(({shape}))"
    if axis != ndim - 1:   # the axis back in its place
        back = [order.index(d) for d in range(ndim)]
        value = f"np.ascontiguousarray({value}.transpose(({''.join(f'{d}, ' for d in back)})))"
    return [f"{w.define(out)} = {value}"]


HELPERS = ("sort_rows", "argsort_rows")

if numba is not None:
    import numpy as np

    @numba.njit(cache=True, error_model="numpy")
    def argsort_rows(x):
        """The indices sorting each row of a C-contiguous matrix, stably."""
        indices = np.empty(x.shape, dtype=np.int64)
        for i in range(x.shape[0]):
            indices[i] = np.argsort(x[i], kind="mergesort")
        return indices

    @numba.njit(cache=True, error_model="numpy")
    def sort_rows(x):
        """Each row of a C-contiguous matrix sorted stably."""
        indices = argsort_rows(x)
        values = np.empty_like(x)
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                values[i, j] = x[i, indices[i, j]]
        return values
else:
    sort_rows = argsort_rows = None
