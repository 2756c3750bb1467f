"""sort and argsort refuse bad arguments with PyTensor's errors (its type and the words its
users' code and tests match on), each naming what was given."""

import pytest

import eqgraph.tensor as et


@pytest.mark.parametrize("func", [et.sort, et.argsort])
def test_kind_stable_and_order_are_refused_in_pytensor_words(func):
    x = et.dmatrix("x")
    with pytest.raises(ValueError, match="kind must be one of .*'hanoi'"):
        func(x, kind="hanoi")
    with pytest.raises(ValueError, match="kind and stable cannot be set at the same time.*'quicksort'"):
        func(x, kind="quicksort", stable=True)
    with pytest.raises(ValueError, match="order argument is not applicable"):
        func(x, order=[])
    assert func(x, kind="stable", stable=True).owner is not None  # the same request twice is no contradiction


@pytest.mark.parametrize("func", [et.sort, et.argsort])
def test_symbolic_axis_of_a_float_dtype_is_refused(func):
    with pytest.raises(ValueError, match="Sort axis must have an integer dtype, got float32"):
        func(et.dmatrix("x"), et.fscalar("axis"))
