"""Bounded, truthful compiles: the node budget holds at every moment, the report says what the
e-graph held and why saturation stopped, and the seconds limit bounds extraction too."""

import importlib
import math
import time

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.egraph import adapter
from eqgraph.egraph.schema import BASE_CONSTRUCTORS

extract_module = importlib.import_module("eqgraph.extract.extraction")
function_module = importlib.import_module("eqgraph.function")

# associativity and commutativity: on a long sum the e-graph grows without bound
ASSOC_COMM = """
(rewrite (Add a b) (Add b a) :name "add-comm")
(birewrite (Add a (Add b c)) (Add (Add a b) c) :name "add-assoc")
"""


def long_sum(n=100):
    xs = [et.dvector(f"x{i}") for i in range(n)]
    total = xs[0]
    for x in xs[1:]:
        total = total + x
    return xs, total


@pytest.fixture
def egglog_counts(monkeypatch):
    """The term e-nodes egglog holds after every schedule it runs (not what the report says)."""
    counts = []
    run_schedule = adapter.Session.run_schedule

    def counting(session, schedule):
        result = run_schedule(session, schedule)
        sizes = session.sizes()
        counts.append(sum(n for name, n in sizes.items() if name[:1].isupper() or name in BASE_CONSTRUCTORS))
        return result

    monkeypatch.setattr(adapter.Session, "run_schedule", counting)
    return counts


def assert_sums(f, xs):
    values = [np.random.default_rng(i).normal(size=3) for i in range(len(xs))]
    np.testing.assert_allclose(f(*values), np.sum(values, axis=0), rtol=1e-12)


@pytest.mark.parametrize("nodes", [3_000, pytest.param(10_000, marks=pytest.mark.slow)])
def test_the_node_budget_holds_at_every_step_and_the_report_is_the_truth(egglog_counts, nodes):
    # egglog checks sizes only between iterations, and one iteration can overshoot the budget
    # several times over; the report must give the sizes that were kept
    xs, total = long_sum()
    f = eg.function(xs, total, rulesets=["types", ASSOC_COMM],
                    limits=eg.Limits(nodes=nodes, match_limit=10**7, seconds=60))
    report = f.stages.report
    assert max(egglog_counts) <= 1.25 * nodes
    assert report.stop_reason == "nodes"
    assert report.sizes[-1] == egglog_counts[-1]  # what extraction saw is what the report says
    assert report.sizes[-1] > report.sizes[0]     # it did grow, within the budget
    assert_sums(f, xs)


def test_a_graph_larger_than_the_budget_is_not_rewritten_and_says_so(egglog_counts):
    xs, total = long_sum(40)
    f = eg.function(xs, total, rulesets=["types", ASSOC_COMM], limits=eg.Limits(nodes=50))
    assert f.stages.report.stop_reason == "nodes"
    assert f.stages.report.sizes[-1] == f.stages.report.sizes[0]
    assert_sums(f, xs)


def test_when_match_limit_bans_every_rule_the_report_says_so():
    xs, total = long_sum(40)  # 39 additions: each rule has more than 10 matches
    f = eg.function(xs, total, rulesets=["types", ASSOC_COMM], limits=eg.Limits(match_limit=10, iterations=8))
    report = f.stages.report
    assert report.stop_reason == "banned"
    assert report.iterations == 1 and report.sizes == [report.sizes[0]] * 2
    assert "banned" in str(report)
    assert_sums(f, xs)


def test_a_rule_banned_later_still_ends_in_banned_not_iterations():
    xs, total = long_sum(12)
    f = eg.function(xs, total, rulesets=["types", ASSOC_COMM], limits=eg.Limits(match_limit=60, iterations=12))
    report = f.stages.report
    assert report.stop_reason == "banned"
    assert report.iterations < 12 and report.sizes[-1] == report.sizes[-2] > report.sizes[0]
    assert_sums(f, xs)


