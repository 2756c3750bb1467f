"""Fills that only broadcast (rulesets/gradclean.egg, with types.egg's shape-root): each general
rule fires on a graph built for it, keeps NumPy's values (inf, NaN and -0.0 included) and leaves
no fill; where the shapes may differ at run time the fill stays."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et

x, y = et.dvector("x"), et.dvector("y")
s = et.dscalar("s")
SPECIAL = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 2.0, -3.5])
VALUES = {x: SPECIAL, y: SPECIAL[::-1].copy(), s: np.float64(-0.0)}


def compiled(out):
    """(ops of the compiled graph, rules that fired), after checking the values against NumPy."""
    inputs = [v for v in VALUES if v in set(eg.terms.graph.graph_inputs([out]))]
    args = [VALUES[v] for v in inputs]
    f = eg.function(inputs, out)
    with np.errstate(all="ignore"):
        got, want = f(*args), eg.function(inputs, out, rulesets=[])(*args)
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    return [n.op for n in f.stages.optimized.toposort()], f.stages.report.fired()


def is_fill(op) -> bool:
    return getattr(op, "name", None) == "second"


@pytest.mark.parametrize("rule, build", [
    ("fill-same-shape", lambda: et.second(et.tanh(x), 1.0 - et.tanh(x) ** 2)),   # the VJP of tanh
    ("fill-same-shape", lambda: et.second(et.exp(x) * 2.0, et.sqrt(x))),          # a size-1 operand keeps the shape
    ("fill-mul-same-shape", lambda: et.second(et.sqr(x), 2.0) * x),               # the VJP of x**2
    ("fill-add-same-shape", lambda: et.second(et.exp(x), 2.0) + x),
    ("fill-sub-same-shape", lambda: et.second(et.exp(x), 2.0) - x),
    ("sub-fill-same-shape", lambda: x - et.second(et.exp(x), 2.0)),
    ("fill-mul-unit", lambda: et.second(et.sqr(x), s) * 3.0 * x),                # grad of sqrt(sum(x**2))
    ("fill-div-unit", lambda: et.second(et.sqr(x), 2.0) / s * x),
])
def test_a_fill_of_the_same_shape_goes(rule, build):
    ops, fired = compiled(build())
    assert fired.get(f"gradclean/{rule}")
    assert not any(is_fill(op) for op in ops), ops


def test_the_gradients_of_everyday_losses_have_no_fills():
    X, W = et.dmatrix("X"), et.dmatrix("W")
    for loss, wrt in [((x ** 2).mean(), x), (et.tanh(x).sum(), x), (et.sqrt((x ** 2).sum()), x),
                      ((et.tanh(X @ W) ** 2).mean(), W), ((X * s).sum(), s)]:
        f = eg.function([v for v in (x, X, W, s) if v in set(eg.terms.graph.graph_inputs([loss]))],
                        eg.grad(loss, wrt))
        assert not any(is_fill(n.op) for n in f.stages.optimized.toposort()), loss


def test_a_fill_to_another_shape_stays():
    # y of length 1 is broadcast to x's length: y * y is not x-shaped, the fill is needed
    f = eg.function([x, y], et.second(x, y) * y)
    assert any(is_fill(n.op) for n in f.stages.optimized.toposort())
    np.testing.assert_array_equal(f(np.zeros(3), np.array([2.0])), [4.0, 4.0, 4.0])
    # nor does a fill of x's exp have the shape of the unrelated y
    f = eg.function([x, y], et.second(et.exp(x), 2.0) * y)
    np.testing.assert_array_equal(f(np.zeros(3), np.array([2.0])), [4.0, 4.0, 4.0])


def test_the_gradient_of_a_hand_written_softplus_is_sigmoid():
    # d/dx log(1 + exp(x)) = exp(x) / (1 + exp(x)): inf / inf = NaN at x = 800 unless it is sigmoid
    f = eg.function([x], eg.grad(et.log1p(et.exp(x)).sum(), x))
    assert any(getattr(n.op, "name", None) == "sigmoid" for n in f.stages.optimized.toposort())
    np.testing.assert_allclose(f(np.array([800.0, -800.0, 40.0, 0.0])), [1.0, np.exp(-800.0), 1.0, 0.5], rtol=1e-15)


def test_un_broadcasting_to_a_term_of_the_same_run_time_shape_goes():
    X = et.dmatrix("X")
    f = eg.function([X], et.sum_to_shape(et.exp(X) * 2.0, X))
    assert f.stages.report.fired().get("gradclean/sum-to-shape-same-root")
    assert "SumToShape" not in {type(n.op).__name__ for n in f.stages.optimized.toposort()}
    np.testing.assert_allclose(f(np.ones((2, 3))), np.full((2, 3), 2 * np.e), rtol=1e-15)
    Y = et.dmatrix("Y")   # another input may be broadcast: the un-broadcast stays
    f = eg.function([X, Y], et.sum_to_shape(et.exp(X) * Y, X))
    assert "SumToShape" in {type(n.op).__name__ for n in f.stages.optimized.toposort()}
    np.testing.assert_allclose(f(np.zeros((1, 3)), np.ones((2, 3))), np.full((1, 3), 2.0))


def op_names(f) -> list[str]:
    return [getattr(n.op, "name", None) or type(n.op).__name__ for n in f.stages.optimized.toposort()]


@pytest.mark.parametrize("rule, build, computed_for_shape", [
    ("shape-of-root", lambda: et.sqr(x).shape[0], "sqr"),                     # the 1/n of mean's gradient
    ("fill-of-root", lambda: et.second(et.gt(x, 0.0), y), "gt"),              # switch(c, y, y)
    ("sum-to-shape-of-root", lambda: et.sum_to_shape(y * 3.0, et.exp(x) * 2.0), "exp"),
])
def test_a_term_read_for_its_shape_alone_is_not_computed(rule, build, computed_for_shape):
    # Shape, a fill's first operand and an un-broadcast's `like` read only a shape: the
    # encoded term with that shape at run time (its shape-root) serves, with nothing computed
    out = build()
    inputs = [v for v in (x, y) if v in set(eg.terms.graph.graph_inputs([out]))]
    f = eg.function(inputs, out)
    assert f.stages.report.fired().get(f"gradclean/{rule}")
    assert computed_for_shape not in op_names(f), op_names(f)
    with np.errstate(all="ignore"):
        for args in ([SPECIAL, SPECIAL[::-1].copy()], [SPECIAL, np.array([2.0])], [np.array([2.0]), SPECIAL]):
            args = args[: len(inputs)]
            try:
                want = eg.function(inputs, out, rulesets=[])(*args)
            except ValueError:   # shapes that do not broadcast raise on both sides
                with pytest.raises(ValueError):
                    f(*args)
                continue
            np.testing.assert_array_equal(f(*args), want)


def test_the_gradient_of_a_mean_reads_the_size_off_the_input():
    f = eg.function([x], eg.grad((x ** 2).mean(), x))
    assert "sqr" not in op_names(f), op_names(f)
    np.testing.assert_allclose(f(SPECIAL[3:]), 2 * SPECIAL[3:] / 4)


def test_the_gradient_of_a_loss_of_two_inputs_computes_no_loss():
    # naive binary cross-entropy: every un-broadcast of the gradient is to a term shaped like
    # broadcast(z, y), so none needs the loss's softplus terms, only their shapes
    z = et.dvector("z")
    p = et.sigmoid(z)
    loss = -(y * et.log(p) + (1 - y) * et.log(1 - p)).mean()
    f = eg.function([z, y], eg.grad(loss, z))
    assert "softplus" not in op_names(f), op_names(f)
    reference = eg.function([z, y], eg.grad(loss, z), rulesets=[])
    for zv, yv in [(SPECIAL[3:], np.array([0.0, 1.0, 1.0, 0.0])), (np.array([2.0]), np.array([0.0, 1.0, 1.0])),
                   (np.array([-1.0, 0.5, 3.0]), np.array([1.0]))]:
        np.testing.assert_allclose(f(zv, yv), reference(zv, yv), rtol=1e-14)   # the stable form: an ulp


def test_an_un_broadcast_to_a_term_of_fewer_inputs_stays():
    f = eg.function([x, y], et.sum_to_shape(x * y, et.exp(x)))
    assert "SumToShape" in op_names(f)
    np.testing.assert_array_equal(f(np.array([2.0]), np.array([1.0, 3.0])), [8.0])


def test_the_gradient_of_a_cross_entropy_computes_one_softmax():
    X, Y = et.dmatrix("X"), et.dmatrix("Y")
    loss = -(Y * et.log(et.softmax(X, axis=-1))).sum()
    f = eg.function([X, Y], eg.grad(loss, X))
    softmaxes = [n.op for n in f.stages.optimized.toposort() if type(n.op).__name__ == "Softmax"]
    assert len(softmaxes) == 1 and not softmaxes[0].log, softmaxes   # no log-softmax for a shape
    xv, yv = np.array([[0.0, 120.0, -5.0], [3.0, 1.0, 2.0]]), np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    want = np.exp(xv - xv.max(1, keepdims=True))
    want = want / want.sum(1, keepdims=True) * yv.sum(1, keepdims=True) - yv
    np.testing.assert_allclose(f(xv, yv), want, rtol=1e-14, atol=1e-300)
