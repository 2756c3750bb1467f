"""The decompositions and solves NumPy computes (SciPy for ``solve_triangular`` and ``solve``'s
``assume_a`` where installed), the ``LinalgOp`` base that lapack.py's SciPy factorizations build on,
and what is written with them and the ordinary ops (``matrix_power``, ``cho_solve``; ``norm`` is norms.py)."""

from __future__ import annotations

import numpy as np

from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.tensor.alloc import alloc
from eqgraph.tensor.elemwise import ELEMWISE_OPS as E, broadcast_static_shapes
from eqgraph.tensor.extra_ops import eye, tril, triu
from eqgraph.tensor.math import matmul, matmul_op
from eqgraph.tensor.products import diagonal
from eqgraph.tensor.shape import expand_dims, matrix_transpose, shape_of, squeeze
from eqgraph.tensor.type import COMPLEX_DTYPES, TensorType
from eqgraph.terms.basic import Apply
from eqgraph.terms.op import Op
from eqgraph.xp import array_namespace, as_output, optional_module


def float_dtype(dtype: str) -> str:
    """The dtype NumPy's linear algebra computes in: float32, complex64 and complex128 stay,
    everything else is float64."""
    return dtype if dtype in ("float32", *COMPLEX_DTYPES) else "float64"


def real_dtype(dtype: str) -> str:
    """The dtype of a real result (eigenvalues of a Hermitian matrix, singular values, log|det|)
    computed in ``float_dtype(dtype)``: a complex dtype's real part."""
    return {"complex64": "float32", "complex128": "float64"}.get(float_dtype(dtype), float_dtype(dtype))


def eig_dtype(dtype: str) -> str:
    """The dtype of a general matrix's eigenvalues: complex always, as PyTensor's eig gives them."""
    return "complex64" if float_dtype(dtype) in ("float32", "complex64") else "complex128"


#: a LinalgOp output's dtype (``LinalgOp.output_kinds``) from the input's
OUTPUT_DTYPES = {"same": float_dtype, "real": real_dtype, "complex": eig_dtype}


def _matrix(op, a, square=True, arg="a", complex_ok=False):
    """``a``, the argument ``arg`` of ``op``, as a tensor: a (square) matrix or a stack of them;
    complex ones only where ``complex_ok``."""
    a = as_tensor_variable(a)
    if a.ndim < 2:
        raise TypeError(f"{op}: {arg} must be a matrix or a stack of matrices (at least 2-d), got {a} with "
                        f"{a.ndim} dimensions")
    if a.dtype in COMPLEX_DTYPES and not complex_ok:
        raise TypeError(f"{op} does not take complex matrices ({arg} = {a} is {a.dtype}): it is defined "
                        "for real ones here")
    rows, cols = a.type.shape[-2:]
    if square and rows is not None and cols is not None and rows != cols:
        raise ValueError(f"{op}: {arg} must be square matrices (its last two axes), got {a} of static shape "
                         f"{a.type.shape}")
    return a


def _check_square(op, a):
    """At run time: the last two axes of the array ``a`` are square."""
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{op} needs square matrices (its last two axes), got shape {a.shape}")


def _batch(a) -> tuple:
    """The static sizes of the leading (batch) axes of a stack of matrices; () for one matrix."""
    return a.type.shape[:-2]


def _batch_count(shape) -> int:
    """How many matrices an input of ``shape`` (sizes, the cost model's guesses) holds."""
    return int(np.prod([int(s) for s in shape[:-2]], dtype=np.int64))


def symmetric_from(xp, a, lower: bool, hermitian: bool = False):
    """The symmetric (or ``hermitian``) matrix whose ``lower`` (or upper) triangle is ``a``'s."""
    half = xp.tril(a, k=-1) if lower else xp.triu(a, k=1)
    diagonal = a - xp.tril(a, k=-1) - xp.triu(a, k=1)
    mirrored = xp.matrix_transpose(half)
    return half + (xp.conj(mirrored) if hermitian else mirrored) + diagonal


def _square_size(a):
    rows, cols = a.type.shape[-2:]
    return rows if rows is not None else cols


