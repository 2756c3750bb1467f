"""``tensorsolve`` and ``tensorinv``, as ``np.linalg``'s (PyTensor's names)."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et


def test_tensorsolve_matches_numpy():
    a = np.eye(24).reshape(6, 4, 2, 12) + 0.1 * np.random.default_rng(0).random((6, 4, 2, 12))
    b = np.random.default_rng(1).random((6, 4))
    A, B = et.tensor("A", shape=(None,) * 4, dtype="float64"), et.dmatrix("B")
    got = eg.function([A, B], et.linalg.tensorsolve(A, B))(a, b)
    expected = np.linalg.tensorsolve(a, b)
    assert got.shape == expected.shape == (2, 12)
    np.testing.assert_allclose(got, expected)


@pytest.mark.parametrize("adtype", ["float32", "int32"])
def test_tensorsolve_upcasts_as_numpy(adtype):
    a = np.eye(24, dtype=adtype).reshape(6, 4, 2, 12)
    b = np.random.default_rng(2).random((6, 4))
    A, B = et.tensor("A", shape=(None,) * 4, dtype=adtype), et.dmatrix("B")
    x = et.linalg.tensorsolve(A, B)
    expected = np.linalg.tensorsolve(a, b)
    assert x.dtype == expected.dtype.name
    np.testing.assert_allclose(eg.function([A, B], x)(a, b), expected)


def test_tensorsolve_axes():
    rng = np.random.default_rng(3)
    # the axis moved to the end is one of x's: a's axes are then (b's 6, x's 3, x's 2)
    a, b = (np.eye(6).reshape(6, 3, 2) + 0.1 * rng.random((6, 3, 2))).transpose(2, 0, 1), rng.random(6)
    A, B = et.tensor("A", shape=(None,) * 3, dtype="float64"), et.dvector("B")
    got = eg.function([A, B], et.linalg.tensorsolve(A, B, axes=(0,)))(a, b)
    np.testing.assert_allclose(got, np.linalg.tensorsolve(a, b, axes=(0,)))


def test_tensorinv_matches_numpy_and_its_gradient():
    rng = np.random.default_rng(4)
    a = np.eye(24).reshape(4, 6, 8, 3) + 0.1 * rng.random((4, 6, 8, 3))
    A = et.tensor("A", shape=(None,) * 4, dtype="float64")
    got = eg.function([A], et.linalg.tensorinv(A, ind=2))(a)
    np.testing.assert_allclose(got, np.linalg.tensorinv(a, ind=2))
    eg.verify_grad(lambda m: et.linalg.tensorinv(m, ind=1), [np.eye(4).reshape(4, 2, 2) + 0.1 * rng.random((4, 2, 2))],
                   rng=np.random.default_rng(5))


def test_tensorinv_refuses_nonpositive_ind():
    with pytest.raises(ValueError, match="ind"):
        et.linalg.tensorinv(et.dmatrix("a"), ind=0)
