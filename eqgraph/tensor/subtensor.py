"""Indexing: `Subtensor` (ints, slices, newaxis), `AdvancedSubtensor` (integer and boolean
arrays, NumPy's rules), and their writing forms `set_subtensor` / `inc_subtensor`.

An index is stored in the op as ``idx_list``, one entry per axis it touches:

- an ``int`` (a constant index) or ``"?"`` (a 0-d integer input),
- ``None`` (newaxis),
- ``("slice", start, stop, step)`` whose parts are ints, None, or ``"?"`` (inputs),
- ``"a"``: an integer or boolean array input (advanced indexing).

Constant parts live in the op (the e-graph matches on them); symbolic parts are
the node's inputs after ``x`` (and after ``y`` for the writing forms).
"""

from __future__ import annotations

import numpy as np

from eqgraph.tensor.basic import NotScalarConstantError, as_tensor_variable, constant, get_scalar_constant_value
from eqgraph.tensor.duplicates import last_writes
from eqgraph.tensor.elemwise import ELEMWISE_OPS, cast
from eqgraph.tensor.index_shapes import slice_length
from eqgraph.tensor.shape import MakeVector, Shape, flatten, int64_const, shape_of
from eqgraph.tensor.type import DISCRETE_DTYPES, TensorType
from eqgraph.terms.basic import Apply, Constant, Variable
from eqgraph.terms.op import Op
from eqgraph.xp import array_namespace, as_output

FULL_SLICE = ("slice", None, None, None)
E = ELEMWISE_OPS


class BooleanScalarIndexError(IndexError, NotImplementedError):
    """A boolean scalar index (NumPy's new axis): PyTensor's NotImplementedError, an IndexError."""


class RegionShapeError(TypeError, ValueError):
    """A value that cannot broadcast to its indexed region: PyTensor's TypeError, NumPy's ValueError."""


