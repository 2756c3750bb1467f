"""Elementwise ops with NumPy broadcasting, `DimShuffle` and `Cast`.

Every elementwise op is an ``Elemwise(name)``; what the name computes is one
row of ``SCALAR_OPS``, written against the array namespace ``xp`` so the same
row runs on NumPy, CuPy and ``array_api_strict``.  Output dtypes are NumPy's:
they are found by running the row once on NumPy values of the input dtypes.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

from eqgraph.tensor.basic import (NotScalarConstantError, as_tensor_variable, constant, get_scalar_constant_value,
                                  get_underlying_scalar_constant_value, int64_const)
from eqgraph.tensor.type import TensorType
from eqgraph.tensor.variable import TensorConstant
from eqgraph.terms.basic import Apply
from eqgraph.terms.op import Op
from eqgraph.xp import array_namespace, as_output, copy_array, optional_module


@functools.cache
def _scipy_special(name: str):
    """SciPy's special function ``name``, or None (SciPy is optional)."""
    special = optional_module("scipy.special")
    return None if special is None else getattr(special, name)


_MATH_ERF = np.frompyfunc(math.erf, 1, 1)


def _erf(xp, x):
    if xp is np:
        erf = _scipy_special("erf") or _MATH_ERF  # SciPy is optional: the math module, per element
        return np.asarray(erf(x), dtype=x.dtype if x.dtype.kind == "f" else np.float64)
    special = getattr(xp, "special", None)
    if special is None:
        import cupyx.scipy.special as special
    return special.erf(x)


#: below these, sigmoid(x) is exp(x) to the last bit (1 + exp(x) rounds to 1)
SIGMOID_IS_EXP_BELOW = {np.dtype("float32"): -17.0, np.dtype("float64"): -40.0}


def _sigmoid(xp, x):
    if xp is np and x.dtype in SIGMOID_IS_EXP_BELOW:
        expit = _scipy_special("expit")  # SciPy's expit: one pass, 3.7x faster than the form below (issue 12)
        if expit is not None:
            # expit is 1 / (1 + exp(-x)), 0 once exp(-x) overflows where the result is a
            # subnormal (x < -88 in float32, -709 in float64): take exp(x) there
            out = expit(x)
            tail = x < SIGMOID_IS_EXP_BELOW[x.dtype]
            if tail.any():
                out = np.where(tail, np.exp(np.minimum(x, 0)), out)
            return out
    return _sigmoid_by_sign(xp, x)


def _sigmoid_by_sign(xp, x):
    # exp of a non-positive number never overflows: pick the form per sign
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))


# the output dtypes of sigmoid and erf, without probing SciPy's functions: importing SciPy took
# 0.2 s of a process's first compile, which lists every op's output dtypes (egraph/schema.py)
def _sigmoid_dtype(dtype):
    return _sigmoid_by_sign(np, _probe(dtype)).dtype  # expit keeps a float's dtype, as this form does


def _erf_dtype(dtype):
    return dtype if np.dtype(dtype).kind == "f" else "float64"


def _exp2(xp, x):
    base = xp.asarray(2.0, dtype=x.dtype) if xp.isdtype(x.dtype, "real floating") else 2.0
    return xp.pow(base, x)


@dataclass(frozen=True)
class _Bitwise:
    """The logical function on booleans, the bitwise one on integers (a class, not a
    closure, so that ops pickle)."""

    logical: str
    bitwise: str

    def __call__(self, xp, x, y):
        name = self.logical if x.dtype == xp.bool and y.dtype == xp.bool else self.bitwise
        return getattr(xp, name)(x, y)


def _invert(xp, x):
    return xp.logical_not(x) if x.dtype == xp.bool else xp.bitwise_invert(x)


