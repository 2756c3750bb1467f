"""Graph objects with Aesara's contracts: Type, Variable, Constant, Apply, Op, FunctionGraph."""

from eqgraph.terms.basic import Apply as Apply, Constant as Constant, Variable as Variable
from eqgraph.terms.fgraph import FunctionGraph as FunctionGraph, MissingInputError as MissingInputError
from eqgraph.terms.graph import (
    ancestors as ancestors,
    applys_between as applys_between,
    clone as clone,
    clone_get_equiv as clone_get_equiv,
    clone_replace as clone_replace,
    GraphCycleError as GraphCycleError,
    equal_computations as equal_computations,
    graph_inputs as graph_inputs,
    toposort as toposort,
    vars_between as vars_between,
)
from eqgraph.terms.op import Op as Op
from eqgraph.terms.printing import debugprint as debugprint, dprint as dprint
from eqgraph.terms.type import Type as Type

__all__ = [
    "Type", "Variable", "Constant", "Apply", "Op", "FunctionGraph", "MissingInputError", "GraphCycleError",
    "ancestors", "applys_between", "clone", "clone_get_equiv", "clone_replace", "equal_computations",
    "graph_inputs", "toposort", "vars_between", "debugprint", "dprint",
]
