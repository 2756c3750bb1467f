"""Vector-Jacobian products of ``eqgraph.tensor.linalg``'s ops: entries of the table in ``vjps.py``.

Ops that read one triangle of their matrix (``cholesky``, ``eigh``, the symmetric and triangular
solves) give the gradient of what they read: the cotangent of the matrix they really used,
folded onto that triangle.  Formulas: Murray 2016 (Cholesky), de Hoog, Anderssen & Lukas 2011
(LU), Townsend 2016 (SVD), Seeger et al. 2017 (QR; wide matrices split as Liao et al. 2019),
Golub & Pereyra 1973 (pseudo-inverse, and least squares through it), Mathias 1996 (the matrix
exponential), Kao & Hennequin 2020 (the discrete Riccati equation); a Lyapunov or Sylvester
solve's is the solve of its adjoint equation.

Every formula works on stacks of matrices ``(..., M, N)`` as on one matrix: transposes swap the
last two axes only, products are batched matmuls, diagonal matrices are built per matrix, and a
cotangent whose batch axes were broadcast (a solve's ``A`` and ``b``) is summed back.
"""

from __future__ import annotations

import eqgraph.tensor as et
from eqgraph.grad.vjps import entry
from eqgraph.tensor.linalg import QR, SVD, Pinv, Solve, inv, qr, solve, solve_triangular
from eqgraph.tensor.linalg.control import SolveSylvester
from eqgraph.tensor.linalg.least_squares import Lstsq
from eqgraph.tensor.linalg.lapack import (LU, QZ, PivotedQR, PivotsToPermutation, Schur, SolveLyapunov,
                                          permutation_matrix)
from eqgraph.tensor.linalg.matrix_functions import Expm
from eqgraph.terms.null_type import disconnected, grad_not_implemented

E = et.ELEMWISE_OPS


_T = et.matrix_transpose


def _eye_like(x, dtype=None):
    """The identity matrix of the size of ``x``'s last axis (it broadcasts against a stack)."""
    return et.eye(et.shape_of(x)[-1], dtype=dtype or x.dtype)


def _on_diagonal(x, like):
    """``x`` (broadcast) on the diagonal of each matrix, zeros elsewhere; a switch, not a product
    with the identity, so that an infinite ``x`` leaves no NaN off the diagonal."""
    return E["switch"](_eye_like(like, "bool"), x, et.zeros_like(x))


def _diag_of(x):
    """``x``'s diagonal as a diagonal matrix (per matrix of a stack)."""
    return _on_diagonal(x, x)


def _diag(v):
    """The diagonal matrix of the vector ``v`` (per vector of a stack)."""
    return _on_diagonal(_column(v), v)


def _row(v):
    """``v[..., None, :]``: the last axis of ``v`` as a row."""
    return et.expand_dims(v, -2)


def _column(v):
    """``v[..., :, None]``: the last axis of ``v`` as a column."""
    return et.expand_dims(v, -1)


def _scalar_per_matrix(g):
    """``g[..., None, None]``: one value per matrix of a stack, broadcast over its matrix."""
    return _column(_column(g))


def _sum_to(g, like):
    """The cotangent ``g`` of a value broadcast from ``like``'s shape, summed back to it."""
    if g.ndim > like.ndim:
        g = et.sum(g, axis=tuple(range(g.ndim - like.ndim)))
    return et.sum_to_shape(g, like) if like.ndim > 2 else g


def _fold(g, lower: bool):
    """The cotangent of a matrix whose ``lower`` (upper) triangle was mirrored into a symmetric one."""
    return (et.tril if lower else et.triu)(g + _T(g)) - _diag_of(g)


def _or_zeros(g, like):
    return et.zeros_like(like) if g is None else g


@entry("MatrixInverse", 1)
def _inverse(g, out, a):
    return [-(_T(out) @ g @ _T(out))]


@entry("Det", 1)
def _det(g, out, a):
    return [_scalar_per_matrix(g * out) * _T(inv(a))]


@entry("SlogDet", 1, all_outputs=True)
def _slogdet(gs, outs, a):
    _, g_log = gs  # the sign is piecewise constant
    return [None if g_log is None else _scalar_per_matrix(g_log) * _T(inv(a))]


@entry("Cholesky", 1)
def _cholesky(g, out, a, lower):
    chol, g = (out, g) if lower else (_T(out), _T(g))  # work with the lower factor: A = L L^T

    def halved(m):  # tril(m) with its diagonal halved
        return et.tril(m) - 0.5 * _diag_of(m)

    # s = L^-T phi(L^T g) L^-1, then symmetrize onto the lower triangle, the one NumPy reads
    inner = halved(_T(chol) @ g)
    s = solve_triangular(chol, _T(solve_triangular(chol, _T(inner), lower=True, trans=1)), lower=True, trans=1)
    return [_fold(s, lower=True)]


