"""docs/pytensor-coverage.md is the table that bench/pytensor_names.py generates: every
PyTensor name has one status, every name left out on purpose says why, and every hand-kept
note still names a PyTensor name."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytest.importorskip("pytensor")

import pytensor_names  # noqa: E402  (bench/ is on pytest's pythonpath)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rows():
    return pytensor_names.table()


def test_every_name_has_a_status(rows):
    unmarked = [(ns, r) for ns, ns_rows in rows.items() for r in ns_rows
                if r[1] not in pytensor_names.STATUSES]
    assert not unmarked
    assert all(ns_rows for ns_rows in rows.values()), "a namespace contributed no names"


def test_names_left_out_say_why(rows):
    silent = [(ns, r[0]) for ns, ns_rows in rows.items() for r in ns_rows
              if r[1] == "deliberately not offered" and not r[3].strip()]
    assert not silent


def test_every_note_names_a_pytensor_name(rows):
    notes = tomllib.loads(pytensor_names.NOTES.read_text())
    listed = {f"{ns}.{r[0]}" for ns, ns_rows in rows.items() for r in ns_rows}
    for section in ("renamed", "not_offered"):
        stale = sorted(set(notes.get(section, {})) - listed)
        assert not stale, f"{pytensor_names.NOTES.name} [{section}] names no PyTensor name: {stale}"


def test_checked_in_page_is_current():
    # in a fresh interpreter: what other tests import (PyTensor's modules register names as they
    # load) must not change the table
    done = subprocess.run([sys.executable, pytensor_names.__file__, "--check"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])})
    assert done.returncode == 0, f"{done.stdout}{done.stderr[-800:]}: run python bench/pytensor_names.py"
