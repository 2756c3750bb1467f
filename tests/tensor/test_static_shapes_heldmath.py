"""Static shapes that PyTensor documents and eqgraph must match: a draw sized by a tensor's
shape, and ``kron`` of tensors of known shape."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et


def test_draw_sized_by_a_static_shape_has_that_static_shape():
    x = et.tensor("x", shape=(50,), dtype="float64")
    y = et.random.normal(size=x.shape)
    assert y.type.shape == (50,)
    assert eg.function([x], y)(np.zeros(50)).shape == (50,)


def test_draw_sized_by_a_partly_known_shape():
    x = et.tensor("x", shape=(None, 3), dtype="float64")
    assert et.random.normal(size=x.shape).type.shape == (None, 3)


@pytest.mark.parametrize("shp0, shp1", [((2,), (6, 7)), ((2, 3), (6, 7)), ((2, 3, 4), (6,)), ((2, 3), (6, 7, 8))])
def test_kron_of_static_shapes_is_static(shp0, shp1):
    a = np.random.default_rng(0).random(shp0)
    b = np.random.default_rng(1).random(shp1)
    x, y = et.tensor("x", shape=shp0, dtype="float64"), et.tensor("y", shape=shp1, dtype="float64")
    out = et.linalg.kron(x, y)
    expected = np.kron(a, b)
    assert out.type.shape == expected.shape
    np.testing.assert_allclose(eg.function([x, y], out)(a, b), expected)


def test_kron_partly_known_shape_keeps_unknown_dims_unknown():
    x = et.tensor("x", shape=(2, None), dtype="float64")
    y = et.tensor("y", shape=(6, 7), dtype="float64")
    assert et.linalg.kron(x, y).type.shape == (12, None)


@pytest.mark.parametrize("lower", [True, False])
def test_eigh_lower_reads_that_triangle(lower):
    a = np.random.default_rng(2).normal(size=(4, 4))  # not symmetric: the triangle read matters
    m = et.dmatrix("m")
    uplo = "L" if lower else "U"
    w, v = eg.function([m], et.linalg.eigh(m, lower=lower))(a)
    w_np, v_np = np.linalg.eigh(a, UPLO=uplo)
    np.testing.assert_allclose(w, w_np)
    np.testing.assert_allclose(np.abs(v), np.abs(v_np), atol=1e-12)
    assert w.dtype == np.float64 and v.shape == (4, 4)
    np.testing.assert_allclose(eg.function([m], et.linalg.eigvalsh(m, lower=lower))(a), np.linalg.eigvalsh(a, UPLO=uplo))


def test_eigh_lower_and_uplo_that_disagree_are_refused():
    with pytest.raises(ValueError, match="lower"):
        et.linalg.eigh(et.dmatrix("m"), UPLO="L", lower=False)


def test_eigvalsh_lower_gradient():
    a = np.random.default_rng(3).normal(size=(3, 3))
    eg.verify_grad(lambda m: et.linalg.eigvalsh(m, lower=False).sum() + et.linalg.eigvalsh(m, lower=False)[0] ** 2,
                   [a + a.T], rng=np.random.default_rng(4))


def test_matrix_inverse_is_inv():
    a = np.random.default_rng(5).normal(size=(3, 3)) + 3 * np.eye(3)
    m = et.dmatrix("m")
    np.testing.assert_allclose(eg.function([m], et.linalg.matrix_inverse(m))(a), np.linalg.inv(a))
    assert et.linalg.matrix_inverse is et.linalg.inv


@pytest.mark.parametrize("full, uv, shape", [(True, True, (4, 3)), (False, True, (3, 4)), (True, False, (2, 4, 3))])
def test_svd_gufunc_signature_vectorizes_numpy_alike(full, uv, shape):
    a = np.random.default_rng(6).random(shape)
    m = et.tensor("m", shape=(None,) * len(shape), dtype="float64")
    outs = et.linalg.svd(m, full_matrices=full, compute_uv=uv)
    outs = outs if isinstance(outs, list) else [outs]
    op = outs[0].owner.op
    assert op.core_op is op  # it takes stacks of matrices itself
    reference = np.vectorize(lambda x: np.linalg.svd(x, full_matrices=full, compute_uv=uv),
                             signature=op.gufunc_signature)(a)
    reference = reference if isinstance(reference, tuple) else (reference,)
    got = eg.function([m], outs)(a)
    assert [r.shape for r in reference] == [g.shape for g in got]
    np.testing.assert_allclose(np.abs(got[-1 if uv else 0]), np.abs(reference[-1 if uv else 0]), atol=1e-12)


def test_square_linalg_gufunc_signatures():
    assert et.linalg.inv(et.dmatrix()).owner.op.gufunc_signature == "(m,m)->(m,m)"
    assert et.linalg.det(et.dmatrix()).owner.op.gufunc_signature == "(m,m)->()"
