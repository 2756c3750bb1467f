"""Debug mode holds each op's perform to its destroy_map and view_map, as PyTensor's DebugMode
does: eqgraph overwrites and shares arrays on the strength of those declarations."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.terms import Apply, Op


class TwoInputs(Op):
    """An op of two vectors whose perform is given as a function, and its declarations."""

    def __init__(self, perform, n_outputs=1, view_map=None, destroy_map=None):
        self._perform, self.n_outputs = perform, n_outputs
        self.view_map, self.destroy_map = view_map or {}, destroy_map or {}

    def make_node(self, a, b):
        a, b = et.as_tensor_variable(a), et.as_tensor_variable(b)
        return Apply(self, [a, b], [a.type() for _ in range(self.n_outputs)])

    def perform(self, node, inputs, output_storage):
        for cell, value in zip(output_storage, self._perform(*inputs)):
            cell[0] = value


def adds_into_a(a, b):
    a += b
    return [a]


def run(op, *values, outputs=None):
    x, y = et.dvector("x"), et.dvector("y")
    made = op(x, y)
    return eg.function([x, y], made if outputs is None else outputs(made), mode="DEBUG_MODE")(*values)


def test_an_input_changed_in_place_must_be_in_destroy_map():
    with pytest.raises(eg.BadDestroyMap, match="changed its input 0 .* destroy_map {} does not name it"):
        run(TwoInputs(adds_into_a), np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    declared = TwoInputs(adds_into_a, destroy_map={0: [0]})
    np.testing.assert_array_equal(run(declared, np.array([1.0, 2.0]), np.array([3.0, 4.0])), [4.0, 6.0])


@pytest.mark.parametrize("view", [lambda a, b: [b], lambda a, b: [b[1:3]]], ids=["itself", "slice"])
def test_an_output_viewing_an_input_must_be_in_view_map(view):
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])
    with pytest.raises(eg.BadViewMap, match="output 0 .* shares memory with its input 1"):
        run(TwoInputs(view), a, b)
    got = run(TwoInputs(view, view_map={0: [1]}), a, b)
    np.testing.assert_array_equal(got, view(a, b)[0])


def test_outputs_sharing_memory_may_not_both_be_read_later():
    def halves(a, b):
        r = a * 1
        return [r[:-1], r[1:]]

    a, b = np.array([1.0, 2.0, 3.0, 4.0]), np.zeros(4)
    with pytest.raises(eg.BadViewMap, match="outputs 0 and 1 .* share memory"):
        run(TwoInputs(halves, 2), a, b, outputs=lambda outs: outs[0] * 2 + outs[1] * 2)
    # the function's outputs themselves, or one output read later: nothing can overwrite the other
    first, second = run(TwoInputs(halves, 2), a, b)
    np.testing.assert_array_equal(first, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(second, [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(run(TwoInputs(halves, 2), a, b, outputs=lambda outs: outs[0] * 2), [2.0, 4.0, 6.0])


def test_outputs_viewing_a_declared_input_may_share_memory():
    def views(a, b):
        return [a, a[1:]]

    first, second = run(TwoInputs(views, 2, view_map={0: [0], 1: [0]}), np.arange(4.0), np.zeros(4))
    np.testing.assert_array_equal(first, np.arange(4.0))
    np.testing.assert_array_equal(second, np.arange(1.0, 4.0))


def test_eqgraphs_own_ops_honour_their_declarations():
    x = et.dmatrix("x")
    y = (x.T.reshape((6,))[1:4] + x.flatten()[:3]).sum() + et.sort(x, axis=0).sum()
    assert eg.function([x], y, mode="DEBUG_MODE")(np.arange(6.0).reshape(2, 3)) == pytest.approx(
        np.arange(6.0).reshape(2, 3).T.reshape(6)[1:4].sum() + 3.0 + 15.0)


def test_debug_mode_leaves_the_callers_arrays_alone():
    x, y = et.dvector("x"), et.dvector("y")
    f = eg.function([x, y], TwoInputs(adds_into_a, destroy_map={0: [0]})(x, y), mode="DEBUG_MODE")
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    np.testing.assert_array_equal(f(a, b), [4.0, 6.0])
    np.testing.assert_array_equal(a, [1.0, 2.0])
