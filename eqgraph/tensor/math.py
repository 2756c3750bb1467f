"""Reductions, matrix products and softmax; composite helpers (mean, var, logsumexp, ...)."""

from __future__ import annotations

import builtins
from dataclasses import dataclass

import numpy as np

from eqgraph.tensor.alloc import zeros_like
from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.tensor.elemwise import ELEMWISE_OPS, broadcast_static_shapes, cast
from eqgraph.tensor.dimshuffle_op import dimshuffle
from eqgraph.tensor.shape import broadcast_shape_vars, flatten, int64_const, reshape, shape_of
from eqgraph.tensor.type import COMPLEX_DTYPES, DISCRETE_DTYPES, DTYPES, FLOAT_DTYPES, TensorType
from eqgraph.tensor.sorting import ArgAlongAxis
from eqgraph.terms.basic import Apply, Variable
from eqgraph.terms.op import Op
from eqgraph.xp import array_namespace, as_output

E = ELEMWISE_OPS


@dataclass(frozen=True)
class _NamespaceReduction:
    """``xp.<name>(x, axis=axis, keepdims=keepdims)``: the array API's own reduction, added up
    in ``acc`` where given (the array API's ``dtype`` argument; its mean has none, so the
    input is converted first)."""

    name: str

    def __call__(self, xp, x, axis, keepdims, acc=None):
        if acc is None:
            return getattr(xp, self.name)(x, axis=axis, keepdims=keepdims)
        if self.name in ("sum", "prod"):
            return getattr(xp, self.name)(x, axis=axis, keepdims=keepdims, dtype=getattr(xp, acc))
        return getattr(xp, self.name)(xp.astype(x, getattr(xp, acc)), axis=axis, keepdims=keepdims)


@dataclass(frozen=True)
class _ArgReduction:
    """``xp.argmax``/``xp.argmin`` over one axis, or over every axis as an index into
    the flattened array (NumPy's ``axis=None``), which the array API cannot do directly."""

    name: str

    def __call__(self, xp, x, axis, keepdims):
        if len(axis) == x.ndim and x.ndim != 1:
            out = getattr(xp, self.name)(xp.reshape(x, (-1,)))
            return xp.reshape(out, (1,) * x.ndim) if keepdims else out
        return getattr(xp, self.name)(x, axis=axis[0], keepdims=keepdims)


@dataclass(frozen=True)
class _LogSumExp:
    """``log(sum(exp(x)))`` with the maximum subtracted first, so that no ``exp`` overflows;
    where an axis holds only -inf (or an inf), the shift is 0 (the answer is then -inf or inf)."""

    def __call__(self, xp, x, axis, keepdims):
        if not xp.isdtype(x.dtype, "real floating"):
            x = xp.astype(x, xp.float64)  # like exp: integers and booleans give floats
        m = xp.max(x, axis=axis, keepdims=True)
        m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
        with np.errstate(divide="ignore"):  # log(0) of an all -inf axis is -inf, as it should be
            out = xp.log(xp.sum(xp.exp(x - m), axis=axis, keepdims=True)) + m
        return out if keepdims else xp.squeeze(out, axis=axis)


#: name -> fn(xp, x, axis: tuple, keepdims) with NumPy's semantics (picklable objects, not
#: lambdas, so that graphs and ops pickle)
REDUCTIONS = {
    **{name: _NamespaceReduction(name) for name in ("sum", "prod", "max", "min", "all", "any", "mean")},
    "argmax": _ArgReduction("argmax"),
    "argmin": _ArgReduction("argmin"),
    "logsumexp": _LogSumExp(),
}


