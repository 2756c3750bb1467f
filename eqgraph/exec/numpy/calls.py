"""How the generated program (``program.py``) calls common ops on NumPy, one line each.

These ops' ``perform`` is written for any array namespace (``array_namespace``, then
``xp.reshape``, ``xp.sum``, ...), which costs a few microseconds per call, most of a
call on small arrays.  On NumPy the program can write the same computation as one
expression over its locals; each entry here is the NumPy call ``perform`` makes when
``xp`` is NumPy, so the values are the same to the last bit (``tests/exec/test_program.py``
compares them with the thunk loop on random graphs):

- ``DimShuffle``: a view by indexing (``x[..., 0]`` drops a length-1 axis, ``x[:, None]``
  adds one, with an Ellipsis so that a 0-d result is a 0-d array) and ``transpose``;
- ``Reduce`` (sum, prod, max, min, all, any, mean): ``np.<name>(x, axis=..., keepdims=...)``,
  or what it calls on an ndarray (``np.add.reduce`` for sum, the sum over the count for a
  float64 mean); a float64 sum or mean of a small C-contiguous array, once hot, is a Numba
  loop adding in NumPy's order (``numba/reductions.py``), the same values;
- ``MatMul``: ``np.matmul(a, b)``;
- ``Shape``: ``np.asarray(x.shape, dtype=int64)``; ``Reshape``: ``x.reshape(shape)``;
- ``SumToShape``: ``g`` itself where the shapes agree (as ``perform`` returns it), else ``np.add.reduce``;
- ``Softmax`` (and its log) of an array of the output's dtype: ``perform``'s NumPy steps in one call
  (``softmax_numpy``), without ``array_namespace`` and the output cell (much of a small call).

An entry returns ``(expression, cast)``: ``cast`` says whether the result still needs
``as_output``'s conversion to the output's dtype (NumPy returns scalars for 0-d results).
It does not where the result has axes and every input has the output's dtype: then a
ufunc's reduce and ``matmul`` return an ndarray of that dtype (``returns_exact``).
"""

from __future__ import annotations

import math

import numpy as np

from eqgraph.exec.numba import reductions as numba_reductions
from eqgraph.exec.numba.reductions import SHORT_ROWS, SMALL, reduction_kind, softmax_kind, tiered_loop
from eqgraph.tensor.dimshuffle_op import DimShuffle
from eqgraph.tensor.math import REDUCTIONS, MatMul, Reduce, Softmax
from eqgraph.tensor.shape import Reshape, Shape, SumToShape, summed_axes
from eqgraph.xp import as_output


def _index(items) -> str:
    """An indexing expression: ``[:, None, ...]``."""
    return "[" + ", ".join(list(items) + ["..."]) + "]"


def _short_index(items) -> str:
    """``[None, :, :]`` as ``[None]``: trailing full slices are implied, and each written item
    costs NumPy's indexing time (``v[None, :, ...]`` takes markedly longer than ``v[None]``).  Only for
    results with axes: an index that leaves none needs the Ellipsis to give a 0-d array."""
    items = list(items)
    while items and items[-1] == ":":
        items.pop()
    return "[" + ", ".join(items) + "]" if items else ""


def _dimshuffle(op, node, args, bind):
    (x,) = args
    expr = x
    if op.drop:
        drop = ["0" if i in op.drop else ":" for i in range(op.input_ndim)]
        expr += _index(drop) if node.outputs[0].ndim == 0 else _short_index(drop)
    if op.permutation != tuple(sorted(op.permutation)):
        expr += ".T" if op.permutation == (1, 0) else f".transpose({op.permutation})"
    if "x" in op.new_order:
        expr += _short_index("None" if o == "x" else ":" for o in op.new_order)
    return expr, False


_NAMESPACE_REDUCTION = type(REDUCTIONS["sum"])  # perform calls xp.<name>(x, axis=, keepdims=)


#: np.sum(x, axis, keepdims) is np.add.reduce(x, axis, None, None, keepdims) on an ndarray
#: (``_wrapreduction``), so the ufunc's own reduce is called directly
UFUNC_REDUCTIONS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


