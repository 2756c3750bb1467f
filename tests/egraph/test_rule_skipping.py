"""A saturation step runs only the rules that may match: a rule whose query names a
constructor with no e-node yet is left out (``Rule.may_match``, egraph/runner.py), since
a back-off step searches the whole e-graph for each rule it runs. Leaving rules out must never
lose a match: a rule runs as soon as another step built what it needs."""

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph import egraph
from eqgraph.egraph.runner import Runner
from eqgraph.egraph.schedule import Outcome, prepared
from eqgraph.rules.ruleset import Ruleset, parse_rules
from eqgraph.terms.fgraph import FunctionGraph


def _rules(text):
    return {rule.name.split("/", 1)[1]: rule for rule in parse_rules(text, "mine", "<test>").rules}


def test_a_rule_may_match_only_where_every_constructor_of_its_query_has_an_e_node():
    rules = _rules('(rewrite (Log (Add x (Scalar 1.0 d n))) (Log1p x) :name "log1p")\n'
                   '(birewrite (Exp (Log x)) (Sqr x) :name "both")\n'
                   '(rule ((= e (Mul a b)) (= b (Exp c))) ((union e a)) :name "query")\n'
                   '(rewrite (Neg x) x :when ((= (dtype x) (dtype (Sqrt x)))) :name "guarded")\n')
    assert rules["log1p"].may_match(set()) and rules["log1p"].may_match({"Exp", "Log1p"})
    assert not rules["log1p"].may_match({"Scalar"}) and not rules["log1p"].may_match({"Log"})
    assert rules["both"].may_match({"Sqr"}) and rules["both"].may_match({"Exp"})  # one direction is enough
    assert not rules["both"].may_match({"Log", "Sqr"})
    assert not rules["query"].may_match({"Exp"}) and rules["query"].may_match({"Add"})
    assert not rules["guarded"].may_match({"Sqrt"})  # the guard's term is looked up, not built


def test_a_ruleset_whose_rules_cannot_match_is_not_run():
    x = et.dvector("x")
    report = eg.function([x], x * 2.0, rulesets=["types", "matmul", "algebra"]).stages.report
    assert "algebra" in report.ruleset_seconds and "matmul" not in report.ruleset_seconds


def test_a_rule_runs_once_another_step_built_what_it_needs(tmp_path):
    (tmp_path / "make.egg").write_text('(rewrite (Neg (Neg x)) (Exp x) :name "make-exp")\n')
    (tmp_path / "use.egg").write_text('(rewrite (Exp x) (Sqr x) :name "use-exp")\n')
    x = et.dvector("x")
    for order in (["make", "use"], ["use", "make"]):  # later in the same iteration, or the next one
        rulesets = ["types"] + [str(tmp_path / f"{name}.egg") for name in order]
        report = eg.function([x], -(-x), rulesets=rulesets).stages.report
        assert report.matches["make/make-exp"] >= 1 and report.matches["use/use-exp"] >= 1, order


def test_a_session_may_saturate_again_with_the_same_rules_left_out():
    x = et.dvector("x")
    with egraph.session() as s:  # the default schedule: some rules of its rulesets cannot match here
        s.encode(FunctionGraph([x], [et.log(1 + x * 1.0) * 2.0]))
        first, again = s.saturate(), s.saturate()
    assert first.stop_reason == again.stop_reason == "saturated" and again.sizes == [first.sizes[-1]] * 2


def _saturated(graph, rulesets=egraph.DEFAULT_RULESETS):
    """(the rows of every table, the dtypes and static sizes) once ``graph`` is saturated."""
    with egraph.session(rulesets) as s:
        s.encode(graph)
        s.saturate()
        sizes, data = s.encoded.session.sizes(), s.snapshot()
    return sizes, dict(data.dtype), dict(data.ndim), {c: dict(d) for c, d in data.dims.items()}


def _whole_analyses(monkeypatch):
    """Run every analysis whole, with every rule it holds."""
    def whole(runner, analysis):
        return Outcome(runner.run_schedule(f"(saturate (run {analysis.name}))", analysis.name).updated)
    monkeypatch.setattr(Runner, "_fixpoint", whole)


def test_an_analysis_runs_only_the_rules_whose_constructors_have_e_nodes():
    x = et.dvector("x")
    report = eg.function([x], x * 2.0).stages.report
    assert "types/elemwise-mul" in report.egglog_seconds       # egglog times every rule it ran
    assert not [r for r in report.egglog_seconds if r.startswith(("types/solve", "types/sqrt"))]


def test_an_analysis_left_partial_finds_what_the_whole_analysis_finds(monkeypatch):
    X, w, b = et.dmatrix("X"), et.dvector("w"), et.dscalar("b")
    loss = et.log(1.0 + et.exp(-(X @ w + b))).mean()
    graph = FunctionGraph([X, w, b], [loss, *eg.grad(loss, [w, b])])
    partial = _saturated(graph)
    _whole_analyses(monkeypatch)
    assert partial == _saturated(graph)


def test_an_analysis_right_after_a_step_types_the_constructors_the_step_built(tmp_path, monkeypatch):
    # the sizes were read before the step, when the graph had no Exp: the type rules of Exp
    # must run all the same, or the new e-class has no dtype
    (tmp_path / "make.egg").write_text('(rewrite (Neg (Neg x)) (Exp x) :name "make-exp")\n')
    x = et.dvector("x")
    rulesets = ["types", str(tmp_path / "make.egg")]
    partial = _saturated(FunctionGraph([x], [-(-x)]), rulesets)
    _whole_analyses(monkeypatch)
    assert partial == _saturated(FunctionGraph([x], [-(-x)]), rulesets)


def test_an_analysis_runs_a_rule_on_a_relation_that_another_of_its_rules_fills():
    rules = _rules('(relation seen (T))\n(relation twice (T))\n(relation never (T))\n'
                   '(rule ((= e (Exp x))) ((seen e)) :name "fill")\n'
                   '(rule ((seen e)) ((twice e)) :name "read")\n'
                   '(rule ((never e) (seen e)) ((twice e)) :name "blocked")\n')
    held = prepared(Ruleset("mine", list(rules.values())))
    firing = [rule.name.split("/")[1] for _, rule in held.may_fire(frozenset({"seen", "twice", "never"}))]
    assert firing == ["fill", "read"]
    assert held.may_fire(frozenset({"Exp", "seen", "twice", "never"})) == []


def test_an_analysis_reads_what_an_analysis_before_it_wrote(tmp_path, monkeypatch):
    # "after" reads known-nonneg, which has no row until types runs in the same round
    (tmp_path / "after.egg").write_text('(relation nonneg-seen (T))\n'
                                        '(rule ((known-nonneg e)) ((nonneg-seen e)) :name "after")\n')
    x = et.dvector("x")
    rulesets = ["types", (str(tmp_path / "after.egg"), "saturate")]
    partial = _saturated(FunctionGraph([x], [et.exp(x)]), rulesets)
    assert partial[0]["nonneg-seen"] > 0
    _whole_analyses(monkeypatch)
    assert partial == _saturated(FunctionGraph([x], [et.exp(x)]), rulesets)
