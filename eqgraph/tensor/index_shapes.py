"""Shapes of indexing: the symbolic length of a slice (Subtensor's shape), and PyTensor's public
helpers, the canonical form of a slice or an index (``get_canonical_form_slice``) and the
symbolic shape of ``a[indices]`` (``indexed_result_shape``).

Both work on graphs, not arrays: their parts may be Python ints, NumPy integers or 0-d integer
tensors, and what can be known without running the graph comes back as Python ints.
"""

from __future__ import annotations

import numpy as np

from eqgraph.tensor.basic import NotScalarConstantError, as_tensor_variable, get_scalar_constant_value
from eqgraph.tensor.elemwise import ELEMWISE_OPS, cast
from eqgraph.tensor.shape import int64_const
from eqgraph.terms.basic import Variable

E = ELEMWISE_OPS


# -- the symbolic length of a slice (Subtensor's shape) ----------------------------------------
def _sym(v):
    return int64_const(v) if isinstance(v, (int, np.integer)) else v


def slice_length(n, start, stop, step):
    """Symbolic length of ``range(n)[start:stop:step]`` (parts: int, None or int64 variable)."""
    step = 1 if step is None else step
    if isinstance(step, (int, np.integer)):
        return _directed_length(_sym(n), start, stop, abs(int(step)), step > 0)
    n = _sym(n)  # a symbolic step: its sign chooses between the two directions' lengths
    return E["switch"](E["lt"](step, 0), _directed_length(n, start, stop, -step, False),
                       _directed_length(n, start, stop, step, True))


def _directed_length(n, start, stop, size, forward: bool):
    """Length of the slice with a step of ``size`` (> 0) forward, or ``-size`` backward."""
    first, last = slice_bounds(n, start, stop, forward)
    span = last - first if forward else first - last
    return E["maximum"](E["int_div"](span + (size - 1), size), int64_const(0))


def slice_bounds(n, start, stop, forward: bool) -> tuple:
    """The first index and the end (exclusive) of ``range(n)[start:stop:step]``, as
    ``slice.indices`` gives them, for a step forward (> 0) or backward (< 0): symbolic int64."""
    n = _sym(n)
    lo, hi = (int64_const(0), n) if forward else (int64_const(-1), n - 1)
    default_start, default_stop = (lo, hi) if forward else (hi, lo)

    def clamp(v, default):
        if v is None:
            return default
        v = _sym(v)
        return E["switch"](E["lt"](v, 0), E["maximum"](v + n, lo), E["minimum"](v, hi))

    return clamp(start, default_start), clamp(stop, default_stop)


# -- PyTensor's helpers -------------------------------------------------------------------------
def get_canonical_form_slice(theslice, length):
    """``(canonical, direction)`` such that ``a[theslice]`` is ``a[canonical][::direction]`` for
    any ``a`` of ``length`` elements along the axis.

    For a slice, ``canonical`` is a slice with ``0 <= start <= stop <= length`` and ``step > 0``,
    and ``direction`` is 1 or -1 (a 0-d int64 tensor where the step's sign is not known). For an
    integer index ``i``, ``canonical`` is ``i`` if ``i >= 0`` else ``length + i`` (a tensor for a
    tensor ``i``), and the direction is 1. A slice's parts known without running the graph are
    Python ints.
    """
    if isinstance(theslice, slice):
        return _canonical_slice(theslice, length)
    index = _integer_part(theslice, "get_canonical_form_slice: theslice")
    if index is None:
        raise ValueError(f"get_canonical_form_slice: {theslice!r} is not a supported slice: expected a slice, "
                         "an int or a 0-d integer tensor")
    length = _integer_part(length, "get_canonical_form_slice: length")
    if isinstance(index, int):
        return (index if index >= 0 else index + _literal(length)), 1
    known = _literal(index)  # a tensor stays a tensor: the index itself, or length + index
    if isinstance(known, int):
        return (index if known >= 0 else index + length), 1
    return E["switch"](E["lt"](index, 0), index + length, index), 1


def _canonical_slice(theslice: slice, length):
    parts = [_integer_part(p, f"get_canonical_form_slice: the slice's {what}")
             for p, what in zip((theslice.start, theslice.stop, theslice.step), ("start", "stop", "step"))]
    n = _integer_part(length, "get_canonical_form_slice: length")
    start, stop, step = map(_literal, parts)
    n_known = _literal(n)
    step = 1 if step is None else step
    if step == 0:
        raise ValueError("get_canonical_form_slice: the slice's step cannot be zero")
    if all(isinstance(v, int) or v is None for v in (start, stop)) and isinstance(n_known, int) \
            and isinstance(step, int):
        return _canonical_ints(slice(start, stop, step), n_known)
    start, stop = (None if v is None else (v if isinstance(v, int) else _int64(v)) for v in (start, stop))
    n = n_known if isinstance(n_known, int) else _int64(n)
    if isinstance(step, int):
        return _directed(n, start, stop, abs(step), step > 0), 1 if step > 0 else -1
    step = _int64(step)
    backward = E["lt"](step, 0)
    ahead, back = _directed(n, start, stop, step, True), _directed(n, start, stop, -step, False)
    return (slice(*(E["switch"](backward, b, a) for a, b in zip(_parts(ahead), _parts(back)))),
            E["switch"](backward, int64_const(-1), int64_const(1)))


