"""The whole Numba function's forms of indexing and array-making nodes (``numba_program``'s
``TRANSLATIONS`` lists them): basic and advanced subtensors and their increments,
``SpecifyShape``, ``Alloc``, ``ARange``, ``Join``, ``ExtractDiag`` and ``CumOp``.

Each translation takes the writer (``numba_translate_basic.Writer``) and the node, and returns the lines
computing the node, or None where it has no form for these types or index shapes.  Where NumPy
raises (an index out of bounds, a mask of the wrong length, shapes that do not match) the lines
raise too: the caller then runs the program, whose node raises its own error.  Integer indices
are checked here because Numba's indexing wraps or reads past the end without a check.
"""

from __future__ import annotations

import numpy as np

from eqgraph.exec.numba.kernels import numba
from eqgraph.exec.numba.scalar_steps import NUMPY_DTYPES, cast_form

#: every dtype the whole function handles: indexing moves values, whatever their dtype
_DTYPES = NUMPY_DTYPES


def _position(name: str, length: str) -> list:
    """Lines checking the integer ``name`` as a position on an axis of ``length`` (NumPy's
    IndexError outside ``-length <= name < length``)."""
    return [f"if {name} < -{length} or {name} >= {length}: raise IndexError('index out of bounds')"]


def _basic_index(w, x_name: str, idx_list, index_inputs) -> tuple[list, str] | None:
    """``(check lines, the subscript)`` of a basic index (slices, integers), or None where it has a
    newaxis (Numba's basic indexing has none)."""
    inputs, checks, parts, axis = iter(index_inputs), [], [], 0
    for entry in idx_list:
        if entry is None:
            return None
        if isinstance(entry, tuple):
            bounds = [w.value(next(inputs)) if p == "?" else ("" if p is None else repr(p)) for p in entry[1:]]
            if entry[3] == "?":
                checks.append(f"if {bounds[2] or 1} == 0: raise ValueError('slice step cannot be zero')")
            parts.append(f"{bounds[0]}:{bounds[1]}" + (f":{bounds[2]}" if bounds[2] else ""))
        else:
            position = w.value(next(inputs)) if entry == "?" else repr(entry)
            checks += _position(position, f"{x_name}.shape[{axis}]")
            parts.append(position)
        axis += 1
    return checks, ", ".join(parts)


def subtensor(w, node):
    """``Subtensor``: Numba's basic indexing (a view, or a scalar where every axis is indexed)."""
    (x, *index), out = node.inputs, node.outputs[0]
    if x.ndim == 0 or out.dtype not in _DTYPES:
        return None
    made = _basic_index(w, w.value(x), node.op.idx_list, index)
    if made is None:
        return None
    checks, subscript = made
    return [*checks, f"{w.define(out)} = {w.value(x)}[{subscript}]"]


def _advanced_form(op, x, index) -> str | None:
    """Which advanced index this is: ``"take"`` (one integer vector on an axis of a vector or
    matrix, full slices elsewhere), ``"mask"`` (a boolean vector on a vector), ``"pairs"`` (two
    integer vectors on a matrix), or None."""
    entries, full = op.idx_list, ("slice", None, None, None)
    arrays = [i for i, e in enumerate(entries) if e == "a"]
    if len(entries) != x.ndim or any(e != "a" and e != full for e in entries) or any(i.ndim != 1 for i in index):
        return None
    if len(arrays) == 1 and x.ndim in (1, 2) and index[0].dtype == "int64":
        return "take"
    if len(arrays) == 1 and x.ndim == 1 and index[0].dtype == "bool":
        return "mask"
    if len(arrays) == 2 and x.ndim == 2 and all(i.dtype == "int64" for i in index):
        return "pairs"
    return None


def advanced_subtensor(w, node):
    """``AdvancedSubtensor`` in the forms ``_advanced_form`` names (a copy, as NumPy's)."""
    (x, *index), op, out = node.inputs, node.op, node.outputs[0]
    form = _advanced_form(op, x, index)
    if form is None or out.dtype not in _DTYPES:
        return None
    names = ", ".join(w.value(i) for i in index)
    if form == "take":
        return [f"{w.define(out)} = take_{x.ndim}d({w.value(x)}, {names}, {op.idx_list.index('a')})"]
    return [f"{w.define(out)} = {form}({w.value(x)}, {names})"]


