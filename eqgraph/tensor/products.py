"""Products and diagonals: `Einsum` (with ``tensordot`` written as one), `ExtractDiag`
(``diagonal``, ``diag``, ``trace``) and ``kron``.

``Einsum`` keeps its subscripts in one explicit form (``"ab,bc->ac"``, no ``...``), so two
einsums that compute the same thing are one e-graph constructor with equal props.
"""

from __future__ import annotations

import string

import numpy as np

from eqgraph.tensor.alloc import arange, zeros
from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.tensor.elemwise import ELEMWISE_OPS as E
from eqgraph.tensor.dimshuffle_op import dimshuffle
from eqgraph.tensor.math import sum as sum_
from eqgraph.tensor.shape import reshape, shape_of
from eqgraph.tensor.subtensor import set_subtensor
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Apply
from eqgraph.terms.op import Op
from eqgraph.terms.type import describe_value
from eqgraph.xp import array_namespace, as_output


# -- einsum ---------------------------------------------------------------------------------------
def explicit_subscripts(subscripts: str, ndims) -> str:
    """``subscripts`` with ``...`` spelled out and the output written (NumPy's implicit output:
    the letters used once, in alphabetical order)."""
    subscripts = subscripts.replace(" ", "")
    inputs, arrow, output = subscripts.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"einsum: {subscripts!r} names {len(terms)} operands, {len(ndims)} were given")
    used = set(subscripts) - set(",->.")
    spare = [c for c in string.ascii_letters if c not in used]
    n_ellipsis = max((nd - len(t.replace("...", "")) for t, nd in zip(terms, ndims) if "..." in t), default=0)
    fill, spare = "".join(spare[:n_ellipsis]), spare[n_ellipsis:]
    expanded = []
    for term, nd in zip(terms, ndims):
        if "..." in term:
            n = nd - len(term.replace("...", ""))
            term = term.replace("...", fill[n_ellipsis - n:] if n else "")
        if len(term) != nd or (term and not term.isalpha()):  # a 0-d operand has the term ""
            raise ValueError(f"einsum: the operand term {term!r} of {subscripts!r} does not fit a {nd}-d operand")
        expanded.append(term)
    if arrow:
        output = output.replace("...", fill)
    else:
        counts = "".join(expanded)
        output = fill + "".join(sorted(c for c in set(counts) - set(fill) if counts.count(c) == 1))
    return ",".join(expanded) + "->" + output


class Einsum(Op):
    """``np.einsum(subscripts, *operands)`` for explicit subscripts (see ``explicit_subscripts``)."""

    __props__ = ("subscripts",)
    #: for the type rules (rulesets/types.egg): the output's ndim, and where each output axis's
    #: size comes from, (output axis, operand, its axis) per occurrence of the axis's letter
    __egg_extras__ = ("out_ndim", "sources")

    def __init__(self, subscripts: str):
        self.subscripts = subscripts
        inputs, _, self.output = subscripts.partition("->")
        self.terms = tuple(inputs.split(","))
        self.out_ndim = len(self.output)
        self.sources = tuple(v for j, letter in enumerate(self.output) for i, term in enumerate(self.terms)
                             for axis, other in enumerate(term) if other == letter for v in (j, i, axis))

    def make_node(self, *operands):
        operands = [as_tensor_variable(o) for o in operands]
        if len(operands) != len(self.terms) or any(len(t) != o.ndim for t, o in zip(self.terms, operands)):
            raise ValueError(f"einsum {self.subscripts!r} does not fit operands of "
                             f"{[o.ndim for o in operands]} dimensions")
        occurrences: dict = {}  # letter -> the static sizes it has (None: unknown)
        for term, o in zip(self.terms, operands):
            for letter, size in zip(term, o.type.shape):
                occurrences.setdefault(letter, []).append(size)
        sizes = {}
        for letter, found in occurrences.items():  # a size of 1 broadcasts, as in np.einsum
            known = {s for s in found if s is not None and s != 1}
            if len(known) > 1:
                raise ValueError(f"einsum {self.subscripts!r}: index {letter!r} has sizes {sorted(known)} "
                                 f"({', '.join(f'{v}: {v.type.shape}' for v in operands)})")
            sizes[letter] = known.pop() if known else (1 if all(s == 1 for s in found) else None)
        dtype = np.result_type(*[o.dtype for o in operands]).name
        return Apply(self, operands, [TensorType(dtype, tuple(sizes[c] for c in self.output))()])

    def perform(self, node, inputs, output_storage):
        xp = array_namespace(*inputs)
        einsum = getattr(xp, "einsum", None)
        if einsum is None:
            raise NotImplementedError(f"{self}: the array namespace {xp.__name__} has no einsum")
        out = einsum(self.subscripts, *inputs, optimize=len(inputs) > 2)
        if xp is not np or any(np.may_share_memory(out, i) for i in inputs):
            out = xp.asarray(out, copy=True)  # "ij->ji" or "ii->i" return views of the operand
        output_storage[0][0] = as_output(xp, out, node.outputs[0].type)

    def infer_shape(self, fgraph, node, shapes):
        where: dict = {}
        for term, shape in zip(self.terms, shapes):
            for letter, size in zip(term, shape):
                where[letter] = size if letter not in where else E["maximum"](where[letter], size)
        static = node.outputs[0].type.shape
        return [tuple(where[c] if s is None else s for c, s in zip(self.output, static))]

    def flops(self, inputs, outputs):
        sizes = {c: s for term, shape in zip(self.terms, inputs) for c, s in zip(term, shape)}
        return 2 * int(np.prod([sizes[c] for c in set("".join(self.terms))], dtype=np.int64))


