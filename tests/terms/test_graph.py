"""Graph walks, cloning, FunctionGraph and debugprint."""

import io
import re

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.terms import (Apply, Constant, FunctionGraph, MissingInputError, Op, ancestors, applys_between,
                           clone, clone_replace, debugprint, equal_computations, graph_inputs, toposort)


def chain(n):
    x = et.dvector("x")
    y = x
    for _ in range(n):
        y = et.exp(y)
    return x, y


def test_walks_do_not_recurse_on_a_100k_chain():
    x, y = chain(100_000)
    assert len(toposort([y])) == 100_000
    assert graph_inputs([y]) == [x]
    assert len(ancestors([y])) == 100_001
    assert len(applys_between([x], [y])) == 100_000
    ins, outs = clone([x], [y])
    assert ins[0] is not x and equal_computations(outs, [y], ins, [x])
    fg = FunctionGraph([x], [y])
    assert len(fg.apply_nodes) == 100_000
    assert debugprint(y, file="str", depth=3).count("\n") == 4
    assert debugprint(y, file="str").count("\n") == 100_001


def test_toposort_orders_inputs_before_users():
    x, y = et.dvector("x"), et.dvector("y")
    a = x + y
    b = et.exp(a) * a
    order = toposort([b])
    position = {node: i for i, node in enumerate(order)}
    for node in order:
        for inp in node.inputs:
            if inp.owner is not None:
                assert position[inp.owner] < position[node]


def test_equal_computations():
    x, y = et.dvector("x"), et.dvector("y")
    assert equal_computations([x + 1.0], [x + 1.0])          # equal constants by value
    assert not equal_computations([x + 1.0], [x + 2.0])
    assert not equal_computations([x + 1.0], [y + 1.0])
    assert equal_computations([x + 1.0], [y + 1.0], [x], [y])
    assert not equal_computations([x * y], [x + y])
    assert not equal_computations([x], [x, y])


def test_clone_replace():
    x, y, z = et.dvector("x"), et.dvector("y"), et.dvector("z")
    out = et.exp(x) + y
    new = clone_replace(out, {x: z})
    assert equal_computations([new], [et.exp(z) + y])
    assert new.owner.inputs[1] is y and out.owner.inputs[0].owner.inputs[0] is x  # original untouched


def test_apply_clone_and_default_output():
    x = et.dvector("x")
    node = et.exp(x).owner
    c = node.clone()
    assert c.op == node.op and c.inputs == node.inputs and c.outputs[0] is not node.outputs[0]
    y = et.dvector("y")
    c2 = node.clone_with_new_inputs([y])
    assert c2.inputs[0] is y and c2.out.owner is c2 and node.default_output() is node.out
    narrowed = node.clone_with_new_inputs([et.TensorType("float64", (3,))()])
    assert narrowed.inputs[0].type.shape == (3,)
    with pytest.raises(TypeError):
        node.clone_with_new_inputs([et.fmatrix()])
    with pytest.raises(ValueError):
        node.clone_with_new_inputs([x, y])


class TwoOutputs(Op):
    __props__ = ("k",)
    default_output = 1

    def __init__(self, k):
        self.k = k

    def make_node(self, x):
        x = et.as_tensor_variable(x)
        return Apply(self, [x], [x.type(), x.type()])

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] * self.k
        out[1][0] = inputs[0] + self.k


def test_op_props_call_and_default_output():
    op = TwoOutputs(3)
    assert op == TwoOutputs(3) and op != TwoOutputs(4) and hash(op) == hash(TwoOutputs(3))
    assert str(op) == "TwoOutputs{3}"
    x = et.dvector("x")
    out = op(x, name="r")
    assert out is out.owner.outputs[1] and out.name == "r"
    both = op(x, return_list=True)
    f = eg.function([x], both)
    np.testing.assert_array_equal(f(np.ones(2))[0], 3 * np.ones(2))
    assert op.connection_pattern(out.owner) == [[True, True]]
    assert op.do_constant_folding(None, out.owner) is True and op.flops([], []) is None
    with pytest.raises(NotImplementedError):
        op.infer_shape(None, out.owner, [(2,)])


def test_function_graph_clients_and_replace():
    x = et.dvector("x")
    e = et.exp(x)
    out = e + e
    fg = FunctionGraph([x], [out], clone=False)
    assert fg.clients[e] == [(out.owner, 0), (out.owner, 1)]
    assert fg.clients[out] == [("output", 0)]
    fg.replace(e, et.sin(x))
    fg.check_integrity()
    assert e not in fg.variables and e.owner not in fg.apply_nodes
    assert str(out.owner.inputs[0].owner.op) == "Elemwise{sin}"
    with pytest.raises(TypeError, match="Cannot replace"):
        fg.replace(out, et.dmatrix())
    e2 = et.exp(x)
    fg2 = FunctionGraph([x], [e2 * 2.0], clone=False)
    fg2.replace(e2, et.specify_shape(et.exp(x), (3,)))  # narrowing the type is allowed
    fg2.check_integrity()
    assert fg2.outputs[0].owner.inputs[0].type.shape == (3,)


def test_function_graph_input_errors():
    x, y = et.dvector("x"), et.dvector("y")
    with pytest.raises(TypeError, match="Constant"):
        FunctionGraph([et.constant(1.0)], [x])
    with pytest.raises(MissingInputError, match="y"):
        FunctionGraph([x], [x + y])
    fg = FunctionGraph([x], [x + 1.0])  # constants need not be inputs
    assert fg.inputs[0] is not x  # cloned by default
    assert any(isinstance(v, Constant) for v in fg.variables)


def test_debugprint_format():
    x = et.dvector("x")
    e = et.exp(x)
    text = debugprint((e + e).sum(), file="str", print_type=True)
    lines = text.splitlines()
    assert lines[0].startswith("Sum{axis=(0,)} [id A] <TensorType(float64, ())> ''")
    assert lines[1].startswith(" |Elemwise{add} [id B]")
    assert lines[2].startswith("   |Elemwise{exp} [id C]")
    assert lines[3].startswith("     |x [id D] <TensorType(float64, (None,))>")
    assert lines[4].startswith("   |Elemwise{exp} [id C]")  # printed once, then only its label
    assert len(lines) == 5
    f = eg.function([x], (x + 1.0).sum())
    buf = io.StringIO()
    eg.dprint(f, file=buf)
    first = buf.getvalue().splitlines()[0]
    # with Numba the sum is fused into the elementwise node (exec/reducing.py), which shows it
    assert re.match(r"(Sum\{axis=\(0,\)\}|Composite\{Sum\[axis=\(0,\)\]\(add\(i0, i1\)\)\}) \[id A\] ''", first)
    assert re.search(r"''   \d+$", first)
