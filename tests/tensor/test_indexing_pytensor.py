"""Indexing as PyTensor documents it where NumPy has no graph-time answer."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et


def test_a_list_of_scalar_variables_is_an_index_array():
    rows = np.arange(24.0).reshape(4, 2, 3)
    x, i, j, k = et.dtensor3("x"), et.iscalar("i"), et.iscalar("j"), et.iscalar("k")
    picked = eg.function([x, i, j, k], [x[[i, j], :], x[[i, j, k], :, i:k], x[(i, 2), 0]])
    a, b, c = picked(rows, 0, 1, 2)
    np.testing.assert_array_equal(a, rows[[0, 1], :])
    np.testing.assert_array_equal(b, rows[[0, 1, 2], :, 0:2])
    np.testing.assert_array_equal(c, rows[(0, 2), 0])


def test_a_list_of_float_variables_is_refused():
    x, f = et.dvector("x"), et.dscalar("f")
    with pytest.raises(IndexError, match="integer"):
        x[[f, f]]


def test_a_boolean_scalar_index_is_refused_as_not_implemented_and_as_an_index_error():
    x = et.dvector("x")
    for index in (True, np.array(True), et.bscalar("b") > 0):
        with pytest.raises(NotImplementedError, match="boolean scalars"):
            x[index]
        with pytest.raises(IndexError, match="boolean scalars"):
            x[index]


def test_a_value_of_more_dimensions_than_the_indexed_region_is_a_type_error():
    a, increment = et.dmatrix("a"), et.dmatrix("increment")
    for write in (et.set_subtensor, et.inc_subtensor):
        with pytest.raises(TypeError, match="cannot be broadcast to the indexed region"):
            write(a[0], increment)
        with pytest.raises(ValueError, match="cannot be broadcast to the indexed region"):
            write(a[0], increment)


def test_advanced_inc_subtensor_takes_inplace_as_inc_subtensor_does():
    x, y, i = et.dvector("x"), et.dvector("y"), et.lvector("i")
    added = eg.function([x, y, i], et.advanced_inc_subtensor(x, y, i, inplace=False))
    expected = np.arange(4.0)
    np.add.at(expected, [1, 1, 3], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(added(np.arange(4.0), np.array([1.0, 2.0, 3.0]), np.array([1, 1, 3])), expected)
    with pytest.raises(ValueError, match="inplace"):
        et.advanced_inc_subtensor(x, y, i, inplace=True)


@pytest.mark.parametrize("index, text", [
    ((0,), "x[0]"), ((slice(None, 2),), "x[:2]"), ((slice(0, None),), "x[0:]"), ((slice(0, 2, 2),), "x[0:2:2]"),
    ((slice(0, 2), 0, slice(0, 2)), "x[0:2, 0, 0:2]"), ((Ellipsis, 1), "x[:, :, :, 1]"), ((None, 1), "x[None, 1]"),
])
def test_pprint_writes_an_index_as_python_does(index, text):
    assert eg.pprint(et.dtensor4("x")[index]) == text


def test_pprint_writes_symbolic_and_array_indices_and_writes_by_name():
    x, z, i = et.dtensor4("x"), et.dtensor3("z"), et.lscalar("i")
    idx, idx2 = et.ivector("idx"), et.ivector("idx2")
    assert eg.pprint(x[idx, idx2]) == "x[idx, idx2]"
    assert eg.pprint(x[idx, 0:5]) == "x[idx, 0:5]"
    assert eg.pprint(x[i:, 0]) == "x[i:, 0]"
    assert eg.pprint(et.inc_subtensor(x[0], z)) == "inc_subtensor(x[0], z)"
    assert eg.pprint(et.set_subtensor(x[idx, :5], z[0])) == "set_subtensor(x[idx, :5], z[0])"


def test_an_index_op_built_from_python_slices_equals_the_one_x_index_builds():
    x = et.dmatrix("x")
    made = et.Subtensor([slice(None), 0])
    assert made == x[:, 0].owner.op and hash(made) == hash(x[:, 0].owner.op)
    assert et.IncSubtensor([slice(1, None), slice(None)]) == et.inc_subtensor(x[1:], 1.0).owner.op
    np.testing.assert_array_equal(made(x).eval({x: np.eye(3)}), np.eye(3)[:, 0])