def _adds_booleans(op, x) -> bool:
    """An increment of booleans: NumPy's ``True + True`` is True, Numba's 2."""
    return not op.set_instead_of_inc and x.dtype == "bool"


def inc_subtensor(w, node):
    """``IncSubtensor``: a copy of ``x`` whose basic region is set to ``y`` or incremented by it."""
    (x, y, *index), op, out = node.inputs, node.op, node.outputs[0]
    if x.ndim == 0 or out.dtype not in _DTYPES or y.dtype != x.dtype or _adds_booleans(op, x):
        return None
    copy = w.define(out)
    made = _basic_index(w, copy, op.idx_list, index)
    if made is None:
        return None
    checks, subscript = made
    lines = [f"{copy} = np.copy({w.value(x)})", *checks]
    if len(op.idx_list) == x.ndim and all(not isinstance(e, tuple) for e in op.idx_list):   # one element
        value = w.one_element(y) or (w.value(y) if y.ndim == 0 else None)
        if value is None:
            return None
        action = "=" if op.set_instead_of_inc else "+="
        return lines + [f"{copy}[{subscript}] {action} {value}"]
    region = w.fresh("g")
    lines.append(f"{region} = {copy}[{subscript}]")
    value = w.value(y)
    if op.set_instead_of_inc:
        return lines + [f"{region}[...] = {value}"]
    return lines + [f"{region}[...] = {region} + {value}"]


def advanced_inc_subtensor(w, node):
    """``AdvancedIncSubtensor``: a copy of ``x`` with ``y`` written (or added, repeated indices
    adding up in index order, as ``np.add.at``) at the ``take`` or ``pairs`` positions."""
    (x, y, *index), op, out = node.inputs, node.op, node.outputs[0]
    form = _advanced_form(op, x, index)
    if form not in ("take", "pairs") or out.dtype not in _DTYPES or y.dtype != x.dtype or y.ndim > 1 or \
            _adds_booleans(op, x):
        return None
    if form == "take" and (x.ndim != 1 or y.ndim > 1):
        return None
    value = w.value(y)
    if y.ndim == 0:
        value = f"np.full(1, {value})"
    names = ", ".join(w.value(i) for i in index)
    return [f"{w.define(out)} = put_{form}({w.value(x)}, {value}, {names}, {op.set_instead_of_inc})"]


def specify_shape(w, node):
    """``SpecifyShape``: the input itself, once its shape is checked."""
    (x,), out = node.inputs, node.outputs[0]
    name = w.value(x)
    w.names[out] = name
    return [f"if {name}.shape[{d}] != {size}: raise ValueError('SpecifyShape: another shape')"
            for d, size in enumerate(node.op.shape) if size is not None]


def check_and_raise(w, node):
    """``CheckAndRaise``: its value itself, once every condition holds; where one does not the
    function raises, and the program's node raises the op's own exception."""
    (value, *conditions), out = node.inputs, node.outputs[0]
    lines = [f"if not {w.value(c) if c.ndim == 0 else f'np.all({w.value(c)})'}: raise ValueError('a check failed')"
             for c in conditions]
    w.names[out] = w.value(value)
    return lines


def make_vector(w, node):
    """``MakeVector``: a vector of its scalars, each cast to its dtype as ``np.array`` casts (not
    from floats to integers: NumPy raises for NaN there)."""
    out = node.outputs[0]
    if out.dtype not in _DTYPES:
        return None
    items = [cast_form(w.value(v), v.dtype, out.dtype) for v in node.inputs]
    if None in items:
        return None
    vector = w.define(out)
    return [f"{vector} = np.empty({len(items)}, dtype={_DTYPES[out.dtype]})",
            *[f"{vector}[{k}] = {item}" for k, item in enumerate(items)]]


