"""rulesets/assertions.egg and the soundness checker on run-time checks: a check goes only where
its conditions are proven, and the checker refuses any rule that drops one otherwise."""

import re
from pathlib import Path

import pytest

import eqgraph as eg
from eqgraph.egraph.saturate import DEFAULT_RULESETS
from eqgraph.soundness import UnsoundRuleError

RULESETS = Path(__file__).resolve().parents[2] / "rulesets"


def test_the_assertion_rules_are_sound_and_each_is_checked():
    report = eg.check_rules(str(RULESETS / "assertions.egg"), draws=30)
    assert "no counterexample" in str(report) and "never matched" not in str(report)


def test_assertions_are_in_the_default_schedule():
    assert ("assertions", "step") in DEFAULT_RULESETS


@pytest.mark.parametrize("rule, problem", [
    ('(rewrite (CheckAndRaise_2 v c exc msg) v :name "drop-check")', "the right side raises nothing"),
    ('(rewrite (CheckAndRaise_3 v c d exc msg) (CheckAndRaise_2 v d exc msg) :name "drop-condition")',
     "the right side raises nothing"),
    ('(rewrite (CheckAndRaise_2 v c exc msg) (CheckAndRaise_2 v c exc "other") :name "new-message")',
     "the right side's is another"),
])
def test_the_checker_refuses_a_rule_that_loses_a_check(rule, problem):
    with pytest.raises(UnsoundRuleError, match=re.escape(problem)):
        eg.check_rules(f"(ruleset user)\n{rule}", draws=30)


def test_no_other_default_rule_names_a_check():
    """Only assertions.egg may rewrite a check's own term (rules inside its value and conditions
    see other terms): a rule elsewhere matching CheckAndRaise could union it with its value."""
    for name, _ in DEFAULT_RULESETS:
        if name != "assertions":
            assert "CheckAndRaise" not in (RULESETS / f"{name}.egg").read_text(), name