@entry("Eigh", 1, all_outputs=True)
def _eigh(gs, outs, a, uplo):
    g_w, g_v = gs
    w, v = outs
    # G = V (diag(g_w) + E * (V^T g_v)) V^T with E_ij = 1 / (w_j - w_i) off the diagonal
    middle = et.zeros_like(v) if g_w is None else _diag(g_w)
    if g_v is not None:
        eye = _eye_like(v)
        gaps = _row(w) - _column(w)
        middle = middle + (1 - eye) / (gaps + eye) * (_T(v) @ g_v)
    return [_fold(v @ middle @ _T(v), uplo == "L")]


@entry("SVD", 1, all_outputs=True)
def _svd(gs, outs, a, full_matrices, compute_uv):
    if not compute_uv:
        u, s, vh = SVD(False, True)(a)
        return [(u * _row(gs[0])) @ vh]
    g_u, g_s, g_vh = gs
    u, s, vh = outs
    m, n = a.type.shape[-2:]
    if full_matrices and (g_u is not None or g_vh is not None) and (m is None or m != n):
        return [grad_not_implemented(SVD(full_matrices, compute_uv), 0, a,
                                     "U and Vh of svd(full_matrices=True) of a matrix that may not be square; "
                                     "use full_matrices=False")]
    v = _T(vh)
    s_row, s_col = _row(s), _column(s)
    eye = _eye_like(s)
    f = (1 - eye) / (s_row * s_row - s_col * s_col + eye)  # F_ij = 1 / (s_j^2 - s_i^2)
    middle = et.zeros_like(f) if g_s is None else _diag(g_s)
    result = None
    if g_u is not None:
        middle = middle + (f * (_T(u) @ g_u - _T(g_u) @ u)) * s_row
        result = (g_u - u @ (_T(u) @ g_u)) / s_row @ vh  # the part outside U's span
    if g_vh is not None:
        g_v = _T(g_vh)
        middle = middle + s_col * (f * (_T(v) @ g_v - _T(g_v) @ v))
        outside = (u / s_row) @ _T(g_v - v @ (_T(v) @ g_v))
        result = outside if result is None else result + outside
    core = u @ middle @ vh
    return [core if result is None else core + result]


@entry("QR", 1, all_outputs=True)
def _qr(gs, outs, a, mode):
    q, r = (None, outs[0]) if mode == "r" else outs
    g_q, g_r = (None, gs[0]) if mode == "r" else gs
    m, n = a.type.shape[-2:]
    if mode == "complete" and g_q is not None and m is not None and n is not None and m > n:
        return [grad_not_implemented(QR(mode), 0, a, f"qr(mode='complete') of a matrix of static shape "
                                     f"{a.type.shape}: the last m - n columns of Q are not unique; use mode='reduced'")]
    if q is None:  # mode "r": Q is needed by the formula
        q = qr(a)[0]
    g_q, g_r = _or_zeros(g_q, q), _or_zeros(g_r, r)
    if m is not None and n is not None and m >= n and mode != "complete":
        return [_qr_tall(q, r, g_q, g_r)]
    rows, cols = et.shape_of(a)[-2:]
    k = min(m, n) if m is not None and n is not None else E["minimum"](rows, cols)
    if mode == "complete":  # the reduced factors: Q's first K columns, R's first K rows
        q, r, g_q, g_r = q[..., :k], r[..., :k, :], g_q[..., :k], g_r[..., :k, :]
        if gs[0] is not None and (m is None or n is None):  # Q's gradient: only where M <= N
            g_q = _checked_square_or_wide(g_q, rows, cols)
    return [_qr_general(a, q, r, g_q, g_r, k)]


def _checked_square_or_wide(g_q, rows, cols):
    """``g_q``, checked at run time to belong to a matrix with no more rows than columns: the last
    M - N columns of a tall matrix's complete Q are not unique, so no gradient flows through them."""
    why = ("the gradient of qr(mode='complete')'s Q is not defined for a matrix with more rows than columns: "
           "its last M - N columns are not unique; use mode='reduced'")
    return et.check_and_raise(g_q, E["le"](rows, cols), exc_type=ValueError, msg=why)


