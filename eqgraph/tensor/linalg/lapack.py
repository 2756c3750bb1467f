"""The linear algebra of ``scipy.linalg`` that NumPy has no function for: the LU factorization
(``lu``, ``lu_factor``, ``lu_solve``), QR with column pivoting or in LAPACK's raw form, the
Schur and QZ decompositions and the Lyapunov solves; ``et.linalg`` re-exports them with
PyTensor's signatures.

Each op is one matrix (or a stack ``(..., M, N)``, batch axes first) in, computed by SciPy one
matrix at a time: SciPy is an optional extra, and without it these ops say so when they run
(the Lyapunov solves, which NumPy can compute another way, do so).
They are kept out of the package's ``__init__`` so that ``rulesets/types.egg``'s generated
rules, one per decomposition defined there, stay the decompositions the rewrites name.
Gradients are in ``eqgraph/grad/vjps_linalg.py``.
"""

from __future__ import annotations

import numpy as np

from eqgraph.tensor.alloc import arange
from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.tensor.elemwise import ELEMWISE_OPS as E, cast
from eqgraph.tensor.linalg.core import (LinalgOp, QR, _batch_count, _broadcast_batches, _check_square, _matrix,
                                        _square_size, float_dtype, solve_triangular)
from eqgraph.tensor.shape import expand_dims, matrix_transpose, shape_of, squeeze
from eqgraph.tensor.sorting import argsort
from eqgraph.tensor.type import TensorType
from eqgraph.tensor.variable import TensorVariable
from eqgraph.terms.basic import Apply
from eqgraph.terms.op import Op
from eqgraph.xp import array_namespace, as_output, optional_module


def scipy_linalg(op):
    """``scipy.linalg``, or an error naming ``op`` where SciPy is not installed."""
    module = optional_module("scipy.linalg")
    if module is None:
        raise ImportError(f"{op} needs SciPy, which is not installed (pip install scipy, or eqgraph's 'exact' "
                          "extra): NumPy has no such function")
    return module


def to_numpy(x):
    """``x`` as a NumPy array: SciPy computes on NumPy arrays only (a CuPy array is copied to the host)."""
    return x.get() if hasattr(x, "get") and not isinstance(x, np.ndarray) else np.asarray(x)


def per_matrix(fn, *arrays):
    """``fn``'s results (a tuple of arrays) for each matrix of the stacks ``arrays`` (whose batch
    axes are the same), stacked again behind those batch axes."""
    batch = arrays[0].shape[:-2]
    if not batch:
        return tuple(fn(*arrays))
    if not all(batch):  # an empty stack: the shapes of one matrix's results, none of them
        one = fn(*(np.eye(x.shape[-2], x.shape[-1], dtype=x.dtype) for x in arrays))
        return tuple(np.empty(batch + r.shape, r.dtype) for r in one)
    results = [fn(*(x[i] for x in arrays)) for i in np.ndindex(batch)]
    return tuple(np.stack(r).reshape(batch + r[0].shape) for r in zip(*results))


class ScipyLinalgOp(LinalgOp):
    """A ``LinalgOp`` that SciPy computes, one matrix at a time: subclasses set
    ``compute_one(scipy_linalg, a)`` (a tuple of arrays) and, for integer outputs,
    ``dtypes()`` (per output, a dtype or None: the input's float dtype)."""

    def dtypes(self) -> tuple:
        return (None,) * len(self.core_axes())

    def output_types(self, a):
        types = super().output_types(a)
        return [TensorType(dtype or t.dtype, t.shape) for t, dtype in zip(types, self.dtypes())]

    def perform(self, node, inputs, output_storage):
        (a,) = inputs
        if self.square:
            _check_square(self, a)
        xp, module = array_namespace(a), scipy_linalg(self)
        a = to_numpy(a).astype(float_dtype(node.inputs[0].dtype), copy=False)
        results = per_matrix(lambda m: self.compute_one(module, m), a)
        for cell, value, out in zip(output_storage, results, node.outputs):
            cell[0] = as_output(xp, xp.asarray(value), out.type)


