"""The numerics policy (docs/numerics.md): a default rewrite never turns an undefined value
(0/0, inf - inf, 0 * inf, NaN) into a number; side conditions are proven by the e-graph's
value analysis (types.egg); rules marked ``:assumes finite`` run only under ``assume_finite``."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et

x, y = et.dvector("x"), et.dvector("y")
A = np.array([1.0, 2.0, -4.0, 800.0])
B = np.array([0.0, np.inf, 2.0, -np.inf])


def run(out, inputs=(x, y), args=(A, B), **options):
    with np.errstate(all="ignore"):
        f = eg.function(list(inputs), out, on_unused_input="ignore", **options)
        return f, f(*args)


# the five rows of the fuzz repro r2_ieee_identity_rewrites: eqgraph with the default rules
# must give what NumPy gives wherever NumPy's value is undefined (NaN)
IEEE_ROWS = [
    ("mul-div-cancel", lambda p, q: p * q / q),
    ("add-sub-cancel", lambda p, q: (p + q) - q),
    ("exp-log", lambda p, q: np.exp(np.log(p)) if isinstance(p, np.ndarray) else et.exp(et.log(p))),
    ("sqr-sqrt", lambda p, q: np.sqrt(p) ** 2 if isinstance(p, np.ndarray) else et.sqrt(p) ** 2),
]


@pytest.mark.parametrize("name, formula", IEEE_ROWS, ids=[r[0] for r in IEEE_ROWS])
def test_an_undefined_left_side_stays_nan(name, formula):
    with np.errstate(all="ignore"):
        want = formula(A, B)
    _, got = run(formula(x, y))
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_a_stability_rewrite_may_compute_a_defined_value_better():
    # log(exp(800)) is 800 as a real number; NumPy's exp overflows to inf on the way
    f, got = run(et.log(et.exp(x)))
    assert f.stages.report.fired().get("algebra/log-exp")
    np.testing.assert_array_equal(got, A)


def ops(f) -> list[str]:
    return [getattr(n.op, "name", None) or type(n.op).__name__ for n in f.stages.optimized.toposort()]


# -- Aesara's example optimization, x*y/y -> x --------------------------------------------------
def test_xy_over_y_cancels_where_y_is_proven_nonzero_and_finite():
    f, got = run(x * 3.0 / 3.0, inputs=[x], args=[A])
    assert f.stages.report.fired().get("algebra/mul-div-cancel") and not f.stages.report.assumed()
    assert not {"mul", "true_divide"} & set(ops(f)), ops(f)
    np.testing.assert_array_equal(got, A)
    f, _ = run(x * et.exp(et.constant(2.0)) / et.exp(et.constant(2.0)), inputs=[x], args=[A])  # exp of a finite value
    assert f.stages.report.fired().get("algebra/mul-div-cancel")


def test_xy_over_y_does_not_cancel_for_an_unknown_y_by_default():
    f, got = run(x * y / y)
    assert not any(name.startswith("algebra/mul-div-cancel") for name in f.stages.report.fired())
    assert np.isnan(got[[0, 1, 3]]).all()
    for zero in (0.0, np.inf):   # nor for a constant that is zero or infinite
        f, _ = run(x * zero / zero, inputs=[x], args=[A])
        assert not any(name.startswith("algebra/mul-div-cancel") for name in f.stages.report.fired())


def test_xy_over_y_cancels_when_finite_values_are_assumed():
    f, got = run(x * y / y, assume_finite=True)
    assert "algebra/mul-div-cancel-assumed" in f.stages.report.assumed()
    assert "assume_finite" in str(f.stages.report)
    np.testing.assert_array_equal(got, A)   # PyTensor's answer: y is taken to be nonzero
    with eg.config.change_flags(assume_finite=True):
        f, _ = run(x * y / y)
    assert f.stages.report.assumed()


def test_sum_minus_a_finite_constant_cancels():
    f, got = run((x + 2.5) - 2.5, inputs=[x], args=[A])
    assert f.stages.report.fired().get("algebra/add-sub-cancel")
    assert not {"add", "sub"} & set(ops(f)), ops(f)
    np.testing.assert_array_equal(got, A)


@pytest.mark.parametrize("build, values, rule", [
    (lambda: x - x, np.array([1.0, np.inf, np.nan]), "sub-self"),
    (lambda: x / x, np.array([1.0, 0.0, np.inf]), "div-self"),
])
def test_cancellations_of_unknown_floats_need_assume_finite(build, values, rule):
    f, got = run(build(), inputs=[x], args=[values])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got, eg.function([x], build(), rulesets=[])(values))
    f, _ = run(build(), inputs=[x], args=[values], assume_finite=True)
    assert f"algebra/{rule}-assumed" in f.stages.report.assumed()
    assert not any(op in ops(f) for op in ("sub", "true_divide")), ops(f)
    f, got = run(x * 0.0, inputs=[x], args=[np.array([1.0, np.inf, -2.0])])
    assert np.isnan(got[1]) and not f.stages.report.assumed()
    f, got = run(x * 0.0, inputs=[x], args=[np.array([1.0, np.inf, -2.0])], assume_finite=True)
    assert "algebra/mul-zero-assumed" in f.stages.report.assumed()


def test_an_integer_or_proven_finite_difference_with_itself_is_zero():
    i = et.lvector("i")
    f = eg.function([i], i - i)
    assert f.stages.report.fired().get("algebra/sub-self") and not f.stages.report.assumed()
    f = eg.function([x], et.exp(et.constant(1.5)) - et.exp(et.constant(1.5)) + x)
    assert f.stages.report.fired().get("algebra/sub-self")


def test_assume_finite_is_checked():
    with pytest.raises(TypeError, match="assume_finite must be True, False or None"):
        eg.function([x], x, assume_finite="yes")
    with pytest.raises(ValueError, match="assume_finite must be one of True, False"):
        eg.config.assume_finite = 1


def test_a_rule_file_names_what_a_rule_assumes():
    from eqgraph.rules.forms import RuleFileError
    from eqgraph.rules.ruleset import load
    with pytest.raises(RuleFileError, match=":assumes names what the rule assumes"):
        load('(rewrite (Sub x x) x :assumes small :name "nope")')
    rules = load('(rewrite (Sub (Add x y) y) x :assumes finite :name "cancel")')
    assert [r.name for r in rules.rules] == [] and [r.assumes for r in rules.withheld] == ["finite"]
    assert [r.name for r in rules.granting(["finite"]).rules] == [rules.withheld[0].name]
    assert rules.granting(()) is rules and rules.granting(["finite"]) is rules.granting(["finite"])
