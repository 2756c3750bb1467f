"""Comments that will age badly: timings, history and references outside the repository.

    python bench/comments.py [--only CATEGORY,...] [--counts] [PATH ...]

Scans the comments and docstrings of ``eqgraph/**/*.py`` and the ``;`` comments of
``rulesets/*.egg`` (or the files and folders given) and prints each offending line as
``file:line [category] text``, then the count per category. The categories:

- ``timing``: a number followed by a time unit ("38 ms", "0.47 us", "4 s");
- ``speedup``: a ratio quoted as a measurement ("4x faster", "1.8x", "7×");
- ``measured``: words that cite a measurement ("measured", "2-core", "at load 5", "benchmark");
- ``history``: what the code used to do ("used to", "an earlier guess", "moved from", "was 1-2 ms");
- ``outside``: a reference to something not in this repository (``DESIGN.md``, ``../shared``,
  ``seeds/``, "seed 003", "issue 12").

``timing`` and ``outside`` are precise enough for ``tests/test_comment_hygiene.py`` to enforce;
the other three are heuristics for a reviewer, with false positives ("measured" may be about shapes).
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import sys
import tokenize
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NUMBER = r"(?<![\w.])\d+(?:[.,]\d+)*"
PATTERNS = {
    # "s" alone must be spaced from its number ("4 s"), so "0s and 1s" or "1990s" are not timings.
    "timing": re.compile(NUMBER + r"(?:\s*(?:ns|us|µs|μs|ms|msec|usec|nsec)\b"
                         r"|\s+(?:s|sec|secs|seconds?|milliseconds?|microseconds?|nanoseconds?|minutes?)\b(?!\.\w))"),
    # attached to its number and followed by a word or punctuation: "2x3" is a shape, "2x - 1" math.
    "speedup": re.compile(NUMBER + r"[x×](?=\s*(?:faster|slower|speed|more|less|fewer|the|at|as|$|[),.;:]))"),
    "measured": re.compile(r"\bmeasur(?:ed|ing|ement)\b|\b\d+-core\b|\bat load \d|\bbench(?:mark)?ed\b"
                           r"|\bproject's (?:2-core |shared )?machine\b|\bbest of \d", re.I),
    "history": re.compile(r"(?<!is )(?<!are )(?<!be )(?<!was )\bused to\b|\b(?:previously|formerly|originally)\b"
                          r"|\banymore\b|\b(?:was|were) moved\b|\bmoved (?:from|here)\b"
                          r"|\bwhere it was\s*$|\bwas (?:\d|about \d|~)|\bearlier (?:guess|version|design|form)\b"
                          r"|\bbefore the fix\b|\bthe old (?:code|version|form|design)\b|\bnow\b[^.;]*\binstead of\b",
                          re.I),
    "outside": re.compile(r"DESIGN(?:\.md| decision)|\.\./shared|\bseeds/|\bseed 0\d\d\b|\bseed contracts?\b"
                          r"|\bissues? #?\d+\b|\bresearch report\b|\baesthetics(?:-t\d)?\.md\b", re.I),
}
ENFORCED = ("timing", "outside")


@dataclass(frozen=True)
class Finding:
    path: str          # relative to the repository root, with forward slashes
    line: int
    category: str
    text: str          # the comment or docstring line, stripped
    match: str         # what the category's pattern matched

    def __str__(self) -> str:
        return f"{self.path}:{self.line} [{self.category}] {self.text}"


def python_comment_lines(source: str) -> list[tuple[int, str]]:
    """(line, text) of every ``#`` comment and every docstring line of a Python source."""
    lines = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            lines.append((tok.start[0], tok.string.lstrip("#").strip()))
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            first = body[0].lineno
            raw = source.splitlines()[first - 1:body[0].end_lineno]
            lines.extend((first + i, text.strip()) for i, text in enumerate(raw))
    return sorted(lines)


def egg_comment_lines(source: str) -> list[tuple[int, str]]:
    """(line, text) of every ``;`` comment of an egglog source (a ``;`` inside a string is not one)."""
    lines = []
    for number, row in enumerate(source.splitlines(), 1):
        in_string = False
        for i, char in enumerate(row):
            if char == '"':
                in_string = not in_string
            elif char == ";" and not in_string:
                lines.append((number, row[i:].lstrip(";").strip()))
                break
    return lines


def scan_file(path: Path, root: Path = ROOT) -> list[Finding]:
    """The findings in one ``.py`` or ``.egg`` file, in line order."""
    source = path.read_text(encoding="utf-8")
    rows = egg_comment_lines(source) if path.suffix == ".egg" else python_comment_lines(source)
    try:
        rel = path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        rel = path.as_posix()
    found = []
    for line, text in rows:
        for category, pattern in PATTERNS.items():
            match = pattern.search(text)
            if match:
                found.append(Finding(rel, line, category, text, match.group(0)))
    return found


def default_files(root: Path = ROOT) -> list[Path]:
    """The files the hygiene rules cover: ``eqgraph/**/*.py`` and ``rulesets/*.egg``."""
    return sorted((root / "eqgraph").rglob("*.py")) + sorted((root / "rulesets").glob("*.egg"))


def scan(paths: list[Path] | None = None, root: Path = ROOT) -> list[Finding]:
    """The findings in the given files and folders (default: ``default_files``)."""
    files = []
    for path in paths or default_files(root):
        if path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.suffix in (".py", ".egg"))
        else:
            files.append(path)
    return [finding for path in files for finding in scan_file(path, root)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="files or folders (default: eqgraph/ and rulesets/)")
    parser.add_argument("--only", help="comma-separated categories to print (all are counted)")
    parser.add_argument("--counts", action="store_true", help="print only the counts")
    args = parser.parse_args(argv)
    only = set(args.only.split(",")) if args.only else set(PATTERNS)
    unknown = only - set(PATTERNS)
    if unknown:
        parser.error(f"--only: unknown categories {sorted(unknown)}; expected some of {list(PATTERNS)}")
    findings = scan(args.paths or None)
    if not args.counts:
        for finding in findings:
            if finding.category in only:
                print(finding)
    counts = Counter(finding.category for finding in findings)
    lines = {(f.path, f.line) for f in findings}
    print("\n" + "  ".join(f"{category}: {counts[category]}" for category in PATTERNS)
          + f"  (lines: {len(lines)}; enforced by tests/test_comment_hygiene.py: {', '.join(ENFORCED)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
