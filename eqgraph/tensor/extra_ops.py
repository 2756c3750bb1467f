"""Everyday NumPy functions: cumulative ops, repeat, nonzero, and compositions of existing ops
(diff, tile, roll, pad, split, eye, tri, tril/triu, broadcast_to, isclose, nan_to_num, ...).

Most are compositions, on purpose: the e-graph then sees (and optimizes) ordinary ops, and their
gradients come from the ops they are made of.  New ops exist only where NumPy's result cannot be
written with the others: `CumOp` (a scan along an axis), `Repeat` (sizes from data) and `Nonzero`
(a shape known only at run time).
"""

from __future__ import annotations

import numpy as np

from eqgraph.tensor.alloc import alloc, arange
from eqgraph.tensor.assertion import check_and_raise
from eqgraph.tensor.basic import (NotScalarConstantError, TensorConstant, as_tensor_variable, constant,
                                  get_scalar_constant_value)
from eqgraph.tensor.elemwise import ELEMWISE_OPS as E, cast
from eqgraph.tensor.dimshuffle_op import dimshuffle
from eqgraph.tensor.join import concatenate
from eqgraph.tensor.math import all as all_, max as max_, sum as sum_
from eqgraph.tensor.shape import flatten, int64_const, reshape, shape_of
from eqgraph.tensor.subtensor import inc_subtensor, set_subtensor
from eqgraph.tensor.type import DISCRETE_DTYPES, TensorType, dtype_name_of
from eqgraph.terms.basic import Apply, Variable
from eqgraph.terms.op import Op
from eqgraph.xp import array_namespace, as_output


def static_int(v):
    """The value of a scalar known when the graph is built, or None."""
    if v is None:
        return None
    if isinstance(v, (int, np.integer)):
        return int(v)
    try:
        return int(get_scalar_constant_value(v))
    except NotScalarConstantError:
        return None


