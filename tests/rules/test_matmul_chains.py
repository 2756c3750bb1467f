"""Matmul chains of vectors, matrices and stacks, compiled with the default rules, against NumPy.

``matmul-assoc`` reassociates ``(a @ b) @ c``.  Under NumPy's matmul a vector is
promoted to a matrix and the added axis dropped again, so the two orders agree only
for some ndims of a, b and c; these tests hold every ndim mix and static/unknown
shape to NumPy's answer for the parenthesization the user wrote.
"""

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import eqgraph as eg
import eqgraph.tensor as et


def test_vector_in_the_middle_is_not_reassociated():
    # issue 9: (A @ v) @ M was compiled as A @ (v @ M)
    A, v, M = et.dmatrix("A"), et.dvector("v"), et.TensorType("float64", (3, 3))("M")
    rng = np.random.default_rng(0)
    a, vv, m = rng.normal(size=(3, 3)), rng.normal(size=3), rng.normal(size=(3, 3))
    np.testing.assert_allclose(eg.function([A, v, M], (A @ v) @ M)(a, vv, m), (a @ vv) @ m)


def _shapes_for(ndims, right: bool, rng):
    """Operand shapes (sizes 1-3) valid for (a@b)@c, or a@(b@c) when ``right``; None if none found."""
    for _ in range(200):
        shapes = [tuple(int(s) for s in rng.integers(1, 4, size=n)) for n in ndims]
        arrays = [np.ones(s) for s in shapes]
        try:
            _product(arrays, right)
        except ValueError:
            continue
        return shapes
    return None


def _product(xs, right: bool):
    a, b, c = xs
    return a @ (b @ c) if right else (a @ b) @ c


@pytest.mark.parametrize("right", [False, True], ids=["(ab)c", "a(bc)"])
@pytest.mark.parametrize("ndims", list(itertools.product([1, 2, 3], repeat=3)), ids=str)
def test_three_operands_of_every_ndim(ndims, right):
    rng = np.random.default_rng(sum(ndims) * 2 + right)
    shapes = _shapes_for(ndims, right, rng)
    if shapes is None:
        pytest.skip("no valid shapes: NumPy refuses this product")
    static = rng.integers(0, 2, size=(3, 3)).astype(bool)
    xs = [et.TensorType("float64", tuple(s if k else None for s, k in zip(shape, known)))(name)
          for shape, known, name in zip(shapes, static, "abc")]
    values = [rng.normal(size=s) for s in shapes]
    got = eg.function(xs, _product(xs, right))(*values)
    expected = _product(values, right)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-10)


def test_matrix_chain_times_vector_is_still_reassociated():
    # bench/matmul_chain.py: A @ B @ v must become A @ (B @ v) (matrix-vector products only)
    A, B = (et.TensorType("float64", (50, 50))(n) for n in "AB")
    v = et.TensorType("float64", (50,))("v")
    A_, rest = eg.rewrite(A @ B @ v).owner.inputs
    assert A_ is A and rest.owner.inputs == [B, v]
