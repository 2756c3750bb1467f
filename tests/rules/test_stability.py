"""Numerically unstable spellings compile to stable forms: each case at an input where the
naive formula gives inf or NaN (or loses every digit), against SciPy or long-double references."""

import numpy as np
import pytest
from scipy import special

import eqgraph as eg
import eqgraph.tensor as et

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NumPy's own warnings on the naive side


def compiled(inputs, output):
    return eg.function(inputs, output)


def op_names(f) -> set:
    return {type(n.op).__name__ if not hasattr(n.op, "name") else n.op.name for n in f.stages.optimized.apply_nodes}


def check(f, args, expected, rtol=1e-12):
    """Every output finite and within ``rtol`` of the reference rounded to the output's dtype
    (a float32 softmax of a gap of 120 is exactly 0 where the true value is 8e-53)."""
    out = f(*args)
    for got, want in zip(out if isinstance(out, list) else [out], expected if isinstance(out, list) else [expected]):
        assert np.all(np.isfinite(got)), (got, want)
        np.testing.assert_allclose(got, np.asarray(want).astype(got.dtype), rtol=rtol, atol=0)


# -- logsumexp -------------------------------------------------------------------------------
BIG = np.array([[1000.0, 1001.0, 999.0], [-1000.0, 5.0, 700.0]])


@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (1, False), (1, True), ((0, 1), True)])
def test_log_sum_exp_is_logsumexp(axis, keepdims):
    x = et.dmatrix("x")
    f = compiled([x], et.log(et.sum(et.exp(x), axis=axis, keepdims=keepdims)))
    check(f, [BIG], special.logsumexp(BIG, axis=axis, keepdims=keepdims))
    assert "logsumexp" in op_names(f) and "exp" not in op_names(f)


def shifted_spellings(x):
    m_keep = et.max(x, axis=1, keepdims=True)
    return {
        "keepdims": m_keep + et.log(et.sum(et.exp(x - m_keep), axis=1, keepdims=True)),
        "dimshuffled": et.max(x, axis=1) + et.log(et.sum(et.exp(x - et.max(x, axis=1).dimshuffle(0, "x")), axis=1)),
        "max first": et.log(et.sum(et.exp(x - m_keep), axis=1)) + et.max(x, axis=1),
    }


@pytest.mark.parametrize("spelling", ["keepdims", "dimshuffled", "max first"])
def test_hand_shifted_logsumexp_is_one_reduction(spelling):
    x = et.dmatrix("x")
    out = shifted_spellings(x)[spelling]
    f = compiled([x], out)
    want = special.logsumexp(BIG, axis=1, keepdims=out.ndim == 2)
    check(f, [BIG], want)
    assert op_names(f) & {"logsumexp"} and "max" not in op_names(f)


def test_log_of_sum_of_exps_is_logaddexp():
    a, b = et.dvector("a"), et.dvector("b")
    f = compiled([a, b], et.log(et.exp(a) + et.exp(b)))
    av, bv = np.array([1000.0, -1000.0, 0.0]), np.array([1000.0, -1001.0, 1e-10])
    check(f, [av, bv], np.logaddexp(av, bv))
    assert "logaddexp" in op_names(f)


# -- softmax ------------------------------------------------------------------------------------
@pytest.mark.parametrize("spelling", ["keepdims", "expand_dims", "shifted", "vector"])
def test_exp_over_sum_of_exp_is_softmax(spelling):
    x = et.dmatrix("x")
    e = et.exp(x)
    m = et.max(x, axis=1, keepdims=True)
    value = BIG
    if spelling == "keepdims":
        out = e / et.sum(e, axis=1, keepdims=True)
    elif spelling == "expand_dims":
        out = e / et.expand_dims(et.sum(e, axis=1), 1)
    elif spelling == "shifted":
        out = et.exp(x - m) / et.sum(et.exp(x - m), axis=1, keepdims=True)
    else:
        x = et.dvector("x")
        out, value = et.exp(x) / et.sum(et.exp(x)), BIG[0]
    f = compiled([x], out)
    check(f, [value], special.softmax(value, axis=-1), rtol=1e-12)
    # Softmax, not exp(x - logsumexp(x)): that loses |x|*eps (4.8e-14 at x ~ 1000, bench/rewrites.py)
    assert "Softmax" in op_names(f) and "exp" not in op_names(f)


