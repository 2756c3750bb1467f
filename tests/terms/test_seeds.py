"""The seed documents' examples, with only their import lines changed."""

from fractions import Fraction

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.terms import Apply, Constant, FunctionGraph, Op, Type

# --- Aesara's DoubleType --------------------------------------------------------------


class DoubleType(Type):
    def filter(self, x, strict=False, allow_downcast=None):
        if strict:
            if isinstance(x, float):
                return x
            else:
                raise TypeError("Expected a float!")
        elif allow_downcast:
            return float(x)
        else:  # Covers both the False and None cases.
            x_float = float(x)
            if x_float == x:
                return x_float
            else:
                raise TypeError("The double type cannot accurately represent "
                                f"value {x} (of type {type(x)}): you must explicitly "
                                "allow downcasting if you want to do this.")

    def values_eq_approx(self, x, y, tolerance=1e-4):
        return abs(x - y) / (abs(x) + abs(y)) < tolerance

    def __str__(self):
        return "double"


double = DoubleType()

# --- Aesara's BinaryDoubleOp -------------------------------------------------------------


class BinaryDoubleOp(Op):
    __props__ = ("name", "fn")

    def __init__(self, name, fn):
        self.name = name
        self.fn = fn

    def make_node(self, x, y):
        if isinstance(x, (int, float)):
            x = Constant(double, x)
        if isinstance(y, (int, float)):
            y = Constant(double, y)
        if x.type != double or y.type != double:
            raise TypeError("%s only works on doubles" % self.name)
        return Apply(self, [x, y], [double()])

    def perform(self, node, inp, out):
        x, y = inp
        (z,) = out
        z[0] = self.fn(x, y)

    def __str__(self):
        return self.name


add = BinaryDoubleOp(name="add", fn=lambda x, y: x + y)
sub = BinaryDoubleOp(name="sub", fn=lambda x, y: x - y)
mul = BinaryDoubleOp(name="mul", fn=lambda x, y: x * y)
div = BinaryDoubleOp(name="div", fn=lambda x, y: x / y)


def test_double_type_filter():
    assert double.filter(3) == 3.0 and isinstance(double.filter(3), float)
    assert double.filter(2.5, strict=True) == 2.5
    with pytest.raises(TypeError, match="Expected a float"):
        double.filter(3, strict=True)
    with pytest.raises(TypeError, match="cannot accurately represent"):
        double.filter(Fraction(1, 3))  # float(1/3) != 1/3 exactly
    assert double.filter(np.float32(1.5), allow_downcast=True) == 1.5
    assert double.is_valid_value(1.0) and not double.is_valid_value(1)


def test_double_type_values_eq_approx():
    assert double.values_eq_approx(1.0, 1.00001)
    assert not double.values_eq_approx(1.0, 1.1)
    assert double.values_eq(2.0, 2.0)


def test_double_type_singleton_equality():
    assert DoubleType() != DoubleType()        # default Type equality is identity (as in Aesara)
    assert double == double
    x, y = double("x"), double("y")
    assert x.type is double and y.name == "y"


def test_binary_double_ops_through_default_make_thunk():
    x, y = double("x"), double("y")
    z = add(mul(x, 2), div(sub(x, y), 4))
    assert z.owner.op is add and str(z.owner.op) == "add"
    assert isinstance(z.owner.inputs[0].owner.inputs[1], Constant)
    f = eg.function([x, y], z)
    assert f(5, 6) == 5 * 2 + (5 - 6) / 4
    assert np.isclose(f(5.6, 6.7), 5.6 * 2 + (5.6 - 6.7) / 4)
    with pytest.raises(TypeError, match="cannot accurately represent|Bad argument"):
        f(Fraction(1, 3), 1.0)


def test_binary_double_op_props_and_errors():
    assert mul == BinaryDoubleOp("mul", mul.fn) and hash(mul) == hash(BinaryDoubleOp("mul", mul.fn))
    assert mul != add
    with pytest.raises(TypeError, match="mul only works on doubles"):
        mul(et.dscalar("a"), 1.0)


def test_default_make_thunk_sets_compute_map():
    x, y = double("x"), double("y")
    node = mul.make_node(x, y)
    storage = {x: [3.0], y: [4.0], node.outputs[0]: [None]}
    computed = {x: [1], y: [1], node.outputs[0]: [0]}
    thunk = mul.make_thunk(node, storage, computed, no_recycling=[])
    thunk()
    assert storage[node.outputs[0]][0] == 12.0 and computed[node.outputs[0]][0] == 1


# --- Aesara's graph walks and clients --------------------------------------------------


def test_seed_003_graph_walk():
    x = et.dmatrix("x")
    y = x * 2.0
    assert isinstance(y.owner, Apply)
    assert y.owner.op == et.mul and y.owner.op.name == "mul"
    assert len(y.owner.inputs) == 2 and y.owner.inputs[0] is x
    ds = y.owner.inputs[1]
    assert isinstance(ds.owner.op, et.DimShuffle) and ds.owner.op.new_order == ("x", "x")
    (two,) = ds.owner.inputs
    assert isinstance(two, et.TensorConstant) and two.data == 2.0


def test_seed_003_clients():
    v = et.vector()
    fgraph = FunctionGraph([v], [(v + 1).sum()])
    topo = fgraph.toposort()
    assert [type(n.op).__name__ for n in topo] == ["DimShuffle", "Elemwise", "Reduce"]
    add_out, sum_out = topo[1].outputs[0], topo[2].outputs[0]
    client = fgraph.clients[add_out][0]
    assert client[0] is topo[2] and client[0].inputs[client[1]] is add_out
    assert fgraph.clients[sum_out] == [("output", 0)]
    assert fgraph.outputs[fgraph.clients[sum_out][0][1]] is sum_out


def test_seed_003_a_plus_a_pow_10():
    a = et.vector("a")
    f = eg.function([a], a + a ** 10)
    np.testing.assert_array_equal(f([0, 1, 2]), [0.0, 2.0, 1026.0])
