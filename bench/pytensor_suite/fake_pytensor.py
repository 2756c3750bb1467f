"""A fake ``pytensor`` package that re-exports eqgraph's names under PyTensor's module paths.

``install(facts)`` puts an import finder first on ``sys.meta_path``: every ``pytensor`` or
``pytensor.*`` import then gets a module whose attributes are looked up in eqgraph (``LOOKUP``
lists where, by PyTensor module prefix). A name eqgraph lacks becomes a placeholder class:
importing it, subclassing it or reading its attributes works, so a test module still collects;
calling it inside a test raises ``MissingName`` (at import time it gives another placeholder,
so module-level set-up still collects), and every call, ``isinstance`` or ``issubclass``
against it is recorded in ``TOUCHED`` so that a failing test can be told apart from a wrong
answer. A placeholder's repr names it, so an eqgraph error about one can be traced back.

Plain data constants that eqgraph lacks (dtype-name lists) are PyTensor's own values, as
``facts.py`` recorded them. Adapters, each use of which is recorded in ``ADAPTED`` (so the report says how many tests
needed one), for PyTensor choices that select its compiler rather than a result:

- ``get_default_mode()``/``get_mode(...)`` give ``DefaultMode``, the mode name ``"FAST_RUN"``
  that ``eqgraph.function`` accepts, whose ``including``/``excluding`` (PyTensor's rewrite
  selection) return it unchanged: eqgraph has one pipeline, and a test that checks which
  rewrite ran inspects node classes, which makes it not applicable anyway;
- ``function(..., mode=NAME)`` (and ``verify_grad(..., mode=NAME)``) with a PyTensor mode name eqgraph does not take (``FAST_COMPILE``,
  ``CVM``, ``C``, ``NUMBA``, ...) or a ``Mode(linker, optimizer)`` object compiles with eqgraph's default, and ``accept_inplace`` (which
  lets a PyTensor graph hold in-place ops; eqgraph chooses in-place itself) is dropped;
- config settings in ``PYTENSOR_DEFAULTS`` read PyTensor's default value: eqgraph has no such
  setting because it always behaves as PyTensor's default does (PyTensor's names follow
  PyTensor's semantics).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

import numpy as np

#: eqgraph namespaces searched for a name of a PyTensor module, by the module's longest
#: matching prefix; ``eqgraph`` plus the module's own path after ``pytensor`` is tried first.
LOOKUP = {
    "pytensor": ["eqgraph"],
    "pytensor.tensor": ["eqgraph.tensor", "eqgraph.tensor.linalg", "eqgraph"],
    "pytensor.tensor.random": ["eqgraph.tensor.random", "eqgraph.RandomStream", "eqgraph.tensor"],
    "pytensor.graph": ["eqgraph.terms", "eqgraph"],
    "pytensor.compile": ["eqgraph"],
    "pytensor.gradient": ["eqgraph", "eqgraph.grad"],
    "pytensor.scan": ["eqgraph", "eqgraph.loops"],
    "pytensor.configdefaults": ["eqgraph"],
    "pytensor.printing": ["eqgraph"],
    "pytensor.ifelse": ["eqgraph"],
    "pytensor.raise_op": ["eqgraph.tensor"],
}

#: PyTensor names whose eqgraph counterpart is spelled differently.
RENAMED = {"pullback": "Lop", "pushforward": "Rop"}

def _allclose(a, b, rtol=None, atol=None):
    """PyTensor's test helper ``pytensor.tensor.math._allclose``: ``np.allclose`` of two arrays with
    tolerances by the narrower dtype. It compares results and builds no graph, so the harness
    supplies PyTensor's own."""
    a, b = np.asarray(a), np.asarray(b)
    dtypes = {str(a.dtype), str(b.dtype)}
    if "float16" in dtypes:
        default = (1e-3, 1e-3)
    elif dtypes & {"float32", "complex64"}:
        default = (1e-5, 1e-5)
    else:
        default = (1.0000000000000001e-05, 1e-8)
    return np.allclose(a, b, rtol=default[0] if rtol is None else rtol, atol=default[1] if atol is None else atol)


#: PyTensor's helpers for its tests that work on NumPy arrays only (no graph): its own versions.
TEST_HELPERS = {"pytensor.tensor.math._allclose": _allclose, "pytensor.tensor._allclose": _allclose,
                # NumPy's own function, which PyTensor's random module imports
                "pytensor.tensor.random.basic.broadcast_shapes": np.broadcast_shapes}