class LinalgOp(Op):
    """A NumPy/SciPy function of one matrix (or a stack of them) with float outputs.

    Subclasses set ``compute(xp, a)``, which NumPy's linalg computes for stacks as for one matrix,
    and ``core_axes()``, the layout of each output; this base class gives them ``make_node``,
    ``infer_shape`` and the check that the matrices are square at run time.  Outputs keep the
    input's batch axes first."""

    __props__ = ()
    square = True

    def output_kinds(self) -> tuple[str, ...]:
        """Per output, how its dtype follows the input's (``OUTPUT_DTYPES``): "same" (the dtype
        computed in), "real" (its real part: singular values, a Hermitian matrix's eigenvalues)
        or "complex" (a general matrix's eigenvalues). The type rules generated for
        rulesets/types.egg read it too."""
        return ("same",) * len(self.core_axes())

    def core_axes(self) -> tuple[str, ...]:
        """Per output, its axes after the batch axes, one letter each for the input matrix's
        ``(M, N)``: ``m`` its rows, ``n`` its columns, ``k`` the smaller of the two and ``s`` a
        square matrix's size.  The output types, ``infer_shape`` and the type rules generated
        for rulesets/types.egg (``egraph/schema.py``) all read it: one statement of the shapes."""
        return ("ss",)

    @classmethod
    def instances(cls) -> list:
        """One op per value of the props (the type rules are generated for each)."""
        return [cls()]

    @property
    def gufunc_signature(self) -> str:
        """NumPy's generalized-ufunc signature of the op on one matrix (``"(m,n)->(m,m),(k),(n,n)"``
        for a full SVD), read from ``core_axes``: ``np.vectorize(f, signature=...)`` batches a
        NumPy function the same way."""
        inputs = "(m,m)" if self.square else "(m,n)"
        return inputs + "->" + ",".join("(" + ",".join("m" if c == "s" else c for c in axes) + ")"
                                        for axes in self.core_axes())

    @property
    def core_op(self):
        """The op on one matrix (a Blockwise node's ``core_op``): itself, as it takes stacks too."""
        return self

    def output_types(self, a):
        (m, n), k = a.type.shape[-2:], _smaller(*a.type.shape[-2:])
        sizes = {"m": m, "n": n, "k": k, "s": _square_size(a)}
        batch = _batch(a)
        return [TensorType(OUTPUT_DTYPES[kind](a.dtype), batch + tuple(sizes[c] for c in axes))
                for kind, axes in zip(self.output_kinds(), self.core_axes())]

    def make_node(self, a):
        a = _matrix(self, a, self.square, complex_ok=True)
        return Apply(self, [a], [t() for t in self.output_types(a)])

    def perform(self, node, inputs, output_storage):
        (a,) = inputs
        if self.square:
            _check_square(self, a)
        xp = array_namespace(a)
        a = xp.astype(a, getattr(xp, float_dtype(node.inputs[0].dtype)))
        results = self.compute(xp, a)
        results = results if isinstance(results, tuple) else (results,)
        for cell, value, out in zip(output_storage, results, node.outputs):
            cell[0] = as_output(xp, xp.asarray(value, copy=True), out.type)

    def infer_shape(self, fgraph, node, shapes):
        (*batch, m, n), = shapes
        sizes = {"m": m, "n": n, "k": E["minimum"](m, n), "s": m}
        return [(*batch, *(sizes[c] for c in axes)) for axes in self.core_axes()]

    def flops(self, inputs, outputs):
        return _batch_count(inputs[0]) * int(inputs[0][-1]) ** 3


def _smaller(m, n):
    return None if m is None or n is None else min(m, n)


class MatrixInverse(LinalgOp):
    """``np.linalg.inv``."""

    def compute(self, xp, a):
        return xp.linalg.inv(a)


class Det(LinalgOp):
    """``np.linalg.det``."""

    def core_axes(self):
        return ("",)

    def compute(self, xp, a):
        return xp.linalg.det(a)


class SlogDet(LinalgOp):
    """``np.linalg.slogdet``: the determinant's sign and the log of its absolute value."""

    def core_axes(self):
        return ("", "")

    def output_kinds(self):
        return ("same", "real")

    def compute(self, xp, a):
        sign, logabsdet = xp.linalg.slogdet(a)
        return sign, logabsdet


