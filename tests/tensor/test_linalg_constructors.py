"""``block_diag`` (SciPy's, batched over leading axes as PyTensor's) and ``matrix_dot``."""

import numpy as np
import pytest
import scipy.linalg

import eqgraph as eg
import eqgraph.tensor as et


def test_block_diag_values_dtype_and_static_shape():
    a, b = np.arange(4.0).reshape(2, 2), np.arange(6.0).reshape(2, 3) + 10
    out = et.linalg.block_diag(et.constant(a), et.constant(b))
    assert out.type.shape == (4, 5) and out.dtype == "float64"
    np.testing.assert_array_equal(out.eval(), scipy.linalg.block_diag(a, b))


@pytest.mark.parametrize("shape_a, shape_b, expected", [((5, 5), (3, 10), (8, 15)), ((5, 5), (3, None), (8, None)),
                                                        ((None, 5), (3, None), (None, None))])
def test_block_diag_static_shape(shape_a, shape_b, expected):
    a, b = et.tensor("a", shape=shape_a, dtype="float64"), et.tensor("b", shape=shape_b, dtype="float64")
    assert et.linalg.block_diag(a, b).type.shape == expected


def test_block_diag_batched_and_broadcast():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(4, 1, 2, 2)), rng.normal(size=(3, 1, 3))
    x, y = et.tensor("x", shape=(None,) * 4, dtype="float64"), et.tensor("y", shape=(None,) * 3, dtype="float64")
    got = eg.function([x, y], et.linalg.block_diag(x, y))(a, b)
    assert got.shape == (4, 3, 3, 5)
    for i in range(4):
        for j in range(3):
            np.testing.assert_array_equal(got[i, j], scipy.linalg.block_diag(a[i, 0], b[j]))


def test_block_diag_mixed_dtypes_upcast():
    out = et.linalg.block_diag(et.fmatrix("f"), et.imatrix("i"))
    assert out.dtype == np.result_type(np.float32, np.int32).name


def test_block_diag_grad():
    rng = np.random.default_rng(1)
    eg.verify_grad(lambda a, b: et.linalg.block_diag(a, b), [rng.normal(size=(2, 2)), rng.normal(size=(3, 1))],
                   rng=np.random.default_rng(2))


def test_block_diag_refuses_non_matrices():
    with pytest.raises(ValueError, match="block_diag.*at least 2 dimensions"):
        et.linalg.block_diag(et.dmatrix("a"), et.dvector("v"))


def test_matrix_dot_chains_dots():
    rng = np.random.default_rng(3)
    rs = [rng.normal(size=(4, 4)) for _ in range(3)]
    xs = [et.dmatrix(f"x{i}") for i in range(3)]
    np.testing.assert_allclose(eg.function(xs, et.linalg.matrix_dot(*xs))(*rs), rs[0] @ rs[1] @ rs[2])
    eg.verify_grad(lambda a, b: et.linalg.matrix_dot(a, b), rs[:2], rng=np.random.default_rng(4))
