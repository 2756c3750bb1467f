"""What each PyTensor op becomes in eqgraph: one table, one entry per op.

``OPS`` is keyed by PyTensor's op class, ``SCALAR_OPS`` (for ``Elemwise`` and ``CAReduce``) by
its scalar-op class. An entry is ``fn(node, *inputs)``: ``node`` is PyTensor's Apply (for the op's
properties and constant inputs), ``inputs`` its inputs already converted to eqgraph variables
(a PyTensor ``None`` constant is ``None``, a slice a Python ``slice``). It returns the eqgraph
output (or a list of them); ``convert.py`` casts each to PyTensor's dtype where eqgraph's NumPy
dtype rules differ. An op with no entry raises ``UnsupportedOp`` naming it. Ops that hold a graph
or an op of their own (``Blockwise``, ``OpFromGraph``, ``Scan``) are ``nested.py``'s table, whose entries are
given the walk to translate what they hold.

Checks (``Assert``, ``CheckAndRaise``) become eqgraph's ``CheckAndRaise``, raising the same
exception with the same message. PyMC's ``CheckParameterValue`` is translated as PyMC compiles
it: removed under ``check_bounds=False`` (``CHECK_BOUNDS``, which ``from_pymc`` sets from the
model), else ``switch(all conditions, value, -inf)`` where the op says ``can_be_replaced_by_ninf``,
else a check raising PyMC's ``ParameterValueError``.
"""

from __future__ import annotations

import contextvars
import functools

import numpy as np
import pytensor.scalar as ps
import pytensor.scalar.math as psm
from pytensor.compile import ops as compile_ops
from pytensor.compile.ops import DeepCopyOp, ViewOp
from pytensor.graph.basic import Constant
from pytensor.raise_op import CheckAndRaise
from pytensor.scalar.loop import ScalarLoop
from pytensor.tensor import basic as ptb
from pytensor.tensor import extra_ops as pte
from pytensor.tensor import math as ptm
from pytensor.tensor import special
from pytensor.tensor import subtensor as ptsub
from pytensor.tensor.blockwise import Blockwise
from pytensor.tensor.elemwise import CAReduce, DimShuffle, Elemwise
from pytensor.tensor.exceptions import NotScalarConstantError
from pytensor.tensor.shape import Reshape, Shape, Shape_i, SpecifyShape
from pytensor.tensor.sort import ArgSortOp, SortOp
from pytensor.tensor.type_other import MakeSlice, NoneTypeT

try:  # PyTensor 3.0 keeps the linear-algebra ops in one module; 2.38 in two
    from pytensor.tensor.linalg import Cholesky, CholeskySolve, Det, MatrixInverse, Solve, SolveTriangular
except ImportError:
    from pytensor.tensor.nlinalg import Det, MatrixInverse
    from pytensor.tensor.slinalg import Cholesky, CholeskySolve, Solve, SolveTriangular

import eqgraph.tensor as et
from eqgraph.tensor import linalg as elinalg
from eqgraph.tensor.elemwise import ELEMWISE_OPS
from eqgraph.pytensor.scalar_loop import inline_scalar_graph, scalar_loop


class UnsupportedOp(NotImplementedError):
    """A PyTensor op with no eqgraph translation (yet)."""

    def __init__(self, op, node=None, labels=(), why="eqgraph has no translation for it yet"):
        self.op, self.node, self.labels, self.why = op, node, list(labels), why
        where = f" (in the graph of {', '.join(map(str, self.labels))})" if self.labels else ""
        inputs = "" if node is None else f" applied to {[str(i.type) for i in node.inputs]}"
        super().__init__(f"from_pytensor: {describe(op)}{inputs}{where}: {why}")


def describe(op) -> str:
    """An op's name as a reader looks for it: the scalar op inside an Elemwise or a Blockwise's core."""
    if isinstance(op, (Elemwise, CAReduce)):
        return f"{type(op).__name__}({type(op.scalar_op).__name__})"
    if isinstance(op, Blockwise):
        return f"Blockwise({type(op.core_op).__name__})"
    return str(op) if type(op).__name__ in str(op) else f"{type(op).__name__} {op}"


def translation_of(op):
    """The table entry for ``op`` (the nearest class in its MRO), or None."""
    for cls in type(op).__mro__:
        if cls in OPS:
            return OPS[cls]
    return None


