"""``eqgraph.wrap_py`` (PyTensor's ``pytensor.compile.ops.wrap_py``, deprecated ``as_op``): an Op
from a Python function."""

import pickle

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et


@eg.wrap_py([et.dmatrix, et.dmatrix], et.dmatrix)
def multiply(a, b):
    return a * b


def test_one_and_two_inputs():
    x, y = et.dmatrix("x"), et.dvector("y")

    @eg.wrap_py(et.dmatrix, et.dvector)
    def cumprod(x):
        return np.cumprod(x)

    @eg.wrap_py([et.dmatrix, et.dvector], et.dvector)
    def cumprod_plus(x, y):
        return np.cumprod(x) + y

    np.testing.assert_allclose(eg.function([x], cumprod(x))([[1.5, 5], [2, 2]]), [1.5, 7.5, 15.0, 30.0])
    out = eg.function([x, y], cumprod_plus(x, y))([[1.5, 5], [2, 2]], [1, 100, 2, 200])
    np.testing.assert_allclose(out, [2.5, 107.5, 17.0, 230.0])


def test_infer_shape_gives_the_shape_without_calling_the_function():
    calls = []
    x, y = et.dmatrix("x"), et.dvector("y")

    @eg.wrap_py([et.dmatrix, et.dvector], et.dvector, lambda fgraph, node, shapes: [shapes[1]])
    def counted(x, y):
        calls.append(1)
        return np.cumprod(x) + y

    node = counted(x, y).owner
    shape = node.op.infer_shape(None, node, [(2, 2), (4,)])
    assert shape == [(4,)] and not calls


def test_as_op_is_the_deprecated_name():
    with pytest.warns(FutureWarning, match="use wrap_py"):
        op = eg.as_op(et.dvector, et.dvector)(np.sort)
    v = et.dvector("v")
    np.testing.assert_array_equal(eg.function([v], op(v))([3.0, 1.0]), [1.0, 3.0])


def test_a_module_level_op_pickles_as_itself():
    x, y = et.dmatrix("x"), et.dmatrix("y")
    product = multiply(x, y)
    assert pickle.loads(pickle.dumps(product)).owner.op == product.owner.op


def test_bad_types_and_inputs_are_refused_by_name():
    with pytest.raises(TypeError, match="itypes must be Types"):
        eg.wrap_py(["float64"], et.dvector)
    with pytest.raises(TypeError, match="expected 2 inputs"):
        multiply(et.dmatrix("x"))
    with pytest.raises(TypeError):
        multiply(et.dvector("v"), et.dmatrix("x"))
