"""Which of PyTensor's documented public names eqgraph offers, one row per name.

    python bench/pytensor_names.py [--check]

Enumerates the public names of the PyTensor namespaces its documentation covers, looks
each up in the corresponding eqgraph namespace, and writes ``docs/pytensor-coverage.md``.
A name is *public* when the module lists it in ``__all__``; a module without ``__all__``
contributes the non-underscore names defined inside it (in the module, or anywhere in the
package for a package, or where ``HOMES`` says it forwards), less its rewrite-database
entries; ``pytensor`` itself contributes
what it re-exports from its subpackages. ``pytensor.tensor.random`` contributes the methods of its
``RandomStream``, and ``pytensor.compile`` the user-level names in ``COMPILE_NAMES`` plus
the mode names ``function(mode=...)`` accepts.

Each row gets one status: the same name (found in the eqgraph namespaces listed for the
PyTensor one, first match shown), a different eqgraph name, deliberately not offered (with a
reason), or missing. Renames and reasons are kept by hand in ``pytensor_names_notes.toml``.
With ``--check`` nothing is written; it exits non-zero when the page is stale.
Needs PyTensor installed.
"""

from __future__ import annotations

import importlib
import sys
import tomllib
import types
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "pytensor-coverage.md"
NOTES = Path(__file__).resolve().parent / "pytensor_names_notes.toml"

#: each PyTensor namespace and the eqgraph namespaces searched for its names, in order.
NAMESPACES = {
    "pytensor": ["eqgraph"],
    "pytensor.tensor": ["eqgraph.tensor"],
    "pytensor.tensor.math": ["eqgraph.tensor.math", "eqgraph.tensor"],
    "pytensor.tensor.basic": ["eqgraph.tensor.basic", "eqgraph.tensor"],
    "pytensor.tensor.extra_ops": ["eqgraph.tensor.extra_ops", "eqgraph.tensor"],
    "pytensor.tensor.linalg": ["eqgraph.tensor.linalg"],
    "pytensor.tensor.slinalg": ["eqgraph.tensor.linalg"],
    "pytensor.tensor.nlinalg": ["eqgraph.tensor.linalg"],
    "pytensor.tensor.special": ["eqgraph.tensor.special", "eqgraph.tensor"],
    "pytensor.tensor.random": ["eqgraph.RandomStream"],
    "pytensor.gradient": ["eqgraph", "eqgraph.grad"],
    "pytensor.scan": ["eqgraph", "eqgraph.loops"],
    "pytensor.ifelse": ["eqgraph"],
    "pytensor.compile": ["eqgraph", "eqgraph.function.MODES"],
}

#: the user-level names of ``pytensor.compile`` (the rest configures its rewriter and linkers).
COMPILE_NAMES = ["function", "In", "Out", "shared", "SharedVariable", "Function", "Mode",
                 "get_mode", "get_default_mode", "MonitorMode", "ProfileStats",
                 "UnusedInputError", "AliasedMemoryError", "as_op"]

#: modules that forward to another module; their names are defined in that one.
HOMES = {"pytensor.tensor.slinalg": "pytensor.tensor.linalg",
         "pytensor.tensor.nlinalg": "pytensor.tensor.linalg"}

STATUSES = ("same name", "different eqgraph name", "deliberately not offered", "missing")


def pytensor_names(namespace: str) -> list[str]:
    """The public names of one PyTensor namespace, sorted."""
    if namespace == "pytensor.tensor.random":
        from pytensor.tensor.random import basic
        from pytensor.tensor.random.utils import RandomStream
        own = [n for n in vars(RandomStream) if not n.startswith("_")]
        return sorted(set(basic.__all__) | set(own))
    if namespace == "pytensor.compile":
        from pytensor.compile.mode import predefined_modes
        # PyTensor's own modes: a mode another package registers (eqgraph's bridge) is not PyTensor's name
        own = [m for m, mode in predefined_modes.items()
               if type(getattr(mode, "linker", mode)).__module__.startswith("pytensor.")]
        return COMPILE_NAMES + [f'mode="{m}"' for m in ["FAST_RUN", *own]]
    module = importlib.import_module(namespace)
    if hasattr(module, "__all__"):
        return sorted(set(module.__all__))
    return sorted(n for n in dir(module) if not n.startswith("_") and _defined_in(module, n))