class LU(ScipyLinalgOp):
    """``scipy.linalg.lu`` of a square matrix: ``(P, L, U)`` with ``A = P @ L @ U``; with
    ``p_indices`` the rows ``p`` (int32) with ``A = L[p] @ U``; with ``permute_l`` ``(P @ L, U)``."""

    __props__ = ("permute_l", "p_indices")

    def __init__(self, permute_l: bool = False, p_indices: bool = False):
        if permute_l and p_indices:
            raise ValueError("lu: permute_l and p_indices cannot both be True (each says where P goes)")
        self.permute_l, self.p_indices = bool(permute_l), bool(p_indices)

    def core_axes(self):
        if self.permute_l:
            return ("ss", "ss")
        return ("s", "ss", "ss") if self.p_indices else ("ss", "ss", "ss")

    def dtypes(self):
        return ("int32", None, None) if self.p_indices else super().dtypes()

    def output_kinds(self):
        # P holds zeros and ones: real (as SciPy's) for a complex matrix too
        return ("same", "same") if self.permute_l else ("real", "same", "same")

    def compute_one(self, module, a):
        return module.lu(a, permute_l=self.permute_l, p_indices=self.p_indices, check_finite=False)


class LUFactor(ScipyLinalgOp):
    """``scipy.linalg.lu_factor``: ``(LU, piv)``, ``L``'s strict lower triangle (its diagonal is ones)
    and ``U`` in one matrix, and the pivots (int32): row ``i`` was swapped with row ``piv[i]``."""

    def core_axes(self):
        return ("ss", "s")

    def dtypes(self):
        return (None, "int32")

    def compute_one(self, module, a):
        return module.lu_factor(a, check_finite=False)


class PivotedQR(ScipyLinalgOp):
    """``scipy.linalg.qr`` where NumPy's ``QR`` cannot: with column ``pivoting`` (the columns ``P``,
    int32, with ``A[:, P] = Q @ R``, after the other outputs) or in LAPACK's ``mode="raw"`` form:
    ``(H, tau, R)``, the Householder reflectors below ``H``'s diagonal, their scales and ``R``.
    ``mode`` is NumPy's: "reduced", "complete", "r" (``R`` of ``(K, N)``) or "raw"."""

    __props__ = ("mode", "pivoting")
    square = False

    def __init__(self, mode: str = "reduced", pivoting: bool = False):
        if mode not in QR_MODES:
            raise ValueError(f"qr: mode must be one of {sorted(QR_MODES)}, not {mode!r}")
        self.mode, self.pivoting = QR_MODES[mode], bool(pivoting)

    def core_axes(self):
        layouts = {"reduced": ("mk", "kn"), "complete": ("mm", "mn"), "r": ("kn",), "raw": ("mn", "k", "kn")}
        axes = layouts[self.mode]
        return (*axes, "n") if self.pivoting else axes

    def dtypes(self):
        return (*super().dtypes()[:-1], "int32") if self.pivoting else super().dtypes()

    def compute_one(self, module, a):
        scipy_mode = {"reduced": "economic", "complete": "full"}.get(self.mode, self.mode)
        out = module.qr(a, mode=scipy_mode, pivoting=self.pivoting, check_finite=False)
        out = out if isinstance(out, tuple) else (out,)
        if self.mode == "raw":  # SciPy's ((H, tau), R, ...): flat, as PyTensor's
            out = (*out[0], *out[1:])
        if self.mode == "r":  # SciPy's R has all M rows; NumPy's (this op's) the first K
            out = (out[0][: min(a.shape)], *out[1:])
        return out

    def flops(self, inputs, outputs):
        m, n = inputs[0][-2:]
        return _batch_count(inputs[0]) * 2 * int(m) * int(n) ** 2


#: qr's modes: NumPy's, and SciPy's names for them
QR_MODES = {"reduced": "reduced", "complete": "complete", "r": "r", "raw": "raw", "economic": "reduced",
            "full": "complete"}


#: the eigenvalues ``sort`` moves to the top left: SciPy's names (None: no sorting, here "")
SORTS = ("", "lhp", "rhp", "iuc", "ouc")


def _complex_dtype(dtype: str) -> str:
    return "complex64" if dtype in ("float32", "complex64") else "complex128"


def _check_schur_options(op, output, sort):
    if output not in ("real", "complex"):
        raise ValueError(f"{op}: output must be 'real' or 'complex', not {output!r}")
    if sort not in SORTS:
        raise ValueError(f"{op}: sort must be None, 'lhp', 'rhp', 'iuc' or 'ouc', not {sort!r}")