def returns_exact(node) -> bool:
    """Whether a ufunc reduction or ``matmul`` of ``node``'s inputs already returns what
    ``as_output`` would make of it: an ndarray (the result has axes) of the output's dtype
    (every input has that dtype, so NumPy's type resolution picks it)."""
    out = node.outputs[0]
    return out.ndim > 0 and all(v.dtype == out.dtype for v in node.inputs)


def _reduce(op, node, args, bind):
    if type(REDUCTIONS.get(op.name)) is not _NAMESPACE_REDUCTION or not hasattr(np, op.name):
        return None  # argmax, logsumexp: perform
    (x,), axis = args, f"axis={op.axis!r}, keepdims={op.keepdims}"
    acc = op.accumulator(node.inputs[0].dtype)
    if acc is not None:  # added up in a wider dtype than the input's, then cast to the output's
        ufunc = UFUNC_REDUCTIONS.get(op.name)
        reduce = bind(f'np_{op.name}_reduce', ufunc.reduce) if ufunc else bind(f'np_{op.name}', getattr(np, op.name))
        return f"{reduce}({x}, {axis}, dtype={bind(f'np_{acc}', getattr(np, acc))})", True
    if op.name in UFUNC_REDUCTIONS:
        expr = f"{bind(f'np_{op.name}_reduce', UFUNC_REDUCTIONS[op.name].reduce)}({x}, {axis})"
    elif op.name == "mean" and node.inputs[0].dtype == "float64":
        # np.mean of float64: the sum divided by the count, an intp (``_methods._mean``);
        # an empty axis gives NaN as np.mean does (with NumPy's 0/0 warning instead of its own)
        count = " * ".join(f"{x}.shape[{a}]" for a in op.axis) or "1"
        expr = f"{bind('np_add_reduce', np.add.reduce)}({x}, {axis}) / {bind('np_intp', np.intp)}({count})"
    else:
        return f"{bind('np_' + op.name, getattr(np, op.name))}({x}, {axis})", True
    return _small_in_numba(op, node, x, expr, bind), not returns_exact(node)


def _small_in_numba(op, node, x: str, expr: str, bind) -> str:
    """``expr`` (a float64 sum or mean), or on small C-contiguous arrays a Numba loop that adds
    in NumPy's order (``numba/reductions.py``), once hot: on a few elements the loop avoids most
    of NumPy's fixed cost."""
    kind = reduction_kind(op.name, node.inputs[0].dtype, node.outputs[0].dtype, node.inputs[0].ndim,
                          op.axis, op.keepdims)
    if kind is None:
        return expr
    axis, keepdims, mean = op.axis, op.keepdims, op.name == "mean"

    def numpy_run(v):  # what ``expr`` computes, for the node's first calls
        total = np.add.reduce(v, axis=axis, keepdims=keepdims)
        return total / np.intp(math.prod(v.shape[a] for a in axis)) if mean else total

    return _once_hot(node, kind, x, mean, numpy_run, expr, bind)


def _once_hot(node, kind, x: str, flag: bool, numpy_run, expr: str, bind, test: str = "") -> str:
    """``kernel(x, flag)`` of ``numba_reductions.KERNELS[kind]`` where ``test`` holds and ``x``
    is small and C-contiguous, else ``expr``; the kernel is bound once the node is hot
    (``numpy_run``, what ``expr`` computes there, until then)."""
    name = f"numba_{kind[0].replace(' ', '_')}_{id(node):x}"
    bind(name, tiered_loop(kind, numpy_run, rebind=lambda fast: bind(name, fast), ndim=node.inputs[0].ndim))
    return (f"({name}({x}, {flag}) if {test}0 < {x}.size <= {SMALL[kind[0]]} and {x}.flags.c_contiguous "
            f"else {expr})")


def _matmul(op, node, args, bind):
    return f"{bind('np_matmul', np.matmul)}({args[0]}, {args[1]})", not returns_exact(node)