def test_extraction_keeps_the_cheapest_first_choice_when_time_runs_out(monkeypatch):
    # the search for a cheaper DAG keeps to the time limit too: on a large e-graph it could
    # otherwise run many times longer than the saturation before it
    xs, total = long_sum(30)
    kwargs = dict(rulesets=["types", ASSOC_COMM], limits=eg.Limits(nodes=3_000, match_limit=10**6))
    searched = eg.function(xs, total, **kwargs)
    assert searched.stages.extraction.stopped is None
    monkeypatch.setattr(extract_module, "clock", lambda: math.inf)  # Limits.seconds has run out
    f = eg.function(xs, total, **kwargs)
    assert "Limits.seconds ran out during the local search" in f.stages.extraction.stopped
    assert "extraction stopped early: Limits.seconds" in str(f.stages)
    assert f.stages.extraction.dag_cost >= searched.stages.extraction.dag_cost
    assert_sums(f, xs)


def test_exact_extraction_is_skipped_when_time_has_run_out(monkeypatch):
    pytest.importorskip("scipy")
    xs, total = long_sum(6)
    monkeypatch.setattr(extract_module, "clock", lambda: math.inf)
    f = eg.function(xs, total, rulesets=["types", ASSOC_COMM], exact_extraction=True)
    assert f.stages.extraction.exact.startswith("skipped: Limits.seconds ran out")
    assert f.stages.extraction.stopped
    assert_sums(f, xs)


def test_the_deadline_given_to_extraction_is_the_compiles_seconds_limit(monkeypatch):
    deadlines = []
    real_extract = function_module.extract
    monkeypatch.setattr(function_module, "extract",
                        lambda *args: deadlines.append(args[3]) or real_extract(*args))
    x = et.dvector("x")
    before = time.perf_counter()
    eg.function([x], et.exp(x), limits=eg.Limits(seconds=7.0))
    assert before + 7.0 <= deadlines[0] <= time.perf_counter() + 7.0


def test_the_fitting_match_limit_lets_in_the_fewest_matches_first_and_ties_together():
    from eqgraph.egraph.schedule import fitting_match_limit as _fitting_match_limit

    found = {"a": 10, "b": 10, "c": 50, "d=>": 3}
    new_nodes = {"a": 1, "b": 2, "c": 1, "d=>": 4}
    assert _fitting_match_limit(found, new_nodes, room=12, match_limit=100) == 3       # d: 12 e-nodes
    assert _fitting_match_limit(found, new_nodes, room=41, match_limit=100) == 3       # a and b come together
    assert _fitting_match_limit(found, new_nodes, room=42, match_limit=100) == 10
    assert _fitting_match_limit(found, new_nodes, room=10**6, match_limit=100) == 50
    assert _fitting_match_limit(found, new_nodes, room=10**6, match_limit=20) == 10   # c is over match_limit
    assert _fitting_match_limit(found, new_nodes, room=11, match_limit=100) == 0


def test_saturation_leaves_the_time_extraction_needs_within_the_seconds_limit():
    # before: saturation ran until its own prediction reached the limit, then the
    # cheapest-first extraction of a 51k e-node e-graph took seconds more
    from eqgraph.egraph.saturate import EXTRACTION_SECONDS_PER_ENODE

    xs, total = long_sum()
    limits = eg.Limits(nodes=10**6, seconds=0.5, match_limit=10**7)
    f = eg.function(xs, total, rulesets=["types", ASSOC_COMM], limits=limits)
    report = f.stages.report
    assert report.stop_reason == "seconds"
    assert EXTRACTION_SECONDS_PER_ENODE * report.sizes[-1] <= limits.seconds
    assert_sums(f, xs)


def test_the_node_budget_counts_constructor_terms_only():
    # rows of a relation or an analysis add no e-node: counted as nodes, gradclean's
    # input-roots rules were banned on a 20,000-node chain, which then stopped for "nodes"
    from eqgraph.rules.ruleset import parse_rules

    rules = parse_rules("""
(relation seen (T))
(rule ((= e (Exp x))) ((seen e) (set (ndim e) (set-of 1))) :name "rows")
(rule ((= e (Exp x))) ((union e (Mul x (Scalar 1.0 "float64" 1)))) :name "terms")
(rewrite (Log (Exp x)) (Add x (Scalar 0.0 "float64" 1)) :name "rhs")
""", "budget", "<test>")
    counts = {r.name.split("/")[-1]: r.max_new_nodes for r in rules}
    assert counts == {"rows": 0, "terms": 2, "rhs": 2}