def _canonical_ints(theslice: slice, n: int):
    start, stop, step = theslice.indices(n)
    if step > 0:
        return slice(start, max(start, stop), step), 1
    count = len(range(start, stop, step))
    if count == 0:
        return slice(0, 0, -step), -1
    return slice(start + (count - 1) * step, start + 1, -step), -1


def _directed(n, start, stop, size, forward: bool) -> slice:
    """The canonical slice of ``[start:stop:size]`` (forward) or ``[start:stop:-size]``."""
    first, end = slice_bounds(n, start, stop, forward)
    if forward:
        return slice(first, E["maximum"](first, end), size)
    count = E["maximum"](E["int_div"](first - end + (size - 1), size), int64_const(0))
    some = E["gt"](count, 0)
    zero = int64_const(0)
    return slice(E["switch"](some, first - (count - 1) * size, zero), E["switch"](some, first + 1, zero), size)


def _parts(s: slice) -> tuple:
    return tuple(p if isinstance(p, Variable) else int64_const(p) for p in (s.start, s.stop, s.step))


def _integer_part(v, what: str):
    """``v`` as None, an int, or a 0-d integer tensor; ValueError naming ``what`` otherwise."""
    if v is None or (isinstance(v, (int, np.integer)) and not isinstance(v, bool)):
        return None if v is None else int(v)
    if isinstance(v, Variable):
        v = as_tensor_variable(v)
        if v.ndim == 0 and v.dtype.startswith(("int", "uint")):
            return v
    raise ValueError(f"{what}: {v!r} is not a supported slice part: expected None, an int or a 0-d integer tensor")


def _literal(v):
    """``v``'s value where the graph holds it as a constant, else ``v``."""
    if isinstance(v, Variable):
        try:
            return int(get_scalar_constant_value(v))
        except NotScalarConstantError:
            return v
    return v


def _int64(v):
    if isinstance(v, (int, np.integer)):
        return int64_const(int(v))
    return v if v.dtype == "int64" else cast(v, "int64")


def indexed_result_shape(array_shape, indices, indices_are_shapes: bool = False) -> tuple:
    """The symbolic shape of ``a[indices]`` for an ``a`` of shape ``array_shape``, by NumPy's rules
    of basic and advanced indexing (integer and boolean arrays, integers, slices, None).

    ``array_shape`` is a sequence of sizes or an integer vector of static length. With
    ``indices_are_shapes=True`` each index array is given by its shape (a tuple of sizes, 1 for a
    broadcastable axis) instead of the array itself. Returns a tuple of 0-d int64 tensors.
    """
    dims = _sizes(array_shape)
    entries = [_entry(i, indices_are_shapes) for i in indices]
    consumed = sum(e[1] for e in entries)
    if consumed > len(dims):
        raise IndexError(f"indexed_result_shape: {consumed} axes indexed, but the array has {len(dims)}")
    entries += [(slice(None), 1, None)] * (len(dims) - consumed)
    advanced = [k for k, e in enumerate(entries) if e[2] is not None]
    together = _broadcast([entries[k][2] for k in advanced]) if advanced else ()
    adjacent = not advanced or advanced[-1] - advanced[0] == len(advanced) - 1
    out, axis = [] if adjacent else list(together), 0
    for k, (item, taken, _) in enumerate(entries):
        if advanced and adjacent and k == advanced[0]:
            out += together
        if item is None and taken == 0:
            out.append(int64_const(1))
        elif isinstance(item, slice):
            out.append(_slice_size(dims[axis], item))
        axis += taken
    return tuple(_int64(d) for d in out)


def _sizes(array_shape) -> list:
    if isinstance(array_shape, Variable):
        length = array_shape.type.shape[0] if array_shape.ndim == 1 else None
        if length is None:
            raise ValueError(f"indexed_result_shape: array_shape {array_shape} must be an integer vector "
                             "of static length, or a sequence of sizes")
        return [array_shape[i] for i in range(length)]
    return list(array_shape)


def _entry(index, are_shapes: bool) -> tuple:
    """``(basic item or None, axes consumed, shape of an advanced index or None)``."""
    if index is None:
        return None, 0, None
    if isinstance(index, slice):
        return index, 1, None
    if are_shapes:
        return "a", 1, tuple(index)
    index = as_tensor_variable(index)
    if index.dtype == "bool":
        if index.ndim == 0:
            raise IndexError(f"indexed_result_shape: a 0-d boolean {index} is no index")
        return "a", index.ndim, (cast(index, "int64").sum(),)
    if not index.dtype.startswith(("int", "uint")):
        raise IndexError(f"indexed_result_shape: index {index} of dtype {index.dtype} is neither integer nor boolean")
    return "a", 1, tuple(1 if s == 1 else index.shape[k] for k, s in enumerate(index.type.shape))


def _broadcast(shapes: list) -> tuple:
    """NumPy's broadcast of the index shapes (sizes 1 broadcast; the others are taken as equal)."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(ndim):
        sizes = [s[len(s) - ndim + axis] for s in shapes if len(s) - ndim + axis >= 0]
        sizes = [_int64(d) for d in sizes if _literal(d) != 1]
        size = sizes[0] if sizes else int64_const(1)
        for d in sizes[1:]:
            size = E["maximum"](size, d)
        out.append(size)
    return tuple(out)


def _slice_size(n, item: slice):
    parts = [_literal(_integer_part(p, "indexed_result_shape: a slice part"))
             for p in (item.start, item.stop, item.step)]
    parts = [p if p is None or isinstance(p, int) else _int64(p) for p in parts]
    return slice_length(n if isinstance(n, (int, np.integer)) else _int64(n), *parts)
