"""eqgraph: symbolic tensor graphs in the Aesara/Theano tradition, optimized by an e-graph.

    import eqgraph as eg
    import eqgraph.tensor as et
    x = et.dmatrix("x")
    f = eg.function([x], (x * 2).sum())
"""

from eqgraph import tensor as tensor
from eqgraph.settings import change_flags as change_flags, config as config
from eqgraph import terms as terms
from eqgraph.egraph import DEFAULT_RULESETS as DEFAULT_RULESETS, Limits as Limits
from eqgraph.egraph import EgglogError as EgglogError, EgglogPanic as EgglogPanic
from eqgraph.egraph import TypeContradiction as TypeContradiction
from eqgraph.exec.backends import BackendUnavailable as BackendUnavailable
from eqgraph.exec.dask.backend import ChunkedOpError as ChunkedOpError, DaskCostModel as DaskCostModel
from eqgraph.exec.debugmode import BadDestroyMap as BadDestroyMap, BadViewMap as BadViewMap
from eqgraph.exec.debugmode import DebugModeError as DebugModeError
from eqgraph.exec.node_errors import NodeError as NodeError
from eqgraph.tensor.conditional import ifelse as ifelse
from eqgraph.tensor.random import RandomStream as RandomStream
from eqgraph.tensor.sharedvar import SharedVariable as SharedVariable, shared as shared
from eqgraph.extract import CostModel as CostModel
from eqgraph.compile_io import In as In, Out as Out
from eqgraph.function import UnusedInputError as UnusedInputError, function as function
from eqgraph.from_function import FromFunctionOp as FromFunctionOp, as_op as as_op, wrap_py as wrap_py
from eqgraph import evaluate as _evaluate  # noqa: F401  (plugs the compiler into Variable.eval)
from eqgraph.grad import blockwise as _blockwise  # noqa: F401  (plugs the core VJPs into Blockwise.L_op)
from eqgraph.grad import (DisconnectedInputError as DisconnectedInputError, DisconnectedType as DisconnectedType,
                          GradientError as GradientError, Lop as Lop, NullType as NullType,
                          NullTypeGradError as NullTypeGradError, Rop as Rop, disconnected_grad as disconnected_grad,
                          grad as grad, grad_not_implemented as grad_not_implemented,
                          grad_undefined as grad_undefined, hessian as hessian, jacobian as jacobian,
                          zero_grad as zero_grad)
from eqgraph.inspect import equivalent as equivalent, rewrite as rewrite
from eqgraph.rules import RuleFileError as RuleFileError, load_rules as load_rules
from eqgraph.soundness import UnsoundRuleError as UnsoundRuleError, check_rules as check_rules
from eqgraph.loops import scan as scan, scan_checkpoints as scan_checkpoints, until as until
from eqgraph.terms.graph import GraphCycleError as GraphCycleError
from eqgraph.terms.printing import debugprint as debugprint, dprint as dprint, pprint as pprint
from eqgraph.testing import verify_grad as verify_grad

__version__ = "0.1.0"

__all__ = [
    "tensor", "terms",
    # compiling and running
    "function", "In", "Out", "UnusedInputError", "CostModel", "Limits", "BackendUnavailable", "NodeError", "DebugModeError",
    "BadDestroyMap", "BadViewMap",
    "ChunkedOpError", "DaskCostModel",
    "SharedVariable", "shared", "GraphCycleError", "ifelse", "RandomStream", "wrap_py", "as_op", "FromFunctionOp",
    # loops
    "scan", "scan_checkpoints", "until",
    # gradients
    "grad", "Lop", "Rop", "jacobian", "hessian", "verify_grad", "GradientError",
    "DisconnectedInputError", "DisconnectedType", "NullType", "NullTypeGradError",
    "disconnected_grad", "grad_not_implemented", "grad_undefined", "zero_grad",
    # rewriting and its rules
    "rewrite", "equivalent", "DEFAULT_RULESETS", "load_rules", "check_rules", "RuleFileError",
    "TypeContradiction", "UnsoundRuleError", "EgglogError", "EgglogPanic",
    # printing
    "debugprint", "dprint", "pprint",
    # settings
    "config", "change_flags",
]