def _round_half_away_from_zero_vec(a):
    """PyTensor's NumPy-level reference for ``round_half_away_from_zero`` (the expected values of
    its test; no graph): halves round away from zero, float32 stays float32."""
    a = np.asarray(a)
    out = np.where(a > 0, np.floor(a + 0.5), np.ceil(a - 0.5))
    return out.astype(np.float32) if a.dtype == np.float32 else out.astype(np.float64)


def _old_np_unique(arr, return_index=False, return_inverse=False, return_counts=False, axis=None):
    """PyTensor's ``npy_2_compat.old_np_unique``, the expected values of its unique tests (no
    graph): ``np.unique`` with the inverse a vector, as NumPy gave it before 2.0."""
    outs = np.unique(arr, return_index=return_index, return_inverse=return_inverse,
                     return_counts=return_counts, axis=axis)
    if not return_inverse:
        return outs
    outs = list(outs)
    at = 2 if return_index else 1
    outs[at] = np.ravel(outs[at]) if axis is None else outs[at].reshape(np.shape(arr)[axis])
    return tuple(outs)


TEST_HELPERS["pytensor.npy_2_compat.old_np_unique"] = _old_np_unique
TEST_HELPERS.update({"pytensor.scalar.round_half_away_from_zero_vec": _round_half_away_from_zero_vec,
                     "pytensor.scalar.basic.round_half_away_from_zero_vec": _round_half_away_from_zero_vec})

class _ScalarType:
    """PyTensor's ``ScalarType(dtype)`` (and its instances ``pytensor.scalar.float64``, ...), as
    eqgraph's ``TensorType(dtype, ())``: eqgraph's scalars are 0-d tensors, with the same dtype
    rules. An adapter: each variable made through it is recorded in ``ADAPTED``."""

    def __init__(self, dtype):
        self.dtype = str(dtype)

    @property
    def tensor_type(self):
        from eqgraph.tensor import TensorType
        return TensorType(self.dtype, ())

    def __call__(self, name=None):
        ADAPTED.append("ScalarType(dtype) as TensorType(dtype, ())")
        return self.tensor_type(name)

    def __eq__(self, other):
        return other == self.tensor_type

    __hash__ = None


#: PyTensor names, by dotted name, that the harness stands in for (see their docstrings).
DOTTED_ADAPTERS = {f"{module}.{name}": adapter for module in ("pytensor.scalar", "pytensor.scalar.basic")
                   for name, adapter in [("ScalarType", _ScalarType)]
                   + [(d, _ScalarType(d)) for d in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                                    "uint32", "uint64", "float16", "float32", "float64",
                                                    "complex64", "complex128")]}

#: PyTensor names whose eqgraph counterpart lives outside the namespaces LOOKUP searches.
ELSEWHERE = {"pytensor.scalar.upcast": "eqgraph.tensor.basic.upcast",
             "pytensor.scalar.basic.upcast": "eqgraph.tensor.basic.upcast",
             # eqgraph.tensor.join is the module that defines join
             "pytensor.tensor.join": "eqgraph.tensor.join.join",
             "pytensor.tensor.basic.join": "eqgraph.tensor.join.join",
             "pytensor.graph.replace.vectorize_graph": "eqgraph.tensor.blockwise.vectorize_graph"}

#: the dotted names of placeholders used by the test now running, in order.
TOUCHED: list[str] = []
#: the adapters (see the module docstring) used by the test now running.
ADAPTED: list[str] = []
#: whether a test is running (set by the run's plugin); outside one, calls give placeholders.
IN_TEST = [False]


class MissingName(Exception):
    """A test called a PyTensor name that eqgraph does not offer."""

    def __init__(self, name: str):
        super().__init__(f"eqgraph offers no {name}")
        self.name = name