class Cholesky(LinalgOp):
    """``np.linalg.cholesky``: ``L`` with ``A = L @ L.T`` (or ``U`` with ``A = U.T @ U``); for a
    complex Hermitian ``A``, ``L @ L.conj().T`` (``U`` is ``L``'s conjugate transpose)."""

    __props__ = ("lower",)

    def __init__(self, lower: bool = True):
        self.lower = bool(lower)

    @classmethod
    def instances(cls):
        return [cls(True), cls(False)]

    def compute(self, xp, a):
        factor = xp.linalg.cholesky(a)
        if self.lower:
            return factor
        upper = xp.matrix_transpose(factor)
        return xp.conj(upper) if xp.isdtype(upper.dtype, "complex floating") else upper


class Eigh(LinalgOp):
    """``np.linalg.eigh``: eigenvalues (ascending, real) and eigenvectors of a symmetric (complex:
    Hermitian) matrix, read from its ``UPLO`` triangle."""

    __props__ = ("UPLO",)

    def __init__(self, UPLO: str = "L"):
        if UPLO not in ("L", "U"):
            raise ValueError(f"eigh: UPLO must be 'L' or 'U', not {UPLO!r}")
        self.UPLO = UPLO

    @classmethod
    def instances(cls):
        return [cls("L"), cls("U")]

    def core_axes(self):
        return ("s", "ss")  # eigenvalues, eigenvectors

    def output_kinds(self):
        return ("real", "same")

    def compute(self, xp, a):
        hermitian = xp.isdtype(a.dtype, "complex floating")  # the array API's eigh has no UPLO
        w, v = xp.linalg.eigh(symmetric_from(xp, a, self.UPLO == "L", hermitian))
        return w, v


class Eig(LinalgOp):
    """``np.linalg.eig``: eigenvalues and right eigenvectors of a general square matrix, complex
    whatever the input (NumPy's are real where every eigenvalue is; a type has one dtype)."""

    def core_axes(self):
        return ("s", "ss")

    def output_kinds(self):
        return ("complex", "complex")

    def compute(self, xp, a):
        w, v = xp.linalg.eig(a)
        return w, v


class SVD(LinalgOp):
    """``np.linalg.svd(a, full_matrices, compute_uv)``: ``(U, S, Vh)``, or ``S`` alone."""

    __props__ = ("full_matrices", "compute_uv")
    square = False

    def __init__(self, full_matrices: bool = True, compute_uv: bool = True):
        self.full_matrices, self.compute_uv = bool(full_matrices), bool(compute_uv)

    @classmethod
    def instances(cls):
        return [cls(full, uv) for full in (True, False) for uv in (True, False)]

    def core_axes(self):
        if not self.compute_uv:
            return ("k",)
        return ("mm", "k", "nn") if self.full_matrices else ("mk", "k", "kn")  # U, S, Vh

    def output_kinds(self):
        return ("real",) if not self.compute_uv else ("same", "real", "same")

    def compute(self, xp, a):
        if not self.compute_uv:
            return xp.linalg.svdvals(a) if hasattr(xp.linalg, "svdvals") else xp.linalg.svd(a, compute_uv=False)
        u, s, vh = xp.linalg.svd(a, full_matrices=self.full_matrices)
        return u, s, vh

    def flops(self, inputs, outputs):
        m, n = inputs[0][-2:]
        return _batch_count(inputs[0]) * 4 * int(m) * int(n) * min(int(m), int(n))


class QR(LinalgOp):
    """``np.linalg.qr(a, mode)`` for ``mode`` "reduced" (``Q``, ``R``), "complete" or "r"."""

    __props__ = ("mode",)
    square = False

    def __init__(self, mode: str = "reduced"):
        if mode not in ("reduced", "complete", "r"):
            raise ValueError(f"qr: mode must be 'reduced', 'complete' or 'r', not {mode!r}")
        self.mode = mode

    @classmethod
    def instances(cls):
        return [cls(mode) for mode in ("reduced", "complete", "r")]

    def core_axes(self):
        if self.mode == "r":
            return ("kn",)
        return ("mm", "mn") if self.mode == "complete" else ("mk", "kn")  # Q, R

    def compute(self, xp, a):
        if self.mode == "r":
            return xp.linalg.qr(a, mode="r") if xp is np else xp.linalg.qr(a)[1]
        q, r = xp.linalg.qr(a, mode=self.mode)
        return q, r

    def flops(self, inputs, outputs):
        m, n = inputs[0][-2:]
        return _batch_count(inputs[0]) * 2 * int(m) * int(n) ** 2


