"""make_node refuses inputs it cannot handle, naming the op and the inputs."""

import pytest

import eqgraph.tensor as et
from eqgraph.tensor import TensorType


def test_dot_wrong_ndim():
    with pytest.raises(TypeError, match="dot supports tensors of at most 2 dimensions.*A.*3-d"):
        et.dot(et.tensor3("A"), et.dmatrix("B"))
    # PyTensor's (and NumPy's) error type and PyTensor's words
    with pytest.raises(ValueError, match="matmul: its operands cannot be scalar.*s \\(0-d\\)"):
        et.matmul(et.dscalar("s"), et.dmatrix("B"))


def test_matmul_misaligned_static_shapes():
    a, b = TensorType("float64", (2, 3))("a"), TensorType("float64", (4, 5))("b")
    with pytest.raises(ValueError, match=r"matmul: shapes \(2, 3\) of a and \(4, 5\) of b are not aligned"):
        a @ b


def test_broadcast_incompatible_static_shapes():
    a, b = TensorType("float64", (2, 3))("a"), TensorType("float64", (4, 3))("b")
    with pytest.raises(ValueError, match=r"Elemwise\{add\} cannot broadcast a, b.*axis 0"):
        a + b


def test_non_tensor_inputs():
    with pytest.raises(TypeError, match=r"Elemwise\{add\}.*Cannot convert"):
        et.add(et.dvector("x"), object())
    with pytest.raises(TypeError, match="Elemwise{exp} takes 1 inputs, got 2"):
        et.exp(et.dvector(), et.dvector())


def test_shape_errors():
    with pytest.raises(ValueError, match="cannot reshape"):
        TensorType("float64", (2, 3))("x").reshape((4, 2))
    with pytest.raises(ValueError, match="at most one entry"):
        et.dmatrix().reshape((-1, -1))
    with pytest.raises(ValueError, match=r"Reshape.*the new shape \(2, -2\) of x has the negative entry -2"):
        et.dvector("x").reshape((2, -2))  # it said "static shape entries must be non-negative"
    with pytest.raises(ValueError, match="cannot drop axis 0"):
        et.dimshuffle(et.dmatrix("m"), (1,))
    with pytest.raises(ValueError, match="contradicts"):
        et.specify_shape(TensorType("float64", (2,))("v"), (3,))
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        et.dmatrix().sum(axis=2)
    with pytest.raises(ValueError, match="sizes must match exactly on every axis but the joined one; on axis 0"):
        et.concatenate([TensorType("float64", (2, 1))(), TensorType("float64", (3, 1))()], axis=1)


def test_index_errors():
    v = TensorType("float64", (3,))("v")
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 of v with size 3"):
        v[5]
    with pytest.raises(IndexError, match="too many indices"):
        v[0, 1]
    with pytest.raises(IndexError, match="must be an integer"):
        v[et.dscalar("i")]
    with pytest.raises(TypeError, match="without losing precision"):
        et.set_subtensor(et.ivector()[0], et.dscalar())
    with pytest.raises(ValueError, match="cannot be broadcast"):
        et.set_subtensor(v[0:2], TensorType("float64", (3,))())
    with pytest.raises(TypeError, match="indexed tensor"):
        et.set_subtensor(v, 1.0)


def test_truth_value_of_symbolic_variable():
    with pytest.raises(TypeError, match="truth value"):
        bool(et.dscalar() > 0)


def test_an_index_op_given_too_few_index_inputs_says_how_many_it_reads():
    x = et.dmatrix("x")
    with pytest.raises(TypeError, match=r"the index \{a\} reads 1 index input\(s\), 0 were given"):
        et.AdvancedIncSubtensor(("a",), False).make_node(x, x[0])


def test_increment_and_set_ops_print_their_names():
    import numpy as np

    rows = np.array([0, 1])
    x = et.dmatrix("x")
    assert str(et.inc_subtensor(x[rows], 1.0).owner.op) == "AdvancedIncSubtensor{a, :}"
    assert str(et.set_subtensor(x[rows], 1.0).owner.op) == "AdvancedSetSubtensor{a, :}"
    assert str(et.set_subtensor(x[0], 1.0).owner.op) == "SetSubtensor{0, :}"
