"""The e-graph, in one package: everything that talks to egglog.

    adapter.py   the one module that runs egglog (text commands, panics, threads)
    pool.py      prepared egglog sessions reused between compiles, one pool per thread
    schema.py    egglog constructors generated from the op registry, and the prelude
    encode.py    a FunctionGraph as egglog terms, loaded in bulk
    saturate.py  running rulesets within ``Limits``; the ``Report``
    snapshot.py  ``EGraphData``: a read-only view of the e-graph for extraction and inspection

Rules themselves (parsing, naming, file:line, soundness checks) are ``eqgraph.rules``.
"""

from eqgraph.egraph.adapter import EgglogError, EgglogPanic
from eqgraph.egraph.encode import EncodedGraph
from eqgraph.egraph.saturate import DEFAULT_RULESETS, Limits, Report, TypeContradiction
from eqgraph.egraph.snapshot import EGraphData

__all__ = ["DEFAULT_RULESETS", "EGraphData", "EgglogError", "EgglogPanic", "EncodedGraph", "Limits", "Report",
           "TypeContradiction"]