class Pinv(LinalgOp):
    """``np.linalg.pinv``: the Moore-Penrose pseudo-inverse (shape ``(n, m)`` for an ``(m, n)``)."""

    square = False

    def core_axes(self):
        return ("nm",)

    def compute(self, xp, a):
        return xp.linalg.pinv(a)


# -- solves ------------------------------------------------------------------------------------------
class Solve(Op):
    """``x`` with ``A @ x = b`` for a square ``A`` (or a stack of them) and ``b`` as in NumPy 2:
    a vector ``(M,)``, solved with every matrix of ``A``, or matrices ``(..., M, K)`` whose batch
    axes broadcast against ``A``'s.  (A stack of vectors is written ``b[..., None]``.)  ``x`` has
    the shape of ``A @ b``.

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
        a, b = _matrix(self, a, complex_ok=True), as_tensor_variable(b)
        if b.ndim == 0:
            raise TypeError(f"{self}: b must be a vector (M,) or matrices (..., M, K), got the scalar {b}")
        if self.assume_a == "pos" and a.dtype in COMPLEX_DTYPES:
            # SciPy's "pos" reads a Hermitian matrix, this op's triangle a symmetric one
            raise TypeError(f"{self}: a complex A ({a} is {a.dtype}) is solved with assume_a='gen' or 'sym' here, "
                            "not 'pos'")
        n, rows = _square_size(a), b.type.shape[_rows_axis(b)]
        if n is not None and rows is not None and n != rows:
            raise ValueError(f"{self}: A {a} of shape {a.type.shape} and b {b} of shape {b.type.shape} do not "
                             "match (A's rows must equal b's)")
        batch = _batch(a) if b.ndim == 1 else _broadcast_batches(self, a, b)
        cols = () if b.ndim == 1 else (b.type.shape[-1],)
        shape = (*batch, n if n is not None else rows, *cols)
        dtype = np.result_type(float_dtype(a.dtype), b.dtype).name
        return Apply(self, [a, b], [TensorType(float_dtype(dtype), shape)()])

    def matrix(self, xp, a):
        """The matrix this solve really uses: the triangle it reads, symmetrized or transposed."""
        if self.triangular:
            a = xp.tril(a) if self.lower else xp.triu(a)
            if self.unit_diagonal:
                a = a - (a - xp.tril(a, k=-1) - xp.triu(a, k=1)) + xp.eye(a.shape[-1], dtype=a.dtype)
            return xp.matrix_transpose(a) if self.trans else a
        if self.assume_a in ("sym", "pos"):
            return symmetric_from(xp, a, self.lower)
        return a

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        xp = array_namespace(a, b)
        dtype = getattr(xp, node.outputs[0].type.dtype)
        a, b = xp.astype(a, dtype), xp.astype(b, dtype)
        if a.shape[-1] != a.shape[-2] or a.shape[-1] != b.shape[_rows_axis(b)]:
            raise ValueError(f"{self}: A of shape {a.shape} must be square with as many rows as b {b.shape}")
        # SciPy where it exploits the structure; a general system goes to NumPy, whose solve skips
        # the condition-number estimate SciPy's makes, which costs more than the solve.  Stacks go
        # to NumPy too, whose broadcasting rules for b (NumPy 2's) this op's types follow
        one_system = a.ndim == 2 and b.ndim <= 2
        # SciPy is an optional extra: NumPy computes the same results without it
        scipy_linalg = optional_module("scipy.linalg") if xp is np and one_system else None
        if scipy_linalg is not None and (self.triangular or self.assume_a != "gen"):
            if self.triangular:
                x = scipy_linalg.solve_triangular(a, b, lower=self.lower, trans=int(self.trans),
                                                   unit_diagonal=self.unit_diagonal, check_finite=False)
            else:
                x = scipy_linalg.solve(a, b, assume_a=self.assume_a, lower=self.lower, check_finite=False)
        else:  # NumPy: the same system, built explicitly
            x = xp.linalg.solve(self.matrix(xp, a), b)
        output_storage[0][0] = as_output(xp, xp.asarray(x, copy=True), node.outputs[0].type)

    def infer_shape(self, fgraph, node, shapes):
        # the shape of A @ b (NumPy 2's rules for b are matmul's): matmul works it out
        return matmul_op.infer_shape(fgraph, node, shapes)

    def flops(self, inputs, outputs):
        n = int(inputs[0][-1])
        cols = int(inputs[1][-1]) if len(inputs[1]) > 1 else 1
        # the systems solved: A's and b's batch axes broadcast, read off the inputs (the cost
        # model guesses unknown sizes of each term on its own: x's guess need not match)
        batch_a, batch_b = inputs[0][:-2], inputs[1][:-2]
        width = max(len(batch_a), len(batch_b))
        padded = [(1,) * (width - len(batch)) + tuple(batch) for batch in (batch_a, batch_b)]
        systems = int(np.prod([max(int(x), int(y)) for x, y in zip(*padded)], dtype=np.int64))
        # a triangular system: one substitution, n^2 per column; a general one: LU, then two
        return systems * (n * n * cols if self.triangular else 2 * n ** 3 // 3 + 2 * n * n * cols)


def _rows_axis(b) -> int:
    """The axis of ``b`` that ``A``'s rows meet: a vector's only one, else the second to last."""
    return 0 if b.ndim == 1 else b.ndim - 2


def _broadcast_batches(op, a, b) -> tuple:
    """The static batch sizes of ``a`` and ``b``'s batch axes broadcast (right-aligned, as matmul)."""
    batch_a, batch_b = _batch(a), _batch(b)
    n = max(len(batch_a), len(batch_b))
    padded = [TensorType(x.dtype, (1,) * (n - len(batch)) + batch)() for x, batch in ((a, batch_a), (b, batch_b))]
    return broadcast_static_shapes(op, padded) if n else ()


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


