"""Facts about the real PyTensor that the run needs while the fake package hides it.

    python bench/pytensor_suite/facts.py OUT.json

Run without the fake package on the path. Writes every module name of the installed PyTensor
and the dotted names (``module.attr``) of its internals: Op subclasses (graph node classes),
rewriters, linkers, modes and graph features, and everything in ``INTERNAL_MODULES``; and its plain data constants (dtype-name lists,
numbers, strings: ``constant``) by dotted name.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
import warnings

#: PyTensor modules whose contents configure its compiler, not the user's graph, and its shims
#: over NumPy versions (npy_2_compat).
INTERNAL_MODULES = ("pytensor.graph.rewriting", "pytensor.tensor.rewriting", "pytensor.link",
                    "pytensor.compile.mode", "pytensor.compile.debug", "pytensor.compile.profiling",
                    "pytensor.npy_2_compat",
                    "pytensor.tensor.blas", "pytensor.scan.rewriting", "pytensor.graph.destroyhandler",
                    "pytensor.graph.features", "pytensor.configparser", "pytensor.graph.fg")

#: optional backends whose import needs packages the run does not use.
SKIPPED = ("pytensor.link.jax", "pytensor.link.pytorch", "pytensor.link.mlx", "pytensor.d3viz")


def modules() -> list[str]:
    import pytensor
    names = ["pytensor"]
    for info in pkgutil.walk_packages(pytensor.__path__, "pytensor.", onerror=lambda name: None):
        if not info.name.startswith(SKIPPED):
            names.append(info.name)
    return names


def is_internal(module_name: str, obj) -> bool:
    from pytensor.compile.mode import Mode
    from pytensor.graph.features import Feature
    from pytensor.graph.op import Op
    from pytensor.graph.rewriting.basic import Rewriter
    from pytensor.link.basic import Linker
    if module_name.startswith(INTERNAL_MODULES):
        return True
    owner = getattr(obj, "__module__", None) or ""
    if isinstance(owner, str) and owner.startswith(INTERNAL_MODULES):
        return True
    if isinstance(obj, (Rewriter, Mode, Linker, Feature)):
        return True
    return isinstance(obj, type) and issubclass(obj, (Op, Rewriter, Mode, Linker, Feature)) and obj is not Op


def constant(obj):
    """``obj`` as JSON when it is plain data (a scalar type stands for its dtype name), else None."""
    from pytensor.scalar import ScalarType
    if isinstance(obj, (str, int, float)) and not isinstance(obj, bool):
        return obj
    if isinstance(obj, (tuple, list, set, frozenset)) and obj:
        items = [str(o) if isinstance(o, ScalarType) else o for o in obj]
        if all(isinstance(i, str) for i in items):
            return sorted(items) if isinstance(obj, (set, frozenset)) else items
    return None


def main(out: str) -> None:
    warnings.simplefilter("ignore")
    names, internal, constants = modules(), [], {}
    for name in names:
        try:
            module = importlib.import_module(name)
        except Exception:  # an optional dependency missing: its names stay unknown
            continue
        for attr, obj in list(vars(module).items()):
            if not attr.startswith("__") and is_internal(name, obj):
                internal.append(f"{name}.{attr}")
            elif not attr.startswith("_") and constant(obj) is not None:
                constants[f"{name}.{attr}"] = constant(obj)
    json.dump({"modules": names, "internal": sorted(internal), "constants": constants}, open(out, "w"))


if __name__ == "__main__":
    main(sys.argv[1])