class Schur(ScipyLinalgOp):
    """``scipy.linalg.schur``: ``(T, Z)`` with ``A = Z @ T @ Z^H``, ``T`` quasi upper triangular
    (``output="real"``) or upper triangular and complex (``"complex"``); ``sort`` moves the
    eigenvalues it selects to the top left."""

    __props__ = ("output", "sort")

    def __init__(self, output: str = "real", sort: str = ""):
        _check_schur_options("schur", output, sort)
        self.output, self.sort = output, sort

    def core_axes(self):
        return ("ss", "ss")

    def output_kinds(self):
        return ("same", "same") if self.output == "real" else ("complex", "complex")

    def compute_one(self, module, a):
        return module.schur(a, output=self.output, sort=self.sort or None, check_finite=False)[:2]


class QZ(Op):
    """``scipy.linalg.qz`` (``ordqz`` when sorted): ``(AA, BB, Q, Z)`` with ``A = Q @ AA @ Z^H`` and
    ``B = Q @ BB @ Z^H``; with ``return_eigenvalues`` ``(AA, BB, alpha, beta, Q, Z)``, the
    generalized eigenvalues being ``alpha / beta``.  ``A`` and ``B`` are square matrices of one
    size, or stacks whose batch axes broadcast."""

    __props__ = ("output", "sort", "return_eigenvalues")

    def __init__(self, output: str = "real", sort: str = "", return_eigenvalues: bool = False):
        _check_schur_options("qz", output, sort)
        self.output, self.sort, self.return_eigenvalues = output, sort, bool(return_eigenvalues)

    def make_node(self, a, b):
        a, b = _matrix(self, a, arg="a", complex_ok=True), _matrix(self, b, arg="b", complex_ok=True)
        n = _square_size(a) if _square_size(a) is not None else _square_size(b)
        if None not in (_square_size(a), _square_size(b)) and _square_size(a) != _square_size(b):
            raise ValueError(f"{self}: A {a} of shape {a.type.shape} and B {b} of shape {b.type.shape} must be "
                             "matrices of the same size")
        dtype = float_dtype(np.result_type(float_dtype(a.dtype), float_dtype(b.dtype)).name)
        complex_dtype = _complex_dtype(dtype)
        dtype = complex_dtype if self.output == "complex" else dtype
        batch = _broadcast_batches(self, a, b)
        matrix = TensorType(dtype, (*batch, n, n))
        outputs = [matrix(), matrix()]
        if self.return_eigenvalues:
            outputs += [TensorType(complex_dtype, (*batch, n))(), TensorType(dtype, (*batch, n))()]
        return Apply(self, [a, b], outputs + [matrix(), matrix()])

    def perform(self, node, inputs, output_storage):
        xp, module = array_namespace(*inputs), scipy_linalg(self)
        dtype = np.result_type(*(float_dtype(x.dtype) for x in node.inputs))  # as make_node's
        a, b = (to_numpy(x).astype(dtype, copy=False) for x in inputs)
        for x in (a, b):
            _check_square(self, x)
        if a.shape[-1] != b.shape[-1]:
            raise ValueError(f"{self}: A of shape {a.shape} and B of shape {b.shape} must be matrices of the "
                             "same size")
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a, b = (np.broadcast_to(x, batch + x.shape[-2:]) for x in (a, b))
        results = per_matrix(lambda x, y: self._one(module, x, y), a, b)
        for cell, value, out in zip(output_storage, results, node.outputs):
            cell[0] = as_output(xp, xp.asarray(value), out.type)

    def _one(self, module, a, b):
        if self.sort:
            aa, bb, alpha, beta, q, z = module.ordqz(a, b, sort=self.sort, output=self.output, check_finite=False)
        elif self.return_eigenvalues:
            aa, bb, alpha, beta, q, z = self._gges(module, a, b)
        else:
            return module.qz(a, b, output=self.output, check_finite=False)
        return (aa, bb, alpha, beta, q, z) if self.return_eigenvalues else (aa, bb, q, z)

    def _gges(self, module, a, b):
        """LAPACK's gges, which ``qz`` calls, with the eigenvalues it computes (``qz`` drops them; ``ordqz``
        would scale a complex pair's ``alpha`` and ``beta`` otherwise, their ratio being the same)."""
        if self.output == "complex":
            a, b = (x.astype(_complex_dtype(x.dtype.name)) for x in (a, b))
        (gges,) = module.get_lapack_funcs(("gges",), (a, b))
        aa, bb, _, *eigenvalues, q, z, _, info = gges(lambda *args: None, a, b, sort_t=0)
        if info != 0:
            raise np.linalg.LinAlgError(f"{self}: the QZ iteration did not converge (LAPACK gges info={info})")
        if len(eigenvalues) == 3:  # real: alpha's real and imaginary parts apart
            real, imaginary, beta = eigenvalues
            return aa, bb, real + 1j * imaginary, beta, q, z
        return (aa, bb, *eigenvalues, q, z)

    def infer_shape(self, fgraph, node, shapes):
        batch, n = _broadcast_batch_shape(node, shapes), shapes[0][-1]
        matrix = (*batch, n, n)
        vectors = [(*batch, n)] * 2 if self.return_eigenvalues else []
        return [matrix, matrix, *vectors, matrix, matrix]

    def flops(self, inputs, outputs):
        return _batch_count(outputs[0]) * 30 * int(inputs[0][-1]) ** 3


