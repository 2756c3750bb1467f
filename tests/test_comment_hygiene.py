"""Comments say why the code is as it is: no quoted timings, no references outside the repository.

A timing in a comment (a number and a unit of time) goes stale with every NumPy or Numba
release and no test ties it to the code; measured numbers live in ``docs/performance.md`` beside
the bench command that produces them. A reference to a document that is not in the repository
(the design notes, the shared folder, a numbered contract or issue) cannot be followed by a
reader of the code. Both are
found precisely by ``bench/comments.py`` (its ``timing`` and ``outside`` categories), in the
comments and docstrings of ``eqgraph/**/*.py`` and the comments of ``rulesets/*.egg``.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from comments import ENFORCED, default_files, scan, scan_file

ROOT = Path(__file__).resolve().parents[1]

#: offending lines allowed per file: none (a file may hold fewer than its entry, never more)
ALLOWED: dict[str, int] = {}


def excess_offenders(findings, allowed: dict[str, int]) -> list[str]:
    """For each file with more offending lines than ``allowed`` grants, one message listing them."""
    lines = defaultdict(dict)   # path -> {line: finding}
    for finding in findings:
        if finding.category in ENFORCED:
            lines[finding.path].setdefault(finding.line, finding)
    return [f"{path}: {len(found)} offending lines, {allowed.get(path, 0)} allowed:\n"
            + "\n".join(f"  {found[line]}" for line in sorted(found))
            for path, found in sorted(lines.items()) if len(found) > allowed.get(path, 0)]


def test_no_timings_or_outside_references_in_comments():
    problems = excess_offenders(scan(), ALLOWED)
    assert not problems, (
        "comments quote timings or point outside the repository; say why the code is as it is "
        "(numbers go to docs/performance.md with their bench command, history to the commit "
        "message):\n" + "\n".join(problems))


def test_the_scan_covers_the_package_and_the_rule_files():
    files = {path.relative_to(ROOT).as_posix() for path in default_files()}
    assert "eqgraph/function.py" in files and "eqgraph/terms/op.py" in files
    assert "rulesets/algebra.egg" in files
    assert all(path.endswith((".py", ".egg")) for path in files)


def _write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_new_offender_fails(tmp_path):
    """A file with offenders of each enforced kind, in each place they may hide, fails the check;
    the same file cleaned passes."""
    _write(tmp_path, "eqgraph/mod.py", '''"""A module (DESIGN decision 9)."""

x = 1  # took 38 ms before


def f():
    """Fast: 0.47 us a call on 10 elements (issue 12)."""
    return "not a comment: 38 ms"
''')
    _write(tmp_path, "rulesets/new.egg", '(rewrite (a) (b) :name "r")   ; seed 003, 4.9 ns per element\n'
                                         '(rule ((= x "a;38 ms")) ())\n')
    findings = scan(default_files(tmp_path), tmp_path)
    found = {(f.path, f.line, f.category) for f in findings if f.category in ENFORCED}
    assert found == {("eqgraph/mod.py", 1, "outside"), ("eqgraph/mod.py", 3, "timing"),
                     ("eqgraph/mod.py", 7, "timing"), ("eqgraph/mod.py", 7, "outside"),
                     ("rulesets/new.egg", 1, "outside"), ("rulesets/new.egg", 1, "timing")}
    problems = excess_offenders(findings, {})
    assert len(problems) == 2 and "eqgraph/mod.py: 3 offending lines, 0 allowed" in problems[0]
    assert excess_offenders(findings, {"eqgraph/mod.py": 3, "rulesets/new.egg": 1}) == []
    assert len(excess_offenders(findings, {"eqgraph/mod.py": 2, "rulesets/new.egg": 1})) == 1


@pytest.mark.parametrize("text", [
    "# ones and 0s, the 1990s",                 # plural numbers are not seconds
    "# a 2x3 matrix, 2x - 1 near 1/2",          # shapes and algebra are not speedups
    "# rng = default_rng(seed=0); seed 7 of the draws",
    "# the issue is the order of the axes",
    "# O(n^3) work, 3 steps, 10 s.t. x > 0",
])
def test_ordinary_comments_pass(tmp_path, text):
    path = _write(tmp_path, "eqgraph/ok.py", text + "\n")
    assert [f for f in scan_file(path, tmp_path) if f.category in ENFORCED] == []