class _Missing(type):
    """Metaclass of the placeholders: records each use, raises on a call."""

    def __call__(cls, *args, **kwargs):
        if not IN_TEST[0]:
            return placeholder(f"{cls._missing}()")
        TOUCHED.append(cls._missing)
        raise MissingName(cls._missing)

    def __repr__(cls):
        return f"<missing {cls._missing}>"

    def __getattr__(cls, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return placeholder(f"{cls._missing}.{attr}")

    def __instancecheck__(cls, obj):
        TOUCHED.append(cls._missing)
        return False

    def __subclasscheck__(cls, sub):
        TOUCHED.append(cls._missing)
        return False

    def __getitem__(cls, key):  # a missing indexable object such as mgrid[0:5]
        if not IN_TEST[0]:
            return placeholder(f"{cls._missing}[...]")
        TOUCHED.append(cls._missing)
        raise MissingName(cls._missing)

    def __iter__(cls):
        if not IN_TEST[0]:  # a parametrization over a missing list: pytest skips it as empty
            return iter(())
        TOUCHED.append(cls._missing)
        raise MissingName(cls._missing)


def placeholder(dotted: str) -> type:
    """A stand-in for a missing name; an Exception subclass, since tests catch missing error types."""
    return _Missing(dotted.rsplit(".", 1)[-1], (Exception,), {"_missing": dotted})


#: settings eqgraph lacks because it always behaves as PyTensor's default value says.
PYTENSOR_DEFAULTS: dict = {}


class Config:
    """``eqgraph.config`` under PyTensor's name. A setting eqgraph lacks raises inside a test
    (as eqgraph does) and is a placeholder at import time, so module-level reads collect."""

    def __getattr__(self, name):
        import eqgraph
        if name in PYTENSOR_DEFAULTS:
            ADAPTED.append(f"config.{name}")
            return PYTENSOR_DEFAULTS[name]
        if IN_TEST[0] or name.startswith("__"):
            return getattr(eqgraph.config, name)
        try:
            return getattr(eqgraph.config, name)
        except AttributeError:
            return placeholder(f"pytensor.configparser.config.{name}")

    def __setattr__(self, name, value):
        import eqgraph
        setattr(eqgraph.config, name, value)


def _arithmetic(symbol):
    def apply(cls, *other):
        if not IN_TEST[0]:  # module-level arithmetic on a missing constant: another placeholder
            return placeholder(f"({cls._missing} {symbol} ...)")
        TOUCHED.append(cls._missing)
        raise MissingName(cls._missing)
    return apply


for _name, _symbol in [("mul", "*"), ("add", "+"), ("sub", "-"), ("truediv", "/"), ("pow", "**")]:
    setattr(_Missing, f"__{_name}__", _arithmetic(_symbol))
    setattr(_Missing, f"__r{_name}__", _arithmetic(_symbol))
setattr(_Missing, "__neg__", _arithmetic("-"))


def _number(kind):
    def convert(cls):
        if not IN_TEST[0]:  # a module-level size computed from a missing setting: any size will do
            return kind(1)
        TOUCHED.append(cls._missing)
        raise MissingName(cls._missing)
    return convert


_Missing.__float__, _Missing.__int__, _Missing.__index__ = _number(float), _number(int), _number(int)


class DefaultMode(str):
    """PyTensor's default Mode, as the mode name eqgraph.function takes."""

    linker = placeholder("pytensor.compile.mode.Mode.linker")

    def __new__(cls, value="FAST_RUN"):
        return super().__new__(cls, value)

    def including(self, *tags):
        return self

    excluding = requiring = including


def _get_mode(*args, **kwargs) -> DefaultMode:
    ADAPTED.append("get_default_mode()")
    return DefaultMode()


#: PyTensor's ``function`` parameters after ``inputs, outputs``, in its positional order.
FUNCTION_POSITIONS = ("mode", "updates", "givens", "no_default_updates", "accept_inplace", "name",
                      "rebuild_strict", "allow_input_downcast", "profile", "on_unused_input")


def _adapt_mode(kwargs: dict) -> None:
    """A PyTensor mode eqgraph does not take, by name or as a ``Mode(...)`` object (a linker
    and rewriter choice), becomes eqgraph's default."""
    mode = kwargs.get("mode")
    if isinstance(mode, str) and mode not in sys.modules["eqgraph.function"].MODES:
        ADAPTED.append(f"mode={str(mode)!r}")
        kwargs["mode"] = None
    elif isinstance(mode, _Missing) and mode._missing.startswith("pytensor.compile.mode."):
        ADAPTED.append("mode=Mode(...)")
        kwargs["mode"] = None


def _function(*args, **kwargs):
    """eqgraph.function, with PyTensor's compiler choices adapted (see the module docstring)."""
    import eqgraph
    if len(args) > 2:  # PyTensor's third positional parameter is the mode, eqgraph's the updates
        kwargs.update(zip(FUNCTION_POSITIONS, args[2:]))
        args = args[:2]
    _adapt_mode(kwargs)
    if "accept_inplace" in kwargs:
        ADAPTED.append("accept_inplace")
        del kwargs["accept_inplace"]
    return eqgraph.function(*args, **kwargs)


def _verify_grad(*args, **kwargs):
    """eqgraph.verify_grad, with a PyTensor mode name it does not take adapted as ``function``'s is."""
    import eqgraph
    _adapt_mode(kwargs)
    return eqgraph.verify_grad(*args, **kwargs)


ADAPTERS = {"get_default_mode": _get_mode, "get_mode": _get_mode, "config": Config(),
            "function": _function, "verify_grad": _verify_grad}


def _places(module_name: str) -> list[str]:
    rest = module_name.split(".", 1)[1] if "." in module_name else ""
    places = [f"eqgraph.{rest}" if rest else "eqgraph"]
    prefixes = [p for p in LOOKUP if module_name == p or module_name.startswith(p + ".")]
    return places + (LOOKUP[max(prefixes, key=len)] if prefixes else [])


def _resolve(place: str):
    parts = place.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None)
        return obj
    return None


