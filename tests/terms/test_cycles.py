"""A graph edited by hand into a cycle is refused with an error naming a node on it.

Before, every topological walk (compiling, grad, printing) looped, growing
its stack until memory ran out.
"""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.terms import FunctionGraph, GraphCycleError, clone_replace, toposort


def _self_loop():
    """``y = x + 1`` whose first input is edited to ``y`` itself."""
    x = et.dvector("x")
    y = x + 1
    y.owner.inputs[0] = y
    return x, y


def _long_cycle():
    """``c = exp(b), b = tanh(a), a = x * 2`` with ``a``'s input edited to ``c``."""
    x = et.dvector("x")
    a = x * 2
    a.name = "a"
    b = et.tanh(a)
    c = et.exp(b)
    a.owner.inputs[0] = c
    return x, et.sum(c)


@pytest.mark.parametrize("make", [_self_loop, _long_cycle])
def test_toposort_names_a_node_on_the_cycle(make):
    x, y = make()
    with pytest.raises(GraphCycleError, match=r"cycle.*Elemwise\{(add|mul|tanh|exp)\}"):
        toposort([y])


@pytest.mark.parametrize("make", [_self_loop, _long_cycle])
@pytest.mark.parametrize("walk", [
    pytest.param(lambda x, y: eg.function([x], y), id="function"),
    pytest.param(lambda x, y: eg.grad(y.sum(), x), id="grad"),
    pytest.param(lambda x, y: eg.dprint(y, file="str"), id="dprint"),
    pytest.param(lambda x, y: FunctionGraph([x], [y]), id="FunctionGraph"),
    pytest.param(lambda x, y: clone_replace(y, {x: et.dvector()}), id="clone_replace"),
    pytest.param(lambda x, y: eg.function([], y, givens={x: np.ones(2)}), id="givens"),
])
def test_every_walk_refuses_a_cycle(make, walk):
    x, y = make()
    with pytest.raises(GraphCycleError, match="cycle"):
        walk(x, y)


def test_the_message_lists_the_cycle_in_order():
    x, y = _long_cycle()
    with pytest.raises(GraphCycleError) as info:
        toposort([y])
    message = str(info.value)
    assert "Elemwise{mul}" in message and "Elemwise{tanh}" in message and "Elemwise{exp}" in message
    assert "owner.inputs" in message  # says how such a graph usually comes about


def test_shared_subgraphs_are_not_cycles():
    """A diamond (one node used twice) is fine: only a path back to a node is a cycle."""
    x = et.dvector("x")
    a = et.exp(x)
    y = (a + a) * a
    assert len(toposort([y, a])) == 3
    np.testing.assert_allclose(eg.function([x], y)(np.zeros(2)), [2.0, 2.0])


def test_fgraph_replace_refuses_to_create_a_cycle():
    x = et.dvector("x")
    y = et.exp(x)
    fg = FunctionGraph([x], [y], clone=False)
    with pytest.raises(GraphCycleError, match="depends on"):
        fg.replace(x, x + 1)  # x + 1 would become its own input
    fg.check_integrity()