def constant_int(node, i: int, what: str) -> int:
    """Input ``i`` of ``node`` as a Python int, which eqgraph needs static (an axis, a count)."""
    v = node.inputs[i]
    try:
        return int(ptb.get_underlying_scalar_constant_value(v))
    except NotScalarConstantError:
        raise UnsupportedOp(node.op, node, why=f"{what} (input {i}) must be a constant, got {v}") from None


# -- elementwise ------------------------------------------------------------------------
def _named(name: str):
    """The eqgraph elementwise op ``name``, folded left over more inputs than it takes
    (PyTensor's ``add`` and ``mul`` take any number)."""
    op = ELEMWISE_OPS[name]
    return lambda *xs: op(*xs) if len(xs) == op.nin else functools.reduce(op, xs)


def _composite(scalar_op, *xs):
    """A fused ``Composite``: its inner scalar graph, inlined op by op."""
    return inline_scalar_graph(scalar_op.fgraph, xs, apply_scalar)


# scalar-op class -> fn(*eqgraph inputs); Elemwise applies it with broadcasting
SCALAR_OPS = {
    ps.Add: _named("add"), ps.Sub: _named("sub"), ps.Mul: _named("mul"),
    ps.TrueDiv: _named("true_div"), ps.IntDiv: _named("int_div"), ps.Mod: _named("mod"),
    ps.Pow: _named("pow"), ps.ScalarMaximum: _named("maximum"), ps.ScalarMinimum: _named("minimum"),
    ps.Maximum: _named("maximum"), ps.Minimum: _named("minimum"),
    ps.Neg: _named("neg"), ps.Abs: _named("abs"), ps.Sign: _named("sign"), ps.Sqr: _named("sqr"),
    ps.Clip: _named("clip"), ps.Second: _named("second"),
    ps.Exp: _named("exp"), ps.Exp2: _named("exp2"), ps.Expm1: _named("expm1"),
    ps.Log: _named("log"), ps.Log2: _named("log2"), ps.Log10: _named("log10"), ps.Log1p: _named("log1p"),
    ps.Sqrt: _named("sqrt"), psm.Sigmoid: _named("sigmoid"), psm.Softplus: _named("softplus"),
    psm.Log1mexp: _named("log1mexp"), psm.Erf: _named("erf"),
    psm.Erfc: _named("erfc"), psm.Erfcx: _named("erfcx"), psm.Erfinv: _named("erfinv"),
    psm.Erfcinv: _named("erfcinv"), psm.GammaLn: _named("gammaln"), psm.Psi: _named("psi"),
    psm.TriGamma: _named("tri_gamma"), psm.Gamma: _named("gamma"), psm.I0: _named("i0"), psm.I1: _named("i1"),
    psm.Ive: _named("ive"), psm.GammaInc: _named("gammainc"), psm.GammaIncC: _named("gammaincc"),
    psm.GammaIncInv: _named("gammaincinv"), psm.GammaIncCInv: _named("gammainccinv"),
    psm.PolyGamma: _named("polygamma"), psm.BetaInc: _named("betainc"),
    ps.Sin: _named("sin"), ps.Cos: _named("cos"), ps.Tan: _named("tan"),
    ps.ArcSin: _named("arcsin"), ps.ArcCos: _named("arccos"), ps.ArcTan: _named("arctan"),
    ps.Sinh: _named("sinh"), ps.Cosh: _named("cosh"), ps.Tanh: _named("tanh"),
    ps.Floor: _named("floor"), ps.Ceil: _named("ceil"), ps.RoundHalfToEven: _named("round"),
    ps.EQ: _named("eq"), ps.NEQ: _named("neq"), ps.LT: _named("lt"), ps.LE: _named("le"),
    ps.GT: _named("gt"), ps.GE: _named("ge"),
    ps.AND: _named("and_"), ps.OR: _named("or_"), ps.XOR: _named("xor"), ps.Invert: _named("invert"),
    ps.IsNan: _named("isnan"), ps.IsInf: _named("isinf"), ps.Switch: _named("switch"),
    ps.Reciprocal: lambda x: ELEMWISE_OPS["true_div"](et.constant(np.asarray(1, dtype=x.dtype)), x),
    ps.Identity: lambda x: x,
}


