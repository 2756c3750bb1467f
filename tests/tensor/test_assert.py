"""Run-time checks (eqgraph/tensor/assertion.py): the op, its place in the e-graph (kept unless
its conditions are proven), its gradient, and the backends."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.exec.numba import program as numba_program
from eqgraph.exec.node_errors import NodeError


def _checks(f) -> list:
    """The checks left in ``f``'s optimized graph."""
    return [node for node in f.stages.optimized.toposort() if isinstance(node.op, et.CheckAndRaise)]


# -- the op --------------------------------------------------------------------------------------
def test_value_passes_where_the_conditions_hold():
    x, s = et.dvector("x"), et.dscalar("s")
    f = eg.function([x, s], et.assert_op(x * 2, s > 0, msg="s must be positive"))
    np.testing.assert_array_equal(f(np.arange(3.0), 1.0), [0.0, 2.0, 4.0])


def test_a_false_condition_raises_the_message_naming_the_node():
    x, s = et.dvector("x"), et.dscalar("s")
    f = eg.function([x, s], et.assert_op(x * 2, s > 0, msg="s must be positive"))
    with pytest.raises(AssertionError, match="s must be positive") as info:
        f(np.arange(3.0), -1.0)
    assert isinstance(info.value, NodeError) and isinstance(info.value.node.op, et.CheckAndRaise)
    assert "Apply node that caused the error: CheckAndRaise" in str(info.value)


def test_check_and_raise_raises_its_exception_class():
    x = et.dvector("x")
    f = eg.function([x], et.CheckAndRaise(ValueError, "x must be non-negative")(x, et.all(x >= 0)))
    np.testing.assert_array_equal(f(np.ones(2)), [1.0, 1.0])
    with pytest.raises(ValueError, match="x must be non-negative"):
        f(np.array([1.0, -1.0]))


def test_every_condition_is_checked_and_array_conditions_must_hold_everywhere():
    x, a, b = et.dvector("x"), et.dscalar("a"), et.dvector("b")
    f = eg.function([x, a, b], et.Assert("both")(x, a > 0, b > 0))
    f(np.ones(2), 1.0, np.ones(2))
    for args in [(np.ones(2), -1.0, np.ones(2)), (np.ones(2), 1.0, np.array([1.0, 0.0]))]:
        with pytest.raises(AssertionError, match="both"):
            f(*args)


def test_the_output_shares_no_memory_with_the_input():
    x, s = et.dvector("x"), et.dscalar("s")
    f = eg.function([x, s], et.assert_op(x, s > 0))
    value = np.arange(3.0)
    out = f(value, 1.0)
    assert not np.shares_memory(out, value)
    assert et.CheckAndRaise(ValueError, "m").view_map == {0: [0]}


def test_props_equality_and_pytensor_names():
    assert et.Assert("m") == et.CheckAndRaise(AssertionError, "m")
    assert et.Assert("m") != et.Assert("n")
    assert et.CheckAndRaise(ValueError, "m") != et.CheckAndRaise(TypeError, "m")
    op = et.CheckAndRaise(ValueError, "m")
    assert op.exc_type is ValueError and op.msg == "m"


def test_bad_arguments_say_what_was_expected():
    with pytest.raises(TypeError, match="needs at least one condition"):
        et.Assert("m")(et.dvector("x"))
    with pytest.raises(TypeError, match="exc_type must be an exception class"):
        et.CheckAndRaise(3, "m")
    with pytest.raises(TypeError, match="names no exception class"):
        et.CheckAndRaise("float64", "m")
    with pytest.raises(TypeError, match="msg must be a str"):
        et.CheckAndRaise(ValueError, 3)


class ParameterError(ValueError):
    """An exception class of the user's, which the e-graph keeps by name."""


def test_a_user_exception_class_comes_back_from_the_egraph():
    x = et.dscalar("x")
    f = eg.function([x], et.CheckAndRaise(ParameterError, "bad")(x * 1.0, x > 0))
    with pytest.raises(ParameterError, match="bad"):
        f(-1.0)


