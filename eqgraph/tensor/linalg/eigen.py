"""``eigh`` and ``eigvalsh`` as NumPy, SciPy and PyTensor spell them: the standard problem is the
``Eigh`` op; SciPy's generalized one (``eigh(a, b)``) is written with ``cholesky``,
``solve_triangular`` and ``Eigh``, so it has their gradients and takes stacks."""

from __future__ import annotations

from eqgraph.tensor.elemwise import ELEMWISE_OPS as E
from eqgraph.tensor.extra_ops import tril, triu
from eqgraph.tensor.linalg.core import Eigh, _matrix, cholesky, solve_triangular, symmetric_from
from eqgraph.tensor.shape import matrix_transpose
from eqgraph.tensor.type import COMPLEX_DTYPES


def _triangle(UPLO, lower) -> str:
    """NumPy's ``UPLO`` or PyTensor's ``lower``: which triangle of the matrix is read."""
    if lower is None:
        return UPLO
    if UPLO is not None and UPLO != ("L" if lower else "U"):
        raise ValueError(f"eigh: UPLO={UPLO!r} and lower={lower!r} name different triangles; give one of them")
    return "L" if lower else "U"


def eigh(a, b=None, UPLO=None, *, lower=None):
    """``[eigenvalues, eigenvectors]`` of the symmetric (complex: Hermitian) matrix ``a``, read from
    its lower triangle unless ``UPLO="U"`` (NumPy's, also as the second argument) or ``lower=False``
    (SciPy's and PyTensor's).  With ``b``, a positive definite matrix read from the same triangle,
    the generalized problem ``a v = w b v`` as SciPy's ``eigh(a, b)``: eigenvectors normalized so
    that ``v^H b v = I``."""
    if isinstance(b, str):  # NumPy's eigh(a, UPLO)
        b, UPLO = None, b
    uplo = _triangle(UPLO, lower) or "L"
    if b is None:
        return Eigh(uplo)(a)
    return _generalized_eigh(_matrix("eigh", a, complex_ok=True), _matrix("eigh", b, arg="b", complex_ok=True),
                             uplo == "L")


def _generalized_eigh(a, b, lower: bool):
    """``a v = w b v`` reduced to a standard problem by ``b``'s Cholesky factor ``L``: the
    eigenvalues of ``C = L^-1 a L^-H``, and ``v = L^-H y`` from ``C``'s eigenvectors ``y``.
    Written with ops that have gradients, so the generalized problem has them too."""
    a, b = (symmetric_from(_GraphNamespace, m, lower, hermitian=m.dtype in COMPLEX_DTYPES) for m in (a, b))
    factor = cholesky(b)
    half = solve_triangular(factor, a, lower=True)            # L^-1 a
    half_h = E["conj"](matrix_transpose(half)) if half.dtype in COMPLEX_DTYPES else matrix_transpose(half)
    reduced = solve_triangular(factor, half_h, lower=True)    # L^-1 a L^-H
    w, y = Eigh("L")(reduced)
    return [w, solve_triangular(factor, y, lower=True, trans="C")]


class _GraphNamespace:
    """The array functions ``symmetric_from`` calls, on tensors of a graph."""
    tril = staticmethod(tril)
    triu = staticmethod(triu)
    matrix_transpose = staticmethod(matrix_transpose)
    conj = staticmethod(E["conj"])


def eigvalsh(a, b=None, UPLO=None, *, lower=None):
    return eigh(a, b, UPLO, lower=lower)[0]
