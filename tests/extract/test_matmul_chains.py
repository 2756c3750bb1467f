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
    # (A @ v) @ M must not become A @ (v @ M): matmul-assoc is wrong for a vector in the middle
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


# -- property: chains of 3-4 operands, any parenthesization ---------------------------------------
class _Sizes:
    """Axis sizes as a union-find: axes a product contracts (or broadcasts) share a size."""

    def __init__(self):
        self.parent: list[int] = []
        self.contracted: list[int] = []  # axes a product sums over: their size must match exactly

    def new(self) -> int:
        self.parent.append(len(self.parent))
        return len(self.parent) - 1

    def find(self, a: int) -> int:
        while self.parent[a] != a:
            a = self.parent[a]
        return a

    def union(self, a: int, b: int) -> None:
        self.parent[self.find(a)] = self.find(b)

    def may_broadcast(self, a: int) -> bool:
        """Whether axis ``a`` may be 1 where others of its size are not (never contracted)."""
        return self.find(a) not in {self.find(c) for c in self.contracted}

    def matmul(self, left: list, right: list) -> list:
        """The axes of left @ right under NumPy's rules; None if an operand is a number."""
        if not left or not right:
            return None
        self.union(left[-1], right[0] if len(right) == 1 else right[-2])
        self.contracted.append(left[-1])
        rows, cols = left[-2:-1] if len(left) > 1 else [], right[-1:] if len(right) > 1 else []
        batch_l, batch_r = left[:-2], right[:-2]
        for a, b in zip(reversed(batch_l), reversed(batch_r)):
            self.union(a, b)
        return max(batch_l, batch_r, key=len) + rows + cols


def _tree(draw, lo: int, hi: int):
    """A random parenthesization of operands lo..hi-1, as nested pairs of indices."""
    if hi - lo == 1:
        return lo
    k = draw(st.integers(lo + 1, hi - 1))
    return (_tree(draw, lo, k), _tree(draw, k, hi))


def _fold(tree, leaf, product):
    if isinstance(tree, int):
        return leaf(tree)
    return product(_fold(tree[0], leaf, product), _fold(tree[1], leaf, product))


@st.composite
def chains(draw):
    """(tree, symbolic inputs, arrays) for a valid matmul chain of 3-4 operands."""
    n = draw(st.integers(3, 4), label="operands")
    ndims = draw(st.lists(st.sampled_from([1, 2, 3]), min_size=n, max_size=n), label="ndims")
    tree = _tree(draw, 0, n)
    sizes = _Sizes()
    axes = [[sizes.new() for _ in range(k)] for k in ndims]

    def product(left, right):
        return None if left is None or right is None else sizes.matmul(left, right)

    assume(_fold(tree, lambda i: axes[i], product) is not None)  # no vector @ vector mid-chain
    size_of = {}
    for root in sorted({sizes.find(a) for leaf in axes for a in leaf}):
        size_of[root] = draw(st.integers(1, 3))
    dtype = draw(st.sampled_from(["float64", "float32"]), label="dtype")
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="seed"))
    xs, values = [], []
    for i, leaf in enumerate(axes):
        shape = [size_of[sizes.find(a)] for a in leaf]
        for j in range(len(shape) - 2):  # a batch axis may be 1: it broadcasts (unless a vector
            # operand made it a matrix axis that some product sums over)
            if sizes.may_broadcast(leaf[j]) and draw(st.booleans(), label="broadcast batch axis"):
                shape[j] = 1
        static = [s if draw(st.booleans(), label="static") else None for s in shape]
        xs.append(et.TensorType(dtype, tuple(static))(f"x{i}"))
        values.append(rng.normal(size=shape).astype(dtype))
    return tree, xs, values


def _check_chain(case):
    tree, xs, values = case
    out = _fold(tree, lambda i: xs[i], lambda a, b: a @ b)
    expected = _fold(tree, lambda i: values[i].astype("float64"), lambda a, b: a @ b)
    got = eg.function(xs, out)(*values)
    assert got.shape == expected.shape and got.dtype == out.dtype
    rtol = 1e-4 if out.dtype == "float32" else 1e-10
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


CHAIN_SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@settings(max_examples=30, derandomize=True, **CHAIN_SETTINGS)
@given(case=chains())
def test_matmul_chains_agree_with_numpy(case):
    _check_chain(case)


@pytest.mark.slow
@settings(max_examples=600, **CHAIN_SETTINGS)
@given(case=chains())
def test_matmul_chains_agree_with_numpy_many(case):
    _check_chain(case)
