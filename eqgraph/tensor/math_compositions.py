"""PyTensor's math names that compose existing ops: power, ptp, median, isposinf, isneginf,
smallest, largest."""

from __future__ import annotations

from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.tensor.elemwise import ELEMWISE_OPS as E
from eqgraph.tensor.join import stack
from eqgraph.tensor.math import max as max_, min as min_, normalize_axis
from eqgraph.tensor.shape import reshape
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

