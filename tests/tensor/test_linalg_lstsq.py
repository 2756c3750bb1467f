"""et.linalg.lstsq: each output, its dtype and shape against NumPy's (tall, wide, rank-deficient,
vector and matrix b, float32, complex, integers, rcond), the solution's gradient against finite
differences, clear errors."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.grad import NullTypeGradError
from eqgraph.testing import verify_grad
from eqgraph.tensor import linalg

RNG = np.random.default_rng(0)
TALL, WIDE, b6, b3 = RNG.standard_normal((6, 3)), RNG.standard_normal((3, 5)), RNG.standard_normal(6), RNG.standard_normal(3)
RANK_ONE = np.outer(RNG.standard_normal(4), RNG.standard_normal(3))

CASES = {  # name: (a, b, rcond: None for the default)
    "tall-vector": (TALL, b6, None),
    "tall-matrix": (TALL, RNG.standard_normal((6, 2)), None),
    "wide": (WIDE, b3, None),
    "rank-deficient": (RANK_ONE, RNG.standard_normal(4), None),
    "rcond": (TALL, b6, 0.5),
    "float32": (TALL.astype("float32"), b6.astype("float32"), None),
    "complex": (TALL + 1j * TALL[::-1], b6 - 1j, None),
    "int": (np.array([[2, 1], [3, 4]]), np.array([[17, 20], [43, 50]]), 1),
}


@pytest.mark.parametrize("name", list(CASES))
def test_lstsq_matches_numpy(name):
    a_value, b_value, rcond = CASES[name]
    a, b = (et.TensorType(v.dtype, (None,) * v.ndim)(n) for v, n in ((a_value, "a"), (b_value, "b")))
    outs = linalg.lstsq(a, b, rcond)
    got = eg.function([a, b], outs)(a_value, b_value)
    expected = np.linalg.lstsq(a_value, b_value, rcond=rcond)
    for out, g, e in zip(outs, got, expected):
        e = np.asarray(e)
        assert g.dtype == out.dtype == e.dtype and g.shape == e.shape, (out, g.dtype, e.dtype, g.shape, e.shape)
        np.testing.assert_allclose(g, e, rtol=1e-4 if g.dtype in (np.float32, np.complex64) else 1e-10, atol=1e-12)


def test_lstsq_with_a_symbolic_rcond():
    a, b, rcond = et.dmatrix("a"), et.dvector("b"), et.dscalar("rcond")
    f = eg.function([a, b, rcond], linalg.lstsq(a, b, rcond)[2])
    assert f(RANK_ONE + 1e-3 * TALL[:4], b6[:4], 1e-15) == 3
    assert f(RANK_ONE + 1e-3 * TALL[:4], b6[:4], 1e-2) == 1


def test_lstsq_shapes_are_inferred():
    a, b = et.TensorType("float64", (6, 3))("a"), et.dmatrix("b")
    x, _, rank, s = linalg.lstsq(a, b)
    assert x.type.shape == (3, None) and rank.type.shape == () and s.type.shape == (3,)
    np.testing.assert_array_equal(eg.function([a, b], x.shape)(TALL, np.ones((6, 2))), (3, 2))


@pytest.mark.parametrize("a_value, b_value", [(TALL, b6), (TALL, RNG.standard_normal((6, 2))), (WIDE, b3)],
                         ids=["tall-vector", "tall-matrix", "wide"])
def test_lstsq_solution_gradient_matches_finite_differences(a_value, b_value):
    verify_grad(lambda a, b: linalg.lstsq(a, b)[0], [a_value, b_value], n_tests=1, rng=np.random.default_rng(1))


def test_lstsq_gradient_of_the_other_outputs_is_refused_saying_why():
    a, b = et.dmatrix("a"), et.dvector("b")
    with pytest.raises(NullTypeGradError, match="Lstsq.*only x"):
        eg.grad(linalg.lstsq(a, b)[3].sum(), a)


def test_lstsq_refuses_what_is_not_a_system():
    with pytest.raises(TypeError, match="Lstsq: a must be a matrix"):
        linalg.lstsq(et.dvector("a"), et.dvector("b"), 1.0)
    with pytest.raises(TypeError, match="Lstsq: rcond must be a scalar"):
        linalg.lstsq(et.dmatrix("a"), et.dvector("b"), et.dvector("r"))
    with pytest.raises(ValueError, match=r"Lstsq: a .* of shape \(6, 3\) and b .* of shape \(4,\) do not match"):
        linalg.lstsq(et.TensorType("float64", (6, 3))("a"), et.TensorType("float64", (4,))("b"))
    a, b = et.dmatrix("a"), et.dvector("b")
    with pytest.raises(ValueError, match=r"Lstsq: a of shape \(6, 3\) and b of shape \(4,\) do not match"):
        eg.function([a, b], linalg.lstsq(a, b)[0])(TALL, b6[:4])
