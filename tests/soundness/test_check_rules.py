"""eqgraph.check_rules and ``python -m eqgraph check-rules``: users check their own rule files."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import eqgraph as eg
from eqgraph.soundness.draws import DOMAIN_VALUES
from eqgraph.rules.forms import RuleFileError
from eqgraph.rules.ruleset import DOMAINS

ROOT = Path(__file__).resolve().parents[2]

GOOD = """\
;; sound rewrites of a user's own
(rewrite (Neg (Neg x)) x :name "double-negation")
(birewrite (Add x y) (Add y x) :name "add-commutes")
"""

BAD = """\
;; x * y -> x: wrong for every y but 1
(rewrite (Neg (Neg x)) x :name "double-negation")

(rewrite (Mul x y) x :name "drop-factor")
"""


def test_a_sound_file_passes_with_a_report(tmp_path):
    path = tmp_path / "mine.egg"
    path.write_text(GOOD)
    report = eg.check_rules(path, draws=20)
    assert set(report.checked) == {"mine/double-negation", "mine/add-commutes"}
    assert all(n > 0 for n in report.checked.values()) and not report.unmatched
    text = str(report)
    assert "2 rewrites checked" in text and "mine/add-commutes" in text and str(path) in text


def test_an_unsound_rule_is_named_with_its_line_and_a_counterexample(tmp_path):
    path = tmp_path / "mine.egg"
    path.write_text(BAD)
    with pytest.raises(eg.UnsoundRuleError) as caught:
        eg.check_rules(str(path), draws=20)
    message = str(caught.value)
    assert message.startswith(f"{path}:4: rule mine/drop-factor is unsound")
    assert "inputs:" in message and "left side:" in message and "right side:" in message
    assert caught.value.rule.name == "mine/drop-factor"


def test_rule_text_is_checked_too():
    with pytest.raises(eg.UnsoundRuleError, match=r"<string>:1: .* is unsound"):
        eg.check_rules("(rewrite (Mul x y) x)", draws=20)


def test_a_rule_whose_guard_never_holds_is_reported_unmatched():
    report = eg.check_rules('(rewrite (Neg x) x :when ((= (ndim x) (set-of 7))) :name "never")', draws=10)
    assert report.checked == {report.unmatched[0]: 0} and "never matched" in str(report)


def test_a_constructor_that_is_not_a_builtin_op_is_reported_not_checked():
    report = eg.check_rules('(rewrite (MyOp x) x :name "mine")', draws=5)
    assert "MyOp" in report.unchecked[next(iter(report.unchecked))]
    assert "not checked" in str(report)


def test_a_shipped_file_passes():
    # every shipped rule, with more draws: tests/soundness/test_soundness.py
    report = eg.check_rules("matmul", draws=30)
    assert len(report.checked) == 3 and not report.unchecked


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "eqgraph", "check-rules", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_cli_passes_a_sound_file_and_fails_an_unsound_one(tmp_path):
    good, bad = tmp_path / "good.egg", tmp_path / "bad.egg"
    good.write_text(GOOD)
    bad.write_text(BAD)
    ok = _cli(str(good), "--draws", "10")
    assert ok.returncode == 0, ok.stderr
    assert "2 rewrites checked" in ok.stdout
    failed = _cli(str(bad), "--draws", "10")
    assert failed.returncode == 1
    assert f"{bad}:4: rule bad/drop-factor is unsound" in failed.stderr


def test_cli_reports_a_missing_file():
    result = _cli("no/such/file.egg")
    assert result.returncode == 2 and "does not exist" in result.stderr


def test_every_mix_of_dtypes_is_drawn_within_two_rounds():
    # the dtypes of operands (and of constants in the pattern) are a schedule, not luck: a rule
    # wrong for one mix (x float64 over an int64 constant) meets it within 2 * 4**n draws
    import itertools

    from eqgraph.soundness.draws import DTYPES, _dtype_mixes

    for n in (1, 2, 3):
        first = 4 ** n  # one pass over the ndim mixes of n operands: one dtype for all
        drawn = list(itertools.islice(_dtype_mixes(n, np.random.default_rng(0), first), first + 2 * len(DTYPES) ** n))
        assert all(len(set(mix)) == 1 for mix in drawn[:first])
        assert set(drawn[first:]) == set(itertools.product(DTYPES, repeat=n))
        assert all(len(set(mix)) == 1 for mix in drawn[first::2])  # then every other one: one dtype


def test_the_dtypes_of_constants_in_a_pattern_are_drawn_with_the_operands():
    from eqgraph.soundness.draws import _dtype_variables
    from eqgraph.rules.pattern import parse_pattern

    variables: dict = {}
    pattern = parse_pattern("(TrueDiv (Cast x e) (Scalar c d n))", variables)
    assert [str(v).lstrip("~") for v in _dtype_variables(pattern)] == ["e", "d"]


# -- :domain: operands a rule's left side needs, drawn where random values almost never land ----
CHOLESKY_STACK = """\
(rewrite (Solve (MatMul (Cholesky A true) (DimShuffle (Cholesky A true) 3 (vec-of 0 2 1))) b "gen" lo false false false)
         (Solve (Cholesky A true) (Solve (Cholesky A true) b "gen" true true false false) "gen" true true {trans} false)
         :when ((= nb (ndim b)) (= 1 (set-length nb)) (>= (set-get nb 0) {min_b}))
         {domain} :exception reassociation :name "cholesky-stack")
