"""One compile's e-graph, as a context manager:

    with egraph.session(rulesets) as s:
        encoded = s.encode(graph)
        report = s.saturate(limits)
        snapshot = s.snapshot()
    # the egglog session is given back here; ``snapshot`` (and ``report``) stay readable

Inside the ``with``, the scope holds a prepared session from this thread's pool
(egraph/pool.py) with the built-in rulesets already sent, and gives it back on the
way out whatever happened, so callers need no ``finally``. A compile inside a compile
(the pooled session is busy), and timing each rule (``time_rules``: every rule is sent
as a ruleset of its own, which a shared session must not hold), get a fresh session.
"""

from __future__ import annotations

import time
from typing import NamedTuple

from eqgraph.egraph import pool
from eqgraph.egraph.encode import EncodedGraph, declare_fixed, encode
from eqgraph.egraph.saturate import DEFAULT_RULESETS, Limits, Report, saturate
from eqgraph.egraph.snapshot import EGraphData
from eqgraph.rules.ruleset import RULESETS_DIR, load


class EGraphSession:
    """Encode one graph, saturate it, snapshot it (in that order); see ``session``."""

    def __init__(self, rulesets, time_rules: bool = False, reuse=None):
        self.rulesets = list(rulesets)
        self.time_rules = time_rules
        self._reuse = reuse
        self._base: pool.Base | None = None
        self.encoded: EncodedGraph | None = None

    def __enter__(self) -> EGraphSession:
        if not self.time_rules:
            self._base = pool.acquire(self._pooled_rulesets(), declare_fixed)   # None if this thread's is busy
        return self

    def __exit__(self, *exc) -> None:
        if self.encoded is not None:
            # the e-graph lives on in the snapshot; reading the session later must not show
            # another compile's e-graph
            self.encoded.session = _ClosedSession()
        if self._base is not None:
            base, self._base = self._base, None
            pool.release(base)

    def _pooled_rulesets(self) -> list:
        """The rulesets a pooled session holds: ``reuse``, by default the built-in ones among
        ``rulesets`` (a user's file may name the constructors of its own ops, which exist
        once its graph is encoded)."""
        if self._reuse is not None:
            return [load(spec) for spec in self._reuse]
        loaded = [load(spec) for spec in self.rulesets]
        return [r for r in loaded if r.source.startswith(str(RULESETS_DIR))]

    def encode(self, fgraph, facts: str = "all") -> EncodedGraph:
        """Put ``fgraph`` into the e-graph (egraph/encode.py); once per session."""
        if self.encoded is not None:
            raise RuntimeError("an e-graph session encodes one graph; open another session for the next")
        self.encoded = encode(fgraph, facts, base=self._base)
        return self.encoded

    def saturate(self, limits: Limits = Limits()) -> Report:
        """Run the rulesets on the encoded graph within ``limits`` (egraph/saturate.py)."""
        sent = self._base.rulesets if self._base is not None else ()
        return saturate(self._encoded(), self.rulesets, limits, time_rules=self.time_rules, sent=sent)

    def snapshot(self) -> EGraphData:
        """A read-only copy of the e-graph, for extraction and inspection (egraph/snapshot.py)."""
        return EGraphData(self._encoded())

    def _encoded(self) -> EncodedGraph:
        if self.encoded is None:
            raise RuntimeError("encode a graph in this session first: s.encode(graph)")
        return self.encoded


def session(rulesets=DEFAULT_RULESETS, *, time_rules: bool = False, reuse=None) -> EGraphSession:
    """A scope for one graph's e-graph (see the module docstring); use it in a ``with``.

    ``rulesets``: names, ``.egg`` paths, rule strings or Ruleset objects, run by ``saturate``.
    ``time_rules``: time each rewrite rule on its own (``Report.rule_seconds``), in a fresh session.
    ``reuse``: which of them a pooled session is prepared with (default: the built-in ones).
    """
    return EGraphSession(rulesets, time_rules=time_rules, reuse=reuse)


class Optimized(NamedTuple):
    """What ``optimize`` leaves: the encoded graph, the saturation report, the snapshot, and
    when saturation began (``time.perf_counter``; extraction shares saturation's time limit)."""

    encoded: EncodedGraph
    report: Report
    snapshot: EGraphData
    started: float


def optimize(fgraph, rulesets=DEFAULT_RULESETS, limits: Limits = Limits(), *, time_rules: bool = False) -> Optimized:
    """Encode ``fgraph``, saturate it within ``limits`` and snapshot the e-graph, in one session:
    the e-graph half that ``eqgraph.function``, ``rewrite`` and ``equivalent`` share."""
    with session(rulesets, time_rules=time_rules) as s:
        encoded = s.encode(fgraph)
        started = time.perf_counter()
        report = s.saturate(limits)
        return Optimized(encoded, report, s.snapshot(), started)


class _ClosedSession:
    """Stands in for the egglog session once the scope ended, so that reading it later fails
    clearly instead of showing another compile's e-graph."""

    def __getattr__(self, name):
        raise RuntimeError("this compile's egglog session was given back when its e-graph was snapshotted; "
                           "read the e-graph from its snapshot (f.stages.egraph) instead")