def scalar_function(scalar_op):
    """``fn(*xs)`` for a scalar op: its SCALAR_OPS entry, a cast, or an inlined Composite."""
    if isinstance(scalar_op, ps.Composite):
        return lambda *xs: _composite(scalar_op, *xs)
    if isinstance(scalar_op, ps.Cast):
        return lambda x: et.cast(x, scalar_op.o_type.dtype)
    for cls in type(scalar_op).__mro__:
        if cls in SCALAR_OPS:
            return SCALAR_OPS[cls]
    raise UnsupportedOp(scalar_op, why=f"eqgraph has no elementwise {type(scalar_op).__name__} "
                                       f"({scalar_op}) yet")


def apply_scalar(scalar_op, out_dtype: str, xs):
    """``scalar_op`` on eqgraph inputs ``xs``, computed in PyTensor's output dtype: PyTensor casts
    integer inputs of a float op to the output dtype first (``log`` of an int8 is a float32 log),
    where NumPy's rules would compute in float16."""
    if isinstance(scalar_op, ScalarLoop):   # its inner graph states its dtypes
        return scalar_loop(scalar_op, xs, apply_scalar)
    if np.dtype(out_dtype).kind in "fc":
        # a switch's condition stays boolean, polygamma's order an integer
        kept = 1 if isinstance(scalar_op, (ps.Switch, psm.PolyGamma)) else 0
        xs = [*xs[:kept], *[x if np.dtype(x.dtype).kind in "fc" else et.cast(x, out_dtype)
                            for x in xs[kept:]]]
    return scalar_function(scalar_op)(*xs)


def _elemwise(node, *xs):
    try:
        return apply_scalar(node.op.scalar_op, node.outputs[0].type.dtype, xs)
    except UnsupportedOp as e:
        raise UnsupportedOp(node.op, node, why=e.why) from None


def _dimshuffle(node, x):
    """PyTensor drops an axis of unknown size, checking at run time that it is 1; eqgraph needs
    the size static, which SpecifyShape states (and checks)."""
    kept = set(node.op.new_order) - {"x"}
    x = et.specify_shape(x, [None if a in kept else 1 for a in range(x.ndim)])
    return et.dimshuffle(x, node.op.new_order)


def _has_axis_prop(op) -> bool:
    """Whether ``op`` holds its axis (PyTensor 3.3's ``Join``, ``Split``, ``SortOp``...) rather than
    taking it as an input (2.38's and 3.0's)."""
    return "axis" in (getattr(type(op), "__props__", None) or ())


def _sort(node, x, *axis):
    """``SortOp`` or ``ArgSortOp``: its axis is None (the flattened input), a constant input, or
    the op's own (a flattening is then in the graph)."""
    sort = et.sort if isinstance(node.op, SortOp) else et.argsort   # argsort is stable
    if _has_axis_prop(node.op):
        return sort(x, axis=node.op.axis)
    return sort(x, axis=None if isinstance(node.inputs[1].type, NoneTypeT) else constant_int(node, 1, "the axis"))


CUMULATIVE = {"add": et.cumsum, "mul": et.cumprod}  # CumOp's mode -> eqgraph function

# CAReduce's scalar op -> eqgraph reduction
REDUCTIONS = {ps.Add: et.sum, ps.Mul: et.prod, ps.ScalarMaximum: et.max, ps.ScalarMinimum: et.min,
              ps.Maximum: et.max, ps.Minimum: et.min,
              ps.AND: et.all, ps.OR: et.any}


def _careduce(node, x):
    reduce = REDUCTIONS.get(type(node.op.scalar_op))
    if reduce is None:
        raise UnsupportedOp(node.op, node, why=f"no eqgraph reduction by {node.op.scalar_op}")
    if reduce in (et.sum, et.prod):   # PyTensor's Sum and Prod carry their output and accumulator dtypes
        return reduce(x, axis=node.op.axis, dtype=node.op.dtype, acc_dtype=node.op.acc_dtype)
    return reduce(x, axis=node.op.axis)


# -- indexing ---------------------------------------------------------------------------
def _index(node, index_inputs):
    """The Python index of a Subtensor-family node, with eqgraph variables in it: its ``idx_list``
    read with its index inputs (PyTensor 2.38's advanced forms have none: the inputs are the index)."""
    if not hasattr(node.op, "idx_list"):
        return tuple(index_inputs)
    return tuple(ptsub.indices_from_subtensor(list(index_inputs), node.op.idx_list))