def _defined_in(module, name: str) -> bool:
    """Whether ``module.name`` is a user-level object defined in ``module`` (or its package)."""
    from pytensor.graph.rewriting.basic import Rewriter
    try:
        obj = getattr(module, name)
    except AttributeError:  # a lazy ``__getattr__`` that names a removed object
        return False
    if isinstance(obj, (types.ModuleType, Rewriter)):
        return False
    owner = getattr(obj, "__module__", None) or type(obj).__module__
    home = HOMES.get(module.__name__, module.__name__)
    return isinstance(owner, str) and (owner == home or owner.startswith(home + "."))


def _resolve(path: str):
    """The eqgraph object at a dotted ``path`` (module, then attributes), or None."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None) if not isinstance(obj, dict) else obj.get(attr)
        return obj
    return None


def _has(place: str, name: str) -> bool:
    """Whether the eqgraph namespace ``place`` offers ``name`` (a mode name for MODES)."""
    if name.startswith('mode="'):
        modes = sys.modules["eqgraph.function"].MODES if place.endswith("MODES") else {}
        return name[6:-1] in modes
    target = _resolve(place)
    if target is None:
        return False
    if isinstance(target, dict):
        return name in target
    return hasattr(target, name)


def row(namespace: str, name: str, notes: dict) -> tuple[str, str, str, str]:
    """(name, status, eqgraph name, note) for one PyTensor name."""
    key = f"{namespace}.{name}"
    if key in notes.get("renamed", {}):
        return name, "different eqgraph name", notes["renamed"][key], ""
    for place in NAMESPACES[namespace]:
        if _has(place, name):
            shown = f"{place}[{name[5:]}]" if name.startswith("mode=") else f"{place}.{name}"
            if _module_for_a_function(namespace, place, name):
                # eqgraph's module of that name (eqgraph.tensor.join), where the function is defined
                if not _has(shown, name):
                    continue
                shown = f"{shown}.{name}"
            return name, "same name", shown, ""
    if key in notes.get("not_offered", {}):
        return name, "deliberately not offered", "", notes["not_offered"][key]
    if _is_op_class(namespace, name):
        return name, "deliberately not offered", "", notes["kinds"]["op_class"]
    return name, "missing", "", ""


def _module_for_a_function(namespace: str, place: str, name: str) -> bool:
    """Whether eqgraph's ``place.name`` is a module where PyTensor's ``namespace.name`` is not."""
    if name.startswith("mode="):
        return False
    ours = getattr(_resolve(place), name, None)
    theirs = getattr(sys.modules.get(namespace), name, None)
    return isinstance(ours, types.ModuleType) and not isinstance(theirs, types.ModuleType)


def _is_op_class(namespace: str, name: str) -> bool:
    """Whether PyTensor's ``namespace.name`` is an ``Op`` subclass."""
    from pytensor.graph.op import Op
    obj = getattr(sys.modules.get(namespace), name, None)
    return isinstance(obj, type) and issubclass(obj, Op)


def table() -> dict[str, list[tuple[str, str, str, str]]]:
    """Every namespace's rows."""
    import eqgraph  # noqa: F401  (loads eqgraph.function for the mode names)
    notes = tomllib.loads(NOTES.read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {ns: [row(ns, n, notes) for n in pytensor_names(ns)] for ns in NAMESPACES}


def render(rows: dict) -> str:
    """The Markdown page for ``rows``."""
    import pytensor
    lines = ["# PyTensor names in eqgraph", "",
             f"Every public name of the PyTensor {pytensor.__version__} namespaces that PyTensor's "
             "documentation covers, and what eqgraph offers under it. Generated by "
             "`python bench/pytensor_names.py`; the reasons and renames are kept in "
             "`bench/pytensor_names_notes.toml`. How the names are chosen is described at the top "
             "of that script.", "",
             "| PyTensor namespace | eqgraph namespaces searched | " + " | ".join(STATUSES) + " |",
             "|---|---|" + "---:|" * len(STATUSES)]
    for ns, ns_rows in rows.items():
        counts = [sum(r[1] == s for r in ns_rows) for s in STATUSES]
        places = ", ".join(f"`{p}`" for p in NAMESPACES[ns])
        lines.append(f"| `{ns}` | {places} | " + " | ".join(map(str, counts)) + " |")
    for ns, ns_rows in rows.items():
        lines += ["", f"## `{ns}`", "", "| name | status | eqgraph | reason |", "|---|---|---|---|"]
        lines += [f"| `{n}` | {s} | {f'`{e}`' if e else ''} | {why} |" for n, s, e, why in ns_rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    page = render(table())
    if "--check" in argv:
        stale = not PAGE.exists() or PAGE.read_text() != page
        print(f"{PAGE} is {'stale' if stale else 'up to date'}")
        return int(stale)
    PAGE.write_text(page)
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
