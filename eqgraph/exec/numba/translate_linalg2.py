"""The whole Numba function's forms of ``Det``, ``SlogDet``, ``MatrixInverse``, ``Eigh`` and
``Lstsq`` of a float64 matrix (``numba_program``'s ``TRANSLATIONS`` lists them): Numba's
``np.linalg`` functions, which call SciPy's LAPACK.

NumPy's and Numba's LAPACK calls are not the same routines (NumPy inverts by ``gesv`` against the
identity, Numba by ``getrf`` and ``getri``; the two libraries' BLAS builds may block their sums
otherwise), so these agree with the program to rounding, not always to the last bit, like
``matmul``.  Numba's functions refuse a matrix with a NaN or an inf (``LinAlgError``) where NumPy
returns NaN, and refuse a singular matrix to invert as NumPy does: the function raises, and the
caller runs the program.  Stacks of matrices (more than 2 axes) and other dtypes have no form here.
"""

from __future__ import annotations

from eqgraph.exec.numba.kernels import numba
from eqgraph.tensor.linalg import Det, Eigh, MatrixInverse, SlogDet
from eqgraph.tensor.linalg.least_squares import Lstsq

#: op class -> Numba's call on the square matrix ``{0}`` (``{lower}``: whether ``Eigh`` reads the
#: lower triangle), whose results are the node's outputs in order
CALLS = {Det: "np.linalg.det({0})", SlogDet: "np.linalg.slogdet({0})", MatrixInverse: "np.linalg.inv({0})",
         Eigh: "np.linalg.eigh(symmetric({0}, {lower}))"}


def decomposition(w, node):
    """A node of ``CALLS`` on a float64 matrix, checked square (``Eigh`` on the symmetric matrix of
    the triangle the op reads, as its ``perform`` builds it); None for other dtypes and ranks."""
    (a,) = node.inputs
    if a.ndim != 2 or a.dtype != "float64" or any(out.dtype != "float64" for out in node.outputs):
        return None
    call = CALLS[type(node.op)].format(f"square({w.value(a)})", lower=getattr(node.op, "UPLO", "L") == "L")
    return [f"{', '.join(w.define(out) for out in node.outputs)} = {call}"]


def lstsq(w, node):
    """``Lstsq`` of a float64 matrix and vector or matrix: Numba's ``np.linalg.lstsq`` (``gelsd``, as
    NumPy's), its rank made the op's int32; a ``b`` whose rows do not match raises, and the caller
    runs the program, whose node raises the op's error."""
    (a, b, rcond), outs = node.inputs, node.outputs
    if a.ndim != 2 or a.dtype != "float64" or b.dtype != "float64" or outs[0].dtype != "float64":
        return None
    x, residuals, rank, s = (w.define(out) for out in outs)
    found = w.fresh("rank")
    return [f"{x}, {residuals}, {found}, {s} = np.linalg.lstsq(np.ascontiguousarray({w.value(a)}), "
            f"np.ascontiguousarray({w.value(b)}), rcond=float({w.value(rcond)}))",
            f"{rank} = np.int32({found})"]


TRANSLATIONS = {**{op_class: decomposition for op_class in CALLS}, Lstsq: lstsq}


HELPERS = ("square", "symmetric")

if numba is not None:
    import numpy as np

    @numba.njit(cache=True, error_model="numpy")
    def square(a):
        """``a`` as a C-contiguous array, or the op's ValueError where it is not square."""
        if a.shape[0] != a.shape[1]:
            raise ValueError("the matrix is not square")
        return np.ascontiguousarray(a)

    @numba.njit(cache=True, error_model="numpy")
    def _part(a, i, j, lower):
        """``a[i, j]`` in its strict ``lower`` (else upper) triangle, else 0.0."""
        return a[i, j] if (i > j if lower else j > i) else 0.0

    @numba.njit(cache=True, error_model="numpy")
    def symmetric(a, lower):
        """The symmetric matrix whose ``lower`` (else upper) triangle is ``a``'s, computed as the
        op computes it (the half plus its transpose plus ``a`` less both halves), so that a NaN
        in the other triangle still shows."""
        out = np.empty_like(a)
        for i in range(a.shape[0]):
            for j in range(a.shape[0]):
                diagonal = a[i, j] - _part(a, i, j, True) - _part(a, i, j, False)
                out[i, j] = _part(a, i, j, lower) + _part(a, j, i, lower) + diagonal
        return out

else:
    square = symmetric = None
