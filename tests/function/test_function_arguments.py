"""``eqgraph.function``'s arguments, read strictly: each form they accept
does what PyTensor's does, and any other value is a clear error naming the argument."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et


def _two_counters():
    x, y = eg.shared(0, name="x"), eg.shared(1, name="y")
    x.default_update = x + 2
    y.default_update = y + 10
    return x, y


@pytest.mark.parametrize("form, x_after, y_after", [
    (False, 2, 11),       # every default update applies
    (True, 0, 1),         # none does
    ([], 2, 11),          # an empty list suppresses nothing
    ("y", 2, 1),          # only y's
    ("x", 0, 11),         # only x's
    ("x y", 0, 1),        # both
])
def test_no_default_updates_suppresses_exactly_the_listed_variables(form, x_after, y_after):
    x, y = _two_counters()
    if isinstance(form, str):
        form = [{"x": x, "y": y}[name] for name in form.split()]
    f = eg.function([], [x + y], no_default_updates=form)
    f()
    assert (int(x.get_value()), int(y.get_value())) == (x_after, y_after)


def test_no_default_updates_of_one_generator_keeps_the_others_drawing():
    first, second = eg.RandomStream(1), eg.RandomStream(2)
    a, b = first.normal(size=(2,)), second.normal(size=(2,))
    frozen_rng = first.state_updates[0][0]
    f = eg.function([], [a, b], no_default_updates=[frozen_rng])
    (a1, b1), (a2, b2) = f(), f()
    np.testing.assert_array_equal(a1, a2)
    assert not np.array_equal(b1, b2)


@pytest.mark.parametrize("form, message", [
    ("x", "no_default_updates must be True, False or a list of shared variables, not str 'x'"),
    (1, "no_default_updates must be True, False or a list of shared variables, not int 1"),
    (None, "no_default_updates must be True, False or a list of shared variables, not NoneType None"),
    ([et.dscalar("z")], r"no_default_updates item #0 \(z\) is not a shared variable"),
    ([3], r"no_default_updates item #0 \(int 3\) is not a shared variable"),
])
def test_no_default_updates_refuses_other_values(form, message):
    x, _ = _two_counters()
    with pytest.raises(TypeError, match=message):
        eg.function([], [x * 1], no_default_updates=form)


def _float32_sum(**options):
    a, b = et.fscalar("a"), et.fvector("b")
    return eg.function([a, b], a + b, **options)


@pytest.mark.parametrize("flag", [False, None])
def test_a_python_float_that_float32_cannot_hold_exactly_is_refused(flag):
    f = _float32_sum(allow_input_downcast=flag)
    with pytest.raises(TypeError, match=r"Bad argument #1 \('b'\).*allow_input_downcast=True"):
        f(0, [0.1])


@pytest.mark.parametrize("flag", [False, None, True])
def test_values_float32_holds_exactly_are_accepted_whatever_the_flag(flag):
    f = _float32_sum(allow_input_downcast=flag)
    np.testing.assert_array_equal(f(1, [0.5, 2.0]), np.float32([1.5, 3.0]))
    np.testing.assert_array_equal(f(np.float64(1.0), np.array([0.5], dtype="float16")), np.float32([1.5]))


def test_allow_input_downcast_true_rounds_anything():
    f = _float32_sum(allow_input_downcast=True)
    np.testing.assert_array_equal(f(0.1, np.array([0.1])), np.float32(0.1) + np.float32([0.1]))


@pytest.mark.parametrize("flag, accepted", [(None, True), (False, False), (True, True)])
def test_none_rounds_python_floats_into_floatx_only(flag, accepted):
    f = _float32_sum(allow_input_downcast=flag)
    with eg.config.change_flags(floatX="float32"):  # read when called, as PyTensor reads it
        if accepted:
            for a in (0.1, np.float64(0.1)):
                np.testing.assert_array_equal(f(a, [1.0]), np.float32(0.1) + np.float32([1.0]))
        else:
            with pytest.raises(TypeError, match=r"Bad argument #0 \('a'\)"):
                f(0.1, [1.0])
        if flag is not True:  # a list is not a Python float: it must fit exactly
            with pytest.raises(TypeError, match=r"Bad argument #1 \('b'\)"):
                f(1, [0.1])


def test_a_float64_array_is_refused_for_a_float32_input_unless_downcasting():
    for flag in (None, False):
        with pytest.raises(TypeError, match=r"Bad argument #1 \('b'\).*float64"):
            _float32_sum(allow_input_downcast=flag)(1, np.ones(2))


def test_an_integral_float_fits_an_integer_input_exactly():
    i = et.lscalar("i")
    f = eg.function([i], i * 2, allow_input_downcast=False)
    assert f(3.0) == 6
    with pytest.raises(TypeError, match=r"Bad argument #0 \('i'\)"):
        f(3.5)


@pytest.mark.parametrize("flag", ["yes", 1, 0.0])
def test_allow_input_downcast_refuses_other_values(flag):
    with pytest.raises(TypeError, match="allow_input_downcast must be None, True or False"):
        _float32_sum(allow_input_downcast=flag)


def test_an_update_of_static_length_1_axes_is_refused_for_a_shared_variable_of_unknown_ones():
    s = eg.shared(np.ones((10, 10)), name="s")
    with pytest.raises(TypeError, match=r"The update of s .*static shape \(1, 1\).*axes 0, 1"):
        eg.function([], [], updates={s: s.sum().dimshuffle("x", "x")})
    assert s.get_value().shape == (10, 10)
    s.default_update = s.sum(keepdims=True)
    with pytest.raises(TypeError, match=r"The update of s .*static shape \(1, 1\)"):
        eg.function([], [s * 1])


def test_updates_of_the_same_static_ones_or_a_new_length_are_applied():
    s = eg.shared(np.ones((10, 10)), name="s")
    eg.function([], [], updates={s: s[:, :3] * 2})()   # an update may change a length, as in PyTensor
    np.testing.assert_array_equal(s.get_value(), np.full((10, 3), 2.0))
    r = eg.shared(np.ones((4, 1)), name="r", shape=(None, 1))
    eg.function([], [], updates={r: r.sum(axis=1, keepdims=True) + 1})()
    np.testing.assert_array_equal(r.get_value(), np.full((4, 1), 2.0))


def test_an_update_that_breaks_the_shared_variables_static_shape_fails_at_call_time():
    s = eg.shared(np.ones((10, 10)), name="s", shape=(10, 10))
    n = et.lscalar("n")
    f = eg.function([n], [], updates={s: s[:n]})
    with pytest.raises(ValueError, match=r"(?s)expected shape \(10, 10\), got \(1, 10\).*'updates\[s\]'"):
        f(1)
    assert s.get_value().shape == (10, 10)
