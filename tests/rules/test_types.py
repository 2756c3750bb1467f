"""The type rules (rulesets/types.egg) derive the same static types as Python's make_node.

The encoder states the types of inputs and constants only; everything else the
e-graph knows about a term's dtype, ndim and sizes comes from the rules, and
must agree with the type eqgraph.tensor computed for it.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eqgraph.rules import encode, saturate
from eqgraph.rules.egraph import EGraphData
from eqgraph.tensor import TensorType
from eqgraph.terms import FunctionGraph
from op_cases import CASES, split_inputs, symbolic_inputs

DERIVED: dict = {}  # case -> number of variables whose dtype the rules derived


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@settings(max_examples=3, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_type_rules_agree_with_make_node(case, data):
    arrays, extra = split_inputs(case, data.draw(case.inputs, label="inputs"))
    xs = symbolic_inputs(arrays, static=data.draw(st.booleans(), label="static"))
    out = case.build(*xs, *extra)
    encoded = encode(FunctionGraph(xs, [out], clone=False), facts="leaves")
    saturate(encoded, ["types"])
    data_ = EGraphData(encoded)
    for var, k in encoded.ids.items():
        if var.owner is None or not isinstance(var.type, TensorType):
            continue
        dtype, shape = data_.static_type(data_.class_of_id[k])
        if dtype is not None:
            assert dtype == var.dtype, f"{var.owner.op}: rules say {dtype}, make_node {var.dtype}"
            DERIVED[case.name] = DERIVED.get(case.name, 0) + 1
        if shape is not None:
            assert len(shape) == var.ndim, f"{var.owner.op}: rules say ndim {len(shape)}, make_node {var.ndim}"
            for derived, known in zip(shape, var.type.shape):
                assert derived is None or known is None or derived == known, (var.owner.op, shape, var.type.shape)


def test_type_rules_cover_every_op():
    covered = {name for name, n in DERIVED.items() if n}
    uncovered = sorted(set(c.name for c in CASES) - covered)
    assert uncovered == ["specify_shape"], uncovered  # specify_shape with no new info adds no node
