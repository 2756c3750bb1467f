"""Every rewrite in every ruleset file is sound: both sides agree on random inputs.

Generic over rules: a new ``.egg`` file under ``rulesets/`` is covered with no new
test.  The checker is the library's own (``eqgraph.check_rules``, in
``eqgraph/soundness``): per pattern variable it draws operands of every ndim
(0-3) and every mix of the dtypes float64/float32/int64/bool in turn, sizes from a pool with 1 in it, each axis
static or unknown; a binding counts when the rule's guards held on it, and both
sides must then agree.  Seeded, so the default run is repeatable; the slow run
draws many more bindings with other seeds.
"""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.soundness.check import (UnsoundRuleError, _derived_from_guards, check_rule, check_rules, evaluate,
                                     left_sides, two_sides)
from eqgraph.soundness.draws import Binding, Uncheckable
from eqgraph.rules.pattern import parse_pattern
from eqgraph.rules.ruleset import builtin_names, load

# every rule of every file, those marked :assumes too (checked on finite values)
RULES = [(name, rule) for name in builtin_names() for rule in (load(name).written or load(name)).rules
         if rule.kind != "rule"]
CHECKED: dict = {}  # rule -> bindings on which both sides were compared


@pytest.mark.parametrize("name, rule", RULES, ids=[r.name for _, r in RULES])
def test_rule_is_sound(name, rule):
    CHECKED[rule.name] = check_rule(rule, load(name), draws=60, seed=0)


def test_every_rule_was_checked_at_least_once():
    # runs after the parametrized test above: a rule whose guards never held was never tested
    names = {r.name for _, r in RULES}
    assert {"algebra/mul-one", "stability/log1p", "matmul/matmul-assoc", "fold/add-scalars"} <= names
    assert {name for name in names if not CHECKED.get(name)} == set()


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("name", builtin_names())
def test_rules_are_sound_on_many_draws(name, seed):
    report = check_rules(name, draws=300, seed=seed)
    general = {r.name for r in load(name).rules if r.kind == "rule"}
    assert set(report.unchecked) <= general   # a general rule may read what its guards compute


def test_an_unsound_rule_is_caught():
    with pytest.raises(UnsoundRuleError, match="bogus"):
        check_rules('(rewrite (Exp x) (Neg x) :name "bogus")', draws=5)


# a right side may build a constant of an operand's dtype and ndim, read off it by the guards
# (algebra/sqr-sqrt builds NaN so): the checker binds them so too, and compares the values
GUARD_BOUND = """(rewrite (Sqr (Sqrt x)) (Switch (Ge x (Scalar 0.0 d n)) (Abs x) (Scalar {fill} d n))
    :when ((real-dtypes (dtype x)) (= ds (dtype x)) (= 1 (set-length ds)) (= d (set-get ds 0)) (= s (ndim x)) (= 1 (set-length s))
           (= n (set-get s 0)))
    :same-dtype x :name "{name}")"""


def test_constants_of_guard_bound_dtypes_are_checked():
    report = check_rules(GUARD_BOUND.format(fill="NaN", name="sound"), draws=40)
    [compared] = [count for name, count in report.checked.items() if name.endswith("/sound")]
    assert compared > 0
    with pytest.raises(UnsoundRuleError, match="zero-below"):  # 0 for negative x, where sqrt gives NaN
        check_rules(GUARD_BOUND.format(fill="0.0", name="zero-below"), draws=40)


def test_an_operand_that_make_node_casts_stands_for_its_cast():
    # sqrt of a bool reads Cast{float32}(x): in the e-graph the rule's x is that cast, so the right
    # side is built of it and the dtype the guards read off x is float32 (a bool NaN is no constant)
    variables: dict = {}
    lhs = parse_pattern("(Sqr (Sqrt x))", variables)
    rhs = parse_pattern("(Switch (Ge x (Scalar 0.0 d n)) (Abs x) (Scalar NaN d n))", variables)
    guards = "((= ds (dtype x)) (= d (set-get ds 0)) (= s (ndim x)) (= n (set-get s 0)))"
    derived = _derived_from_guards(guards, variables)
    x, d = variables["x"], variables["d"]
    binding = Binding({x: 1}, np.random.default_rng(0), {x: "bool"}, derived=derived)
    left = binding.build_left(lhs)
    right = binding.build(rhs)
    assert binding.tensors[x].dtype == "bool" and binding.operands[x].dtype == "float32"
    assert binding.primitives[d] == "float32"
    assert right.type == left.type
    values = binding.arrays()
    np.testing.assert_array_equal(*evaluate([left, right], values))


# The generator draws what a uniform one missed: each of these shipped rules was unsound.
def test_the_old_matmul_assoc_is_caught():
    # right for operands of one ndim, wrong when a vector or a stack meets matrices
    with pytest.raises(UnsoundRuleError, match="old-assoc"):
        check_rules('(birewrite (MatMul (MatMul a b) c) (MatMul a (MatMul b c)) :name "old-assoc")', draws=60)


def test_the_old_div_constant_is_caught():
    old = """(rewrite (TrueDiv x (Scalar c d n)) (Mul x (Scalar (/ 1.0 c) d n)) :name "old-div"
                 :when ((!= c 0.0) (= (set-of n) (ndim x)) (= (dtype (TrueDiv x (Scalar c d n))) (dtype x))))"""
    with pytest.raises(UnsoundRuleError, match="old-div.*not a int64"):
        check_rules(old, draws=100)


def test_the_old_pow_half_is_caught():
    # sqrt(-inf) is NaN, while NumPy's power of -inf by 0.5 is inf where the exponent is one per element
    old = """(rewrite (Pow x (Scalar 0.5 d n)) (Sqrt x) :name "old-pow-half"
                 :when ((= (set-of n) (ndim x)) (= (dtype (Pow x (Scalar 0.5 d n))) (dtype x))))"""
    with pytest.raises(UnsoundRuleError, match="old-pow-half"):
        check_rules(old, draws=300, seed=1)


