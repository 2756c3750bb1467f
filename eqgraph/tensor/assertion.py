"""Run-time checks: ``CheckAndRaise(exc_type, msg)(value, *conditions)`` and ``Assert(msg)``.

The output is ``value``; when a condition is false (``not all(condition)``, like PyTensor's
``CheckAndRaise``) the node raises ``exc_type(msg)``, which the linker names with the node
(``eqgraph/exec/node_errors.py``). The output is a view of ``value`` (``view_map``), as
``SpecifyShape``'s is: the linker copies it where an output would otherwise alias an input.

In the e-graph the check is a term like any other, ``(CheckAndRaise_<n> value cond... exc msg)``
with its exception and message as props, so two checks with different messages are different
terms. Only rulesets/assertions.egg removes one, where every condition is proven true. Its shape
is read off its output (no ``infer_shape``, and its own shape-root in types.egg), so a graph that
reads only the shape of a checked value still runs the check; only a fully static shape, a
constant, is known without it.
"""

from __future__ import annotations

import builtins
import importlib

import numpy as np

from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.terms.basic import Apply
from eqgraph.terms.op import Op
from eqgraph.xp import _is_dask_array, array_namespace, is_cupy_namespace

#: exception name -> class, for the classes checks were made with: the e-graph keeps a check's
#: exception as its name (a prop is a primitive value), and extraction makes the op again from it
_EXCEPTIONS: dict[str, type] = {}


def _exception_name(cls: type) -> str:
    """``cls``'s name, registered: its dotted path, made unique where another class has it (two
    classes defined in a function, say), so that checks raising either are different ops."""
    name = cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    if _EXCEPTIONS.setdefault(name, cls) is not cls:
        name = f"{name}@{id(cls):x}"
        _EXCEPTIONS[name] = cls
    return name


def _exception_class(exc_type) -> type:
    """``exc_type`` itself, or the class a name given by ``_exception_name`` stands for."""
    if isinstance(exc_type, type) and issubclass(exc_type, BaseException):
        return exc_type
    if not isinstance(exc_type, str):
        raise TypeError(f"CheckAndRaise: exc_type must be an exception class, got {exc_type!r}")
    if exc_type in _EXCEPTIONS:
        return _EXCEPTIONS[exc_type]
    module, _, name = exc_type.rpartition(".")
    found = getattr(importlib.import_module(module) if module else builtins, name, None)
    if not (isinstance(found, type) and issubclass(found, BaseException)):
        raise TypeError(f"CheckAndRaise: {exc_type!r} names no exception class")
    return found


class CheckAndRaise(Op):
    """``value``, after checking that every condition holds; raises ``exc_type(msg)`` if one does not.

    exc_type : an exception class (or its name, as the e-graph keeps it)
    msg : the message of the raised exception
    """

    __props__ = ("exc_name", "msg")
    view_map = {0: [0]}

    def __init__(self, exc_type, msg: str = ""):
        self.exc_type = _exception_class(exc_type)
        self.exc_name = _exception_name(self.exc_type)
        if not isinstance(msg, str):
            raise TypeError(f"CheckAndRaise: msg must be a str, got {msg!r}")
        self.msg = msg

    def __str__(self):
        return f"CheckAndRaise{{{self.exc_type.__name__}, {self.msg!r}}}"

    def make_node(self, value, *conditions):
        if not conditions:
            raise TypeError(f"{self} needs at least one condition after the value")
        value = as_tensor_variable(value)
        conditions = [as_tensor_variable(c) for c in conditions]
        return Apply(self, [value, *conditions], [value.type()])

    def perform(self, node, inputs, output_storage):
        value, *conditions = inputs
        if any(_is_dask_array(v) for v in inputs):
            output_storage[0][0] = self._checked_when_computed(value, conditions)
            return
        for c in conditions:
            if not _holds(c):
                raise self.exc_type(self.msg)
        output_storage[0][0] = value

    def _checked_when_computed(self, value, conditions):
        """A Dask ``value`` whose blocks, when computed, first check the conditions: a Dask
        program builds its task graph without computing, so the check runs with the result."""
        import dask.array as da

        ok = da.stack([da.all(da.asarray(c)) for c in conditions]).all()
        value = da.asarray(value)
        return da.map_blocks(_checked_block, value, ok, self.exc_type, self.msg, dtype=value.dtype,
                             meta=np.empty((0,) * value.ndim, dtype=value.dtype))

    def infer_shape(self, fgraph, node, shapes):
        # the value's shape, read without the check, would let a graph that reads only the
        # shape skip it (egraph/shapes.py answers Shape(v) from this); a static shape is known anyway
        raise NotImplementedError(f"{self}: its shape is read off its output, so that the check runs")

    def connection_pattern(self, node):
        return [[True]] + [[False]] * (len(node.inputs) - 1)  # the conditions change no value

    def flops(self, inputs, outputs):
        return 0


def _holds(condition) -> bool:
    """Whether every element of ``condition`` is true, read on the host (a CuPy array's one
    bool is copied back)."""
    xp = array_namespace(condition)
    if is_cupy_namespace(xp):
        return bool(xp.all(condition).get())
    return bool(np.all(condition))


def _checked_block(block, ok, exc_type, msg):
    if not bool(ok):
        raise exc_type(msg)
    return block


def Assert(msg: str = "eqgraph Assert failed!") -> CheckAndRaise:  # noqa: N802  (PyTensor's name)
    """``CheckAndRaise(AssertionError, msg)``: PyTensor's ``Assert``."""
    return CheckAndRaise(AssertionError, msg)


def assert_op(value, *conditions, msg: str = "eqgraph Assert failed!"):
    """``value``, checked at run time: raises ``AssertionError(msg)`` where a condition is false."""
    return Assert(msg)(value, *conditions)


def check_and_raise(value, *conditions, exc_type=ValueError, msg: str = ""):
    """``value``, checked at run time: raises ``exc_type(msg)`` where a condition is false."""
    return CheckAndRaise(exc_type, msg)(value, *conditions)
