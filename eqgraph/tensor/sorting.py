"""Sorting along an axis: `Sort`, `ArgSort`, and ``take_along_axis`` (the gather that undoes them).

``sort``'s gradient scatters the output's cotangent back through ``argsort``
(``eqgraph/grad/vjps_everyday.py``); ties get the gradient in the order the
(stable) sort put them, as in PyTensor and JAX.
"""

from __future__ import annotations

import numpy as np

from eqgraph.tensor.alloc import arange
from eqgraph.tensor.conditional import ifelse
from eqgraph.tensor.basic import NotScalarConstantError, as_tensor_variable, get_scalar_constant_value
from eqgraph.tensor.elemwise import ELEMWISE_OPS as E, cast
from eqgraph.tensor.dimshuffle_op import dimshuffle
from eqgraph.tensor.shape import flatten, shape_of
from eqgraph.tensor.type import DISCRETE_DTYPES, INT_DTYPES, TensorType
from eqgraph.terms.basic import Apply, Variable
from eqgraph.terms.op import Op
from eqgraph.terms.type import describe_value
from eqgraph.xp import array_namespace, as_output


def _axis_of(x, axis) -> int:
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for {x} with {x.ndim} dimensions")
    return axis % x.ndim


class Sort(Op):
    """``np.sort(x, axis)`` (stable), or with ``arg`` the indices ``np.argsort(x, axis)``."""

    __props__ = ("axis", "arg")

    def __init__(self, axis: int, arg: bool = False, kind: str = "quicksort"):
        self.axis, self.arg = int(axis), bool(arg)
        # the algorithm PyTensor's caller named; not a prop, since every Sort is stable and a
        # stable order is one that each of NumPy's kinds may give, so it never changes a result
        self.kind = _checked_kind(kind)

    def __str__(self):
        return f"{'ArgSort' if self.arg else 'Sort'}{{axis={self.axis}}}"

    def make_node(self, x):
        x = as_tensor_variable(x)
        if not 0 <= self.axis < x.ndim:
            raise ValueError(f"{self}: axis {self.axis} is out of range for {x} with {x.ndim} dimensions")
        if x.dtype in ("complex64", "complex128"):
            raise TypeError(f"{self}: complex numbers have no order ({x} is {x.dtype})")
        return Apply(self, [x], [TensorType("int64" if self.arg else x.dtype, x.type.shape)()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        xp = array_namespace(x)
        out = (xp.argsort if self.arg else xp.sort)(x, axis=self.axis, stable=True)
        output_storage[0][0] = as_output(xp, out, node.outputs[0].type)

    def infer_shape(self, fgraph, node, shapes):
        return [shapes[0]]

    def flops(self, inputs, outputs):
        n = int(np.prod(inputs[0], dtype=np.int64))
        return int(n * max(np.log2(max(inputs[0][self.axis], 2)), 1))


class CheckAxis(Op):
    """``x`` itself, once the 0-d integer input ``axis`` is checked to be one of ``x``'s axes
    (``-ndim <= axis < ndim``) at run time: what a graph that branches on a symbolic axis reads,
    so that an axis out of range is an error rather than a branch taken by default."""

    __props__ = ()
    view_map = {0: [0]}

    def make_node(self, x, axis):
        x, axis = as_tensor_variable(x), as_tensor_variable(axis)
        if axis.ndim != 0 or axis.dtype not in DISCRETE_DTYPES or axis.dtype == "bool":
            raise TypeError(f"a symbolic axis must be a 0-d integer, got {axis} ({axis.type})")
        if x.ndim == 0:
            raise ValueError(f"{x} is 0-d: it has no axis {axis}")
        return Apply(self, [x, axis], [x.type()])

    def perform(self, node, inputs, output_storage):
        x, axis = inputs
        if not -x.ndim <= int(axis) < x.ndim:
            raise ValueError(f"axis {int(axis)} is out of bounds for an array of {x.ndim} dimensions "
                             f"(input {node.inputs[0]})")
        output_storage[0][0] = x

    def infer_shape(self, fgraph, node, shapes):
        return [shapes[0]]

    def connection_pattern(self, node):
        return [[True], [False]]

    def grad(self, inputs, output_grads):
        return [output_grads[0], None]  # the axis only selects


def _static_axis(axis):
    """``axis`` as an int when the graph knows it, or None for a symbolic one."""
    if not isinstance(axis, Variable):
        return axis
    try:
        return int(get_scalar_constant_value(axis))
    except NotScalarConstantError:
        return None


def _sorted(x, axis, arg: bool, kind: str = "quicksort"):
    x = as_tensor_variable(x)
    if axis is None:
        return Sort(0, arg, kind)(flatten(x))
    if isinstance(axis, Variable) and getattr(axis, "dtype", "int64") not in INT_DTYPES:
        raise ValueError(f"sort: Sort axis must have an integer dtype, got {axis.dtype} ({axis})")
    static = _static_axis(axis)
    if static is None:
        return _sorted_along_symbolic_axis(x, axis, arg, kind)
    if not isinstance(static, (int, np.integer)):
        raise TypeError(f"sort: axis must be an int, a 0-d integer variable or None, not {describe_value(axis)}")
    return Sort(_axis_of(x, static), arg, kind)(x)


def _sorted_along_symbolic_axis(x, axis, arg: bool, kind: str):
    """One static-axis sort per axis of ``x``, chosen by a lazy ``ifelse`` on the checked axis:
    only the sort taken runs, and the gradient is each branch's own."""
    checked = CheckAxis()(x, axis)
    axis = cast(checked.owner.inputs[1], "int64")
    axis = E["switch"](E["lt"](axis, 0), axis + x.ndim, axis)
    out = Sort(x.ndim - 1, arg, kind)(checked)
    for k in reversed(range(x.ndim - 1)):
        out = ifelse(E["eq"](axis, k), Sort(k, arg, kind)(checked), out)
    return out


def sort(x, axis=-1, kind=None, order=None, *, stable=None):
    """``np.sort``: ``x`` sorted along ``axis`` (None: the flattened ``x``); ``axis`` may be a 0-d
    integer variable, as in PyTensor. ``kind``/``stable`` are recorded on the op as PyTensor
    records them; the sort is stable whatever they say."""
    return _sorted(x, axis, arg=False, kind=_kind(kind, order, stable))


def argsort(x, axis=-1, kind=None, order=None, *, stable=None):
    """``np.argsort`` (stable): the indices that sort ``x`` along ``axis`` (an int, a 0-d integer
    variable, or None); ``kind``/``stable`` as for ``sort``."""
    return _sorted(x, axis, arg=True, kind=_kind(kind, order, stable))


_KINDS = ("quicksort", "mergesort", "heapsort", "stable")


def _checked_kind(kind: str) -> str:
    if kind not in _KINDS:
        raise ValueError(f"sort: kind must be one of {', '.join(_KINDS)}, not {kind!r}")
    return kind


def _kind(kind, order, stable) -> str:
    """PyTensor's ``kind`` for its ``kind``, ``order`` and ``stable`` arguments (``stable=True``
    means "stable")."""
    if order is not None:
        raise ValueError("sort: the order argument is not applicable: it names the fields of a structured "
                         "array, and eqgraph's tensors have no fields")
    if stable and kind not in (None, "stable"):
        raise ValueError(f"sort: kind and stable cannot be set at the same time (kind={kind!r}, stable=True)")
    return _checked_kind("stable" if stable else (kind or "quicksort"))


class ArgAlongAxis(Op):
    """``np.argmax`` (or ``np.argmin``) along an axis given as a 0-d integer *input*, known only at
    run time (``et.argmax(x, axis=iscalar)``).  The output has one dimension fewer; which one is
    not known, so no size of it is static.  The axis only selects, so no gradient reaches it
    (as for any integer input in Aesara's gradient contract); the elements' gradient is zero (the output is discrete)."""

    __props__ = ("name",)

    def __init__(self, name: str):
        if name not in ("argmax", "argmin"):
            raise ValueError(f"ArgAlongAxis: name must be 'argmax' or 'argmin', not {name!r}")
        self.name = name

    def make_node(self, x, axis):
        x, axis = as_tensor_variable(x), as_tensor_variable(axis)
        if axis.ndim != 0 or axis.dtype not in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"):
            raise TypeError(f"{self.name}: a symbolic axis must be a 0-d integer, got {axis} ({axis.type})")
        if x.ndim == 0:
            raise ValueError(f"{self.name} of the 0-d {x} along an axis: it has none")
        return Apply(self, [x, axis], [TensorType("int64", (None,) * (x.ndim - 1))()])

    def perform(self, node, inputs, output_storage):
        x, axis = inputs
        xp = array_namespace(x)
        if not -x.ndim <= int(axis) < x.ndim:
            raise ValueError(f"{self.name}: axis {int(axis)} is out of bounds for an array of {x.ndim} dimensions")
        output_storage[0][0] = as_output(xp, getattr(xp, self.name)(x, axis=int(axis)), node.outputs[0].type)

    def infer_shape(self, fgraph, node, shapes):
        # output axis j is input axis j before the reduced axis and j + 1 after it
        x, axis = node.inputs
        reduced = E["mod"](cast(axis, "int64"), x.ndim)
        sizes = shapes[0]
        return [tuple(E["switch"](E["lt"](j, reduced), sizes[j], sizes[j + 1]) for j in range(x.ndim - 1))]

    def connection_pattern(self, node):
        return [[True], [False]]


def along_axis_index(indices, axis: int) -> tuple:
    """The advanced index that makes ``x[index]`` equal ``np.take_along_axis(x, indices, axis)``:
    ``indices`` on ``axis``, and on every other axis an ``arange`` shaped to broadcast."""
    indices = as_tensor_variable(indices)
    ndim = indices.ndim
    index = []
    for a, size in enumerate(shape_of(indices)):
        if a == axis:
            index.append(indices)
        else:
            order = ["x"] * ndim
            order[a] = 0
            index.append(dimshuffle(arange(size), order))
    return tuple(index)


def take_along_axis(x, indices, axis: int | None = 0):
    """``np.take_along_axis``: ``x``'s values at ``indices`` (integers, of ``x``'s ndim) along
    ``axis``; None takes along the flattened ``x``. The default axis is PyTensor's, 0."""
    x, indices = as_tensor_variable(x), as_tensor_variable(indices)
    if indices.dtype not in DISCRETE_DTYPES or indices.dtype == "bool":
        raise IndexError(f"take_along_axis: indices {indices} must be integers, not {indices.dtype}")
    if axis is None:
        x, axis = flatten(x), 0
    if indices.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices {indices} must have {x}'s {x.ndim} dimensions, "
                         f"not {indices.ndim}")
    return x[along_axis_index(indices, _axis_of(x, axis))]
