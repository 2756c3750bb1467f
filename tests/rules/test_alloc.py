"""The alloc and fill rules of indexing.egg on numbers: each fires (the
compiled graph loses the alloc or fill) and keeps NumPy's values, including where the value
broadcasts from size 1, the sizes are unknown until run time, and x holds inf, NaN or -0.0.
The soundness checker draws them too (tests/soundness/test_soundness.py)."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et

v, w = et.dvector("v"), et.dvector("w")
m = et.dmatrix("m")
s = et.dscalar("s")
n, k = et.lscalar("n"), et.lscalar("k")
v3 = et.TensorType("float64", (3,))("v3")
EDGES = np.array([-0.0, 0.0, np.inf, -np.inf, np.nan, 1.5, -2.0])
VALUES = {v: EDGES, w: EDGES[::-1].copy(), m: np.arange(12.0).reshape(3, 4) - 5.5, s: np.float64(-0.0),
          n: np.int64(4), k: np.int64(1), v3: np.array([-0.0, 2.0, np.inf])}


def compiled_ops(out, values=VALUES) -> list[str]:
    """The compiled graph's ops, after checking it against NumPy op by op (no rewrites)."""
    inputs = [var for var in values if var in set(eg.terms.graph.graph_inputs([out]))]
    f = eg.function(inputs, out)
    reference = eg.function(inputs, out, rulesets=[])
    args = [values[var] for var in inputs]
    got, want = f(*args), reference(*args)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))  # -0.0 stays -0.0
    return [str(node.op) for node in f.stages.optimized.toposort()]


def no_fill(ops) -> bool:
    return not any(op.startswith(("Alloc", "Elemwise{second}")) for op in ops)


@pytest.mark.parametrize("build", [
    lambda: et.fill(v, 3.0) + v,                         # add-fill-own
    lambda: v * et.ones_like(v),                         # mul-fill-own, then mul-one
    lambda: et.fill(v, 2.0) - v,                         # sub-fill-own
    lambda: v - et.zeros_like(v),                        # sub-own-fill, then sub-zero: exact for -0.0
    lambda: et.fill(m, 2.0) / m,                         # div-fill-own
    lambda: m / et.full_like(m, 4.0),                    # div-own-fill
    lambda: et.alloc(s, v.shape[0]) + v,                 # alloc-scalar-own-shape-1, then add-fill-own
    lambda: et.alloc(1.0, v.shape[0]) * v,               # ... a constant value
    lambda: m - et.alloc(s, m.shape[0], m.shape[1]),     # alloc-scalar-own-shape-2, then sub-own-fill
])
def test_a_fill_combined_with_its_own_shape_goes(build):
    assert no_fill(compiled_ops(build()))


def test_a_fill_of_a_broadcasting_value_keeps_the_larger_shape():
    # fill(x, b) + x with b of size 1 along an axis x has: the result has x's shape
    row = et.TensorType("float64", (1, None))("row")
    out = et.fill(m, row) + m
    ops = compiled_ops(out, {m: VALUES[m], row: np.array([[1.0, -0.0, np.inf, 2.0]])})
    assert no_fill(ops)
    # and x of size 1 where b is larger: the fill only broadcast x, which b + x does too
    out = et.fill(row, m) * row
    ops = compiled_ops(out, {m: VALUES[m], row: np.array([[1.0, -0.0, np.inf, 2.0]])})
    assert no_fill(ops)


def test_adding_zeros_like_keeps_negative_zeros():
    # x + zeros_like(x) is x + 0.0: -0.0 + 0.0 is +0.0, so the add stays for floats
    ops = compiled_ops(v + et.zeros_like(v))
    assert "Elemwise{add}" in ops


@pytest.mark.parametrize("build, allocs", [
    (lambda: et.alloc(et.alloc(s, 3), n, 3), 1),         # alloc-of-alloc-1-2
    (lambda: et.alloc(et.alloc(s, 1), n, 3), 1),         # the inner size 1 broadcasts
    (lambda: et.alloc(et.alloc(s, k), n), 1),            # alloc-of-alloc-1, sizes known at run time
    (lambda: et.alloc(et.alloc(s, k, 3), n, 3), 1),      # alloc-of-alloc-2
    (lambda: et.alloc(et.alloc(v3, 3), n, 3), 1),        # a vector value
])
def test_an_alloc_of_an_alloc_is_one_alloc(build, allocs):
    ops = compiled_ops(build())
    assert sum(op.startswith("Alloc") for op in ops) == allocs, ops

