"""PyTensor's plural constructors: ``x, y = et.dvectors("x", "y")``, ``a, b, c = et.matrices(3)``.

Each takes names (several, one iterable of them, or one string whose letters are the names:
``dscalars("xyz")``) or a count.  As in PyTensor, a single one-letter name gives the variable
itself rather than a list of one, and a count always gives a list.  The unprefixed names
(``scalars``, ``vectors``, ...) read ``config.floatX`` when called.
"""

from __future__ import annotations

from eqgraph.settings import config
from eqgraph.tensor.type import TensorType

_KINDS = {"scalars": (), "vectors": (None,), "matrices": (None, None), "rows": (1, None),
          "cols": (None, 1), **{f"tensor{n}s": (None,) * n for n in range(3, 8)}}
_PREFIXES = {"": None, "f": "float32", "d": "float64", "i": "int32", "l": "int64"}


def _plural(dtype, shape, name):
    def make(*names):
        if names and isinstance(names[0], int) and not isinstance(names[0], bool):
            if len(names) != 1 or names[0] < 0:
                raise TypeError(f"{name}: give names, or one non-negative count, not {names!r}")
            return [_one(None) for _ in range(names[0])]
        if len(names) == 1:
            names = names[0]
        if isinstance(names, str) and len(names) == 1:
            return _one(names)
        if not all(isinstance(n, str) for n in names):
            raise TypeError(f"{name}: names must be strings, got {names!r}")
        return [_one(n) for n in names]

    def _one(variable_name):
        return TensorType(dtype or config.floatX, shape)(variable_name)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = (f"Several symbolic variables of dtype {dtype or 'config.floatX'} and shape {shape}: "
                    f"``{name}('x', 'y')``, ``{name}(3)``.")
    return make


PLURALS = {prefix + kind: _plural(dtype, shape, prefix + kind)
           for kind, shape in _KINDS.items() for prefix, dtype in _PREFIXES.items()}
globals().update(PLURALS)

__all__ = sorted(PLURALS)
