"""``python -m eqgraph explore SCRIPT.py:FUNCTION``: run a user's script and explore what
one of its functions builds."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from eqgraph.explore import explore_graph
from eqgraph.terms.basic import Variable


class ScriptError(ValueError):
    """A target that cannot be explored: the script, the function or what it returned."""


def explore_target(target: str, path=None):
    """Load ``SCRIPT.py:FUNCTION``, call the function with no arguments and write the explorer
    page of its result: a compiled function's e-graph, or the e-graph ``eqgraph.rewrite``
    extracts from for a graph (a variable or a list of them)."""
    script, _, name = target.rpartition(":")
    if not script or not name:
        raise ScriptError(f"expected SCRIPT.py:FUNCTION, got {target!r}")
    function = getattr(_load(Path(script)), name, None)
    if not callable(function):
        raise ScriptError(f"{script} defines no function {name!r}")
    result = function()
    title = f"{Path(script).name}:{name}"
    stages = getattr(result, "stages", None)
    if stages is not None:
        return stages.egraph.explore(path, title)
    outputs = result if isinstance(result, (list, tuple)) else [result]
    if not outputs or not all(isinstance(v, Variable) for v in outputs):
        raise ScriptError(f"{target} returned {type(result).__name__}, expected an eqgraph.function "
                          "or a graph (a variable or a list of variables)")
    return explore_graph(list(outputs), path=path, title=title)


def _load(script: Path):
    if not script.is_file():
        raise ScriptError(f"no script {str(script)!r}")
    spec = importlib.util.spec_from_file_location(f"_eqgraph_explored_{script.stem}", script)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(script.resolve().parent))  # the script's own imports, as `python script.py`
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(script.resolve().parent))
    return module