def softmax_numpy(x, axis: int, log: bool):
    """``Softmax.perform`` on NumPy, for an ``x`` of the output's dtype."""
    shifted = x - np.maximum.reduce(x, axis=axis, keepdims=True)
    if log:
        return shifted - np.log(np.add.reduce(np.exp(shifted), axis=axis, keepdims=True))
    e = np.exp(shifted)
    return e / np.add.reduce(e, axis=axis, keepdims=True)


def _softmax(op, node, args, bind):
    if node.inputs[0].dtype != node.outputs[0].dtype:
        return None  # perform casts first
    (x,), axis, log = args, op.axis, op.log
    expr = f"{bind('softmax_numpy', softmax_numpy)}({x}, {axis}, {log})"
    kind = softmax_kind(node.inputs[0].dtype, node.outputs[0].dtype, node.inputs[0].ndim, axis)
    if kind is None:
        return expr, False

    def numpy_run(v):  # what ``expr`` computes, for the node's first calls
        return softmax_numpy(v, axis, log)

    if kind == ("softmax", 2):   # larger matrices of short rows: numba_reductions.short_rows_softmax
        expr = _once_hot(node, ("short rows softmax", 2), x, log, numpy_run, expr, bind,
                         test=f"{x}.shape[1] <= {SHORT_ROWS} and ")
    return _once_hot(node, kind, x, log, numpy_run, expr, bind), False


def _reshape(op, node, args, bind):
    x, shape = args  # perform: np.reshape(x, the first ndim entries of the shape vector, as ints)
    return f"{x}.reshape({shape}.tolist()[:{op.ndim}])", False


def _shape(op, node, args, bind):
    return f"{bind('np_asarray', np.asarray)}({args[0]}.shape, dtype={bind('np_int64', np.int64)})", False


def _summed_to(g, like, out_type):
    """``SumToShape.perform`` on NumPy where it sums: ``np.sum`` of an ndarray is ``np.add.reduce``."""
    return as_output(np, np.add.reduce(g, axis=summed_axes(g.shape, like.shape), keepdims=True), out_type)


def _sum_to_shape(op, node, args, bind):
    g, like = args  # the gradient of an operand that was not broadcast: no sum, no call
    out_type = bind(f"type_{id(node):x}", node.outputs[0].type)
    general = f"{bind('summed_to', _summed_to)}({g}, {like}, {out_type})"
    return f"{g} if {g}.shape == {like}.shape else {_one_row_or_column(node, g, like, general, bind)}", False


def _one_row_or_column(node, g: str, like: str, general: str, bind) -> str:
    """``general``, or where a float64 matrix is summed to one row (or one column) of a ``like``
    whose type says so (a broadcast bias's gradient), the Numba loop of that sum once hot:
    ``np.add.reduce(g, axis, keepdims=True)`` is what ``summed_to`` computes then."""
    g_var, like_var = node.inputs
    if g_var.ndim != 2 or like_var.ndim != 2 or g_var.dtype != "float64" or node.outputs[0].dtype != "float64":
        return general
    for axis, kind in ((0, ("columns", True)), (1, ("rows", True))):
        other = 1 - axis
        if like_var.type.shape[axis] == 1 and numba_reductions.numba is not None:
            def numpy_run(v, axis=axis):
                return np.add.reduce(v, axis=(axis,), keepdims=True)

            return _once_hot(node, kind, g, False, numpy_run, general, bind,
                             test=f"{g}.shape[{other}] == {like}.shape[{other}] and ")
    return general


#: op class -> entry (op, node, argument expressions, bind(name, value) -> name) -> (expression, cast) or None
NUMPY_CALLS = {DimShuffle: _dimshuffle, Reduce: _reduce, MatMul: _matmul, Shape: _shape, Reshape: _reshape,
               SumToShape: _sum_to_shape, Softmax: _softmax}


def numpy_call(op, node, args, bind):
    """``(expression, cast)`` computing ``node`` on NumPy from ``args``, or None (then ``perform``)."""
    entry = NUMPY_CALLS.get(type(op))
    return entry(op, node, args, bind) if entry is not None else None


__all__ = ["NUMPY_CALLS", "numpy_call", "returns_exact", "softmax_numpy"]
