"""``Variable.eval``: compile once per (variable, inputs), then call.

``Variable`` lives in the bottom layer and the compiler at the top, so ``Variable.eval``
does not import the compiler: this module plugs ``evaluate`` in (``Variable.evaluator``)
when ``eqgraph`` is imported, which happens before any graph can be built.
"""

from __future__ import annotations

import weakref

from eqgraph.function import function
from eqgraph.terms.basic import Variable
from eqgraph.terms.graph import graph_inputs

_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def evaluate(var, inputs_to_values: dict, **kwargs):
    """The value of ``var`` given ``{input variable or its name: value}``, compiled with
    ``eqgraph.function``'s keyword arguments ``kwargs``."""
    if any(isinstance(k, str) for k in inputs_to_values):
        by_name = {v.name: v for v in graph_inputs([var]) if v.name}
        try:
            inputs_to_values = {by_name[k] if isinstance(k, str) else k: v for k, v in inputs_to_values.items()}
        except KeyError as err:
            raise KeyError(f"{var} has no input named {err.args[0]!r}") from None
    inputs = tuple(inputs_to_values)
    per_var = _CACHE.setdefault(var, {})
    key = (tuple(id(i) for i in inputs), tuple(sorted((k, _hashable(v)) for k, v in kwargs.items())))
    if key not in per_var:  # the entry keeps the arguments alive, so the ids in its key stay theirs
        per_var[key] = (inputs, kwargs, function(list(inputs), var, **{"on_unused_input": "ignore", **kwargs}))
    fn = per_var[key][-1]
    return fn(*[inputs_to_values[i] for i in inputs])


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return value


Variable.evaluator = staticmethod(evaluate)