# -- parsing a Python index ------------------------------------------------------------
def parse_index(x, index) -> tuple[tuple, list]:
    """``(idx_list, inputs)`` for ``x[index]``, with the ellipsis expanded and trailing
    axes padded with full slices."""
    items = index if isinstance(index, tuple) else (index,)
    consumed = sum(_axes_consumed(i) for i in items if i is not Ellipsis)
    if sum(i is Ellipsis for i in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > x.ndim:
        raise IndexError(f"too many indices for tensor: tensor is {x.ndim}-dimensional, but {consumed} were "
                         f"indexed (indexing {x})")
    idx_list, inputs = [], []
    for item in items:
        if item is Ellipsis:
            idx_list.extend([FULL_SLICE] * (x.ndim - consumed))
        elif item is None:
            idx_list.append(None)
        elif isinstance(item, slice):
            parts = []
            for p in (item.start, item.stop, item.step):
                part, var = _scalar_part(p)
                parts.append(part)
                if var is not None:
                    inputs.append(var)
            if parts[2] == 0:
                raise ValueError("slice step cannot be zero")
            idx_list.append(("slice", *parts))
        else:
            part, var = _scalar_part(item, allow_array=True)
            idx_list.append(part)
            if var is not None:
                inputs.append(var)
    # the axes no entry touched are taken whole
    touched = sum(_entry_axes(e, v) for e, v in _with_inputs(idx_list, inputs))
    idx_list.extend([FULL_SLICE] * (x.ndim - touched))
    return tuple(idx_list), inputs


def _axes_consumed(item) -> int:
    if item is None:
        return 0
    if isinstance(item, Variable) and item.ndim > 0 and item.dtype == "bool":
        return item.ndim
    if isinstance(item, (np.ndarray, list)) and np.asarray(item).dtype == bool:
        return np.asarray(item).ndim
    return 1


def _scalar_part(p, allow_array: bool = False):
    """(idx_list entry, input variable or None) for one int/slice part of an index."""
    if p is None:
        return None, None
    if isinstance(p, (bool, np.bool_)):
        raise BooleanScalarIndexError("boolean scalars are not supported as indices")
    if isinstance(p, (int, np.integer)):
        return int(p), None
    if isinstance(p, Variable):
        v = as_tensor_variable(p)
        if v.dtype not in DISCRETE_DTYPES:
            raise IndexError(f"index {v} must be an integer (or boolean mask), not {v.dtype}")
        if v.ndim == 0:
            if v.dtype == "bool":
                raise BooleanScalarIndexError("boolean scalars are not supported as indices")
            if isinstance(v, Constant):
                return int(v.data), None
            return "?", cast(v, "int64")
        if not allow_array:
            raise IndexError(f"slice bounds must be scalars, got {v}")
        return "a", v
    if allow_array and isinstance(p, (list, tuple)) and any(isinstance(i, Variable) for i in p):
        return _scalar_part(as_tensor_variable(p), allow_array)  # x[[i, j]]: an index vector
    if allow_array and isinstance(p, (list, tuple, np.ndarray)):
        arr = np.asarray(p)
        if arr.dtype.kind not in "biu":
            raise IndexError(f"array indices must be integers or booleans, got dtype {arr.dtype}")
        if arr.dtype == bool and arr.ndim == 0:  # NumPy's x[np.array(True)] adds an axis; PyTensor refuses it
            raise BooleanScalarIndexError("boolean scalars are not supported as indices")
        return "a", as_tensor_variable(arr)
    raise IndexError(f"unsupported index {p!r}")


def _with_inputs(idx_list, inputs):
    """Pairs (entry, array input or None), for entries that read array inputs."""
    wanted = sum(p in ("?", "a") for e in idx_list for p in (e[1:] if isinstance(e, tuple) else (e,)))
    if len(inputs) != wanted:
        raise TypeError(f"the index {{{format_index(idx_list)}}} reads {wanted} index input(s), "
                        f"{len(inputs)} were given")
    it = iter(inputs)
    for e in idx_list:
        parts = e[1:] if isinstance(e, tuple) else (e,)
        var = None
        for p in parts:
            if p in ("?", "a"):
                v = next(it)
                if p == "a":
                    var = v
        yield e, var


def _entry_axes(entry, var) -> int:
    if entry is None:
        return 0
    if entry == "a" and var.dtype == "bool":
        return var.ndim
    return 1


# -- static shapes ------------------------------------------------------------------------
def _static_slice_length(n, start, stop, step):
    if "?" in (start, stop, step):
        return None
    if n is not None:
        return len(range(*slice(start, stop, step).indices(n)))
    # bounds of one sign keep their order for every length: stop at or before start is empty
    same_sign = isinstance(start, int) and isinstance(stop, int) and (start < 0) == (stop < 0)
    return 0 if same_sign and (stop <= start if (step or 1) > 0 else start <= stop) else None


def static_index_shape(x, idx_list, inputs) -> tuple:
    """The static shape of ``x[index]`` following NumPy's basic and advanced rules."""
    groups = []  # ("basic", size) or ("adv", shape)
    advanced = "a" in idx_list
    axis = 0
    for entry, var in _with_inputs(idx_list, inputs):
        if entry is None:
            groups.append(("basic", 1))
        elif isinstance(entry, tuple):
            n = x.type.shape[axis]
            size = n if entry == FULL_SLICE else _static_slice_length(n, *entry[1:])
            groups.append(("basic", size))
            axis += 1
        elif entry == "a":
            if var.dtype == "bool":  # a constant mask's count of True entries is known
                data = getattr(var, "data", None)
                groups.append(("adv", (None if data is None else int(np.count_nonzero(data)),)))
                axis += var.ndim
            else:
                groups.append(("adv", var.type.shape))
                axis += 1
        else:  # an integer
            n = x.type.shape[axis]
            if isinstance(entry, int) and n is not None and not -n <= entry < n:
                raise IndexError(f"index {entry} is out of bounds for axis {axis} of {x} with size {n}")
            if advanced:
                groups.append(("adv", ()))
            axis += 1
    if not advanced:
        return tuple(size for _, size in groups)
    adv_pos = [i for i, (kind, _) in enumerate(groups) if kind == "adv"]
    ndim = max(len(s) for k, s in groups if k == "adv")
    bshape = []
    for d in range(ndim):
        dims = [s[len(s) - ndim + d] for k, s in groups if k == "adv" and len(s) - ndim + d >= 0]
        known = {v for v in dims if v is not None and v != 1}
        if len(known) > 1:
            shapes = ", ".join(str(tuple(s)) for k, s in groups if k == "adv")
            raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together with shapes [{shapes}]")
        bshape.append(known.pop() if known else (1 if all(v == 1 for v in dims) else None))
    basic = [size for kind, size in groups if kind == "basic"]
    if adv_pos == list(range(adv_pos[0], adv_pos[-1] + 1)):
        before = [size for kind, size in groups[: adv_pos[0]]]
        after = [size for kind, size in groups[adv_pos[-1] + 1:]]
        return tuple(before + bshape + after)
    return tuple(bshape + basic)


def index_tuple(idx_list, inputs):
    """The runtime Python index for ``idx_list`` given the values of the index inputs."""
    it = iter(inputs)
    out = []
    for e in idx_list:
        if isinstance(e, tuple):
            out.append(slice(*(int(next(it)) if p == "?" else p for p in e[1:])))
        elif e == "?":
            out.append(int(next(it)))
        elif e == "a":
            out.append(next(it))
        else:
            out.append(e)
    return tuple(out)


def symbolic_index_shape(node, x_shape, idx_list, index_inputs) -> tuple:
    out_static = node.outputs[0].type.shape
    if "a" in idx_list:  # advanced: only the static shape is derived; unknown sizes read the output
        return shape_of(node.outputs[0])
    dims, axis, it = [], 0, iter(index_inputs)
    for e in idx_list:
        if e is None:
            dims.append(int64_const(1))
        elif isinstance(e, tuple):
            parts = [next(it) if p == "?" else p for p in e[1:]]
            size = out_static[len(dims)]
            dims.append(int64_const(size) if size is not None else
                        (x_shape[axis] if e == FULL_SLICE else slice_length(x_shape[axis], *parts)))
            axis += 1
        else:
            if e == "?":
                next(it)
            axis += 1
    return tuple(dims)


# -- facts for the type rules ----------------------------------------------------------------
NOT_AN_INT = -(1 << 62)


def _basic_entries(idx_list):
    """(entry, input axis) for the slices and newaxis of ``idx_list``, in order (every
    other entry takes one input axis and makes no output axis of its own)."""
    axis = 0
    for e in idx_list:
        if e is None:
            yield e, -1
        else:
            if isinstance(e, tuple):
                yield e, axis
            axis += 1


def slice_facts(entry, axis) -> tuple:
    """``(axis, start, start_from_end, stop, stop_from_end, step)`` for one output axis.

    A bound ``b`` counts from the end when ``from_end`` is 1: it stands for ``b + n`` on
    an axis of size ``n``, so ``x[-2:]`` is (axis, -2, 1, 0, 1, 1) and ``x[::-1]`` is
    (axis, -1, 1, -1, 0, -1). A newaxis is (-1, 0, 0, 0, 0, 0); a slice with symbolic
    parts has step 0 (its length is not static).
    """
    if entry is None:
        return (-1, 0, 0, 0, 0, 0)
    start, stop, step = entry[1:]
    if "?" in (start, stop, step):
        return (axis, 0, 0, 0, 0, 0)
    step = 1 if step is None else step
    if start is None:
        start = 0 if step > 0 else -1                            # the first element, or the last one
    if stop is None:
        stop, stop_from_end = (0, 1) if step > 0 else (-1, 0)   # n, or before the first element
    else:
        stop_from_end = int(stop < 0)
    return (axis, start, int(start < 0), stop, stop_from_end, step)


# -- the ops ------------------------------------------------------------------------------
class Subtensor(Op):
    """``x[index]`` with integers, slices and newaxis (a view of ``x``)."""

    __props__ = ("idx_list",)
    __egg_extras__ = ("slicing", "int_indices")  # for the e-graph's type rules (rulesets/types.egg)
    view_map = {0: [0]}

    def __init__(self, idx_list):
        self.idx_list = tuple(("slice", e.start, e.stop, e.step) if isinstance(e, slice) else e for e in idx_list)

    @property
    def slicing(self) -> tuple:
        """Six numbers per output axis of slices and newaxis, so that rules can compute the
        axis's size from the input's (see ``slice_facts``)."""
        return tuple(v for e, axis in _basic_entries(self.idx_list) for v in slice_facts(e, axis))

    @property
    def int_indices(self) -> tuple:
        """Per input axis, its constant integer index, or NOT_AN_INT (for ``x.shape[i]``)."""
        return tuple(e if isinstance(e, int) else NOT_AN_INT for e in self.idx_list if e is not None)

    def __str__(self):
        return f"{type(self).__name__}{{{format_index(self.idx_list)}}}"

    def pprint_term(self, node, args) -> str:
        """``x[0:2, i]`` for ``pprint``: the index as Python writes it."""
        return f"{args[0]}[{index_text(self.idx_list, args[1:])}]"

    def make_node(self, x, *index_inputs):
        x = as_tensor_variable(x)
        index_inputs = [as_tensor_variable(i) for i in index_inputs]
        shape = static_index_shape(x, self.idx_list, index_inputs)
        return Apply(self, [x, *index_inputs], [TensorType(x.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        x, *index = inputs
        xp = array_namespace(x)
        output_storage[0][0] = as_output(xp, x[index_tuple(self.idx_list, index)], node.outputs[0].type)

    def infer_shape(self, fgraph, node, shapes):
        return [symbolic_index_shape(node, shapes[0], self.idx_list, node.inputs[1:])]

    def connection_pattern(self, node):
        return [[True]] + [[False]] * (len(node.inputs) - 1)

    def scalar_constant_value(self, node):
        """``x.shape[i]`` of a static size, ``make_vector(...)[i]`` of a constant entry, or a
        constant's element at constant indices (``get_scalar_constant_value``)."""
        data = _constant_data(node.outputs[0])
        if data is not None:
            return data.copy()  # 0-d here: the caller asks for a scalar
        source = node.inputs[0].owner
        if source is not None and len(self.idx_list) == 1 and isinstance(self.idx_list[0], int):
            i = self.idx_list[0]
            if isinstance(source.op, Shape) and source.inputs[0].type.shape[i] is not None:
                return np.int64(source.inputs[0].type.shape[i])
            if isinstance(source.op, MakeVector):
                return get_scalar_constant_value(source.inputs[i])
        raise NotScalarConstantError(f"{node.outputs[0]} is not constant")


def _constant_data(v):
    """The array of ``v`` where it is a constant, or constant indices into one, else None."""
    if isinstance(v, Constant):
        return np.asarray(v.data)
    node = v.owner
    if node is None or type(node.op) is not Subtensor or len(node.inputs) > 1:
        return None
    return None if (data := _constant_data(node.inputs[0])) is None else data[index_tuple(node.op.idx_list, [])]


class AdvancedSubtensor(Subtensor):
    """``x[index]`` where the index has integer or boolean arrays (a copy, NumPy's rules)."""

    # The output is the basic axes (slices, newaxis; see Subtensor.slicing) with one block
    # inserted at `block_at`: the index inputs broadcast together. This layout follows
    # from idx_list alone when every array takes one axis of x (integer arrays and 1-d
    # masks); the type rules check that on the index inputs' types.
    __egg_extras__ = ("slicing", "block_at")
    view_map = {}

    @property
    def block_at(self) -> int:
        """The output axis where the index block starts: after the basic axes before it
        when the array (and integer) indices are adjacent, else 0 (NumPy's rule)."""
        advanced = [i for i, e in enumerate(self.idx_list) if e is not None and not isinstance(e, tuple)]
        if advanced == list(range(advanced[0], advanced[-1] + 1)):
            return advanced[0]  # every entry before the first one is a slice or newaxis
        return 0

    def perform(self, node, inputs, output_storage):
        x, *index = inputs
        xp = array_namespace(x)
        idx = index_tuple(self.idx_list, index)
        arrays = [i for i, e in enumerate(self.idx_list) if e == "a"]
        if (xp is not np and len(arrays) == 1 and idx[arrays[0]].dtype != xp.bool
                and all(e == FULL_SLICE for i, e in enumerate(self.idx_list) if i != arrays[0])):
            # the array-API form of x[:, idx]: take along one axis, with idx flattened
            k, positions = arrays[0], idx[arrays[0]]
            out = xp.take(x, xp.reshape(positions, (-1,)), axis=k)
            out = xp.reshape(out, tuple(x.shape[:k]) + tuple(positions.shape) + tuple(x.shape[k + 1:]))
        else:
            out = x[idx]
        output_storage[0][0] = as_output(xp, out, node.outputs[0].type)


class IncSubtensor(Op):
    """A copy of ``x`` with ``x[index]`` set to ``y`` (or incremented by ``y``)."""

    __props__ = ("idx_list", "set_instead_of_inc")

    def __init__(self, idx_list, set_instead_of_inc: bool = False):
        self.idx_list = tuple(("slice", e.start, e.stop, e.step) if isinstance(e, slice) else e for e in idx_list)
        self.set_instead_of_inc = bool(set_instead_of_inc)

    def __str__(self):
        name = type(self).__name__  # IncSubtensor, AdvancedIncSubtensor
        if self.set_instead_of_inc:
            name = name.replace("Inc", "Set")
        return f"{name}{{{format_index(self.idx_list)}}}"

    def pprint_term(self, node, args) -> str:
        """``inc_subtensor(x[0:2], y)`` (or ``set_subtensor``) for ``pprint``."""
        x, y, *index = args
        return f"{'set' if self.set_instead_of_inc else 'inc'}_subtensor({x}[{index_text(self.idx_list, index)}], {y})"

    def make_node(self, x, y, *index_inputs):
        x, y = as_tensor_variable(x), as_tensor_variable(y)
        index_inputs = [as_tensor_variable(i) for i in index_inputs]
        region = static_index_shape(x, self.idx_list, index_inputs)
        if y.dtype != x.dtype:
            if getattr(y, "weak", False) or np.can_cast(y.dtype, x.dtype, "safe"):
                y = cast(y, x.dtype)
            else:
                raise TypeError(f"{self}: cannot write {y} of dtype {y.dtype} into {x} of dtype "
                                f"{x.dtype} without losing precision; cast it first")
        if y.ndim > len(region) or any(
            a is not None and b is not None and b not in (1, a)
            for a, b in zip(region[len(region) - y.ndim:], y.type.shape)
        ):
            raise RegionShapeError(f"{self}: {y} of shape {y.type.shape} cannot be broadcast to the "
                             f"indexed region of shape {region}")
        return Apply(self, [x, y, *index_inputs], [x.type()])

    def perform(self, node, inputs, output_storage):
        x, y, *index = inputs
        xp = array_namespace(x)
        out = xp.asarray(x, copy=True)
        idx = index_tuple(self.idx_list, index)
        if self.set_instead_of_inc:
            out[idx] = y
        elif "a" in self.idx_list:
            index_add(xp, out, idx, y)
        else:
            out[idx] = out[idx] + y
        output_storage[0][0] = out

    def infer_shape(self, fgraph, node, shapes):
        return [shapes[0]]

    def connection_pattern(self, node):
        return [[True], [True]] + [[False]] * (len(node.inputs) - 2)


class AdvancedIncSubtensor(IncSubtensor):
    """``IncSubtensor`` with array indices; repeated indices accumulate (``np.add.at``)."""


def index_add(xp, out, idx, y):
    """``out[idx] += y`` where repeated indices add up (NumPy's ``add.at``)."""
    if xp is np:
        # y is broadcast to the indexed region first: NumPy's add.at, broadcasting y itself
        # against a 2-d index array, reads past y (np.add.at(z, (i2d,), v1d) gives garbage)
        np.add.at(out, idx, np.broadcast_to(y, out[idx].shape))
        return
    if type(out).__module__.startswith("cupy"):
        import cupyx

        cupyx.scatter_add(out, idx, y)
        return
    raise NotImplementedError("inc_subtensor with array indices needs NumPy or CuPy arrays")


def index_text(idx_list, args) -> str:
    """The index as Python writes it, its symbolic parts by ``args`` (their texts), the trailing
    full slices left out: ``0:2, i``."""
    entries = list(idx_list)
    while len(entries) > 1 and entries[-1] == FULL_SLICE:
        entries.pop()
    it = iter(args)
    return _index_parts(entries, lambda p: next(it) if p in ("?", "a") else str(p), "None")


def format_index(idx_list) -> str:
    return _index_parts(idx_list, str, "newaxis")


def _index_parts(entries, part, newaxis: str) -> str:
    parts = []
    for e in entries:
        if isinstance(e, tuple):
            start, stop, step = ("" if p is None else part(p) for p in e[1:])
            parts.append(f"{start}:{stop}" + (f":{step}" if step else ""))
        else:
            parts.append(newaxis if e is None else part(e))
    return ", ".join(parts)


def getitem(x, index):
    """``x[index]``: basic indexing gives a Subtensor, array indices an AdvancedSubtensor."""
    x = as_tensor_variable(x)
    idx_list, inputs = parse_index(x, index)
    # only a 0-d x[()] is x itself; x[:] is a Subtensor (a view, as in NumPy), so that
    # set_subtensor(x[:], y) has an indexed tensor to write into
    if not idx_list:
        return x
    op = AdvancedSubtensor if "a" in idx_list else Subtensor
    return op(idx_list)(x, *inputs)


def _writing(view, y, set_instead_of_inc):
    node = getattr(view, "owner", None)
    if node is None or not isinstance(node.op, Subtensor):
        raise TypeError(f"set_subtensor/inc_subtensor take an indexed tensor such as x[1:3], got {view}")
    op = AdvancedIncSubtensor if isinstance(node.op, AdvancedSubtensor) else IncSubtensor
    x, *index_inputs = node.inputs
    return op(node.op.idx_list, set_instead_of_inc)(x, y, *index_inputs)


def set_subtensor(view, y):
    """A copy of ``x`` with ``x[index] = y``, for ``view = x[index]``."""
    return _writing(view, y, True)


def inc_subtensor(view, y, inplace=False, set_instead_of_inc=False, tolerate_inplace_aliasing=False, *,
                  ignore_duplicates=False):
    """A copy of ``x`` with ``x[index] += y``, for ``view = x[index]``; repeated array indices
    accumulate, or with ``ignore_duplicates`` (PyTensor's) act as NumPy's ``x[index] += y``: a
    place named twice gets ``x + y`` once, from the last write (``tensor/duplicates.py``).
    ``set_instead_of_inc=True`` is ``set_subtensor``. ``inplace`` and ``tolerate_inplace_aliasing``
    are PyTensor's and must be False: eqgraph chooses where to write in place itself."""
    if inplace or tolerate_inplace_aliasing:
        raise ValueError("inc_subtensor: inplace and tolerate_inplace_aliasing must be False; eqgraph "
                         "decides what is computed in place when it compiles")
    if set_instead_of_inc:
        return set_subtensor(view, y)
    node = getattr(view, "owner", None)
    if ignore_duplicates and node is not None and isinstance(node.op, AdvancedSubtensor):
        x, *index_inputs = node.inputs
        last = last_writes(x, node.op.idx_list, index_inputs, node.op.block_at, view.ndim)
        if last is not None:
            y = as_tensor_variable(y)
            y = ELEMWISE_OPS["switch"](last, y, constant(0, dtype=y.dtype))
    return _writing(view, y, False)


# -- PyTensor's functional forms of indexing -------------------------------------------------
def take(a, indices, axis=None, mode="raise"):
    """``np.take``: ``a``'s entries at ``indices`` along ``axis`` (None: of the flattened ``a``).
    ``mode``: "raise" (an index out of range is an error when run; None too), "wrap" or "clip"."""
    a, indices = as_tensor_variable(a), as_tensor_variable(indices)
    mode = "raise" if mode is None else mode
    if indices.dtype not in DISCRETE_DTYPES or indices.dtype == "bool":
        raise TypeError(f"take: the indices must be integers, got {indices} of dtype {indices.dtype}")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', not {mode!r}")
    if axis is None:
        a, axis = flatten(a), 0
    axis = int(axis)
    if not -a.ndim <= axis < a.ndim:
        raise np.exceptions.AxisError(f"take: axis {axis} is out of bounds for {a} with {a.ndim} dimensions")
    axis %= a.ndim
    size = shape_of(a)[axis]
    if mode == "wrap":
        indices = E["mod"](indices, size)
    elif mode == "clip":
        indices = E["clip"](indices, 0, size - 1)
    return a[(slice(None),) * axis + (indices,)]


def flip(arr, axis=None):
    """``np.flip``: ``arr`` reversed along ``axis`` (an int, a sequence of them, or None: every axis)."""
    arr = as_tensor_variable(arr)
    axes = range(arr.ndim) if axis is None else [int(a) for a in np.atleast_1d(axis).tolist()]
    for a in axes:
        if not -arr.ndim <= a < arr.ndim:
            raise np.exceptions.AxisError(f"flip: axis {a} is out of bounds for {arr} with {arr.ndim} dimensions")
    flipped = {a % arr.ndim for a in axes}
    return arr[tuple(slice(None, None, -1) if i in flipped else slice(None) for i in range(arr.ndim))]


def advanced_subtensor(x, *index):
    """PyTensor's ``advanced_subtensor(x, *index)``: ``x[index]``."""
    return as_tensor_variable(x)[tuple(index)]


def advanced_subtensor1(x, ilist):
    """PyTensor's ``advanced_subtensor1(x, ilist)``: ``x[ilist]`` for a vector of integers ``ilist``."""
    ilist = as_tensor_variable(ilist)
    if ilist.ndim != 1 or ilist.dtype not in DISCRETE_DTYPES or ilist.dtype == "bool":
        raise TypeError(f"advanced_subtensor1: the index must be a vector of integers, got {ilist} "
                        f"({ilist.ndim}-d, {ilist.dtype})")
    return as_tensor_variable(x)[ilist]


def advanced_inc_subtensor(x, y, *index, inplace=False, set_instead_of_inc=False, ignore_duplicates=False):
    """PyTensor's ``advanced_inc_subtensor(x, y, *index)``: ``inc_subtensor(x[index], y)``
    (``inplace`` as ``inc_subtensor`` takes it)."""
    view = as_tensor_variable(x)[tuple(index)]
    return inc_subtensor(view, y, inplace=inplace, set_instead_of_inc=set_instead_of_inc,
                         ignore_duplicates=ignore_duplicates)


def advanced_set_subtensor(x, y, *index):
    """PyTensor's ``advanced_set_subtensor(x, y, *index)``: ``set_subtensor(x[index], y)``."""
    return set_subtensor(as_tensor_variable(x)[tuple(index)], y)
