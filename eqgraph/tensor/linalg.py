"""Linear algebra, like ``numpy.linalg`` / ``pytensor.tensor.linalg``: ``import eqgraph.tensor as et;
et.linalg.solve(A, b)``.

Each decomposition or solve is one op on a matrix (2-d; stacks of matrices are not supported
yet) computed by NumPy; ``solve_triangular`` and ``solve(assume_a=...)`` use SciPy when it is
installed (the ``exact`` extra) and otherwise NumPy on the matrix's triangle, which gives the same
result.  Everything else (``norm``, ``matrix_power``, ``cho_solve``, ``kron``) is
written with these and the ordinary ops.  Gradients are in ``eqgraph/grad/vjps_linalg.py``;
the classic identities (``inv(A) @ b -> solve(A, b)``, ...) are rules in ``rulesets/linalg.egg``.
"""

from __future__ import annotations

import numpy as np

from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.tensor.elemwise import ELEMWISE_OPS as E
from eqgraph.tensor.extra_ops import identity_like, tril, triu
from eqgraph.tensor.math import matmul, max as max_, min as min_, sum as sum_
from eqgraph.tensor.products import kron
from eqgraph.tensor.shape import transpose
from eqgraph.tensor.type import FLOAT_DTYPES, TensorType
from eqgraph.terms.basic import Apply
from eqgraph.terms.op import Op
from eqgraph.xp import array_namespace, as_output

try:  # an optional extra: NumPy computes the same results without it
    import scipy.linalg as _scipy_linalg
except ImportError:  # pragma: no cover - depends on the environment
    _scipy_linalg = None


def float_dtype(dtype: str) -> str:
    """The dtype NumPy's linear algebra computes in: float32 stays, everything else is float64."""
    return dtype if dtype in FLOAT_DTYPES and dtype != "float16" else "float64"


def _matrix(op, a, square=True):
    a = as_tensor_variable(a)
    if a.ndim != 2:
        raise TypeError(f"{op} needs a matrix (2-d), got {a} with {a.ndim} dimensions"
                        + ("; stacks of matrices are not supported yet" if a.ndim > 2 else ""))
    if a.dtype in ("complex64", "complex128"):
        raise TypeError(f"{op}: complex matrices are not supported yet ({a} is {a.dtype})")
    rows, cols = a.type.shape
    if square and rows is not None and cols is not None and rows != cols:
        raise ValueError(f"{op} needs a square matrix, got {a} of static shape {a.type.shape}")
    return a


def symmetric_from(xp, a, lower: bool):
    """The symmetric matrix whose ``lower`` (or upper) triangle is ``a``'s."""
    half = xp.tril(a, k=-1) if lower else xp.triu(a, k=1)
    diagonal = a - xp.tril(a, k=-1) - xp.triu(a, k=1)
    return half + xp.matrix_transpose(half) + diagonal


def _square_size(a):
    rows, cols = a.type.shape
    return rows if rows is not None else cols


class LinalgOp(Op):
    """A NumPy/SciPy function of one square matrix with one output of its own shape and float dtype.

    Subclasses set ``compute(xp, a)``; this base class gives them ``make_node``, ``infer_shape`` and
    the check that the matrix is square at run time."""

    __props__ = ()
    square = True

    def output_types(self, a):
        return [TensorType(float_dtype(a.dtype), (_square_size(a),) * 2)]

    def make_node(self, a):
        a = _matrix(self, a, self.square)
        return Apply(self, [a], [t() for t in self.output_types(a)])

    def perform(self, node, inputs, output_storage):
        (a,) = inputs
        if self.square and a.shape[0] != a.shape[1]:
            raise ValueError(f"{self} needs a square matrix, got shape {a.shape}")
        xp = array_namespace(a)
        a = xp.astype(a, getattr(xp, float_dtype(node.inputs[0].dtype)))
        results = self.compute(xp, a)
        results = results if isinstance(results, tuple) else (results,)
        for cell, value, out in zip(output_storage, results, node.outputs):
            cell[0] = as_output(xp, xp.asarray(value, copy=True), out.type)

    def infer_shape(self, fgraph, node, shapes):
        (n, _), = shapes
        return [tuple(n for _ in range(out.ndim)) for out in node.outputs]

    def flops(self, inputs, outputs):
        return int(inputs[0][0]) ** 3


