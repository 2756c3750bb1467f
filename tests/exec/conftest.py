"""Fixtures of the execution tests."""

import pytest

import eqgraph as eg
from eqgraph.exec.numba import program as numba_program


@pytest.fixture
def hot_at_once(monkeypatch):
    """The whole function compiled by ``eg.function``, for any size and node count."""
    monkeypatch.setattr(eg.config, "compile", "eager")
    monkeypatch.setattr(numba_program, "SMALL_INPUTS", 10**9)
    monkeypatch.setattr(numba_program, "MIN_NODES", 1)
