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
from eqgraph.function import UnusedInputError as UnusedInputError, function as function
from eqgraph.terms.printing import debugprint as debugprint, dprint as dprint

__version__ = "0.1.0"