def einsum(subscripts: str, *operands):
    """``np.einsum``: a product of tensors summed over the repeated indices of ``subscripts``."""
    operands = [as_tensor_variable(o) for o in operands]
    return Einsum(explicit_subscripts(subscripts, [o.ndim for o in operands]))(*operands)


def tensordot(a, b, axes=2):
    """``np.tensordot``: the sum over ``a``'s last (or listed) axes times ``b``'s first (or listed)."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    axes_a, axes_b = _tensordot_axes(a, b, axes)
    letters = iter(string.ascii_letters)
    sa = [next(letters) for _ in range(a.ndim)]
    sb = [next(letters) for _ in range(b.ndim)]
    for i, j in zip(axes_a, axes_b):
        sb[j] = sa[i]
    summed = {sa[i] for i in axes_a}
    out = [c for c in sa if c not in summed] + [c for c in sb if c not in summed]
    return Einsum(f"{''.join(sa)},{''.join(sb)}->{''.join(out)}")(a, b)


def _tensordot_axes(a, b, axes) -> tuple[list[int], list[int]]:
    """``tensordot``'s ``axes`` as two lists of paired axes of ``a`` and ``b``, each in range
    and listed once (negative axes count from the end); NumPy's rules, refusing what it refuses."""
    if isinstance(axes, (int, np.integer)):
        # NumPy's reading: a negative count sums no axes (the ranges are empty)
        pairs = (range(-int(axes), 0), range(int(axes)))
    elif isinstance(axes, (list, tuple)) and len(axes) == 2:
        pairs = axes
    else:
        raise ValueError(f"tensordot: axes must be an int or a pair (axes of a, axes of b), not {axes!r}")
    axes_a, axes_b = ([x] if isinstance(x, (int, np.integer)) else list(x) for x in pairs)
    if len(axes_a) != len(axes_b):
        raise ValueError(f"tensordot: axes {axes} pair {len(axes_a)} axes of a with {len(axes_b)} of b")
    return _normal_axes(axes_a, a.ndim, "a"), _normal_axes(axes_b, b.ndim, "b")


def _normal_axes(axes, ndim: int, name: str) -> list[int]:
    """``axes`` of the ``ndim``-d operand ``name`` as non-negative ints, each listed once."""
    out = []
    for axis in axes:
        if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
            raise TypeError(f"tensordot: axes of {name} must be integers, not {describe_value(axis)}")
        if not -ndim <= axis < ndim:
            raise np.exceptions.AxisError(f"tensordot: axis {axis} of {name} is out of range for a "
                                          f"{ndim}-d {name}")
        if int(axis) % ndim in out:
            raise ValueError(f"tensordot: axis {axis} of {name} is listed twice in axes")
        out.append(int(axis) % ndim)
    return out


