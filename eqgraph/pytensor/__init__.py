"""PyTensor (and PyMC) graphs on eqgraph: ``from_pytensor`` converts a graph, ``from_pymc`` a PyMC
model's log-density and gradient, and ``mode()`` is a PyTensor mode that compiles with eqgraph.

PyTensor is an extra (``pip install eqgraph[pytensor]``): importing ``eqgraph`` never imports it.
This package imports without it too, and each name loads its module on first use (PEP 562), so
that a missing PyTensor (or PyMC, for ``from_pymc``) is one clear error naming the extra.
"""

import importlib

#: public name -> the module of this package that defines it
_DEFINED_IN = {
    "Converted": "convert", "from_pytensor": "convert",
    "OPS": "ops", "SCALAR_OPS": "ops", "UnsupportedOp": "ops",
    "EqgraphLinker": "linker", "EqgraphDefaultLinker": "linker", "mode": "linker",
    "default_mode": "linker", "python_mode": "linker", "use": "linker",
    "from_pymc": "pymc",
}
__all__ = sorted(_DEFINED_IN)


def __getattr__(name: str):
    if name not in _DEFINED_IN:
        raise AttributeError(f"module 'eqgraph.pytensor' has no attribute {name!r}")
    try:
        module = importlib.import_module(f"eqgraph.pytensor.{_DEFINED_IN[name]}")
    except ImportError as error:
        extra = "pymc" if name == "from_pymc" else "pytensor"
        missing = (error.name or extra).split(".")[0]
        raise ImportError(f"eqgraph.pytensor.{name} needs {missing}: "
                          f"pip install 'eqgraph[{extra}]'") from error
    return getattr(module, name)


def __dir__():
    return sorted([*globals(), *_DEFINED_IN])