def test_two_exception_classes_of_one_name_are_different_checks():
    def make():
        class Failure(ValueError):
            pass
        return Failure

    first, second = make(), make()
    assert et.CheckAndRaise(first, "m") != et.CheckAndRaise(second, "m")
    x = et.dscalar("x")
    f = eg.function([x], et.CheckAndRaise(second, "m")(x * 1.0, x > 0))
    with pytest.raises(second):
        f(-1.0)


# -- the e-graph ---------------------------------------------------------------------------------
def test_an_unproven_check_is_kept():
    x, s = et.dvector("x"), et.dscalar("s")
    f = eg.function([x, s], et.assert_op(et.exp(x), s > 0, msg="m"))
    assert len(_checks(f)) == 1


def test_a_check_of_a_true_constant_is_removed():
    x = et.dvector("x")
    f = eg.function([x], et.assert_op(et.exp(x), et.constant(np.asarray(True)), msg="m"))
    assert _checks(f) == []
    np.testing.assert_allclose(f(np.zeros(2)), [1.0, 1.0])


def test_a_check_of_a_false_constant_is_kept_and_raises():
    x = et.dvector("x")
    f = eg.function([x], et.assert_op(et.exp(x), et.constant(np.asarray(False)), msg="never"))
    assert len(_checks(f)) == 1
    with pytest.raises(AssertionError, match="never"):
        f(np.zeros(2))


def test_a_proven_positive_scale_removes_its_check():
    # exp of an integer is positive and finite: types.egg proves sigma > 0
    x, n = et.dvector("x"), et.lscalar("n")
    sigma = et.exp(n)
    f = eg.function([x, n], et.assert_op(x / sigma, et.all(sigma > 0), msg="sigma > 0"))
    assert _checks(f) == []
    np.testing.assert_allclose(f(np.ones(2), 0), [1.0, 1.0])


def test_a_positive_but_maybe_nan_value_keeps_its_check():
    # sqrt(x) is known non-negative, yet NaN for x < 0, and NaN >= 0 is false
    x = et.dvector("x")
    f = eg.function([x], et.assert_op(x, et.all(et.sqrt(x) >= 0), msg="nan"))
    assert len(_checks(f)) == 1
    with pytest.raises(AssertionError, match="nan"), np.errstate(invalid="ignore"):
        f(np.array([-1.0]))


def test_only_the_proven_conditions_drop_out():
    x, n, s = et.dvector("x"), et.lscalar("n"), et.dscalar("s")
    f = eg.function([x, n, s], et.assert_op(x * 2, et.exp(n) > 0, s > 0, msg="m"))
    [check] = _checks(f)
    assert len(check.inputs) == 2   # the value and s > 0
    with pytest.raises(AssertionError, match="m"):
        f(np.ones(2), 0, -1.0)


def test_checks_with_other_messages_never_merge():
    x, s = et.dvector("x"), et.dscalar("s")
    f = eg.function([x, s], [et.assert_op(x, s > 0, msg="first"), et.assert_op(x, s > 0, msg="second")])
    assert sorted(node.op.msg for node in _checks(f)) == ["first", "second"]
    same = eg.function([x, s], [et.assert_op(x, s > 0, msg="one"), et.assert_op(x, s > 0, msg="one")])
    assert len(_checks(same)) == 1   # the same check is one term


def test_rules_rewrite_inside_the_value_and_keep_the_check():
    x, s = et.dvector("x"), et.dscalar("s")
    f = eg.function([x, s], et.assert_op(x * 1.0, s > 0, msg="m"))
    [check] = _checks(f)
    assert check.inputs[0].owner is None   # x * 1 became x
    np.testing.assert_array_equal(f(np.ones(2), 1.0), [1.0, 1.0])


