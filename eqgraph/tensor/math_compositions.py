"""PyTensor's math names that compose existing ops: power, ptp, median, isposinf, isneginf,
smallest, largest, the batched products vecdot, matvec and vecmat, and cov."""

from __future__ import annotations

from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.tensor.dimshuffle_op import dimshuffle
from eqgraph.tensor.elemwise import ELEMWISE_OPS as E, cast
from eqgraph.tensor.join import concatenate, stack
from eqgraph.tensor.math import matmul, max as max_, mean, min as min_, normalize_axis, sum as sum_
from eqgraph.tensor.shape import reshape, shape_of, squeeze
from eqgraph.tensor.type import COMPLEX_DTYPES
from eqgraph.tensor.sorting import sort


def power(x, y):
    """``np.power``: ``x ** y``, elementwise."""
    return E["pow"](x, y)


def ptp(x, axis=None, keepdims=False):
    """``np.ptp``: the range (max - min) of ``x`` along ``axis`` (all axes when None)."""
    x = as_tensor_variable(x)
    return max_(x, axis, keepdims) - min_(x, axis, keepdims)


def median(x, axis=None):
    """``np.median``: the middle value of ``x`` along ``axis`` (an int, a tuple, or None for all
    axes), the mean of the two middle values where their count is even; float64 for integers."""
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.ndim)
    kept = [a for a in range(x.ndim) if a not in axes]
    moved = x.dimshuffle(*kept, *axes)
    flat = reshape(moved, [x.shape[a] for a in kept] + [-1], ndim=len(kept) + 1)
    ordered = sort(flat, axis=-1)
    n = flat.shape[-1]
    low, high = ordered[..., (n - 1) // 2], ordered[..., n // 2]
    return (low + high) / 2


def isposinf(x):
    """``np.isposinf``: where ``x`` is +inf."""
    x = as_tensor_variable(x)
    return E["and_"](E["isinf"](x), E["gt"](x, 0))


def isneginf(x):
    """``np.isneginf``: where ``x`` is -inf."""
    x = as_tensor_variable(x)
    return E["and_"](E["isinf"](x), E["lt"](x, 0))


def smallest(*args):
    """The elementwise smallest of ``args`` (PyTensor's: a switch for two, a min over a stack for more)."""
    if len(args) == 1:
        return as_tensor_variable(args[0])
    if len(args) == 2:
        a, b = map(as_tensor_variable, args)
        return E["switch"](E["lt"](a, b), a, b)
    return min_(stack(args), axis=0)


def largest(*args):
    """The elementwise largest of ``args`` (PyTensor's: a switch for two, a max over a stack for more)."""
    if len(args) == 1:
        return as_tensor_variable(args[0])
    if len(args) == 2:
        a, b = map(as_tensor_variable, args)
        return E["switch"](E["gt"](a, b), a, b)
    return max_(stack(args), axis=0)



def _real_operands(name, *xs):
    """``xs`` as tensors; complex ones are refused: NumPy's vecdot and vecmat conjugate the
    vector, PyTensor's products do not, and a silently different answer is worse than none."""
    xs = [as_tensor_variable(x) for x in xs]
    for x in xs:
        if x.dtype in COMPLEX_DTYPES:
            raise TypeError(f"{name}: {x} is complex ({x.dtype}); NumPy's {name} conjugates the first vector and "
                            "PyTensor's does not, so eqgraph takes real operands only: write the product with "
                            "conj and matmul to say which")
    return xs


def _as(out, dtype):
    return out if dtype is None else cast(out, dtype)


def vecdot(x1, x2, dtype=None):
    """The dot product of the vectors along the last axis of ``x1`` and ``x2`` (the other axes
    broadcast): ``sum(x1 * x2, axis=-1)``, cast to ``dtype`` when given; real operands."""
    x1, x2 = _real_operands("vecdot", x1, x2)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError(f"vecdot: both operands need a last axis, got {x1} ({x1.ndim}-d) and {x2} ({x2.ndim}-d)")
    return _as(sum_(x1 * x2, axis=-1), dtype)


def matvec(x1, x2, dtype=None):
    """The product of the matrices in ``x1`` (..., m, n) with the vectors in ``x2`` (..., n),
    the other axes broadcast: of shape (..., m); real operands."""
    x1, x2 = _real_operands("matvec", x1, x2)
    if x1.ndim < 2 or x2.ndim < 1:
        raise ValueError(f"matvec: x1 must have at least 2 dimensions and x2 at least 1, got {x1.ndim} and {x2.ndim}")
    column = dimshuffle(x2, tuple(range(x2.ndim)) + ("x",))
    return _as(squeeze(matmul(x1, column), axis=-1), dtype)


def vecmat(x1, x2, dtype=None):
    """The product of the vectors in ``x1`` (..., n) with the matrices in ``x2`` (..., n, m),
    the other axes broadcast: of shape (..., m); real operands."""
    x1, x2 = _real_operands("vecmat", x1, x2)
    if x1.ndim < 1 or x2.ndim < 2:
        raise ValueError(f"vecmat: x1 must have at least 1 dimension and x2 at least 2, got {x1.ndim} and {x2.ndim}")
    row = dimshuffle(x1, tuple(range(x1.ndim - 1)) + ("x", x1.ndim - 1))
    return _as(squeeze(matmul(row, x2), axis=-2), dtype)


def _variables_as_rows(m, rowvar: bool):
    """``m`` (a vector or a matrix) with one variable per row: a matrix of ``rowvar=False`` is
    transposed, a vector is one variable (NumPy's cov)."""
    m = as_tensor_variable(m)
    if m.ndim not in (1, 2):
        raise ValueError(f"cov: {m} must be a vector or a matrix, got {m.ndim} dimensions")
    if m.ndim == 1:
        return dimshuffle(m, ("x", 0))
    return m if rowvar else dimshuffle(m, (1, 0))


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """``np.cov``: the covariance matrix of the variables in ``m`` (rows, or columns with
    ``rowvar=False``) and ``y``; normalized by ``N - 1`` (``N`` with ``bias``, ``N - ddof``
    with ``ddof``). As NumPy's, a result of one variable is 0-d; that is known when the graph
    is built (a vector, or a matrix whose variables' count is static). Weights are not taken."""
    if fweights is not None or aweights is not None:
        raise NotImplementedError("cov: fweights and aweights are not taken; weight the observations first")
    x = _variables_as_rows(m, rowvar)
    if y is not None:
        x = concatenate([x, _variables_as_rows(y, rowvar)], axis=0)
    if x.dtype not in ("float32", "float64") and x.dtype not in COMPLEX_DTYPES:
        x = cast(x, "float64")
    ddof = (0 if bias else 1) if ddof is None else ddof
    centered = x - mean(x, axis=1, keepdims=True)
    c = matmul(centered, E["conj"](centered.T) if x.dtype in COMPLEX_DTYPES else centered.T)
    c = c / cast(shape_of(x)[1] - ddof, x.dtype if x.dtype not in COMPLEX_DTYPES else "float64")
    return squeeze(c) if x.type.shape[0] == 1 else c
