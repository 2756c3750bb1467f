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
from eqgraph.egraph.schema import generated_block, type_rules
from eqgraph.egraph.snapshot import EGraphData
from eqgraph.rules.ruleset import RULESETS_DIR
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


# Variadic ops at every arity the e-graph declares: joins of 4 to 6 tensors, with sizes
# static and unknown along and across the axis, alloc with no dims (a scalar) and with many,
# vectors of many scalars (a shape given to reshape), indexing with 4 to 6 symbolic bounds
def _joins(x, y, z):
    return [et.concatenate([x, y, z, x], axis=1), et.concatenate([x, x, z, x, x], axis=1),
            et.concatenate([x, y, x, z, x, y], axis=1), et.concatenate([z, x, z, x], axis=0),
            et.concatenate([x, x, x, x, x], axis=0), et.stack([x, y, z, x, y, z])]


VARIADIC_LAYOUTS = {
    "join-4-to-6": ([(F64, (2, 3)), (F64, (2, None)), (F64, (None, 3))], _joins),
    "join-mixed-dtypes": ([("float32", (2, 3)), ("int16", (2, 1)), (F64, (2, 2))],
                          lambda x, i, y: [et.concatenate([x, i, i, y], axis=1),
                                           et.concatenate([i, i, i, i, i], axis=1)]),
    "alloc-no-dims": ([(F64, ()), ("int8", ())], lambda v, i: [et.alloc(v), et.alloc(i), et.alloc(v + 1.0)]),
    "alloc-many-dims": ([(F64, ()), ("int64", ())],
                        lambda v, n: [et.alloc(v, 2, 3, 4, 5), et.alloc(v, n, 1, 2, n, 3, 4),
                                      et.alloc(n, 7, n, 1, 2, 3)]),
    "make-vector-many": ([(F64, (24,))], lambda x: [x.reshape((2, 3, 2, 2)), x.reshape((1, 2, 3, 2, 2)),
                                                    x.reshape((2, -1, 2, 1, 1, 1))]),
    "indexing-many-bounds": ([(F64, (5, 6, 7)), ("int64", ())],
                             lambda x, i: [x[i:i + 1, 1:i, i], x[i:, :i, i:i + 2], x[i, i, i],
                                           et.inc_subtensor(x[i:i + 1, 1:i, 0:i], 1.0),
                                           et.set_subtensor(x[i:, :i, i:i + 2], x[:1, :1, :2])]),
}


@pytest.mark.parametrize("name", list(VARIADIC_LAYOUTS))
def test_type_rules_equal_make_node_on_variadic_ops(name):
    types, build = VARIADIC_LAYOUTS[name]
    inputs = [et.tensor(f"x{i}", dtype, shape) for i, (dtype, shape) in enumerate(types)]
    check_exact(inputs, build(*inputs))


def test_generated_type_rules_are_current():
    """types.egg's per-op and per-arity rules are schema.type_rules(), generated from the op
    registry: an op added to the registry (or a changed arity) shows here until regenerated."""
    text = (RULESETS_DIR / "types.egg").read_text()
    start, end = generated_block(text)
    assert text[start:end] == type_rules(), (
        "rulesets/types.egg is out of date with the op registry; regenerate its block with "
        "python -c 'from eqgraph.egraph.schema import write_type_rules; write_type_rules()'")