"""
# (a solve sums its products in another order than the product it replaces: with inf entries of
# b the two differ, the documented exception of docs/numerics.md, checked on finite values)


def _stack_rule(trans="true", min_b=2, domain=":domain (positive-definite A)"):
    return CHOLESKY_STACK.format(trans=trans, min_b=min_b, domain=domain)


def test_a_domain_makes_the_checker_draw_stacks_of_positive_definite_matrices():
    [with_domain] = eg.check_rules(_stack_rule(), draws=60).checked.values()
    [without] = eg.check_rules(_stack_rule(domain=""), draws=60).checked.values()
    # random stacks are almost never positive definite: without it the rule is hardly compared
    assert with_domain >= 10 and without <= 3, (with_domain, without)
    # so a wrong stack rule (L.T @ L for L @ L.T) passed unseen without its domain
    [wrong_compared] = eg.check_rules(_stack_rule(trans="false", domain=""), draws=60).checked.values()
    assert wrong_compared == 0


@pytest.mark.parametrize("wrong, why", [({"trans": "false"}, "L.T @ L instead of L @ L.T"),
                                        ({"min_b": 1}, "a vector b: one vector per matrix, read as one matrix")])
def test_a_wrong_cholesky_stack_rule_is_caught_with_its_domain(wrong, why):
    with pytest.raises(eg.UnsoundRuleError, match="cholesky-stack"):
        eg.check_rules(_stack_rule(**wrong), draws=60)


def test_a_domain_names_a_known_kind_and_a_tensor_of_the_left_side():
    assert set(DOMAIN_VALUES) == set(DOMAINS)  # every kind a rule may name is drawn
    with pytest.raises(RuleFileError, match=":domain belongs to a rewrite"):
        eg.check_rules('(rewrite (Cholesky A true) A :domain (invertible A) :name "d1")')
    with pytest.raises(ValueError, match="no tensor of its left side"):
        eg.check_rules('(rewrite (Cholesky A true) (Cholesky A true) :domain (positive-definite B) :name "d2")')
    [rule] = eg.load_rules('(rewrite (Neg (Neg A)) A :domain (positive-definite A) :name "d3")').rules
    assert rule.domain == (("positive-definite", "A"),) and ":domain" not in rule.text


def test_an_unsound_rule_that_merges_types_raises_the_unsound_rule_error_alone():
    """The TypeContradiction that gave the rule away is in the message, not chained before it
    ("During handling of the above exception ...")."""
    with pytest.raises(eg.UnsoundRuleError, match="evil") as info:
        eg.check_rules('(rewrite (Mul (Add a b) c) a :name "evil")', draws=20)
    error = info.value
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)
