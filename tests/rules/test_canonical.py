"""Canonical algebra: commutative operands in one order, and the
arithmetic identities of rulesets/algebra.egg, each checked on numbers."""


import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.extract.costs import KERNEL_ELEMENT_COST
from eqgraph.terms.graph import applys_between

x, y, z = et.dvector("x"), et.dvector("y"), et.dvector("z")


def ops_of(f) -> list[str]:
    return [str(n.op) for n in f.stages.optimized.toposort()]


@pytest.mark.parametrize("a, b", [
    (x + y, y + x),
    (x * y, y * x),
    (et.exp(x) * y, y * et.exp(x)),         # equal subgraphs built twice compare equal
    (et.eq(x, y), et.eq(y, x)),
    ((x + y) * z, z * (y + x)),
])
def test_commutative_operands_meet(a, b):
    assert eg.equivalent(a, b)


def test_non_commutative_operands_stay_apart():
    assert not eg.equivalent(x - y, y - x)
    # maximum(-0.0, 0.0) is -0.0 but maximum(0.0, -0.0) is 0.0: not commutative bit for bit
    assert not eg.equivalent(et.maximum(x, y), et.maximum(y, x))


def test_canonical_order_keeps_values():
    f = eg.function([x, y], [2.0 * x + y, y * x * 3.0, et.eq(y, x)])
    xv, yv = np.array([1.0, -2.0]), np.array([0.5, -2.0])
    for got, want in zip(f(xv, yv), [2 * xv + yv, yv * xv * 3, yv == xv]):
        np.testing.assert_array_equal(got, want)


i, j = et.lvector("i"), et.lvector("j")
f32 = et.fvector("f32")
i32, u8 = et.ivector("i32"), et.TensorType("uint8", (None,))("u8")
VALUES = {i32: np.array([7, -2**31, 5], "int32"), u8: np.array([0, 255, 3], "uint8"),
          x: np.array([1.5, -2.0, 0.25]), y: np.array([0.5, 3.0, -1.0]),
          i: np.array([3, -7, 2**62]), j: np.array([5, 1, 2**62]), f32: np.array([1.5, -2.0], "float32")}
SECOND, MUL, ADD = "Elemwise{second}", "Elemwise{mul}", "Elemwise{add}"


@pytest.mark.parametrize("build, reference, expected_ops", [
    # (x + y) - y -> x needs a finite y: integers are (floats: tests/rules/test_numerics.py)
    (lambda: (i + j) - j, lambda: VALUES[i], [SECOND]),       # i broadcast to the shape i + j had
    (lambda: (j + i) - j, lambda: VALUES[i], [SECOND]),
    (lambda: j + (i - j), lambda: VALUES[i], [SECOND]),
    (lambda: (x * 2.0) * 3.0, lambda: VALUES[x] * 6.0, [MUL]),
    (lambda: (x + 2.0) + 3.0, lambda: VALUES[x] + 5.0, [ADD]),
    (lambda: et.exp(x) * et.exp(y), lambda: np.exp(VALUES[x] + VALUES[y]), [ADD, "Elemwise{exp}"]),
    (lambda: x ** -1.0, lambda: 1 / VALUES[x], ["Elemwise{true_div}"]),
    (lambda: x ** 3.0, lambda: VALUES[x] ** 3, ["Elemwise{sqr}", MUL]),
    (lambda: et.switch(1, x, y), lambda: VALUES[x], [SECOND]),
    (lambda: et.switch(0, x, y), lambda: VALUES[y], [SECOND]),
    (lambda: et.switch(x > 0, y, y), lambda: VALUES[y], [SECOND]),   # x > 0 has x's shape: not computed
    (lambda: x * et.ones_like(x), lambda: VALUES[x], []),
    (lambda: i - i, lambda: 0 * VALUES[i], [SECOND]),  # integers only: inf - inf is NaN
    (lambda: i * 0, lambda: 0 * VALUES[i], [SECOND]),
    (lambda: i32 - i32, lambda: 0 * VALUES[i32], [SECOND]),   # every integer dtype
    (lambda: u8 - u8, lambda: 0 * VALUES[u8], [SECOND]),
    (lambda: i * et.zeros_like(j), lambda: 0 * VALUES[i], [SECOND, SECOND]),   # zeros of the broadcast shape
    (lambda: et.zeros_like(i32) * i32, lambda: 0 * VALUES[i32], [SECOND]),
    (lambda: i + et.zeros_like(j), lambda: VALUES[i], [SECOND]),
    (lambda: (i + j) - j, lambda: VALUES[i], [SECOND]),         # exact: integers wrap
    (lambda: et.cast(et.cast(f32, "float64"), "float32"), lambda: VALUES[f32], []),
    (lambda: et.cast(et.cast(f32, "float16"), "float64"), lambda: VALUES[f32].astype("float16").astype("float64"),
     ["Cast{float16}", "Cast{float64}"]),                          # float16 loses digits: both casts stay
])
def test_canonical_identities(build, reference, expected_ops):
    out = build()
    inputs = [v for v in VALUES if v in set(eg.terms.graph.graph_inputs([out]))]
    f = eg.function(inputs, out)
    np.testing.assert_array_equal(f(*[VALUES[v] for v in inputs]), reference())
    assert sorted(ops_of(f)) == sorted(expected_ops)