class MatrixInverse(LinalgOp):
    """``np.linalg.inv``."""

    def compute(self, xp, a):
        return xp.linalg.inv(a)


class Det(LinalgOp):
    """``np.linalg.det``."""

    def output_types(self, a):
        return [TensorType(float_dtype(a.dtype), ())]

    def compute(self, xp, a):
        return xp.linalg.det(a)

    def infer_shape(self, fgraph, node, shapes):
        return [()]


class SlogDet(LinalgOp):
    """``np.linalg.slogdet``: the determinant's sign and the log of its absolute value."""

    def output_types(self, a):
        return [TensorType(float_dtype(a.dtype), ())] * 2

    def compute(self, xp, a):
        sign, logabsdet = xp.linalg.slogdet(a)
        return sign, logabsdet

    def infer_shape(self, fgraph, node, shapes):
        return [(), ()]


class Cholesky(LinalgOp):
    """``np.linalg.cholesky``: ``L`` with ``A = L @ L.T`` (or ``U`` with ``A = U.T @ U``)."""

    __props__ = ("lower",)

    def __init__(self, lower: bool = True):
        self.lower = bool(lower)

    def compute(self, xp, a):
        factor = xp.linalg.cholesky(a)
        return factor if self.lower else xp.matrix_transpose(factor)


class Eigh(LinalgOp):
    """``np.linalg.eigh``: eigenvalues (ascending) and eigenvectors of a symmetric matrix, read from
    its ``UPLO`` triangle."""

    __props__ = ("UPLO",)

    def __init__(self, UPLO: str = "L"):
        if UPLO not in ("L", "U"):
            raise ValueError(f"eigh: UPLO must be 'L' or 'U', not {UPLO!r}")
        self.UPLO = UPLO

    def output_types(self, a):
        n, dtype = _square_size(a), float_dtype(a.dtype)
        return [TensorType(dtype, (n,)), TensorType(dtype, (n, n))]

    def compute(self, xp, a):
        w, v = xp.linalg.eigh(symmetric_from(xp, a, self.UPLO == "L"))  # the array API's eigh has no UPLO
        return w, v


class SVD(LinalgOp):
    """``np.linalg.svd(a, full_matrices, compute_uv)``: ``(U, S, Vh)``, or ``S`` alone."""

    __props__ = ("full_matrices", "compute_uv")
    square = False

    def __init__(self, full_matrices: bool = True, compute_uv: bool = True):
        self.full_matrices, self.compute_uv = bool(full_matrices), bool(compute_uv)

    def output_types(self, a):
        m, n = a.type.shape
        k = None if m is None or n is None else min(m, n)
        dtype = float_dtype(a.dtype)
        s = TensorType(dtype, (k,))
        if not self.compute_uv:
            return [s]
        u_cols, v_rows = (m, n) if self.full_matrices else (k, k)
        return [TensorType(dtype, (m, u_cols)), s, TensorType(dtype, (v_rows, n))]

    def compute(self, xp, a):
        if not self.compute_uv:
            return xp.linalg.svdvals(a) if hasattr(xp.linalg, "svdvals") else xp.linalg.svd(a, compute_uv=False)
        u, s, vh = xp.linalg.svd(a, full_matrices=self.full_matrices)
        return u, s, vh

    def infer_shape(self, fgraph, node, shapes):
        (m, n), = shapes
        k = E["minimum"](m, n)
        if not self.compute_uv:
            return [(k,)]
        return [(m, m if self.full_matrices else k), (k,), (n if self.full_matrices else k, n)]

    def flops(self, inputs, outputs):
        m, n = inputs[0]
        return 4 * int(m) * int(n) * min(int(m), int(n))