class SolveLyapunov(Op):
    """SciPy's ``solve_continuous_lyapunov`` (``A X + X A^H = Q``) or, ``discrete``,
    ``solve_discrete_lyapunov`` (``X - A X A^H = Q``) for square ``A`` and ``Q`` of one size, or
    stacks whose batch axes broadcast; ``A^H`` is the conjugate transpose (``A^T`` of a real ``A``).
    Without SciPy NumPy solves the same equation written as one system of ``N^2`` unknowns
    (``kron``), which costs ``N^6``, not ``N^3``."""

    __props__ = ("discrete",)

    def __init__(self, discrete: bool = False):
        self.discrete = bool(discrete)

    def __str__(self):
        return f"SolveLyapunov{{{'discrete' if self.discrete else 'continuous'}}}"

    def make_node(self, a, q):
        a, q = _matrix(self, a, arg="a", complex_ok=True), _matrix(self, q, arg="q", complex_ok=True)
        n, m = _square_size(a), _square_size(q)
        if n is not None and m is not None and n != m:
            raise ValueError(f"{self}: A {a} of shape {a.type.shape} and Q {q} of shape {q.type.shape} must be "
                             "matrices of the same size")
        dtype = float_dtype(np.result_type(float_dtype(a.dtype), float_dtype(q.dtype)).name)
        size = n if n is not None else m
        return Apply(self, [a, q], [TensorType(dtype, (*_broadcast_batches(self, a, q), size, size))()])

    def perform(self, node, inputs, output_storage):
        xp = array_namespace(*inputs)
        dtype = node.outputs[0].type.dtype
        a, q = (to_numpy(x).astype(dtype, copy=False) for x in inputs)
        for x in (a, q):
            _check_square(self, x)
        if a.shape[-1] != q.shape[-1]:
            raise ValueError(f"{self}: A of shape {a.shape} and Q of shape {q.shape} must be matrices of the "
                             "same size")
        batch = np.broadcast_shapes(a.shape[:-2], q.shape[:-2])
        a, q = (np.broadcast_to(x, batch + x.shape[-2:]) for x in (a, q))
        module = optional_module("scipy.linalg")
        if module is None:
            x = self._by_kron(a, q)
        else:
            solver = module.solve_discrete_lyapunov if self.discrete else module.solve_continuous_lyapunov
            (x,) = per_matrix(lambda m, r: (solver(m, r),), a, q)
        output_storage[0][0] = as_output(xp, xp.asarray(x), node.outputs[0].type)

    def _by_kron(self, a, q):
        """The equation as ``K vec(X) = vec(Q)`` (rows of ``X`` one after another: ``vec(A X B) =
        (A kron B^T) vec(X)``)."""
        n = a.shape[-1]
        eye = np.eye(n, dtype=a.dtype)
        if self.discrete:  # X - A X A^H
            k = -np.einsum("...ik,...jl->...ijkl", a, a.conj()).reshape(a.shape[:-2] + (n * n,) * 2)
            k += np.eye(n * n, dtype=a.dtype)
        else:  # A X + X A^H
            k = np.einsum("...ik,jl->...ijkl", a, eye) + np.einsum("ik,...jl->...ijkl", eye, a.conj())
            k = k.reshape(a.shape[:-2] + (n * n,) * 2)
        return np.linalg.solve(k, q.reshape(q.shape[:-2] + (n * n, 1))).reshape(q.shape)

    def infer_shape(self, fgraph, node, shapes):
        n = shapes[0][-1]
        return [(*_broadcast_batch_shape(node, shapes), n, n)]

    def flops(self, inputs, outputs):
        return _batch_count(outputs[0]) * 25 * int(inputs[0][-1]) ** 3


