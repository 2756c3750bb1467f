"""eqgraph.In, PyTensor's ``pytensor.compile.io.In``: defaults, names, updates kept as the
function's state, and mutable/borrow (which never make an output alias an argument)."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et


def test_a_default_value_and_a_keyword_name():
    x, y = et.dscalars("x", "y")
    f = eg.function([x, eg.In(y, value=1.0, name="offset")], x + y)
    assert f(2.0) == 3.0 and f(2.0, 3.0) == 5.0 and f(2.0, offset=5.0) == 7.0
    with pytest.raises(TypeError, match="missing input"):
        f(offset=1.0)


def test_an_update_keeps_state_between_calls():
    total, step = et.dscalar("total"), et.dscalar("step")
    f = eg.function([eg.In(step, value=1.0), eg.In(total, value=0.0, update=total + step, name="acc")], total * 2)
    assert [f(), f(), f()] == [0.0, 2.0, 4.0]
    assert f["acc"] == 3.0 and f[total] == 3.0
    assert f(step=10.0) == 6.0 and f["acc"] == 13.0
    f["acc"] = 100.0
    assert f() == 200.0 and f["acc"] == 101.0
    assert f(total=-1.0) == -2.0 and f["acc"] == 0.0  # a value passed is used, then updated


def test_a_vector_state_is_never_the_callers_array():
    v = et.dvector("v")
    f = eg.function([eg.In(v, value=np.zeros(3), update=v + 1.0)], v)
    first = f()
    second = f()
    np.testing.assert_array_equal(first, np.zeros(3))
    np.testing.assert_array_equal(second, np.ones(3))
    assert not np.shares_memory(first, f["v"]) and not np.shares_memory(second, f["v"])


@pytest.mark.parametrize("options", [{"mutable": True}, {"borrow": True}, {"mutable": True, "borrow": True}])
def test_mutable_and_borrow_never_alias_or_overwrite_the_argument(options):
    v = et.dvector("v")
    f = eg.function([eg.In(v, **options)], [v, v * 2])
    value = np.arange(3.0)
    same, double = f(value)
    assert not np.shares_memory(same, value)
    np.testing.assert_array_equal(value, np.arange(3.0))
    np.testing.assert_array_equal(double, value * 2)


def test_the_copy_of_a_function_shares_the_state():
    c = et.dscalar("c")
    f = eg.function([eg.In(c, value=0.0, update=c + 1.0)], c)
    g = f.copy()
    f()
    assert g() == 1.0 and f["c"] == 2.0


@pytest.mark.parametrize("build, error, match", [
    (lambda x: eg.In(1.0), TypeError, "must be a symbolic Variable"),
    (lambda x: eg.In(x, mutable=True, borrow=False), ValueError, "mutable=True implies borrow=True"),
    (lambda x: eg.In(x, implicit=True), TypeError, "not supported"),
    (lambda x: eg.In(x, allow_downcast="yes"), TypeError, "allow_downcast must be None, True or False"),
    (lambda x: eg.In(x, value=0.0, update=et.dvector("w")), TypeError, "does not fit"),
    (lambda x: eg.function([eg.In(eg.shared(1.0), update=x)], x), TypeError, "Cannot use a shared variable"),
    (lambda x: eg.function([x, x], x), eg.UnusedInputError, "used twice in inputs"),
    (lambda x: eg.Out(x, borrow=1), TypeError, "borrow must be True or False"),
    (lambda x: eg.function([eg.In(x, value="a")], x), TypeError, r"In\(x\): the value"),
])
def test_clear_errors(build, error, match):
    with pytest.raises(error, match=match):
        build(et.dscalar("x"))


def test_unknown_key_is_a_key_error():
    x = et.dscalar("x")
    f = eg.function([x], x)
    with pytest.raises(KeyError, match="no default value"):
        f["x"]
    with pytest.raises(KeyError, match="no input"):
        f["nope"]


def test_strict_takes_only_an_array_of_the_inputs_type():
    a = et.dvector("a")
    f = eg.function([eg.In(a, strict=True)], a * 2)
    np.testing.assert_array_equal(f(np.ones(2)), [2.0, 2.0])
    with pytest.raises(TypeError, match="Bad argument #0"):
        f(np.ones(2, dtype="int32"))
    loose = eg.function([eg.In(a, strict=False)], a * 2)
    np.testing.assert_array_equal(loose(np.ones(2, dtype="int32")), [2.0, 2.0])


def test_allow_downcast_is_per_input_and_none_is_the_functions():
    a, b, c = et.fscalar("a"), et.fscalar("b"), et.fscalar("c")
    f = eg.function([eg.In(a, allow_downcast=True), eg.In(b, allow_downcast=False), eg.In(c)], a + b + c)
    assert np.isclose(f(0.1, 0, 0), 0.1)
    with pytest.raises(TypeError):
        f(0, 0.1, 0)
    g = eg.function([eg.In(a, allow_downcast=False), b], a + b, allow_input_downcast=True)
    assert np.isclose(g(0, 0.1), 0.1)
    with pytest.raises(TypeError):
        g(0.1, 0)
    assert np.isclose(g.copy()(0, 0.1), 0.1)


def test_an_update_without_a_value_needs_the_argument_until_the_first_call():
    x, s = et.dscalars("x", "s")
    f = eg.function([x, eg.In(s, update=s + x)], s + x)
    with pytest.raises(TypeError, match="missing input"):
        f(2.0)
    assert f(2.0, 1.0) == 3.0 and f["s"] == 3.0
    assert f(2.0) == 5.0 and f(2.0, 1.0) == 3.0


def test_out_borrow_false_never_aliases_borrow_true_may_return_kept_memory():
    a = et.dmatrix("a")
    o = np.ones((2, 2))
    assert not np.shares_memory(eg.function([a], eg.Out(a, borrow=False))(o), o)
    constant = eg.function([], eg.Out(et.constant([4.0]), borrow=True))
    assert constant() is constant()  # the constant itself, read-only: the caller must not change it
    copied = eg.function([], et.constant([4.0]))
    first = copied()
    first[0] = 3.0
    np.testing.assert_array_equal(copied(), [4.0])
    both = eg.function([a], [eg.Out(a * 4, borrow=True), a + 1])
    out = both(o)
    np.testing.assert_array_equal(out[0], o * 4)
    np.testing.assert_array_equal(out[1], o + 1)


def test_a_pickled_function_keeps_its_borrowed_outputs():
    import pickle
    f = pickle.loads(pickle.dumps(eg.function([], eg.Out(et.constant([4.0]), borrow=True))))
    assert f() is f()


def test_a_borrowed_output_never_aliases_the_argument():
    a = et.dmatrix("a")
    value = np.random.default_rng(0).random((3, 3))
    for out in (a + 1, a[0, :], a):
        f = eg.function([eg.In(a, borrow=False)], eg.Out(out, borrow=True))
        assert not np.shares_memory(f(value), value)
    s = eg.shared(np.ones(3))
    g = eg.function([], eg.Out(s, borrow=True))
    assert not np.shares_memory(g(), s.get_value(borrow=True))


def test_a_copied_or_pickled_function_keeps_trust_input():
    import copy
    x = et.dscalar("x")
    f = eg.function([x], x * 2)
    f.trust_input = True
    assert copy.deepcopy(f).trust_input is True
