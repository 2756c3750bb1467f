"""The runner and its schedulers: the bound that lets rules run as egglog's plain step
changes how a step searches, never what saturation reaches."""

import pytest
from compile_time import chain_graph  # bench/: the graph the compile-time benchmark times

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.egraph.encode import encode
from eqgraph.egraph.limits import StopReason
from eqgraph.egraph.runner import Runner
from eqgraph.egraph.saturate import load_rulesets
from eqgraph.egraph.schedule import BackoffScheduler, BoundScheduler, Outcome
from eqgraph.egraph.sending import send_rules
from eqgraph.terms import FunctionGraph


def saturated(inputs, outputs, scheduler, limits=eg.Limits()):
    encoded = encode(FunctionGraph(inputs, outputs, clone=False))   # a fresh session
    loaded = load_rulesets(eg.DEFAULT_RULESETS)
    for ruleset in loaded:
        send_rules(encoded.session, ruleset)
    return Runner(encoded, loaded, limits, scheduler=scheduler).run()


def stabilised():
    x, y = et.dvector("x"), et.dvector("y")
    return [x, y], [et.log(1 + et.exp(x * 1.0)) + x * y / y]


@pytest.mark.parametrize("graph", [stabilised, lambda: chain_graph(et, 20)], ids=["stability", "chain"])
def test_the_plain_steps_the_bound_allows_reach_what_back_off_steps_reach(graph):
    inputs, outputs = graph()
    outputs = outputs if isinstance(outputs, list) else [outputs]
    inputs = inputs if isinstance(inputs, list) else [inputs]
    bound = saturated(inputs, outputs, BoundScheduler())
    backoff = saturated(inputs, outputs, BackoffScheduler())
    assert bound.stop_reason == backoff.stop_reason == "saturated"
    assert bound.sizes == backoff.sizes
    # a back-off step searches the whole e-graph, so it finds old matches again: the same
    # rules fire, more often
    assert bound.fired().keys() == backoff.fired().keys()


def test_a_tight_node_budget_stops_both_schedulers_for_nodes_within_it():
    inputs, outputs = stabilised()
    unbounded = saturated(inputs, outputs, BoundScheduler())
    budget = unbounded.sizes[0] + 1
    assert unbounded.peak > budget
    for scheduler in (BoundScheduler(), BackoffScheduler()):
        report = saturated(inputs, outputs, scheduler, eg.Limits(nodes=budget))
        assert report.stop_reason == StopReason.NODES and report.peak <= budget


def test_the_latest_budget_to_hold_a_rule_back_is_the_one_reported():
    held = Outcome(False, False, StopReason.NODES).then(Outcome(True, True, StopReason.SECONDS))
    assert held == Outcome(True, True, StopReason.SECONDS)
    assert Outcome(True, False, StopReason.NODES).then(Outcome()) == Outcome(True, False, StopReason.NODES)


def test_stop_reasons_read_and_compare_as_their_names():
    assert StopReason.SECONDS == "seconds" and f"{StopReason.BANNED}" == "banned"
    assert {str(r) for r in StopReason} == {"saturated", "banned", "nodes", "iterations", "seconds"}