def _qr_general(a, q, r, g_q, g_r, k):
    """The cotangent of ``A = Q R`` for any full-rank ``A`` (M x N) from those of its reduced factors
    ``Q`` (M x K) and ``R`` (K x N), K = min(M, N). ``A = [X | Y]`` with ``X`` its first K columns:
    ``X = Q U`` is a square or tall QR (``R = [U | V]``) and ``V = Q^T Y``; for a square or tall
    ``A``, ``Y`` and ``V`` have no columns and this is the tall formula."""
    y, g_u, g_v = a[..., k:], g_r[..., :k], g_r[..., k:]
    g_x = _qr_tall(q, r[..., :k], g_q + y @ _T(g_v), g_u)
    return et.concatenate([g_x, q @ g_v], axis=-1)


def _qr_tall(q, r, g_q, g_r):
    """The cotangent of A = Q R for a square or tall A of full rank (Q: m x n, R: n x n)."""
    m_ = r @ _T(g_r) - _T(g_q) @ q
    copyltu = et.tril(m_, -1) + _T(et.tril(m_, -1)) + _diag_of(m_)
    rhs = g_q + q @ copyltu  # gA = rhs R^-T
    return _T(solve_triangular(r, _T(rhs), lower=False))


@entry("Pinv", 1)
def _pinv(g, out, a):
    p = out
    left = _eye_like(a @ p) - a @ p     # I - A A+
    right = _eye_like(p @ a) - p @ a    # I - A+ A
    return [-(_T(p) @ g @ _T(p)) + left @ _T(g) @ p @ _T(p) + _T(p) @ p @ _T(g) @ right]


@entry("Lstsq", 3, all_outputs=True)
def _lstsq(gs, outs, a, b, rcond):
    g_x, g_residuals, _, g_s = gs  # the rank is piecewise constant
    if g_residuals is not None or g_s is not None:
        why = "only x, the solution, has a gradient here (of the residuals and singular values: not implemented)"
        return [grad_not_implemented(Lstsq(), 0, a, why), grad_not_implemented(Lstsq(), 1, b, why), disconnected()]
    # x = pinv(a) @ b where a's rank does not change: the gradient of the pseudo-inverse's product
    p = Pinv()(a)
    columns = (_column(g_x), _column(b)) if b.ndim == 1 else (g_x, b)
    g_a = _pinv(columns[0] @ _T(columns[1]), p, a)[0]
    return [g_a, _T(p) @ g_x, disconnected()]


@entry("Solve", 2)
def _solve(g, out, a, b, assume_a, lower, triangular, trans, unit_diagonal):
    # with a vector b, x and its cotangent are a vector per matrix of A: solve them as columns
    x, g = (_column(out), _column(g)) if b.ndim == 1 else (out, g)
    if triangular:
        g_b = Solve(assume_a, lower, True, not trans, unit_diagonal)(a, g)
    elif assume_a == "gen":
        g_b = Solve("gen")(_T(a), g)
    else:  # the symmetric matrix solved with is its own transpose
        g_b = Solve(assume_a, lower)(a, g)
    g_used = -(g_b @ _T(x))  # the cotangent of the matrix the system was solved with
    g_b = _sum_to(et.squeeze(g_b, axis=-1) if b.ndim == 1 else g_b, b)
    if triangular:
        g_used = _T(g_used) if trans else g_used
        g_a = (et.tril if lower else et.triu)(g_used)
        g_a = g_a - _diag_of(g_a) if unit_diagonal else g_a
    elif assume_a in ("sym", "pos"):
        g_a = _fold(g_used, lower)
    else:
        g_a = g_used
    return [_sum_to(g_a, a), g_b]


@entry("LU", 1, all_outputs=True)
def _lu(gs, outs, a, permute_l, p_indices):
    if permute_l:  # (P L, U): P is piecewise constant, so L's cotangent is P^T times P L's
        p, l, u = LU()(a)
        g_l = None if gs[0] is None else _T(p) @ gs[0]
        g_u = gs[1]
    else:
        p, l, u = outs
        p = permutation_matrix(p, l.dtype) if p_indices else p  # A = L[p] @ U = P L U
        g_l, g_u = gs[1], gs[2]
    return [p @ _lu_cotangent(l, u, _or_zeros(g_l, l), _or_zeros(g_u, u))]


@entry("LUFactor", 1, all_outputs=True)
def _lu_factor(gs, outs, a):
    packed, piv = outs
    g = _or_zeros(gs[0], packed)  # the pivots are piecewise constant
    l, u = et.tril(packed, -1) + _eye_like(packed), et.triu(packed)
    p = permutation_matrix(PivotsToPermutation()(piv), packed.dtype)  # A[perm] = L U: A = P^T L U
    return [_T(p) @ _lu_cotangent(l, u, et.tril(g, -1), et.triu(g))]