def _broadcast_batch_shape(node, shapes) -> list:
    """The batch sizes of ``node``'s two stacks of matrices broadcast: the larger of each pair
    (the other is 1 or the same)."""
    width = node.outputs[0].ndim - 2
    padded = [(1,) * (width + 2 - len(shape)) + tuple(shape[:-2]) for shape in shapes]
    return [E["maximum"](x, y) for x, y in zip(*padded)]


class PivotsToPermutation(Op):
    """The rows ``perm`` (int64) with ``A[perm] = L @ U`` from ``lu_factor``'s pivots (a vector or a
    stack of them): the row swaps applied in order to ``arange(n)``."""

    __props__ = ()

    def make_node(self, piv):
        piv = as_tensor_variable(piv)
        if piv.ndim < 1 or not piv.dtype.startswith(("int", "uint")):
            raise TypeError(f"{self}: piv must be lu_factor's integer pivots (..., M), got {piv} of type "
                            f"{piv.type}")
        return Apply(self, [piv], [TensorType("int64", piv.type.shape)()])

    def perform(self, node, inputs, output_storage):
        (piv,) = inputs
        xp, piv = array_namespace(piv), to_numpy(piv)
        perm = np.broadcast_to(np.arange(piv.shape[-1]), piv.shape).copy()
        rows = perm.reshape(-1, piv.shape[-1])
        for row, swaps in zip(rows, piv.reshape(rows.shape)):
            for i, j in enumerate(swaps):
                row[i], row[j] = row[j], row[i]
        output_storage[0][0] = as_output(xp, xp.asarray(perm), node.outputs[0].type)

    def infer_shape(self, fgraph, node, shapes):
        return [shapes[0]]


def pivot_to_permutation(piv, inverse=False):
    """PyTensor's ``pivot_to_permutation``: from ``lu_factor``'s pivots, the rows ``p`` (int64) with
    ``A = L[p] @ U``, as ``scipy.linalg.lu(A, p_indices=True)`` gives them, or with ``inverse``
    the rows ``perm`` with ``A[perm] = L @ U``."""
    perm = PivotsToPermutation()(piv)
    return perm if inverse else argsort(perm, axis=-1)


def permutation_matrix(rows, dtype):
    """The matrix ``P`` (of ``dtype``) with ``P @ x = x[rows]`` (per vector of a stack of ``rows``)."""
    n = shape_of(rows)[-1]
    return cast(E["eq"](expand_dims(rows, -1), arange(n)), dtype)


# -- the user's functions ----------------------------------------------------------------------------
def lu(a, permute_l=False, check_finite=True, p_indices=False, overwrite_a=False):
    """SciPy's and PyTensor's ``lu``: ``(P, L, U)``, ``(p, L, U)`` or ``(P @ L, U)`` (see ``LU``).
    ``check_finite`` and ``overwrite_a`` have no effect."""
    return tuple(LU(permute_l, p_indices)(a))


def qr(a, mode="reduced", pivoting=False, overwrite_a=False, lwork=None):
    """NumPy's ``qr(a, mode)`` ("reduced", "complete", "r"), also with SciPy's mode names
    ("economic", "full"), "raw" (PyTensor's ``(H, tau, R)``) and column ``pivoting`` (SciPy's:
    the columns ``P``, last, with ``a[:, P] = Q @ R``).  ``overwrite_a`` and ``lwork`` have no effect."""
    if mode not in QR_MODES:
        raise ValueError(f"qr: mode must be one of {sorted(QR_MODES)}, not {mode!r}")
    mode = QR_MODES[mode]
    op = PivotedQR(mode, pivoting) if pivoting or mode == "raw" else QR(mode)
    out = op(a)
    return out if isinstance(out, TensorVariable) else list(out)  # a list, as PyTensor's multi-output ops return


def schur(a, output="real", sort=None):
    """SciPy's and PyTensor's ``schur``: ``(T, Z)`` with ``a = Z @ T @ Z^H`` (see ``Schur``).  No gradient."""
    return tuple(Schur(output, sort or "")(a))


