"""PyTensor's names for more NumPy functions (broadcast_shape, compress, bartlett, choose,
permutations, alloc_diag, ravel_multi_index), each a composition of existing ops."""

from __future__ import annotations

import numpy as np

from eqgraph.tensor.alloc import alloc, arange
from eqgraph.tensor.assertion import check_and_raise
from eqgraph.tensor.basic import as_tensor_variable, constant
from eqgraph.tensor.elemwise import ELEMWISE_OPS as E, broadcast_shape_vars, cast, dimshuffle
from eqgraph.tensor.extra_ops import broadcast_to, flatnonzero, static_int
from eqgraph.tensor.join import stack
from eqgraph.tensor.math import all as all_
from eqgraph.tensor.shape import int64_const, shape_of
from eqgraph.tensor.sorting import argsort, take_along_axis
from eqgraph.tensor.subtensor import set_subtensor, take
from eqgraph.tensor.type import DISCRETE_DTYPES


def broadcast_shape(*arrays, arrays_are_shapes=False):
    """The shape (a tuple of 0-d int64 variables) of ``arrays`` broadcast together, NumPy's rules;
    with ``arrays_are_shapes`` the arguments are shapes (tuples of sizes) themselves. Sizes that
    are known and differ (neither 1) are refused here."""
    shapes = [tuple(a) for a in arrays] if arrays_are_shapes else [shape_of(as_tensor_variable(a)) for a in arrays]
    ndim = max((len(s) for s in shapes), default=0)
    shapes = [(int64_const(1),) * (ndim - len(s)) + tuple(as_tensor_variable(d) for d in s) for s in shapes]
    static = []
    for axis in range(ndim):
        known = {static_int(s[axis]) for s in shapes} - {None, 1}
        if len(known) > 1:
            raise ValueError(f"broadcast_shape: sizes {sorted(known)} on axis {axis} do not broadcast")
        everywhere_one = all(static_int(s[axis]) == 1 for s in shapes)
        static.append(known.pop() if known else (1 if everywhere_one else None))
    return broadcast_shape_vars(shapes, static)


def compress(condition, x, axis=None):
    """``np.compress``: ``x``'s entries along ``axis`` (None: of the flattened ``x``) where the
    vector ``condition`` is true."""
    return take(x, flatnonzero(condition), axis=axis)


def bartlett(M):
    """``np.bartlett``: the triangular window of ``M`` points (float64; empty for ``M < 1``)."""
    M = as_tensor_variable(M)
    if M.ndim != 0 or M.dtype not in DISCRETE_DTYPES or M.dtype == "bool":
        raise TypeError(f"bartlett: M must be a 0-d integer, got {M} ({M.ndim}-d, {M.dtype})")
    n = cast(arange(M), "float64")
    half = cast(M - 1, "float64") / 2.0
    # M == 1 would divide 0 by 0: its one point is 1
    ramp = E["switch"](E["le"](n, half), n / E["switch"](E["eq"](M, 1), 1.0, half),
                       2.0 - n / E["switch"](E["eq"](M, 1), 1.0, half))
    return E["switch"](E["eq"](M, 1), 1.0, ramp)


def choose(a, choices, mode="raise"):
    """``np.choose``: at each place, the entry of the choice that ``a`` (integers) names there;
    ``a`` and the choices broadcast together. ``choices`` is a sequence of tensors or one tensor
    whose first axis lists them. ``mode``: "raise" (an index out of range is an error when run),
    "wrap" or "clip"."""
    a = as_tensor_variable(a)
    if a.dtype not in DISCRETE_DTYPES or a.dtype == "bool":
        raise TypeError(f"choose: the index array must be integers, got {a} of dtype {a.dtype}")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', not {mode!r}")
    if isinstance(choices, (list, tuple)):
        choice_list = [as_tensor_variable(c) for c in choices]
        shape = broadcast_shape(a, *choice_list)
        stacked = stack([broadcast_to(c, shape) for c in choice_list])
    else:
        choices = as_tensor_variable(choices)
        shape = broadcast_shape(a, choices[0])
        stacked = broadcast_to(choices, (shape_of(choices)[0], *shape))
    count = shape_of(stacked)[0]
    if mode == "wrap":
        a = E["mod"](a, count)
    elif mode == "clip":
        a = E["clip"](a, 0, count - 1)
    return take_along_axis(stacked, dimshuffle(broadcast_to(a, shape), ("x", *range(len(shape)))), 0)[0]


def inverse_permutation(perm):
    """The inverse of the permutation ``perm`` (of its last axis, for a stack of them), in
    ``perm``'s dtype: ``out[perm[i]] == i``."""
    perm = as_tensor_variable(perm)
    if perm.dtype not in DISCRETE_DTYPES or perm.dtype == "bool" or perm.ndim == 0:
        raise TypeError(f"inverse_permutation: perm must be integers of at least 1 dimension, got {perm} "
                        f"({perm.ndim}-d, {perm.dtype})")
    return cast(argsort(perm, axis=-1), perm.dtype)


def permute_row_elements(x, y, inverse=False):
    """Each row (last axis) of ``x`` permuted by the matching row of ``y``: ``out[..., i] =
    x[..., y[..., i]]``, or with ``inverse`` ``out[..., y[..., i]] = x[..., i]``. The axes before
    the last broadcast between ``x`` and ``y``."""
    x, y = as_tensor_variable(x), as_tensor_variable(y)
    if y.dtype not in DISCRETE_DTYPES or y.dtype == "bool" or y.ndim == 0 or x.ndim == 0:
        raise TypeError(f"permute_row_elements: x must have an axis and y be integers of at least 1 dimension, "
                        f"got {x} ({x.ndim}-d) and {y} ({y.ndim}-d, {y.dtype})")
    if inverse:
        y = argsort(y, axis=-1)
    lead = broadcast_shape(x[..., 0], y[..., 0])
    x = broadcast_to(x, (*lead, shape_of(x)[-1]))
    y = broadcast_to(y, (*lead, shape_of(y)[-1]))
    return take_along_axis(x, y, -1)