def _second(xp, x, y):
    if any(d != d for d in (*x.shape, *y.shape)):  # Dask chunks of unknown (NaN) size: no shape to broadcast to
        return xp.multiply(y, xp.ones_like(x, dtype=y.dtype))  # y * 1 is y, -0.0 and NaN included
    shape = np.broadcast_shapes(tuple(x.shape), tuple(y.shape))
    return xp.asarray(xp.broadcast_to(y, shape), copy=True)


def _second_dtype(x_dtype, y_dtype):
    return y_dtype


def _sqr(xp, x):
    return xp.multiply(x, x)


def _clip(xp, x, lo, hi):
    # PyTensor's clip: lo below lo, else hi above hi, else x. It is np.clip where lo <= hi;
    # with lo > hi, or a NaN bound, np.clip gives another answer
    return xp.where(x < lo, lo, xp.where(x > hi, hi, x))


def _softplus(xp, x):
    # log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)): exp never overflows; 5x faster than
    # NumPy's logaddexp(0, x) (1000 float64s: 22 us against 106 us), which the stable forms
    # of the logistic loss and its gradient call twice
    if xp is np:  # NumPy's dtype test and a weak 0.0 instead of isdtype and zeros_like: 2 us less a call
        if x.dtype.kind != "f":
            return np.logaddexp(np.zeros_like(x), x)  # integers and booleans: NumPy's result dtype
        return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))
    if not xp.isdtype(x.dtype, "real floating"):
        return xp.logaddexp(xp.zeros_like(x), x)
    return xp.maximum(x, xp.zeros_like(x)) + xp.log1p(xp.exp(-xp.abs(x)))


def _log1mexp(xp, x):
    # log(1 - exp(x)) for x <= 0 (Maechler 2012): near 0, exp(x) rounds to 1 and 1 - exp(x)
    # loses every digit, so -expm1(x) is used there; far below, 1 - exp(x) rounds to 1 and
    # log1p keeps the tiny -exp(x). The switch point -log(2) is where both lose least.
    near_zero = x > -math.log(2.0)
    with np.errstate(invalid="ignore", divide="ignore"):  # the branch not taken may be NaN or -inf
        return xp.where(near_zero, xp.log(-xp.expm1(x)), xp.log1p(-xp.exp(x)))


@dataclass(frozen=True)
class ScalarOp:
    """One elementwise function: the name of an array-API function, or ``fn(xp, *args)``.

    ``promote`` lists the argument positions whose dtypes are promoted together
    (NumPy's rules); ``dtype`` overrides the output-dtype probe when given.
    ``commutative``: swapping the two arguments gives the same bits, for every value
    (the encoder puts such arguments in one canonical order; maximum and minimum are not:
    ``maximum(-0.0, 0.0)`` is ``-0.0`` but ``maximum(0.0, -0.0)`` is ``0.0``).
    ``passes``: the NumPy calls its array form makes (a lone node of several is fused alone,
    so that it runs as one compiled loop once hot: ``exec/fusion.py``).
    """

    nin: int
    fn: str | Callable
    promote: tuple | None = None
    dtype: Callable | None = None
    commutative: bool = False
    passes: int = 1

    def impl(self, xp) -> Callable:
        """The function computing this op on arrays of namespace ``xp``."""
        if isinstance(self.fn, str):
            return getattr(xp, self.fn)
        return partial(self.fn, xp)