def eig(a):
    """``[eigenvalues, eigenvectors]`` of the square matrix ``a``, complex (``np.linalg.eig``)."""
    return Eig()(a)


def eigvals(a):
    return Eig()(a)[0]


def svd(a, full_matrices=True, compute_uv=True):
    """``[U, S, Vh]`` as ``np.linalg.svd`` (a list, as PyTensor's), or the singular values alone
    with ``compute_uv=False``."""
    return SVD(full_matrices, compute_uv)(a)


def pinv(a):
    return Pinv()(a)


#: SciPy's and PyTensor's long names of ``assume_a`` (``"her"``: a real Hermitian matrix is symmetric)
_ASSUME_A = {"general": "gen", "symmetric": "sym", "hermitian": "sym", "her": "sym", "positive definite": "pos",
             "banded": "gen"}


def solve(a, b, assume_a="gen", lower=False, b_ndim=None, *, transposed=False, check_finite=True,
          overwrite_a=False, overwrite_b=False):
    """``x`` with ``a @ x = b`` (or ``a.T @ x = b`` with ``transposed``): SciPy's and PyTensor's ``solve``.

    ``assume_a`` is "gen", "sym" or "pos" (or SciPy's long names), "lower triangular" / "upper
    triangular" (``solve_triangular``), "diagonal" (only the diagonal is read) or "tridiagonal"
    (only the three diagonals); "banded" solves the whole matrix, which is what it reads.
    ``a`` may be a stack of matrices; ``b`` is read as NumPy 2 and PyTensor do: a vector if it
    is 1-d, else matrices ``(..., M, K)``; ``b_ndim=1`` (PyTensor's) reads it as vectors ``(..., M)``.
    ``check_finite`` and ``overwrite_*`` are SciPy's and have no effect (nothing is overwritten)."""
    kind = _ASSUME_A.get(str(assume_a).lower(), str(assume_a).lower())
    if kind in ("lower triangular", "upper triangular"):
        lower = kind == "lower triangular"
        return solve_triangular(a, b, lower=lower, trans=int(bool(transposed)), b_ndim=b_ndim)
    a = _matrix("solve", a, complex_ok=True)
    if transposed:  # the transpose's other triangle is the one read
        a, lower = matrix_transpose(a), not lower
    if kind == "diagonal":
        return _diagonal_solve(a, b, b_ndim)
    if kind == "tridiagonal":  # what SciPy reads: the diagonal and the two next to it
        a, kind = triu(tril(a, 1), -1), "gen"
    return _solve_with(Solve(kind, lower), a, b, b_ndim)


