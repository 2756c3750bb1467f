"""``f.copy``, ``f.maker.fgraph`` and pickling of copies, as in Aesara."""

import pickle

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et


def _accumulator():
    x = et.dvector("x")
    w = eg.shared(np.zeros(3), name="w")
    f = eg.function([x], (x * w).sum(), updates={w: w + x})
    return x, w, f


def test_maker_fgraph_is_the_compiled_graph_with_seed_003_clients():
    v = et.vector()
    f = eg.function([v], (v + 1).sum(), rulesets=[])
    fgraph = f.maker.fgraph
    assert fgraph is f.fgraph
    topo = fgraph.toposort()
    assert fgraph.clients[topo[-1].outputs[0]] == [("output", 0)]
    node, i = fgraph.clients[topo[0].outputs[0]][0]
    assert node.inputs[i] is topo[0].outputs[0]


def test_copy_has_its_own_storage_and_shares_the_shared_variables():
    x, w, f = _accumulator()
    g = f.copy()
    assert g.program is not f.program
    f(np.ones(3))
    assert g(np.ones(3)) == 3.0          # g reads the value f's update stored
    np.testing.assert_array_equal(w.get_value(), 2 * np.ones(3))
    assert f.copy(share_memory=True).program is f.program


def test_copy_with_swap_reads_and_updates_the_other_variable():
    x, w, f = _accumulator()
    other = eg.shared(np.full(3, 2.0), name="other")
    g = f.copy(swap={w: other}, name="swapped")
    assert g(np.ones(3)) == 6.0
    np.testing.assert_array_equal(other.get_value(), np.full(3, 3.0))
    np.testing.assert_array_equal(w.get_value(), np.zeros(3))   # untouched
    assert g.name == "swapped"
    h = f.copy(delete_updates=True)
    h(np.ones(3))
    np.testing.assert_array_equal(w.get_value(), np.zeros(3))


def test_copy_refuses_bad_swaps_naming_them():
    x, w, f = _accumulator()
    with pytest.raises(ValueError, match="unused is not a shared variable of"):
        f.copy(swap={eg.shared(np.zeros(3), name="unused"): w})
    with pytest.raises(TypeError, match="same type"):
        f.copy(swap={w: eg.shared(np.zeros((2, 2)), name="m")})
    with pytest.raises(TypeError, match="must be a shared variable"):
        f.copy(swap={w: np.zeros(3)})


def test_a_swapped_copy_pickles_and_keeps_its_swap():
    x, w, f = _accumulator()
    other = eg.shared(np.full(3, 2.0), name="other")
    g = f.copy(swap={w: other}).copy(delete_updates=True)
    loaded = pickle.loads(pickle.dumps(g))
    assert loaded(np.ones(3)) == 6.0
    assert loaded(np.ones(3)) == 6.0     # updates deleted in the copy of the copy
