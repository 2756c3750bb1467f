"""``shared(v, allow_downcast=True)``: the permission to downcast holds for later values too (PyTensor's)."""

import numpy as np
import pytest

import eqgraph as eg


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8"])
def test_set_value_downcasts_where_the_shared_variable_allows_it(dtype):
    b = eg.shared(np.dtype(dtype).type(7), allow_downcast=True)
    assert b.dtype == dtype
    b.set_value(8.23)
    assert b.get_value() == 8 and b.get_value().dtype == dtype
    c = eg.shared(np.zeros(2, dtype=dtype), allow_downcast=True)
    c.set_value([8.23, 9.5])
    np.testing.assert_array_equal(c.get_value(), [8, 9])


def test_without_the_permission_a_lossy_value_is_refused():
    b = eg.shared(np.int64(7))
    with pytest.raises(TypeError, match="loss of precision"):
        b.set_value(8.23)
    assert b.clone().get_value() == 7


def test_a_clone_keeps_the_permission():
    b = eg.shared(np.int32(7), allow_downcast=True)
    clone = b.clone()
    clone.set_value(3.5)
    assert b.get_value() == 3
