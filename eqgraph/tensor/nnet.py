"""What neural-network code types: softmax and log-softmax over any axes, the crossentropies.

Built on the `Softmax` op (one axis) and elementwise ops, so the stability rules
(``log(softmax(x))`` -> ``log_softmax(x)``, ``log(1 + exp(x))`` -> ``softplus(x)``) apply to them.
"""

from __future__ import annotations

from eqgraph.tensor.alloc import arange
from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.tensor.elemwise import ELEMWISE_OPS as E
from eqgraph.tensor.math import Softmax, logsumexp, normalize_axis, sum as sum_
from eqgraph.tensor.shape import reshape, shape_of, transpose
from eqgraph.tensor.type import DISCRETE_DTYPES


def _over_axes(x, axis, log: bool):
    x = as_tensor_variable(x)
    if x.ndim == 0:
        raise ValueError(f"{'log_softmax' if log else 'softmax'} of the 0-d {x}: it needs an axis to normalize over")
    axes = normalize_axis(axis, x.ndim)
    if len(axes) == 1:
        return Softmax(axes[0], log)(x)
    # several axes: move them last, make them one, normalize over it, and undo both
    kept = [a for a in range(x.ndim) if a not in axes]
    moved = transpose(x, (*kept, *axes))
    sizes = shape_of(moved)
    n = 1
    for s in sizes[len(kept):]:
        n = n * s
    flat = Softmax(len(kept), log)(reshape(moved, [*sizes[:len(kept)], n], ndim=len(kept) + 1))
    back = reshape(flat, sizes, ndim=x.ndim)
    order = (*kept, *axes)
    return transpose(back, [order.index(a) for a in range(x.ndim)])


def softmax(x, axis=-1):
    """``exp(x) / sum(exp(x), axis)``, stably; ``axis`` is an int, a tuple of axes or None (all)."""
    return _over_axes(x, axis, log=False)


def log_softmax(x, axis=-1):
    """``x - logsumexp(x, axis, keepdims=True)``, stably; ``axis`` as for ``softmax``."""
    return _over_axes(x, axis, log=True)


def categorical_crossentropy(coding_dist, true_dist):
    """``-sum(true_dist * log(coding_dist), axis=-1)``, as in PyTensor.

    ``true_dist`` is either a distribution of ``coding_dist``'s shape or integer class indices
    (one fewer dimension): then it is ``-log(coding_dist[..., true_dist])``.
    """
    coding_dist, true_dist = as_tensor_variable(coding_dist), as_tensor_variable(true_dist)
    if true_dist.ndim == coding_dist.ndim:
        return -sum_(true_dist * E["log"](coding_dist), axis=-1)
    if true_dist.ndim != coding_dist.ndim - 1 or true_dist.dtype not in DISCRETE_DTYPES:
        raise TypeError(f"categorical_crossentropy: true_dist must be a distribution shaped like {coding_dist} "
                        f"{coding_dist.type.shape} or integer labels with one fewer dimension; got {true_dist} "
                        f"({true_dist.type})")
    if coding_dist.ndim != 2:
        raise TypeError(f"categorical_crossentropy with integer labels needs a matrix of rows, got {coding_dist} "
                        f"({coding_dist.ndim}-d)")
    rows = arange(shape_of(coding_dist)[0])
    return -E["log"](coding_dist[rows, true_dist])


def binary_crossentropy(output, target):
    """``-(target * log(output) + (1 - target) * log(1 - output))``, elementwise."""
    output, target = as_tensor_variable(output), as_tensor_variable(target)
    return -(target * E["log"](output) + (1 - target) * E["log1p"](-output))


def sigmoid_binary_crossentropy(logits, target):
    """``binary_crossentropy(sigmoid(logits), target)`` computed from the logits without overflow:
    ``softplus(logits) - target * logits``."""
    logits, target = as_tensor_variable(logits), as_tensor_variable(target)
    return E["softplus"](logits) - target * logits


__all__ = ["binary_crossentropy", "categorical_crossentropy", "log_softmax", "logsumexp",
           "sigmoid_binary_crossentropy", "softmax"]