@pytest.mark.parametrize("spelling", ["log of softmax", "log of ratio", "minus logsumexp", "shifted"])
def test_log_softmax_spellings(spelling):
    x = et.dmatrix("x")
    e = et.exp(x)
    shifted = x - et.max(x, axis=1, keepdims=True)
    out = {"log of softmax": et.log(et.softmax(x, axis=1)),
           "log of ratio": et.log(e / et.sum(e, axis=1, keepdims=True)),
           "minus logsumexp": x - et.log(et.sum(e, axis=1, keepdims=True)),
           "shifted": shifted - et.log(et.sum(et.exp(shifted), axis=1, keepdims=True))}[spelling]
    f = compiled([x], out)
    check(f, [BIG], special.log_softmax(BIG, axis=1))
    # LogSoftmax, or x - logsumexp(x) where the cost model finds it cheaper: both stable.
    # x - logsumexp(x) becomes LogSoftmax behind a switch on logsumexp(x) < inf (beside an inf
    # of x it is -inf where LogSoftmax is NaN: docs/numerics.md)
    ops = op_names(f)
    assert ops in ({"Softmax"}, {"logsumexp", "sub"}) or (
        "Softmax" in ops and ops <= {"Softmax", "logsumexp", "lt", "switch", "max", "sub"}), ops


# -- sigmoid, softplus, log1mexp --------------------------------------------------------------
def test_sigmoid_spellings():
    x = et.dvector("x")
    values = np.array([-800.0, -40.0, 0.0, 40.0, 800.0])
    for out in (et.exp(x) / (1 + et.exp(x)), et.exp(x) / (et.exp(x) + 1)):
        f = compiled([x], out)
        np.testing.assert_allclose(f(values), special.expit(values), rtol=1e-12)
        # sigmoid(x), NaN at x = inf where exp(x) / (1 + exp(x)) is inf / inf
        assert op_names(f) <= {"sigmoid", "neg", "lt", "switch"}
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(f(np.array([np.inf, -np.inf])), [np.nan, 0.0])
    # 1 / (1 + exp(-x)) is stable as written (exp(-x) = inf gives 0); the cost model may keep it
    f = compiled([x], 1 / (1 + et.exp(-x)))
    np.testing.assert_allclose(f(values), special.expit(values), rtol=1e-12)
    assert eg.equivalent(1 / (1 + et.exp(-x)), et.sigmoid(x))


def test_one_minus_sigmoid_is_sigmoid_of_minus_x():
    x = et.dvector("x")
    values = np.array([40.0, 100.0, -3.0])
    check(compiled([x], 1 - et.sigmoid(x)), [values], special.expit(-values))


@pytest.mark.parametrize("spelling", ["log1p", "log"])
def test_log1mexp(spelling):
    x = et.dvector("x")
    out = et.log1p(-et.exp(x)) if spelling == "log1p" else et.log(1 - et.exp(x))
    values = np.array([-1e-20, -1e-5, -0.5, -3.0, -50.0])
    wide = values.astype(np.longdouble)
    want = np.where(wide > -np.log(2), np.log(-np.expm1(wide)), np.log1p(-np.exp(wide)))
    f = compiled([x], out)
    check(f, [values], want.astype(np.float64))
    assert "log1mexp" in op_names(f)


def test_softplus_and_log_sigmoid_identities():
    x = et.dvector("x")
    values = np.array([-800.0, -40.0, 0.5, 40.0, 800.0])
    cases = {  # expression: reference (SciPy: log_expit(x) = log(sigmoid(x)))
        et.log(1 + et.exp(x)): np.logaddexp(0, values),
        et.log(et.sigmoid(x)): special.log_expit(values),
        et.log(1 - et.sigmoid(x)): special.log_expit(-values),
        et.softplus(x) - x: np.logaddexp(0, -values),
        et.log1p(-et.sigmoid(x)): special.log_expit(-values),
    }
    for out, want in cases.items():
        check(compiled([x], out), [values], want)


