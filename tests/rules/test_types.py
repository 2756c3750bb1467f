"""The type rules (rulesets/types.egg) derive the same static types as Python's make_node.

The encoder states the types of inputs and constants only; everything else the
e-graph knows about a term's dtype, ndim and sizes comes from the rules, and
must equal the type eqgraph.tensor computed for it: not only agree with it, but
know every size make_node knows.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from op_cases import CASES, draw_case

import eqgraph.tensor as et
from eqgraph.egraph.encode import encode
from eqgraph.egraph.saturate import saturate
from eqgraph.egraph.snapshot import EGraphData
from eqgraph.tensor import AdvancedSubtensor, TensorType
from eqgraph.terms import FunctionGraph


def derived_types(inputs, outputs):
    """(variable, make_node's (dtype, shape), the rules' (dtype, shape)) for every computed tensor."""
    encoded = encode(FunctionGraph(inputs, outputs, clone=False), facts="leaves")
    saturate(encoded, ["types"])
    data = EGraphData(encoded)
    for var, k in encoded.ids.items():
        if var.owner is not None and isinstance(var.type, TensorType):
            yield var, (var.dtype, var.type.shape), data.static_type(data.class_of_id[k])


def _takes_several_axes(node) -> bool:
    # an n-d boolean mask indexes n axes of x at once; types.egg derives no layout for it
    return isinstance(node.op, AdvancedSubtensor) and any(i.dtype == "bool" and i.ndim > 1 for i in node.inputs[1:])


def check_exact(inputs, outputs):
    for var, expected, (dtype, shape) in derived_types(inputs, outputs):
        if _takes_several_axes(var.owner):
            assert dtype == var.dtype and shape is None, (var.owner.op, dtype, shape)
            continue
        assert (dtype, shape) == expected, f"{var.owner.op}: the rules derive {(dtype, shape)}, make_node {expected}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@settings(max_examples=3, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_type_rules_equal_make_node(case, data):
    _, _, xs, out = draw_case(case, data)
    check_exact(xs, [out])


# Layouts the op table draws rarely: every kind of slice, advanced indexing with its index
# block in the middle or moved first, batched matrix products, reductions of several axes.
F64 = "float64"
LAYOUTS = {  # name: (input dtypes and shapes, outputs built from the inputs)
    "slices": ([(F64, (6, 4))],
               lambda x: [x[1:], x[:-1, ::2], x[::-1, -3:], x[5:, None], x[-9:9:3, 1], x[::-2, 2:0:-1]]),
    "advanced-middle": ([(F64, (2, 3, 4))],
                        lambda x: [x[:, np.array([[0, 1, 2]]), 1:], x[None, :, np.array([1, 0])]]),
    "advanced-first": ([(F64, (2, 3, 4))],
                       lambda x: [x[np.array([0, 1]), :, np.array([2, 3])], x[np.array([0]), 1:, 0]]),
    "advanced-broadcast": ([(F64, (2, 3))],
                           lambda x: [x[np.array([[0], [1]]), np.array([[0, 1, 2]])], x[np.array([[0]]), np.array([[1]])]]),
    "advanced-mask": ([(F64, (3, 4))], lambda x: [x[x[:, 0] > 0], x[1:, x[0] > 0]]),
    "matmul-batched": ([("float32", (5, 1, 3, 4)), (F64, (4, 2))],
                       lambda a, b: [a @ b, b.dimshuffle(1, 0) @ a[0, 0, 0], a[0, 0, 0] @ b, a[0, 0, 0] @ a[1, 0, 1]]),
    "matmul-batch-broadcast": ([(F64, (1, 3, 4)), (F64, (7, 4, 2))], lambda a, b: [a @ b]),
    "reductions": ([("int8", (2, 3, 4))],
                   lambda x: [x.sum(axis=(0, 2)), x.max(axis=1, keepdims=True), et.argmax(x, axis=2),
                              x.mean(axis=(1, 2)), et.all(x > 0, axis=0)]),
    "reshape": ([(F64, (3, 4))], lambda x: [x.reshape((x.shape[-1], -1)), x.reshape((-1,)), x.reshape((2, 3, -1))]),
    "alloc-arange": ([(F64, (4,))], lambda x: [et.alloc(x, 2, 3, x.shape[0]), et.arange(2, 11, 3), et.arange(9, 1, -2)]),
    "mixed-dtypes": ([("float32", (3,)), ("int16", (3,))],
                     lambda x, i: [x + i, i // 2, i / 2, et.clip(i, 0, x), et.switch(i > 0, x, i), et.softmax(i)]),
    "join": ([(F64, (2, 3)), (F64, (2, None))],
             lambda x, y: [et.concatenate([x, y, x], axis=1), et.stack([x, y])]),
}


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_type_rules_equal_make_node_on_layouts(name):
    types, build = LAYOUTS[name]
    inputs = [et.tensor(f"x{i}", dtype, shape) for i, (dtype, shape) in enumerate(types)]
    check_exact(inputs, build(*inputs))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(n=st.integers(0, 7), start=st.none() | st.integers(-9, 9), stop=st.none() | st.integers(-9, 9),
       step=st.none() | st.integers(-4, 4).filter(bool))
def test_static_slice_lengths(n, start, stop, step):
    x = et.tensor("x", F64, (n,))
    check_exact([x], [x[start:stop:step]])
