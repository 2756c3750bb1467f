"""Add and Mul without a commutativity rewrite: the encoder writes their operands in one
canonical order, every rule's query is sent in each operand order of its Add and Mul terms
(``rules/ruleset.py`` ``operand_orders``), and commute.egg unites a term with its swapped
form where both exist. So a pattern matches whichever order a term has, y * x built by a
rule meets x * y, and no e-node is made only to hold the other order."""

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.rules.orders import operand_orders
from eqgraph.rules.ruleset import parse_rules


def test_each_rule_is_sent_in_every_other_operand_order_with_its_guard_following():
    [rule] = parse_rules('(rewrite (Mul (Add a b) c) c :same-dtype c :name "r")\n', "mine", "<test>").rules
    variants = operand_orders(rule, rule.text)
    assert len(variants) == 3  # the sum, the product or both swapped
    assert any("(Mul c (Add b a))" in v and '"mine/r~' in v for v in variants)
    for v in variants:  # the :same-dtype guard looks up the left side the variant matched
        lhs = v.split(" ", 1)[1].split(" c :when")[0]
        assert f"(dtype {lhs})" in v
    [both] = parse_rules('(rule ((= e (Add a b)) (= f (Add b a))) ((union e f)) :name "u")\n', "m", "<t>").rules
    assert operand_orders(both, both.text) == []  # it names both orders itself


def test_a_rule_matches_either_order_a_term_was_encoded_in(tmp_path):
    (tmp_path / "mine.egg").write_text('(rewrite (Add (Exp a) (Log b)) (Sub (Exp a) (Neg (Log b))) :name "r")\n')
    x, y = et.dvector("x"), et.dvector("y")
    for out in (et.exp(x) + et.log(y), et.log(y) + et.exp(x)):
        report = eg.function([x, y], out, rulesets=["types", str(tmp_path / "mine.egg")]).stages.report
        assert report.matches["mine/r"] >= 1


def test_no_swapped_e_node_is_made_and_swapped_terms_are_one_e_class(tmp_path):
    x, y = et.dvector("x"), et.dvector("y")
    f = eg.function([x, y], [x * y, y * x, x + y])
    assert [n.op for n in f.stages.egraph.data.nodes.values()].count("Mul") == 1
    assert eg.equivalent(x + y, y + x) and eg.equivalent(et.exp(x) * y, y * et.exp(x))
    # a rule that builds the product in the other order: commute.egg unites the two
    (tmp_path / "swap.egg").write_text('(rewrite (Sub p q) (Mul q p) :name "pretend")\n')
    assert eg.equivalent(x - y, x * y, rulesets=["types", "commute", str(tmp_path / "swap.egg")])
    assert not eg.equivalent(x - y, x * y, rulesets=["types", str(tmp_path / "swap.egg")])