def _subtensor(node, x, *index):
    return x[_index(node, index)]


def _inc_subtensor(node, x, y, *index):
    return _write(node, x[_index(node, index)], y)


def _advanced_inc_subtensor(node, x, y, *index):
    if getattr(node.op, "ignore_duplicates", False) and not node.op.set_instead_of_inc:
        raise UnsupportedOp(node.op, node, why="eqgraph's inc_subtensor adds repeated indices up "
                                               "(ignore_duplicates=True is not supported yet)")
    return _write(node, x[_index(node, index)], y)


def _write(node, view, y):
    return et.set_subtensor(view, y) if node.op.set_instead_of_inc else et.inc_subtensor(view, y)


# -- checks ------------------------------------------------------------------------------
#: whether PyMC's parameter checks are kept (its model's ``check_bounds``); ``from_pymc`` sets it
CHECK_BOUNDS = contextvars.ContextVar("CHECK_BOUNDS", default=True)


def _check(node, value, *conditions):
    """A PyTensor ``CheckAndRaise`` (``Assert``): eqgraph's, with the same exception and message."""
    if _is_parameter_check(node.op):
        return _parameter_check(node, value, conditions)
    return et.CheckAndRaise(node.op.exc_type, node.op.msg)(value, *conditions)


def _is_parameter_check(op) -> bool:
    # by name: PyMC is an optional extra that this module does not import
    return any(cls.__name__ == "CheckParameterValue" for cls in type(op).__mro__)


def _parameter_check(node, value, conditions):
    """PyMC's ``CheckParameterValue`` as PyMC's compiled functions have it (pymc.pytensorf's
    ``local_check_parameter_to_ninf_switch`` and ``local_remove_check_parameter``)."""
    if not CHECK_BOUNDS.get():
        return value
    if node.op.can_be_replaced_by_ninf:
        ok = functools.reduce(ELEMWISE_OPS["and_"], [et.all(c) for c in conditions])
        return et.switch(ok, value, et.constant(np.asarray(-np.inf, dtype=value.dtype)))
    return et.CheckAndRaise(node.op.exc_type, node.op.msg)(value, *conditions)


# -- shapes and allocation ----------------------------------------------------------------
def _specify_shape(node, x, *dims):
    static = []
    for i, d in enumerate(dims, start=1):
        static.append(None if d is None else constant_int(node, i, "a specified size"))
    return et.specify_shape(x, static)


def _join(node, *inputs):
    if _has_axis_prop(node.op):
        return et.concatenate(list(inputs), axis=node.op.axis)
    return et.concatenate(list(inputs[1:]), axis=constant_int(node, 0, "the axis"))


def _split(node, x, *rest):
    """``Split``: inputs ``(x, axis, splits)``, or ``(x, splits)`` where the op holds its axis."""
    at = 1 if _has_axis_prop(node.op) else 2
    if isinstance(node.inputs[at], Constant):
        sizes = [int(s) for s in node.inputs[at].data]
    else:
        sizes = [rest[-1][i] for i in range(node.op.len_splits)]
    axis = node.op.axis if at == 1 else constant_int(node, 1, "the axis")
    return et.split(x, sizes, axis=axis)


def _softmax_grad(node, dy, sm):
    """PyTensor's SoftmaxGrad, in its own order of operations."""
    dy_times_sm = dy * sm
    return dy_times_sm - et.sum(dy_times_sm, axis=node.op.axis, keepdims=True) * sm


# Blockwise core op -> fn(node, *inputs) that batches over leading axes as Blockwise does
BLOCKWISE = {
    ptm.Dot: lambda node, a, b: et.matmul(a, b),
    Cholesky: lambda node, a: elinalg.cholesky(a, lower=node.op.core_op.lower),
    SolveTriangular: lambda node, a, b: elinalg.solve_triangular(
        a, b, lower=node.op.core_op.lower, trans=getattr(node.op.core_op, "trans", 0),  # none in 2.38
        unit_diagonal=node.op.core_op.unit_diagonal, b_ndim=node.op.core_op.b_ndim),
    Solve: lambda node, a, b: elinalg.solve(
        a, b, assume_a=node.op.core_op.assume_a, lower=node.op.core_op.lower, b_ndim=node.op.core_op.b_ndim),
    CholeskySolve: lambda node, c, b: elinalg.cho_solve((c, node.op.core_op.lower), b),
    MatrixInverse: lambda node, a: elinalg.inv(a),
    Det: lambda node, a: elinalg.det(a),
}


