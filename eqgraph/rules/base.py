"""Prepared egglog sessions, reused between compiles.

Creating a session, declaring ~200 constructors and sending the default
rulesets takes about 35 ms, more than saturating a small graph.  A *base*
session holds those for one list of rulesets; each compile works inside
``push`` ... ``pop`` on it, so the base is unchanged afterwards.
"""

from __future__ import annotations

import itertools
import tempfile
from collections import OrderedDict

from eqgraph.rules import ruleset as rs
from eqgraph.rules.adapter import Session
from eqgraph.rules.schema import Schema, send_prelude

MAX_BASES = 8
_BASES: "OrderedDict[tuple, Base]" = OrderedDict()


class Base:
    def __init__(self, rulesets: list):
        self.directory = tempfile.TemporaryDirectory(prefix="eqgraph-")  # files for egglog's input
        self.session = Session(fact_directory=self.directory.name)
        self.schema = Schema()
        send_prelude(self.session, self.schema)
        for ruleset in rulesets:
            rs.send(self.session, ruleset)
        self.rulesets = list(rulesets)
        self.busy = False
        self._names = itertools.count()

    def file_prefix(self) -> str:
        return f"g{next(self._names)}_"


def acquire(rulesets: list) -> Base | None:
    """A free base session with ``rulesets`` sent, pushed and marked busy; None if in use."""
    key = tuple(id(r) for r in rulesets)
    base = _BASES.get(key)
    if base is None:
        base = Base(rulesets)
        _BASES[key] = base
        while len(_BASES) > MAX_BASES:
            _BASES.popitem(last=False)
    _BASES.move_to_end(key)
    if base.busy:  # a compile inside a compile: use a fresh session instead
        return None
    base.busy = True
    base.session.push()
    return base


def release(base: Base) -> None:
    base.session.pop()
    base.busy = False
