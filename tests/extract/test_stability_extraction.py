"""Instability is a property of the extracted term: declared unstable compositions lose to a
stable form at any size and however they are shared, and what cannot be avoided is reported."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.extract.unstable import unstable_nodes, unstable_patterns
from eqgraph.rules.forms import RuleFileError

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def ops(f) -> list:
    return [getattr(n.op, "name", type(n.op).__name__) for n in f.stages.optimized.apply_nodes]


@pytest.mark.parametrize("n", [10, 1_000_000])
def test_a_shared_unstable_subterm_is_not_kept_at_any_size(n):
    # 1 - sigmoid(z) is an output of its own and the argument of the log: sharing it made
    # log(1 - sigmoid(z)) nearly free, and a fixed penalty lost to the size of the tensors
    z = et.TensorType("float64", (n,))("z")
    one_minus = 1 - et.sigmoid(z)
    f = eg.function([z], [et.log(one_minus), one_minus])
    assert f.stages.extraction.unstable == []
    assert "sub" not in ops(f) and "log" not in ops(f)
    zv = np.full(n, 40.0)
    loss, rest = f(zv)
    np.testing.assert_allclose(loss[:3], -40.0, rtol=1e-15)
    np.testing.assert_allclose(rest[:3], np.exp(-40.0) / (1 + np.exp(-40.0)), rtol=1e-12)


def test_logistic_regression_loss_beside_its_gradient_is_stable():
    x, t, w = et.dmatrix("x"), et.dvector("t"), et.dvector("w")
    p = et.sigmoid(x @ w)
    loss = -(t * et.log(p) + (1 - t) * et.log(1 - p)).mean()
    f = eg.function([x, t, w], [loss, eg.grad(loss, w)])
    assert f.stages.extraction.unstable == []
    # ordinary data: the naive loss is off by ~1e-7 relative here, the stable one is not
    rng = np.random.default_rng(0)
    xv, tv, wv = rng.normal(size=(50, 3)) * 8, (rng.random(50) > 0.5) * 1.0, np.array([2.0, -1.0, 0.5])
    z = xv @ wv
    want = np.mean(tv * np.logaddexp(0, -z) + (1 - tv) * np.logaddexp(0, z))
    np.testing.assert_allclose(f(xv, tv, wv)[0], want, rtol=1e-14)


def test_the_declarations_are_data_in_the_rule_files():
    found = {p.text: p for p in unstable_patterns(["stability"])}
    p = found["(Sub (Scalar 1.0 d n) (Sigmoid x))"]
    assert p.source[0].endswith("stability.egg") and p.source[1] > 0 and "37" in p.why
    assert "rulesets/stability.egg:" in str(p).replace("\\", "/")
    assert any(q.source[0].endswith("gradclean.egg") for q in unstable_patterns())


SINH_RULE = """
;; eqgraph: unstable (Sinh x)   ; pretend: to show that a declaration steers extraction
(rewrite (Sinh x) (Mul (Scalar 0.5 "float64" 1) (Sub (Exp x) (Exp (Neg x))))
         :when ((= (ndim x) (set-of 1)) (= (dtype x) (set-of "float64"))) :name "sinh-exp")
"""


def test_a_users_rule_file_declares_its_own_unstable_compositions():
    x = et.dvector("x")
    plain = eg.function([x], et.sinh(x), rulesets=[*eg.DEFAULT_RULESETS, SINH_RULE.replace(";; eqgraph:", ";;")])
    steered = eg.function([x], et.sinh(x), rulesets=[*eg.DEFAULT_RULESETS, SINH_RULE])
    assert ops(plain) == ["sinh"]            # the cheaper form, when nothing is declared
    assert "sinh" not in ops(steered) and "exp" in ops(steered)
    np.testing.assert_allclose(steered(np.array([0.5, 2.0])), np.sinh([0.5, 2.0]), rtol=1e-14)


def test_a_declaration_on_the_first_line_counts():
    # the program sent to egglog starts with the ruleset's declaration, on line 1
    [p] = unstable_patterns([";; eqgraph: unstable (Sinh x)   ; pretend\n"])
    assert p.text == "(Sinh x)" and p.source == ("<string>", 1)


def test_a_malformed_declaration_names_its_line():
    with pytest.raises(RuleFileError, match=r"<string>:3: an unstable declaration"):
        unstable_patterns(['(rewrite (Neg (Neg x)) x :name "nn")\n\n;; eqgraph: unstable Log Add\n'])


UNAVOIDABLE = {
    # 1.0 + x of an int8 x is a float64 sum of an int8 operand: the log1p rule keeps the operand's
    # dtype, so it does not apply (log(1 + x) of an int8 is log of a Cast, no declared pattern)
    "mixed dtypes": (et.bvector, lambda x: et.log(1.0 + x), [], "(Log (Add x (Scalar 1.0 d n)))"),
    # declared by a user's rule file that gives no stable form: unavoidable whatever the rules do
    "no stable form": (et.dvector, et.sinh, [";; eqgraph: unstable (Sinh x)   ; pretend\n"], "(Sinh x)"),
}


@pytest.mark.parametrize("case", UNAVOIDABLE)
def test_an_unavoidable_unstable_composition_is_reported_and_costs_no_time(case):
    make_input, build, extra_rules, declared = UNAVOIDABLE[case]
    x = make_input("x")
    f = eg.function([x], build(x), rulesets=[*eg.DEFAULT_RULESETS, *extra_rules])
    [(eclass, pattern)] = f.stages.extraction.unstable
    assert pattern.text == declared  # the encoder puts constants last
    assert f.stages.extraction.dag_cost < 1e5  # the ranking weight is not an estimate of time


@pytest.mark.parametrize("declared", ["(Mul (Exp x) y)", "(Mul y (Exp x))"])
def test_a_declaration_matches_either_operand_order_of_add_and_mul(declared):
    # a product is in the e-graph in whichever order the encoder or a rule wrote it: a
    # declaration written for one order let extraction keep the other (s * ((a/s)*p ...)
    # escaped (Mul (Add ...) s), and the logistic loss's gradient was NaN where sigmoid underflows)
    x, y = et.dvector("x"), et.dvector("y")
    f = eg.function([x, y], et.exp(x) * y)
    data = f.stages.egraph.data
    products = {i for i, n in data.nodes.items() if n.op == "Mul"}
    assert len(products) == 1  # one order only: no rule makes the swapped e-node
    patterns = unstable_patterns([f"\n;; eqgraph: unstable {declared}   ; pretend\n"])
    assert set(unstable_nodes(data, patterns)) == products
