"""Shared variables: graph inputs whose value lives between calls (``eqgraph.shared``)."""

from __future__ import annotations

import copy

import numpy as np

from eqgraph.tensor.type import TensorType
from eqgraph.tensor.var import TensorVariable
from eqgraph.terms.basic import Variable
from eqgraph.xp import to_numpy


class SharedVariable(Variable):
    """A variable with a value: every compiled function that uses it reads ``container[0]``.

    Functions compile the container in as the variable's storage cell, so a
    new value (``set_value`` or an update) is seen by every function at once.
    """

    __slots__ = ("container",)

    def __init__(self, type, value, name=None, strict=False, allow_downcast=None):
        super().__init__(type, None, None, name)
        self.container = [type.filter(value, strict=strict, allow_downcast=allow_downcast)]

    def get_value(self, borrow: bool = False):
        value = self.container[0]
        if borrow:
            return value
        return to_numpy(value).copy() if hasattr(value, "shape") else copy.deepcopy(value)

    def set_value(self, value, borrow: bool = False):
        value = self.type.filter(value)
        if not borrow and value is not None and hasattr(value, "copy"):
            value = value.copy()
        self.container[0] = value

    def clone(self, name=None):
        cp = type(self)(self.type, self.container[0], self.name if name is None else name)
        cp.container = self.container  # a clone shares the value
        return cp


class TensorSharedVariable(TensorVariable, SharedVariable):
    __slots__ = ()


def shared(value, name=None, borrow: bool = False, shape=None, strict: bool = False,
           allow_downcast=None) -> SharedVariable:
    """A shared variable holding ``value`` (copied unless ``borrow``).

    Its static shape is unknown on every axis unless ``shape`` says otherwise,
    so the value may later change shape.
    """
    if isinstance(value, Variable):
        raise TypeError(f"shared() takes a value, not the symbolic variable {value}")
    arr = value if hasattr(value, "__array_namespace__") and not isinstance(value, np.generic) else np.asarray(value)
    if isinstance(arr, np.ndarray) and arr.dtype.kind in "OUSV":
        raise TypeError(f"shared() cannot hold {type(value).__name__} values")
    if not borrow and hasattr(arr, "copy"):
        arr = arr.copy()
    ttype = TensorType(np.dtype(str(arr.dtype)), shape if shape is not None else (None,) * arr.ndim)
    return TensorSharedVariable(ttype, arr, name=name, strict=strict, allow_downcast=allow_downcast)
