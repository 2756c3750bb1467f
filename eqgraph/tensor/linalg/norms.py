"""``norm``: NumPy's vector and matrix norms, written with the ordinary ops and ``svd``."""

from __future__ import annotations

import numpy as np

from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.tensor.elemwise import ELEMWISE_OPS as E
from eqgraph.tensor.linalg.core import real_dtype, svd
from eqgraph.tensor.math import max as max_, min as min_, sum as sum_
from eqgraph.tensor.shape import dimshuffle
from eqgraph.tensor.type import COMPLEX_DTYPES, FLOAT_DTYPES


def norm(x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm``: vector norms over one axis, matrix norms over two; without ``axis`` the
    norm of a vector, of a matrix, or, as PyTensor's, of each matrix of a stack ``(..., M, N)``.
    ``ord`` also takes PyTensor's "inf" and "-inf"."""
    x = as_tensor_variable(x)
    if x.dtype not in FLOAT_DTYPES and x.dtype not in COMPLEX_DTYPES:
        x = x.astype("float64")  # as NumPy: the max row sum of an int matrix is a float64, 1/|x| too
    ord = {"inf": np.inf, "-inf": -np.inf}.get(ord, ord) if isinstance(ord, str) else ord
    if axis is None:
        if x.ndim == 0:
            raise ValueError(f"norm: x must be a vector, a matrix or a stack of matrices, got the scalar {x}")
        axes = (x.ndim - 1,) if x.ndim == 1 else (x.ndim - 2, x.ndim - 1)
        if ord is None and x.ndim <= 2:  # every entry at once
            return E["sqrt"](sum_(_real_sqr(x), axis=axes, keepdims=keepdims))
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
        return sum_(E["neq"](x, 0), axis=axis, keepdims=keepdims, dtype=real_dtype(x.dtype))
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
    elif ord in (2, -2, "nuc"):  # from the singular values of each matrix: its axes moved last
        others = [i for i in range(x.ndim) if i not in axes]
        s = svd(dimshuffle(x, (*others, row_axis, col_axis)), compute_uv=False)
        out = sum_(s, axis=-1) if ord == "nuc" else (max_ if ord == 2 else min_)(s, axis=-1)
        if not keepdims:
            return out
        kept = iter(range(len(others)))
        return dimshuffle(out, ["x" if i in axes else next(kept) for i in range(x.ndim)])
    else:
        raise ValueError(f"norm: ord={ord!r} is not a matrix norm (None, 'fro', 'nuc', 1, -1, 2, -2, inf, -inf)")
    if keepdims:
        return out
    return out.dimshuffle([a for a in range(x.ndim) if a not in axes])