# -- gradient ------------------------------------------------------------------------------------
def test_the_gradient_passes_through_the_value():
    x, s = et.dvector("x"), et.dscalar("s")
    cost = et.assert_op(et.exp(x) * s, s > 0, msg="m").sum()
    gx, gs = eg.grad(cost, [x, s])
    f = eg.function([x, s], [gx, gs])
    got_x, got_s = f(np.zeros(3), 2.0)
    np.testing.assert_allclose(got_x, [2.0, 2.0, 2.0])
    np.testing.assert_allclose(got_s, 3.0)


def test_the_conditions_have_no_gradient():
    x, s = et.dvector("x"), et.dscalar("s")
    out = et.assert_op(x, s > 0, msg="m")
    assert out.owner.op.connection_pattern(out.owner) == [[True], [False]]
    (gs,) = eg.grad(out.sum(), [s], disconnected_inputs="ignore")
    np.testing.assert_array_equal(eg.function([s], gs)(1.0), 0.0)


# -- backends ------------------------------------------------------------------------------------
def test_a_fused_group_stops_at_the_check():
    x, s = et.dvector("x"), et.dscalar("s")
    f = eg.function([x, s], et.exp(et.assert_op(x * 2, s > 0, msg="m")) * 3)
    assert len(_checks(f)) == 1
    assert any(isinstance(node.op, et.CheckAndRaise) for node in f.program.order)
    with pytest.raises(AssertionError, match="m"):
        f(np.ones(2), -1.0)


@pytest.mark.skipif(numba_kernels.numba is None, reason="Numba is not installed")
def test_a_hot_program_still_checks(monkeypatch):
    monkeypatch.setattr(eg.config, "compile", "eager")
    monkeypatch.setattr(numba_program, "SMALL_INPUTS", 10**9)
    monkeypatch.setattr(numba_program, "MIN_NODES", 1)
    x, s = et.dvector("x"), et.dscalar("s")
    f = eg.function([x, s], et.exp(et.assert_op(x * 2, s > 0, msg="hot")) * 3)
    for _ in range(3):
        f(np.ones(2), 1.0)
    with pytest.raises(AssertionError, match="hot"):
        f(np.ones(2), -1.0)


def test_dask_checks_when_the_result_is_computed():
    da = pytest.importorskip("dask.array")
    x, s = et.dvector("x"), et.dscalar("s")
    f = eg.function([x, s], et.assert_op(x * 2, s > 0, msg="lazy"), backend="dask", chunks=(2,))
    np.testing.assert_array_equal(f(np.ones(4), 1.0), [2.0] * 4)
    with pytest.raises(AssertionError, match="lazy"):
        f(np.ones(4), -1.0)
    lazy = f(da.ones(4, chunks=2), da.asarray(np.float64(-1.0)))   # nothing computed yet
    with pytest.raises(AssertionError, match="lazy"):
        lazy.compute()


def test_cupy_copies_the_condition_to_the_host():
    cupy = pytest.importorskip("cupy")
    x, s = et.dvector("x"), et.dscalar("s")
    f = eg.function([x, s], et.assert_op(x * 2, s > 0, msg="gpu"), backend="cupy")
    np.testing.assert_array_equal(f(np.ones(2), 1.0), [2.0, 2.0])        # NumPy in, NumPy out
    np.testing.assert_array_equal(f(cupy.ones(2), cupy.asarray(1.0)).get(), [2.0, 2.0])
    for args in [(np.ones(2), -1.0), (cupy.ones(2), cupy.asarray(-1.0))]:  # the condition on the device
        with pytest.raises(AssertionError, match="gpu"):
            f(*args)


def test_a_term_reading_only_the_shape_still_runs_the_check():
    # the check's shape is its value's, but reading it must not skip the check
    x, s = et.dvector("x"), et.dscalar("s")
    checked = et.assert_op(x, s > 0, msg="shape")
    for out in [checked.shape[0], et.zeros_like(checked), et.second(checked, 1.0)]:
        f = eg.function([x, s], out)
        with pytest.raises(AssertionError, match="shape"):
            f(np.ones(3), -1.0)
