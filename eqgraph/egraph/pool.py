"""Prepared egglog sessions, reused between compiles of the same thread.

Creating a session, declaring ~200 constructors and sending the default
rulesets costs more than saturating a small graph.  A *base*
session holds those for one list of rulesets; each compile works inside
``push`` ... ``pop`` on it, so the base is unchanged afterwards, except for what
the encoder adds at depth 0 before the push on purpose: the relations and union
rules of the terms it met, which later compiles reuse (egraph/encode.py).

egglog objects cannot cross threads (touching one from another thread
panics), so each thread has its own pool.  A base whose compile failed in a
way that may have left it changed (egglog panicked, or ``pop`` failed) is
thrown away rather than reused; the next compile builds a fresh one.
"""

from __future__ import annotations

import itertools
import tempfile
import threading
from collections import OrderedDict

from eqgraph.egraph.adapter import Session
from eqgraph.egraph.schema import Schema, send_prelude
from eqgraph.egraph.sending import send_rules
from eqgraph.rules import ruleset as rs

MAX_BASES = 8  # per thread
_POOLS = threading.local()  # .bases: OrderedDict[key, Base], this thread's pool


class Base:
    def __init__(self, rulesets: list, prepare=None):
        self.directory = tempfile.TemporaryDirectory(prefix="eqgraph-")  # files for egglog's input
        self.session = Session(fact_directory=self.directory.name)
        self.schema = Schema()
        send_prelude(self.session, self.schema)
        for ruleset in rulesets:
            send_rules(self.session, ruleset)
        if prepare is not None:   # what every compile would declare again (the encoder's relations)
            prepare(self.session)
        self.prepared = prepare is not None
        self.rulesets = list(rulesets)
        self.busy = False
        self._names = itertools.count()
        # the encoder's declarations kept at depth 0 (egraph/encode.py): a compile of a graph
        # whose ops an earlier compile met declares nothing. ``term_tags``: union rule's term ->
        # its tag; ``arities``: the tagged relations declared. Tags come from one counter and
        # are never reused, so a row can only ever meet the rule it was written for.
        self.term_tags: dict[str, int] = {}
        self.arities: set[int] = set()
        self.tags = itertools.count()

    def file_prefix(self) -> str:
        return f"g{next(self._names)}_"


def _pool() -> "OrderedDict[tuple, Base]":
    """This thread's bases, least recently used first."""
    if not hasattr(_POOLS, "bases"):
        _POOLS.bases = OrderedDict()
    return _POOLS.bases


def _key(rulesets: list) -> tuple:
    return tuple(id(r) for r in rulesets)


def acquire(rulesets: list, prepare=None) -> Base | None:
    """A free base session of this thread with ``rulesets`` sent (and ``prepare(session)``
    run, when the base is made), marked busy; None if it is in use (a compile inside a
    compile). It is not pushed yet: the encoder first declares at depth 0 what later
    compiles can reuse, then pushes (``push``)."""
    rs.check_unique(rulesets)
    pool, key = _pool(), _key(rulesets)
    base = pool.get(key)
    if base is None:
        base = pool[key] = Base(rulesets, prepare)
        while len(pool) > MAX_BASES:
            pool.popitem(last=False)
    pool.move_to_end(key)
    if base.busy:
        return None
    base.busy = True
    return base


def push(base: Base) -> None:
    """Start the compile's own layer on ``base`` (``release`` pops back to depth 0)."""
    try:
        base.session.push()
    except BaseException:
        discard(base)
        raise


def release(base: Base) -> None:
    """Give ``base`` back: pop to the depth it was acquired at, or throw it away if that fails."""
    try:
        while base.session.depth > 0 and not base.session.broken:
            base.session.pop()
    except BaseException:
        discard(base)
        raise
    finally:
        base.busy = False
    if base.session.broken:
        discard(base)


def discard(base: Base) -> None:
    """Drop ``base`` from this thread's pool: its depth-0 state may be half changed."""
    pool = _pool()
    for key, held in list(pool.items()):
        if held is base:
            del pool[key]


def pooled() -> list[Base]:
    """This thread's bases (for tests and inspection)."""
    return list(_pool().values())