def _core(node, *xs):
    """A core op applied alone: its Blockwise translation, reading the op's properties."""
    return BLOCKWISE[type(node.op)](_AsBlockwise(node.op), *xs)


class _AsBlockwise:
    """A core op's node seen as a Blockwise node's (``node.op.core_op``)."""

    def __init__(self, core_op):
        self.op = self
        self.core_op = core_op


# fmt: off
# PyTensor op class -> fn(node, *eqgraph inputs)
OPS = {
    # elementwise, reductions
    Elemwise:                  _elemwise,
    CAReduce:                  _careduce,
    ptm.Argmax:                lambda node, x: et.argmax(x, axis=node.op.axis),
    DimShuffle:                _dimshuffle,
    special.Softmax:           lambda node, x: et.softmax(x, axis=node.op.axis),
    special.LogSoftmax:        lambda node, x: et.log_softmax(x, axis=node.op.axis),
    getattr(special, "SoftmaxGrad", None): _softmax_grad,  # PyTensor 2.38; 3.0 has none
    pte.CumOp:                 lambda node, x: CUMULATIVE[node.op.mode](x, axis=node.op.axis),
    pte.Repeat:                lambda node, x, repeats: et.repeat(x, repeats, axis=node.op.axis),
    SortOp:                    _sort,
    ArgSortOp:                 _sort,
    # indexing
    ptsub.Subtensor:           _subtensor,
    ptsub.IncSubtensor:        _inc_subtensor,
    # PyTensor 3.3 has no AdvancedSubtensor1 forms: AdvancedSubtensor covers them
    getattr(ptsub, "AdvancedSubtensor1", None): lambda node, x, i: x[i],
    getattr(ptsub, "AdvancedIncSubtensor1", None): lambda node, x, y, i: _write(node, x[i], y),
    ptsub.AdvancedSubtensor:   _subtensor,
    ptsub.AdvancedIncSubtensor: _advanced_inc_subtensor,
    MakeSlice:                 lambda node, *parts: slice(*parts),
    # shapes
    Shape:                     lambda node, x: et.shape(x),
    Shape_i:                   lambda node, x: et.shape(x)[node.op.i],
    SpecifyShape:              _specify_shape,
    Reshape:                   lambda node, x, shape: et.reshape(x, et.cast(shape, "int64"), node.op.ndim),
    # building tensors
    ptb.Alloc:                 lambda node, value, *shape: et.alloc(value, *shape),
    ptb.AllocEmpty:            lambda node, *shape: et.zeros(shape, dtype=node.op.dtype),
    ptb.MakeVector:            lambda node, *xs: et.make_vector(*xs, dtype=node.op.dtype),
    ptb.Join:                  _join,
    ptb.Split:                 _split,
    ptb.ScalarFromTensor:      lambda node, x: x,
    ptb.TensorFromScalar:      lambda node, x: x,
    ptb.ARange:                lambda node, *bounds: et.arange(*bounds, dtype=node.op.dtype),
    ptb.Eye:                   lambda node, n, m, k: et.eye(n, m, constant_int(node, 2, "k"), node.op.dtype),
    ptb.ExtractDiag:           lambda node, x: et.diagonal(x, node.op.offset, node.op.axis1, node.op.axis2),
    # linear algebra (a core op alone, or a Blockwise of one)
    ptm.Dot:                   lambda node, a, b: et.dot(a, b),
    Cholesky:          _core,
    SolveTriangular:   _core,
    Solve:             _core,
    MatrixInverse:     _core,
    Det:               _core,
    # checks (see the module docstring)
    CheckAndRaise:             _check,
    # identities PyTensor's function machinery puts in graphs
    DeepCopyOp:                lambda node, x: x,
    getattr(compile_ops, "OutputGuard", None): lambda node, x: x,  # PyTensor 2.38; 3.0 has none
    ViewOp:                    lambda node, x: x,
}
# fmt: on
OPS.pop(None, None)  # the classes this PyTensor version lacks