def alloc(w, node):
    """``Alloc``: ``np.full`` of a scalar, an array broadcast into a new one (a negative size, or
    a value that does not broadcast to the shape, raises, as in NumPy)."""
    (value, *dims), out = node.inputs, node.outputs[0]
    if out.dtype not in _DTYPES or any(d.dtype != "int64" for d in dims) or value.ndim and value.dtype != out.dtype:
        return None
    shape = "".join(f"{w.value(d)}, " for d in dims)
    if not value.ndim:
        return [f"{w.define(out)} = np.full(({shape}), {w.value(value)}, dtype={_DTYPES[out.dtype]})"]
    name = w.define(out)
    return [f"{name} = np.empty(({shape}), dtype={_DTYPES[out.dtype]})", f"{name}[...] = {w.value(value)}"]


def arange(w, node):
    """``ARange`` of integers (Numba's ``np.arange`` in int64, each bound cast to it exactly:
    PyMC's graphs start and step with int8 constants; a zero step raises)."""
    out = node.outputs[0]
    if out.dtype != "int64" or not all(v.dtype in _DTYPES and v.dtype != "bool" and np.can_cast(v.dtype, "int64", "safe")
                                       for v in node.inputs):
        return None
    start, stop, step = (cast_form(w.value(v), v.dtype, "int64") for v in node.inputs)
    return [f"if {step} == 0: raise ValueError('arange: step must not be zero')",
            f"{w.define(out)} = np.arange({start}, {stop}, {step})"]


def join(w, node):
    """``Join``: ``np.concatenate`` (which checks the other axes' lengths)."""
    out = node.outputs[0]
    if out.dtype not in _DTYPES or any(t.dtype != out.dtype for t in node.inputs):
        return None
    parts = "".join(f"{w.value(t)}, " for t in node.inputs)
    return [f"{w.define(out)} = np.concatenate(({parts}), axis={node.op.axis})"]


def extract_diag(w, node):
    """``ExtractDiag`` of a matrix (a copy)."""
    op, (x,), out = node.op, node.inputs, node.outputs[0]
    if x.ndim != 2 or out.dtype not in _DTYPES:
        return None
    name = w.value(x) if op.axis1 == 0 else f"{w.value(x)}.T"
    return [f"{w.define(out)} = diagonal({name}, {op.offset})"]


def cumulative(w, node):
    """``CumOp`` of a vector or a matrix: running sums or products in order, as NumPy's."""
    op, (x,), out = node.op, node.inputs, node.outputs[0]
    # the op accumulates in its output's dtype, x cast to it first: the loops add x's own values, the
    # same where the cast is exact (Numba adds an int32 to a float32 in float64, not float32)
    if x.ndim not in (1, 2) or out.dtype not in _DTYPES or out.dtype == "bool" or \
            not np.can_cast(x.dtype, out.dtype, "safe"):
        return None
    axis = "" if x.ndim == 1 else f"{op.axis}, "
    return [f"{w.define(out)} = cumulative_{x.ndim}d({w.value(x)}, {axis}{op.mode == 'mul'}, "
            f"np.zeros(1, dtype={_DTYPES[out.dtype]}))"]


# -- the helpers the generated functions call ----------------------------------------------------
HELPERS = ("take_1d", "take_2d", "mask", "pairs", "put_take", "put_pairs", "diagonal", "cumulative_1d",
           "cumulative_2d")

