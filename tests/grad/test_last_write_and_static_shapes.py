"""Gradients the differential fuzz test found wrong, checked against central differences:

- ``set_subtensor`` with array indices that name a position twice. NumPy's ``x[idx] = y``
  assigns in order, so the last write of a position wins and the earlier ones reach nothing:
  for ``set_subtensor(x[[0, 0]], y)``, d out / d y is ``[0, 1]``. PyTensor's
  ``AdvancedIncSubtensor.L_op`` gathers the cotangent at every index (``[1, 1]``), which is
  not the derivative of what its own perform computes; eqgraph follows NumPy's semantics.
- ``matmul``/``dot`` with a one-element vector operand whose other operand has an unknown
  length: the cotangent must keep the operand's static size 1, or the VJP of the DimShuffle
  that made the operand cannot drop that axis.

Each case is compiled with the default rules and with none, so that neither the VJP nor a
rewrite of its graph can hide the other.
"""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et

RULES = [pytest.param({}, id="default-rules"), pytest.param({"rulesets": []}, id="no-rules")]
STEP = 1e-6


def _check_against_differences(inputs, values, out, rules, wrt=None):
    """The gradient of a random weighting of ``out`` with respect to ``wrt`` (default: all
    inputs) equals central differences of the same weighting, compiled without rules."""
    wrt = inputs if wrt is None else wrt
    rng = np.random.default_rng(0)
    shape = np.shape(eg.function(inputs, out, rulesets=[])(*values))
    cost = et.sum(out * et.constant(rng.random(shape) + 0.5))
    analytic = eg.function(inputs, eg.grad(cost, wrt), **rules)(*values)
    cost_of = eg.function(inputs, cost, rulesets=[])
    for w, got in zip(wrt, analytic, strict=True):
        k = inputs.index(w)
        numeric = np.zeros(np.shape(values[k]))
        for j in np.ndindex(numeric.shape):
            up, down = np.array(values[k], dtype="float64"), np.array(values[k], dtype="float64")
            up[j] += STEP
            down[j] -= STEP
            numeric[j] = (cost_of(*values[:k], up, *values[k + 1:]) -
                          cost_of(*values[:k], down, *values[k + 1:])) / (2 * STEP)
        np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-8, err_msg=f"d cost / d {w}")


# -- set_subtensor: the last write of a position wins ---------------------------------------------
def _region(shape, y_shape, index):
    """(x, y, x[index] = y) for float64 x of ``shape`` and y of ``y_shape``, unknown sizes."""
    x, y = et.tensor("x", "float64", (None,) * len(shape)), et.tensor("y", "float64", (None,) * len(y_shape))
    return x, y, et.set_subtensor(x[index], y)


I = np.array
SET_CASES = {  # name: (x's shape, y's shape, the index)
    "repeated": ((4,), (3,), I([0, 2, 0])),
    "negative-aliases-positive": ((3,), (2,), I([2, -1])),
    "two-d-index-array": ((3,), (2, 2), I([[0, 1], [1, 0]])),
    "several-index-arrays": ((3, 3), (3,), (I([0, 0, 1]), I([2, 2, 0]))),
    "several-index-arrays-negative": ((2, 3), (2,), (I([1, -1]), I([0, 0]))),
    "boolean-mask": ((4,), (3,), I([True, False, True, True])),
    "repeated-then-slice": ((3, 4), (2, 2), (I([1, 1]), slice(1, 3))),
    "slice-then-repeated": ((3, 4), (3, 2), (slice(None), I([0, -4]))),
    "scalar-y-broadcast": ((3,), (), I([0, 0, 2])),
    "row-y-broadcast": ((3, 2), (2,), I([1, 1, 0])),
    "no-repeats": ((4,), (2,), I([3, 1])),
}


@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize("name", SET_CASES)
def test_set_subtensor_gradient_counts_only_the_last_write(name, rules):
    shape, y_shape, index = SET_CASES[name]
    x, y, out = _region(shape, y_shape, index)
    rng = np.random.default_rng(1)
    _check_against_differences([x, y], [rng.normal(size=shape), rng.normal(size=y_shape)], out, rules)