def test_x_to_the_half_is_sqrt_only_where_x_cannot_be_minus_inf():
    x = et.dvector("x")
    values = np.array([-np.inf, 4.0])
    assert "sqrt" not in eg.pprint(eg.function([x], x ** 0.5))
    assert "sqrt" in eg.pprint(eg.function([x], et.abs(x) ** 0.5))
    assert "sqrt" in eg.pprint(eg.function([x], x ** 0.5, assume_finite=True))
    np.testing.assert_array_equal(eg.function([x], et.abs(x) ** 0.5)(values), [np.inf, 2.0])


def test_dividing_by_an_integer_constant():
    # div-constant turned x / int64(3) into x * int64(1/3) = x * 0
    x = et.dvector("x")
    f = eg.function([x], x / et.constant(np.int64(3)))
    np.testing.assert_allclose(f(np.array([3.0, 6.0])), [1.0, 2.0])


# General rules that union the matched term with another, (rule ((= e LHS) guards) ((union e RHS))),
# are checked as rewrites; index lists are drawn for the operand's ndim. Those whose right side
# reads what their guards compute, or whose guards read relations other rules fill, are reported.
GENERAL = [(name, rule) for name in builtin_names() for rule in load(name).rules
           if rule.kind == "rule" and two_sides(rule).lhs is not None]


@pytest.mark.parametrize("name, rule", GENERAL, ids=[r.name for _, r in GENERAL])
def test_general_rule_is_sound(name, rule):
    try:
        check_rule(rule, load(name), draws=30, seed=0)
    except Uncheckable as why:
        pytest.skip(str(why))


def test_every_general_rule_whose_one_action_is_a_union_has_two_sides_to_check():
    unions = {r.name for name in builtin_names() for r in load(name).rules if r.kind == "rule" and "((union " in r.text}
    assert unions - {r.name for _, r in GENERAL} == set()


OLD_READ_AFTER_SET = """(rule ((= e (Subtensor_1 (IncSubtensor_2 x y idx true) idx s t)) (= (dtype x) (dtype y)))
      ((union e (Second (Subtensor_1 x idx s t) y))) :name "old-read-after-set")"""


def test_the_old_read_after_set_is_caught():
    # a 0-d value written to a row: Second of a row and a 0-d operand, a TypeContradiction
    with pytest.raises(UnsoundRuleError, match="old-read-after-set.*different static types"):
        check_rules(OLD_READ_AFTER_SET, draws=60)


# Every built-in rule's left side, drawn over operands of every ndim, dtype and static/unknown
# shape mix, compiles with all the default rules: a TypeContradiction there is a rule (or two
# together) building an ill-typed term from a valid graph, which checking rules alone can miss.
def left_sides_of(ruleset, draws: int, seed: int = 0):
    inputs, outputs = [], []
    for rule in load(ruleset).rules:
        for rule_inputs, output in left_sides(rule, draws, seed):
            inputs += rule_inputs
            outputs.append(output)
    return list(dict.fromkeys(inputs)), outputs


def compile_left_sides(ruleset, draws: int, seed: int = 0, rulesets=eg.DEFAULT_RULESETS):
    inputs, outputs = left_sides_of(ruleset, draws, seed)
    if outputs:
        eg.function(inputs, outputs, rulesets=rulesets, on_unused_input="ignore")
    return len(outputs)


@pytest.mark.parametrize("name", builtin_names())
def test_left_sides_of_built_in_rules_compile_without_type_contradiction(name):
    compile_left_sides(name, draws=4)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("name", builtin_names())
def test_left_sides_of_built_in_rules_compile_on_many_draws(name, seed):
    compile_left_sides(name, draws=24, seed=seed)


def test_the_left_side_sweep_catches_the_old_read_after_set(tmp_path):
    from eqgraph.egraph.saturate import TypeContradiction

    old = tmp_path / "oldindexing.egg"
    old.write_text(OLD_READ_AFTER_SET + "\n")
    with pytest.raises(TypeContradiction, match="elementwise term whose operands differ"):
        compile_left_sides(str(old), draws=4, rulesets=[*eg.DEFAULT_RULESETS, str(old)])


# The numerics policy (docs/numerics.md): a rule that assumes nothing meets inf, NaN and zeros;
# one marked :assumes finite is checked on finite nonzero values only
OLD_CANCEL = '(rewrite (TrueDiv (Mul x y) y) (Second y x) :same-dtype x {marker} :name "{name}")'


def test_a_cancellation_that_turns_nan_into_a_number_is_caught():
    with pytest.raises(UnsoundRuleError, match="old-cancel") as caught:
        check_rules(OLD_CANCEL.format(marker="", name="old-cancel"), draws=60)
    assert "inf" in str(caught.value) or "nan" in str(caught.value) or "0." in str(caught.value)


def test_the_same_cancellation_marked_as_assuming_finite_values_passes():
    report = check_rules(OLD_CANCEL.format(marker=":assumes finite", name="assumed-cancel"), draws=30)
    [count] = [n for name, n in report.checked.items() if name.endswith("/assumed-cancel")]
    assert count > 0


def test_a_guarded_cancellation_is_checked_on_proven_constants():
    guarded = ('(rewrite (TrueDiv (Mul x y) y) (Second y x) :when ((known-nonzero y) (known-finite y)) '
               ':same-dtype x :name "proven-cancel")')
    report = check_rules(guarded, draws=40)
    [count] = [n for name, n in report.checked.items() if name.endswith("/proven-cancel")]
    assert count > 0
