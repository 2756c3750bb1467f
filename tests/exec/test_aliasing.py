"""Memory the caller can see: outputs, inputs, shared values and constants never share memory
unless the user asked (``borrow=True``), and every op declares the views it returns."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.terms import toposort
from op_cases import CASE_IDS, CASES, draw_case
from same_type_op import SameTypeOp


# -- every op declares the memory its outputs share with its inputs ---------------------------
def _undeclared_views(node, inputs, outputs) -> list[str]:
    """Outputs that share memory with an input the op's view_map/destroy_map does not name
    (sharing through another input that *is* declared counts as declared)."""
    problems = []
    for o, out in enumerate(outputs):
        declared = [*node.op.view_map.get(o, ()), *node.op.destroy_map.get(o, ())]
        for i, value in enumerate(inputs):
            if i in declared or not np.shares_memory(out, value):
                continue
            if not any(np.shares_memory(value, inputs[j]) for j in declared):
                problems.append(f"{node.op} output {o} is a view of input {i} ({node.inputs[i]}) "
                                f"but declares view_map={node.op.view_map} destroy_map={node.op.destroy_map}")
    return problems


def _run_node_by_node(out, xs, arrays):
    """Each node's perform on concrete values; yields (node, input values, output values)."""
    values = dict(zip(xs, arrays))
    for node in toposort([out], xs):
        ins = [values[v] if v in values else v.data for v in node.inputs]
        cells = [[None] for _ in node.outputs]
        node.op.perform(node, ins, cells)
        values.update(zip(node.outputs, (c[0] for c in cells)))
        yield node, ins, [c[0] for c in cells]


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_op_declares_the_views_it_returns(case, data):
    arrays, extra, xs, out = draw_case(case, data)
    problems = [p for node, ins, outs in _run_node_by_node(out, xs, arrays)
                for p in _undeclared_views(node, ins, outs)]
    assert not problems, "\n".join(problems)


def test_the_audit_catches_an_undeclared_view():
    class Identity(SameTypeOp):  # returns its input but declares no view_map
        def perform(self, node, inputs, out):
            out[0][0] = inputs[0]

    x = et.dvector("x")
    node = Identity()(x).owner
    data = np.ones(3)
    assert _undeclared_views(node, [data], [data])
    node.op.view_map = {0: [0]}
    assert not _undeclared_views(node, [data], [data])


# -- what a compiled function hands back ----------------------------------------------------------
def _independent(a, b):
    return not np.shares_memory(a, b)


def test_reshape_of_a_shared_variable_or_an_input_is_not_a_view_of_it():
    w = eg.shared(np.arange(4.0), name="w")
    out = eg.function([], w.reshape((2, 2)))()
    assert _independent(out, w.get_value(borrow=True))
    out[0, 0] = 99.0
    assert w.get_value()[0] == 0.0
    assert _independent(eg.function([], w)(), w.get_value(borrow=True))
    m = et.dmatrix("m")
    data = np.ones((2, 2))
    assert _independent(eg.function([m], m.reshape(-1))(data), data)


@pytest.mark.parametrize("build", [
    lambda x: x, lambda x: x.T, lambda x: x[1:], lambda x: x.reshape((3, 2)),
    lambda x: x.dimshuffle("x", 0, 1), lambda x: et.specify_shape(x, (2, 3)), lambda x: x.flatten(),
], ids=["identity", "transpose", "slice", "reshape", "dimshuffle", "specify_shape", "flatten"])
def test_outputs_never_alias_the_callers_arrays(build):
    x = et.dmatrix("x")
    data = np.arange(6.0).reshape(2, 3)
    for options in ({"rulesets": []}, {}):  # without rules and with the default ones
        f = eg.function([x], build(x), **options)
        assert _independent(f(data), data)


def test_outputs_never_alias_each_other_or_constants():
    x = et.dvector("x")
    y = x * 2.0
    a, b, c = eg.function([x], [y, y.T, y[::1]])(np.ones(3))
    assert _independent(a, b) and _independent(a, c) and _independent(b, c)
    c5 = et.constant(np.arange(3.0))
    k1, k2 = eg.function([], [c5, c5.reshape((3, 1))])()
    assert _independent(k1, k2) and _independent(k1, c5.data)
    k1[0] = 7.0
    assert eg.function([], c5 * 1)()[0] == 0.0