def test_set_subtensor_gradient_of_a_repeated_index_is_exact():
    x, y = et.dvector("x"), et.dvector("y")
    out = et.set_subtensor(x[np.array([0, 0])], y)
    gy, gx = eg.grad(et.sum(out * et.constant(np.array([1.0, 2.0]))), [y, x])
    got_y, got_x = eg.function([x, y], [gy, gx])(np.array([5.0, 6.0]), np.array([1.0, 1.0]))
    np.testing.assert_array_equal(got_y, [0.0, 1.0])  # out[0] is y[1]
    np.testing.assert_array_equal(got_x, [0.0, 2.0])  # x[0] is overwritten


@pytest.mark.parametrize("rules", RULES)
def test_set_subtensor_gradient_with_an_index_given_at_run_time(rules):
    x, y, i = et.dvector("x"), et.dvector("y"), et.lvector("i")
    out = et.set_subtensor(x[i], y)
    f = eg.function([x, y, i], eg.grad(et.sum(out * et.constant(np.arange(1.0, 5.0))), y), **rules)
    np.testing.assert_array_equal(f(np.zeros(4), np.ones(4), np.array([3, 0, -1, 1])), [0.0, 1.0, 4.0, 2.0])


@pytest.mark.parametrize("rules", RULES)
def test_inc_subtensor_gradient_still_counts_every_repeated_write(rules):
    x, y = et.dvector("x"), et.dvector("y")
    out = et.inc_subtensor(x[np.array([0, 0, 1])], y)
    f = eg.function([x, y], eg.grad(et.sum(out * et.constant(np.array([1.0, 2.0]))), y), **rules)
    np.testing.assert_array_equal(f(np.zeros(2), np.ones(3)), [1.0, 1.0, 2.0])


# -- matmul / dot with a one-element vector and an operand of unknown size ------------------------
def _operand(name, static, from_scalar):
    """An operand of static shape ``static``: an input, or a scalar input made a (1,)-vector
    by a DimShuffle (whose VJP drops the axis only if the cotangent's static size is 1)."""
    if from_scalar:
        s = et.tensor(name, "float64", ())
        return s, s.dimshuffle("x")
    v = et.tensor(name, "float64", static)
    return v, v


MATMUL_CASES = {  # name: (a's static shape, a's run-time shape, a from a scalar, the same for b)
    "scalar-vector@vector": (((1,), (1,), True), ((None,), (1,), False)),
    "vector@scalar-vector": (((None,), (1,), False), ((1,), (1,), True)),
    "one@unknown": (((1,), (1,), False), ((None,), (1,), False)),
    "unknown@one": (((None,), (1,), False), ((1,), (1,), False)),
    "matrix@scalar-vector": (((None, None), (3, 1), False), ((1,), (1,), True)),
    "matrix-k-one@unknown": (((3, 1), (3, 1), False), ((None,), (1,), False)),
    "matrix-k-unknown@one": (((3, None), (3, 1), False), ((1,), (1,), False)),
    "scalar-vector@matrix": (((1,), (1,), True), ((None, 2), (1, 2), False)),
    "unknown@matrix-k-one": (((None,), (1,), False), ((1, 2), (1, 2), False)),
    "batch@scalar-vector": (((2, 3, None), (2, 3, 1), False), ((1,), (1,), True)),
    "scalar-vector@batch": (((1,), (1,), True), ((None, None, 3), (2, 1, 3), False)),
    "batch-k-one@unknown": (((2, 3, 1), (2, 3, 1), False), ((None,), (1,), False)),
    "batch@batch-k-one": (((None, 3, None), (2, 3, 1), False), ((1, 1, 2), (1, 1, 2), False)),
}


PRODUCTS = [pytest.param(et.matmul, name, id=f"matmul-{name}") for name in MATMUL_CASES] + [
    pytest.param(et.dot, name, id=f"dot-{name}") for name, (a, b) in MATMUL_CASES.items()
    if max(len(a[0]), len(b[0])) <= 2]  # dot of a batch is not matmul's broadcasting


@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize(("op", "name"), PRODUCTS)
def test_matmul_gradient_with_a_one_element_operand_builds_and_is_right(op, name, rules):
    (a_static, a_shape, a_scalar), (b_static, b_shape, b_scalar) = MATMUL_CASES[name]
    a_in, a = _operand("a", a_static, a_scalar)
    b_in, b = _operand("b", b_static, b_scalar)
    rng = np.random.default_rng(2)
    values = [rng.normal(size=() if a_scalar else a_shape), rng.normal(size=() if b_scalar else b_shape)]
    _check_against_differences([a_in, b_in], values, op(a, b), rules)
