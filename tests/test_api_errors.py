"""Mistakes a new user makes with ``eqgraph.function`` get an error naming the argument
and what was expected, never a silently wrong function."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.tensor import TensorType


# -- givens ------------------------------------------------------------------------
def test_givens_of_another_type_are_refused_naming_both_types_and_the_variable():
    x, m = et.dvector("x"), et.dmatrix("m")
    with pytest.raises(TypeError, match=r"givens.*x.*TensorType\(float64, \(None,\)\).*m.*TensorType\(float64, \(None, None\)\)"):
        eg.function([m], x * 2, givens={x: m})
    f32 = et.fvector("f")
    with pytest.raises(TypeError, match=r"givens.*x.*float64.*f.*float32"):
        eg.function([f32], x * 2, givens={x: f32})


def test_givens_narrow_or_widen_static_shapes_where_compatible():
    x = et.dvector("x")
    three = TensorType("float64", (3,))("three")
    f = eg.function([three], x * 2, givens={x: three})       # narrower: used as it is
    np.testing.assert_array_equal(f(np.ones(3)), [2, 2, 2])
    y = TensorType("float64", (2,))("y")
    g = eg.function([x], y.sum(), givens={y: x})               # wider: checked at run time
    assert g(np.ones(2)) == 2.0
    with pytest.raises(Exception, match="shape"):
        g(np.ones(5))


def test_givens_keys_must_be_variables_and_values_are_converted_or_refused():
    x, m = et.dvector("x"), et.dmatrix("m")
    with pytest.raises(TypeError, match=r"givens keys must be symbolic Variables; the value str 'x' is not one"):
        eg.function([m], m * 2, givens={"x": m})
    f = eg.function([], x * 2, givens={x: [1.0, 2.0]})   # a value becomes a constant of x's type
    np.testing.assert_array_equal(f(), [2.0, 4.0])
    with pytest.raises(TypeError, match=r"givens cannot replace x.*the value ndarray.*dimensions"):
        eg.function([], x * 2, givens={x: np.ones((2, 2))})
    with pytest.raises(TypeError, match=r"givens cannot replace x.*the value str 'abc'"):
        eg.function([], x * 2, givens={x: "abc"})


def test_givens_as_pairs_and_bad_containers():
    x, y = et.dvector("x"), et.dvector("y")
    f = eg.function([y], x + 1, givens=[(x, y * 2)])
    np.testing.assert_array_equal(f(np.ones(2)), [3, 3])
    with pytest.raises(TypeError, match=r"givens must be a dict.*or a list of \(variable, replacement\) pairs"):
        eg.function([y], x + 1, givens=[x, y])
    with pytest.raises(ValueError, match="givens.*x.*twice"):
        eg.function([y], x + 1, givens=[(x, y), (x, y * 2)])


@pytest.mark.parametrize("updates, message", [
    ("w_list", r"updates must be a dict \{shared variable: new value\} or a list of \(shared variable, new value\) pairs; item #0 is"),
    ("expr", r"updates must be a dict.*not TensorVariable"),
    ("triple", r"updates must be a dict.*item #0 is tuple"),
    ("text", r"The update of w \(type .*\) is the value str 'abc'"),
    ("input", r"updates must update shared variables; x of type .* is not one"),
])
def test_bad_updates(updates, message):
    w, x = eg.shared(np.zeros(2), name="w"), et.dvector("x")
    value = {"w_list": [w], "expr": w + 1, "triple": [(w, x, 1)], "text": {w: "abc"}, "input": {x: x}}[updates]
    with pytest.raises(TypeError, match=message):
        eg.function([x], x, updates=value)


def test_update_values_take_the_shared_variables_type():
    s = eg.shared(np.float32(1.0), name="s")
    f = eg.function([], [], updates={s: 0.5})  # a Python float fits float32, as in NumPy
    f()
    assert s.get_value() == np.float32(0.5) and s.get_value().dtype == np.float32


# -- function() arguments ---------------------------------------------------------------
@pytest.mark.parametrize("outputs, message", [
    (3.0, r"outputs must be a Variable or a list of Variables.*float 3.0.*et.constant"),
    (np.arange(3), r"outputs must be a Variable or a list of Variables.*ndarray"),
    ({"a": 1}, r"outputs.*dict.*list"),
    ("y", r"outputs must be a Variable.*str"),
    ([1.0], r"Output #0.*must be a symbolic Variable.*float 1.0"),
])
def test_bad_outputs(outputs, message):
    with pytest.raises(TypeError, match=message):
        eg.function([], outputs)


def test_outputs_of_every_accepted_form_still_work():
    x = et.dvector("x")
    assert isinstance(eg.function([x], x * 2)(np.ones(2)), np.ndarray)
    assert len(eg.function([x], (x * 2, x + 1))(np.ones(2))) == 2
    assert len(eg.function([x], (v for v in [x * 2, x + 1]))(np.ones(2))) == 2
    assert eg.function([x], [], on_unused_input="ignore")(np.ones(2)) == []
    assert eg.function([x], None, on_unused_input="ignore")(np.ones(2)) == []


@pytest.mark.parametrize("inputs, message", [
    ((v for v in [1, 2]), r"Input #0 of function\(\) must be a symbolic Variable, not int 1"),
    (3.0, r"inputs must be a list of Variables.*float 3.0"),
    ({"x": 1}, r"inputs must be a list of Variables.*dict"),
    ("x", r"inputs must be a list of Variables.*str"),
    (None, r"inputs must be a list of Variables.*None"),
])
def test_bad_inputs(inputs, message):
    with pytest.raises(TypeError, match=message):
        eg.function(inputs, et.dvector() * 2)


@pytest.mark.parametrize("kwargs, message", [
    ({"rulesets": "algebra"}, r"rulesets must be a list.*not the string 'algebra'.*\['algebra'\]"),
    ({"rulesets": 3}, r"rulesets must be a list.*int"),
    ({"limits": (1, 2, 3)}, r"limits must be an eqgraph.Limits.*tuple \(1, 2, 3\)"),
    ({"limits": 5}, r"limits must be an eqgraph.Limits"),
    ({"cost_model": "cheap"}, r"cost_model must be None or an object with a node_cost.*'cheap'"),
    ({"name": 3}, r"name must be a string"),
])
def test_bad_compile_options(kwargs, message):
    x = et.dvector("x")
    with pytest.raises(TypeError, match=message):
        eg.function([x], x * 2, **kwargs)


def test_good_compile_options_still_work():
    x = et.dvector("x")
    for kwargs in ({"rulesets": []}, {"rulesets": ("algebra",)}, {"limits": eg.Limits(iterations=1)},
                   {"cost_model": eg.CostModel()}):
        np.testing.assert_array_equal(eg.function([x], x * 2, **kwargs)(np.ones(2)), [2, 2])


# -- converting arguments at call time -----------------------------------------------------
@pytest.mark.parametrize("value, dtype", [
    ([2**63], "int64"), ([2**63, -1], "int64"), ([2**64], "int64"), ([-(2**63) - 1], "int64"),
    ([-1], "uint8"), ([300], "int8"),
])
def test_python_ints_that_do_not_fit_say_so(value, dtype):
    v = TensorType(dtype, (None,))("v")
    f = eg.function([v], v + 1)
    with pytest.raises(TypeError, match=rf"does not fit {dtype} \(range") as info:
        f(value)
    assert "float64" not in str(info.value) and "uint64" not in str(info.value)
    assert "object" not in str(info.value)


def test_other_bad_numbers_keep_the_dtype_explanation():
    l = et.lvector("l")
    f = eg.function([l], l * 1)
    with pytest.raises(TypeError, match="dtype float64 without risking loss of precision"):
        f([float("nan")])
    with pytest.raises(TypeError, match=r"1e\+30 does not fit int64"):
        f([1e30])


def test_python_floats_too_large_for_float32_are_refused_not_made_inf():
    x = et.fvector("x")
    f = eg.function([x], x * 1)
    with pytest.raises(TypeError, match=r"finite number in it would become inf \(largest float32"):
        f([1.0, 1e40])
    # infinities are exact in float32 (0.1 is not: PyTensor's rules refuse it, see allow_input_downcast)
    np.testing.assert_array_equal(f([0.5, float("inf"), -float("inf")]), np.float32([0.5, np.inf, -np.inf]))


def test_python_ints_that_fit_are_still_accepted():
    l8 = TensorType("int8", (None,))("l8")
    np.testing.assert_array_equal(eg.function([l8], l8 * 1)([127, -128]), [127, -128])
    l = et.lvector("l")
    np.testing.assert_array_equal(eg.function([l], l * 1)([2**63 - 1]), [2**63 - 1])


def test_masked_arrays_are_refused():
    """A masked value has no meaning to the compiled graph, which would silently compute
    with whatever lies under the mask; refused even when nothing is masked, so a
    function never works on one call and fails on the next depending on the data."""
    x = et.dvector("x")
    f = eg.function([x], x + 1)
    for value in (np.ma.array([1.0, 2.0], mask=[0, 1]), np.ma.array([1.0, 2.0])):
        with pytest.raises(TypeError, match=r"masked array.*filled\(.*np.ma.getdata"):
            f(value)
    with pytest.raises(TypeError, match="masked array"):
        eg.shared(np.ma.array([1.0, 2.0], mask=[0, 1]))
    with pytest.raises(TypeError, match="masked array"):
        et.constant(np.ma.array([1.0, 2.0], mask=[0, 1]))


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_ndarray_subclasses_become_plain_arrays():
    """np.matrix keeps two dimensions through reductions (or refuses ``keepdims``):
    computing with it would give wrong shapes, so the filter takes a plain-ndarray view."""
    m = et.dmatrix("m")
    f = eg.function([m], m.sum(axis=0))
    out = f(np.matrix([[1.0, 2.0], [3.0, 4.0]]))
    assert type(out) is np.ndarray and out.shape == (2,)


def test_the_errors_a_user_may_catch_are_importable_from_eqgraph():
    import eqgraph

    for name in ("NodeError", "EgglogError", "EgglogPanic", "GraphCycleError", "UnsoundRuleError",
                 "RuleFileError", "TypeContradiction", "UnusedInputError"):
        assert issubclass(getattr(eqgraph, name), Exception), name


@pytest.mark.parametrize("value", [1e40, [1.0, -1e39], np.array([3e38, 1e300])])
def test_a_constant_too_large_for_its_float_dtype_is_refused(value):
    with pytest.raises(ValueError, match="does not fit float32"):
        et.constant(value, dtype="float32")


def test_infinite_and_fitting_constants_are_kept():
    assert np.isinf(et.constant(np.inf, dtype="float32").data)
    np.testing.assert_array_equal(et.constant([1.5, -2.0], dtype="float32").data, [1.5, -2.0])


def test_set_and_inc_subtensor_of_a_full_slice():
    # x[:] returned x itself, so set_subtensor(x[:], y) raised "take an indexed tensor"
    x, y = et.dmatrix("x"), et.dvector("y")
    data, row = np.arange(6.0).reshape(2, 3), np.array([1.0, 2.0, 3.0])
    f = eg.function([x, y], [et.set_subtensor(x[:], y), et.inc_subtensor(x[:, :], y), x[:]])
    got = f(data, row)
    np.testing.assert_array_equal(got[0], np.broadcast_to(row, (2, 3)))
    np.testing.assert_array_equal(got[1], data + row)
    np.testing.assert_array_equal(got[2], data)
    assert not np.shares_memory(got[2], data)