def test_expm1_and_log1p():
    x = et.dvector("x")
    values = np.array([1e-20, -1e-17, 3e-10])
    check(compiled([x], et.exp(x) - 1), [values], np.expm1(values))
    check(compiled([x], et.log(1 + x)), [values], np.log1p(values))
    check(compiled([x], et.log(1 - x)), [values], np.log1p(-values))


# -- cross-entropies, with their gradients -----------------------------------------------------
LOGITS = {"float64": (40.0, 120.0), "float32": (40.0,)}
#: where sigmoid(-logit) underflows to 0 and only the cancelled quotients stay finite
EXTREME_LOGITS = [("float64", 800.0), ("float32", 120.0)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_binary_cross_entropy_and_gradient(dtype):
    _check_binary_cross_entropy(dtype, LOGITS[dtype])


@pytest.mark.parametrize("dtype, logit", EXTREME_LOGITS)
def test_binary_cross_entropy_gradient_where_sigmoid_underflows(dtype, logit):
    _check_binary_cross_entropy(dtype, (logit,))


def _check_binary_cross_entropy(dtype, logits):
    # a float32 logistic regression's loss + gradient must compile, and in float64 the loss must
    # stay finite (and the gradient not NaN) at a logit of 40
    x, t = et.matrix("x", dtype=dtype), et.vector("t", dtype=dtype)
    w, b = et.vector("w", dtype=dtype), et.scalar("b", dtype=dtype)
    p = et.sigmoid(x @ w + b)
    loss = -(t * et.log(p) + (1 - t) * et.log(1 - p)).mean()
    f = eg.function([x, t, w, b], [loss, *eg.grad(loss, [w, b])])
    # at 120 (float32) and 800 (float64) sigmoid(-logit) underflows to 0: the gradient's
    # (a / p - b / (1 - p)) * p * (1 - p) is finite only once gradclean.egg cancelled both quotients
    for logit in logits:
        xv, tv = np.array([[logit], [1.0], [-logit]], dtype), np.array([0.0, 1.0, 1.0], dtype)
        wv, bv = np.array([1.0], dtype), np.array(0.0, dtype)
        z = xv[:, 0].astype(np.float64)
        # -log(sigmoid(z)) = softplus(-z), -log(1 - sigmoid(z)) = softplus(z); d/dz = sigmoid(z) - t
        want_loss = np.mean(tv * np.logaddexp(0, -z) + (1 - tv) * np.logaddexp(0, z))
        dz = (special.expit(z) - tv) / len(z)
        got = f(xv, tv, wv, bv)
        rtol = 1e-6 if dtype == "float32" else 1e-12
        check(f, [xv, tv, wv, bv], [want_loss, xv.T.astype(np.float64) @ dz, dz.sum()], rtol=rtol)
        assert got[0].dtype == dtype


@pytest.mark.parametrize("spelling", ["log_softmax", "log of softmax", "minus logsumexp"])
def test_categorical_cross_entropy_gradient_at_a_float32_logit_gap_of_120(spelling):
    x, y = et.fmatrix("x"), et.lvector("y")
    logp = {"log_softmax": et.log_softmax(x),
            "log of softmax": et.log(et.softmax(x)),
            "minus logsumexp": x - et.log(et.sum(et.exp(x), axis=1, keepdims=True))}[spelling]
    loss = -et.mean(logp[et.arange(y.shape[0]), y])
    f = eg.function([x, y], [loss, eg.grad(loss, x)])
    xv, yv = np.array([[120.0, 0.0, 0.0], [0.0, 0.0, 120.0]], np.float32), np.array([1, 2])
    onehot = np.eye(3)[yv]
    want_loss = -np.mean((special.log_softmax(xv.astype(np.float64), axis=1) * onehot).sum(1))
    want_grad = (special.softmax(xv.astype(np.float64), axis=1) - onehot) / 2
    check(f, [xv, yv], [want_loss, want_grad], rtol=1e-6)


@pytest.mark.parametrize("dtype, gap", [("float32", 120.0), ("float64", 1000.0)])
def test_gradient_of_log_sum_exp_is_softmax(dtype, gap):
    x = et.matrix("x", dtype=dtype)
    for keepdims in (False, True):
        lse = et.log(et.sum(et.exp(x), axis=1, keepdims=keepdims))
        f = eg.function([x], [lse.sum(), eg.grad(lse.sum(), x)])
        xv = np.array([[gap, 0.0], [1.0, 2.0]], dtype)
        wide = xv.astype(np.float64)
        check(f, [xv], [special.logsumexp(wide, axis=1).sum(), special.softmax(wide, axis=1)],
              rtol=1e-6 if dtype == "float32" else 1e-12)


def test_gradient_of_a_full_log_sum_exp():
    x = et.fvector("x")
    lse = et.log(et.sum(et.exp(x)))
    f = eg.function([x], [lse, eg.grad(lse, x)])
    xv = np.array([120.0, 0.0], np.float32)
    check(f, [xv], [120.0, special.softmax(xv.astype(np.float64))], rtol=1e-6)


def test_one_hot_categorical_cross_entropy_of_a_softmax():
    x, t = et.dmatrix("x"), et.dmatrix("t")
    loss = -et.sum(t * et.log(et.softmax(x, axis=1)), axis=1).mean()
    f = eg.function([x, t], [loss, eg.grad(loss, x)])
    xv, tv = np.array([[1000.0, 0.0, -1000.0], [0.0, 800.0, 0.0]]), np.eye(3)[[2, 0]]
    want_loss = -np.mean((special.log_softmax(xv, axis=1) * tv).sum(1))
    check(f, [xv, tv], [want_loss, (special.softmax(xv, axis=1) - tv) / 2])


# -- gradient cleanup (rulesets/gradclean.egg) ------------------------------------------------
def test_a_quotient_multiplied_back_cancels():
    g, s = et.dvector("g"), et.dvector("s")
    # for an unknown s only where finite values are assumed: (g / 0) * 0 is NaN
    f = eg.function([g, s], (g / s) * s, assume_finite=True)
    assert op_names(f) == {"second"}  # g broadcast to the shape of g / s * s: no division
    np.testing.assert_array_equal(f(np.array([1.0, 2.0]), np.array([0.0, 1e-320])), [1.0, 2.0])
    gv, sv = np.array([1.0, 2.0]), np.array([0.0, 1e-320])
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(compiled([g, s], (g / s) * s)(gv, sv), (gv / sv) * sv)  # NumPy's NaN, inf
    # an s made by exp of z cancels wherever z is finite, however small s is
    z = et.dvector("z")
    f = compiled([g, z], (g / et.exp(z)) * et.exp(z))
    with np.errstate(all="ignore"):
        got = f(np.array([1.0, 2.0, 3.0]), np.array([-800.0, np.inf, 1.0]))
    np.testing.assert_array_equal(got, [1.0, np.nan, 3.0])


def test_fills_of_ones_and_fills_of_fills_go():
    x, y = et.dmatrix("x"), et.dmatrix("y")
    f = compiled([x, y], et.second(x, 1.0) * y)
    assert op_names(f) == {"second"}
    f = compiled([x, y], et.second(x, et.second(x, y)) * x)
    assert op_names(f) == {"mul"}
    xv, yv = np.ones((2, 3)) * 3, np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(f(xv, yv), yv * 3)


def test_un_broadcasting_to_the_same_static_shape_goes():
    x, y = et.TensorType("float64", (3, 2))("x"), et.TensorType("float64", (3, 2))("y")
    f = compiled([x, y], et.sum_to_shape(x * 2, y))
    assert op_names(f) == {"mul"}
    free = et.dmatrix("free")
    assert "SumToShape" in op_names(compiled([x, free], et.sum_to_shape(x * 2, free)))


# -- log-mean-exp, reciprocal sigmoid, the gradient of a hand-written softplus -----------------
@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, False), (0, True)])
def test_log_mean_exp_is_a_shifted_logsumexp(axis, keepdims):
    x = et.dmatrix("x")
    f = compiled([x], et.log(et.exp(x).mean(axis=axis, keepdims=keepdims)))
    assert "logsumexp" in op_names(f) or "Logsumexp" in op_names(f)
    size = BIG.size if axis is None else BIG.shape[axis]
    check(f, [BIG], special.logsumexp(BIG, axis=axis, keepdims=keepdims) - np.log(size))


