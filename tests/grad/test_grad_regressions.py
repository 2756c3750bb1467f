"""Wrong gradients found by users and fuzzing: switch on an integer condition, max/min with
ties, log1mexp at 0. Each is checked with the default rules and with none, so that neither the
VJP nor a rewrite of its graph can hide the other."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.terms import Apply, Op
from eqgraph.terms.null_type import disconnected

RULES = [pytest.param({}, id="default-rules"), pytest.param({"rulesets": []}, id="no-rules")]


def _grad_fn(inputs, cost, wrt, rules):
    return eg.function(inputs, eg.grad(cost, wrt), **rules)


# -- switch / where on a condition that is not boolean ---------------------------------------------
Z = np.array([-1.5, 0.3, 2.0, -0.7])


@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize("cond", [np.array([1, 0, 1, 0]), np.array([2, 0, 5, 0]), np.array([-1, 0, 7, 0], "int8"),
                                  np.array([1, 0, 255, 0], "uint8"), np.array([True, False, True, False]),
                                  np.array([0.5, 0.0, -2.0, 0.0])],
                         ids=["int64", "int64-not-0-or-1", "int8-negative", "uint8", "bool", "float"])
def test_switch_gradient_treats_every_nonzero_condition_as_true(cond, rules):
    # PyMC's Bernoulli log-density switches on integer labels: switch(y, -softplus(-z), ...)
    z = et.dvector("z")
    cost = et.sum(et.switch(et.constant(cond), z * 3, z ** 2))
    np.testing.assert_allclose(_grad_fn([z], cost, z, rules)(Z), np.where(cond != 0, 3.0, 2 * Z))


@pytest.mark.parametrize("rules", RULES)
def test_switch_gradient_with_a_symbolic_integer_condition(rules):
    z, y = et.dvector("z"), et.lvector("y")
    cost = et.sum(et.where(y, -et.softplus(-z), -et.softplus(z)))  # a Bernoulli log-likelihood
    labels = np.array([1, 0, 3, 0])
    sigmoid = 1 / (1 + np.exp(-Z))
    expected = np.where(labels != 0, 1 - sigmoid, -sigmoid)
    np.testing.assert_allclose(eg.function([z, y], eg.grad(cost, z), **rules)(Z, labels), expected)


# -- max / min with ties: the cotangent is split evenly among the tied positions -----------------
def _tie_share(values, axis, keepdims, reduce):
    """What the gradient of sum(w * reduce(x, axis)) sends to each x: w split among the ties."""
    extreme = reduce(values, axis=axis, keepdims=True)
    hits = (values == extreme).astype(float)
    return hits / hits.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize("build, expected", [
    (lambda x: et.max(et.concatenate([x, x])), [1.0, 0.0]),
    (lambda x: et.max(et.stack([x, x])), [1.0, 0.0]),
    (lambda x: et.max(x[[0, 0, 1]]), [1.0, 0.0]),
    (lambda x: et.min(et.concatenate([-x, -x])), [-1.0, 0.0]),
], ids=["concatenate", "stack", "repeated-index", "min"])
def test_max_of_a_repeated_value_has_the_gradient_of_max_of_the_value(build, expected, rules):
    x = et.dvector("x")
    np.testing.assert_allclose(_grad_fn([x], build(x), x, rules)(np.array([1.0, 0.0])), expected)


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), (0, True), ((0, 2), False), ((0, 2), True),
                                            ((2,), True)])
def test_max_and_min_split_the_gradient_among_ties(name, axis, keepdims):
    x = et.dtensor3("x")
    values = np.random.default_rng(0).integers(0, 3, size=(3, 4, 2)).astype(float)  # many ties
    reduced_shape = np.shape(getattr(np, name)(values, axis=axis, keepdims=keepdims))
    weights = np.arange(1.0, 1.0 + np.prod(reduced_shape)).reshape(reduced_shape)  # a cotangent per output
    cost = et.sum(getattr(et, name)(x, axis=axis, keepdims=keepdims) * et.constant(weights))
    got = _grad_fn([x], cost, x, {"rulesets": []})(values)
    axes = tuple(range(3)) if axis is None else axis
    share = _tie_share(values, axes, keepdims, getattr(np, name))
    w = weights if keepdims else np.expand_dims(weights, axes)
    np.testing.assert_allclose(got, share * w)
    assert (share < 1).any() and (share > 0).any()  # the values do hold ties
    assert got.sum() == pytest.approx(weights.sum())  # the split conserves the cotangent


def test_max_of_a_float32_stays_float32_and_splits_ties():
    x = et.fvector("x")
    g = eg.grad(et.max(x), x)
    assert g.dtype == "float32"
    np.testing.assert_array_equal(eg.function([x], g)(np.array([2, 1, 2], "float32")), [0.5, 0, 0.5])


@pytest.mark.parametrize("rules", RULES)
def test_maximum_and_minimum_split_ties_evenly_as_max_does(rules):
    # maximum(a, b) is max(stack([a, b]), axis=0): the two must agree at a == b
    a, b = et.dvector("a"), et.dvector("b")
    av, bv = np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0])
    for op, reduce in [(et.maximum, et.max), (et.minimum, et.min)]:
        elementwise = _grad_fn([a, b], et.sum(op(a, b)), [a, b], rules)(av, bv)
        reduced = _grad_fn([a, b], et.sum(reduce(et.stack([a, b]), axis=0)), [a, b], rules)(av, bv)
        np.testing.assert_allclose(elementwise, reduced)
        first = [0.5, 0.0, 1.0] if op is et.maximum else [0.5, 1.0, 0.0]
        np.testing.assert_allclose(elementwise, [first, 1 - np.array(first)])
    x = et.dvector("x")
    for op in (et.maximum, et.minimum):  # both halves reach x: the derivative of x itself
        np.testing.assert_allclose(_grad_fn([x], et.sum(op(x, x)), x, rules)(av), [1.0, 1.0, 1.0])


# -- log1mexp at 0 ----------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning", "ignore:overflow:RuntimeWarning")  # the -inf
@pytest.mark.parametrize("rules", RULES)
def test_log1mexp_gradient_tends_to_minus_inf_at_zero_from_either_signed_zero(rules):
    x = et.dscalar("x")
    y = et.log1mexp(x)
    f = eg.function([x], [y, eg.grad(y, x)], **rules)
    for at in (0.0, -0.0, -1e-309):
        value, slope = f(at)
        assert slope == -np.inf, (at, slope)
    assert f(0.0)[0] == -np.inf and f(-0.0)[0] == -np.inf
    assert f(-1e-309)[0] == pytest.approx(np.log(1e-309))
    for at in (-1e-300, -1e-20, -1e-3, -0.5, -3.0, -50.0, -700.0):
        exact = -np.exp(at) / -np.expm1(at)  # -exp(x) / (1 - exp(x))
        assert f(at)[1] == pytest.approx(exact, rel=1e-14), at


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning", "ignore:overflow:RuntimeWarning")  # the -inf
def test_log1mexp_gradient_of_a_float32_stays_float32():
    x = et.fvector("x")
    g = eg.grad(et.sum(et.log1mexp(x)), x)
    assert g.dtype == "float32"
    got = eg.function([x], g)(np.array([0.0, -0.0, -1e-3, -2.0], "float32"))
    assert got.dtype == np.float32 and got[0] == -np.inf and got[1] == -np.inf
    np.testing.assert_allclose(got[2:], [-np.exp(-1e-3) / -np.expm1(-1e-3), -np.exp(-2.0) / -np.expm1(-2.0)],
                               rtol=1e-5)


# -- prod with zeros: the product of the other entries, not prod / x (0 / 0 at a zero) ----------------
@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize("values, expected", [
    ([0.0, 2.0, 3.0], [6.0, 0.0, 0.0]),
    ([0.0, 0.0, 3.0], [0.0, 0.0, 0.0]),
    ([-0.0, 2.0, 3.0], [6.0, -0.0, -0.0]),
    ([1.5, 2.0, 3.0], [6.0, 4.5, 3.0]),
], ids=["one-zero", "two-zeros", "negative-zero", "no-zero"])
def test_prod_gradient_at_zeros(values, expected, rules):
    x = et.dvector("x")
    np.testing.assert_allclose(_grad_fn([x], et.prod(x), x, rules)(np.array(values)), expected)


def test_prod_gradient_at_zeros_along_an_axis_with_keepdims():
    x = et.dmatrix("x")
    values = np.array([[0.0, 2.0, 3.0], [1.0, 2.0, 4.0], [0.0, 5.0, 0.0]])
    weights = np.array([[1.0], [2.0], [3.0]])
    got = _grad_fn([x], et.sum(et.prod(x, axis=1, keepdims=True) * weights), x, {"rulesets": []})(values)
    np.testing.assert_allclose(got, [[6.0, 0.0, 0.0], [16.0, 8.0, 4.0], [0.0, 0.0, 0.0]])


@pytest.mark.parametrize("rules", RULES)
def test_clip_gives_x_the_whole_gradient_at_its_bounds(rules):
    x, lo, hi = et.dvector("x"), et.dscalar("lo"), et.dscalar("hi")
    f = eg.function([x, lo, hi], eg.grad(et.sum(et.clip(x, lo, hi)), [x, lo, hi]), **rules)
    gx, glo, ghi = f(np.array([-1.0, -2.0, 0.5, 1.0, 3.0]), -1.0, 1.0)
    np.testing.assert_allclose(gx, [1.0, 0.0, 1.0, 1.0, 0.0])
    assert (glo, ghi) == (1.0, 1.0)


# -- cumprod with zeros: the same 0 / 0 as prod's ------------------------------------------------------
def _cumprod_grad_by_hand(values, weights):
    """d sum(weights * cumprod(values)) / d values, as sums of products of the other entries."""
    n = len(values)
    return np.array([sum(weights[j] * np.prod([values[k] for k in range(j + 1) if k != i]) for j in range(i, n))
                     for i in range(n)])


@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize("values", [[2.0, 0.0, 3.0, 4.0], [0.0, 2.0, 3.0, 4.0], [2.0, 3.0, 4.0, 0.0],
                                    [2.0, 0.0, 3.0, 0.0], [0.0, 0.0, 1.0, 2.0], [1.5, -2.0, 0.5, 3.0]],
                         ids=["inner-zero", "first-zero", "last-zero", "two-zeros", "leading-zeros", "no-zero"])
def test_cumprod_gradient_at_zeros(values, rules):
    x = et.dvector("x")
    weights = np.array([1.0, -2.0, 3.0, 0.5])
    cost = et.sum(et.cumprod(x) * et.constant(weights))
    got = _grad_fn([x], cost, x, rules)(np.array(values))
    np.testing.assert_allclose(got, _cumprod_grad_by_hand(values, weights))


def test_cumprod_gradient_at_zeros_along_the_second_axis():
    x = et.dmatrix("x")
    values = np.array([[2.0, 0.0, 3.0], [1.0, 2.0, 4.0], [0.0, 5.0, 0.0]])
    weights = np.array([1.0, 2.0, 3.0])
    got = _grad_fn([x], et.sum(et.cumprod(x, axis=1) * et.constant(weights)), x, {"rulesets": []})(values)
    np.testing.assert_allclose(got, [_cumprod_grad_by_hand(row, weights) for row in values])


# -- consider_constant stops the walk at a variable, not the variable's own gradient ---------------
def test_consider_constant_variable_still_gets_its_own_gradient():
    # PyTensor: gradients do not flow *through* a constant-considered variable into its owner,
    # but the variable itself, asked for in wrt, has one
    x = et.dvector("x")
    y = et.exp(x)
    cost = (y * 3.0).sum()
    gy, gx = eg.grad(cost, [y, x], consider_constant=[y], disconnected_inputs="ignore",
                     return_disconnected="none")
    assert gx is None
    np.testing.assert_allclose(eg.function([x], gy, on_unused_input="ignore")(np.zeros(2)), [3.0, 3.0])
    gx_alone = eg.grad(cost, x, consider_constant=[x])  # an input has no owner to stop at
    np.testing.assert_allclose(eg.function([x], gx_alone)(np.array([0.0, 1.0])), 3.0 * np.exp([0.0, 1.0]))


def test_known_grads_with_wrt_considered_constant():
    # the form PyTensor's own tests use: grad(None, known_grads={out: g}, wrt=inputs, consider_constant=inputs)
    x = et.dvector("x")
    out = et.sin(x)
    (gx,) = eg.grad(None, [x], known_grads={out: et.ones_like(out)}, consider_constant=[x])
    np.testing.assert_allclose(eg.function([x], gx)(np.array([0.0, 1.0])), np.cos([0.0, 1.0]))


# -- known_grads: a given cotangent replaces the cost's, and a disconnected one means none ---------
def test_known_grad_of_the_cost_replaces_its_ones():
    x = et.dvector("x")
    cost = (x * x).sum()
    g = eg.grad(cost, x, known_grads={cost: et.constant(2.0)})
    np.testing.assert_allclose(eg.function([x], g)(np.array([1.0, 3.0])), [4.0, 12.0])


def test_known_grad_disconnected_makes_the_inputs_disconnected():
    x, y = et.iscalar("x"), et.iscalar("y")
    cost = x + y
    with pytest.raises(eg.DisconnectedInputError):
        eg.grad(cost, [x, y], known_grads={cost: disconnected()}, disconnected_inputs="raise")


# -- an undefined (NullType) gradient reaches only the inputs connected to its output --------------
class _TwoOutputs(Op):
    """x -> (x, a scalar that does not depend on x): its connection pattern says so."""

    __props__ = ()

    def make_node(self, x):
        return Apply(self, [x], [x.type(), et.dscalar()])

    def connection_pattern(self, node):
        return [[True, False]]

    def grad(self, inputs, output_grads):
        return [output_grads[0]]

    def perform(self, node, inputs, outputs):
        outputs[0][0], outputs[1][0] = inputs[0].copy(), np.float64(0.0)


class _UndefinedForSecond(Op):
    __props__ = ()

    def make_node(self, f, g):
        return Apply(self, [f, g], [et.dscalar()])

    def grad(self, inputs, output_grads):
        return [output_grads[0] * et.ones_like(inputs[0]), eg.NullType("no gradient for g")()]

    def perform(self, node, inputs, outputs):
        outputs[0][0] = np.float64(inputs[0].sum() + inputs[1])


def test_null_gradient_follows_the_connection_pattern():
    x = et.dvector("x")
    f, g = _TwoOutputs()(x)
    gx = eg.grad(_UndefinedForSecond()(f, g), x)
    np.testing.assert_allclose(eg.function([x], gx)(np.array([1.0, 2.0])), [1.0, 1.0])


# -- gradients are named (d<cost>/d<wrt>) when both are named --------------------------------------
def test_gradient_names_follow_pytensor():
    x = et.dvector("x")
    f = (x * x).sum()
    f.name = "f"
    assert eg.grad(f, x).name == "(df/dx)"
    assert eg.grad(f, x, add_names=False).name is None