def internal_class(dotted: str, found):
    """``found``, or where ``dotted`` is an Op class that PyTensor counts as internal, a subclass
    of it whose construction with arguments eqgraph's class does not take (PyTensor's own
    constructor, such as ``Elemwise(scalar_op, inplace_pattern)``) records the name, so that the
    test is not applicable, and gives a placeholder at import time, so the module still collects.
    The op it constructs is ``found``'s own, so ``isinstance`` and equality with eqgraph's ops hold."""
    from eqgraph.terms import Op
    if not (isinstance(found, type) and issubclass(found, Op) and is_internal(dotted)):
        return found

    class Constructor(type(found)):
        def __call__(cls, *args, **kwargs):
            if cls is not wrapper:  # a test's own subclass: constructed as any class
                return super().__call__(*args, **kwargs)
            try:
                return found(*args, **kwargs)
            except (TypeError, ValueError):
                if not IN_TEST[0]:
                    return placeholder(f"{dotted}()")
                TOUCHED.append(dotted)
                raise

        def __instancecheck__(cls, obj):
            return isinstance(obj, found)

        def __subclasscheck__(cls, sub):
            return issubclass(sub, found)

    # this module's, not eqgraph's: eqgraph finds some op classes by the module of their subclasses
    wrapper = Constructor(found.__name__, (found,), {"__module__": __name__})
    return wrapper


class _FakeModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name in ADAPTERS:
            return ADAPTERS[name]
        if f"{self.__name__}.{name}" in DOTTED_ADAPTERS:
            return DOTTED_ADAPTERS[f"{self.__name__}.{name}"]
        if f"{self.__name__}.{name}" in TEST_HELPERS:
            return TEST_HELPERS[f"{self.__name__}.{name}"]
        if f"{self.__name__}.{name}" in ELSEWHERE:
            return _resolve(ELSEWHERE[f"{self.__name__}.{name}"])
        for place in _places(self.__name__):
            target = _resolve(place)
            if target is not None and not isinstance(target, type(self)):
                found = getattr(target, RENAMED.get(name, name), _NOTHING)
                if found is not _NOTHING:
                    return internal_class(f"{self.__name__}.{name}", found)
        dotted = f"{self.__name__}.{name}"
        if dotted in _FACTS["constants"]:  # plain data such as dtype-name lists: PyTensor's own
            return tuple(_FACTS["constants"][dotted]) if isinstance(_FACTS["constants"][dotted], list) \
                else _FACTS["constants"][dotted]
        if dotted in _FACTS["modules"]:
            return importlib.import_module(dotted)
        return placeholder(dotted)


_NOTHING = object()
_FACTS: dict = {"modules": set(), "internal": set(), "constants": {}}


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname == "pytensor" or fullname.startswith("pytensor."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _FakeModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        if module.__name__ == "pytensor":
            module.__version__ = "3.0.7"
            module.config = Config()


def install(facts: dict) -> None:
    """Make ``import pytensor`` give the fake package; ``facts`` as ``facts.py`` writes them."""
    _FACTS["modules"] = set(facts["modules"])
    _FACTS["internal"] = set(facts["internal"])
    _FACTS["constants"] = facts["constants"]
    for name in [n for n in sys.modules if n == "pytensor" or n.startswith("pytensor.")]:
        del sys.modules[name]
    sys.meta_path.insert(0, _Finder())


def is_internal(dotted: str) -> bool:
    """Whether a placeholder's name is a PyTensor internal (or an attribute of one): one that
    ``facts.py`` found, or a private name (``_is_provably_positive``), which PyTensor does not
    offer its users."""
    parts = dotted.split(".")
    if any(part.startswith("_") for part in parts[1:]):
        return True
    return any(".".join(parts[:cut]) in _FACTS["internal"] for cut in range(2, len(parts) + 1))
