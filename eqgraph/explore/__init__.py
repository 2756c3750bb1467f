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

from eqgraph.explore.model import build

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


def render(view, title: str = "eqgraph e-graph") -> str:
    """The explorer page for ``view`` (an ``EGraphView``), as one HTML string."""
    data = json.dumps(build(view, title), separators=(",", ":"), allow_nan=False)
    # "</" inside a <script> would end it early (a rule's text or a name may hold one)
    data = data.replace("</", "<\\/")
    parts = {"TITLE": html.escape(title), "STYLE": _asset("static/explorer.css"),
             "VENDOR": "\n".join(f"<script>{_asset(name)}</script>" for name in _VENDOR),
             "DATA": data, "EXPLORER": _asset("static/explorer.js")}
    # one pass over the template: no inserted text is searched for markers again
    return _MARKER.sub(lambda m: parts[m.group(1)], _asset("static/explorer.html"))


def write_page(view, path=None, title: str = "eqgraph e-graph") -> ExplorerPage:
    """Write ``render(view)`` to ``path`` (default: a new ``.html`` file in the temporary
    directory) and return the page."""
    text = render(view, title)
    if path is None:
        fd, name = tempfile.mkstemp(prefix="eqgraph-explorer-", suffix=".html")
        os.close(fd)
        path = name
    path = Path(path)
    path.write_text(text, encoding="utf-8")
    return ExplorerPage(path, text)


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