# fmt: off
SCALAR_OPS: dict[str, ScalarOp] = {
    # arithmetic
    "add":      ScalarOp(2, "add", commutative=True),
    "sub":      ScalarOp(2, "subtract"),
    "mul":      ScalarOp(2, "multiply", commutative=True),
    "true_div": ScalarOp(2, "divide"),
    "int_div":  ScalarOp(2, "floor_divide"),
    "mod":      ScalarOp(2, "remainder"),
    "pow":      ScalarOp(2, "pow"),
    "maximum":  ScalarOp(2, "maximum"),
    "minimum":  ScalarOp(2, "minimum"),
    "neg":      ScalarOp(1, "negative"),
    "abs":      ScalarOp(1, "abs"),
    "sign":     ScalarOp(1, "sign"),
    "sqr":      ScalarOp(1, _sqr),
    "clip":     ScalarOp(3, _clip, passes=2),
    "second":   ScalarOp(2, _second, promote=(), dtype=_second_dtype),  # y broadcast to x's shape
    # exponentials and logarithms
    "exp":      ScalarOp(1, "exp"),
    "exp2":     ScalarOp(1, _exp2),
    "expm1":    ScalarOp(1, "expm1"),
    "log":      ScalarOp(1, "log"),
    "log2":     ScalarOp(1, "log2"),
    "log10":    ScalarOp(1, "log10"),
    "log1p":    ScalarOp(1, "log1p"),
    "sqrt":     ScalarOp(1, "sqrt"),
    "sigmoid":  ScalarOp(1, _sigmoid, dtype=_sigmoid_dtype),
    "softplus": ScalarOp(1, _softplus, passes=6),
    "log1mexp": ScalarOp(1, _log1mexp),   # log(1 - exp(x)), stable for x <= 0
    "logaddexp": ScalarOp(2, "logaddexp"),  # log(exp(a) + exp(b)), stable
    "erf":      ScalarOp(1, _erf, dtype=_erf_dtype),
    # trigonometry
    "sin":      ScalarOp(1, "sin"),
    "cos":      ScalarOp(1, "cos"),
    "tan":      ScalarOp(1, "tan"),
    "arcsin":   ScalarOp(1, "asin"),
    "arccos":   ScalarOp(1, "acos"),
    "arctan":   ScalarOp(1, "atan"),
    "sinh":     ScalarOp(1, "sinh"),
    "cosh":     ScalarOp(1, "cosh"),
    "tanh":     ScalarOp(1, "tanh"),
    # rounding
    "floor":    ScalarOp(1, "floor"),
    "ceil":     ScalarOp(1, "ceil"),
    "round":    ScalarOp(1, "round"),   # half to even, like NumPy
    # comparisons and logic
    "eq":       ScalarOp(2, "equal", commutative=True),
    "neq":      ScalarOp(2, "not_equal", commutative=True),
    "lt":       ScalarOp(2, "less"),
    "le":       ScalarOp(2, "less_equal"),
    "gt":       ScalarOp(2, "greater"),
    "ge":       ScalarOp(2, "greater_equal"),
    "and_":     ScalarOp(2, _Bitwise("logical_and", "bitwise_and"), commutative=True),
    "or_":      ScalarOp(2, _Bitwise("logical_or", "bitwise_or"), commutative=True),
    "xor":      ScalarOp(2, _Bitwise("logical_xor", "bitwise_xor"), commutative=True),
    "invert":   ScalarOp(1, _invert),
    "isnan":    ScalarOp(1, "isnan"),
    "isinf":    ScalarOp(1, "isinf"),
    "switch":   ScalarOp(3, "where", promote=(1, 2)),
}
# fmt: on


def broadcast_static_shapes(op, inputs) -> tuple:
    """The static output shape of broadcasting ``inputs`` (all of one ndim)."""
    shape = []
    for axis, dims in enumerate(zip(*(i.type.shape for i in inputs))):
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            raise ValueError(f"{op} cannot broadcast {', '.join(str(i) for i in inputs)}: static "
                             f"shapes {[i.type.shape for i in inputs]} disagree on axis {axis}")
        if known:
            shape.append(known.pop())
        elif all(d == 1 for d in dims):
            shape.append(1)
        else:
            shape.append(None)
    return tuple(shape)


def shape_inputs(node) -> list:
    """The inputs of an elementwise node (an ``Elemwise`` or a ``Cast``) that its output's shape
    comes from: the output has their broadcast shape. An input whose every axis is statically 1
    changes nothing and is left out, so ``x * 2`` and ``exp(x) + b.dimshuffle('x')`` both have
    the shape of ``x`` alone. The one statement of this fact: the encoder's shape roots
    (egraph/encode.py) and fusion's shape sources (exec/fusion.py) both read it."""
    ndim = node.outputs[0].ndim
    return [v for v in node.inputs
            if not (isinstance(v.type, TensorType) and v.type.ndim <= ndim and all(v.type.broadcastable))]


