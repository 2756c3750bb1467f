"""The e-graph compiler: encode/extract round trip, rules as data, limits, costs, inspection."""

import importlib
import time

import numpy as np
import pytest
from compile_time import chain_graph  # bench/: the tests compile the graph the benchmark times
from same_type_op import SameTypeOp

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.egraph.encode import encode
from eqgraph.egraph.saturate import saturate
from eqgraph.egraph.snapshot import EGraphData
from eqgraph.extract import CostModel, extract
from eqgraph.terms import FunctionGraph, equal_computations

extract_module = importlib.import_module("eqgraph.extract.extraction")


def ops_of(f):
    return [str(n.op) for n in f.stages.optimized.toposort()]


@pytest.mark.parametrize("build", [
    lambda x, y: (et.exp(x @ y.T) * 2.0).sum(axis=1),
    lambda x, y: et.concatenate([x, y], axis=0)[1:, ::2].max(),
    lambda x, y: et.switch(x > 0, x, et.zeros_like(x)) + y.T.dimshuffle(1, 0),
    lambda x, y: et.set_subtensor(x[0], y[1]).reshape((-1,)),
])
def test_decoding_an_unrewritten_egraph_gives_back_the_graph(build):
    x, y = et.dmatrix("x"), et.dmatrix("y")
    graph = FunctionGraph([x, y], [build(x, y)])
    encoded = encode(graph)
    saturate(encoded, [])
    result = extract(EGraphData(encoded)).fgraph
    assert equal_computations(result.outputs, graph.outputs, result.inputs, graph.inputs)


def test_rulesets_empty_compiles_without_rewriting():
    x = et.dvector("x")
    f = eg.function([x], et.log(1 + x), rulesets=[])
    assert "Elemwise{log}" in ops_of(f) and f.stages.report.matches == {}
    g = eg.function([x], et.log(1 + x))
    assert ops_of(g) == ["Elemwise{log1p}"]
    np.testing.assert_allclose(f(np.full(2, 1e-10)), g(np.full(2, 1e-10)), rtol=1e-6)


def test_starter_rules():
    x, y = et.dvector("x"), et.dvector("y")
    assert ops_of(eg.function([x], x * 1 - 0)) == []
    assert ops_of(eg.function([x], x + 0)) == ["Elemwise{add}"]  # -0.0 + 0 is +0.0: kept for floats
    i = et.lvector("i")
    assert ops_of(eg.function([i], i * 1 + 0)) == []
    # x*y/y -> x (Aesara's example), broadcast kept: for a y proven nonzero and finite, or assumed so
    assert ops_of(eg.function([x], x * 2.0 / 2.0)) == []   # a size-1 constant: x has the shape
    assert ops_of(eg.function([x, y], x * y / y, assume_finite=True)) == ["Elemwise{second}"]
    assert "Elemwise{true_div}" in ops_of(eg.function([x, y], x * y / y))   # y = 0 gives NaN
    assert ops_of(eg.function([x], et.log(1 + et.exp(x)))) == ["Elemwise{softplus}"]
    big = et.TensorType("float64", (100_000,))("big")
    assert "Elemwise{pow}" not in ops_of(eg.function([big], big + big ** 10))  # muls win on big arrays
    small = et.TensorType("float64", (2,))("small")
    assert "Elemwise{pow}" in ops_of(eg.function([small], small + small ** 10))  # one pow wins on tiny ones
    data = np.linspace(0.5, 1.5, 100_000)
    np.testing.assert_allclose(eg.function([big], big + big ** 10)(data), data + data ** 10)


def test_matrix_chain_order_follows_shapes():
    A = et.TensorType("float64", (1000, 1000))("A")
    B = et.TensorType("float64", (1000, 1000))("B")
    v = et.TensorType("float64", (1000,))("v")
    f = eg.function([A, B, v], A @ B @ v)
    [outer] = f.stages.optimized.outputs
    assert outer.owner.inputs[0].name == "A" and outer.owner.inputs[1].owner is not None  # A @ (B @ v)
    u = et.TensorType("float64", (1000,))("u")
    C = et.TensorType("float64", (1000, 3))("C")
    g = eg.function([u, B, C], u @ (B @ C))
    [outer] = g.stages.optimized.outputs
    assert outer.owner.inputs[1].name == "C"  # (u @ B) @ C: the other order is chosen
    rng = np.random.default_rng(0)
    a, b, c = rng.normal(size=(1000, 1000)), rng.normal(size=(1000, 1000)), rng.normal(size=1000)
    np.testing.assert_allclose(f(a, b, c), a @ b @ c, rtol=1e-8)
    slow = eg.function([A, B, v], A @ B @ v, rulesets=[])
    assert f.stages.extraction.dag_cost * 20 < slow.stages.extraction.dag_cost