def solve_triangular(a, b, lower=False, trans=0, unit_diagonal=False, b_ndim=None, *, check_finite=True,
                     overwrite_b=False):
    """SciPy's ``solve_triangular``: only ``a``'s lower (or upper) triangle is read; ``trans`` 0/"N"
    solves ``a x = b``, 1/"T" ``a.T x = b`` and 2/"C" ``a.conj().T x = b``; ``b`` and ``b_ndim``
    as in ``solve``."""
    if trans not in (0, 1, 2, "N", "T", "C"):  # False and True are 0 and 1, as in PyTensor
        raise ValueError(f"solve_triangular: trans must be 0/'N', 1/'T' or 2/'C', not {trans!r}")
    a = as_tensor_variable(a)
    if trans in (2, "C") and a.dtype in COMPLEX_DTYPES:  # the conjugate's triangle is the same one
        a = E["conj"](a)
    op = Solve("gen", lower, triangular=True, trans=trans in (1, 2, "T", "C"), unit_diagonal=unit_diagonal)
    return _solve_with(op, a, b, b_ndim)


def _diagonal_solve(a, b, b_ndim):
    """``b`` divided by the diagonal of ``a`` (of each matrix): its rows, or a vector's entries."""
    b, d = as_tensor_variable(b), diagonal(a, 0, -2, -1)
    _check_b_ndim("solve", b, b_ndim)
    if b.ndim == 0:
        raise TypeError(f"solve: b must be a vector (M,) or matrices (..., M, K), got the scalar {b}")
    vectors = b.ndim == 1 or b_ndim == 1
    return b / d if vectors else b / expand_dims(d, -1)


def _check_b_ndim(op, b, b_ndim):
    if b_ndim not in (None, 1, 2) or (b_ndim == 2 and b.ndim < 2):
        raise ValueError(f"{op}: b_ndim must be 1 (b holds vectors (..., M)) or 2 (matrices (..., M, K)), "
                         f"got {b_ndim!r} for b {b} of {b.ndim} dimensions")


def _solve_with(op, a, b, b_ndim):
    """``op(a, b)`` with ``b``'s core a vector (``b_ndim=1``) or a matrix (2; None: 1 for a 1-d b)."""
    b = as_tensor_variable(b)
    _check_b_ndim(op, b, b_ndim)
    if b_ndim == 1 and b.ndim > 1:  # a stack of vectors: solve each as a column
        return squeeze(op(a, expand_dims(b, -1)), axis=-1)
    return op(a, b)


def cho_solve(c_and_lower, b):
    """SciPy's ``cho_solve((c, lower), b)``: solve ``A x = b`` from the Cholesky factor ``c`` of ``A``."""
    c, lower = c_and_lower
    c, b = as_tensor_variable(c), as_tensor_variable(b)
    # a vector b and a stack of factors: the first solve gives a vector per matrix, (..., M),
    # which the second must read as vectors too, not as one matrix
    b_ndim = 1 if b.ndim == 1 and c.ndim > 2 else None
    # A = c c^H (lower) or c^H c: the conjugate transpose, "C", is the transpose for real factors
    y = solve_triangular(c, b, lower=lower, trans=0 if lower else "C", b_ndim=b_ndim)
    return solve_triangular(c, y, lower=lower, trans="C" if lower else 0, b_ndim=b_ndim)


def matrix_power(a, n: int):
    """``np.linalg.matrix_power`` for an integer ``n`` (negative: of the inverse), by squaring."""
    a = _matrix("matrix_power", a, complex_ok=True)
    if not isinstance(n, (int, np.integer)):
        raise TypeError(f"matrix_power: n must be a Python int, not {n!r}")
    if n == 0:  # an identity matrix per matrix of the stack
        *batch, rows, cols = shape_of(a)
        identity = eye(rows, cols, dtype=a.dtype)
        return alloc(identity, *batch, rows, cols) if batch else identity
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
