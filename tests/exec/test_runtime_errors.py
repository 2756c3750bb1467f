"""A run-time failure names the node: its op, its inputs (by the user's names), their shapes
and dtypes and a short dprint; the original error stays chained and catchable by its class."""

import pickle

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.node_errors import NodeError, node_error_class
from same_type_op import SameTypeOp


def test_a_broadcast_mismatch_names_the_node_its_inputs_shapes_and_dtypes():
    x, y = et.dvector("x"), et.fvector("y")
    f = eg.function([x, y], (x + y) * 2.0, rulesets=[], fusion=False)  # fused: test_fusion.py
    with pytest.raises(ValueError) as info:
        f(np.ones(3), np.ones(4, dtype="float32"))
    err, text = info.value, str(info.value)
    assert isinstance(err, NodeError) and err.node.op == et.ELEMWISE_OPS["add"]
    assert "Elemwise{add} failed" in text and "could not be broadcast" in text
    assert "x <TensorType(float64, (None,))>: ndarray of dtype float64 and shape (3,)" in text
    assert "ndarray of dtype float32 and shape (4,)" in text  # y, cast to float64 or not
    assert "[id A]" in text  # the dprint of the node
    assert isinstance(err.__cause__, ValueError) and not isinstance(err.__cause__, NodeError)
    assert "could not be broadcast" in str(err.__cause__)


class Explode(SameTypeOp):
    error = KeyError

    def perform(self, node, inputs, out):
        raise self.error("boom")


@pytest.mark.parametrize("error", [KeyError, ZeroDivisionError, OSError, RuntimeError])
def test_the_error_stays_catchable_as_its_own_class(error):
    x = et.dvector("x")
    op = Explode()
    op.error = error
    f = eg.function([x], op(x * 2.0))
    with pytest.raises(error, match="Explode failed") as info:
        f(np.ones(2))
    assert type(info.value).__name__ == error.__name__ and isinstance(info.value, NodeError)
    assert info.value.__cause__.args == ("boom",)


class Sealed(Exception):
    """An exception class that refuses subclasses."""

    def __init_subclass__(cls, **kwargs):
        raise TypeError("Sealed is final")


def test_an_exception_class_that_cannot_be_subclassed_becomes_a_plain_node_error():
    assert node_error_class(Sealed) is NodeError
    assert node_error_class(ValueError) is node_error_class(ValueError)  # made once
    x = et.dvector("x")
    op = Explode()
    op.error = Sealed
    with pytest.raises(NodeError, match="Explode failed: Sealed: boom") as info:
        eg.function([x], op(x))(np.ones(1))
    assert isinstance(info.value.__cause__, Sealed)


def test_the_error_names_the_failing_node_not_an_earlier_one():
    x = et.dvector("x")
    idx = et.lvector("idx")
    f = eg.function([x, idx], et.exp(x)[idx] + 1.0, rulesets=[])
    with pytest.raises(IndexError) as info:
        f(np.ones(3), np.array([5]))
    assert "AdvancedSubtensor" in str(info.value.node.op)
    assert "idx" in str(info.value)


def test_a_failing_call_does_not_break_the_next_one_and_updates_are_not_applied():
    w = eg.shared(np.zeros(2), name="w")
    x = et.dvector("x")
    f = eg.function([x], (w + x).sum(), updates={w: w + x})
    with pytest.raises(ValueError, match="Elemwise{add}"):   # the node, or its fused step (its sum fused in)
        f(np.ones(3))
    np.testing.assert_array_equal(w.get_value(), [0.0, 0.0])
    assert f(np.ones(2)) == 2.0


def test_the_error_pickles():
    x, y = et.dvector("x"), et.dvector("y")
    f = eg.function([x, y], x * y)
    with pytest.raises(ValueError) as info:
        f(np.ones(2), np.ones(3))
    again = pickle.loads(pickle.dumps(info.value))
    assert isinstance(again, ValueError) and isinstance(again, NodeError)
    assert "Elemwise{mul} failed" in str(again)
