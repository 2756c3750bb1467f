"""The rule language's two conveniences: ``:same-dtype x``, expanded when a rule
file is parsed into exactly the guard a rule would spell out by hand, and the schedule
as explicit ``(ruleset, mode)`` pairs, with the ``;; eqgraph: saturate`` comment as fallback."""

import re

import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.egraph.saturate import DEFAULT_RULESETS
from eqgraph.rules import ruleset as rs
from eqgraph.rules.forms import RuleFileError, _subforms, split_forms
from eqgraph.rules.ruleset import parse_rules

#: the rules of algebra.egg and stability.egg as written before ``:same-dtype`` (comments,
#: line breaks and the added ``:ruleset``/``:name`` left out): their expansions must equal these
OLD_TEXTS = {
    "algebra/mul-one":
        "(rewrite (Mul x (Scalar 1.0 d n)) x :when ((= (set-of n) (ndim x)) (= (dtype (Mul x (Scalar 1.0 d n))) (dtype x))))",
    "algebra/sub-zero":
        "(rewrite (Sub x (Scalar 0.0 d n)) x :when ((= (set-of n) (ndim x)) (= (dtype (Sub x (Scalar 0.0 d n))) (dtype x))))",
    "algebra/div-one":
        "(rewrite (TrueDiv x (Scalar 1.0 d n)) x :when ((= (set-of n) (ndim x)) (= (dtype (TrueDiv x (Scalar 1.0 d n))) (dtype x))))",
    "algebra/mul-div-cancel":
        "(rewrite (TrueDiv (Mul x y) y) (Second y x) :when ((known-nonzero y) (known-finite y) (= (dtype (TrueDiv (Mul x y) y)) (dtype x))))",
    "algebra/mul-div-cancel-left":
        "(rewrite (TrueDiv (Mul y x) y) (Second y x) :when ((known-nonzero y) (known-finite y) (= (dtype (TrueDiv (Mul y x) y)) (dtype x))))",
    "algebra/pow-one":
        "(rewrite (Pow x (Scalar 1.0 d n)) x :when ((= (set-of n) (ndim x)) (= (dtype (Pow x (Scalar 1.0 d n))) (dtype x))))",
    "algebra/pow-two":
        "(rewrite (Pow x (Scalar 2.0 d n)) (Sqr x) :when ((= (set-of n) (ndim x)) (= (dtype (Pow x (Scalar 2.0 d n))) (dtype x))))",
    "algebra/pow-half":
        "(rewrite (Pow x (Scalar 0.5 d n)) (Sqrt x) :when ((= (set-of n) (ndim x)) (known-nonneg x) (= (dtype (Pow x (Scalar 0.5 d n))) (dtype x))))",
    "algebra/pow-even":
        "(rewrite (Pow x (Scalar c d n)) (Sqr (Pow x (Scalar (/ c 2.0) d n))) :when ((> c 2.0) (< c 64.0) (= (% c 2.0) 0.0) (= (dtype (Pow x (Scalar c d n))) (dtype x))))",
    "algebra/pow-odd":
        "(rewrite (Pow x (Scalar c d n)) (Mul x (Pow x (Scalar (- c 1.0) d n))) :when ((> c 2.0) (< c 64.0) (= (% c 2.0) 1.0) (= (dtype (Pow x (Scalar c d n))) (dtype x))))",
    "algebra/log-exp":
        "(rewrite (Log (Exp x)) x :when ((real-dtypes (dtype x)) (= (dtype (Log (Exp x))) (dtype x))))",
    "algebra/sqrt-sqr":
        "(rewrite (Sqrt (Sqr x)) (Abs x) :when ((real-dtypes (dtype x)) (= (dtype (Sqrt (Sqr x))) (dtype x))))",
    "algebra/mul-minus-one":
        "(rewrite (Mul x (Scalar -1.0 d n)) (Neg x) :when ((= (set-of n) (ndim x)) (= (dtype (Mul x (Scalar -1.0 d n))) (dtype x))))",
    "algebra/div-constant":
        "(rewrite (TrueDiv x (Scalar c d n)) (Mul x (Scalar (/ 1.0 c) d n)) :when ((> (abs c) 1e-300) (< (abs c) 1e300) (= (set-of n) (ndim x)) (= (set-of d) (dtype x)) (= (dtype (TrueDiv x (Scalar c d n))) (dtype x))))",
    "stability/log1p":
        "(rewrite (Log (Add x (Scalar 1.0 d n))) (Log1p x) :when ((= (set-of n) (ndim x)) (= (dtype (Log (Add x (Scalar 1.0 d n)))) (dtype x))))",
    "stability/expm1":
        "(rewrite (Sub (Exp x) (Scalar 1.0 d n)) (Expm1 x) :when ((= (set-of n) (ndim x)) (= (dtype (Sub (Exp x) (Scalar 1.0 d n))) (dtype x))))",
    "stability/one-minus-sigmoid":
        "(rewrite (Sub (Scalar 1.0 d n) (Sigmoid x)) (Sigmoid (Neg x)) :when ((= (set-of n) (ndim x)) (= (dtype (Sub (Scalar 1.0 d n) (Sigmoid x))) (dtype x))))",}