class QR(LinalgOp):
    """``np.linalg.qr(a, mode)`` for ``mode`` "reduced" (``Q``, ``R``), "complete" or "r"."""

    __props__ = ("mode",)
    square = False

    def __init__(self, mode: str = "reduced"):
        if mode not in ("reduced", "complete", "r"):
            raise ValueError(f"qr: mode must be 'reduced', 'complete' or 'r', not {mode!r}")
        self.mode = mode

    def output_types(self, a):
        m, n = a.type.shape
        k = None if m is None or n is None else min(m, n)
        dtype = float_dtype(a.dtype)
        rows = m if self.mode == "complete" else k
        r = TensorType(dtype, (rows, n))
        return [r] if self.mode == "r" else [TensorType(dtype, (m, rows)), r]

    def compute(self, xp, a):
        if self.mode == "r":
            return xp.linalg.qr(a, mode="r") if xp is np else xp.linalg.qr(a)[1]
        q, r = xp.linalg.qr(a, mode=self.mode)
        return q, r

    def infer_shape(self, fgraph, node, shapes):
        (m, n), = shapes
        rows = m if self.mode == "complete" else E["minimum"](m, n)
        return [(rows, n)] if self.mode == "r" else [(m, rows), (rows, n)]

    def flops(self, inputs, outputs):
        m, n = inputs[0]
        return 2 * int(m) * int(n) ** 2


class Pinv(LinalgOp):
    """``np.linalg.pinv``: the Moore-Penrose pseudo-inverse (shape ``(n, m)`` for an ``(m, n)``)."""

    square = False

    def output_types(self, a):
        return [TensorType(float_dtype(a.dtype), a.type.shape[::-1])]

    def compute(self, xp, a):
        return xp.linalg.pinv(a)

    def infer_shape(self, fgraph, node, shapes):
        (m, n), = shapes
        return [(n, m)]


