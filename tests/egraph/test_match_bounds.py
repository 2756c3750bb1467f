"""Plain saturation steps (egraph/schedule.py ``_split_by_bound``): a step runs as egglog's
plain, incremental ``run`` only where the e-graph's table sizes prove that no rule can exceed
the match limit and that the step fits in the node budget (rules/bounds.py). The bound must
hold for every built-in rule on real e-graphs, and plain steps must reach the same e-graph."""

import math

import numpy as np
import pytest
from fuzz_graphs import make_graph

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph import egraph
from eqgraph.egraph import adapter
from eqgraph.egraph.saturate import DEFAULT_RULESETS, Limits, load_rulesets
from eqgraph.rules import bounds
from eqgraph.terms.fgraph import FunctionGraph
from eqgraph.terms.printing import debugprint


def query(*facts):
    return bounds.Query(list(facts))


def test_a_query_is_bounded_by_the_tables_it_must_enumerate():
    sizes = {"Mul": 5, "Scalar": 3, "ndim": 40, "dtype": 40, "Exp": 0}
    # the guard's lookups are functions of bound variables: no factor
    assert query("(Mul x (Scalar 1.0 d n))", "(= (set-of n) (ndim x))", "(= (dtype x) (dtype x))") \
        .most_matches(sizes) == 15
    assert query("(Mul x (Exp y))").most_matches(sizes) == 0            # an empty table: no match
    assert query("(Mul (Mul a b) c)").most_matches(sizes) == 25
    # a term named twice is one lookup once its operands are bound
    assert query("(Mul x y)", "(= e (Mul x y))").most_matches(sizes) == 5
    # unification: e is bound by the Mul row, so (ndim e) is a lookup, not a scan
    assert query("(= e (Mul x y))", "(= s (ndim e))").most_matches(sizes) == 5
    # a relation or analysis whose inputs nothing else binds is enumerated
    assert query("(= s (ndim e))").most_matches(sizes) == 40
    # a primitive cannot be enumerated: nothing binds n, so there is no bound
    assert query("(= 1 (set-length n))").most_matches(sizes) == math.inf


def _egglog_rule_names(report_names, rule):
    """The matches egglog counted for ``rule``: itself, its operand orders and directions."""
    return [count for name, count in report_names.items()
            if name == rule.name or name.startswith((f"{rule.name}~", f"{rule.name}=>", f"{rule.name}<="))]


@pytest.mark.parametrize("graph", ["logistic regression"] + [f"fuzz {seed}" for seed in (7, 21, 58, 130, 409)])
def test_every_built_in_rule_has_at_most_its_bound_in_matches(graph):
    # count each rule's matches in partly saturated e-graphs: a back-off step with match
    # limit 0 searches the whole e-graph, bans every rule and applies nothing
    if graph == "logistic regression":
        x, y, w, b = et.dmatrix("x"), et.dvector("y"), et.dvector("w"), et.dscalar("b")
        p = et.sigmoid(x @ w + b)
        loss = -(y * et.log(p) + (1 - y) * et.log(1 - p)).mean()
        inputs, outputs = [x, y, w, b], [loss, *eg.grad(loss, [w, b])]
    else:
        made = make_graph(int(graph.split()[1]))
        inputs, outputs = [s for s, _ in made.inputs], [t.sym for t in made.outputs]
    checked = 0
    for iterations in (0, 2):
        with egraph.session() as s:
            encoded = s.encode(FunctionGraph(inputs, outputs))
            s.saturate(Limits(iterations=iterations))
            session = encoded.session
            sizes = session.sizes()
            for ruleset in [r for r in load_rulesets(DEFAULT_RULESETS) if r.mode == "step"]:
                for step, rule in zip(ruleset.rule_rulesets(), ruleset.rules):
                    [out] = session.run(f"(run-schedule (let-scheduler bo (back-off :match-limit 0)) "
                                        f"(repeat 1 (run-with bo {step})))")
                    found = {name: max(r.num_matches for r in reports)
                             for it in out.report.iterations
                             for name, reports in it.rule_set_report.rule_reports.items()}
                    most, _ = bounds.most_matches_and_nodes(rule, ruleset.swapped_ops(), sizes)
                    counts = _egglog_rule_names(found, rule)
                    assert max(counts, default=0) <= most, (rule, counts, most)
                    checked += bool(counts and max(counts))
    assert checked >= 3  # the bound was tested on rules that do match


@pytest.fixture
def schedules(monkeypatch):
    """Every schedule saturation sends to egglog."""
    sent = []
    run_schedule = adapter.Session.run_schedule

    def spy(session, schedule):
        sent.append(schedule)
        return run_schedule(session, schedule)

    monkeypatch.setattr(adapter.Session, "run_schedule", spy)
    return sent


def test_a_small_graph_saturates_in_plain_steps_only(schedules):
    x = et.dvector("x")
    eg.function([x], et.log(1 + et.exp(x)) * 1.0)
    steps = [s for s in schedules if not s.startswith("(saturate")]  # the analyses always run plainly
    assert steps and all(s.startswith("(run ") for s in steps)


def test_rules_the_bound_cannot_clear_are_searched_and_banned_as_before(schedules):
    xs = [et.dvector(f"x{i}") for i in range(40)]
    total = xs[0]
    for v in xs[1:]:
        total = total + v
    rules = '(rewrite (Add a b) (Add b a) :name "add-comm")\n'
    f = eg.function(xs, total, rulesets=["types", rules], limits=eg.Limits(match_limit=10, iterations=8))
    assert f.stages.report.stop_reason == "banned"  # 39 additions: more than 10 matches
    assert any("back-off :match-limit 10" in s for s in schedules)
    assert not any(s.startswith("(run ") for s in schedules)


def _never_plain(monkeypatch):
    monkeypatch.setattr(bounds, "most_matches_and_nodes", lambda rule, swapped, sizes: (math.inf, math.inf))


@pytest.mark.parametrize("seed", [3, 7, 21, 58, 409])
def test_plain_steps_reach_the_e_graph_back_off_steps_reach(monkeypatch, seed):
    graph = make_graph(seed)
    inputs, outputs = [s for s, _ in graph.inputs], [t.sym for t in graph.outputs]
    plain = eg.function(inputs, outputs, on_unused_input="ignore")
    with monkeypatch.context() as m:
        _never_plain(m)
        searched = eg.function(inputs, outputs, on_unused_input="ignore")
    assert plain.stages.report.sizes == searched.stages.report.sizes
    assert plain.stages.report.stop_reason == searched.stages.report.stop_reason
    assert debugprint(plain.stages.optimized, file="str") == debugprint(searched.stages.optimized, file="str")
    values = [v.copy() for _, v in graph.inputs]
    with np.errstate(all="ignore"):
        for got, want in zip(plain(*values), searched(*values)):
            np.testing.assert_array_equal(got, want)



def test_a_compile_names_its_unions_of_rules_as_the_last_one_did(monkeypatch):
    # egglog keeps a report entry per ruleset name for good: numbered anew on every compile,
    # the names piled up in the pooled e-graph that every compile clones
    declared = []
    run = adapter.Session.run

    def spy(session, text, filename=None):
        if text.startswith("(unstable-combined-ruleset"):
            declared.append(text.split()[1])
        return run(session, text, filename)

    monkeypatch.setattr(adapter.Session, "run", spy)
    x = et.dvector("x")
    names = []
    for _ in range(2):
        declared.clear()
        eg.function([x], et.log(1 + et.exp(x)) * 1.0 + x * 0.0)
        names.append(list(declared))
    assert names[0] and names[0] == names[1]