def _plain(text: str) -> str:
    """Rule text without comments, ``:ruleset`` and ``:name``, whitespace collapsed."""
    text = re.sub(r";[^\n]*", "", text)
    text = re.sub(r'\s*:ruleset\s+\S+|\s*:name\s+"[^"]*"', "", text)
    return " ".join(text.split())


@pytest.mark.parametrize("name", sorted(OLD_TEXTS))
def test_same_dtype_expands_to_the_rule_as_it_was_written_before(name):
    rule = next(r for r in rs.load(name.split("/")[0]) if r.name == name)
    assert _plain(rule.text) == OLD_TEXTS[name]
    program = re.sub(r";[^\n]*", "", rs.load(rule.ruleset).program)   # what egglog reads
    assert ":same-dtype" not in rule.text and ":same-dtype" not in program
    # lhs, rhs and when are the expanded parts (the soundness checker reads them)
    assert _plain(f"(rewrite {rule.lhs} {rule.rhs} :when {rule.when})") == OLD_TEXTS[name]


@pytest.mark.parametrize("ruleset", ["algebra", "stability"])
def test_every_same_dtype_rule_is_compared_and_every_rule_points_at_its_written_line(ruleset):
    loaded = rs.load(ruleset)
    written = dict((line, form) for form, line in split_forms(open(loaded.source).read(), loaded.source))
    shortened = {r.name for r in loaded if ":same-dtype" in written[r.source[1]]}
    # every rule that had its guard spelled out is shortened (rules added since were written
    # with :same-dtype from the start, and have no older text to compare with)
    assert {n for n in OLD_TEXTS if n.startswith(ruleset + "/")} <= shortened
    for rule in loaded:
        assert f':name "{rule.name.split("/", 1)[1]}"' in written[rule.source[1]]


def test_same_dtype_adds_its_guard_last_or_alone():
    ruleset = parse_rules(
        '(rewrite (Neg (Neg x)) x :when ((= (ndim x) (set-of 1))) :same-dtype x :name "a")\n'
        '(rewrite (Abs (Neg x)) (Abs x) :same-dtype x :name "b")\n'
        '(birewrite (Add x y) (Add y x) :when () :same-dtype (Add y x) :name "c")\n', "mine", "mine.egg")
    a, b, c = ruleset.rules
    assert a.when == "((= (ndim x) (set-of 1)) (= (dtype (Neg (Neg x))) (dtype x)))"
    assert b.when == "((= (dtype (Abs (Neg x))) (dtype x)))"
    assert c.when == "((= (dtype (Add x y)) (dtype (Add y x))))" and c.kind == "birewrite"
    assert [r.source[1] for r in ruleset.rules] == [1, 2, 3]
    assert b.text == '(rewrite (Abs (Neg x)) (Abs x) :when ((= (dtype (Abs (Neg x))) (dtype x))) ' \
                     ':ruleset mine :name "mine/b")'


def test_a_same_dtype_rule_runs_like_its_guard():
    x = et.fvector("x")
    rule = '(rewrite (Exp (Log x)) x :same-dtype x :name "exp-log")'
    assert eg.rewrite(et.exp(et.log(x)), rulesets=["types", rule]) is x
    ints = et.lvector("i")   # log of an integer vector is float64: the guard refuses
    assert eg.rewrite(et.exp(et.log(ints)), rulesets=["types", rule]) is not ints


@pytest.mark.parametrize("text, message", [
    ('(rewrite (Neg (Neg x)) x :same-dtype)', "needs the term"),
    ('(rewrite (Neg (Neg x)) x :same-dtype :name "a")', "needs the term"),
    ('(rule ((= e (Neg (Neg x)))) ((union e x)) :same-dtype x)', "belongs to a rewrite"),
])
def test_a_misused_same_dtype_is_refused_with_its_line(text, message):
    with pytest.raises(RuleFileError, match=rf"mine\.egg:2: .*{message}"):
        parse_rules("\n" + text, "mine", "mine.egg")