def _probe(value_dtype):
    return np.ones((), dtype=value_dtype)


class Elemwise(Op):
    """An elementwise op: ``SCALAR_OPS[name]`` applied with NumPy broadcasting."""

    __props__ = ("name",)

    def __init__(self, name: str):
        if name not in SCALAR_OPS:
            raise ValueError(f"No elementwise op named {name!r}")
        self.name = name
        self.scalar = SCALAR_OPS[name]
        self.nin = self.scalar.nin
        self._dtypes: dict = {}  # input dtypes -> output dtype

    def __str__(self):
        return f"Elemwise{{{self.name}}}"

    def make_node(self, *inputs):
        if len(inputs) != self.nin:
            raise TypeError(f"{self} takes {self.nin} inputs, got {len(inputs)}")
        try:
            inputs = [as_tensor_variable(i) for i in inputs]
        except TypeError as err:
            raise TypeError(f"{self}: {err}") from err
        dtype, inputs = self._promote(inputs)
        if dtype == "float16" and "float16" not in {i.dtype for i in inputs}:
            # NumPy computes exp of int8 (uint8, bool) in float16; PyTensor upgrades such
            # inputs to float32 (upgrade_to_float), and so does the graph, for every backend
            inputs = [cast(i, "float32") if i.dtype in _BYTE_SIZED else i for i in inputs]
            dtype, inputs = self._promote(inputs)
        ndim = max(i.ndim for i in inputs)
        inputs = [i if i.ndim == ndim else dimshuffle(i, ("x",) * (ndim - i.ndim) + tuple(range(i.ndim)))
                  for i in inputs]
        out = TensorType(dtype, broadcast_static_shapes(self, inputs))
        return Apply(self, inputs, [out()])

    def _promote(self, inputs):
        """NumPy's output dtype; weak (Python-number) constants are cast to the promoted dtype."""
        if not any(getattr(i, "weak", False) for i in inputs):  # the common case: cached by dtypes
            key = tuple(i.dtype for i in inputs)
            if key not in self._dtypes:
                self._dtypes[key] = self._promote_uncached(inputs)[0]
            return self._dtypes[key], inputs
        return self._promote_uncached(inputs)

    def _promote_uncached(self, inputs):
        promote = range(self.nin) if self.scalar.promote is None else self.scalar.promote
        strong = [inputs[i].dtype for i in promote if not getattr(inputs[i], "weak", False)]
        weak = [inputs[i].data.item() for i in promote if getattr(inputs[i], "weak", False)]
        if not strong:  # Python numbers only: one that a partner already gave a dtype keeps it
            given = [np.result_type(inputs[i].data.item()) != inputs[i].dtype for i in promote]
            strong = [inputs[i].dtype for i, g in zip(promote, given) if g]
            weak = [inputs[i].data.item() for i, g in zip(promote, given) if not g]
        try:
            common = np.result_type(*strong, *weak) if (strong or weak) else None
        except (TypeError, OverflowError) as err:
            raise TypeError(f"{self} cannot combine {', '.join(map(str, inputs))}: {err}") from err
        if common is not None:
            inputs = list(inputs)
            for i in promote:
                if getattr(inputs[i], "weak", False) and inputs[i].dtype != common.name:
                    try:
                        inputs[i] = _recast_weak(inputs[i], common)
                    except OverflowError as err:
                        raise TypeError(f"{self}: {err}") from err
        return self.output_dtype([i.dtype for i in inputs]), inputs

    def output_dtype(self, dtypes) -> str:
        """The output dtype for inputs of ``dtypes`` (weak constants already recast);
        raises TypeError where NumPy has no such loop (``invert`` of floats, say)."""
        if self.scalar.dtype is not None:
            return np.dtype(self.scalar.dtype(*dtypes)).name
        with np.errstate(all="ignore"):
            probe = self.scalar.impl(np)(*[_probe(d) for d in dtypes])
        return np.asarray(probe).dtype.name

    def perform(self, node, inputs, output_storage):
        xp = array_namespace(*inputs)
        if xp is not np:  # NumPy mixes dtypes itself; the array API wants them promoted first
            inputs = self._promote_values(xp, node, inputs)
        output_storage[0][0] = as_output(xp, self.scalar.impl(xp)(*inputs), node.outputs[0].type)

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
        """On NumPy, a thunk bound to NumPy directly (the per-call hot path of most graphs).
        It stores a new array each run, so it honours ``no_recycling`` as it is."""
        if impl not in (None, "numpy"):
            return super().make_thunk(node, storage_map, compute_map, no_recycling, impl)
        fn, dtype, ndarray = self.scalar.impl(np), node.outputs[0].type.numpy_dtype, np.ndarray
        cells = [storage_map[v] for v in node.inputs]
        out, flag = storage_map[node.outputs[0]], compute_map[node.outputs[0]]
        if len(cells) == 2:
            a, b = cells

            def thunk():
                r = fn(a[0], b[0])
                out[0] = r if type(r) is ndarray and r.dtype == dtype else np.asarray(r, dtype=dtype)
                flag[0] = 1
        else:
            def thunk():
                r = fn(*[c[0] for c in cells])
                out[0] = r if type(r) is ndarray and r.dtype == dtype else np.asarray(r, dtype=dtype)
                flag[0] = 1
        return thunk

    def _promote_values(self, xp, node, inputs):
        promote = range(self.nin) if self.scalar.promote is None else self.scalar.promote
        if not promote:
            return inputs
        common = np.result_type(*(node.inputs[i].dtype for i in promote))
        out = node.outputs[0].type.numpy_dtype
        if out.kind in "fc" and common.kind not in "fc":
            common = out  # e.g. exp or true_div of integers computes in the float output dtype
        inputs = list(inputs)
        for i in promote:
            if node.inputs[i].dtype != common.name:
                inputs[i] = xp.astype(inputs[i], getattr(xp, common.name))
        return inputs

    def infer_shape(self, fgraph, node, shapes):
        return [broadcast_shape_vars(shapes, node.outputs[0].type.shape)]

    def flops(self, inputs, outputs):
        return int(np.prod(outputs[0], dtype=np.int64))