def qz(a, b, output="real", sort=None, return_eigenvalues=False):
    """PyTensor's ``qz`` (SciPy's ``qz``, or ``ordqz`` when sorted): ``(AA, BB, Q, Z)``, or with
    ``return_eigenvalues`` ``(AA, BB, alpha, beta, Q, Z)``.  No gradient."""
    return tuple(QZ(output, sort or "", return_eigenvalues)(a, b))


def ordqz(a, b, sort=None, output="real"):
    """PyTensor's ``ordqz``: ``qz`` with the eigenvalues, ``(AA, BB, alpha, beta, Q, Z)``."""
    return qz(a, b, output=output, sort=sort, return_eigenvalues=True)


def solve_continuous_lyapunov(a, q):
    """``X`` with ``a @ X + X @ a^H = q`` (SciPy's ``solve_continuous_lyapunov``; ``a^H`` is the
    conjugate transpose, ``a.T`` of a real ``a``)."""
    return SolveLyapunov(discrete=False)(a, q)


def solve_discrete_lyapunov(a, q, method="bilinear"):
    """``X`` with ``X - a @ X @ a^H = q`` (SciPy's ``solve_discrete_lyapunov``).  ``method``,
    PyTensor's "direct" or "bilinear", picks how it is computed there: here SciPy's solver (or
    without SciPy NumPy's ``solve`` of the ``N^2`` system) gives the result for both."""
    if method not in ("direct", "bilinear"):
        raise ValueError(f"solve_discrete_lyapunov: method must be 'direct' or 'bilinear', not {method!r}")
    return SolveLyapunov(discrete=True)(a, q)


def lu_factor(a, *, check_finite=True, overwrite_a=False):
    """SciPy's and PyTensor's ``lu_factor``: ``(LU, piv)``, for ``lu_solve``."""
    return tuple(LUFactor()(a))


def lu_solve(lu_and_piv, b, trans=0, b_ndim=None, check_finite=True, overwrite_b=False):
    """``x`` with ``A @ x = b`` (``trans`` 1/True or 2: ``A.T @ x = b``) from ``lu_factor(A)``.

    ``b`` as in ``solve``: a vector ``(M,)``, matrices ``(..., M, K)``, or with ``b_ndim=1``
    vectors ``(..., M)``."""
    lu_matrix, piv = lu_and_piv
    lu_matrix, b = _matrix("lu_solve", lu_matrix, arg="lu"), as_tensor_variable(b)
    if b.dtype.startswith("complex"):  # the real factors' solves would drop the imaginary part
        raise TypeError(f"lu_solve: complex right-hand sides are not supported yet (b {b} is {b.dtype})")
    if trans not in (0, 1, 2):  # False and True are 0 and 1, as in PyTensor
        raise ValueError(f"lu_solve: trans must be 0, 1 or 2 (or a bool), not {trans!r}")
    if b_ndim not in (None, 1, 2) or b.ndim == 0 or (b_ndim == 2 and b.ndim < 2):
        raise ValueError(f"lu_solve: b must be a vector (M,) or matrices (..., M, K) with b_ndim None, 1 or 2, got b "
                         f"{b} of {b.ndim} dimensions and b_ndim={b_ndim!r}")
    vectors = b.ndim == 1 or b_ndim == 1
    x = expand_dims(b, -1) if vectors else b  # columns: each solve below reads b as matrices
    p = permutation_matrix(PivotsToPermutation()(piv), float_dtype(lu_matrix.dtype))  # A = P^T L U
    if trans:  # U^T L^T P x = b
        x = solve_triangular(lu_matrix, x, lower=False, trans=1)
        x = matrix_transpose(p) @ solve_triangular(lu_matrix, x, lower=True, trans=1, unit_diagonal=True)
    else:
        x = solve_triangular(lu_matrix, p @ x, lower=True, unit_diagonal=True)
        x = solve_triangular(lu_matrix, x, lower=False)
    return squeeze(x, axis=-1) if vectors else x


__all__ = ["LU", "LUFactor", "PivotedQR", "PivotsToPermutation", "QR_MODES", "QZ", "Schur", "ScipyLinalgOp",
           "SolveLyapunov", "lu", "lu_factor", "lu_solve", "ordqz", "permutation_matrix", "pivot_to_permutation", "qr", "qz", "schur",
           "scipy_linalg", "solve_continuous_lyapunov", "solve_discrete_lyapunov"]
