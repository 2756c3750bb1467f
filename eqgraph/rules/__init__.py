"""Rules as data: rule files read as s-expressions (``forms.py``), parsed, named and located by
file:line (``ruleset.py``), sent in both operand orders of Add and Mul (``orders.py``), their
patterns (``pattern.py``) and how many e-nodes their matches may add (``bounds.py``).

The e-graph that loads and runs them (encode, saturate, ``Limits``, ``Report``) is
``eqgraph.egraph``, a layer above; the soundness checker is ``eqgraph.soundness``.
"""

from eqgraph.rules.forms import RuleFileError
from eqgraph.rules.ruleset import Rule, Ruleset
from eqgraph.rules.ruleset import load as load_rules

__all__ = ["Rule", "RuleFileError", "Ruleset", "load_rules"]
