"""The VJP lookup: a kanren query for the most specific entry that fits a node's term, asked
once per term and remembered."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.grad import vjps
from eqgraph.grad.vjps import ANY, constant
from eqgraph.terms import Apply, Op
from eqgraph.terms.graph import toposort


def _varied_graph():
    """Ops of many kinds and arities, some with the same key but other props or operands."""
    x = et.dmatrix("x")
    v = et.dvector("v")
    y = et.tanh(x) * 2.0 + x
    parts = [et.sum(y, axis=0), et.sum(y, axis=1), et.max(y, axis=0), et.mean(y)]
    joined = et.concatenate([parts[0], parts[1], v], axis=0)
    stacked = et.stack([joined, joined * v[0]])
    cost = et.sum(stacked[:, 1:] ** 2) + parts[3] + et.sum(et.matmul(x, x.T)) + et.sum(parts[2][::-1] / 3.0)
    return cost, x, v


def test_the_remembered_answer_is_the_query_s():
    cost, _, _ = _varied_graph()
    nodes = toposort([cost])
    assert len({vjps.term_of(n)[0] for n in nodes}) > 8
    specific = 0
    for node in nodes:
        for wanted in (None, [True] + [False] * (len(node.inputs) - 1)):
            found = vjps.match(node, wanted)
            fresh = vjps._unify(vjps.term_of(node, wanted))
            assert (found is None) == (fresh is None), node
            if fresh is not None:
                assert found[0] is fresh, node
                assert found[1] == tuple(node.inputs) and found[2] == vjps.term_of(node)[1]
                specific += fresh.specificity > 0
    assert specific >= 4  # x * 2.0, x.T, [::-1], / 3.0, ** 2 (with the constant not wanted)


def test_grad_queries_once_per_term(monkeypatch):
    calls = []
    unify = vjps._unify
    monkeypatch.setattr(vjps, "_MATCHED", {})
    monkeypatch.setattr(vjps, "_unify", lambda term: calls.append(term) or unify(term))
    x = et.dvector("x")
    a = x
    for _ in range(20):
        t = et.tanh(a)
        a = t * 0.5 + t * x
    g = eg.grad(et.sum(a), x)
    assert len(calls) == len(set(calls)), "one query per term"
    assert {"tanh", "mul", "add"} <= {term[0] for term in calls}
    assert ("mul", (), ("var", ("const", 0.5))) in calls
    f = eg.function([x], g)
    assert np.all(np.isfinite(f(np.array([0.1, -0.2]))))


def test_a_new_entry_is_seen_by_terms_answered_before():
    node = et.tanh(et.dvector("x")).owner
    saved = vjps.VJPS.pop("tanh")
    try:
        vjps._MATCHED.clear()
        assert vjps.match(node) is None  # no entry: remembered as such
        vjps.entry("tanh", 1)(lambda g, out, x: [2 * g])
        found = vjps.match(node)
        assert found is not None and found[0] is vjps.VJPS["tanh"][0]
    finally:
        vjps.VJPS["tanh"] = saved
        vjps._MATCHED.clear()


def test_a_swapped_list_of_entries_is_asked_afresh(monkeypatch):
    """A test that swaps in its own entries for a key (as the fuzz test swaps in a wrong VJP)
    gets them, although the term was answered before with the table's."""
    node = (et.dvector("x") * 2.0).owner
    assert vjps.match(node, [True, False])[0].fn is vjps._times_constant
    general = vjps.VJPS["mul"][0]
    monkeypatch.setitem(vjps.VJPS, "mul", [general])
    assert vjps.match(node, [True, False])[0] is general


@pytest.fixture
def table(monkeypatch):
    """An empty table to register test entries in."""
    monkeypatch.setattr(vjps, "VJPS", {})
    monkeypatch.setattr(vjps, "_MATCHED", {})
    return vjps.VJPS


def _registered(key, **pattern):
    fn = lambda g, out, *inputs: [g] * len(inputs)  # noqa: E731 (only its identity matters)
    vjps.entry(key, **pattern)(fn)
    return fn


def test_the_most_specific_entry_answers_whatever_the_order(table):
    general = _registered("op", n_inputs=2)
    two = _registered("op", operands=(ANY, constant(2)))
    any_constant = _registered("op", operands=(ANY, constant()))
    assert vjps._unify(("op", (), ("var", ("const", 2.0)))).fn is two
    assert vjps._unify(("op", (), ("var", ("const", 3.0)))).fn is any_constant
    assert vjps._unify(("op", (), ("var", "var"))).fn is general
    assert vjps._unify(("op", (), ("var",))) is None  # no entry of one input
    assert vjps._unify(("other", (), ("var", "var"))) is None


def test_of_equally_specific_entries_the_first_registered_answers(table):
    left = _registered("op", operands=(constant(), ANY))
    _registered("op", operands=(ANY, constant()))
    assert vjps._unify(("op", (), (("const", 1.0), ("const", 2.0)))).fn is left


def test_a_where_test_narrows_an_entry(table):
    general = _registered("op", n_inputs=1)
    even = _registered("op", n_inputs=1, where=lambda n: n % 2 == 0)
    assert vjps._unify(("op", (4,), ("var",))).fn is even
    assert vjps._unify(("op", (3,), ("var",))).fn is general


def test_an_entry_whose_arity_disagrees_with_its_operands_is_refused(table):
    with pytest.raises(ValueError, match=r"entry\('op'\): n_inputs=3 but 2 operand patterns \(ANY, \('const', ANY\)\)"):
        vjps.entry("op", 3, operands=(ANY, constant()))


def test_a_constant_operand_is_seen_through_broadcasting():
    x = et.dmatrix("x")
    assert vjps.term_of((x * 2.0).owner, [True, False])[2] == ("var", ("const", 2.0))
    assert vjps.term_of((x * et.constant(np.ones(3))).owner, [True, False])[2] == ("var", ("const", None))
    assert vjps.term_of((x * 2.0).owner)[2] == ("var", "var")  # its gradient is wanted


class MatMul(Op):
    """A user's op that happens to share a built-in op's class name (and arity)."""

    __props__ = ()

    def make_node(self, a, b):
        a, b = et.as_tensor_variable(a), et.as_tensor_variable(b)
        return Apply(self, [a, b], [a.type()])

    def perform(self, node, inputs, outputs):
        outputs[0][0] = inputs[0] + 2 * inputs[1]

    def grad(self, inputs, output_grads):
        return [output_grads[0], 2 * output_grads[0]]


def test_a_user_op_named_like_a_built_in_keeps_its_own_gradient():
    x, y = et.dvector("x"), et.dvector("y")
    gx, gy = eg.grad(MatMul()(x, y).sum(), [x, y])
    got = eg.function([x, y], [gx, gy])(np.ones(2), np.ones(2))
    np.testing.assert_allclose(got[0], [1.0, 1.0])
    np.testing.assert_allclose(got[1], [2.0, 2.0])  # the built-in matmul VJP would give y's partner, x
