"""Rules as data: rule files parsed, named and located by file:line (``ruleset.py``), their
patterns (``pattern.py``) and the soundness checker (``check.py``).

The e-graph they run on (encode, saturate, ``Limits``, ``Report``) is ``eqgraph.egraph``.
"""

from eqgraph.rules.ruleset import Rule, RuleFileError, Ruleset
from eqgraph.rules.ruleset import load as load_rules

__all__ = ["Rule", "RuleFileError", "Ruleset", "load_rules"]