def test_a_fresh_result_is_returned_without_a_copy():
    # the copies happen only where memory would be shared: none for x * 2 or for a view of it
    x = et.dvector("x")
    assert eg.function([x], x * 2.0)._copy_outputs == []
    assert eg.function([x], (x * 2.0)[1:])._copy_outputs == []
    assert eg.function([x], [x * 2.0, x + 1.0])._copy_outputs == []
    assert eg.function([x], x[1:])._copy_outputs == [0]


def test_an_update_never_stores_the_callers_array_or_another_shared_value():
    w = eg.shared(np.zeros(3), name="w")
    v = eg.shared(np.ones(3), name="v")
    x = et.dvector("x")
    data = np.full(3, 2.0)
    eg.function([x], [], updates={w: x})(data)
    assert _independent(w.get_value(borrow=True), data)
    data[0] = -1.0
    assert w.get_value()[0] == 2.0
    eg.function([], [], updates={w: v.T})()
    assert _independent(w.get_value(borrow=True), v.get_value(borrow=True))
    const = et.constant(np.arange(3.0))
    eg.function([], [], updates={w: const})()
    assert _independent(w.get_value(borrow=True), const.data)


def test_swapping_two_shared_values_needs_no_copy():
    a, b = eg.shared(np.zeros(2), "a"), eg.shared(np.ones(2), "b")
    old_a, old_b = a.get_value(borrow=True), b.get_value(borrow=True)
    f = eg.function([], [], updates={a: b, b: a})
    f()
    assert a.get_value(borrow=True) is old_b and b.get_value(borrow=True) is old_a


def test_an_output_that_is_also_an_update_is_a_copy():
    w = eg.shared(np.zeros(3), name="w")
    x = et.dvector("x")
    new = w + x
    f = eg.function([x], new, updates={w: new})
    out = f(np.ones(3))
    assert _independent(out, w.get_value(borrow=True))
    out[0] = 50.0
    np.testing.assert_array_equal(w.get_value(), np.ones(3))
    # an update that views its own old value keeps that memory: the output is copied
    r = eg.shared(np.arange(3.0), name="r")
    out = eg.function([], r, updates={r: r[::-1]})()
    assert _independent(out, r.get_value(borrow=True))
    np.testing.assert_array_equal(out, [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(r.get_value(), [2.0, 1.0, 0.0])
    # the old value of an updated shared variable is nobody's once the call is over
    g = eg.function([], w.T, updates={w: w * 2.0})
    old = w.get_value(borrow=True)
    out = g()
    assert g._copy_outputs == [] and np.shares_memory(out, old)
    assert _independent(out, w.get_value(borrow=True))


def test_a_returned_array_is_not_overwritten_by_the_next_call():
    class DoubleIntoOutput(SameTypeOp):
        """Writes into the array already in its output cell when it can (allowed by the
        Op contract unless the linker marks the output no_recycling)."""

        def perform(self, node, inputs, out):
            (x,) = inputs
            if out[0][0] is not None and out[0][0].shape == x.shape:
                np.multiply(x, 2, out=out[0][0])
            else:
                out[0][0] = x * 2

    x = et.dvector("x")
    for allow_gc in (True, False):
        f = eg.function([x], DoubleIntoOutput()(x), allow_gc=allow_gc)
        first = f(np.ones(2))
        second = f(np.full(2, 5.0))
        np.testing.assert_array_equal(first, [2.0, 2.0])
        np.testing.assert_array_equal(second, [10.0, 10.0])
        view = eg.function([x], DoubleIntoOutput()(x).T, allow_gc=allow_gc)
        first = view(np.ones(2))
        view(np.full(2, 5.0))
        np.testing.assert_array_equal(first, [2.0, 2.0])


def test_borrow_is_what_the_user_asked_for():
    data = np.zeros(3)
    w = eg.shared(data, borrow=True)
    assert w.get_value(borrow=True) is data
    assert _independent(eg.shared(data).get_value(borrow=True), data)
    assert _independent(w.get_value(), data)
    other = np.ones(3)
    w.set_value(other, borrow=True)
    assert w.get_value(borrow=True) is other
    w.set_value(other)
    assert _independent(w.get_value(borrow=True), other)
    # set_value of a value that needed converting copies once (the conversion is the copy)
    w.set_value([1, 2, 3])
    assert w.get_value().dtype == np.float64


def test_a_cast_to_the_inputs_own_dtype_is_a_copy_not_a_view():
    from eqgraph.tensor.elemwise import Cast

    x = et.dvector("x")
    node = Cast("float64")(x).owner
    data = np.ones(2)
    cells = [[None]]
    node.op.perform(node, [data], cells)
    assert not _undeclared_views(node, [data], [cells[0][0]])
