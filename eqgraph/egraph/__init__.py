"""The e-graph, in one package: everything that talks to egglog.

    adapter.py   the one module that runs egglog (text commands, panics, threads)
    pool.py      prepared egglog sessions reused between compiles, one pool per thread
    schema.py    egglog constructors generated from the op registry, and the prelude
    encode.py    a FunctionGraph as egglog terms, loaded in bulk
    saturate.py  running rulesets within ``Limits``: ``saturate`` builds the runner
    limits.py    ``Limits``, ``StopReason`` and the ``Report``
    runner.py    ``Runner``: the loop, the limits, the analyses' fixed points, the report
    schedule.py  schedulers: which rules a step runs and how many matches each may apply
    snapshot.py  ``EGraphData``: a read-only view of the e-graph for extraction and inspection

    sessions.py  ``session(rulesets)``: one graph's encode, saturate and snapshot, as a ``with`` scope;
                 ``optimize(graph, rulesets, limits)``: the three in one call

Rules themselves (parsing, naming, file:line, soundness checks) are ``eqgraph.rules``.
"""

from eqgraph.egraph.adapter import EgglogError, EgglogPanic
from eqgraph.egraph.encode import EncodedGraph
from eqgraph.egraph.saturate import DEFAULT_RULESETS, Limits, Report, TypeContradiction
from eqgraph.egraph.sessions import EGraphSession, Optimized, optimize, session
from eqgraph.egraph.snapshot import EGraphData

__all__ = ["DEFAULT_RULESETS", "EGraphData", "EGraphSession", "EgglogError", "EgglogPanic", "EncodedGraph",
           "Limits", "Optimized", "Report", "TypeContradiction", "optimize", "session"]
