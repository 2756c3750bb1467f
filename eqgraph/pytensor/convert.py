"""PyTensor graph -> eqgraph graph: the walk over PyTensor's nodes in topological order.

What each PyTensor op becomes is ``ops.py``'s table (``nested.py``'s for ops holding an op or a
graph, which are handed this walk to translate what they hold); this module only walks,
maps variables (inputs, constants, shared variables) and checks that every translated output
has the ndim and dtype PyTensor gave it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from pytensor.compile.sharedvalue import SharedVariable as PtShared
from pytensor.graph.basic import Constant as PtConstant
from pytensor.graph.basic import Variable as PtVariable
from pytensor.graph.fg import FunctionGraph as PtFunctionGraph
from pytensor.graph.traversal import ancestors, io_toposort
from pytensor.graph.type import HasShape
from pytensor.scalar import ScalarType
from pytensor.tensor.type import TensorType as PtTensorType
from pytensor.tensor.type_other import NoneTypeT, SliceType

import eqgraph.tensor as et
from eqgraph.pytensor.nested import Walk, nested_translation_of
from eqgraph.pytensor.ops import UnsupportedOp, translation_of
from eqgraph.tensor.sharedvar import shared


class UnsupportedType(TypeError):
    """A PyTensor variable whose type has no eqgraph counterpart (a random generator, say)."""


@dataclass
class Converted:
    """An eqgraph graph equivalent to a PyTensor one.

    ``inputs``: eqgraph variables for PyTensor's inputs, in order; ``outputs``: the outputs rebuilt
    with eqgraph ops; ``shared``: PyTensor shared variable -> the eqgraph shared variable made from
    its value when converting (``set_value`` on the PyTensor one does not reach it afterwards);
    ``memo``: every PyTensor variable converted -> its eqgraph counterpart; ``pytensor_outputs``:
    the PyTensor outputs converted.
    """

    inputs: list
    outputs: list
    shared: dict = field(default_factory=dict)
    memo: dict = field(default_factory=dict)
    pytensor_outputs: list = field(default_factory=list)


def from_pytensor(outputs_or_fgraph, inputs=None, *, labels=None, shared_as_inputs=False) -> Converted:
    """The eqgraph graph of PyTensor ``outputs`` (a variable, a list of them, or a FunctionGraph).

    ``inputs``: PyTensor's input variables in the order wanted (default: the fgraph's inputs, or the
    outputs' non-constant roots in the order PyTensor finds them). ``labels``: ``{PyTensor variable:
    name}``; an op with no translation is reported with the labels of the variables whose graphs use
    it (PyMC: a model variable's log-density term). ``shared_as_inputs``: shared variables become
    plain inputs (appended after ``inputs`` unless listed there) instead of eqgraph shared variables.
    """
    if isinstance(outputs_or_fgraph, PtFunctionGraph):
        outputs = list(outputs_or_fgraph.outputs)
        inputs = list(outputs_or_fgraph.inputs) if inputs is None else list(inputs)
    else:
        single = isinstance(outputs_or_fgraph, PtVariable)
        outputs = [outputs_or_fgraph] if single else list(outputs_or_fgraph)
        if inputs is None:
            inputs = [v for v in ancestors(outputs)
                      if v.owner is None and not isinstance(v, (PtConstant, PtShared))]
    converted = Converted(inputs=[], outputs=[])
    memo = converted.memo
    for v in inputs:
        memo[v] = _input_variable(v)
        converted.inputs.append(memo[v])
    for v in ancestors(outputs, blockers=inputs):
        if v.owner is None and v not in memo:
            memo[v] = _root(v, converted, shared_as_inputs)
    for node in io_toposort(inputs, outputs):
        _convert_node(node, memo, labels)
    converted.outputs = [memo[o] for o in outputs]
    converted.pytensor_outputs = outputs
    return converted


def convert_graph(inner_inputs, inner_outputs, eq_inputs) -> list:
    """An inner graph (``OpFromGraph``'s) rebuilt on eqgraph variables ``eq_inputs``."""
    memo = dict(zip(inner_inputs, eq_inputs))
    for v in ancestors(inner_outputs, blockers=inner_inputs):
        if v.owner is None and v not in memo:
            if not isinstance(v, PtConstant):
                raise ValueError(f"from_pytensor: an inner graph reads {v}, which is not one of its inputs")
            memo[v] = _constant(v)
    for node in io_toposort(inner_inputs, inner_outputs):
        _convert_node(node, memo, None)
    return [memo[o] for o in inner_outputs]


def _input_variable(v):
    if isinstance(v.type, (NoneTypeT, SliceType)):
        raise UnsupportedType(f"from_pytensor: the input {v} of type {v.type} has no eqgraph counterpart")
    return _eq_type(v)(v.name)


def _eq_type(v):
    """The eqgraph TensorType of PyTensor variable ``v`` (a scalar-typed one is a 0-d tensor)."""
    if isinstance(v.type, PtTensorType):
        return et.TensorType(v.type.dtype, v.type.shape)
    if isinstance(v.type, ScalarType):
        return et.TensorType(v.type.dtype, ())
    raise UnsupportedType(f"from_pytensor: {v} has type {v.type}, which has no eqgraph counterpart "
                    "(tensors and scalars convert)")


def _root(v, converted: Converted, shared_as_inputs: bool):
    """A graph root that is not a listed input: a constant, a shared variable, or an error."""
    if isinstance(v, PtConstant):
        return _constant(v)
    if isinstance(v, PtShared):
        if shared_as_inputs:
            var = _input_variable(v)
            converted.inputs.append(var)
            return var
        var = shared(np.array(v.get_value(borrow=True), copy=True), name=v.name)
        converted.shared[v] = var
        return var
    raise ValueError(f"from_pytensor: the graph reads {v} (type {v.type}), which is neither in `inputs`, "
                     "a constant nor a shared variable; list it in `inputs`")


def _constant(v):
    if isinstance(v.type, NoneTypeT):
        return None
    if isinstance(v.type, SliceType):
        return v.data  # a Python slice of ints and Nones
    data = np.asarray(v.data)
    return et.constant(data, dtype=data.dtype.name, name=v.name)


def _convert_node(node, memo, labels):
    translate = _translation(node.op)
    try:
        if translate is None:
            raise UnsupportedOp(node.op, node)
        results = translate(node, *[memo[i] for i in node.inputs])
    except UnsupportedOp as e:
        raise UnsupportedOp(e.op, e.node, _labels_using(node, labels), e.why) from None
    results = list(results) if isinstance(results, (list, tuple)) else [results]
    if len(results) != len(node.outputs):
        raise AssertionError(f"the translation of {node.op} gave {len(results)} outputs, "
                             f"PyTensor's node has {len(node.outputs)}")
    for pt_out, eq_out in zip(node.outputs, results):
        memo[pt_out] = _as_typed(eq_out, pt_out, node)


def _translation(op):
    """``fn(node, *eqgraph inputs)`` for ``op``, or None: a nested op's entry is given this walk."""
    nested = nested_translation_of(op)
    if nested is not None:
        return lambda node, *xs: nested(node, xs, Walk(graph=convert_graph, translation=_translation))
    return translation_of(op)


def _as_typed(eq_out, pt_out, node):
    """``eq_out`` checked against PyTensor's output type: same ndim, and PyTensor's dtype (a cast
    where eqgraph's dtype rules, NumPy's, give another)."""
    if not isinstance(pt_out.type, HasShape) and not isinstance(pt_out.type, ScalarType):
        return eq_out  # a slice or None: consumed by indexing translations
    eq_out = et.as_tensor_variable(eq_out)
    ndim = 0 if isinstance(pt_out.type, ScalarType) else pt_out.type.ndim
    if eq_out.ndim != ndim:
        raise AssertionError(f"the translation of {node.op} (inputs {[i.type for i in node.inputs]}) gave "
                             f"{eq_out} with {eq_out.ndim} dimensions; PyTensor's output has {ndim}")
    if eq_out.dtype != pt_out.type.dtype:
        eq_out = et.cast(eq_out, pt_out.type.dtype)
    if ndim and any(p == 1 and e is None for p, e in zip(pt_out.type.shape, eq_out.type.shape)):
        # the axes of size 1 PyTensor knows and eqgraph's shape rules did not find: they decide
        # broadcasting, and later ops (a DimShuffle dropping such an axis) need them. Other known
        # sizes change no result, and a SpecifyShape node would keep the graph from eqgraph's
        # whole-program Numba function
        eq_out = et.specify_shape(eq_out, [1 if p == 1 else None for p in pt_out.type.shape])
    return eq_out


def _labels_using(node, labels) -> list:
    """The labels of the labelled variables whose graphs use ``node``."""
    if not labels:
        return []
    return [name for var, name in labels.items() if node in {a.owner for a in ancestors([var])}]
