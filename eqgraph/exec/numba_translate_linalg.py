"""The whole Numba function's forms of ``Cholesky`` and ``Solve`` (``numba_program``'s
``TRANSLATIONS`` lists them), for float64 matrices.

``Cholesky`` is Numba's ``np.linalg.cholesky`` (LAPACK's ``potrf``, through SciPy's LAPACK): a
matrix that is not positive definite raises, and the caller runs the program, whose node raises
NumPy's ``LinAlgError``.  A general ``Solve`` is Numba's ``np.linalg.solve`` (``gesv``), as the op's
NumPy path.  A small triangular solve is a substitution loop over the triangle the op reads
(SciPy's ``trtrs`` has no Numba form): a zero on the diagonal raises as SciPy's does.  LAPACK blocks its
sums, so these agree with the program to rounding (a few ulps), not always to the last bit, like
``matmul``.
"""

from __future__ import annotations

import numpy as np

from eqgraph.exec.numba_kernels import numba


def _float64(node) -> bool:
    return all(v.dtype == "float64" for v in (*node.inputs, *node.outputs))


def cholesky(w, node):
    (a,), out = node.inputs, node.outputs[0]
    if a.ndim != 2 or not _float64(node):
        return None
    factor = f"np.linalg.cholesky(np.ascontiguousarray({w.value(a)}))"
    return [f"{w.define(out)} = {factor if node.op.lower else f'np.ascontiguousarray({factor}.T)'}"]


#: most multiply-adds (n * n * columns of b) of a triangular solve written as a loop: LAPACK's
#: blocked ``trtrs`` is several times faster on large systems, so those stay Python calls of the op
SMALL_SOLVE = 1 << 16


def _small(a, b) -> bool:
    """Whether ``a``'s and ``b``'s static shapes are known and their solve is at most ``SMALL_SOLVE``."""
    sizes = (*a.type.shape, *b.type.shape)
    return None not in sizes and a.type.shape[0] ** 2 * (b.type.shape[1] if b.ndim == 2 else 1) <= SMALL_SOLVE


def solve(w, node):
    op, (a, b), out = node.op, node.inputs, node.outputs[0]
    if a.ndim != 2 or b.ndim not in (1, 2) or not _float64(node):
        return None
    if op.triangular and not _small(a, b):
        return None
    if op.triangular:
        matrix = f"np.ascontiguousarray({w.value(a)})"
        return [f"{w.define(out)} = solve_triangular_{b.ndim}d({matrix}, np.ascontiguousarray({w.value(b)}), "
                f"{op.lower}, {op.trans}, {op.unit_diagonal})"]
    if op.assume_a != "gen":
        return None
    return [f"{w.define(out)} = np.linalg.solve(np.ascontiguousarray({w.value(a)}), "
            f"np.ascontiguousarray({w.value(b)}))"]


HELPERS = ("solve_triangular_1d", "solve_triangular_2d")

if numba is not None:
    _njit = numba.njit(cache=True, error_model="numpy")

    @_njit
    def _substitute(a, x, lower, trans, unit):
        """Solves, in place in the columns of ``x``, with the triangle of ``a`` (``lower`` before a
        transposition ``trans``), by forward or back substitution: a row of ``x`` at a time, each
        entry less the products with the rows solved before, in order, then divided by the pivot."""
        n = a.shape[0]
        forward = lower != trans   # the transposed lower triangle is upper
        for step in range(n):
            i = step if forward else n - 1 - step
            pivot = 1.0 if unit else a[i, i]
            if pivot == 0.0:
                raise np.linalg.LinAlgError("singular matrix: a zero on the diagonal")
            first, last = (0, i) if forward else (i + 1, n)
            for k in range(first, last):
                factor = a[k, i] if trans else a[i, k]
                for c in range(x.shape[1]):
                    x[i, c] -= factor * x[k, c]
            for c in range(x.shape[1]):
                x[i, c] /= pivot

    @_njit
    def _check(a, rows):
        if a.shape[0] != a.shape[1] or a.shape[0] != rows:
            raise ValueError("solve: A must be square with as many rows as b")

    @_njit
    def solve_triangular_1d(a, b, lower, trans, unit):
        _check(a, b.shape[0])
        x = np.copy(b).reshape((b.shape[0], 1))
        _substitute(a, x, lower, trans, unit)
        return x.reshape(b.shape[0])

    @_njit
    def solve_triangular_2d(a, b, lower, trans, unit):
        _check(a, b.shape[0])
        x = np.copy(b)
        _substitute(a, x, lower, trans, unit)
        return x
else:
    solve_triangular_1d = solve_triangular_2d = None
