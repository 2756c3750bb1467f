"""PyTensor's ``add`` and ``mul`` take any number of terms (``pt.add(a, b, c)``)."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et


@pytest.mark.parametrize("name, reference", [("add", np.add), ("mul", np.multiply)])
def test_three_terms_broadcast_and_upcast(name, reference):
    x, y, z = et.dmatrix("x"), et.frow("y"), et.lscalar("z")
    rng = np.random.default_rng(0)
    xv, yv, zv = rng.random((3, 4)), rng.random((1, 4)).astype("float32"), np.int64(3)
    out = getattr(et, name)(x, y, z)
    expected = reference(reference(xv, yv), zv)
    assert out.dtype == expected.dtype.name and out.type.shape == (None, None)
    np.testing.assert_allclose(eg.function([x, y, z], out)(xv, yv, zv), expected)


def test_four_term_product_gradient():
    rng = np.random.default_rng(1)
    eg.verify_grad(lambda a, b, c, d: et.mul(a, b, c, d), [rng.random((2, 3)) + 0.5 for _ in range(4)],
                   rng=np.random.default_rng(2))


def test_other_binary_ops_still_count_their_inputs():
    with pytest.raises(TypeError, match="takes 2 inputs, got 3"):
        et.maximum(et.dvector("a"), et.dvector("b"), et.dvector("c"))
