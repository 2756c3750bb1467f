"""The documentation is tested like code: the site builds with warnings as errors, and every
```python block of README.md and docs/*.md runs.

The blocks of one page run in order in one namespace, as a reader would type them, in a
temporary working directory (a page may write a rule file). A block that cannot run here (it
needs a GPU, a cluster or a file the reader has) is preceded by the comment ``<!-- skip -->``
on its own line; the test counts those so that skipping stays the exception.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SKIP = "<!-- skip -->"
FENCE = re.compile(r"^(?P<indent> *)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)


def code_blocks(text: str) -> list[tuple[int, str, bool]]:
    """The ```python blocks of a Markdown text: (line number, source, skipped), in order."""
    blocks = []
    for match in FENCE.finditer(text):
        if match["info"].strip() != "python":
            continue
        line = text.count("\n", 0, match.start()) + 1
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        indent = len(match["indent"])
        body = "\n".join(row[indent:] for row in match["body"].split("\n"))
        blocks.append((line, body, before == SKIP))
    return blocks


def test_code_blocks_are_found_and_skips_are_marked():
    text = ("intro\n```python\nx = 1\n```\n<!-- skip -->\n```python\nimport cupy\n```\n"
            "```bash\nls\n```\n- item\n  ```python\n  y = x + 1\n  ```\n")
    assert code_blocks(text) == [(2, "x = 1\n", False), (6, "import cupy\n", True), (13, "y = x + 1\n", False)]


def test_few_blocks_are_skipped():
    blocks = [b for page in PAGES for b in code_blocks(page.read_text())]
    skipped = sum(1 for _, _, skip in blocks if skip)
    assert len(blocks) >= 30, "every page should show running code"
    assert skipped <= len(blocks) // 5, f"{skipped} of {len(blocks)} blocks are marked {SKIP}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_page_code_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": f"docs_{page.stem}"}
    for line, source, skipped in code_blocks(page.read_text()):
        if skipped:
            continue
        where = f"{page.relative_to(ROOT)}:{line}"
        try:
            exec(compile(source, where, "exec"), namespace)
        except Exception as error:
            raise AssertionError(f"the ```python block at {where} raised {error!r}") from error


def test_site_builds_without_warnings(tmp_path):
    for module in ("mkdocs", "mkdocstrings_handlers.python", "material"):
        if importlib.util.find_spec(module.split(".")[0]) is None or importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[test]')")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                            cwd=ROOT, capture_output=True, text=True, timeout=600,
                            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stderr[-5000:]}"
    assert (tmp_path / "site" / "index.html").exists()


def test_parameter_entries_are_rewritten_for_the_numpy_parser():
    pytest.importorskip("griffe")
    spec = importlib.util.spec_from_file_location("griffe_docstrings", ROOT / "docs" / "griffe_docstrings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = ("Compile it.\n\nParameters\n----------\ninputs : the arguments, in order.\n"
            "backend : \"numpy\" or \"dask\" (Dask arguments\n    give Dask results).\n\n"
            "The result pickles.\n")
    assert module.rewrite_parameters(text) == (
        "Compile it.\n\nParameters\n----------\ninputs\n    the arguments, in order.\n"
        "backend\n    \"numpy\" or \"dask\" (Dask arguments\n    give Dask results).\n\n"
        "Notes\n-----\nThe result pickles.\n")
    assert module.rewrite_parameters("No sections: a : b stays.\n") == "No sections: a : b stays.\n"