def test_large_elementwise_graph_compiles_within_default_limits():
    x, y = chain_graph(et, 1000)  # 5,000 nodes; bench/compile_time.py measures 20,000 and more
    f = eg.function([x], y)
    report = f.stages.report
    assert report.stop_reason == "saturated" and report.sizes[-1] < eg.Limits().nodes
    g = eg.function([x], y, rulesets=[])
    np.testing.assert_allclose(f(np.linspace(-1, 1, 5)), g(np.linspace(-1, 1, 5)))


@pytest.mark.slow
def test_20k_node_graph_compiles_within_default_limits():
    x, y = chain_graph(et, 4000)
    f = eg.function([x], y)
    assert f.stages.report.stop_reason == "saturated"
    assert len(f.stages.graph.apply_nodes) == 20_000


USER_RULES = """
;; a user's rule file: square roots of squares (for non-negative x only!)
(rewrite (Sqrt (Sqr x)) (Abs x) :name "sqrt-of-square")
"""


def test_user_rule_file_fires_and_shows_in_report_and_inspection(tmp_path):
    path = tmp_path / "mine.egg"
    path.write_text(USER_RULES)
    x = et.dvector("x")
    y = et.sqrt(et.sqr(x))
    f = eg.function([x], y, rulesets=[str(path)])
    report = f.stages.report
    assert set(report.fired()) == {"mine/sqrt-of-square"}
    assert report.rules["mine/sqrt-of-square"].source == (str(path), 3)
    assert "mine/sqrt-of-square" in str(report) and f"{path}:3" in str(report)
    view = f.stages.egraph.eclass(y)
    chosen = view.chosen
    assert chosen.term.startswith("(Abs") and [r.name for r in chosen.rules] == ["mine/sqrt-of-square"]
    assert any(m.from_graph and m.term.startswith("(Sqrt") for m in view.members)
    assert ops_of(f) == ["Elemwise{abs}"]
    np.testing.assert_array_equal(f(np.array([-2.0, 3.0])), [2.0, 3.0])


def test_rule_strings_and_combined_rulesets():
    x = et.dvector("x")
    f = eg.function([x], et.sqrt(et.sqr(x)) * 1.0, rulesets=["types", "fold", "algebra", USER_RULES])
    assert ops_of(f) == ["Elemwise{abs}"]


@pytest.mark.parametrize("text, line, message", [
    ("(rewrite (Exp x) x :name \"a\")\n(rewrite (Log x)\n  x", 2, "unbalanced"),
    ("\n\n(rewrite (Exp x) (Frobnicate x))", 3, "Frobnicate"),
    ("(rewrite (Exp x) x :ruleset other)", 1, "ruleset"),
    ("(rewrite (Exp x) x)\n)", 2, "unexpected"),
])
def test_malformed_rule_files_name_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "broken.egg"
    path.write_text(text)
    x = et.dvector("x")
    with pytest.raises(eg.RuleFileError, match=rf"{path}:{line}:.*{message}"):
        eg.function([x], et.exp(x), rulesets=[str(path)])


def test_unknown_ruleset_name():
    x = et.dvector("x")
    with pytest.raises(ValueError, match="No built-in ruleset named 'nope'.*algebra"):
        eg.function([x], x * 2, rulesets=["nope"])


def test_type_contradiction_names_the_rule():
    x = et.dvector("x")
    with pytest.raises(eg.TypeContradiction, match="number of dimensions.*bad-sum"):
        eg.function([x], x.sum(), rulesets=["types", '(rewrite (Sum x axis k acc) x :name "bad-sum")'])
    a, b = et.TensorType("float64", (1,))("a"), et.TensorType("float64", (3,))("b")
    with pytest.raises(eg.TypeContradiction, match="size of axis 0.*drop-b"):
        eg.function([a, b], a + b, rulesets=["types", '(rewrite (Add a b) a :name "drop-b")'])


