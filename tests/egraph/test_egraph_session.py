"""``eqgraph.egraph.session``: one graph's encode, saturate and snapshot in a ``with`` scope that
gives its pooled egglog session back however it ends."""

import pytest

import eqgraph.tensor as et
from eqgraph import egraph
from eqgraph.egraph import pool
from eqgraph.terms import FunctionGraph

BUILTINS = ["types", "fold", "algebra", "stability"]


def idle():
    return not any(base.busy for base in pool.pooled()) and all(
        base.session.depth == 0 for base in pool.pooled())


def test_a_session_encodes_saturates_and_snapshots_then_gives_its_egglog_session_back():
    x = et.dvector("x")
    y = x * 1.0
    with egraph.session(BUILTINS) as s:
        assert any(base.busy for base in pool.pooled())   # it holds a pooled session
        encoded = s.encode(FunctionGraph([x], [y], clone=False))
        report = s.saturate(egraph.Limits(iterations=4))
        snapshot = s.snapshot()
    assert idle()
    assert report.matches["algebra/mul-one"] >= 1
    assert snapshot.class_of(x) == snapshot.class_of(y)    # x*1 = x, readable after the scope
    with pytest.raises(RuntimeError, match="snapshot"):
        encoded.session.sizes()


def test_an_error_inside_the_scope_gives_the_session_back():
    x = et.dvector("x")
    with pytest.raises(ZeroDivisionError):
        with egraph.session(BUILTINS) as s:
            s.encode(FunctionGraph([x], [et.exp(x)], clone=False))
            1 / 0
    assert idle()


def test_a_session_is_for_one_graph_in_order():
    x = et.dvector("x")
    with egraph.session([]) as s:
        with pytest.raises(RuntimeError, match="encode a graph"):
            s.saturate()
        s.encode(FunctionGraph([x], [et.exp(x)], clone=False))
        with pytest.raises(RuntimeError, match="one graph"):
            s.encode(FunctionGraph([x], [et.log(x)], clone=False))
    assert idle()


def test_timing_rules_uses_a_session_of_its_own():
    x = et.dvector("x")
    before = pool.pooled()
    with egraph.session(BUILTINS, time_rules=True) as s:
        assert not any(base.busy for base in pool.pooled())
        s.encode(FunctionGraph([x], [x * 1.0], clone=False))
        report = s.saturate()
    assert pool.pooled() == before
    assert report.rule_seconds["algebra/mul-one"] > 0


def test_optimize_is_the_scope_in_one_call_and_gives_the_session_back():
    x = et.dvector("x")
    y = x * 1.0
    encoded, report, snapshot, started = egraph.optimize(FunctionGraph([x], [y], clone=False), BUILTINS,
                                                         egraph.Limits(iterations=4))
    assert idle()
    assert report.matches["algebra/mul-one"] >= 1 and started > 0
    assert snapshot.class_of(x) == snapshot.class_of(y)
    with pytest.raises(RuntimeError, match="snapshot"):
        encoded.session.sizes()