def alloc_diag(diag, offset=0, axis1=0, axis2=1):
    """A tensor of zeros with ``diag``'s last axis on its ``offset``-th diagonal, in the axes
    ``axis1`` and ``axis2`` of the result (``diagonal(alloc_diag(x)) == x``); for a vector,
    ``np.diag(x, offset)``."""
    diag = as_tensor_variable(diag)
    if diag.ndim == 0:
        raise ValueError(f"alloc_diag needs at least a vector, got the 0-d {diag}")
    ndim = diag.ndim + 1
    axis1, axis2 = sorted(np.lib.array_utils.normalize_axis_tuple((axis1, axis2), ndim))
    sizes = shape_of(diag)
    side = sizes[-1] + abs(int(offset))
    out = alloc(constant(0, dtype=diag.dtype), *sizes[:-1], side, side)
    step = arange(sizes[-1])
    out = set_subtensor(out[(Ellipsis, step + max(-int(offset), 0), step + max(int(offset), 0))], diag)
    batch = list(range(diag.ndim - 1))
    order = batch[:axis1] + [ndim - 2] + batch[axis1:]
    order = order[:axis2] + [ndim - 1] + order[axis2:]
    return dimshuffle(out, order)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """``np.ravel_multi_index``: the flat index of each tuple of indices into an array of shape
    ``dims``. ``mode``: "raise" (an index out of range is an error when run), "wrap" or "clip";
    ``order``: "C" (row-major) or "F"."""
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"ravel_multi_index: mode must be 'raise', 'wrap' or 'clip', not {mode!r}")
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F', not {order!r}")
    indices, dims = [as_tensor_variable(i) for i in multi_index], as_tensor_variable(dims)
    for what, v in [*(("an index", i) for i in indices), ("dims", dims)]:
        if v.dtype not in DISCRETE_DTYPES or v.dtype == "bool":  # NumPy refuses them; a cast would truncate
            raise TypeError(f"ravel_multi_index: {what} must be integer, got {v} of dtype {v.dtype}")
    indices = [cast(i, "int64") for i in indices]
    n = len(indices)
    if dims.ndim != 1 or static_int(shape_of(dims)[0]) not in (None, n):
        raise ValueError(f"ravel_multi_index: dims must be a vector of {n} sizes, one per index, got {dims}")
    sizes = [cast(dims[i], "int64") for i in range(n)]
    checked = []
    for i, s in zip(indices, sizes):
        if mode == "wrap":
            i = E["mod"](i, s)
        elif mode == "clip":
            i = E["clip"](i, 0, s - 1)
        else:
            i = check_and_raise(i, all_(E["and_"](E["ge"](i, 0), E["lt"](i, s))),
                                msg="ravel_multi_index: invalid entry in coordinates array")
        checked.append(i)
    axes = range(n) if order == "F" else reversed(range(n))
    flat, stride = None, int64_const(1)
    for k in axes:
        term = checked[k] * stride
        flat = term if flat is None else flat + term
        stride = stride * sizes[k]
    return flat


def unravel_index(indices, dims, order="C"):
    """``np.unravel_index``: a tuple of index arrays (int64, each of ``indices``' shape), the
    coordinates of each flat index in an array of shape ``dims``; ``order``: "C" or "F". The
    length of ``dims`` must be known when the graph is built (it is the number of outputs); an
    index outside the array is an error when run, as in NumPy."""
    if order not in ("C", "F"):
        raise ValueError(f"unravel_index: order must be 'C' or 'F', not {order!r}")
    indices, dims = as_tensor_variable(indices), as_tensor_variable(dims)
    for what, v in (("indices", indices), ("dims", dims)):
        if v.dtype not in DISCRETE_DTYPES or v.dtype == "bool":
            raise TypeError(f"unravel_index: {what} must be integer, got {v} of dtype {v.dtype}")
    if dims.ndim != 1:
        raise TypeError(f"unravel_index: dims must be a vector of sizes, got {dims} with {dims.ndim} dimensions")
    n = static_int(shape_of(dims)[0]) if dims.type.shape[0] is None else dims.type.shape[0]
    if n is None:
        raise ValueError(f"unravel_index: the length of dims ({dims}, of type {dims.type}) must be known when "
                         "the graph is built: it is the number of index arrays returned")
    sizes = [cast(dims[k], "int64") for k in range(n)]
    total = int64_const(1)
    for s in sizes:
        total = total * s
    flat = cast(indices, "int64")
    flat = check_and_raise(flat, all_(E["and_"](E["ge"](flat, 0), E["lt"](flat, total))),
                           msg=f"unravel_index: an index is out of bounds for an array of {n} dimensions")
    coords = [None] * n
    for k in (reversed(range(n)) if order == "C" else range(n)):
        coords[k] = E["mod"](flat, sizes[k])
        flat = E["int_div"](flat, sizes[k])
    return tuple(coords)


def broadcast_arrays(*arrays):
    """``np.broadcast_arrays``: each of ``arrays`` broadcast to the shape they broadcast to together."""
    arrays = [as_tensor_variable(a) for a in arrays]
    shape = broadcast_shape(*arrays)
    return tuple(broadcast_to(a, shape) for a in arrays)
