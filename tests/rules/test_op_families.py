"""Rule files name op families (@unary, @binary): one rule, copied per op of the registry."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.rules.families import families
from eqgraph.rules.ruleset import RuleFileError, load

UNARY = [name for name, op in et.ELEMWISE_OPS.items() if op.nin == 1]
BINARY = [name for name, op in et.ELEMWISE_OPS.items() if op.nin == 2]


def test_the_families_are_the_registry_s_ops_by_number_of_inputs():
    assert [ctor for ctor, _ in families()["unary"]][:3] == ["Neg", "Abs", "Sign"]
    assert len(families()["unary"]) == len(UNARY) and len(families()["binary"]) == len(BINARY)


def test_a_family_rule_is_one_rule_per_op_named_after_it_on_its_own_line():
    text = ('(rule ((= e (DimShuffle (@unary x) n o)))\n'
            '      ((union e (@unary (DimShuffle x n o)))) :name "ds-@unary")\n'
            '(rewrite (Neg (Neg x)) x :name "neg-neg")\n')
    rules = load(text).rules
    assert len(rules) == len(UNARY) + 1
    names = [r.name.split("/")[1] for r in rules]
    assert names[:2] == ["ds-neg", "ds-abs"] and "ds-tri-gamma" in names and names[-1] == "neg-neg"
    assert {r.source[1] for r in rules[:-1]} == {1} and rules[-1].source[1] == 3
    assert "(DimShuffle (Exp x) n o)" in next(r.text for r in rules if r.name.endswith("ds-exp"))


def test_a_comment_inside_a_family_rule_does_not_swallow_its_copies():
    text = '(rewrite (DimShuffle (@binary x y) n o)  ; moved below\n (@binary x y) :name "b-@binary")'
    assert len(load(text).rules) == len(BINARY)


@pytest.mark.parametrize("text, why", [
    ('(rewrite (@unery x) x :name "r")', "@unery is no op family; families: @unary, @binary"),
    ('(rewrite (@unary (@binary x y)) x :name "r")', "names @binary, @unary"),
])
def test_a_family_that_is_none_is_refused_with_its_line(text, why):
    with pytest.raises(RuleFileError, match=why) as err:
        load("\n" + text)
    assert str(err.value).startswith("<string>:2:")


def test_the_text_outside_family_rules_is_left_as_it_is():
    text = ';; a comment with @unary in it\n(rewrite (Neg (Neg x)) x :name "neg-neg")\n'
    ruleset = load(text)
    assert len(ruleset.rules) == 1 and ';; a comment with @unary in it\n' in ruleset.program


@pytest.mark.parametrize("name", ["sin", "arctan", "erf", "floor", "isnan", "log1p", "cosh"])
def test_every_unary_op_moves_below_indexing(name):
    # indexing.egg's index-@unary: f(x)[2:5] computes three f's, for every op of one input
    x = et.dvector("x")
    out = et.ELEMWISE_OPS[name](x)[2:5]
    f = eg.function([x], out)
    first = f.stages.optimized.toposort()[0]
    assert str(first.op).startswith("Subtensor"), [str(n.op) for n in f.stages.optimized.toposort()]
    value = np.linspace(0.1, 0.9, 8)
    np.testing.assert_allclose(f(value), eg.function([x], out, rulesets=[])(value))


@pytest.mark.parametrize("name", ["pow", "maximum", "logaddexp", "lt"])
def test_every_binary_op_moves_below_indexing_where_no_operand_broadcasts(name):
    x = et.dvector("x")
    out = et.ELEMWISE_OPS[name](et.exp(x), x)[1:3]   # exp(x) and x: one shape at run time
    f = eg.function([x], out)
    assert str(f.stages.optimized.toposort()[0].op).startswith("Subtensor")
    value = np.linspace(0.1, 0.9, 6)
    np.testing.assert_allclose(f(value), eg.function([x], out, rulesets=[])(value))
