"""Aesara's Type.clone, eqgraph.config's floatX and eqgraph.pprint."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.grad import NullType
from eqgraph.terms import Type


class Sized(Type):
    """A parametrized type whose argument is required."""

    def __init__(self, size, label="plain"):
        self.size, self.label = size, label

    def filter(self, data, strict=False, allow_downcast=None):
        return data

    def __eq__(self, other):
        return type(other) is type(self) and (other.size, other.label) == (self.size, self.label)

    def __hash__(self):
        return hash((self.size, self.label))


def test_clone_of_a_type_with_a_required_argument_keeps_it():
    t = Sized(3, "big")
    assert t.clone() == t and t.clone() is not t
    assert t.clone(label="small") == Sized(3, "small")
    assert t.clone(4) == Sized(4, "big")
    with pytest.raises(TypeError, match="at most 2 positional"):
        t.clone(1, 2, 3)


def test_nulltype_clone_keeps_why_null():
    assert NullType("why").clone().why_null == "why"
    assert NullType("why").clone(why_null="other").why_null == "other"


def test_tensortype_clone_keeps_or_sets_the_name():
    t = et.TensorType("float32", (None, 3), name="points")
    assert t.clone().name == "points"
    assert t.clone(name="other").name == "other"
    assert t.clone(dtype="float64") == et.TensorType("float64", (None, 3))
    assert t.clone(dtype="float64").name == "points"
    assert t.clone(broadcastable=(True, False)).shape == (1, None)


def test_floatx_drives_constructors_and_python_float_constants():
    assert eg.config.floatX == "float64"
    with eg.config.change_flags(floatX="float32"):
        assert et.vector().dtype == "float32"
        assert et.matrix().dtype == "float32"
        assert et.TensorType("floatX", (None,)).dtype == "float32"
        assert et.constant(1.5).dtype == "float32"
        assert et.zeros((2,)).dtype == "float32"
        x = et.vector("x")
        y = x * 2.5
        assert y.dtype == "float32"
        assert eg.function([x], y)(np.ones(2, "float32")).dtype == np.float32
    assert et.vector().dtype == "float64" and et.constant(1.5).dtype == "float64"


def test_change_flags_restores_after_an_error_and_refuses_bad_values():
    with pytest.raises(RuntimeError):
        with eg.config.change_flags(floatX="float16"):
            raise RuntimeError
    assert eg.config.floatX == "float64"
    with pytest.raises(ValueError, match="floatX must be one of"):
        eg.config.floatX = "int32"
    with pytest.raises(AttributeError, match="no setting 'floatx'"):
        with eg.config.change_flags(floatx="float32"):
            pass
    eg.config.floatX = "float32"
    try:
        assert et.scalar().dtype == "float32"
    finally:
        eg.config.floatX = "float64"


@pytest.mark.parametrize("build, text", [
    (lambda x, v: x * 2 + et.exp(v), "((x * 2.0) + exp(v))"),
    (lambda x, v: -(x @ v).sum(axis=0), "-sum((x @ v), axis=(0,))"),
    (lambda x, v: x.T[1:, 0] / v.mean(), "(x.T[1:, 0] / mean(v, axis=(0,)))"),
    (lambda x, v: et.switch(v > 0, v, 0), "switch((v > 0.0), v, 0.0)"),
])
def test_pprint_is_one_line_of_math(build, text):
    x, v = et.dmatrix("x"), et.dvector("v")
    assert eg.pprint(build(x, v)) == text


def test_pprint_of_a_compiled_function_and_of_a_deep_shared_graph():
    x = et.dvector("x")
    assert eg.pprint(eg.function([x], [x + 1, x.sum()], rulesets=[])) == "(x + 1.0), sum(x, axis=(0,))"
    y = x
    for _ in range(40):  # each level uses the one below twice: 2**40 characters if not cut
        y = y * y
    text = eg.pprint(y)
    assert "\n" not in text and len(text) < 10_000 and text.endswith("...")
