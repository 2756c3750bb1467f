"""Vector-Jacobian products of ``eqgraph.tensor.linalg``'s ops: entries of the table in ``vjps.py``.

Ops that read one triangle of their matrix (``cholesky``, ``eigh``, the symmetric and triangular
solves) give the gradient of what they read: the cotangent of the matrix they really used,
folded onto that triangle.  Formulas: Murray 2016 (Cholesky), Townsend 2016 (SVD), Seeger et al.
2017 (QR), Golub & Pereyra 1973 (pseudo-inverse).
"""

from __future__ import annotations

import eqgraph.tensor as et
from eqgraph.grad.types import grad_not_implemented
from eqgraph.grad.vjps import entry
from eqgraph.tensor.linalg import QR, SVD, Solve, inv, qr, solve_triangular

E = et.ELEMWISE_OPS


def _T(x):
    return et.transpose(x)


def _diag_of(x):
    """``x``'s diagonal as a diagonal matrix."""
    return et.diag(et.diagonal(x))


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
    return [g * out * _T(inv(a))]


@entry("SlogDet", 1, all_outputs=True)
def _slogdet(gs, outs, a):
    _, g_log = gs  # the sign is piecewise constant
    return [None if g_log is None else g_log * _T(inv(a))]


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
    middle = et.zeros_like(v) if g_w is None else et.diag(g_w)
    if g_v is not None:
        eye = et.identity_like(v)
        gaps = et.dimshuffle(w, ("x", 0)) - et.dimshuffle(w, (0, "x"))
        middle = middle + (1 - eye) / (gaps + eye) * (_T(v) @ g_v)
    return [_fold(v @ middle @ _T(v), uplo == "L")]


@entry("SVD", 1, all_outputs=True)
def _svd(gs, outs, a, full_matrices, compute_uv):
    if not compute_uv:
        u, s, vh = SVD(False, True)(a)
        return [(u * et.dimshuffle(gs[0], ("x", 0))) @ vh]
    g_u, g_s, g_vh = gs
    u, s, vh = outs
    m, n = a.type.shape
    if full_matrices and (g_u is not None or g_vh is not None) and (m is None or m != n):
        return [grad_not_implemented(SVD(full_matrices, compute_uv), 0, a,
                                     "U and Vh of svd(full_matrices=True) of a matrix that may not be square; "
                                     "use full_matrices=False")]
    v = _T(vh)
    s_row, s_col = et.dimshuffle(s, ("x", 0)), et.dimshuffle(s, (0, "x"))
    eye = et.identity_like(et.diag(s))
    f = (1 - eye) / (s_row * s_row - s_col * s_col + eye)  # F_ij = 1 / (s_j^2 - s_i^2)
    middle = et.zeros_like(eye) if g_s is None else et.diag(g_s)
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
    m, n = a.type.shape
    if m is None or n is None or m < n or (mode == "complete" and m != n) or (mode == "r" and m != n):
        return [grad_not_implemented(QR(mode), 0, a, f"qr(mode={mode!r}) of a matrix whose static shape "
                                     f"{a.type.shape} is not known to be square or tall (reduced)")]
    if q is None:  # mode "r" of a square matrix: Q is needed by the formula
        q = qr(a)[0]
    g_q, g_r = _or_zeros(g_q, q), _or_zeros(g_r, r)
    m_ = r @ _T(g_r) - _T(g_q) @ q
    copyltu = et.tril(m_, -1) + _T(et.tril(m_, -1)) + _diag_of(m_)
    rhs = g_q + q @ copyltu  # gA = rhs R^-T
    return [_T(solve_triangular(r, _T(rhs), lower=False))]


@entry("Pinv", 1)
def _pinv(g, out, a):
    p = out
    left = et.identity_like(a @ p) - a @ p     # I - A A+
    right = et.identity_like(p @ a) - p @ a    # I - A+ A
    return [-(_T(p) @ g @ _T(p)) + left @ _T(g) @ p @ _T(p) + _T(p) @ p @ _T(g) @ right]


@entry("Solve", 2)
def _solve(g, out, a, b, assume_a, lower, triangular, trans, unit_diagonal):
    if triangular:
        g_b = Solve(assume_a, lower, True, not trans, unit_diagonal)(a, g)
    elif assume_a == "gen":
        g_b = Solve("gen")(_T(a), g)
    else:  # the symmetric matrix solved with is its own transpose
        g_b = Solve(assume_a, lower)(a, g)
    x, gb2 = (et.dimshuffle(out, (0, "x")), et.dimshuffle(g_b, (0, "x"))) if out.ndim == 1 else (out, g_b)
    g_used = -(gb2 @ _T(x))  # the cotangent of the matrix the system was solved with
    if triangular:
        g_used = _T(g_used) if trans else g_used
        g_a = (et.tril if lower else et.triu)(g_used)
        return [g_a - _diag_of(g_a) if unit_diagonal else g_a, g_b]
    if assume_a in ("sym", "pos"):
        return [_fold(g_used, lower), g_b]
    return [g_used, g_b]
