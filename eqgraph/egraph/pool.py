"""Prepared egglog sessions, reused between compiles of the same thread.

Creating a session, declaring ~200 constructors and sending the default
rulesets costs more than saturating a small graph.  A *base*
session holds those for one list of rulesets (and the family copies of the ops the graphs
compiled on it may hold, ``send_family_copies``); each compile works inside
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
from eqgraph.egraph.sending import send_deferred, send_rules
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
        self.deferred = [(r, r.deferred()) for r in self.rulesets if r.deferred()]
        self._reachable: dict[frozenset, frozenset] = {}   # constructors of a graph -> what rules may build
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

    def reachable(self, constructors: frozenset) -> frozenset:
        """The constructors that may have e-nodes once the rulesets run on a graph of ``constructors``."""
        reached = self._reachable.get(constructors)
        if reached is None:
            if len(self._reachable) > 256:
                self._reachable.clear()
            reached = self._reachable[constructors] = rs.reachable_constructors(self.rulesets, constructors)
        return reached


def send_family_copies(base: Base, constructors) -> None:
    """Send ``base``, at depth 0, the family copies (``Ruleset.deferred``) that may match in a
    compile of a graph naming ``constructors``: every constructor of a query of theirs may have
    an e-node, not only their op (most copies also need an indexing or DimShuffle term, and
    egglog's cost is per rule declared). Compiles of graphs of those ops find them sent. Any
    other copy can first match when the runner sees its query's ops, which sends it then, for
    that compile only."""
    reached = base.reachable(frozenset(constructors))
    try:
        for ruleset, rules in base.deferred:
            send_deferred(base.session, ruleset, [rule for rule in rules if _may_match_in(rule, reached)])
    except BaseException:
        discard(base)   # it may hold half of them: no later compile may use it
        raise


def _may_match_in(rule, reached: frozenset) -> bool:
    """Whether a query of ``rule`` names only constructors of ``reached``."""
    return any(needed <= reached for needed, _ in rule.directions())


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
