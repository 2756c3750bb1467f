"""Rules as data: rule files parsed, named and located by file:line (``ruleset.py``), their
patterns (``pattern.py``) and the soundness checker (``check.py``).

The e-graph they run on (encode, saturate, ``Limits``, ``Report``) is ``eqgraph.egraph``;
the names that used to be imported from here still are, with a DeprecationWarning.
"""

import importlib
import warnings

from eqgraph.rules.ruleset import Rule, RuleFileError, Ruleset
from eqgraph.rules.ruleset import load as load_rules

__all__ = ["Rule", "RuleFileError", "Ruleset", "load_rules"]

#: names that moved to eqgraph.egraph: name -> its module now
_MOVED = {"EncodedGraph": "eqgraph.egraph.encode", "encode": "eqgraph.egraph.encode",
          "DEFAULT_RULESETS": "eqgraph.egraph.saturate", "Limits": "eqgraph.egraph.saturate",
          "Report": "eqgraph.egraph.saturate", "TypeContradiction": "eqgraph.egraph.saturate",
          "saturate": "eqgraph.egraph.saturate"}


def __getattr__(name: str):
    if name not in _MOVED:
        raise AttributeError(f"module 'eqgraph.rules' has no attribute {name!r}")
    warnings.warn(f"eqgraph.rules.{name} moved to {_MOVED[name]}.{name}", DeprecationWarning, stacklevel=2)
    return getattr(importlib.import_module(_MOVED[name]), name)