if numba is not None:
    _njit = numba.njit(cache=True, error_model="numpy")

    @_njit
    def _wrap(i, n):
        if i < -n or i >= n:
            raise IndexError("index out of bounds")
        return i + n if i < 0 else i

    @_njit
    def take_1d(x, idx, axis):
        out = np.empty(idx.shape[0], dtype=x.dtype)
        for k in range(idx.shape[0]):
            out[k] = x[_wrap(idx[k], x.shape[0])]
        return out

    @_njit
    def take_2d(x, idx, axis):
        """``x[idx]`` (axis 0) or ``x[:, idx]`` (axis 1) of a matrix."""
        if axis == 0:
            out = np.empty((idx.shape[0], x.shape[1]), dtype=x.dtype)
            for k in range(idx.shape[0]):
                out[k, :] = x[_wrap(idx[k], x.shape[0]), :]
            return out
        out = np.empty((x.shape[0], idx.shape[0]), dtype=x.dtype)
        for k in range(idx.shape[0]):
            out[:, k] = x[:, _wrap(idx[k], x.shape[1])]
        return out

    @_njit
    def mask(x, keep):
        if keep.shape[0] != x.shape[0]:
            raise IndexError("boolean index did not match the indexed array")
        return x[keep]

    @_njit
    def _pair_count(x, rows, cols):
        """The length of ``rows`` and ``cols`` broadcast together (NumPy's IndexError where they
        do not broadcast)."""
        if rows.shape[0] == cols.shape[0] or cols.shape[0] == 1:
            return rows.shape[0]
        if rows.shape[0] == 1:
            return cols.shape[0]
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together")

    @_njit
    def pairs(x, rows, cols):
        """``x[rows, cols]`` of a matrix."""
        n = _pair_count(x, rows, cols)
        out = np.empty(n, dtype=x.dtype)
        for k in range(n):
            i, j = rows[k if rows.shape[0] > 1 else 0], cols[k if cols.shape[0] > 1 else 0]
            out[k] = x[_wrap(i, x.shape[0]), _wrap(j, x.shape[1])]
        return out

    @_njit
    def _check_values(y, n):
        if y.shape[0] != n and y.shape[0] != 1:
            raise ValueError("the values do not broadcast to the indexed positions")

    @_njit
    def put_take(x, y, idx, set_instead):
        """A copy of the vector ``x`` with ``y`` written at (or added to) positions ``idx``."""
        out = np.copy(x)
        _check_values(y, idx.shape[0])
        for k in range(idx.shape[0]):
            i = _wrap(idx[k], x.shape[0])
            v = y[k if y.shape[0] > 1 else 0]
            out[i] = v if set_instead else out[i] + v
        return out

    @_njit
    def put_pairs(x, y, rows, cols, set_instead):
        """A copy of the matrix ``x`` with ``y`` written at (or added to) positions ``rows, cols``."""
        out = np.copy(x)
        n = _pair_count(x, rows, cols)
        _check_values(y, n)
        for k in range(n):
            i = _wrap(rows[k if rows.shape[0] > 1 else 0], x.shape[0])
            j = _wrap(cols[k if cols.shape[0] > 1 else 0], x.shape[1])
            v = y[k if y.shape[0] > 1 else 0]
            out[i, j] = v if set_instead else out[i, j] + v
        return out

    @_njit
    def diagonal(x, offset):
        first_row, first_col = max(-offset, 0), max(offset, 0)
        n = max(0, min(x.shape[0] - first_row, x.shape[1] - first_col))
        out = np.empty(n, dtype=x.dtype)
        for k in range(n):
            out[k] = x[first_row + k, first_col + k]
        return out

    @_njit
    def cumulative_1d(x, product, like):
        """Running sums (products) of a vector, in the dtype of ``like`` (one element)."""
        out = np.empty(x.shape[0], dtype=like.dtype)
        for k in range(x.shape[0]):
            if k == 0:
                out[k] = x[k]
            else:
                out[k] = out[k - 1] * x[k] if product else out[k - 1] + x[k]
        return out

    @_njit
    def cumulative_2d(x, axis, product, like):
        """Running sums (products) of a matrix along ``axis``, in the dtype of ``like``."""
        out = np.empty(x.shape, dtype=like.dtype)
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                if (i if axis == 0 else j) == 0:
                    out[i, j] = x[i, j]
                else:
                    before = out[i - 1, j] if axis == 0 else out[i, j - 1]
                    out[i, j] = before * x[i, j] if product else before + x[i, j]
        return out
else:
    take_1d = take_2d = mask = pairs = put_take = put_pairs = diagonal = cumulative_1d = cumulative_2d = None
