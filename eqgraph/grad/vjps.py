"""Vector-Jacobian products of the built-in ops, as one relation between op applications and
their VJPs.

An op application is a term ``(key, props, operands)``: the op's key in this table, its props,
and per input ``("const", value)`` where the input's value is fixed and wants no gradient, else
``"var"``. Each entry is a pattern over such terms and the cotangent of every input, given ``g``
(the output's cotangent) and ``out`` (the output). Cotangents have the *output's* shape; the
driver un-broadcasts them to each input, once, for ops that broadcast.

One op may have several entries: a general one, and more specific ones whose VJP is simpler
(``x * c``, ``x ** 2``, a DimShuffle that only transposes). Unification is used because an
entry is a pattern over the op's props and operands, so finding every entry that fits a node is
one kanren query, and the most specific answer wins without a chain of ``isinstance`` tests.
Each specific entry gives the same cotangents as its op's general entry
(tests/grad/test_vjp_specific.py).

Ops listed in NONDIFFERENTIABLE have zero gradients (their outputs are
piecewise constant); the driver gives zeros to any op with discrete outputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from kanren import conde, eq, run
from unification import reify, var

import eqgraph.tensor as et
from eqgraph.tensor.elemwise import COMPLEX_SUPPORT, SCALAR_OPS, Elemwise, float_mask
from eqgraph.tensor.dimshuffle_op import DimShuffle
from eqgraph.tensor.math import Reduce
from eqgraph.tensor.scalar_ops import No
from eqgraph.tensor.subtensor import FULL_SLICE
from eqgraph.tensor.type import COMPLEX_DTYPES, DISCRETE_DTYPES
from eqgraph.terms.basic import Constant
from eqgraph.terms.null_type import disconnected
from eqgraph.terms.op import Op

E = et.ELEMWISE_OPS
REVERSED = ("slice", None, None, -1)


# -- the relation ---------------------------------------------------------------------------------
def term_of(node, wanted=None) -> tuple:
    """``(key, props, operands)`` for an Apply: what VJP patterns are unified with.

    ``wanted`` says per input whether its gradient is asked for (None: all are); a constant
    that is differentiated (``grad(cost, c)``) is an operand like any other.
    """
    op = node.op
    # a reduction's gradient does not depend on the dtype it accumulates in
    skipped = ("name", "acc_dtype") if isinstance(op, Reduce) else ("name",)
    props = tuple(getattr(op, p) for p in getattr(type(op), "__props__", ()) if p not in skipped)
    wanted = wanted if wanted is not None else [True] * len(node.inputs)
    return (table_key(op), props, tuple(_operand(x, w) for x, w in zip(node.inputs, wanted)))


def _operand(x, wanted: bool):
    """``("const", value)`` for a constant operand that wants no gradient, else ``"var"``;
    ``value`` is the Python scalar of a one-element constant (broadcast or not), else None."""
    if wanted:
        return "var"
    while x.owner is not None and isinstance(x.owner.op, DimShuffle):
        x = x.owner.inputs[0]
    if not isinstance(x, Constant):
        return "var"
    return ("const", x.data.item() if getattr(x.data, "size", 0) == 1 else None)


#: the ops besides the elementwise rows (tensor/elemwise.py COMPLEX_SUPPORT) whose VJP below is a
#: holomorphic formula (linear, bilinear or analytic in the inputs, with plain transposes): for
#: complex values the driver sandwiches it between conjugates. The decompositions of Hermitian
#: matrices (cholesky, eigh, svd, qr, pinv...) need conjugate transposes and are not here
HOLOMORPHIC = frozenset({
    "AdvancedSubtensor", "AdvancedIncSubtensor", "Alloc", "CheckAndRaise", "Convolve", "CumOp", "Det",
    "DimShuffle", "Einsum", "Expm", "ExtractDiag", "GradBlocker", "IncSubtensor", "Join", "MakeVector", "MatMul",
    "MatrixInverse", "Repeat", "Reshape", "Solve", "SolveSylvester", "SpecifyShape", "Subtensor", "SumToShape", "sum", "mean",
    "prod"})


def complex_rule(op) -> str | None:
    """How the gradient of a real cost flows through ``op`` where it holds complex values:
    "holomorphic" (the VJP between conjugates), "own" (its VJP handles them), or None (undefined)."""
    key = table_key(op)
    if isinstance(op, Elemwise):
        return {"values": "holomorphic"}.get(COMPLEX_SUPPORT.get(op.name), COMPLEX_SUPPORT.get(op.name))
    if key == "Cast":
        return "own"
    return "holomorphic" if key in HOLOMORPHIC else None


def table_key(op):
    """The op's key in this table, or None where the table does not speak for it.

    A user's op keeps its own gradient (``L_op``/``grad``), even when its class shares a
    name with one of eqgraph's ops.
    """
    if type(op).L_op is not Op.L_op or type(op).grad is not Op.grad:
        return None
    if isinstance(op, (Elemwise, Reduce)):
        return op.name
    return type(op).__name__ if type(op).__module__.startswith("eqgraph.") else None


@dataclass(frozen=True)
class VJP:
    key: str
    pattern: tuple           # (key, props, operands), with kanren variables
    fn: Callable             # (g, out, *inputs, *props) -> one cotangent per input
    broadcasts: bool = False  # cotangents have the output's shape: un-broadcast them to the inputs
    variadic: bool = False    # fn takes the inputs as one tuple: (g, out, inputs, *props)
    all_outputs: bool = False  # an op with several outputs: g and out are lists (g None: no cotangent)
    where: Callable | None = None  # a test of the props, beyond what the pattern states
    specificity: int = 0      # how much of the term the pattern and ``where`` pin down

    def __call__(self, g, out, inputs, props) -> list:
        if self.variadic:
            return list(self.fn(g, out, inputs, *props))
        return list(self.fn(g, out, *inputs, *props))

    def goal(self, term):
        """The kanren goal: this entry fits ``term``."""
        fits = eq(self.pattern, term)
        if self.where is None:
            return fits
        props = self.pattern[1]
        return lambda state: (s for s in fits(state) if self.where(*reify(props, s)))


VJPS: dict[str, list[VJP]] = {}  # key -> its entries, in the order they were registered
_MATCHED: dict = {}  # (op type, term) -> (VJPS[key] when asked, the entry that answered)


class _Any:
    def __repr__(self):
        return "ANY"


ANY = _Any()  # in an operand pattern: any operand


def constant(value=ANY) -> tuple:
    """An operand pattern: a constant that wants no gradient (of this value, if given)."""
    return ("const", value)


def entry(key: str, n_inputs=None, broadcasts=False, all_outputs=False, operands=None, where=None):
    """Decorator: a VJP of ``key``.

    ``n_inputs`` None means any number of inputs; ``operands`` (a pattern per input: ANY,
    ``constant()``, ``constant(2)``) and ``where`` (a test of the op's props) make an entry
    specific; with ``all_outputs`` the function gets every output's cotangent and every output,
    as lists.
    """
    if operands is not None:
        if n_inputs not in (None, len(operands)):
            raise ValueError(f"entry({key!r}): n_inputs={n_inputs} but {len(operands)} operand patterns {operands}")
        n_inputs = len(operands)
    inputs = var() if n_inputs is None else _fresh(operands if operands is not None else (ANY,) * n_inputs)
    specificity = _pinned(operands or ()) + (where is not None)

    def register(fn):
        VJPS.setdefault(key, []).append(VJP(key, (key, var(), inputs), fn, broadcasts, n_inputs is None,
                                            all_outputs, where, specificity))
        _MATCHED.clear()  # a new entry may fit terms answered before
        return fn

    return register


def _fresh(pattern):
    """``pattern`` with a fresh kanren variable for each ANY."""
    if pattern is ANY:
        return var()
    return tuple(_fresh(p) for p in pattern) if isinstance(pattern, tuple) else pattern


def _pinned(pattern) -> int:
    """How many atoms of ``pattern`` are fixed (not ANY)."""
    if isinstance(pattern, tuple):
        return sum(_pinned(p) for p in pattern)
    return pattern is not ANY


def match(node, wanted=None):
    """The VJP entry for this op application, with its inputs and props; or None.

    A kanren query: every entry of the node's key whose pattern unifies with the node's term;
    the most specific answers, and of equally specific ones the first registered.
    """
    term = term_of(node, wanted)
    found = _remembered(type(node.op), term)
    return None if found is None else (found, tuple(node.inputs), term[1])


def _remembered(op_type, term):
    """``_unify(term)``, remembered for (op_type, term): most nodes of a large graph share
    their term with many others, and a kanren query costs more than building a node's VJP.
    The answer depends on nothing else while the key's list of entries is the same list (a
    test may swap in another)."""
    entries = VJPS.get(term[0])
    try:
        answered_for, found = _MATCHED[(op_type, term)]
        if answered_for is entries:
            return found
    except KeyError:
        pass
    except TypeError:  # props that cannot be hashed
        return _unify(term)
    found = _unify(term)
    _MATCHED[(op_type, term)] = (entries, found)
    return found


def _unify(term):
    """The most specific entry of ``VJPS[term[0]]`` that unifies with ``term``; or None."""
    candidates = VJPS.get(term[0], ())
    which = var()
    branches = [[candidate.goal(term), eq(which, i)] for i, candidate in enumerate(candidates)]
    found = run(0, which, conde(*branches)) if branches else ()
    best = max(found, key=lambda i: (candidates[i].specificity, -i), default=None)
    return None if best is None else candidates[best]


# -- elementwise ------------------------------------------------------------------------------
# each elementwise op's row (tensor/elemwise.py SCALAR_OPS) gives d out / d x, written with the
# input x, the output y and the cotangent g: for one input the cotangent, for two (d/dx, d/dy)
UNARY = {name: s.vjp for name, s in SCALAR_OPS.items() if s.nin == 1 and callable(s.vjp)}
BINARY = {name: s.vjp for name, s in SCALAR_OPS.items() if s.nin == 2 and callable(s.vjp)}
NONDIFFERENTIABLE = {name for name, s in SCALAR_OPS.items() if isinstance(s.vjp, No)}
NONDIFFERENTIABLE |= {"argmax", "argmin", "all", "any", "Shape"}


def _real(x, g):
    """An integer or boolean operand as a float of the cotangent's dtype, which is the dtype the
    op computed in: the derivatives above are written for reals, and on integers ``x * x`` wraps
    around (100 * 100 in int8), ``-x`` of a uint8 is 256 - x, and ``log(x)`` of an int8 is a float16."""
    return et.cast(x, g.dtype) if x.dtype in DISCRETE_DTYPES else x


for _name, _d in UNARY.items():
    entry(_name, 1)(lambda g, out, x, _d=_d: [_d(g, out, _real(x, g))])
for _name, _d in BINARY.items():
    entry(_name, 2, broadcasts=True)(lambda g, out, a, b, _d=_d: list(_d(g, out, _real(a, g), _real(b, g))))


# A constant operand wants no cotangent, so these build only the other operand's: its row's
# component as written above, without the constant's (for pow, g * y * log(x): NaN below zero).
@entry("mul", broadcasts=True, operands=(ANY, constant()))
def _times_constant(g, out, x, c):
    return [g * _real(c, g), None]


@entry("mul", broadcasts=True, operands=(constant(), ANY))
def _constant_times(g, out, c, x):
    return [None, g * _real(c, g)]


@entry("true_div", broadcasts=True, operands=(ANY, constant()))
def _over_constant(g, out, x, c):
    return [g / _real(c, g), None]


@entry("pow", broadcasts=True, operands=(ANY, constant()))
def _to_constant_power(g, out, x, c):
    x, c = _real(x, g), _real(c, g)
    return [g * c * x ** (c - 1), None]


@entry("pow", broadcasts=True, operands=(ANY, constant(2)))
def _squared(g, out, x, c):  # x ** (2 - 1) is x, exactly (also -0.0, inf and NaN)
    return [g * _real(c, g) * _real(x, g), None]


@entry("clip", 3, broadcasts=True)
def _clip(g, out, x, lo, hi):  # clip = lo if x < lo, else hi if x > hi, else x
    not_below = float_mask(E["ge"](x, lo), g)
    return [g * not_below * float_mask(E["le"](x, hi), g), g * float_mask(E["lt"](x, lo), g),
            g * not_below * float_mask(E["gt"](x, hi), g)]


@entry("switch", 3, broadcasts=True)
def _switch(g, out, c, a, b):
    # any nonzero condition picks a, as the forward where does: not invert(c), which is bitwise
    # on integers (~1 == -2) and refused on floats
    return [None, g * float_mask(E["neq"](c, 0), g), g * float_mask(E["eq"](c, 0), g)]


@entry("second", 2, broadcasts=True)
def _second(g, out, model, value):
    return [disconnected(), g]  # only the shape of ``model`` matters


@entry("ARange", 3)
def _arange(g, out, start, stop, step, dtype):
    # element i is start + i * step; stop only sets the length (an integer arange gets zeros
    # from the driver, as every op with discrete outputs does)
    index = et.arange(et.shape(g)[0], dtype=g.dtype)
    return [et.sum(g), disconnected(), et.sum(g * index)]


@entry("Cast", 1)
def _cast(g, out, x, dtype):
    if g.dtype in COMPLEX_DTYPES and x.dtype not in COMPLEX_DTYPES:  # a real x cast to complex: the real part
        g = et.real(g)
    return [g if x.dtype in ("float16", "float32", "float64") and g.dtype == x.dtype else et.cast(g, _float(x))]


def _float(x) -> str:
    return x.dtype if x.dtype in ("float16", "float32", "float64", "complex64", "complex128") else "float64"


# -- reductions and matrix products -------------------------------------------------------------
def _expand(g, x, axis, keepdims):
    """``g`` (reduced over ``axis``) with size-1 axes back in place, broadcastable to ``x``."""
    if keepdims:
        return g
    return et.expand_dims(g, axis) if axis else g


@entry("sum", 1)
def _sum(g, out, x, axis, keepdims):
    return [et.fill(x, _expand(g, x, axis, keepdims))]


@entry("mean", 1)
def _mean(g, out, x, axis, keepdims):
    n = 1
    for a in axis:
        n = n * et.shape_of(x)[a]
    return [et.fill(x, _expand(g, x, axis, keepdims)) / et.cast(n, g.dtype)]


@entry("prod", 1)
def _prod(g, out, x, axis, keepdims):
    # d prod / d x_i is the product of the other entries: prod / x_i is 0 / 0 at a zero, so with
    # one zero the product of the rest goes to it (and 0 elsewhere), with two or more 0 everywhere
    zero = E["eq"](x, 0)
    zeros = et.sum(et.cast(zero, "int64"), axis=axis, keepdims=True)
    nonzero = E["switch"](zero, 1, x)  # x with its zeros read as ones: no 0 / 0 computed and then dropped
    rest = et.prod(nonzero, axis=axis, keepdims=True)  # the product of the nonzero entries
    at_zero = E["switch"](E["eq"](zeros, 1), rest, 0)
    elsewhere = E["switch"](E["eq"](zeros, 0), rest / nonzero, 0)
    return [E["switch"](zero, at_zero, elsewhere) * _expand(g, x, axis, keepdims)]


@entry("logsumexp", 1)
def _logsumexp(g, out, x, axis, keepdims):  # softmax(x) = exp(x - logsumexp(x)): at most 1, never inf/inf
    return [_expand(g, x, axis, keepdims) * E["exp"](x - _expand(out, x, axis, keepdims))]


def _extreme(g, out, x, axis, keepdims):
    # split evenly among the tied extremes, as JAX and PyTorch do: max(concatenate([x, x])) is
    # max(x), so each copy of x gets half of the cotangent, not all of it
    hit = float_mask(E["eq"](x, _expand(out, x, axis, keepdims)), g)
    return [hit / et.sum(hit, axis=axis, keepdims=True) * _expand(g, x, axis, keepdims)]


entry("max", 1)(_extreme)
entry("min", 1)(_extreme)


@entry("MatMul", 2)
def _matmul(g, out, a, b):
    if a.ndim == 1 and b.ndim == 1:
        return [g * b, g * a]
    if a.ndim == 1:   # (k,) @ (..., k, n) -> (..., n)
        return [_sum_batch(et.matmul(b, et.expand_dims(g, -1))[..., 0], a),
                et.expand_dims(a, -1) * et.expand_dims(g, -2)]
    if b.ndim == 1:   # (..., m, k) @ (k,) -> (..., m)
        return [et.expand_dims(g, -1) * b, _sum_batch(et.matmul(_mT(a), et.expand_dims(g, -1))[..., 0], b)]
    return [_sum_batch(et.matmul(g, _mT(b)), a), _sum_batch(et.matmul(_mT(a), g), b)]


def _mT(x):
    return et.dimshuffle(x, tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2))


def _sum_batch(g, x):
    """Sum the leading (batch) axes that matmul broadcast ``x`` over."""
    extra = g.ndim - x.ndim
    if extra > 0:
        g = et.sum(g, axis=tuple(range(extra)))
    return et.sum_to_shape(g, x) if g.ndim > 2 else g


@entry("Softmax", 1)
def _softmax(g, out, x, axis, log):
    if log:
        return [g - E["exp"](out) * et.sum(g, axis=axis, keepdims=True)]
    return [(g - et.sum(g * out, axis=axis, keepdims=True)) * out]


# -- structure -----------------------------------------------------------------------------------
@entry("DimShuffle", 1)
def _dimshuffle(g, out, x, input_ndim, new_order):
    kept = [o for o in new_order if o != "x"]
    g = et.dimshuffle(g, [i for i, o in enumerate(new_order) if o != "x"])  # drop the added axes
    back = [kept.index(i) if i in kept else "x" for i in range(input_ndim)]  # and undo the permutation
    return [et.dimshuffle(g, back)]


def _transposes(input_ndim, new_order) -> bool:  # every axis kept, none added: x.T
    return "x" not in new_order and sorted(new_order) == list(range(input_ndim))


def _expands(input_ndim, new_order) -> bool:  # axes added, the others kept in order: x[None]
    return "x" in new_order and [o for o in new_order if o != "x"] == list(range(input_ndim))


def _drops(input_ndim, new_order) -> bool:  # size-1 axes dropped, the others kept in order
    return "x" not in new_order and len(new_order) < input_ndim and list(new_order) == sorted(new_order)


# each of these is one of the two steps of the general entry; the other step is the identity
@entry("DimShuffle", 1, where=_transposes)
def _inverse_permutation(g, out, x, input_ndim, new_order):
    return [et.dimshuffle(g, [new_order.index(i) for i in range(input_ndim)])]


@entry("DimShuffle", 1, where=_expands)
def _drop_added_axes(g, out, x, input_ndim, new_order):
    return [et.dimshuffle(g, [i for i, o in enumerate(new_order) if o != "x"])]


@entry("DimShuffle", 1, where=_drops)
def _restore_dropped_axes(g, out, x, input_ndim, new_order):
    return [et.dimshuffle(g, [new_order.index(i) if i in new_order else "x" for i in range(input_ndim)])]


@entry("Reshape", 2)
def _reshape(g, out, x, shp, ndim):
    return [et.reshape(g, et.shape(x), ndim=x.ndim), disconnected()]


@entry("SpecifyShape", 1)
def _specify_shape(g, out, x, shape):
    return [g]


@entry("CheckAndRaise")
def _check_and_raise(g, out, inputs, exc_name, msg):
    """The value's cotangent passes through unchecked, as PyTensor's; the conditions have none."""
    return [g] + [disconnected() for _ in inputs[1:]]


@entry("SumToShape", 2)
def _sum_to_shape(g, out, x, like):
    return [et.fill(x, g), disconnected()]


@entry("Alloc")
def _alloc(g, out, inputs):
    value, *dims = inputs
    extra = g.ndim - value.ndim
    g = et.sum(g, axis=tuple(range(extra))) if extra else g
    return [et.sum_to_shape(g, value) if value.ndim else g] + [disconnected()] * len(dims)


@entry("MakeVector")
def _make_vector(g, out, inputs, dtype):
    return [g[i] for i in range(len(inputs))]


@entry("Join")
def _join(g, out, inputs, axis):
    pieces, start = [], 0
    for x in inputs:
        size = x.type.shape[axis]
        stop = start + (size if size is not None else et.shape_of(x)[axis])
        index = [slice(None)] * g.ndim
        index[axis] = slice(start, stop)
        piece = g[tuple(index)]
        pieces.append(et.specify_shape(piece, x.type.shape) if piece.type.is_super(x.type) else piece)
        start = stop
    return pieces


@entry("Subtensor")
def _subtensor(g, out, inputs, idx_list):
    x, *index = inputs
    zeros = et.zeros_like(x)
    writer = et.IncSubtensor(idx_list, False)
    return [writer(zeros, g, *index)] + [disconnected()] * len(index)


def _whole_axes(idx_list) -> bool:  # every axis read whole, forward or reversed: x[::-1, :]
    return all(e in (FULL_SLICE, REVERSED) for e in idx_list)


@entry("Subtensor", operands=(ANY,), where=_whole_axes)
def _reversal(g, out, x, idx_list):
    # the read is a permutation of x that is its own inverse: the cotangent is g read the same
    # way (the general entry adds g to zeros, which makes a -0.0 in g a 0.0)
    return [et.Subtensor(idx_list)(g)]


@entry("AdvancedSubtensor")
def _advanced_subtensor(g, out, inputs, idx_list):
    x, *index = inputs
    writer = et.AdvancedIncSubtensor(idx_list, False)
    return [writer(et.zeros_like(x), g, *index)] + [disconnected()] * len(index)


def _inc(writer_class, reader_class):
    def vjp(g, out, inputs, idx_list, set_instead_of_inc):
        x, y, *index = inputs
        region = reader_class(idx_list)(g, *index)
        if set_instead_of_inc and writer_class is et.AdvancedIncSubtensor:
            region = E["switch"](_last_writes(x, idx_list, index), region, 0)
        gy = et.sum_to_shape(_lead_sum(region, y), y) if y.ndim else _lead_sum(region, y)
        if set_instead_of_inc:  # what was overwritten gets no gradient
            gx = writer_class(idx_list, True)(g, et.zeros_like(y), *index)
        else:
            gx = g
        return [gx, gy] + [disconnected()] * len(index)

    return vjp


def _last_writes(x, idx_list, index):
    """A mask over the region ``x[index]``: whether that element of the written value reaches
    the output of ``x[index] = y``.

    Array indices may name a position twice ([0, 0], or -1 and n - 1, or two rows of a 2-d index
    array); then, as in NumPy, the last write wins and the earlier ones reach nothing. Each region
    element's number is written with the same op and read back: an element is a last write where
    it reads back its own number. The forward write and this one choose the same winner, whatever
    order the backend writes in.
    """
    reader = et.AdvancedSubtensor(idx_list)(x, *index)
    numbers = et.reshape(et.arange(et.prod(et.shape(reader))), et.shape(reader), ndim=reader.ndim)
    written = et.AdvancedIncSubtensor(idx_list, True)(et.full_like(x, -1, dtype="int64"), numbers, *index)
    return E["eq"](et.AdvancedSubtensor(idx_list)(written, *index), numbers)


def _lead_sum(g, y):
    extra = g.ndim - y.ndim
    return et.sum(g, axis=tuple(range(extra))) if extra > 0 else g


entry("IncSubtensor")(_inc(et.IncSubtensor, et.Subtensor))
entry("AdvancedIncSubtensor")(_inc(et.AdvancedIncSubtensor, et.AdvancedSubtensor))


@entry("GradBlocker", 1)
def _blocker(g, out, x, kind):
    return [et.zeros_like(x) if kind == "zero" else disconnected()]