# -- diagonals --------------------------------------------------------------------------------------
class ExtractDiag(Op):
    """``np.diagonal(x, offset, axis1, axis2)`` (a copy): the two axes go, the diagonal is last."""

    __props__ = ("offset", "axis1", "axis2")

    def __init__(self, offset: int = 0, axis1: int = 0, axis2: int = 1):
        self.offset, self.axis1, self.axis2 = int(offset), int(axis1), int(axis2)
        if self.axis1 == self.axis2:
            raise ValueError(f"diagonal: axis1 and axis2 must differ, both are {axis1}")

    def make_node(self, x):
        x = as_tensor_variable(x)
        if x.ndim < 2 or not (0 <= self.axis1 < x.ndim and 0 <= self.axis2 < x.ndim):
            raise ValueError(f"{self}: needs axes {self.axis1} and {self.axis2} of {x} ({x.ndim}-d)")
        n1, n2 = x.type.shape[self.axis1], x.type.shape[self.axis2]
        length = None
        if n1 is not None and n2 is not None:
            length = max(0, min(n1 + min(self.offset, 0), n2 - max(self.offset, 0)))
        rest = [s for a, s in enumerate(x.type.shape) if a not in (self.axis1, self.axis2)]
        return Apply(self, [x], [TensorType(x.dtype, (*rest, length))()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        xp = array_namespace(x)
        out = xp.diagonal(x, self.offset, self.axis1, self.axis2) if hasattr(xp, "diagonal") else \
            xp.linalg.diagonal(xp.moveaxis(x, (self.axis1, self.axis2), (-2, -1)), offset=self.offset)
        output_storage[0][0] = as_output(xp, xp.asarray(out, copy=True), node.outputs[0].type)

    def infer_shape(self, fgraph, node, shapes):
        n1, n2 = shapes[0][self.axis1], shapes[0][self.axis2]
        length = E["maximum"](E["minimum"](n1 + min(self.offset, 0), n2 - max(self.offset, 0)), 0)
        return [(*[s for a, s in enumerate(shapes[0]) if a not in (self.axis1, self.axis2)], length)]

    def flops(self, inputs, outputs):
        return 0

    def index(self, x, length) -> tuple:
        """The index of ``x`` moved to (..., axis1, axis2) whose elements are the diagonal."""
        step = arange(length)
        return (Ellipsis, step + max(-self.offset, 0), step + max(self.offset, 0))

    def moved(self, x):
        """``x`` with axis1 and axis2 moved last (the layout ``index`` reads)."""
        rest = [a for a in range(x.ndim) if a not in (self.axis1, self.axis2)]
        return dimshuffle(x, (*rest, self.axis1, self.axis2))

    def moved_back(self, y):
        order = [a for a in range(y.ndim) if a not in (self.axis1, self.axis2)] + [self.axis1, self.axis2]
        return dimshuffle(y, [order.index(a) for a in range(y.ndim)])


def diagonal(x, offset=0, axis1=0, axis2=1):
    """``np.diagonal``: the ``offset``-th diagonal of the ``axis1``, ``axis2`` planes, as the last axis."""
    x = as_tensor_variable(x)
    if x.ndim < 2:
        raise ValueError(f"diagonal needs at least 2 dimensions, got {x} ({x.ndim}-d)")
    return ExtractDiag(offset, axis1 % x.ndim, axis2 % x.ndim)(x)


def diag(v, k=0):
    """``np.diag``: the ``k``-th diagonal of a matrix, or a matrix with the vector ``v`` on it."""
    v = as_tensor_variable(v)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError(f"diag: Input must be 1- or 2-d. Got {v} with {v.ndim} dimensions")
    n = shape_of(v)[0] + abs(k)
    step = arange(shape_of(v)[0])
    out = zeros((n, n), dtype=v.dtype)
    return set_subtensor(out[step + max(-k, 0), step + max(k, 0)], v)


def trace(x, offset=0, axis1=0, axis2=1):
    """``np.trace``: the sum of the diagonal."""
    return sum_(diagonal(x, offset, axis1, axis2), axis=-1)


def kron(a, b):
    """``np.kron``: every element of ``a`` times the whole of ``b``, laid out block by block."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    ndim = max(a.ndim, b.ndim)
    a = dimshuffle(a, ("x",) * (ndim - a.ndim) + tuple(range(a.ndim)))
    b = dimshuffle(b, ("x",) * (ndim - b.ndim) + tuple(range(b.ndim)))
    # a: (a0, 1, a1, 1), b: (1, b0, 1, b1); their product reshaped to (a0*b0, a1*b1)
    blocks = dimshuffle(a, [o for i in range(ndim) for o in (i, "x")]) * \
        dimshuffle(b, [o for i in range(ndim) for o in ("x", i)])
    # a size known on both sides is given as an int, so the result's static shape keeps it
    sizes = [ka * kb if ka is not None and kb is not None else sa * sb
             for ka, kb, sa, sb in zip(a.type.shape, b.type.shape, shape_of(a), shape_of(b))]
    return reshape(blocks, sizes, ndim=ndim)


__all__ = ["Einsum", "ExtractDiag", "diag", "diagonal", "einsum", "explicit_subscripts", "kron", "tensordot",
           "trace"]