def _lu_cotangent(l, u, g_l, g_u):
    """The cotangent of ``B = L U`` (``L`` unit lower, ``U`` upper triangular) from those of ``L``
    and ``U``: ``L^-T (tril(L^T g_L, -1) + triu(g_U U^T)) U^-T``."""
    middle = et.tril(_T(l) @ g_l, -1) + et.triu(g_u @ _T(u))
    left = solve_triangular(l, middle, lower=True, trans=1, unit_diagonal=True)
    return _T(solve_triangular(u, _T(left), lower=False))


@entry("PivotedQR", 1, all_outputs=True)
def _pivoted_qr(gs, outs, a, mode, pivoting):
    if mode == "raw":
        return [grad_not_implemented(PivotedQR(mode, pivoting), 0, a, "qr(mode='raw') returns LAPACK's Householder "
                                     "reflectors, whose gradient is not implemented; use mode='reduced'")]
    # the QR of A's columns permuted, A[:, P] = A M^T: its cotangent, permuted back
    m = permutation_matrix(outs[-1], a.dtype if a.dtype.startswith("float") else outs[0].dtype)
    permuted = et.specify_shape(a @ _T(m), a.type.shape)
    return [_qr(gs[:-1], outs[:-1], permuted, mode)[0] @ m]


@entry("SolveLyapunov", 2)
def _solve_lyapunov(g, out, a, q, discrete):
    # X = L^-1(Q) for the linear map L; Q's cotangent is the adjoint map's solve, with A^T (real
    # matrices: L holds A's conjugate, so the driver refuses complex values here)
    g_q = SolveLyapunov(discrete)(_T(a), g)
    if discrete:  # L(X) = X - A X A^T
        g_a = g_q @ a @ _T(out) + _T(g_q) @ a @ out
    else:  # L(X) = A X + X A^T
        g_a = -(g_q @ _T(out) + _T(g_q) @ out)
    return [_sum_to(g_a, a), _sum_to(g_q, q)]


@entry("SolveSylvester", 3)
def _solve_sylvester(g, out, a, b, q):
    # X = L^-1(Q) for L(X) = A X + X B; the adjoint map is L*(S) = A^T S + S B^T
    s = SolveSylvester()(_T(a), _T(b), g)
    return [_sum_to(-(s @ _T(out)), a), _sum_to(-(_T(out) @ s), b), _sum_to(s, q)]


@entry("SolveDiscreteARE", 4)
def _solve_discrete_are(g, out, a, b, q, r):
    # X = A~^T X A~ + K^T R K + Q with the gain K = (R + B^T X B)^-1 B^T X A and A~ = A - B K: a
    # change of X solves the Lyapunov map Y - A~^T Y A~, so the cotangent S solves its adjoint,
    # S - A~ S A~^T = sym(g) (X is symmetric: only g's symmetric part reaches it)
    x = out
    gain = solve(r + _T(b) @ x @ b, _T(b) @ x @ a)
    closed = a - b @ gain
    s = SolveLyapunov(discrete=True)(closed, 0.5 * (g + _T(g)))
    x_closed_s = x @ closed @ s
    return [_sum_to(2 * x_closed_s, a), _sum_to(-2 * x_closed_s @ _T(gain), b), _sum_to(s, q),
            _sum_to(gain @ s @ _T(gain), r)]


@entry("Expm", 1)
def _expm(g, out, a):
    # the Frechet derivative L(A, E) of exp is the top right block of exp([[A, E], [0, A]]), and
    # the adjoint of E -> L(A, E) is E -> L(A^T, E) (Mathias 1996)
    a_t = _T(a)
    top = et.concatenate([a_t, g], axis=-1)
    bottom = et.concatenate([et.zeros_like(a_t), a_t], axis=-1)
    n = et.shape_of(a)[-1]
    return [Expm()(et.concatenate([top, bottom], axis=-2))[..., :n, n:]]


@entry("Schur", 1, all_outputs=True)
def _schur(gs, outs, a, output, sort):
    return [grad_not_implemented(Schur(output, sort), 0, a, "the Schur vectors are not unique (nor is a real "
                                 "Schur form's ordering of 2x2 blocks); PyTensor has no gradient either")]


@entry("QZ", 2, all_outputs=True)
def _qz(gs, outs, a, b, output, sort, return_eigenvalues):
    op = QZ(output, sort, return_eigenvalues)
    why = "the generalized Schur vectors are not unique; PyTensor has no gradient either"
    return [grad_not_implemented(op, 0, a, why), grad_not_implemented(op, 1, b, why)]
