"""PyTensor's own array helpers that NumPy spells otherwise or lacks: the indices of a triangle
(``tril_indices``, ...), the nonzero values, PyTensor's positional ``horizontal_stack`` and
``vertical_stack`` of matrices, ``stacklists``, ``is_flat`` and ``get_vector_length``; and
``tile``, whose reps are refused as both NumPy and PyTensor refuse them; ``mgrid`` and ``ogrid``;
``unique``, an op of its own (how many values it finds is known only when it runs)."""

from __future__ import annotations

import numpy as np

from eqgraph.tensor.alloc import alloc, arange, shape_entries
from eqgraph.tensor.basic import as_tensor_variable, upcast
from eqgraph.tensor.dimshuffle_op import dimshuffle
from eqgraph.tensor.elemwise import ELEMWISE_OPS, cast
from eqgraph.tensor.extra_ops import flatnonzero, nonzero, tri
from eqgraph.tensor.join import concatenate, stack
from eqgraph.tensor.math import prod
from eqgraph.tensor.shape import flatten, reshape, shape_of
from eqgraph.tensor.type import DISCRETE_DTYPES, TensorType
from eqgraph.terms.basic import Apply, Variable
from eqgraph.terms.op import Op
from eqgraph.xp import array_namespace, as_output

E = ELEMWISE_OPS


def get_vector_length(v) -> int:
    """The length of the vector ``v`` as its graph tells it, without running it (its static size:
    a constant's, a MakeVector's or Join's count, a shape's ndim). ValueError where only running
    could tell; TypeError for a tensor that is not a vector."""
    v = as_tensor_variable(v)
    if v.ndim != 1:
        raise TypeError(f"get_vector_length: {v} of type {v.type} is not a vector (1-d)")
    if v.type.shape[0] is None:
        raise ValueError(f"Length of {v} cannot be determined without running the graph: its type is {v.type}")
    return v.type.shape[0]


def tril_indices(n, k=0, m=None) -> tuple:
    """``np.tril_indices``: the row and column indices (int64 vectors) of the lower triangle of an
    ``n`` by ``m`` matrix, on and below the ``k``-th diagonal; ``n``, ``k``, ``m`` may be symbolic."""
    return nonzero(tri(n, m, k, dtype="bool"))


def triu_indices(n, k=0, m=None) -> tuple:
    """``np.triu_indices``: the indices of the upper triangle, on and above the ``k``-th diagonal."""
    return nonzero(E["invert"](tri(n, m, k - 1, dtype="bool")))


def _matrix_sides(a, name: str) -> tuple:
    a = as_tensor_variable(a)
    if a.ndim != 2:
        raise ValueError(f"{name}: the input array must be two dimensional, got {a} with {a.ndim} dimensions")
    return tuple(shape_of(a))


def tril_indices_from(a, k=0) -> tuple:
    """``np.tril_indices_from``: ``tril_indices`` of the shape of the matrix ``a``."""
    n, m = _matrix_sides(a, "tril_indices_from")
    return tril_indices(n, k, m)


def triu_indices_from(a, k=0) -> tuple:
    """``np.triu_indices_from``: ``triu_indices`` of the shape of the matrix ``a``."""
    n, m = _matrix_sides(a, "triu_indices_from")
    return triu_indices(n, k, m)


def nonzero_values(a):
    """The nonzero elements of ``a`` in C order, ``a[np.nonzero(a)]``, as a vector (differentiable
    in ``a``); ``a`` has at least one dimension, as ``nonzero`` requires."""
    a = as_tensor_variable(a)
    return flatten(a)[flatnonzero(a)]


def _matrices(args, name: str) -> list:
    if len(args) < 2:
        raise ValueError(f"{name} takes at least two matrices, got {len(args)}")
    matrices = [as_tensor_variable(a) for a in args]
    for m in matrices:
        if m.ndim != 2:
            raise ValueError(f"{name}: every argument must have two dimensions, got {m} with {m.ndim}")
    return matrices


def horizontal_stack(*args):
    """PyTensor's ``horizontal_stack(a, b, ...)``: two or more matrices side by side (axis 1)."""
    return concatenate(_matrices(args, "horizontal_stack"), axis=1)


def vertical_stack(*args):
    """PyTensor's ``vertical_stack(a, b, ...)``: two or more matrices one above the other (axis 0)."""
    return concatenate(_matrices(args, "vertical_stack"), axis=0)


def stacklists(arg):
    """A tensor from nested lists of tensors of one shape: ``stacklists([[a, b], [c, d]])`` of
    scalars is a 2x2 matrix, of matrices a tensor of 4 dimensions (the lists' axes first)."""
    if isinstance(arg, (tuple, list)):
        return stack([stacklists(a) for a in arg])
    return as_tensor_variable(arg)


def is_flat(var, ndim: int = 1) -> bool:
    """Whether ``var`` has ``ndim`` dimensions (PyTensor's name of that check)."""
    return as_tensor_variable(var).ndim == ndim


def tile(x, reps):
    """``np.tile``: ``x`` repeated ``reps[i]`` times along axis ``i`` (a broadcast, then a reshape)."""
    x = as_tensor_variable(x)
    if isinstance(reps, Variable) and reps.ndim == 1 and reps.type.shape[0] is None:
        raise ValueError(f"tile: reps {reps} has a length known only when run. Use specify_shape to set the length")
    try:
        reps = list(shape_entries(reps, "tile: reps"))
    except TypeError as err:
        raise RepsError(str(err)) from err
    for r in reps:
        _check_integer_rep(r)
    ndim = max(x.ndim, len(reps))
    x = dimshuffle(x, ("x",) * (ndim - x.ndim) + tuple(range(x.ndim)))
    reps = [1] * (ndim - len(reps)) + reps
    sizes = shape_of(x)
    # (s0, s1) -> (1, s0, 1, s1) -> broadcast to (r0, s0, r1, s1) -> (r0*s0, r1*s1)
    spread = dimshuffle(x, [o for a in range(ndim) for o in ("x", a)])
    tiled = alloc(spread, *[d for r, s in zip(reps, sizes) for d in (r, s)])
    return reshape(tiled, [r * s for r, s in zip(reps, sizes)], ndim=ndim)