def test_reciprocal_sigmoid_keeps_subnormal_results_in_float32():
    # 1 / (1 + exp(-x)) is 0 once exp(-x) overflows (x < -88 in float32); sigmoid(-100) is 3.7e-44
    x = et.fvector("x")
    f = compiled([x], 1 / (1 + et.exp(-x)))
    assert op_names(f) == {"sigmoid"}
    got = f(np.array([-100.0, 0.0, 30.0], "float32"))
    assert got[0] > 0
    np.testing.assert_allclose(got, special.expit(np.array([-100.0, 0.0, 30.0])).astype("float32"), rtol=1e-6)


def test_a_scaled_exp_over_one_plus_exp_is_a_scaled_sigmoid():
    x, g = et.dvector("x"), et.dvector("g")
    f = compiled([x, g], g * et.exp(x) / (et.exp(x) + 1))
    assert f.stages.report.fired().get("stability/sigmoid-from-exp-scaled")
    check(f, [np.array([800.0, -800.0, 1.0]), np.array([2.0, 3.0, -1.0])],
          np.array([2.0, 3.0, -1.0]) * special.expit(np.array([800.0, -800.0, 1.0])))


# -- the gradient of log(mean(exp(x))) is softmax(x), as log(n) is a constant ------------------
@pytest.mark.parametrize("dtype, gap", [("float32", 120.0), ("float64", 800.0)])
@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (1, False), (1, True), (0, True)])
def test_gradient_of_log_mean_exp_is_softmax(dtype, gap, axis, keepdims):
    # (g / mean(exp(x))) / n * exp(x), the chained VJPs, is 0 * inf = NaN once exp(x) overflows
    x = et.matrix("x", dtype=dtype)
    lme = et.log(et.mean(et.exp(x), axis=axis, keepdims=keepdims))
    f = eg.function([x], [lme.sum(), eg.grad(lme.sum(), x)])
    xv = np.array([[gap, 0.0], [1.0, 2.0]], dtype)
    wide = xv.astype(np.float64)
    size = wide.size if axis is None else wide.shape[axis]
    want = special.logsumexp(wide, axis=axis).sum() - np.log(size) * (wide.size // size)
    check(f, [xv], [want, special.softmax(wide, axis=axis)], rtol=1e-6 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("dtype, gap", [("float32", 120.0), ("float64", 800.0)])
def test_gradient_of_a_full_log_mean_exp_of_a_vector(dtype, gap):
    x = et.vector("x", dtype=dtype)
    lme = et.log(et.mean(et.exp(x)))
    f = eg.function([x], [lme, eg.grad(lme, x)])
    xv = np.array([gap, 0.0], dtype)
    wide = xv.astype(np.float64)
    check(f, [xv], [special.logsumexp(wide) - np.log(2), special.softmax(wide)],
          rtol=1e-6 if dtype == "float32" else 1e-12)


def test_log_mean_exp_with_a_wider_accumulator():
    # acc_dtype float64 on a float32 x: the mean is computed in float64 and cast back to float32
    x = et.fvector("x")
    lme = et.log(et.mean(et.exp(x), acc_dtype="float64"))
    f = eg.function([x], [lme, eg.grad(lme, x)])
    xv = np.array([120.0, 0.0], np.float32)
    wide = xv.astype(np.float64)
    check(f, [xv], [special.logsumexp(wide) - np.log(2), special.softmax(wide)], rtol=1e-6)


@pytest.mark.parametrize("dtype, gap", [("float32", 120.0), ("float64", 800.0)])
def test_gradient_of_log_sum_exp_over_a_whole_matrix_is_softmax(dtype, gap):
    # over both axes exp(x - logsumexp(x)) and exp(x) / sum(exp(x)) are both declared unstable;
    # the flattened softmax is not
    x = et.matrix("x", dtype=dtype)
    lse = et.log(et.sum(et.exp(x)))
    f = eg.function([x], [lse, eg.grad(lse, x)])
    xv = np.array([[gap, 0.0], [1.0, 2.0]], dtype)
    wide = xv.astype(np.float64)
    check(f, [xv], [special.logsumexp(wide), special.softmax(wide)], rtol=1e-6 if dtype == "float32" else 1e-12)