def _axis(x, axis) -> int:
    if not -max(x.ndim, 1) <= axis < max(x.ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for {x} with {x.ndim} dimensions")
    return axis % max(x.ndim, 1)


def _along(x, axis, index):
    """``x[..., index, ...]`` with ``index`` on ``axis``."""
    return x[(slice(None),) * axis + (index,)]


# -- cumulative sums and products -------------------------------------------------------------
class CumOp(Op):
    """``np.cumsum`` (``mode="add"``) or ``np.cumprod`` (``mode="mul"``) along ``axis``."""

    __props__ = ("axis", "mode")

    def __init__(self, axis: int, mode: str = "add"):
        if mode not in ("add", "mul"):
            raise ValueError(f"CumOp: mode must be 'add' or 'mul', not {mode!r}")
        self.axis, self.mode = int(axis), mode

    def __str__(self):
        return f"{'Cumsum' if self.mode == 'add' else 'Cumprod'}{{axis={self.axis}}}"

    def make_node(self, x):
        x = as_tensor_variable(x)
        if not 0 <= self.axis < x.ndim:
            raise ValueError(f"{self}: axis {self.axis} is out of range for {x} with {x.ndim} dimensions")
        dtype = self._numpy(np)(np.ones((1,) * x.ndim, dtype=x.dtype)).dtype.name  # NumPy's: cumsum of int8 is int64
        return Apply(self, [x], [TensorType(dtype, x.type.shape)()])

    def _numpy(self, xp):
        name = "cumulative_sum" if self.mode == "add" else "cumulative_prod"
        fn = getattr(xp, name, None) or getattr(xp, "cumsum" if self.mode == "add" else "cumprod")
        return lambda x: fn(x, axis=self.axis)

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        xp = array_namespace(x)
        ttype = node.outputs[0].type
        if dtype_name_of(x) != ttype.dtype:  # accumulate in the output's dtype, as NumPy does
            x = xp.astype(x, getattr(xp, ttype.dtype))
        output_storage[0][0] = as_output(xp, self._numpy(xp)(x), ttype)

    def infer_shape(self, fgraph, node, shapes):
        return [shapes[0]]

    def flops(self, inputs, outputs):
        return int(np.prod(inputs[0], dtype=np.int64))


def _cumulative(x, axis, mode):
    x = as_tensor_variable(x)
    if axis is None:
        x, axis = flatten(x), 0
    return CumOp(_axis(x, axis), mode)(x)


def cumsum(x, axis=None):
    """``np.cumsum``: running sums along ``axis`` (None: of the flattened ``x``)."""
    return _cumulative(x, axis, "add")


def cumprod(x, axis=None):
    """``np.cumprod``: running products along ``axis`` (None: of the flattened ``x``)."""
    return _cumulative(x, axis, "mul")


def diff(x, n: int = 1, axis: int = -1):
    """``np.diff``: the ``n``-th difference along ``axis``; of booleans, as NumPy's, whether
    neighbours differ (``!=``), since booleans cannot be subtracted."""
    x = as_tensor_variable(x)
    axis = _axis(x, axis)
    step = E["neq"] if x.dtype == "bool" else E["sub"]
    for _ in range(n):
        x = step(_along(x, axis, slice(1, None)), _along(x, axis, slice(None, -1)))
    return x


# -- repeating --------------------------------------------------------------------------------
class Repeat(Op):
    """``np.repeat(x, repeats, axis)``; ``repeats`` is a 0-d or 1-d integer input."""

    __props__ = ("axis",)

    def __init__(self, axis: int):
        self.axis = int(axis)

    def make_node(self, x, repeats):
        x, repeats = as_tensor_variable(x), as_tensor_variable(repeats)
        if repeats.dtype not in DISCRETE_DTYPES or repeats.dtype == "bool" or repeats.ndim > 1:
            raise TypeError(f"repeat: repeats must be an integer scalar or vector, got {repeats} ({repeats.type})")
        if repeats.dtype == "uint64":  # no safe cast to int64: np.repeat and PyTensor refuse it too
            raise TypeError(f"repeat: repeats {repeats} of dtype uint64 are refused (no safe cast to int64); "
                            "cast them to int64")
        if not 0 <= self.axis < x.ndim:
            raise ValueError(f"{self}: axis {self.axis} is out of range for {x} with {x.ndim} dimensions")
        shape = list(x.type.shape)
        shape[self.axis] = self._static_length(x, repeats)
        return Apply(self, [x, cast(repeats, "int64")], [TensorType(x.dtype, shape)()])

    def _static_length(self, x, repeats):
        n = x.type.shape[self.axis]
        if repeats.ndim == 0:
            r = static_int(repeats)
            return None if r is None or n is None else r * n
        if isinstance(repeats, TensorConstant):
            counts = np.asarray(repeats.data)
            if counts.size == 1:  # one count repeats every element, as a scalar does
                return None if n is None else int(counts[0]) * n
            if n is not None and counts.size != n:
                raise ValueError(f"repeat: {counts.size} repeats for an axis of size {n}")
            return int(counts.sum())
        return None

    def perform(self, node, inputs, output_storage):
        x, repeats = inputs
        xp = array_namespace(x)
        out = xp.repeat(x, repeats if repeats.ndim else int(repeats), axis=self.axis)
        output_storage[0][0] = as_output(xp, out, node.outputs[0].type)

    def infer_shape(self, fgraph, node, shapes):
        x, repeats = node.inputs
        dims = list(shapes[0])
        length = dims[self.axis] * repeats if repeats.ndim == 0 else self._counted_length(dims[self.axis], repeats)
        dims[self.axis] = node.outputs[0].type.shape[self.axis] or length
        return [tuple(dims)]

    @staticmethod
    def _counted_length(n, counts):
        """The length for a vector of counts: their sum, or ``n`` times the one count given,
        which repeats every element (NumPy broadcasts it)."""
        total = sum_(counts)
        size = counts.type.shape[0]
        if size is not None:
            return n * total if size == 1 else total
        return E["switch"](E["eq"](shape_of(counts)[0], 1), n * total, total)

    def connection_pattern(self, node):
        return [[True], [False]]


def repeat(x, repeats, axis=None):
    """``np.repeat``: each element of ``x`` repeated ``repeats`` times (an int or one per element)."""
    x = as_tensor_variable(x)
    if axis is None:
        x, axis = flatten(x), 0
    repeats = as_tensor_variable(_int64_if_constant(repeats))
    if repeats.ndim == 1 and repeats.type.shape[0] == 1:  # one count for every element: a scalar's
        repeats = constant(repeats.data[0]) if isinstance(repeats, TensorConstant) else repeats[0]
    return Repeat(_axis(x, axis))(x, repeats)


def _int64_if_constant(repeats):
    """Integer values (not variables) as int64 where they fit, as PyTensor's
    ``as_tensor_variable(repeats, dtype=int64)`` makes them: only a uint64 variable is refused."""
    if isinstance(repeats, Variable) and not isinstance(repeats, TensorConstant):
        return repeats
    values = np.asarray(repeats.data if isinstance(repeats, TensorConstant) else repeats)
    if values.dtype.kind == "u" and values.size and values.max() <= np.iinfo(np.int64).max:
        return values.astype(np.int64)
    return repeats


def roll(x, shift, axis=None):
    """``np.roll``: elements shifted by ``shift`` along ``axis`` (None: the flattened ``x``)."""
    x = as_tensor_variable(x)
    if axis is None:
        return reshape(roll(flatten(x), shift, 0), shape_of(x), ndim=x.ndim)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,) * len(axes)
    for a, s in zip(axes, shifts):
        a = _axis(x, a)
        n, s = shape_of(x)[a], as_tensor_variable(s)
        if static_int(n) == 0:
            continue
        cut = n - E["mod"](cast(s, "int64"), n)  # the last (shift mod n) elements move to the front
        x = concatenate([_along(x, a, slice(cut, None)), _along(x, a, slice(None, cut))], axis=a)
    return x


