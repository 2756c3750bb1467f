"""Graphs and compiled functions pickle and unpickle to working objects.

A graph round-trips node for node; a Function is stored as the user's graph and
its compile arguments and recompiled on load, so no egglog object is pickled.
"""

import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.terms import FunctionGraph, equal_computations
from op_cases import CASE_IDS, CASES, draw_case


def roundtrip(obj):
    return pickle.loads(pickle.dumps(obj))


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@settings(max_examples=1, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_op_cases_graph_pickles_and_computes_the_same(case, data):
    arrays, extra, xs, out = draw_case(case, data)
    xs2, out2 = roundtrip((xs, out))
    assert equal_computations([out2], [out], xs2, xs)
    assert [x.name for x in xs2] == [x.name for x in xs]
    got = eg.function(xs2, out2, on_unused_input="ignore", rulesets=[])(*arrays)
    expected = np.asarray(case.reference(*arrays, *extra))
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-12)


def test_ops_named_in_the_issue_pickle():
    x = et.dvector("x")
    for out in (x.sum(), x.mean(), et.sqr(x), et.clip(x, 0.0, 1.0), et.softplus(x)):
        op = out.owner.op
        assert roundtrip(op) == op


def test_graph_objects_keep_types_names_constants_and_sharing():
    x = et.dmatrix("x")
    c = et.constant(np.arange(3.0), name="c")
    a = et.exp(x)
    y = (a * c + a).sum(axis=0)
    y.name = "y"
    x2, y2 = roundtrip((x, y))
    assert y2.name == "y" and y2.type == y.type and x2.type == x.type
    assert equal_computations([y2], [y], [x2], [x])
    # the subterm used twice is still one node
    assert len({id(v) for v in eg.terms.ancestors([y2]) if v.owner is not None and str(v.owner.op) == "Elemwise{exp}"}) == 1
    c2 = next(v for v in eg.terms.ancestors([y2]) if isinstance(v, eg.terms.Constant) and v.name == "c")
    np.testing.assert_array_equal(c2.data, np.arange(3.0))
    assert not c2.data.flags.writeable  # constants stay read-only
    np.testing.assert_allclose(eg.function([x2], y2)(np.ones((2, 3))), eg.function([x], y)(np.ones((2, 3))))


def test_a_long_chain_pickles_without_recursion():
    """Graphs of 10^4+ nodes are ordinary; pickling must not recurse once per node."""
    x = et.dvector("x")
    y = x
    for i in range(3_000):  # the old recursion failed at 100
        y = et.tanh(y) if i % 2 else y * 0.5
    x2, y2 = roundtrip((x, y))
    assert len(eg.terms.toposort([y2])) == len(eg.terms.toposort([y])) >= 3_000
    assert equal_computations([y2], [y], [x2], [x])


def test_a_pickling_that_fails_part_way_leaves_nothing_behind():
    x = et.dvector("x")
    y = x
    for i in range(3_000):
        y = et.tanh(y) if i % 2 else y * 0.5
    middle = y
    for _ in range(1_000):
        middle = middle.owner.inputs[0]
    middle.tag["callback"] = lambda: None  # not picklable
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(y)
    del middle.tag["callback"]
    x2, y2 = roundtrip((x, y))  # without recursion: no node is left marked as planned
    assert equal_computations([y2], [y], [x2], [x])


def test_function_graph_pickles():
    x = et.dvector("x")
    fg = FunctionGraph([x], [et.exp(x) + 1, x * 2])
    fg2 = roundtrip(fg)
    fg2.check_integrity()
    assert equal_computations(fg2.outputs, fg.outputs, fg2.inputs, fg.inputs)


def test_shared_variables_keep_their_values_and_identity_within_one_pickle():
    w = eg.shared(np.arange(3.0), name="w")
    x = et.dvector("x")
    y = (x * w).sum()
    w2, y2 = roundtrip((w, y))
    np.testing.assert_array_equal(w2.get_value(), [0.0, 1.0, 2.0])
    assert w2.name == "w" and w2 is not w
    assert w2 in eg.terms.ancestors([y2])  # the graph uses the unpickled shared variable
    w2.set_value(np.ones(3))
    np.testing.assert_array_equal(w.get_value(), [0.0, 1.0, 2.0])  # the original is separate


def test_function_pickles_recompiles_and_updates_the_unpickled_shared_variable():
    w = eg.shared(np.zeros(2), name="w")
    x = et.dvector("x")
    step = eg.function([x], [(w * x).sum(), x * 2], updates={w: w + x}, name="step")
    step(np.ones(2))
    step2, w2 = roundtrip((step, w))
    assert step2.name == "step" and step2.stages is not None
    np.testing.assert_array_equal(w2.get_value(), [1.0, 1.0])
    total, doubled = step2(np.ones(2))
    assert total == 2.0
    np.testing.assert_array_equal(doubled, [2.0, 2.0])
    np.testing.assert_array_equal(w2.get_value(), [2.0, 2.0])   # the update acts on the unpickled w
    np.testing.assert_array_equal(w.get_value(), [1.0, 1.0])    # and not on the original
    # the original, from the same state, gives the same result
    assert step(np.ones(2))[0] == total


def test_function_keeps_its_compile_arguments():
    x, y = et.dvector("x"), et.dvector("y")
    f = eg.function([y], x * 3, givens={x: y + 1}, rulesets=[], allow_input_downcast=True,
                    limits=eg.Limits(iterations=2))
    f2 = roundtrip(f)
    np.testing.assert_array_equal(f2(np.ones(2)), f(np.ones(2)))
    assert f2.stages.report.sizes == f.stages.report.sizes  # same rulesets, same limits
    assert f2(np.ones(2, dtype="float32")).dtype == np.float64
    single = roundtrip(eg.function([x], x + 1))
    assert isinstance(single(np.ones(2)), np.ndarray)


def test_a_function_and_its_graph_pickled_together_share_one_shared_variable():
    w = eg.shared(1.0, name="w")
    x = et.dscalar("x")
    y = x * w
    f = eg.function([x], y, updates={w: w * 2})
    f2, y2 = roundtrip((f, y))
    w2 = next(v for v in eg.terms.ancestors([y2]) if isinstance(v, eg.SharedVariable))
    assert f2(1.0) == 1.0
    assert w2.get_value() == 2.0
    assert y2.eval({next(v for v in eg.terms.graph_inputs([y2]) if v.name == "x"): 1.0}) == 2.0
