"""What a gradient can be besides a tensor: disconnected, or null (undefined).

Graph objects, below every op: an op's ``grad`` (a tensor op's, a user Op's, scan's) returns
them for an input, and the gradient driver reads them.
"""

from __future__ import annotations

from eqgraph.terms.basic import Variable
from eqgraph.terms.type import Type


class DisconnectedType(Type):
    """The type of a gradient that does not exist: the cost does not depend on the variable."""

    def filter(self, data, strict=False, allow_downcast=None):
        raise TypeError("a DisconnectedType variable has no value: the gradient is disconnected")

    def __eq__(self, other):
        return type(other) is type(self)

    def __hash__(self):
        return hash(type(self))

    def __str__(self):
        return "DisconnectedType"


class NullType(Type):
    """The type of an undefined gradient; ``why_null`` says why."""

    def __init__(self, why_null: str = "(no explanation given)"):
        self.why_null = why_null

    def filter(self, data, strict=False, allow_downcast=None):
        raise TypeError(f"a NullType variable has no value: {self.why_null}")

    def __eq__(self, other):
        return type(other) is type(self) and other.why_null == self.why_null

    def __hash__(self):
        return hash((type(self), self.why_null))

    def __str__(self):
        return f"NullType({self.why_null})"


def disconnected() -> Variable:
    return DisconnectedType()()


def _null(op, x_pos, x, comment, kind) -> Variable:
    return NullType(f"{kind} the gradient of {op} with respect to input {x_pos} ({x}): {comment}")()


def grad_undefined(op, x_pos, x, comment=""):
    """A NullType gradient: mathematically undefined (e.g. an argmax's axis)."""
    return _null(op, x_pos, x, comment, "undefined:")


def grad_not_implemented(op, x_pos, x, comment=""):
    """A NullType gradient: defined but not implemented."""
    return _null(op, x_pos, x, comment, "not implemented:")