# -- solves ------------------------------------------------------------------------------------------
class Solve(Op):
    """``x`` with ``A @ x = b`` for a square ``A`` and a vector or matrix ``b``.

    ``assume_a`` is SciPy's: "gen" (any), "sym" (symmetric), "pos" (symmetric positive definite);
    with "sym"/"pos" only the ``lower`` (or upper) triangle of ``A`` is read.  ``SolveTriangular``
    (``triangular=True``) reads only the triangle, and ``trans`` solves with ``A.T`` instead.
    """

    __props__ = ("assume_a", "lower", "triangular", "trans", "unit_diagonal")

    def __init__(self, assume_a="gen", lower=False, triangular=False, trans=False, unit_diagonal=False):
        if assume_a not in ("gen", "sym", "pos"):
            raise ValueError(f"solve: assume_a must be 'gen', 'sym' or 'pos', not {assume_a!r}")
        self.assume_a, self.lower, self.triangular = assume_a, bool(lower), bool(triangular)
        self.trans, self.unit_diagonal = bool(trans), bool(unit_diagonal)

    def __str__(self):
        if self.triangular:
            return f"SolveTriangular{{{'lower' if self.lower else 'upper'}{', trans' if self.trans else ''}}}"
        return f"Solve{{{self.assume_a}}}"

    def make_node(self, a, b):
        a, b = _matrix(self, a), as_tensor_variable(b)
        if b.ndim not in (1, 2):
            raise TypeError(f"{self}: b must be a vector or a matrix, got {b} with {b.ndim} dimensions")
        if b.dtype in ("complex64", "complex128"):  # the float result would drop the imaginary part
            raise TypeError(f"{self}: complex right-hand sides are not supported yet ({b} is {b.dtype})")
        n, rows = _square_size(a), b.type.shape[0]
        if n is not None and rows is not None and n != rows:
            raise ValueError(f"{self}: A {a} of shape {a.type.shape} and b {b} of shape {b.type.shape} do not "
                             "match (A's rows must equal b's)")
        dtype = np.result_type(float_dtype(a.dtype), b.dtype).name
        return Apply(self, [a, b], [TensorType(float_dtype(dtype), (n if n is not None else rows, *b.type.shape[1:]))()])

    def matrix(self, xp, a):
        """The matrix this solve really uses: the triangle it reads, symmetrized or transposed."""
        if self.triangular:
            a = xp.tril(a) if self.lower else xp.triu(a)
            if self.unit_diagonal:
                a = a - (a - xp.tril(a, k=-1) - xp.triu(a, k=1)) + xp.eye(a.shape[0], dtype=a.dtype)
            return xp.matrix_transpose(a) if self.trans else a
        if self.assume_a in ("sym", "pos"):
            return symmetric_from(xp, a, self.lower)
        return a

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        xp = array_namespace(a, b)
        dtype = getattr(xp, node.outputs[0].type.dtype)
        a, b = xp.astype(a, dtype), xp.astype(b, dtype)
        if a.shape[0] != a.shape[1] or a.shape[0] != b.shape[0]:
            raise ValueError(f"{self}: A of shape {a.shape} must be square with as many rows as b {b.shape}")
        # SciPy where it exploits the structure; a general system goes to NumPy, whose solve skips
        # the condition-number estimate SciPy's makes (measured 1.6x slower at n=500)
        if xp is np and _scipy_linalg is not None and (self.triangular or self.assume_a != "gen"):
            if self.triangular:
                x = _scipy_linalg.solve_triangular(a, b, lower=self.lower, trans=int(self.trans),
                                                   unit_diagonal=self.unit_diagonal, check_finite=False)
            else:
                x = _scipy_linalg.solve(a, b, assume_a=self.assume_a, lower=self.lower, check_finite=False)
        else:  # NumPy: the same system, built explicitly
            x = xp.linalg.solve(self.matrix(xp, a), b)
        output_storage[0][0] = as_output(xp, xp.asarray(x, copy=True), node.outputs[0].type)

    def infer_shape(self, fgraph, node, shapes):
        sa, sb = shapes
        return [(sa[0], *sb[1:])]

    def flops(self, inputs, outputs):
        n = int(inputs[0][0])
        cols = int(inputs[1][1]) if len(inputs[1]) > 1 else 1
        return (n ** 2 if self.triangular else 2 * n ** 3 // 3) + 2 * n * n * cols


# -- the user's functions --------------------------------------------------------------------------------
def inv(a):
    return MatrixInverse()(a)


def det(a):
    return Det()(a)


def slogdet(a):
    """``(sign, log|det a|)``."""
    return tuple(SlogDet()(a))


def cholesky(a, lower=True):
    return Cholesky(lower)(a)


def eigh(a, UPLO="L"):
    """``(eigenvalues, eigenvectors)`` of the symmetric matrix ``a``."""
    return tuple(Eigh(UPLO)(a))


def eigvalsh(a, UPLO="L"):
    return Eigh(UPLO)(a)[0]


def svd(a, full_matrices=True, compute_uv=True):
    """``(U, S, Vh)`` as ``np.linalg.svd``, or the singular values alone with ``compute_uv=False``."""
    out = SVD(full_matrices, compute_uv)(a)
    return tuple(out) if compute_uv else out


def qr(a, mode="reduced"):
    out = QR(mode)(a)
    return out if mode == "r" else tuple(out)


def pinv(a):
    return Pinv()(a)


def solve(a, b, assume_a="gen", lower=False):
    """``x`` with ``a @ x = b`` (SciPy's ``solve``; ``assume_a`` "gen", "sym" or "pos")."""
    return Solve(assume_a, lower)(a, b)


def solve_triangular(a, b, lower=False, trans=0, unit_diagonal=False):
    """SciPy's ``solve_triangular``: only ``a``'s lower (or upper) triangle is read."""
    if trans not in (0, 1, "N", "T"):
        raise ValueError(f"solve_triangular: trans must be 0/'N' or 1/'T' for real matrices, not {trans!r}")
    return Solve("gen", lower, triangular=True, trans=trans in (1, "T"), unit_diagonal=unit_diagonal)(a, b)


def cho_solve(c_and_lower, b):
    """SciPy's ``cho_solve((c, lower), b)``: solve ``A x = b`` from the Cholesky factor ``c`` of ``A``."""
    c, lower = c_and_lower
    y = solve_triangular(c, b, lower=lower, trans=0 if lower else 1)
    return solve_triangular(c, y, lower=lower, trans=1 if lower else 0)


def matrix_power(a, n: int):
    """``np.linalg.matrix_power`` for an integer ``n`` (negative: of the inverse), by squaring."""
    a = _matrix("matrix_power", a)
    if not isinstance(n, (int, np.integer)):
        raise TypeError(f"matrix_power: n must be a Python int, not {n!r}")
    if n == 0:
        return identity_like(a, dtype=a.dtype)
    if n < 0:
        a, n = inv(a), -n
    result, square = None, a
    while n:
        if n & 1:
            result = square if result is None else matmul(result, square)
        n >>= 1
        if n:
            square = matmul(square, square)
    return result


def norm(x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm``: vector norms over one axis, matrix norms over two."""
    x = as_tensor_variable(x)
    if axis is None:
        axes = tuple(range(x.ndim))
        if ord is None or (ord in ("fro", "f") and x.ndim == 2):
            return E["sqrt"](sum_(_real_sqr(x), axis=axes, keepdims=keepdims))
        if x.ndim > 2:
            raise ValueError(f"norm: ord={ord!r} needs axis for {x}, a {x.ndim}-d tensor")
    else:
        axes = tuple(a % x.ndim for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise ValueError(f"norm: axis must name one or two axes, got {axis!r}")


def _real_sqr(x):
    return x * x if x.dtype in FLOAT_DTYPES else E["sqr"](E["abs"](x))


def _vector_norm(x, ord, axis, keepdims):
    a = E["abs"](x)
    if ord is None or ord == 2:
        return E["sqrt"](sum_(_real_sqr(x), axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return max_(a, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return min_(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return sum_(E["neq"](x, 0), axis=axis, keepdims=keepdims, dtype=float_dtype(x.dtype))
    if ord == 1:
        return sum_(a, axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"norm: ord={ord!r} is a matrix norm; a vector norm takes a number")
    return sum_(a ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def _matrix_norm(x, ord, axes, keepdims):
    row_axis, col_axis = axes
    a = E["abs"](x)
    if ord in (None, "fro", "f"):
        out = E["sqrt"](sum_(_real_sqr(x), axis=axes, keepdims=True))
    elif ord in (1, -1):  # largest (smallest) column sum
        sums = sum_(a, axis=row_axis, keepdims=True)
        out = (max_ if ord == 1 else min_)(sums, axis=col_axis, keepdims=True)
    elif ord in (np.inf, -np.inf):  # largest (smallest) row sum
        sums = sum_(a, axis=col_axis, keepdims=True)
        out = (max_ if ord == np.inf else min_)(sums, axis=row_axis, keepdims=True)
    elif ord in (2, -2, "nuc"):
        if x.ndim != 2:
            raise ValueError(f"norm(ord={ord!r}) of the stack {x} is not supported yet: the SVD takes one matrix")
        s = svd(x if axes == (0, 1) else transpose(x), compute_uv=False)
        out = sum_(s) if ord == "nuc" else (max_ if ord == 2 else min_)(s)
        return out.dimshuffle("x", "x") if keepdims else out
    else:
        raise ValueError(f"norm: ord={ord!r} is not a matrix norm (None, 'fro', 'nuc', 1, -1, 2, -2, inf, -inf)")
    if keepdims:
        return out
    return out.dimshuffle([a for a in range(x.ndim) if a not in axes])


__all__ = [
    "Cholesky", "Det", "Eigh", "LinalgOp", "MatrixInverse", "Pinv", "QR", "SVD", "SlogDet", "Solve",
    "cho_solve", "cholesky", "det", "eigh", "eigvalsh", "inv", "kron", "matrix_power", "norm", "pinv", "qr",
    "slogdet", "solve", "solve_triangular", "svd", "tril", "triu",
]