# -- the schedule --------------------------------------------------------------------------------
def test_the_default_schedule_names_each_mode_and_agrees_with_the_files():
    modes = [mode for _, mode in DEFAULT_RULESETS]
    assert modes[:2] == ["saturate", "saturate"] and set(modes[2:]) == {"step"}  # analyses, then rewrites
    for name, mode in DEFAULT_RULESETS:
        assert rs.load(name).mode == mode             # the comment fallback says the same
        assert rs.load((name, mode)) is rs.load(name)  # so the pair is the file's own Ruleset


def test_a_pair_overrides_the_files_mode_once_per_mode(tmp_path):
    path = tmp_path / "mine.egg"
    path.write_text('(rewrite (Neg (Neg x)) x :name "neg-neg")\n')
    assert rs.load(str(path)).mode == "step"
    analysis = rs.load((str(path), "saturate"))
    assert analysis.mode == "saturate" and analysis.rules == rs.load(str(path)).rules
    assert rs.load((str(path), "saturate")) is analysis   # pooled sessions know rulesets by identity
    assert rs.load(("fold", "step")).mode == "step" and rs.load("fold").mode == "saturate"
    with pytest.raises(ValueError, match="mode of 'saturate', 'step'"):
        rs.load((str(path), "fixpoint"))
    with pytest.raises(ValueError, match="'mine' is listed twice"):
        rs.check_unique([rs.load(str(path)), analysis])


def _timed_rules(rulesets) -> set:
    """The rules a profiled compile ran one step at a time (analyses are not timed per rule)."""
    x = et.dvector("x")
    f = eg.function([x], -(-x), rulesets=rulesets, profile=True)
    assert f.stages.optimized.toposort() == []   # --x -> x ran either way
    return set(f.stages.report.rule_seconds)


def test_both_spellings_of_an_analysis_ruleset_run_it_to_a_fixed_point(tmp_path):
    rule = '(rewrite (Neg (Neg x)) x :name "neg-neg")\n'
    (tmp_path / "commented.egg").write_text(";; eqgraph: saturate\n" + rule)
    (tmp_path / "plain.egg").write_text(rule)
    assert _timed_rules(["types", str(tmp_path / "plain.egg")]) == {"plain/neg-neg"}
    assert _timed_rules(["types", (str(tmp_path / "plain.egg"), "saturate")]) == set()
    assert _timed_rules(["types", str(tmp_path / "commented.egg")]) == set()
    assert _timed_rules([("types", "saturate"), (str(tmp_path / "commented.egg"), "step")]) == {"commented/neg-neg"}


def test_a_file_asking_for_the_op_type_rules_gets_the_schemas_and_is_refused_without_them(monkeypatch):
    types = rs.RULESETS_DIR / "types.egg"
    assert rs.OP_TYPE_RULES in types.read_text()
    assert '(rule ((= e (Exp x0))) ((elemwise1 e "Exp" x0)) :name "elemwise-exp")' in rs._read(types)
    monkeypatch.setattr(rs, "op_type_rules", None)
    with pytest.raises(RuleFileError, match=r"types\.egg: its line .* asks for the op registry's type rules"):
        rs._read(types)


def test_split_forms_reads_strings_comments_and_lines_as_egglog_does():
    text = ('; a comment with ( and "\n'
            '(rewrite (A x) (B x) :name "a (b) \\"c\\"")  ; trailing ) comment\n'
            '\n'
            '(rule ((= e (C "two\nlines")))\n'
            '      ((union e (D)))) (relation r (i64))\n')
    assert split_forms(text, "f.egg") == [
        ('(rewrite (A x) (B x) :name "a (b) \\"c\\"")', 2),
        ('(rule ((= e (C "two\nlines")))\n      ((union e (D))))', 4),
        ("(relation r (i64))", 6)]


@pytest.mark.parametrize("text, message", [
    ('(rewrite (A x) (B x))\n(rule "open\n', 'f.egg:3: unterminated string'),
    ("(rewrite (A x) (B x))\n  x (rule)", "f.egg:2: unexpected 'x' outside a command"),
    ("(A)\n\n)", "f.egg:3: unexpected ')'"),
    ('(A)\n(rule ("x)" (B)', "f.egg:2: unbalanced '('"),
])
def test_split_forms_names_the_line_of_what_is_no_s_expression(text, message):
    with pytest.raises(RuleFileError, match=re.escape(message)):
        split_forms(text, "f.egg")


@pytest.mark.parametrize("form, children", [
    ("(rewrite (A x) (B x) :when ((= (dtype x) \"f8\")))",
     ("rewrite", "(A x)", "(B x)", ":when", '((= (dtype x) "f8"))')),
    ('(a"b c"d)', ("a", '"b c"', "d")),
    ('( x  "(" (y ")") z )', ("x", '"("', '(y ")")', "z")),
    ("()", ()),
])
def test_a_forms_children_keep_strings_and_nested_forms_whole(form, children):
    assert _subforms(form) == list(children)