def test_unions_narrow_types_and_outputs_keep_the_users_type():
    x = et.dvector("x")
    narrow = et.specify_shape(x, (3,))
    f = eg.function([x], narrow * 2.0, rulesets=['(rewrite (SpecifyShape x s) x :name "forget-shape")'])
    assert [k.split("/")[1] for k in f.stages.report.fired()] == ["forget-shape"]
    assert f.stages.optimized.outputs[0].type.shape == (3,)  # at least as narrow as the user's
    with pytest.raises(ValueError, match="SpecifyShape"):
        f(np.ones(4))
    np.testing.assert_array_equal(f(np.ones(3)), [2.0, 2.0, 2.0])


EXPLOSIVE = """
;; associativity, commutativity and distributivity: the e-graph grows without bound
(rewrite (Add a b) (Add b a) :name "add-comm")
(rewrite (Mul a b) (Mul b a) :name "mul-comm")
(birewrite (Add a (Add b c)) (Add (Add a b) c) :name "add-assoc")
(birewrite (Mul a (Mul b c)) (Mul (Mul a b) c) :name "mul-assoc")
(birewrite (Mul a (Add b c)) (Add (Mul a b) (Mul a c)) :name "distribute")
"""


def explosive_graph(n=1000):
    rng = np.random.default_rng(0)
    xs = [et.dvector(f"x{i}") for i in range(8)]
    terms = list(xs)
    for i in range(n):
        a, b = terms[-1], terms[-2 - rng.integers(min(len(terms) - 1, 6))]
        terms.append(a + b if i % 2 else a * xs[(i // 2) % 8])
    return xs, terms[-1]


@pytest.mark.parametrize("limits", [
    eg.Limits(nodes=10_000, seconds=60, match_limit=10**6),
    eg.Limits(nodes=10**6, seconds=0.5, match_limit=10**6),
    eg.Limits(iterations=3, seconds=100, match_limit=10**6),   # time enough on a loaded machine
])
def test_explosive_ruleset_stops_within_limits_and_stays_correct(limits):
    xs, out = explosive_graph()
    start = time.perf_counter()
    f = eg.function(xs, out, rulesets=[EXPLOSIVE], limits=limits)
    report = f.stages.report
    assert len(f.stages.graph.apply_nodes) == 1000
    assert max(report.sizes) <= 1.25 * limits.nodes
    assert report.seconds <= 1.2 * limits.seconds
    assert report.iterations <= limits.iterations
    expected = {10_000: "nodes", 0.5: "seconds"}.get(limits.nodes if limits.nodes == 10_000 else limits.seconds,
                                                    "iterations")
    assert report.stop_reason == expected
    reference = eg.function(xs, out, rulesets=[])
    values = [np.random.default_rng(i).normal(size=3) * 0.1 for i in range(8)]
    np.testing.assert_allclose(f(*values), reference(*values), rtol=1e-9)
    assert time.perf_counter() - start < 120  # a hang guard, not a performance target


def test_report_contents():
    x = et.dvector("x")
    f = eg.function([x], et.log(1 + x * 1.0))
    report = f.stages.report
    assert report.stop_reason == "saturated" and report.iterations >= 1
    assert report.sizes[0] > 0 and len(report.sizes) == report.iterations + 1
    assert report.matches["stability/log1p"] >= 1 and report.matches["algebra/mul-one"] >= 1
    assert set(report.ruleset_seconds) >= {"types", "algebra", "stability"}
    assert "stability/log1p" in str(report)


def test_profiled_compiles_time_every_rule_with_the_wall_clock():
    x, y = et.dvector("x"), et.dvector("y")
    out = et.log(1 + x * 1.0) + x * y / y
    f = eg.function([x, y], out, profile=True)
    report = f.stages.report
    assert set(report.rule_seconds) == {r for r in report.rules if not r.startswith(("types/", "fold/"))}
    assert all(seconds > 0 for seconds in report.rule_seconds.values())
    assert "wall ms" in str(report) and report.fired()["stability/log1p"] >= 1
    plain = eg.function([x, y], out)
    assert plain.stages.report.rule_seconds == {}
    assert [str(n.op) for n in f.stages.optimized.toposort()] == [str(n.op) for n in plain.stages.optimized.toposort()]


def test_rewrite_and_equivalent():
    x = et.dvector("x")
    y = eg.rewrite(et.log(1 + x))
    assert str(y.owner.op) == "Elemwise{log1p}" and y.owner.inputs[0] is x
    ys = eg.rewrite([x * 1.0, et.exp(x)], rulesets=["types", "fold", "algebra"])
    assert ys[0] is x
    assert eg.equivalent(et.log(1 + x), et.log1p(x))
    assert not eg.equivalent(x * 2.0, x + x)  # not proven: no rule relates them
    assert eg.equivalent(x, x)


def test_egraph_inspection_dot_and_html(tmp_path):
    A, B, C = (et.TensorType("float64", (50, 50))(n) for n in "ABC")
    v = et.TensorType("float64", (50,))("v")
    out = A @ B @ C @ v
    f = eg.function([A, B, C, v], out)
    view = f.stages.egraph
    ec = view.eclass(out)
    assert len(ec.members) >= 2 and sum(m.chosen for m in ec.members) == 1
    assert ec.chosen.cost == min(m.cost for m in ec.members)
    assert any("matmul/matmul-assoc" in [r.name for r in m.rules] for m in ec.members)
    assert "matmul/matmul-assoc" in view.fired()
    assert "T-" in str(ec) and "*" in str(ec)
    dot = view.to_dot(out, depth=1)
    assert dot.startswith("digraph") and "MatMul" in dot and "fillcolor" in dot
    page = view.to_html(tmp_path / "egraph.html", var=out)
    assert (tmp_path / "egraph.html").read_text() == page
    assert "<html>" in page and "matmul-assoc" in page and "digraph" in page and "http" not in page


def test_user_op_with_props_is_encodable():
    class Scale(SameTypeOp):
        __props__ = ("factor", "label")

        def __init__(self, factor, label):
            self.factor, self.label = factor, label

        def perform(self, node, inputs, out):
            out[0][0] = inputs[0] * self.factor

    x = et.dvector("x")
    y = Scale(2.5, "s")(Scale(0.5, "t")(x) * 1.0)
    f = eg.function([x], y, rulesets=["types", "fold", "algebra",
                                      '(rewrite (Scale (Scale x a l1) b l2) (Scale x a l1) :name "drop-outer")'])
    assert any(k.endswith("drop-outer") for k in f.stages.report.fired())
    np.testing.assert_array_equal(f(np.ones(2)), [0.5, 0.5])  # the rule (wrongly, on purpose) dropped 2.5
    z = Scale(2.5, "s")(Scale(2, "t")(x))  # factor 2 is an i64, 2.5 an f64: two constructors
    g = eg.function([x], z)
    assert {"Scale", "Scale_1"} <= set(g.stages.encoded.schema.by_name)
    np.testing.assert_array_equal(g(np.ones(2)), [5.0, 5.0])


class _FixedPrices(CostModel):
    """Prices by op name alone, so the test states the trade-off exactly."""

    PRICES = {"Exp": 100.0, "Add": 1.0, "Mul": 5.0}

    def node_cost(self, enode, op, in_types, out_type, child_ops=()):
        return self.PRICES.get(enode.op, 0.0)


def test_extraction_pays_a_shared_subterm_once(monkeypatch):
    # exp(x + x) == exp(x) * exp(x): alone, add + exp (101) beats mul + exp (105); next to an
    # output exp(x), the product reuses it and costs only the mul (105 in all, against 201)
    rule = '(rewrite (Exp (Add x x)) (Mul (Exp x) (Exp x)) :name "exp-double")'
    x = et.dvector("x")
    value = np.array([0.5, 1.0])

    def compile_(outputs):
        return eg.function([x], outputs, rulesets=["types", rule], cost_model=_FixedPrices())

    shared = compile_([et.exp(x), et.exp(x + x)])
    assert shared.stages.extraction.dag_cost == 105.0
    assert sorted(str(n.op) for n in shared.stages.optimized.toposort()) == ["Elemwise{exp}", "Elemwise{mul}"]
    np.testing.assert_allclose(shared(value)[1], np.exp(2 * value))
    view = shared.stages.egraph.eclass(shared.stages.graph.outputs[1])
    assert "chosen for sharing" in str(view.chosen) and "Mul" in view.chosen.term
    alone = compile_(et.exp(x + x))
    assert alone.stages.extraction.dag_cost == 101.0
    np.testing.assert_allclose(alone(value), np.exp(2 * value))
    # the cheapest-first pass alone prices the shared exp(x) again: the local search is what fixes it
    monkeypatch.setattr(extract_module._SharingRefiner, "run", lambda self, passes=3: None)
    assert compile_([et.exp(x), et.exp(x + x)]).stages.extraction.dag_cost == 201.0


def test_exact_extraction_finds_the_same_shared_optimum():
    pytest.importorskip("scipy")
    rule = '(rewrite (Exp (Add x x)) (Mul (Exp x) (Exp x)) :name "exp-double")'
    x = et.dvector("x")
    for outputs, best in (([et.exp(x), et.exp(x + x)], 105.0), (et.exp(x + x), 101.0)):
        f = eg.function([x], outputs, rulesets=["types", rule], cost_model=_FixedPrices(), exact_extraction=True)
        assert f.stages.extraction.dag_cost == best


def _two_inputs(expression):
    x, y = et.dvector("x"), et.dvector("y")
    return [x, y], expression(x, y)


@pytest.mark.parametrize("build", [
    lambda: _two_inputs(lambda x, y: et.log(1 + x * 1.0) + y * y / y),
    lambda: _two_inputs(lambda x, y: (x + x**10) * et.exp(y) + et.exp(y)),
    lambda: explosive_graph(8),
], ids=["starter", "powers", "explosive"])
def test_exact_extraction_is_never_dearer_and_computes_the_same(build):
    pytest.importorskip("scipy")
    inputs, out = build()
    kwargs = dict(rulesets=["types", "fold", "algebra", "stability", EXPLOSIVE], limits=eg.Limits(nodes=200),
                  on_unused_input="ignore")
    fast = eg.function(inputs, out, **kwargs)
    exact = eg.function(inputs, out, exact_extraction=True, **kwargs)
    assert exact.stages.extraction.exact == "optimal"
    assert exact.stages.extraction.dag_cost <= fast.stages.extraction.dag_cost + 1e-6
    values = [np.random.default_rng(i).uniform(0.5, 1.5, size=3) for i in range(len(inputs))]
    np.testing.assert_allclose(exact(*values), fast(*values), rtol=1e-9)


def test_exact_extraction_says_why_it_cannot_run(monkeypatch):
    x = et.dvector("x")
    monkeypatch.setitem(__import__("sys").modules, "scipy.optimize", None)  # as if SciPy were missing
    with pytest.raises(eg.extract.ExactExtractionUnavailable, match="needs SciPy"):
        eg.function([x], et.exp(x), exact_extraction=True)


def test_a_reused_session_comes_back_clean_after_kept_snapshots():
    # near the node budget an iteration runs inside push/pop and, when kept, leaves its
    # snapshot on egglog's stack; the next compile on the same base session must not see it
    inputs, out = explosive_graph(24)
    for _ in range(2):
        f = eg.function(inputs, out, rulesets=["types", EXPLOSIVE], limits=eg.Limits(nodes=3000))
    assert f.stages.report.stop_reason in ("nodes", "saturated", "iterations")


def test_a_weak_constant_extracted_alone_keeps_its_dtype():
    # found by the fuzz test: mul-one and second-scalar leave -(1.0) where the 1.0 is the
    # user's weak constant, recast to float32 by x * 1.0; alone, make_node promoted it to float64
    x = et.fscalar("x")
    out = eg.function([x], -et.ones_like(x * 1.0))(np.float32(0.3))
    assert out.dtype == np.float32 and out == -1.0


def test_a_rule_building_an_elementwise_term_of_mixed_ndim_is_named():
    # elementwise operands share one ndim; sub-self once built Second(x, 0-d zero), and a
    # later rule then put a 0-d quotient into a vector's e-class (fuzz graph 11697)
    x = et.dvector("x")
    bad = '(rewrite (Exp x) (Exp (Add x (Scalar 1.0 "float64" 0))) :name "zero-d-one")'
    with pytest.raises(eg.TypeContradiction, match="operands differ in number of dimensions.*zero-d-one"):
        eg.function([x], et.exp(x), rulesets=["types", bad])


def test_a_profiled_step_runs_its_one_rule_alone(monkeypatch):
    # a one-rule step named the whole ruleset (it had all of its one rule), so each "rule's"
    # wall time was its ruleset's, and its first rule's step applied every rule
    from eqgraph.egraph import adapter

    schedules = []
    run_schedule = adapter.Session.run_schedule
    monkeypatch.setattr(adapter.Session, "run_schedule",
                        lambda session, schedule: schedules.append(schedule) or run_schedule(session, schedule))
    x = et.dvector("x")
    f = eg.function([x], et.log(1 + x * 1.0), profile=True)
    algebra = [s for s in schedules if "algebra" in s]
    assert algebra and all("algebra__" in s for s in algebra), algebra[:3]
    assert f.stages.report.fired()["algebra/mul-one"] >= 1