@pytest.mark.parametrize("build", [lambda: x - x, lambda: x * 0.0, lambda: x / x, lambda: x + et.zeros_like(x)])
def test_float_cancellations_keep_inf_nan_and_signed_zeros(build):
    # NumPy's answers at inf, NaN, 0 and -0.0: NaN, NaN, NaN for 0/0, and -0.0 + 0.0 = +0.0
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 2.0])
    with np.errstate(all="ignore"):
        want = eg.function([x], build(), rulesets=[])(special)
        got = eg.function([x], build())(special)
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("loop_costs, ops", [
    (None, {"Elemwise{sqr}", "Elemwise{sqrt}"}),    # NumPy's where is a slow pass: sqrt(x)**2
    (KERNEL_ELEMENT_COST, {"Elemwise{switch}", "Elemwise{ge}", "Elemwise{abs}"}),   # a Numba loop's select is free
])
def test_exp_of_log_is_sqrt_squared_or_a_switch_and_keeps_nan(loop_costs, ops):
    # NaN below 0 (as exp(log(x)) and PyTensor's switch), +0.0 at -0.0, and closer to x than
    # exp(log(x)), which is off by |log x| ulps
    f = eg.function([x], et.exp(et.log(x)), cost_model=eg.CostModel(kernel_element_cost=loop_costs))
    assert f.stages.report.fired().get("algebra/exp-log")
    assert set(ops_of(f)) == ops
    special = np.array([-1.0, -np.inf, np.nan, -0.0, 0.0, np.inf, 1e-300, 2.0, 1e308])
    with np.errstate(all="ignore"):
        got, naive = f(special), np.exp(np.log(special))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(naive))
    assert not np.any(np.signbit(got[~np.isnan(got)]))
    np.testing.assert_allclose(got[4:], special[4:], rtol=4e-16, atol=0)


def test_the_default_cost_model_prices_where_fused_nodes_run():
    # the NumPy backend runs fused nodes in Numba loops where Numba is on (exec/backends.py)
    numba = numba_kernels.numba is not None
    ops = {"Elemwise{switch}", "Elemwise{ge}", "Elemwise{abs}"} if numba else {"Elemwise{sqr}", "Elemwise{sqrt}"}
    assert set(ops_of(eg.function([x], et.sqrt(x) ** 2))) == ops
    # eg.rewrite prices as eg.function does (it priced without Numba's loops before)
    rewritten = eg.rewrite(et.sqrt(x) ** 2)
    assert {str(n.op) for n in applys_between([x], [rewritten])} == ops


def test_square_of_a_negation():
    f = eg.function([x], (-x) ** 2)
    assert f.stages.report.fired().get("algebra/sqr-neg")
    assert ops_of(f) == ["Elemwise{sqr}"]
    np.testing.assert_array_equal(f(np.array([-3.0, np.inf, -0.0])), [9.0, np.inf, 0.0])
