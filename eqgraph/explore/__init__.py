"""The e-graph explorer: one self-contained HTML page to answer "why did my rule (not)
change my graph?".

``f.stages.egraph.explore()`` (or ``eqgraph.inspect.explore(outputs)`` for what
``eqgraph.rewrite`` would return, or ``python -m eqgraph explore script.py:fn``) writes the
page and returns an ``ExplorerPage``: its path, shown inline in Jupyter. The page draws the
neighbourhood of the outputs with cytoscape.js and dagre (vendored in ``vendor/``, inlined
into the page so it opens with no network), and lets the user click through e-classes, see
each member's cost and the rule (file:line) that explains it, search ops and rules, compare
the graph before and after extraction, and read the saturation report.
"""

from __future__ import annotations

import html
import json
import os
import re
import tempfile
from importlib import resources
from pathlib import Path

from eqgraph import egraph
from eqgraph.exec.backends import get_backend
from eqgraph.explore.model import build
from eqgraph.extract.extraction import extract
from eqgraph.extract.unstable import unstable_patterns
from eqgraph.extract.view import EGraphView
from eqgraph.terms.basic import Constant, Variable
from eqgraph.terms.fgraph import FunctionGraph
from eqgraph.terms.graph import graph_inputs

_VENDOR = ("vendor/cytoscape.min.js", "vendor/cytoscape-dagre.min.js")
_MARKER = re.compile(r"@@(TITLE|STYLE|VENDOR|DATA|EXPLORER)@@")


class ExplorerPage(os.PathLike):
    """A written explorer page: ``path`` (``open(page)`` and ``str(page)`` use it), its
    ``html`` text, and in Jupyter the page itself, in a frame."""

    def __init__(self, path: Path, text: str):
        self.path, self.html = path, text

    def __fspath__(self) -> str:
        return str(self.path)

    def __str__(self) -> str:
        return str(self.path)

    def __repr__(self) -> str:
        return f"ExplorerPage({str(self.path)!r})"

    def _repr_html_(self) -> str:
        # a frame keeps the page's script and styles apart from the notebook's
        return (f'<iframe srcdoc="{html.escape(self.html, quote=True)}" '
                'style="width:100%;height:720px;border:1px solid #ccc"></iframe>')

    def open(self) -> bool:
        """Open the page in the default web browser (False if there is none)."""
        import webbrowser
        return webbrowser.open(self.path.resolve().as_uri())


def render(view, title: str = "eqgraph e-graph", unstable=None) -> str:
    """The explorer page for ``view`` (an ``EGraphView``), as one HTML string; ``unstable``:
    the patterns extraction avoided (``model.build``)."""
    data = json.dumps(build(view, title, unstable), separators=(",", ":"), allow_nan=False)
    # "</" inside a <script> would end it early (a rule's text or a name may hold one)
    data = data.replace("</", "<\\/")
    parts = {"TITLE": html.escape(title), "STYLE": _asset("static/explorer.css"),
             "VENDOR": "\n".join(f"<script>{_asset(name)}</script>" for name in _VENDOR),
             "DATA": data, "EXPLORER": _asset("static/explorer.js")}
    # one pass over the template: no inserted text is searched for markers again
    return _MARKER.sub(lambda m: parts[m.group(1)], _asset("static/explorer.html"))


def write_page(view, path=None, title: str = "eqgraph e-graph", unstable=None) -> ExplorerPage:
    """Write ``render(view)`` to ``path`` (default: a new ``.html`` file in the temporary
    directory) and return the page."""
    text = render(view, title, unstable)
    if path is None:
        fd, name = tempfile.mkstemp(prefix="eqgraph-explorer-", suffix=".html")
        os.close(fd)
        path = name
    path = Path(path)
    path.write_text(text, encoding="utf-8")
    return ExplorerPage(path, text)


EGraphView.page_writer = staticmethod(write_page)  # f.stages.egraph.explore()


def explore_graph(outputs, rulesets=None, limits=None, cost_model=None, path=None,
                  title: str = "eqgraph rewrite") -> ExplorerPage:
    """The explorer page of the e-graph ``eqgraph.rewrite(outputs)`` extracts from: the same
    saturation (``rulesets``, ``limits``) and the same default prices (the NumPy backend's),
    written to ``path`` (default: a new file in the temporary directory). Re-exported as
    ``eqgraph.inspect.explore``."""
    outs = [outputs] if isinstance(outputs, Variable) else list(outputs)
    inputs = [v for v in graph_inputs(outs) if not isinstance(v, Constant)]
    graph = FunctionGraph(inputs, outs, clone=False)
    rulesets = egraph.DEFAULT_RULESETS if rulesets is None else rulesets
    optimized = egraph.optimize(graph, rulesets, limits or egraph.Limits())
    cost_model = get_backend("numpy").cost_model() if cost_model is None else cost_model
    unstable = unstable_patterns()  # what rewrite's extraction avoids, whatever the rulesets
    extraction = extract(optimized.snapshot, cost_model, unstable=unstable)
    return write_page(EGraphView(extraction, optimized.report), path, title, unstable)


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
