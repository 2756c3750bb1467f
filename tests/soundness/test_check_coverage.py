"""The soundness checker compares general rules whose guards need more than the rule alone:
relations other rules of the file fill, values the guards compute, index inputs, operands of
one run-time shape. Each kind fails to compare (0 draws) if the checker loses it."""

import pytest

from eqgraph.soundness.check import check_rule, two_sides
from eqgraph.soundness.draws import Uncheckable
from eqgraph.rules.ruleset import builtin_names, load


def _rule(name):
    ruleset = load(name.split("/")[0])
    return next(r for r in ruleset.rules if r.name == name), ruleset


@pytest.mark.parametrize("name", [
    "indexing/index-add",                    # (broadcast-safe s t), filled by two layers of rules
    "indexing/slice-of-slice-to-end",        # bounds read off the facts, (unit-slice s a b end)
    "indexing/row-of-transpose",             # (= i (vec-get t 0)) on the right side
    "indexing/index-mul-constant",           # (= ns (ndim e)): the matched term's ndim
    "indexing/read-after-set-broadcast",     # (pads k n order): a fact table
    "indexing/index-exp-symbolic",           # a 0-d index input
    "indexing/take-exp",                     # an index array
    "gradclean/fill-add-same-shape",         # two operands of one run-time shape
    "stability/log-mean-exp",                # (new-axes n order), the size of a reduced axis
    "stability/log-mean-exp-vjp",            # the same, on the gradient's quotient
    "stability/log-mean-exp-vjp-2",          # over two axes
])
def test_a_general_rule_whose_guards_need_its_file_is_compared(name):
    rule, ruleset = _rule(name)
    assert check_rule(rule, ruleset, draws=30, seed=0) > 0


def test_the_general_rules_left_unchecked_are_those_the_checker_cannot_build():
    unchecked = set()
    for file in builtin_names():
        for rule in load(file).rules:
            if rule.kind == "rule" and two_sides(rule).lhs is not None:
                try:
                    check_rule(rule, load(file), draws=0)
                except Uncheckable:
                    unchecked.add(rule.name)
    assert unchecked == {
        "gradclean/shape-of-root", "gradclean/fill-of-root", "gradclean/sum-to-shape-of-root",  # a term's id
        "gradclean/shape-of-two-inputs", "gradclean/fill-of-two-inputs", "gradclean/sum-to-shape-of-two-inputs",
        "reductions/sum-sum", "reductions/mean-mean",          # a relation rules fill (joined-axes)
        "shapes/vector-entry", "shapes/vector-entry-from-end",  # a term the type rules find
        "shapes/static-size",                                   # a size types.egg proves
    }