def _pad_widths(pad_width, ndim) -> list:
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (ndim, 2))
    if (widths < 0).any():
        raise ValueError(f"pad: pad_width {pad_width!r} must not be negative")
    return [(int(b), int(a)) for b, a in widths]


def pad(x, pad_width, mode="constant", constant_values=0):
    """``np.pad`` with modes ``constant``, ``edge``, ``wrap``, ``reflect`` and ``symmetric``.

    Modes other than ``constant`` read the padded axes' sizes, which must be static.
    """
    x = as_tensor_variable(x)
    widths = _pad_widths(pad_width, x.ndim)
    if mode == "constant":
        value = cast(as_tensor_variable(constant_values, ndim=0, dtype=x.dtype), x.dtype)
        sizes = [s + b + a for s, (b, a) in zip(shape_of(x), widths)]
        inside = tuple(slice(b, b + s) for s, (b, a) in zip(shape_of(x), widths))
        return set_subtensor(alloc(value, *sizes)[inside], x)
    if mode not in ("edge", "wrap", "reflect", "symmetric"):
        raise ValueError(f"pad: mode {mode!r} is not supported; use constant, edge, wrap, reflect or symmetric")
    for axis, (before, after) in enumerate(widths):
        if before == after == 0:
            continue
        n = x.type.shape[axis]
        if n is None:
            raise ValueError(f"pad(mode={mode!r}) needs the static size of axis {axis} of {x} (type {x.type}); "
                             "use et.specify_shape to state it")
        taken = np.pad(np.arange(n), (before, after), mode=mode)  # which element lands where
        x = _along(x, axis, constant(taken))
    return x


def split(x, splits_size, n_splits=None, axis=0):
    """PyTensor's ``split``: ``x`` cut along ``axis`` into pieces of ``splits_size`` (a list of sizes)."""
    x = as_tensor_variable(x)
    axis = _axis(x, axis)
    sizes = list(splits_size) if isinstance(splits_size, (list, tuple)) else \
        [splits_size[i] for i in range(static_int(n_splits) or _static_length(splits_size))]
    if n_splits is not None and len(sizes) != static_int(n_splits):
        raise ValueError(f"split: {len(sizes)} sizes given for n_splits={n_splits}")
    known = [static_int(s) for s in sizes]
    if None not in known and x.type.shape[axis] is not None and sum(known) != x.type.shape[axis]:
        raise ValueError(f"split: sizes {known} do not add up to axis {axis}'s size {x.type.shape[axis]}")
    pieces, start = [], 0
    for size in sizes:
        stop = start + size
        pieces.append(_along(x, axis, slice(start, stop)))
        start = stop
    return pieces


def _static_length(vector, what="split: the number of pieces must be static: pass n_splits, or sizes as a list") -> int:
    vector = as_tensor_variable(vector)
    if vector.ndim != 1 or vector.type.shape[0] is None:
        raise ValueError(f"{what} (got {vector} of type {vector.type})")
    return vector.type.shape[0]


