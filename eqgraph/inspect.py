"""Optimize without compiling: ``rewrite`` (the cheapest equivalent graph) and ``equivalent``
(did saturation prove two graphs equal?), and ``explore`` (``rewrite``'s e-graph, in the
interactive explorer page of ``eqgraph/explore``).

A leaf: nothing in the compiler imports it. The e-graph view that ``f.stages.egraph`` opens
lives in ``eqgraph/extract/view.py`` (the compiler's stages hold it) and is re-exported here,
with the pattern parser its queries use, so that inspection has one import.
"""

from __future__ import annotations

from eqgraph import egraph
from eqgraph.exec.backends import get_backend
from eqgraph.explore import explore_graph as explore  # rewrite's e-graph, in the explorer page
from eqgraph.extract.extraction import extract
from eqgraph.extract.view import EClass as EClass, EGraphView as EGraphView, Member as Member
from eqgraph.extract.view import explaining_rules as explaining_rules, matcho as matcho
from eqgraph.rules.pattern import parse_pattern as parse_pattern  # what EGraphView's queries parse
from eqgraph.terms.basic import Constant, Variable
from eqgraph.terms.fgraph import FunctionGraph
from eqgraph.terms.graph import graph_inputs


# -- optimize without compiling --------------------------------------------------------------------
def _free_inputs(outputs) -> list:
    return [v for v in graph_inputs(outputs) if not isinstance(v, Constant)]


def _saturated(outputs, rulesets, limits):
    """Encode ``outputs`` over their free inputs, saturate, and snapshot the e-graph."""
    graph = FunctionGraph(_free_inputs(outputs), outputs, clone=False)
    rulesets = egraph.DEFAULT_RULESETS if rulesets is None else rulesets
    return egraph.optimize(graph, rulesets, limits or egraph.Limits()).snapshot


def rewrite(outputs, rulesets=None, limits=None, cost_model=None):
    """The optimized form of ``outputs`` (a variable or a list), over the same inputs; by
    default priced as ``eqgraph.function`` prices it on the NumPy backend (with Numba loop
    costs where Numba is installed), so both choose the same graph."""
    single = isinstance(outputs, Variable)
    outs = [outputs] if single else list(outputs)
    cost_model = get_backend("numpy").cost_model() if cost_model is None else cost_model
    result = extract(_saturated(outs, rulesets, limits), cost_model).fgraph.outputs
    return result[0] if single else list(result)


def equivalent(a, b, rulesets=None, limits=None) -> bool:
    """True if saturation proved ``a`` and ``b`` equal (False means: not proven)."""
    if a is b:
        return True
    data = _saturated([a, b], rulesets, limits)
    return data.class_of(a) == data.class_of(b)