_BYTE_SIZED = ("bool", "int8", "uint8")


def _recast_weak(const: TensorConstant, dtype) -> TensorConstant:
    value = const.data
    cast = value.astype(dtype)
    if dtype.kind in "iub" and value.dtype.kind in "iu" and cast != value:
        raise OverflowError(f"Python integer {value} out of bounds for {dtype}")
    return TensorConstant(TensorType(dtype, const.type.shape), cast, name=const.name, weak=True)


# One op value per scalar function: et.add, et.exp, ...
ELEMWISE_OPS: dict[str, Elemwise] = {name: Elemwise(name) for name in SCALAR_OPS}


class DimShuffle(Op):
    """Permute axes, insert broadcastable axes (``"x"``) and drop static-1 axes.

    ``new_order`` lists, for each output axis, the input axis it takes or ``"x"``.
    """

    __props__ = ("input_ndim", "new_order")
    view_map = {0: [0]}

    def __init__(self, input_ndim: int, new_order):
        self.input_ndim = int(input_ndim)
        self.new_order = tuple(o if o == "x" else int(o) for o in new_order)
        kept = [o for o in self.new_order if o != "x"]
        if len(set(kept)) != len(kept) or any(not 0 <= o < self.input_ndim for o in kept):
            raise ValueError(f"invalid dimshuffle order {self.new_order} for a {input_ndim}-d input")
        self.drop = tuple(i for i in range(self.input_ndim) if i not in kept)
        # after dropping, the kept axes are in input order; this puts them in output order
        self.permutation = tuple(sorted(kept).index(k) for k in kept)

    def __str__(self):
        return "DimShuffle{" + ",".join(map(str, self.new_order)) + "}"

    def make_node(self, x):
        x = as_tensor_variable(x)
        if x.ndim != self.input_ndim:
            raise TypeError(f"{self} expects a {self.input_ndim}-d input, got {x} with {x.ndim} dimensions")
        for i in self.drop:
            if x.type.shape[i] != 1:
                raise ValueError(f"{self} cannot drop axis {i} of {x}: its static size is "
                                 f"{x.type.shape[i]}, not 1")
        shape = tuple(1 if o == "x" else x.type.shape[o] for o in self.new_order)
        return Apply(self, [x], [TensorType(x.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        xp = array_namespace(x)
        if self.drop:  # the dropped axes have size 1
            x = xp.reshape(x, tuple(s for i, s in enumerate(x.shape) if i not in self.drop))
        if self.permutation != tuple(sorted(self.permutation)):
            x = xp.permute_dims(x, self.permutation)
        if "x" in self.new_order:
            sizes = iter(x.shape)
            x = xp.reshape(x, tuple(1 if o == "x" else next(sizes) for o in self.new_order))
        output_storage[0][0] = x

    def infer_shape(self, fgraph, node, shapes):
        (shape,) = shapes
        return [tuple(constant(1, dtype="int64") if o == "x" else shape[o] for o in self.new_order)]

    def scalar_constant_value(self, node):
        """A 0-d view of a constant of one element is that element (``get_scalar_constant_value``)."""
        return get_underlying_scalar_constant_value(node.inputs[0])


def dimshuffle(x, new_order):
    x = as_tensor_variable(x)
    return DimShuffle(x.ndim, new_order)(x)


class Cast(Op):
    """Convert to ``dtype`` elementwise (``x.astype(dtype)``)."""

    __props__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype).name

    def __str__(self):
        return f"Cast{{{self.dtype}}}"

    def make_node(self, x):
        x = as_tensor_variable(x)
        return Apply(self, [x], [TensorType(self.dtype, x.type.shape)()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        xp = array_namespace(x)
        out = as_output(xp, x, node.outputs[0].type)
        output_storage[0][0] = out if out is not x else copy_array(x)  # a cast to x's own dtype: no view

    def infer_shape(self, fgraph, node, shapes):
        return [shapes[0]]

    def flops(self, inputs, outputs):
        return 0

    def scalar_constant_value(self, node):
        """A cast of a constant is the constant in the new dtype (``get_scalar_constant_value``)."""
        return np.asarray(get_scalar_constant_value(node.inputs[0])).astype(self.dtype)[()]


def cast(x, dtype):
    """``x`` converted to ``dtype`` (a no-op when it already has it)."""
    x = as_tensor_variable(x)
    if x.dtype == np.dtype(dtype).name:
        return x
    return Cast(dtype)(x)


def broadcast_shape_vars(shapes, static_shape) -> tuple:
    """Symbolic broadcast of input shapes (all of one ndim): per axis, the size that is not 1
    (not the largest: a size 0 broadcast against 1 is 0)."""
    switch, eq = ELEMWISE_OPS["switch"], ELEMWISE_OPS["eq"]
    out = []
    for axis, known in enumerate(static_shape):
        if known is not None:
            out.append(int64_const(known))
            continue
        dims = [as_tensor_variable(s[axis]) for s in shapes]
        dims = [d for d in dims if not _is_const(d, 1)] or dims
        dim = dims[0]
        for d in dims[1:]:
            dim = switch(eq(d, 1), dim, d)
        out.append(dim)
    return tuple(out)


def _is_const(v, value) -> bool:
    try:
        return get_scalar_constant_value(v) == value
    except NotScalarConstantError:
        return False
