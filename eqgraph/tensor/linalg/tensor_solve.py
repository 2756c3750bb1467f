"""``tensorsolve`` and ``tensorinv``, as ``np.linalg``'s: the tensor's axes are grouped into the rows
and the columns of one square matrix, which ``solve`` or ``inv`` then takes."""

from __future__ import annotations

import functools

from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.tensor.dimshuffle_op import dimshuffle
from eqgraph.tensor.linalg.core import inv, solve
from eqgraph.tensor.shape import reshape, shape_of


def _product(sizes):
    return functools.reduce(lambda a, b: a * b, sizes)


def tensorsolve(a, b, axes=None):
    """``x`` such that ``tensordot(a, x, axes=x.ndim) == b`` (``np.linalg.tensorsolve``); ``axes``
    names the axes of ``a`` to move to its end first."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if axes is not None:
        moved = [axis % a.ndim for axis in axes]
        a = dimshuffle(a, [k for k in range(a.ndim) if k not in moved] + moved)
    if a.ndim <= b.ndim:
        raise ValueError(f"tensorsolve: a ({a.type}) must have more dimensions than b ({b.type})")
    x_shape = shape_of(a)[b.ndim:]
    size = _product(x_shape)
    x = solve(reshape(a, [size, size], ndim=2), reshape(b, [size], ndim=1))
    return reshape(x, x_shape, ndim=a.ndim - b.ndim)


def tensorinv(a, ind: int = 2):
    """The inverse of ``a`` for ``tensordot(..., ind)`` (``np.linalg.tensorinv``): the first ``ind``
    axes are the rows, the others the columns."""
    a = as_tensor_variable(a)
    if not isinstance(ind, int) or ind <= 0:
        raise ValueError(f"tensorinv: ind must be a positive int, not {ind!r}")
    shape = shape_of(a)
    rows = _product(shape[ind:])
    inverse = inv(reshape(a, [rows, -1], ndim=2))
    return reshape(inverse, [*shape[ind:], *shape[:ind]], ndim=a.ndim)
