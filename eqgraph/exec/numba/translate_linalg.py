"""The whole Numba function's forms of ``Cholesky`` and ``Solve`` (``numba_program``'s
``TRANSLATIONS`` lists them), for float64 matrices.

``Cholesky`` is Numba's ``np.linalg.cholesky`` (LAPACK's ``potrf``, through SciPy's LAPACK): a
matrix that is not positive definite raises, and the caller runs the program, whose node raises
NumPy's ``LinAlgError``.  A general ``Solve`` is Numba's ``np.linalg.solve`` (``gesv``), as the op's
NumPy path.  A triangular solve calls LAPACK's ``trtrs`` through the function pointer SciPy's
``cython_lapack`` exports, the routine ``scipy.linalg.solve_triangular`` calls, so the whole
function and the program agree bit for bit at every size; a zero on the diagonal raises as SciPy's
does.  LAPACK blocks its sums, so ``potrf`` and ``gesv`` agree with the program to rounding (a few
ulps), not always to the last bit, like ``matmul``.
"""

from __future__ import annotations

import numpy as np

from eqgraph.exec.numba.kernels import numba
from eqgraph.exec.numba.translate_basic import one_of_a_stack


def _float64(node) -> bool:
    return all(v.dtype == "float64" for v in (*node.inputs, *node.outputs))


def cholesky(w, node):
    (a,), out = node.inputs, node.outputs[0]
    if a.ndim != 2 or not _float64(node):
        return None
    factor = f"np.linalg.cholesky(np.ascontiguousarray({w.value(a)}))"
    return [f"{w.define(out)} = {factor if node.op.lower else f'np.ascontiguousarray({factor}.T)'}"]


def solve(w, node):
    op, (a, b), out = node.op, node.inputs, node.outputs[0]
    if a.ndim == 3:
        return one_of_a_stack(w, node, _solve_as_numpy) if _float64(node) else None
    if a.ndim != 2 or b.ndim not in (1, 2) or not _float64(node):
        return None
    if op.triangular:
        if solve_triangular_1d is None:   # no SciPy LAPACK: the program's node
            return None
        return [f"{w.define(out)} = solve_triangular_{b.ndim}d({w.value(a)}, {w.value(b)}, "
                f"{bool(op.lower)}, {bool(op.trans)}, {bool(op.unit_diagonal)})"]
    if op.assume_a != "gen":
        return None
    return [f"{w.define(out)} = np.linalg.solve(np.ascontiguousarray({w.value(a)}), "
            f"np.ascontiguousarray({w.value(b)}))"]


def _solve_as_numpy(w, node):
    """A ``Solve`` of one matrix of a stack as the op solves stacks: NumPy's ``solve`` (``gesv``)
    of the matrix it uses (``Solve.matrix``: the triangle, its unit diagonal, transposed), not the
    triangular routine, so that the values are the program's."""
    op, (a, b), out = node.op, node.inputs, node.outputs[0]
    if op.triangular:
        matrix = f"np.tril({w.value(a)})" if op.lower else f"np.triu({w.value(a)})"
        if op.unit_diagonal:
            t = w.fresh("u")
            lines = [f"{t} = {matrix}",
                     f"{t} = {t} - ({t} - np.tril({t}, -1) - np.triu({t}, 1)) + np.eye({t}.shape[1])"]
        else:
            t, lines = matrix, []
        matrix = f"{t}.T" if op.trans else t
    elif op.assume_a == "gen":
        matrix, lines = w.value(a), []
    else:
        return None
    return [*lines, f"{w.define(out)} = np.linalg.solve(np.ascontiguousarray({matrix}), np.ascontiguousarray({w.value(b)}))"]


HELPERS = ("solve_triangular_1d", "solve_triangular_2d")


#: the symbol Numba's code calls LAPACK's ``dtrtrs`` by: a name, not an address, so that
#: compiled functions calling it can be cached on disk (the address is registered at import)
_TRTRS = "eqgraph_dtrtrs"


def _register_trtrs() -> bool:
    """Registers SciPy's ``dtrtrs`` under ``_TRTRS``; False without SciPy's LAPACK."""
    try:
        address = numba.extending.get_cython_function_address("scipy.linalg.cython_lapack", "dtrtrs")
    except (ImportError, ValueError):
        return False
    import llvmlite.binding

    llvmlite.binding.add_symbol(_TRTRS, address)
    return True


if numba is not None and _register_trtrs():
    from numba.core import cgutils, types

    _njit = numba.njit(cache=True, error_model="numpy")
    _int_p, _double_p = types.CPointer(types.int32), types.CPointer(types.float64)
    _dtrtrs = types.ExternalFunction(_TRTRS, types.void(*[_int_p] * 5, _double_p, _int_p, _double_p, _int_p, _int_p))

    @numba.extending.intrinsic
    def _int_pointer(typingctx, value):
        """A pointer to a copy of the int32 ``value`` in the caller's frame: LAPACK takes every
        argument by reference."""
        def codegen(context, builder, signature, args):
            return cgutils.alloca_once_value(builder, args[0])
        return _int_p(types.int32), codegen

    @numba.extending.intrinsic
    def _data(typingctx, array):
        """The pointer to the first element of a float64 ``array``."""
        def codegen(context, builder, signature, args):
            return context.make_array(signature.args[0])(context, builder, args[0]).data
        return _double_p(array), codegen

    @_njit
    def _solve_columns(a, x, lower, trans, unit):
        """Solves in place in the Fortran-ordered columns of ``x`` with the triangle of ``a``.
        LAPACK reads memory column by column: a Fortran-ordered ``a`` as itself, any other as
        its C-contiguous copy, which it reads as ``a.T`` (the other triangle, transposed the other
        way)."""
        if a.shape[0] != a.shape[1] or a.shape[0] != x.shape[0]:
            raise ValueError("solve: A must be square with as many rows as b")
        if a.shape[0] == 0 or x.shape[1] == 0:
            return
        fortran = a.flags.f_contiguous and not a.flags.c_contiguous
        memory = np.ascontiguousarray(a.T) if fortran else np.ascontiguousarray(a)
        read_lower, read_trans = (lower, trans) if fortran else (not lower, not trans)
        uplo = np.int32(ord("L") if read_lower else ord("U"))
        op = np.int32(ord("T") if read_trans else ord("N"))
        diag = np.int32(ord("U") if unit else ord("N"))
        n, info = np.int32(a.shape[0]), np.zeros(1, dtype=np.int32)
        _dtrtrs(_int_pointer(uplo), _int_pointer(op), _int_pointer(diag), _int_pointer(n),
                _int_pointer(np.int32(x.shape[1])), _data(memory), _int_pointer(n), _data(x), _int_pointer(n),
                info.ctypes)
        if info[0] > 0:
            raise np.linalg.LinAlgError("singular matrix: a zero on the diagonal")

    @_njit
    def solve_triangular_1d(a, b, lower, trans, unit):
        x = np.empty((b.shape[0], 1))
        x[:, 0] = b
        _solve_columns(a, x, lower, trans, unit)
        return x[:, 0]

    @_njit
    def solve_triangular_2d(a, b, lower, trans, unit):
        x = np.empty((b.shape[1], b.shape[0])).T   # a fresh Fortran-ordered copy: LAPACK's columns
        x[:, :] = b
        _solve_columns(a, x, lower, trans, unit)
        return x
else:
    solve_triangular_1d = solve_triangular_2d = None
