"""The symbolic shape of a slice whose step is a variable: NumPy's length for either sign."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et

STARTS = [None, -8, -5, -1, 0, 1, 4, 5, 8]
STEPS = [-6, -3, -1, 1, 2, 5]


@pytest.mark.parametrize("step", STEPS)
def test_length_of_a_slice_with_a_symbolic_step(step):
    x, s = et.dvector("x"), et.lscalar("s")
    length = eg.function([x, s], x[::s].shape[0])
    values = np.arange(5.0)
    assert length(values, step) == len(values[::step])


def test_length_of_a_slice_with_symbolic_start_stop_and_step():
    x, a, b, s = et.dvector("x"), et.lscalar("a"), et.lscalar("b"), et.lscalar("s")
    length = eg.function([x, a, b, s], x[a:b:s].shape[0])
    values = np.arange(5.0)
    for start in STARTS[1:]:
        for stop in STARTS[1:]:
            for step in STEPS:
                assert length(values, start, stop, step) == len(values[start:stop:step]), (start, stop, step)


def test_a_constant_boolean_mask_gives_its_count_of_true_entries_as_static_size():
    y = et.tensor("y", shape=(None, None, None))
    mask = et.constant(np.array([True, False, True, True]))
    rows = et.constant(np.array([[True, False, True, True], [True, False, False, True]]))
    columns = et.tensor("columns", shape=(4, None), dtype="int64")
    assert y[mask].type.shape == (3, None, None)
    assert y[rows].type.shape == (5, None)
    assert y[mask, columns].type.shape == (4, 3, None)
    values = np.arange(4 * 2 * 3.0).reshape(4, 2, 3)
    np.testing.assert_array_equal(eg.function([y], y[mask])(values), values[mask.data])


def test_index_arrays_that_cannot_broadcast_are_refused_in_numpys_words():
    x, idx = et.dmatrix("x"), et.tensor("idx", shape=(10,), dtype="int64")
    with pytest.raises(IndexError, match=r"could not be broadcast together with shapes \[\(10,\), \(9,\)\]"):
        x[idx, idx[1:]]
    with pytest.raises(IndexError, match=r"with shapes \[\(3,\), \(6,\)\]"):
        x[et.constant(np.array([True, False, True, True])), et.concatenate([idx[:3], idx[:3]])]


def test_too_many_indices_are_refused_naming_the_tensor():
    y = et.tensor("y", shape=(4, 5, 6))
    mask = et.tensor("mask", shape=(None, 5), dtype="bool")
    with pytest.raises(IndexError, match="tensor is 3-dimensional, but 4 were indexed .*y"):
        y[mask, mask]


def test_take_with_mode_none_raises_on_an_index_out_of_range_as_numpy():
    a, i = et.dvector("a"), et.lvector("i")
    take = eg.function([a, i], et.take(a, i, mode=None))
    np.testing.assert_array_equal(take(np.arange(4.0), np.array([3, -1])), np.take(np.arange(4.0), [3, -1], mode=None))
    with pytest.raises(IndexError):
        take(np.arange(4.0), np.array([4]))


def test_an_element_of_a_constant_is_a_scalar_constant():
    data = np.arange(12.0).reshape(3, 4) / 7
    c = et.constant(data)
    for i in range(3):
        for j in range(4):
            assert et.get_underlying_scalar_constant_value(c[i, j]) == data[i, j]
    assert et.get_scalar_constant_value(c[1][2]) == data[1, 2]
    with pytest.raises(et.NotScalarConstantError):
        et.get_scalar_constant_value(c[1])
    with pytest.raises(et.NotScalarConstantError):
        et.get_scalar_constant_value(c[et.lscalar("i"), 0])


@pytest.mark.parametrize("start, stop, step", [(1, 1, None), (-1, -1, 3), (3, 1, None), (-2, -4, 2), (1, 3, -1),
                                               (-4, -2, -1), (2, 2, -2)])
def test_a_slice_empty_for_any_length_has_static_size_zero(start, stop, step):
    v = et.lvector("v")
    assert v[start:stop:step].type.shape == (0,)
    for n in range(6):
        assert len(np.arange(n)[start:stop:step]) == 0


@pytest.mark.parametrize("start, stop, step", [(1, 3, None), (-1, 1, None), (1, -1, None), (None, 2, None),
                                               (3, 1, -1), (-1, -3, -1)])
def test_a_slice_whose_size_depends_on_the_length_stays_unknown(start, stop, step):
    assert et.lvector("v")[start:stop:step].type.shape == (None,)
