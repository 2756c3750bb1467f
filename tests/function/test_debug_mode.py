"""``function(..., mode="debug")``: debug_perform runs, and every e-class extraction touched
is checked on the call's inputs, naming an unsound rule (Aesara's ``debug_perform``)."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.terms import Apply, Op


class Twice(Op):
    """x * 2; its debug_perform says it ran by adding 1000."""

    __props__ = ()

    def make_node(self, x):
        x = et.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2

    def debug_perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * 2 + 1000


def test_debug_perform_runs_in_debug_mode_only():
    x = et.dvector("x")
    assert eg.function([x], Twice()(x))(np.ones(2)).tolist() == [2, 2]
    assert eg.function([x], Twice()(x), mode="debug")(np.ones(2)).tolist() == [1002, 1002]


def test_an_unsound_rule_extraction_did_not_choose_is_still_named():
    x = et.dvector("x")
    bad = '(rewrite (Exp x) (Exp (Exp x)) :name "exp-twice")'
    f = eg.function([x], (et.exp(x) + 1).sum(), rulesets=[*eg.DEFAULT_RULESETS, bad])
    assert f(np.zeros(2)) == 4.0   # the wrong term is dearer, so a plain call is right
    debug = eg.function([x], (et.exp(x) + 1).sum(), rulesets=[*eg.DEFAULT_RULESETS, bad], mode="debug")
    with pytest.raises(eg.DebugModeError) as info:
        debug(np.array([0.0, 1.0]))
    message = str(info.value)
    assert "exp-twice" in message and "<string>:1" in message
    assert "(Exp (Exp (Var 0)))" in message and "x: [0.0, 1.0]" in message


def test_an_unsound_rule_that_extraction_chose_is_named():
    x, y = et.dvector("x"), et.dvector("y")
    bad = '(rewrite (Neg x) x :name "drop-neg")'
    with pytest.raises(eg.DebugModeError, match="drop-neg"):
        eg.function([x, y], -x * y, rulesets=[bad], mode="debug")(np.ones(2), np.ones(2))


def test_sound_default_rules_pass_including_the_documented_overflow_differences():
    x, w = et.dvector("x"), eg.shared(np.ones(3), name="w")
    y = et.log(et.exp(x)) + et.log(1 + et.exp(x)) + x * w / w + (x @ w) ** 2
    f = eg.function([x], y.sum(), updates={w: w + 1}, mode="debug")
    for value in (np.array([0.5, -2.0, 3.0]), np.array([1000.0, 1e-12, -1000.0])):
        f(value)


def test_debug_mode_with_ifelse_and_random_draws():
    c, x = et.dscalar("c"), et.dvector("x")
    srng = eg.RandomStream(0)
    noise = srng.normal(size=(3,))
    f = eg.function([c, x], eg.ifelse(c > 0, (x + noise).sum(), x.mean()), mode="debug")
    f(1.0, np.ones(3))
    f(-1.0, np.ones(3))


def test_unknown_modes_are_refused():
    x = et.dvector("x")
    with pytest.raises(ValueError, match="mode must be one of"):
        eg.function([x], x, mode="fast")
    assert eg.function([x], x + 1, mode="FAST_RUN")(np.zeros(1)).tolist() == [1.0]


def test_a_copy_of_a_debug_function_still_checks():
    x = et.dvector("x")
    bad = '(rewrite (Exp x) (Exp (Exp x)) :name "exp-twice")'
    f = eg.function([x], et.exp(x).sum(), rulesets=[bad], mode="debug")
    with pytest.raises(eg.DebugModeError, match="exp-twice"):
        f.copy()(np.ones(2))


def test_an_untaken_branch_that_would_fail_is_not_evaluated():
    n, x = et.lscalar("n"), et.dvector("x")
    f = eg.function([n, x], eg.ifelse(n > 0, x[n - 1] * 2, x.sum() * 0), mode="debug")
    assert f(0, np.zeros(0)) == 0.0     # x[-1] of an empty vector would raise IndexError
    assert f(2, np.arange(3.0)) == 2.0


def test_float32_reassociation_is_not_reported():
    a, b, v = et.fmatrix("a"), et.fmatrix("b"), et.fvector("v")
    f = eg.function([a, b, v], a @ b @ v, mode="debug")
    rng = np.random.default_rng(0)
    f(*(rng.standard_normal(s).astype("float32") for s in [(100, 100), (100, 100), (100,)]))  # elementwise
    # tolerances alone reported matmul-assoc here


def test_an_unsound_rule_on_an_op_with_several_outputs_is_named():
    # slogdet(-x) has the other sign for an odd-sized x: the member's outputs are compared
    # one by one with the values of the node the user wrote (-x is computed too, so the
    # member's child has a value)
    x = et.dmatrix("x")
    bad = '(rewrite (SlogDet x) (SlogDet (Neg x)) :name "slogdet-of-neg")'
    sign, logdet = et.linalg.slogdet(x)
    outputs = [sign, logdet, (-x).sum()]
    assert eg.function([x], outputs, rulesets=[*eg.DEFAULT_RULESETS, bad])(np.eye(3))[0] == 1.0
    f = eg.function([x], outputs, rulesets=[*eg.DEFAULT_RULESETS, bad], mode="debug")
    with pytest.raises(eg.DebugModeError, match="slogdet-of-neg"):
        f(np.diag([1.0, 2.0, 3.0]))


def test_an_unsound_rule_that_merges_a_term_with_an_input_is_named_with_its_file_and_line():
    """The disagreement shows on a graph variable (an input now in the term's e-class), not on
    a term: the rule is found among those that explain a member of that e-class."""
    x, y = et.dvector("x"), et.dvector("y")
    evil = '(rewrite (Mul (Add a b) c) a :name "evil")'
    f = eg.function([x, y], (x + y) * 2, rulesets=[*eg.DEFAULT_RULESETS, evil], mode="debug")
    with pytest.raises(eg.DebugModeError, match=r"rule user\d+/evil \(<string>:1\) is unsound"):
        f(np.array([1.0, 2.0]), np.array([0.5, 0.0]))
