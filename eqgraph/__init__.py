"""eqgraph: symbolic tensor graphs in the Aesara/Theano tradition, optimized by an e-graph.

    import eqgraph as eg
    import eqgraph.tensor as et
    x = et.dmatrix("x")
    f = eg.function([x], (x * 2).sum())
"""

from eqgraph import tensor as tensor
from eqgraph import terms as terms
from eqgraph.exec.backends import BackendUnavailable as BackendUnavailable
from eqgraph.exec.shared import SharedVariable as SharedVariable, shared as shared
from eqgraph.extract import CostModel as CostModel
from eqgraph.function import UnusedInputError as UnusedInputError, function as function
from eqgraph.inspect import equivalent as equivalent, rewrite as rewrite
from eqgraph.rules import DEFAULT_RULESETS as DEFAULT_RULESETS, Limits as Limits
from eqgraph.rules import RuleFileError as RuleFileError, TypeContradiction as TypeContradiction
from eqgraph.rules import load_rules as load_rules
from eqgraph.terms.printing import debugprint as debugprint, dprint as dprint

__version__ = "0.1.0"