def normalize_axis(axis, ndim: int) -> tuple:
    """``axis`` (None, an int or a sequence) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < builtins.max(ndim, 1):
            raise ValueError(f"axis {a} is out of bounds for a {ndim}-d tensor")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in {axis}")
    return tuple(sorted(out))


#: the reductions that add or multiply up their elements in an accumulator dtype
ACCUMULATING = ("sum", "prod", "mean")
#: the reductions that compare elements (logsumexp shifts by the largest)
_ORDERING = ("max", "min", "argmax", "argmin", "logsumexp")


class Reduce(Op):
    """``REDUCTIONS[name]`` over ``axis`` (a tuple of axes), keeping them as size 1 if ``keepdims``.

    A sum, product or mean accumulates in ``acc_dtype``; ``""`` stands for the default of the
    input's dtype (``default_acc_dtype``: float32 in float64, as PyTensor). The accumulator is a
    prop, not a cast of the input, so that the e-graph term is still the sum that the rules
    match (the stability rewrites of ``log(sum(exp(x)))`` among them), and the gradient, which
    reads only the output's dtype, stays in the input's precision. The result has NumPy's
    dtype for the input (a float32 sum is float32)."""

    __props__ = ("name", "axis", "keepdims", "acc_dtype")

    def __init__(self, name: str, axis: tuple, keepdims: bool = False, acc_dtype: str = ""):
        if name not in REDUCTIONS:
            raise ValueError(f"No reduction named {name!r}")
        if acc_dtype and (name not in ACCUMULATING or acc_dtype not in DTYPES):
            raise ValueError(f"Reduce({name!r}): acc_dtype={acc_dtype!r} is not a dtype that a "
                             f"{' or '.join(ACCUMULATING)} can accumulate in ({', '.join(DTYPES)})")
        self.name, self.axis, self.keepdims, self.acc_dtype = name, tuple(axis), bool(keepdims), acc_dtype
        self.fn = REDUCTIONS[name]

    def __str__(self):
        acc = f", acc={self.acc_dtype}" if self.acc_dtype else ""
        return f"{self.name.capitalize()}{{axis={self.axis}{', keepdims' if self.keepdims else ''}{acc}}}"

    def accumulator(self, idtype: str):
        """The dtype this op adds up an ``idtype`` input in, or None where that is the input's
        own (NumPy's accumulation then)."""
        if self.name not in ACCUMULATING:
            return None
        acc = self.acc_dtype or default_acc_dtype(idtype)
        return None if acc == idtype else acc

    def make_node(self, x):
        x = as_tensor_variable(x)
        if builtins.any(a >= builtins.max(x.ndim, 1) for a in self.axis) or (x.ndim == 0 and self.axis):
            raise ValueError(f"{self}: axis out of range for {x} with {x.ndim} dimensions")
        if self.acc_dtype:
            reduction_dtypes(str(self), x.dtype, None, self.acc_dtype)  # refuses one that cannot hold x
        if self.name.startswith("arg") and len(self.axis) not in (1, x.ndim):
            raise ValueError(f"{self}: {self.name} takes a single axis or all of them")
        if x.ndim and builtins.any(x.type.shape[a] == 0 for a in self.axis) and self.name in ("max", "min", "argmax", "argmin"):
            raise ValueError(f"{self}: cannot reduce the empty axis of {x} (static shape {x.type.shape})")
        shape = tuple(1 if a in self.axis else s for a, s in enumerate(x.type.shape)
                      if self.keepdims or a not in self.axis)
        return Apply(self, [x], [TensorType(self.output_dtype(x.dtype), shape)()])

    def output_dtype(self, dtype: str) -> str:
        """NumPy's result dtype for an input of ``dtype`` (sum of int8 is int64, say); the
        reductions that order their elements refuse complex ones."""
        if dtype in COMPLEX_DTYPES and self.name in _ORDERING:
            raise TypeError(f"{self} does not take complex numbers ({dtype} input): complex numbers have no order")
        with np.errstate(all="ignore"):
            probe = self.fn(np, np.ones((1,), dtype=dtype), (0,), False)
        return np.asarray(probe).dtype.name

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        xp = array_namespace(x)
        acc = self.accumulator(node.inputs[0].dtype)
        out = self.fn(xp, x, self.axis, self.keepdims) if acc is None else self.fn(xp, x, self.axis, self.keepdims, acc)
        output_storage[0][0] = as_output(xp, out, node.outputs[0].type)

    def infer_shape(self, fgraph, node, shapes):
        one = int64_const(1)
        return [tuple(one if a in self.axis else s for a, s in enumerate(shapes[0])
                      if self.keepdims or a not in self.axis)]

    def flops(self, inputs, outputs):
        return int(np.prod(inputs[0], dtype=np.int64))


def _reduce(name, x, axis=None, keepdims=False, acc_dtype=""):
    x = as_tensor_variable(x)
    return Reduce(name, normalize_axis(axis, x.ndim), keepdims, acc_dtype)(x)


#: default accumulator dtypes, PyTensor's ``CAReduce._acc_dtype``: integers and booleans
#: accumulate in 64 bits, float16 in float32, float32 in float64 and complex64 in complex128
DEFAULT_ACC_DTYPES = {"bool": "int64", "int8": "int64", "int16": "int64", "int32": "int64",
                      "uint8": "uint64", "uint16": "uint64", "uint32": "uint64", "float16": "float32",
                      "float32": "float64", "complex64": "complex128"}
#: the default output dtypes of a sum or product (``CAReduce._output_dtype``): discrete dtypes
#: widen to 64 bits, inexact ones keep their own (a float32 sum is float32, accumulated in float64)
DEFAULT_OUTPUT_DTYPES = {d: DEFAULT_ACC_DTYPES[d] for d in DISCRETE_DTYPES if d in DEFAULT_ACC_DTYPES}


def default_acc_dtype(idtype: str) -> str:
    """The dtype a sum, product or mean of an ``idtype`` input accumulates in by default."""
    return DEFAULT_ACC_DTYPES.get(idtype, idtype)


def _dtype_name(dtype, argument: str, op: str) -> str:
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = None
    if name not in DTYPES:
        raise TypeError(f"{op}: {argument}={dtype!r} is not a tensor dtype (one of {', '.join(DTYPES)})")
    return name


def reduction_dtypes(op: str, idtype: str, dtype=None, acc_dtype=None) -> tuple:
    """``(accumulator dtype, output dtype)`` of a sum or product ``op`` of an ``idtype`` input
    given the ``dtype`` and ``acc_dtype`` arguments, by PyTensor's rules: ``dtype`` is the
    output's (the result is cast to it at the end, however narrow), ``acc_dtype`` must hold
    every ``idtype`` value (a discrete input may accumulate in any float or complex dtype)."""
    out = DEFAULT_OUTPUT_DTYPES.get(idtype, idtype) if dtype is None else _dtype_name(dtype, "dtype", op)
    if acc_dtype is None:
        return DEFAULT_ACC_DTYPES.get(idtype, idtype), out
    acc = _dtype_name(acc_dtype, "acc_dtype", op)
    if idtype in DISCRETE_DTYPES and acc not in DISCRETE_DTYPES:
        return acc, out
    wide = np.result_type(idtype, acc).name
    if wide != acc:
        raise TypeError(f"{op} of a {idtype} input: acc_dtype={acc!r} would lose precision (it cannot hold "
                        f"every {idtype} value); use an acc_dtype at least as wide as {wide}, leave "
                        f"acc_dtype out, or give dtype={acc!r} to cast the result instead")
    return acc, out


def _in_accumulator(name, x, axis, keepdims, acc):
    """``name`` ("sum", "prod" or "mean") of ``x`` accumulated in ``acc``. An inexact input is
    reduced as it is, with the accumulator as the op's prop (its result keeps the input's
    dtype); a discrete one, or one whose accumulator is of another kind, is cast to it first."""
    if x.dtype not in DISCRETE_DTYPES and acc in (x.dtype, default_acc_dtype(x.dtype)):
        return _reduce(name, x, axis, keepdims, "" if acc == default_acc_dtype(x.dtype) else acc)
    return _reduce(name, cast(x, acc), axis, keepdims, "" if acc == default_acc_dtype(acc) else acc)


def _accumulate(name, x, axis, keepdims, dtype, acc_dtype):
    """``name`` ("sum" or "prod") of ``x`` computed in the accumulator dtype, then cast to the
    output dtype. NumPy sums narrow integers in 64 bits: the cast back to a narrower integer
    accumulator wraps exactly as accumulating in it would (addition and multiplication modulo
    2**bits do not depend on when the wrap happens)."""
    x = as_tensor_variable(x)
    acc, out = reduction_dtypes(name, x.dtype, dtype, acc_dtype)
    r = _in_accumulator(name, x, axis, keepdims, acc)
    return _to_output(cast(r, acc) if r.dtype in DISCRETE_DTYPES else r, out)


def _to_output(r, out):
    """``r`` cast to the output dtype the caller asked for; a complex accumulator given a real
    ``dtype`` keeps its real part, as NumPy's and PyTensor's cast of the result does (an explicit
    ``dtype`` is the request that a plain cast of a complex value lacks)."""
    if r.dtype in COMPLEX_DTYPES and out not in COMPLEX_DTYPES:
        r = E["real"](r)
    return cast(r, out)


def sum(x, axis=None, keepdims=False, dtype=None, acc_dtype=None):
    """``x`` summed over ``axis``, accumulated in ``acc_dtype`` and returned as ``dtype`` (by
    default a float32 sum is float32, an int8 one is int64)."""
    return _accumulate("sum", x, axis, keepdims, dtype, acc_dtype)


def prod(x, axis=None, keepdims=False, dtype=None, acc_dtype=None):
    """The product of ``x`` over ``axis``, with ``sum``'s dtype rules."""
    return _accumulate("prod", x, axis, keepdims, dtype, acc_dtype)


def max(x, axis=None, keepdims=False):
    return _reduce("max", x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    return _reduce("min", x, axis, keepdims)


def all(x, axis=None, keepdims=False):
    return _reduce("all", x, axis, keepdims)


def any(x, axis=None, keepdims=False):
    return _reduce("any", x, axis, keepdims)


def mean_dtype(sum_dtype: str) -> str:
    """The dtype of a mean whose sum is ``sum_dtype``: PyTensor divides by the element count as
    float32 for a float16, float32 or complex64 sum and as float64 otherwise."""
    if sum_dtype in ("float16", "float32", "complex64"):
        return sum_dtype
    return "float64" if sum_dtype in DISCRETE_DTYPES else sum_dtype


def mean(x, axis=None, keepdims=False, dtype=None, acc_dtype=None):
    """The mean of ``x`` over ``axis``: its sum (with ``sum``'s ``dtype``/``acc_dtype`` rules; a
    float16 input sums as float32) divided by the count; float16 in, float16 out."""
    x = as_tensor_variable(x)
    sum_dtype = dtype if dtype is not None else ("float32" if x.dtype == "float16" else None)
    acc, sum_out = reduction_dtypes("mean", x.dtype, sum_dtype, acc_dtype)
    out = mean_dtype(sum_out)
    if dtype == "float16" or (dtype is None and x.dtype == "float16"):
        out = "float16"
    if sum_out in DISCRETE_DTYPES and sum_out != acc:
        # the sum is cast to a narrower integer before the division: its wrap-around shows
        total = _accumulate("sum", x, axis, keepdims, sum_dtype, acc_dtype)
        return _to_output(E["true_div"](cast(total, "float64"), cast(_count(x, axis), "float64")), out)
    # in the accumulator: the division rounds once (PyTensor rounds the sum to its output dtype
    # first, which can differ from this in the last place)
    return _to_output(_in_accumulator("mean", x, axis, keepdims, acc), out)


def argmax(x, axis=None, keepdims=False):
    return _arg_reduce("argmax", x, axis, keepdims)


def argmin(x, axis=None, keepdims=False):
    return _arg_reduce("argmin", x, axis, keepdims)


def _arg_reduce(name, x, axis, keepdims):
    """The index of the largest (smallest) element along ``axis``: one axis, several (the index
    into them flattened in C order, as PyTensor), none (every element is its own: zeros), or all."""
    if not isinstance(axis, Variable):
        x = as_tensor_variable(x)
        axes = normalize_axis(axis, x.ndim)
        if not axes and x.ndim:
            return zeros_like(x, dtype="int64")
        if 1 < len(axes) < x.ndim:
            return _arg_over(name, x, axes, keepdims)
        return _reduce(name, x, axis, keepdims)
    if keepdims:  # which axis to keep is not known when the graph is built
        raise ValueError(f"{name}(x, axis={axis}, keepdims=True): keepdims needs an axis known when the graph "
                         "is built (a Python int)")
    return ArgAlongAxis(name)(x, axis)  # the axis is known at run time only


def max_and_argmax(x, axis=None, keepdims=False):
    """``[max(x, axis), argmax(x, axis)]`` (PyTensor's ``max_and_argmax``). Over several axes
    but not all, the argmax indexes the reduced axes flattened in their order (C order), as
    over every axis it indexes ``x`` flattened."""
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.ndim)
    return [max(x, axes, keepdims), argmax(x, axes, keepdims)]


def _arg_over(name, x, axes, keepdims):
    """argmax/argmin over several axes but not all: the reduced axes moved last and merged."""
    kept = [a for a in range(x.ndim) if a not in axes]
    moved = dimshuffle(x, (*kept, *axes))  # the reduced axes last, then merged into one
    flat = reshape(moved, [*(shape_of(x)[a] for a in kept), -1], ndim=len(kept) + 1)
    index = _reduce(name, flat, len(kept))
    if not keepdims:
        return index
    pattern, k = [], 0
    for a in range(x.ndim):  # a size-1 axis where each reduced one was
        pattern.append("x" if a in axes else k)
        k += a not in axes
    return dimshuffle(index, pattern)


def _count(x, axis) -> object:
    """The number of elements reduced over ``axis``, as an int64 scalar."""
    n = int64_const(1)
    for a in normalize_axis(axis, x.ndim):
        n = n * shape_of(x)[a]
    return n


def var(x, axis=None, ddof=0, keepdims=False, corrected=False):
    """Variance, ``np.var``: the mean squared deviation from the mean, divided by ``n - ddof``.
    ``corrected`` subtracts the squared mean deviation (PyTensor's corrected two-pass form), which
    is zero but for the rounding error of the computed mean."""
    x = as_tensor_variable(x)
    deviation = x - mean(x, axis, keepdims=True)
    v = mean(deviation * deviation, axis, keepdims)
    if corrected:
        v = v - E["sqr"](mean(deviation, axis, keepdims))
    if ddof:
        n = cast(_count(x, axis), v.dtype)
        v = v * n / (n - ddof)
    return v


def std(x, axis=None, ddof=0, keepdims=False, corrected=False):
    return E["sqrt"](var(x, axis, ddof, keepdims, corrected))


def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x)))`` computed stably (one reduction, see ``_LogSumExp``)."""
    return _reduce("logsumexp", x, axis, keepdims)


class MatMul(Op):
    """``np.matmul``: matrix products, with vectors and stacked (batched) matrices."""

    __props__ = ()

    def __str__(self):
        return "matmul"

    def make_node(self, a, b):
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError(f"matmul: its operands cannot be scalar, got {a} ({a.ndim}-d) and "
                             f"{b} ({b.ndim}-d); use * for scalars")
        k_a = a.type.shape[-1]
        k_b = b.type.shape[0] if b.ndim == 1 else b.type.shape[-2]
        if k_a is not None and k_b is not None and k_a != k_b:
            raise ValueError(f"matmul: shapes {a.type.shape} of {a} and {b.type.shape} of {b} "
                             f"are not aligned ({k_a} != {k_b})")
        rows = () if a.ndim == 1 else (a.type.shape[-2],)
        cols = () if b.ndim == 1 else (b.type.shape[-1],)
        batch_a, batch_b = a.type.shape[:-2], b.type.shape[:-2]
        n = builtins.max(len(batch_a), len(batch_b))
        batch_a, batch_b = (1,) * (n - len(batch_a)) + batch_a, (1,) * (n - len(batch_b)) + batch_b
        batch = broadcast_static_shapes(self, [TensorType(a.dtype, batch_a)(), TensorType(b.dtype, batch_b)()]) if n else ()
        dtype = np.result_type(a.dtype, b.dtype).name
        if dtype == "bool":
            raise TypeError(f"matmul of boolean tensors {a} and {b} is not supported")
        return Apply(self, [a, b], [TensorType(dtype, batch + rows + cols)()])

    def perform(self, node, inputs, output_storage):
        a, b = inputs
        xp = array_namespace(a, b)
        ttype = node.outputs[0].type
        if xp is not np and (a.dtype != b.dtype):
            a, b = xp.astype(a, getattr(xp, ttype.dtype)), xp.astype(b, getattr(xp, ttype.dtype))
        output_storage[0][0] = as_output(xp, xp.matmul(a, b), ttype)

    def infer_shape(self, fgraph, node, shapes):
        a, b = node.inputs
        sa, sb = shapes
        rows = () if a.ndim == 1 else (sa[-2],)
        cols = () if b.ndim == 1 else (sb[-1],)
        ba, bb = tuple(sa[:-2]), tuple(sb[:-2])
        n = builtins.max(len(ba), len(bb))
        one = int64_const(1)
        ba, bb = (one,) * (n - len(ba)) + ba, (one,) * (n - len(bb)) + bb
        static = node.outputs[0].type.shape[:n]
        return [broadcast_shape_vars([ba, bb], static) + rows + cols]

    def flops(self, inputs, outputs):
        # rows and columns from the operands, and the shared size the smaller of theirs: where
        # sizes are unknown the cost model guesses each shape on its own, and the guesses need
        # not agree (A[0] of an unknown A would otherwise look as long as A is big)
        a, b = inputs
        k = builtins.min(a[-1], b[0] if len(b) == 1 else b[-2])
        rows = a[-2] if len(a) > 1 else 1
        cols = b[-1] if len(b) > 1 else 1
        batch = np.prod(outputs[0][: builtins.max(len(a) - 2, len(b) - 2, 0)])
        return 2 * int(batch * rows * k * cols)


matmul_op = MatMul()


def matmul(a, b, dtype=None):
    """``np.matmul``; ``dtype`` casts the product (PyTensor's argument)."""
    out = matmul_op(a, b)
    return out if dtype is None else cast(out, dtype)


def dot(a, b):
    """``np.dot`` for tensors of at most 2 dimensions (a scalar multiplies)."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim == 0 or b.ndim == 0:
        return E["mul"](a, b)
    if a.ndim > 2 or b.ndim > 2:
        raise TypeError(f"dot supports tensors of at most 2 dimensions, got {a} ({a.ndim}-d) and "
                        f"{b} ({b.ndim}-d); use matmul for stacked matrices")
    return matmul_op(a, b)


def outer(x, y):
    x, y = flatten(as_tensor_variable(x)), flatten(as_tensor_variable(y))
    return dimshuffle(x, (0, "x")) * dimshuffle(y, ("x", 0))


class Softmax(Op):
    """``exp(x) / sum(exp(x), axis)``, computed with the maximum subtracted first (or its log)."""

    __props__ = ("axis", "log")

    def __init__(self, axis: int, log: bool = False):
        self.axis, self.log = int(axis), bool(log)

    def __str__(self):
        return f"{'LogSoftmax' if self.log else 'Softmax'}{{axis={self.axis}}}"

    def make_node(self, x):
        x = as_tensor_variable(x)
        if not 0 <= self.axis < builtins.max(x.ndim, 1) or x.ndim == 0:
            raise ValueError(f"{self}: axis out of range for {x} with {x.ndim} dimensions")
        if x.dtype in COMPLEX_DTYPES:  # it shifts by the largest element
            raise TypeError(f"{self} does not take complex numbers ({x} is {x.dtype}): complex numbers have no order")
        dtype = x.dtype if x.dtype in FLOAT_DTYPES else "float64"
        return Apply(self, [x], [TensorType(dtype, x.type.shape)()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        xp = array_namespace(x)
        ttype = node.outputs[0].type
        x = xp.astype(x, getattr(xp, ttype.dtype)) if xp is not np or x.dtype != ttype.numpy_dtype else x
        # on NumPy, the ufuncs' reduce: what np.max and np.sum call on an ndarray, without
        # their Python layers, which dominate a call on a few elements
        xmax, xsum = (np.maximum.reduce, np.add.reduce) if xp is np else (xp.max, xp.sum)
        shifted = x - xmax(x, axis=self.axis, keepdims=True)
        if self.log:
            out = shifted - xp.log(xsum(xp.exp(shifted), axis=self.axis, keepdims=True))
        else:
            e = xp.exp(shifted)
            out = e / xsum(e, axis=self.axis, keepdims=True)
        output_storage[0][0] = as_output(xp, out, ttype)

    def infer_shape(self, fgraph, node, shapes):
        return [shapes[0]]

    def flops(self, inputs, outputs):
        return 4 * int(np.prod(inputs[0], dtype=np.int64))


# -- PyTensor's elementwise names that are compositions of the registry's ops ------------------
# Each is written with existing rows, so its gradient, Numba form and cost come from them.

def reciprocal(x):
    """``1 / x`` elementwise (``np.reciprocal`` of floats; integers divide in a float dtype)."""
    return E["true_div"](1, as_tensor_variable(x))


def deg2rad(x):
    """Degrees to radians, ``x * (pi / 180)``: NumPy's formula."""
    return as_tensor_variable(x) * (np.pi / 180.0)


def rad2deg(x):
    """Radians to degrees, ``x * (180 / pi)``: NumPy's formula."""
    return as_tensor_variable(x) * (180.0 / np.pi)


def trunc(x):
    """``np.trunc``: round toward zero (-0.5 gives -0.0, NaN stays NaN)."""
    x = as_tensor_variable(x)
    return E["switch"](E["lt"](x, 0), E["ceil"](x), E["floor"](x))


def round_half_to_even(x):
    """Round to the nearest integer, halves to the even one (``np.round``)."""
    return E["round"](x)


def round_half_away_from_zero(x):
    """Round to the nearest integer, halves away from zero (2.5 to 3, -2.5 to -3).

    From the truncation and the exact remainder ``x - trunc(x)``: ``sign(x) * floor(|x| + 0.5)``
    would round 0.49999999999999994 up, its sum with 0.5 being 1.0 in float64.
    """
    x = as_tensor_variable(x)
    whole = trunc(x)
    return E["switch"](E["ge"](E["abs"](x - whole), 0.5), whole + E["sign"](x), whole)


def ceil_intdiv(a, b):
    """Integer division rounded up, ``ceil(a / b)`` exactly for integers: ``a // b``, plus one where
    the division leaves a remainder (PyTensor's formula)."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    floor_div = E["int_div"](a, b)
    return floor_div + cast(E["neq"](E["mod"](a, b), 0), floor_div.dtype)


def dense_dot(a, b):
    """PyTensor's ``dense_dot``: ``dot`` of two dense tensors."""
    return dot(a, b)
