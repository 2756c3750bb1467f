"""The e-graph snapshot (``EGraphData``) is immutable and self-contained: it outlives the
egglog session and the encoded graph it was read from, and extraction, inspection and
``class_of`` work from it alone."""

import gc
import weakref

import numpy as np
import pytest

import eqgraph.tensor as et
from eqgraph import egraph
from eqgraph.extract.extraction import extract
from eqgraph.extract.view import EGraphView
from eqgraph.terms import FunctionGraph

RULES = ["types", "fold", "algebra"]


def _snapshot_alone(outputs, inputs):
    """A snapshot, with a weak reference to the encoded graph it came from (now dropped)."""
    with egraph.session(RULES) as s:
        encoded = s.encode(FunctionGraph(inputs, outputs, clone=False))
        report = s.saturate(egraph.Limits(iterations=4))
        snapshot = s.snapshot()
    dropped = weakref.ref(encoded)
    del encoded, s
    gc.collect()
    return snapshot, report, dropped


def test_the_snapshot_outlives_its_session_and_encoded_graph():
    x = et.dvector("x")
    c = np.arange(12.0)  # an Array constant, kept on the Python side
    y = (x * 1.0 + c) * 2.0
    snapshot, report, dropped = _snapshot_alone([y], [x])
    assert dropped() is None, "the snapshot must not keep the EncodedGraph alive"
    assert not any(isinstance(v, egraph.EncodedGraph) for v in vars(snapshot).values())
    assert snapshot.class_of(x) != snapshot.class_of(y)

    extraction = extract(snapshot)   # the constants and ops come from the snapshot itself
    (out,) = extraction.fgraph.outputs
    value = out.eval({extraction.fgraph.inputs[0]: np.ones(12)})
    np.testing.assert_array_equal(value, (np.ones(12) + c) * 2.0)

    view = EGraphView(extraction, report)   # inspection: members, costs, the rules behind them
    members = view.eclass(y).members
    assert any(m.chosen for m in members)
    assert "digraph" in view.to_dot(y)


def test_the_snapshot_is_read_only():
    x = et.dvector("x")
    snapshot, _, _ = _snapshot_alone([et.exp(x) * 1.0], [x])
    node = next(iter(snapshot.nodes.values()))
    with pytest.raises(AttributeError, match="read-only"):
        snapshot.nodes = {}
    with pytest.raises(TypeError):
        snapshot.nodes["new"] = node
    with pytest.raises(TypeError):
        snapshot.ids[x] = 0
    with pytest.raises(Exception):  # a frozen dataclass
        node.op = "Log"
    assert isinstance(node.children, tuple) and isinstance(node.args, tuple)
    # its schema finds every constructor and declares none
    before = dict(snapshot.constructors)
    with pytest.raises(KeyError, match="no constructor"):
        snapshot.schema.constructor(et.Alloc(), 99)
    assert dict(snapshot.constructors) == before


def test_the_snapshot_holds_what_egglog_serializes():
    """The snapshot reads egglog's tables directly; egglog's own JSON serialization, read
    independently here, must show the same e-nodes (constructor, e-class, children) and
    dtypes. The graph has a join (a vector of inputs), an integer vector, an Array constant
    and a slice, so every kind of constructor input is read."""
    import json

    x, m = et.dvector("x"), et.dmatrix("m")
    y = et.concatenate([x, x * 2.0, x[1:], np.arange(3.0)]) + m.reshape((2, -1))[0] * m.shape[0]
    with egraph.session(RULES) as s:
        s.encode(FunctionGraph([x, m], [y], clone=False))
        s.saturate(egraph.Limits(iterations=4))
        snapshot = s.snapshot()
        raw = s.encoded.session.serialize()["nodes"]
    # a dtype row's value is the set node of its output e-class, whose children are strings
    value_of = {n["eclass"]: n for n in raw.values() if n["op"] != "dtype"}
    expected, dtypes = set(), {}
    for node in raw.values():
        if node["op"] == "dtype":
            strings = value_of[node["eclass"]]["children"]
            dtypes[raw[node["children"][0]]["eclass"]] = frozenset(json.loads(raw[c]["op"]) for c in strings)
        if not node["eclass"].startswith("T-") or node["op"] == "N":
            continue
        children = []
        for c in node["children"]:
            sort = raw[c]["eclass"].split("-")[0]
            if sort == "T":
                children.append(raw[c]["eclass"])
            elif sort == "TVec":
                children.extend(raw[g]["eclass"] for g in raw[c]["children"])
        expected.add((node["op"], node["eclass"], tuple(children)))
    got = {(n.op, n.eclass, n.children) for n in snapshot.nodes.values()}
    assert got == expected
    assert {"Join", "Ints", "Array", "Subtensor_1"} <= {op for op, _, _ in got}
    assert dtypes == dict(snapshot.dtype)
