"""The VJP lookup: unification runs once per op signature, and the memo agrees with it."""

import numpy as np

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.grad import vjps
from eqgraph.terms import Apply, Op
from eqgraph.terms.graph import toposort


def _varied_graph():
    """Ops of many kinds and arities, some with the same key but other props."""
    x = et.dmatrix("x")
    v = et.dvector("v")
    y = et.tanh(x) * 2.0 + x
    parts = [et.sum(y, axis=0), et.sum(y, axis=1), et.max(y, axis=0), et.mean(y)]
    joined = et.concatenate([parts[0], parts[1], v], axis=0)
    stacked = et.stack([joined, joined * v[0]])
    cost = et.sum(stacked[:, 1:] ** 2) + parts[3] + et.sum(et.matmul(x, x.T)) + et.sum(parts[2])
    return cost, x, v


def test_memoized_lookup_agrees_with_fresh_unification():
    cost, _, _ = _varied_graph()
    nodes = toposort([cost])
    assert len({vjps.term_of(n)[0] for n in nodes}) > 8
    for node in nodes:
        memoized = vjps.match(node)
        fresh = vjps._unify(vjps.term_of(node))
        if fresh is None:
            assert memoized is None, node
        else:
            entry, inputs, props = memoized
            assert entry is vjps.VJPS[vjps.term_of(node)[0]][fresh], node
            assert inputs == tuple(node.inputs) and props == vjps.term_of(node)[2]


def test_grad_unifies_once_per_op_signature(monkeypatch):
    calls = []
    unify = vjps._unify
    monkeypatch.setattr(vjps, "_MATCHED", {})
    monkeypatch.setattr(vjps, "_unify", lambda term: calls.append(term[0]) or unify(term))
    x = et.dvector("x")
    a = x
    for _ in range(20):
        t = et.tanh(a)
        a = t * 0.5 + t * x
    g = eg.grad(et.sum(a), x)
    assert sorted(calls) == sorted(set(calls)), "one query per signature"
    assert {"tanh", "mul", "add"} <= set(calls)
    f = eg.function([x], g)
    assert np.all(np.isfinite(f(np.array([0.1, -0.2]))))


def test_a_new_entry_is_seen_by_signatures_matched_before():
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
