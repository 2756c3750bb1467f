"""`Type`: a set of constraints on runtime values (Aesara's ``Type`` contract).

A Type makes Variables (``__call__``/``make_variable``) and filters values
(``filter``).  The comparison methods (``in_same_class``, ``is_super``) and the
variable conversions (``filter_variable``, ``convert_variable``) are what graph
replacement uses to *narrow* a variable's type without losing compatibility.
"""

from __future__ import annotations

import copy
import inspect
from typing import Any

from eqgraph.terms.basic import Constant, Variable


class Type:
    """Base class of all types.  Subclasses must define :meth:`filter`."""

    #: the Variable subclass that :meth:`make_variable` instantiates
    variable_type: type | None = None
    #: the Constant subclass that :meth:`make_constant` instantiates
    constant_type: type | None = None

    # -- values -----------------------------------------------------------
    def filter(self, data, strict: bool = False, allow_downcast=None):
        """Return ``data`` converted to a valid value of this type, or raise TypeError."""
        raise NotImplementedError(f"{type(self).__name__} does not define filter")

    def filter_inplace(self, value, storage, strict: bool = False, allow_downcast=None):
        """Like :meth:`filter`, reusing ``storage``; optional (legacy GPU hook)."""
        raise NotImplementedError()

    def is_valid_value(self, data) -> bool:
        """True iff ``filter(data, strict=True)`` accepts ``data``."""
        try:
            self.filter(data, strict=True)
            return True
        except (TypeError, ValueError):
            return False

    def values_eq(self, a, b) -> bool:
        return a == b

    def values_eq_approx(self, a, b) -> bool:
        return self.values_eq(a, b)

    @staticmethod
    def may_share_memory(a, b) -> bool:
        return False

    def get_shape_info(self, obj):
        """What :meth:`get_size` needs to compute the memory size of ``obj``."""
        return obj

    def get_size(self, shape_info) -> int:
        """Bytes taken by a value described by ``shape_info``; unknown by default."""
        raise NotImplementedError(f"{type(self).__name__} does not define get_size")

    # -- variables --------------------------------------------------------
    def make_variable(self, name: str | None = None):
        return (self.variable_type or Variable)(self, None, None, name)

    def make_constant(self, value, name: str | None = None):
        return (self.constant_type or Constant)(self, value, name)

    def __call__(self, name: str | None = None):
        return self.make_variable(name)

    def clone(self, *args, **kwargs) -> "Type":
        """A copy of this type with the given constructor arguments replaced (Aesara's ``clone``).

        Arguments not given keep this type's values: each parameter of ``__init__`` is read
        back from the attribute of the same name, so ``NullType("why").clone()`` keeps its
        ``why_null`` and a subclass with a required argument clones without repeating it.
        With no arguments the copy is a shallow ``copy.copy``.
        """
        if not args and not kwargs:
            return copy.copy(self)
        names = [p.name for p in inspect.signature(type(self).__init__).parameters.values()
                 if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)][1:]  # after self
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__}.clone() takes at most {len(names)} positional "
                            f"arguments ({', '.join(names)}), got {len(args)}")
        values = {n: getattr(self, n) for n in names if hasattr(self, n)}
        values.update(zip(names, args))
        values.update(kwargs)
        return type(self)(**values)

    # -- the type relation --------------------------------------------------
    def in_same_class(self, otype: "Type") -> bool | None:
        """Default: every class of types has exactly one member (``==``)."""
        return self == otype

    def is_super(self, otype: "Type") -> bool | None:
        """``self`` >= ``otype``: ``self`` may be replaced by a variable of ``otype``."""
        if self.in_same_class(otype):
            return True
        return None

    def convert_variable(self, var):
        """Return a variable of a type compatible with ``self`` built from ``var``, or None."""
        if self.is_super(var.type):
            return var
        return None

    def filter_variable(self, other, allow_convert: bool = True):
        """Return ``other`` (or a narrowed version of it) as a Variable usable where ``self`` is."""
        if not isinstance(other, Variable):
            return self.make_constant(self.filter(other))
        if other.type == self:
            return other
        if allow_convert:
            converted = self.convert_variable(other)
            if converted is not None:
                return converted
        raise TypeError(
            f"Cannot convert {other} of type {other.type} to type {self}: the types are incompatible"
        )

    def __repr__(self) -> str:
        return type(self).__name__


def describe_value(value: Any) -> str:
    """A short description of a runtime value for error messages."""
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        return f"{type(value).__name__} of dtype {dtype} and shape {tuple(shape)}"
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}"
