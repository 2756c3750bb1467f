"""The specific VJP entries (a constant operand, a DimShuffle that only transposes, expands or
drops, a Subtensor that reverses whole axes) against their op's general entry: the same
cotangents on values that include inf, NaN and -0.0, compiled without rewrites so that each
entry's own graph is what runs."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.grad import vjps

NO_RULES = {"rulesets": []}
SPECIALS = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0]


def _values(shape, dtype, rng):
    """An array of ``shape`` holding the special values (as many as fit) and random normals."""
    flat = np.r_[SPECIALS, rng.normal(size=max(0, int(np.prod(shape)) - len(SPECIALS)))]
    return rng.permutation(flat)[: int(np.prod(shape))].reshape(shape).astype(dtype)


def _general(key):
    generals = [e for e in vjps.VJPS[key] if e.specificity == 0]
    assert len(generals) == 1, (key, generals)
    return generals[0]


def _cotangents(node, which, wanted):
    """``g`` (the output's cotangent) and, for the specific entry that matches ``node`` and for
    its op's general entry, the cotangents of the inputs at positions ``which``."""
    g = node.outputs[0].type("g")
    found = vjps.match(node, wanted)
    assert found is not None and found[0].specificity > 0, f"no specific entry matched {node.op}"
    specific, inputs, props = found
    outs = []
    for rule in (specific, _general(vjps.table_key(node.op))):
        cotangents = rule(g, node.outputs[0], inputs, props)
        outs.append([cotangents[i] for i in which])
    return g, outs


def assert_same(got, expected, signed_zeros=True, context=""):
    """Equal values, NaN where NaN, and (``signed_zeros``) the same sign on zeros."""
    np.testing.assert_array_equal(got, expected, err_msg=context)
    assert got.dtype == expected.dtype, context
    if signed_zeros:
        zeros = expected == 0
        assert np.array_equal(np.signbit(got[zeros]), np.signbit(expected[zeros])), context


def _compare(x, out, rng, signed_zeros=True, shape=None):
    """The specific and general entries' cotangents of ``x`` in ``out = op(x, ...)``."""
    node = out.owner
    wanted = [i is x for i in node.inputs]
    g, (specific, general) = _cotangents(node, [wanted.index(True)], wanted)
    xv = _values(shape or tuple(s or 12 for s in x.type.shape), x.dtype, rng)
    with np.errstate(all="ignore"):  # inf - inf and 0 * inf are part of what is compared
        gv = _values(eg.function([x], out, **NO_RULES)(xv).shape, g.dtype, rng)
        f = eg.function([x, g], specific + general, on_unused_input="ignore", **NO_RULES)
        got, expected = f(xv, gv)
    assert_same(got, expected, signed_zeros, context=f"{node.op} with x = {xv!r}, g = {gv!r}")


# -- elementwise with a constant operand -----------------------------------------------------------
CONSTANTS = [2, 2.0, 3.0, 0.5, -1.0, -2, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("c", CONSTANTS)
@pytest.mark.parametrize("form", ["x * c", "c * x", "x / c", "x ** c"])
def test_a_constant_operand_entry_agrees_with_the_general_one(form, c, dtype):
    x = et.TensorType(dtype, (None, None))("x")
    out = {"x * c": lambda: x * c, "c * x": lambda: c * x, "x / c": lambda: x / c, "x ** c": lambda: x ** c}[form]()
    _compare(x, out, np.random.default_rng(0))


def test_the_square_has_its_own_entry():
    x = et.dvector("x")
    for out in (x ** 2, x ** 2.0, x ** np.int8(2)):
        assert vjps.match(out.owner, [True, False])[0].fn is vjps._squared
    assert vjps.match((x ** 3.0).owner, [True, False])[0].fn is vjps._to_constant_power


def test_a_constant_broadcast_against_a_matrix():
    x = et.TensorType("float64", (None, 1))("x")
    _compare(x, x * et.constant(np.array([2.0, -0.0, np.inf])), np.random.default_rng(0), shape=(12, 1))
    _compare(x, x ** et.constant(np.array([[2.0, 0.5, np.nan]])), np.random.default_rng(0), shape=(12, 1))


def test_a_constant_whose_gradient_is_asked_for_gets_it():
    """``grad(cost, c)`` of a constant ``c``: then ``c`` is an operand like any other, and the
    general entry (which gives ``c`` its cotangent) is the one that fits."""
    x = et.dvector("x")
    c = et.constant(3.0)
    for out, expected in ((x * c, lambda xv: xv.sum()), (x / c, lambda xv: -xv.sum() / 9.0),
                          (x ** c, lambda xv: (xv ** 3 * np.log(xv)).sum())):
        assert vjps.match(out.owner)[0].specificity == 0
        gc = eg.grad(et.sum(out), c)
        xv = np.array([0.5, 1.5, 2.0])
        np.testing.assert_allclose(eg.function([x], gc)(xv), expected(xv))


def test_grad_through_constant_operands_matches_the_closed_form():
    x = et.dvector("x")
    cost = et.sum(x ** 2 * 3.0 + 2.0 * x ** 2.5 - x / 4.0)
    xv = np.array([0.5, 1.5, 2.0, 0.0])
    got = eg.function([x], eg.grad(cost, x))(xv)
    np.testing.assert_allclose(got, 6.0 * xv + 5.0 * xv ** 1.5 - 0.25)


# -- DimShuffle by kind ----------------------------------------------------------------------------
def _typed(shape):
    return et.TensorType("float64", shape)("x")


DIMSHUFFLES = {
    "transpose": [((None, None), (1, 0)), ((None, 3, None), (2, 0, 1)), ((None,), (0,))],
    "expand": [((None,), ("x", 0)), ((None,), (0, "x")), ((None, None), ("x", 0, "x", 1))],
    "drop": [((3, 1), (0,)), ((1, 1, 4), (2,)), ((1, None, 1), (1,)), ((1,), ())],
}
KIND_ENTRIES = {"transpose": "_inverse_permutation", "expand": "_drop_added_axes", "drop": "_restore_dropped_axes"}


@pytest.mark.parametrize("kind, shape, order", [(k, s, o) for k, cases in DIMSHUFFLES.items() for s, o in cases])
def test_a_dimshuffle_kind_entry_agrees_with_the_general_one(kind, shape, order):
    x = _typed(shape)
    out = et.dimshuffle(x, order)
    assert vjps.match(out.owner)[0].fn.__name__ == KIND_ENTRIES[kind]
    _compare(x, out, np.random.default_rng(0))


def test_a_dimshuffle_of_two_kinds_takes_the_general_entry():
    x = _typed((None, 1, None))
    for order in [(2, 0, "x"), ("x", 2, 0), (2, 0)]:  # transpose and expand; transpose and drop
        assert vjps.match(et.dimshuffle(x, order).owner)[0].specificity == 0, order


# -- Subtensor that reverses whole axes ------------------------------------------------------------
@pytest.mark.parametrize("shape, index", [((None, 3), np.s_[::-1]), ((None, 3), np.s_[:, ::-1]),
                                          ((None, 3), np.s_[::-1, ::-1]), ((None, 3), np.s_[:]),
                                          ((None, 2, 3), np.s_[::-1, :, ::-1])])
def test_a_reversal_entry_agrees_with_the_general_one(shape, index):
    x = _typed(shape)
    out = x[index]
    assert vjps.match(out.owner)[0].fn is vjps._reversal
    # the general entry adds g to zeros (0.0 + -0.0 is 0.0); the reversal keeps g's -0.0
    _compare(x, out, np.random.default_rng(0), signed_zeros=False)


def test_other_subtensors_take_the_general_entry():
    x = et.dmatrix("x")
    i = et.lscalar("i")
    for out in (x[1:], x[1], x[::2], x[i], x[None]):
        assert vjps.match(out.owner)[0].specificity == 0, out.owner.op