def array_split_points(x, indices, axis=0):
    """``np.split(x, indices, axis)`` for a list of cut points (NumPy's spelling of ``split``)."""
    x = as_tensor_variable(x)
    if isinstance(indices, (int, np.integer)):
        n = x.type.shape[_axis(x, axis)]
        if n is None or n % indices:
            raise ValueError(f"split into {indices} equal pieces needs a static axis size divisible by it, "
                             f"got {n}")
        return split(x, [n // indices] * indices, axis=axis)
    bounds = [0, *indices, shape_of(x)[_axis(x, axis)]]
    return split(x, [b - a for a, b in zip(bounds[:-1], bounds[1:])], axis=axis)


# -- stacking -----------------------------------------------------------------------------------
def atleast_Nd(x, n: int, left: bool = True):
    x = as_tensor_variable(x)
    if x.ndim >= n:
        return x
    extra = ("x",) * (n - x.ndim)
    return dimshuffle(x, extra + tuple(range(x.ndim)) if left else tuple(range(x.ndim)) + extra)


def atleast_1d(x):
    return atleast_Nd(x, 1)


def atleast_2d(x):
    return atleast_Nd(x, 2)


def atleast_3d(x):
    """``np.atleast_3d``: a vector (n,) becomes (1, n, 1), a matrix (m, n) becomes (m, n, 1)."""
    x = atleast_2d(x)
    return x if x.ndim >= 3 else dimshuffle(x, (0, 1, "x"))


def hstack(tensors):
    """``np.hstack``: vectors end to end, otherwise along axis 1."""
    tensors = [atleast_1d(t) for t in tensors]
    return concatenate(tensors, axis=0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    return concatenate([atleast_2d(t) for t in tensors], axis=0)


def dstack(tensors):
    return concatenate([atleast_3d(t) for t in tensors], axis=2)


def column_stack(tensors):
    """``np.column_stack``: vectors become columns of a matrix."""
    cols = [as_tensor_variable(t) for t in tensors]
    return concatenate([dimshuffle(c, (0, "x")) if c.ndim == 1 else atleast_2d(c) for c in cols], axis=1)




def broadcast_to(x, shape):
    """``np.broadcast_to`` (a copy, not a read-only view: outputs never share memory)."""
    if not isinstance(shape, (tuple, list)):
        n = _static_length(shape, "broadcast_to: the shape's length must be static: give a list of sizes")
        shape = [shape[i] for i in range(n)]
    return alloc(x, *shape)


# -- special matrices -------------------------------------------------------------------------------
def tri(N, M=None, k=0, dtype="float64"):
    """``np.tri``: ones on and below the ``k``-th diagonal of an ``N`` by ``M`` matrix."""
    M = N if M is None else M
    rows, cols = dimshuffle(arange(N), (0, "x")), dimshuffle(arange(M), ("x", 0))
    return cast(E["ge"](rows + k, cols), dtype)


def eye(n, m=None, k=0, dtype="float64"):
    """``np.eye``: ones on the ``k``-th diagonal of an ``n`` by ``m`` matrix."""
    m = n if m is None else m
    rows, cols = dimshuffle(arange(n), (0, "x")), dimshuffle(arange(m), ("x", 0))
    return cast(E["eq"](rows + k, cols), dtype)


def identity_like(x, dtype=None):
    """The identity matrix of ``x``'s shape (PyTensor's ``identity_like``)."""
    x = as_tensor_variable(x)
    if x.ndim != 2:
        raise TypeError(f"identity_like needs a matrix, got {x} with {x.ndim} dimensions")
    n, m = shape_of(x)
    return eye(n, m, dtype=dtype or x.dtype)


def _triangle(x, k, lower):
    x = as_tensor_variable(x)
    if x.ndim < 2:
        raise TypeError(f"{'tril' if lower else 'triu'} needs at least 2 dimensions, got {x} ({x.ndim}-d)")
    n, m = shape_of(x)[-2:]
    keep = tri(n, m, k, dtype="bool") if lower else E["invert"](tri(n, m, k - 1, dtype="bool"))
    return E["switch"](keep, x, constant(0, dtype=x.dtype))


def tril(x, k=0):
    """``np.tril``: ``x`` with the elements above the ``k``-th diagonal zeroed."""
    return _triangle(x, k, lower=True)


def triu(x, k=0):
    """``np.triu``: ``x`` with the elements below the ``k``-th diagonal zeroed."""
    return _triangle(x, k, lower=False)


# -- finding elements -----------------------------------------------------------------------------
class Nonzero(Op):
    """The indices of ``x``'s nonzero elements as an ``(x.ndim, count)`` int64 matrix."""

    __props__ = ()

    def make_node(self, x):
        x = as_tensor_variable(x)
        if x.ndim == 0:
            raise ValueError(f"nonzero of the 0-d {x} is not defined (NumPy refuses it too); use atleast_1d")
        return Apply(self, [x], [TensorType("int64", (x.ndim, None))()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        xp = array_namespace(x)
        out = xp.stack(xp.nonzero(x)) if x.ndim else xp.zeros((0, 0))
        output_storage[0][0] = as_output(xp, out, node.outputs[0].type)

    def infer_shape(self, fgraph, node, shapes):
        (x,) = node.inputs
        return [(int64_const(x.ndim), sum_(E["neq"](x, constant(0, dtype=x.dtype)), dtype="int64"))]

    def connection_pattern(self, node):
        return [[False]]  # indices: piecewise constant in x


def nonzero(x, return_matrix: bool = False):
    """``np.nonzero``: a tuple of index vectors, one per axis of ``x``; with ``return_matrix``
    (PyTensor's) one ``(x.ndim, count)`` matrix of them, ``np.vstack(np.nonzero(x))``."""
    found = Nonzero()(x)
    return found if return_matrix else tuple(found[i] for i in range(found.type.shape[0]))


def flatnonzero(x):
    """``np.flatnonzero`` of a tensor of at least one dimension: PyTensor refuses a 0-d one,
    as its ``nonzero`` does."""
    x = as_tensor_variable(x)
    if x.ndim == 0:
        raise ValueError(f"flatnonzero({x}): x is 0-d, and flatnonzero takes a tensor of at least one "
                         "dimension (as PyTensor's); flatnonzero(x.flatten()) reads it as one element")
    return nonzero(flatten(x))[0]


def where(condition, x=None, y=None):
    """``np.where``: ``switch(condition, x, y)``, or with one argument ``nonzero(condition)``."""
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("where: either both or neither of x and y should be given")
    return E["switch"](condition, x, y)


def isfinite(x):
    return E["invert"](E["or_"](E["isnan"](x), E["isinf"](x)))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``np.isclose``: ``|a - b| <= atol + rtol * |b|``; infinities are close only to themselves."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    finite = E["and_"](isfinite(a), isfinite(b))
    # compare only finite pairs arithmetically (inf - inf would warn and give NaN); the others by ==
    a_, b_ = E["switch"](finite, a, 0), E["switch"](finite, b, 0)
    close = E["switch"](finite, E["le"](E["abs"](a_ - b_), atol + rtol * E["abs"](b_)), E["eq"](a, b))
    if equal_nan:
        close = E["or_"](close, E["and_"](E["isnan"](a), E["isnan"](b)))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return all_(isclose(a, b, rtol, atol, equal_nan))


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """``np.nan_to_num``: NaN -> ``nan``, +inf -> ``posinf`` (default the dtype's largest), -inf ->
    ``neginf``; integers pass through."""
    x = as_tensor_variable(x)
    if x.dtype in DISCRETE_DTYPES:
        return x
    big = float(np.finfo(x.dtype).max)
    posinf = big if posinf is None else posinf
    neginf = -big if neginf is None else neginf
    out = E["switch"](E["isnan"](x), constant(nan, dtype=x.dtype), x)
    out = E["switch"](E["and_"](E["isinf"](x), E["gt"](x, 0)), constant(posinf, dtype=x.dtype), out)
    return E["switch"](E["and_"](E["isinf"](x), E["lt"](x, 0)), constant(neginf, dtype=x.dtype), out)


# -- writing diagonals and counting ------------------------------------------------------------
def _diagonal_value(a, val, what):
    """``val`` as a 0-d tensor of ``a``'s dtype; PyTensor refuses a ``val`` that ``a``'s dtype
    cannot hold without losing precision (a Python number fits any dtype)."""
    val = as_tensor_variable(val)
    if val.ndim != 0:
        raise TypeError(f"{what}: val must be a scalar, got {val} with {val.ndim} dimensions")
    if val.dtype != a.dtype and not getattr(val, "weak", False) and \
            np.result_type(a.dtype, val.dtype) != np.dtype(a.dtype):
        raise TypeError(f"{what}: val {val} of dtype {val.dtype} does not fit {a} of dtype {a.dtype}; cast it first")
    return cast(val, a.dtype)


def fill_diagonal(a, val):
    """PyTensor's ``fill_diagonal``: a copy of ``a`` with ``a[i, i, ..., i] = val``; a matrix may be
    rectangular (the first ``min(rows, columns)`` diagonal elements), a tensor of more dimensions
    must have them all of one length, as NumPy requires."""
    a = as_tensor_variable(a)
    if a.ndim < 2:
        raise TypeError(f"fill_diagonal: a must have at least two dimensions, got {a} with {a.ndim}")
    val = _diagonal_value(a, val, "fill_diagonal")
    known = {n for n in a.type.shape if n is not None}
    if a.ndim > 2 and len(known) > 1:
        raise ValueError(f"fill_diagonal: the {a.ndim} dimensions of {a} must have one length, got {a.type.shape}")
    sizes = shape_of(a)
    # a matrix takes the shorter side; more dimensions take the longest, so that unequal sizes
    # known only at run time index out of bounds (an error) instead of filling a shorter diagonal
    length = E["minimum"](*sizes) if a.ndim == 2 else _largest(sizes)
    i = arange(length)
    return set_subtensor(a[(i,) * a.ndim], val)


def _largest(sizes):
    out = sizes[0]
    for s in sizes[1:]:
        out = E["maximum"](out, s)
    return out


def fill_diagonal_offset(a, val, offset):
    """PyTensor's ``fill_diagonal_offset``: a copy of the matrix ``a`` with its ``offset``-th diagonal
    (above the main one for ``offset > 0``, below for ``offset < 0``) set to ``val``; ``offset`` is an
    integer, possibly symbolic; a diagonal outside the matrix leaves it unchanged."""
    a, offset = as_tensor_variable(a), as_tensor_variable(offset)
    if a.ndim != 2:
        raise TypeError(f"fill_diagonal_offset: a must be a matrix, got {a} with {a.ndim} dimensions")
    val = _diagonal_value(a, val, "fill_diagonal_offset")
    if offset.ndim != 0 or offset.dtype not in DISCRETE_DTYPES or offset.dtype == "bool":
        raise TypeError(f"fill_diagonal_offset: offset must be an integer scalar, got {offset} ({offset.type})")
    offset = cast(offset, "int64")
    rows, cols = shape_of(a)
    down, right = E["maximum"](-offset, 0), E["maximum"](offset, 0)
    length = E["maximum"](E["minimum"](rows - down, cols - right), 0)
    i = arange(length)
    return set_subtensor(a[i + down, i + right], val)


def bincount(x, weights=None, minlength=None, assert_nonneg=False):
    """PyTensor's ``bincount``: ``out[n]`` counts (or, with ``weights``, sums the weights of) the
    elements of the integer vector ``x`` equal to ``n``; ``len(out)`` is ``max(x) + 1``, at least
    ``minlength``.  As in PyTensor the counts have ``x``'s dtype and the sums ``weights``' dtype.
    A negative element is an error at run time, never a count written at the end of ``out``:
    AssertionError with ``assert_nonneg`` (PyTensor's check), else IndexError."""
    x = as_tensor_variable(x)
    if x.ndim != 1:
        raise TypeError(f"bincount: x must be a vector, got {x} with {x.ndim} dimensions")
    if x.dtype not in DISCRETE_DTYPES or x.dtype == "bool":
        raise TypeError(f"bincount: x must hold integers, got {x} of dtype {x.dtype}")
    # -1 appended: the length of an empty x's count is 0 (NumPy's), not an error from max of nothing
    length = _max_or(x, -1) + 1
    if minlength is not None:
        length = E["maximum"](length, cast(as_tensor_variable(minlength), "int64"))
    if assert_nonneg:
        x = check_and_raise(x, all_(E["ge"](x, 0)), exc_type=AssertionError,
                            msg="bincount: x has a negative element, and assert_nonneg=True")
    # a negative element is sent past the end, where indexing raises
    where_to = E["switch"](E["ge"](x, 0), cast(x, "int64"), length)
    if weights is None:
        out, add = alloc(constant(0, dtype=x.dtype), length), constant(1, dtype=x.dtype)
    else:
        weights = as_tensor_variable(weights)
        if weights.ndim != 1:
            raise TypeError(f"bincount: weights must be a vector like x, got {weights} with {weights.ndim} dimensions")
        out, add = alloc(constant(0, dtype=weights.dtype), length), weights
    return inc_subtensor(out[where_to], add)


def _max_or(x, floor):
    """``max(x)``, or ``floor`` for an empty ``x``."""
    return max_(concatenate([cast(x, "int64"), constant(np.array([floor], dtype="int64"))]))


__all__ = [
    "CumOp", "Nonzero", "Repeat", "allclose", "bincount", "fill_diagonal", "fill_diagonal_offset", "array_split_points", "atleast_1d", "atleast_2d", "atleast_3d",
    "broadcast_to", "column_stack", "cumprod", "cumsum", "diff", "dstack", "eye", "flatnonzero",
    "hstack", "identity_like", "isclose", "isfinite", "nan_to_num", "nonzero", "pad",
    "repeat", "roll", "split", "tri", "tril", "triu", "vstack", "where",
]
