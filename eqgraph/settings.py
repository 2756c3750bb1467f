"""``eqgraph.config``, kept in this module: settings read when a graph is built, as in PyTensor.

    eg.config.floatX = "float32"             # for the rest of the program
    with eg.config.change_flags(floatX="float32"):
        x = et.vector("x")                   # float32
        y = x * 2.5                          # the Python float becomes a float32 constant

``floatX`` is the dtype of ``et.vector()``, ``et.matrix()``, ... when none is given, of
``TensorType("floatX", ...)``, of ``et.zeros``/``et.ones`` without a dtype, and of constants
made from Python floats. It is read when the variable or constant is made: changing it does
not retype a graph already built.

``assume_finite`` (default False) is what ``eqgraph.function`` does when its own
``assume_finite`` is not given: True also applies the rewrites that assume every value is a
finite number and no divisor is zero (``x - x -> 0``, ``x / x -> 1``), as PyTensor does;
docs/numerics.md. It is read when a function is compiled.

``numba`` (default True; False where the environment sets ``EQGRAPH_NUMBA=0``): whether compiled
functions use Numba at all; False runs the NumPy program alone.  ``compile`` (default
"background") is what ``eqgraph.function`` does when its own ``compile`` is not given: compile the
Numba forms off the calling thread and switch to them when ready ("background"), compile or load
them before returning ("eager"), or only when ``f.wait_compiled()`` asks ("deferred": calls run
the NumPy program until then, so a test's results do not depend on how fast a compile is). Both
are read when a function is compiled.

``cast_policy`` (default "custom", as PyTensor) is how PyTensor's names pick a dtype where the
inputs do not fix one: "custom" is PyTensor's own upcast (``et.arange`` of int32 bounds is int64,
of float32 bounds float32) and NumPy's dtype for elementwise ops; "numpy+floatX" is NumPy's choice
except that a result NumPy would make float64 from no float64 input stays floatX (``et.arange``
of int32 bounds is what ``np.arange`` gives them; of float32 bounds, floatX; with floatX float32,
int32 + float32 and int64 * 2.5 are float32, exp(int32) float64: tensor/cast_policy.py). Python integers are weak constants under both: they take
the dtype of the tensor they meet, as in NumPy, rather than PyTensor's smallest integer type
(int8 for 100), under which ``constant(100) + 100`` would wrap around to -56. It is read when a
node is built.

``graph_cache`` (default None) is the directory of the on-disk cache of optimized graphs
(eqgraph/graph_cache.py): a compile whose graph and settings another process already compiled
loads what saturation and extraction chose. None reads ``EQGRAPH_GRAPH_CACHE`` when a function is
compiled, else ``~/.cache/eqgraph/graphs``; "" (or ``EQGRAPH_GRAPH_CACHE=""``) turns it off.
``graph_cache_size`` (default 512 MiB) bounds that directory's entries, in bytes: a store that
takes them past it deletes the least recently used (stored or loaded) first.

This module imports nothing from eqgraph, so every layer may read it.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

FLOAT_CHOICES = ("float64", "float32", "float16")
COMPILE_CHOICES = ("background", "eager", "deferred")
CAST_POLICIES = ("custom", "numpy+floatX")


class Config:
    """The settings. Assign an attribute to change it for good; ``change_flags`` for a block."""

    _defaults = {"floatX": "float64", "assume_finite": False, "numba": os.environ.get("EQGRAPH_NUMBA", "1") != "0",
                 "compile": "background", "cast_policy": "custom", "graph_cache": None,
                 "graph_cache_size": 512 * 2**20}
    _choices = {"floatX": FLOAT_CHOICES, "assume_finite": (True, False), "numba": (True, False),
                "compile": COMPILE_CHOICES, "cast_policy": CAST_POLICIES}

    _lock = threading.RLock()

    def __init__(self):
        # the settings are the instance's attributes, so that pytest's monkeypatch can set and restore them
        self.__dict__.update(self._defaults)

    @property
    def _values(self) -> dict:
        return self.__dict__

    def __getattr__(self, name):   # only for names that are not settings
        raise AttributeError(f"eqgraph.config has no setting {name!r}; the settings are {sorted(self._defaults)}")

    def __setattr__(self, name, value):
        self.__dict__[name] = self._checked(name, value)

    def _checked(self, name, value):
        if name not in self._defaults:
            raise AttributeError(f"eqgraph.config has no setting {name!r}; the settings are {sorted(self._defaults)}")
        if name == "graph_cache" and not (value is None or isinstance(value, (str, os.PathLike))):
            raise TypeError(f"eqgraph.config.graph_cache must be a directory, \"\" (off) or None "
                            f"(read EQGRAPH_GRAPH_CACHE), not {value!r}")
        if name == "graph_cache_size" and (type(value) is not int or value <= 0):
            raise ValueError(f"eqgraph.config.graph_cache_size must be a positive number of bytes (an int), "
                             f"not {value!r}")
        choices = self._choices.get(name)
        if choices is not None and (value not in choices or type(value) is not type(choices[0])):
            raise ValueError(f"eqgraph.config.{name} must be one of {', '.join(map(str, choices))}, not {value!r}")
        return value

    @contextlib.contextmanager
    def change_flags(self, **flags) -> Iterator[Config]:
        """Set ``flags`` inside the ``with`` block and restore the old values after it
        (also when the block raises)."""
        checked = {name: self._checked(name, value) for name, value in flags.items()}
        with self._lock:
            old = {name: self._values[name] for name in checked}
            self._values.update(checked)
        try:
            yield self
        finally:
            with self._lock:
                self._values.update(old)

    def __repr__(self):
        return "eqgraph.config(" + ", ".join(f"{k}={v!r}" for k, v in self._values.items()) + ")"


config = Config()


def change_flags(**flags):
    """``eqgraph.config.change_flags`` as a function (PyTensor's ``pytensor.config.change_flags``)."""
    return config.change_flags(**flags)