class RepsError(TypeError, ValueError):
    """Reps that tile cannot take: NumPy's TypeError, PyTensor's ValueError."""


def _check_integer_rep(r):
    # np.tile and PyTensor refuse a float count; alloc would truncate it silently
    if isinstance(r, (bool, np.bool_)):
        raise RepsError(f"tile: reps must be integers, got {r!r}")
    if isinstance(r, (int, np.integer)):
        return
    rep = as_tensor_variable(r)
    if rep.ndim != 0 or rep.dtype not in DISCRETE_DTYPES or rep.dtype == "bool":
        raise RepsError(f"tile: reps must be integers, got {r} ({rep.type})")


class _Grid:
    """``np.mgrid`` (dense) or ``np.ogrid`` (sparse) of slices whose bounds and steps may be
    variables: ``mgrid[0:2, 1:j]`` is a list of tensors, one per slice, in one common dtype."""

    def __init__(self, sparse: bool):
        self.sparse = sparse

    def __getitem__(self, key):
        slices = key if isinstance(key, tuple) else (key,)
        for s in slices:
            if not isinstance(s, slice) or s.stop is None or isinstance(s.step, complex):
                raise TypeError(f"{'ogrid' if self.sparse else 'mgrid'} takes slices with a stop and a real step, "
                                f"got {s!r}")
        ranges = [arange(0 if s.start is None else s.start, s.stop, 1 if s.step is None else s.step) for s in slices]
        dtype = upcast(*(r.dtype for r in ranges))
        ranges = [r if r.dtype == dtype else cast(r, dtype) for r in ranges]
        if not isinstance(key, tuple):
            return ranges[0]
        n = len(ranges)
        axes = [dimshuffle(r, tuple(0 if a == i else "x" for a in range(n))) for i, r in enumerate(ranges)]
        if self.sparse:
            return axes
        sizes = [shape_of(r)[0] for r in ranges]
        return [alloc(a, *sizes) for a in axes]


mgrid, ogrid = _Grid(sparse=False), _Grid(sparse=True)


__all__ = ["get_vector_length", "horizontal_stack", "is_flat", "mgrid", "ogrid", "nonzero_values", "stacklists", "tile", "tril_indices",
           "tril_indices_from", "triu_indices", "triu_indices_from", "vertical_stack"]


class Unique(Op):
    """``np.unique`` of ``x`` (flattened when ``axis`` is None): the sorted unique values, then as
    asked the index of each one's first occurrence, the inverse (the index into the values of each
    element of ``x``, a vector, as NumPy before 2.0 and PyTensor give it) and the counts."""

    __props__ = ("return_index", "return_inverse", "return_counts", "axis")

    def __init__(self, return_index=False, return_inverse=False, return_counts=False, axis=None):
        self.return_index, self.return_inverse = bool(return_index), bool(return_inverse)
        self.return_counts, self.axis = bool(return_counts), axis

    def make_node(self, x):
        x = as_tensor_variable(x)
        if self.axis is None:
            values = TensorType(x.dtype, (None,))()
        else:
            if not -x.ndim <= self.axis < max(x.ndim, 1) or x.ndim == 0:
                raise ValueError(f"unique: axis {self.axis} is out of range for {x} with {x.ndim} dimensions")
            axis = self.axis % x.ndim
            values = TensorType(x.dtype, tuple(None if a == axis else s for a, s in enumerate(x.type.shape)))()
        extra = [self.return_index, self.return_inverse, self.return_counts]
        return Apply(self, [x], [values] + [TensorType("int64", (None,))() for wanted in extra if wanted])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        xp = array_namespace(x)
        outs = np.unique(np.asarray(x), return_index=self.return_index, return_inverse=self.return_inverse,
                         return_counts=self.return_counts, axis=self.axis)
        outs = list(outs) if isinstance(outs, tuple) else [outs]
        if self.return_inverse:  # NumPy 2 shapes it like x (axis None); PyTensor's is a vector
            at = 1 + self.return_index
            outs[at] = np.ravel(outs[at])
        for storage, out, var in zip(output_storage, outs, node.outputs):
            storage[0] = as_output(xp, xp.asarray(out), var.type)

    def infer_shape(self, fgraph, node, shapes):
        (x_shape,) = shapes
        found = [list(shape_of(out)) for out in node.outputs]   # data dependent: read when run
        if self.axis is not None:
            axis = self.axis % node.inputs[0].ndim
            found[0] = [shape_of(node.outputs[0])[a] if a == axis else s for a, s in enumerate(x_shape)]
        if self.return_inverse:
            at = 1 + self.return_index
            found[at] = [prod(list(x_shape)) if self.axis is None else x_shape[self.axis % len(x_shape)]]
        return found

    def connection_pattern(self, node):
        return [[True] + [False] * (len(node.outputs) - 1)]


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    """``np.unique`` (see ``Unique``): the sorted unique values of ``ar``, alone or in a list with
    the outputs asked for (first indices, the inverse, the counts), all int64 vectors."""
    ar = as_tensor_variable(ar)
    if axis is not None and (not isinstance(axis, (int, np.integer)) or isinstance(axis, bool)):
        raise TypeError(f"unique: axis must be None or an integer, not {axis!r}")
    return Unique(return_index, return_inverse, return_counts, None if axis is None else int(axis))(ar)
