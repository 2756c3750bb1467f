"""The soundness checker of rewrite rules (``eqgraph.check_rules``): both sides of a rule built
for drawn operands, proven one e-class by the rule alone, and evaluated to the same values.

    check.py   checking a rule file, a rule, one direction of it; the report and the errors
    draws.py   what is drawn: bindings of a pattern's variables, and the ndim and dtype mixes

It builds graphs and runs the e-graph, so it sits above ``eqgraph.egraph``; the rules it reads
(``eqgraph.rules``) sit below.
"""

from eqgraph.soundness.check import CheckReport, UnsoundRuleError, check_rule, check_rules
from eqgraph.soundness.draws import Uncheckable

__all__ = ["CheckReport", "Uncheckable", "UnsoundRuleError", "check_rule", "check_rules"]
