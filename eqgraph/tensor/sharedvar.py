"""Shared variables: graph inputs whose value lives between calls (``eqgraph.shared``).

A graph object like any variable, so it lives with the tensor types; compiled functions
read and update its ``container``.
"""

from __future__ import annotations

import copy
import threading

import numpy as np

from eqgraph.tensor.rng_type import copy_generator, random_generator_type
from eqgraph.tensor.type import TensorType
from eqgraph.tensor.variable import TensorVariable
from eqgraph.terms.basic import Variable
from eqgraph.xp import copy_array, is_array, to_numpy


class Container(list):
    """A shared variable's value, ``container[0]``, and the lock that keeps it consistent.

    A compiled function reads ``container[0]`` at the start of each call; one that
    updates shared variables holds their locks for the whole call, so concurrent
    calls apply their updates one after the other, never interleaved.
    """

    __slots__ = ("lock",)

    def __init__(self, value):
        super().__init__([value])
        self.lock = threading.RLock()  # re-entrant: an op may call another compiled function

    def __reduce__(self):  # the value pickles; a lock cannot, and a new one is made on loading
        return (Container, (self[0],))

    @property
    def storage(self) -> list:
        """PyTensor's ``container.storage``: the one-item list holding the value (this container itself)."""
        return self


class SharedVariable(Variable):
    """A variable with a value: every compiled function that uses it reads ``container[0]``,
    so a new value (``set_value`` or an update) is seen by every function at once.

    The value's memory is never shared with the caller's arrays or a function's outputs
    unless asked for with ``borrow=True`` (as in Theano/PyTensor).

    ``default_update``: an expression of the variable's new value that ``eqgraph.function``
    applies after each call unless ``updates`` says otherwise (a random draw sets it on its
    generator).
    """

    __slots__ = ("container", "default_update", "allow_downcast")

    def __init__(self, type, value, name=None, strict=False, allow_downcast=None):
        super().__init__(type, None, None, name)
        self.container = Container(type.filter(value, strict=strict, allow_downcast=allow_downcast))
        self.default_update = None
        self.allow_downcast = allow_downcast  # as PyTensor's: set_value converts under it too

    def get_value(self, borrow: bool = False, return_internal_type: bool = False):
        """A copy of the value; with ``borrow=True`` the value itself (a device array comes
        back to the host unless ``return_internal_type=True``)."""
        value = self.container[0]
        if borrow and (return_internal_type or isinstance(value, np.ndarray) or not hasattr(value, "shape")):
            return value
        if hasattr(value, "shape"):
            host = to_numpy(value)
            return host if borrow else host.copy()
        return copy.deepcopy(value)

    def set_value(self, value, borrow: bool = False):
        """Store ``value`` (converted to the variable's type); a copy of it unless ``borrow=True``."""
        new = self.type.filter(value, False, self.allow_downcast)
        if not borrow and _is_callers(new, value):
            new = copy_array(new)
        with self.container.lock:  # not in the middle of a call that updates this variable
            self.container[0] = new

    def clone(self, name=None):
        cp = type(self)(self.type, self.container[0], self.name if name is None else name)
        cp.container = self.container  # a clone shares the value
        cp.default_update, cp.allow_downcast = self.default_update, self.allow_downcast
        return cp


class TensorSharedVariable(TensorVariable, SharedVariable):
    __slots__ = ()


def shared(value, name=None, borrow: bool = False, shape=None, strict: bool = False,
           allow_downcast=None) -> SharedVariable:
    """A shared variable holding ``value`` (copied unless ``borrow``): an array, or a NumPy
    ``Generator`` for random draws (``et.random.normal(..., rng=...)``).

    Its static shape is unknown on every axis unless ``shape`` says otherwise,
    so the value may later change shape.
    """
    if isinstance(value, Variable):
        raise TypeError(f"shared() takes a value, not the symbolic variable {value}")
    if isinstance(value, np.random.Generator):  # a random state, for et.random's draws (rng=...)
        return SharedVariable(random_generator_type, value if borrow else copy_generator(value), name=name)
    arr = value if is_array(value) else np.asarray(value)
    if isinstance(arr, np.ndarray) and arr.dtype.kind in "OUSV":
        raise TypeError(f"shared() cannot hold {type(value).__name__} values")
    if not borrow and _is_callers(arr, value):
        arr = copy_array(arr)
    ttype = TensorType(np.dtype(str(arr.dtype)), shape if shape is not None else (None,) * arr.ndim)
    return TensorSharedVariable(ttype, arr, name=name, strict=strict, allow_downcast=allow_downcast)


def _is_callers(value, given) -> bool:
    """Whether ``value`` (``given`` after conversion) may still be the caller's memory."""
    if value is given:
        return True
    if isinstance(value, np.ndarray) and isinstance(given, np.ndarray):
        return np.may_share_memory(value, given)
    return not isinstance(given, (list, tuple, int, float, complex, bool, np.generic))
