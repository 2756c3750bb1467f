"""PyTensor's ``wrap_py`` (and its deprecated name ``as_op``): an Op made from a Python function.

    @eg.wrap_py([et.dmatrix, et.dvector], et.dvector)
    def cumprod_plus(x, y):
        return np.cumprod(x) + y

    cumprod_plus(x, y)      # a node whose perform calls the function on NumPy arrays

The function takes one NumPy array per input type and returns one array per output type (a
single array where there is one output type). The Op has no gradient and no Numba form: the
program calls it in Python.
"""

from __future__ import annotations

import sys
import warnings

from eqgraph.terms.basic import Apply, Variable
from eqgraph.terms.op import Op
from eqgraph.terms.type import Type, describe_value
from eqgraph.tensor.basic import as_tensor_variable


class FromFunctionOp(Op):
    """``fn`` as an Op from ``itypes`` to ``otypes``, with ``infer_shape(fgraph, node, shapes)`` if given."""

    __props__ = ("fn", "itypes", "otypes", "infer_shape_fn")

    def __init__(self, fn, itypes, otypes, infer_shape_fn=None):
        self.fn, self.itypes, self.otypes, self.infer_shape_fn = fn, tuple(itypes), tuple(otypes), infer_shape_fn
        self.__doc__ = fn.__doc__

    def make_node(self, *inputs):
        if len(inputs) != len(self.itypes):
            raise TypeError(f"{self}: expected {len(self.itypes)} inputs of types {list(self.itypes)}, "
                            f"got {len(inputs)}")
        inputs = [itype.filter_variable(as_tensor_variable(v) if not isinstance(v, Variable) else v)
                  for itype, v in zip(self.itypes, inputs)]
        return Apply(self, inputs, [otype() for otype in self.otypes])

    def perform(self, node, inputs, output_storage):
        results = self.fn(*inputs)
        if len(self.otypes) == 1:
            results = [results]
        if len(results) != len(self.otypes):
            raise ValueError(f"{self}: the function returned {len(results)} values for {len(self.otypes)} outputs")
        for storage, otype, value in zip(output_storage, self.otypes, results):
            storage[0] = otype.filter(value, False, True)

    def infer_shape(self, fgraph, node, input_shapes):
        if self.infer_shape_fn is None:
            return super().infer_shape(fgraph, node, input_shapes)
        return self.infer_shape_fn(fgraph, node, input_shapes)

    def __str__(self):
        return f"FromFunctionOp{{{self.fn.__name__}}}"

    def __reduce__(self):
        # the function's module name finds this Op (the decorator replaced the function by it)
        module, name = self.fn.__module__, self.fn.__name__
        if getattr(sys.modules.get(module), name, None) is not self:
            raise TypeError(f"{self} pickles as {module}.{name}, which is not this Op; define it at module level "
                            "with @wrap_py")
        return _load, (module, name)


def _load(module: str, name: str) -> FromFunctionOp:
    __import__(module)
    return getattr(sys.modules[module], name)


def wrap_py(itypes, otypes, infer_shape=None):
    """A decorator making a Python function an Op (``FromFunctionOp``): ``itypes`` and ``otypes``
    are a Type or a list of Types (``et.dmatrix``, ``TensorType("float64", (None,))``)."""
    itypes, otypes = _types(itypes, "itypes"), _types(otypes, "otypes")
    if infer_shape is not None and not callable(infer_shape):
        raise TypeError(f"wrap_py: infer_shape must be a function (fgraph, node, shapes), not "
                        f"{describe_value(infer_shape)}")

    def decorator(fn):
        return FromFunctionOp(fn, itypes, otypes, infer_shape)

    return decorator


def as_op(itypes, otypes, infer_shape=None):
    """PyTensor's deprecated name of ``wrap_py``."""
    warnings.warn("as_op is deprecated; use wrap_py", FutureWarning, stacklevel=2)
    return wrap_py(itypes, otypes, infer_shape)


def _types(types, argument: str) -> tuple:
    types = types if isinstance(types, (list, tuple)) else [types]
    for t in types:
        if not isinstance(t, Type):
            raise TypeError(f"wrap_py: {argument} must be Types (et.dmatrix, TensorType(...)), not {describe_value(t)}")
    return tuple(types)
