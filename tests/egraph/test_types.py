"""The type rules (rulesets/types.egg) derive the same static types as Python's make_node.

The encoder states the types of inputs and constants only; everything else the
e-graph knows about a term's dtype, ndim and sizes comes from the rules, and
must equal the type eqgraph.tensor computed for it: not only agree with it, but
know every size make_node knows.
"""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from op_cases import CASES, draw_case

import eqgraph.tensor as et
from eqgraph.egraph.encode import encode
from eqgraph.egraph.saturate import saturate
from eqgraph.egraph.schema import MAX_INPUTS, Schema, camel
from eqgraph.egraph.snapshot import EGraphData
from eqgraph.rules import ruleset as rs
from eqgraph.tensor import AdvancedSubtensor, TensorType, linalg
from eqgraph.tensor.grad_blocker import GradBlocker
from eqgraph.terms import FunctionGraph
from eqgraph.terms.graph import toposort


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


#: rows whose output dtype the generated type rules leave unknown (no rule fires on an unknown
#: dtype: sound, only less rewriting)
UNTYPED: dict[str, str] = {}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@settings(max_examples=3, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_type_rules_equal_make_node(case, data):
    if case.name in UNTYPED:
        pytest.skip(UNTYPED[case.name])
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


def _every_arity(x, i, m):
    """Each variadic op at each arity the e-graph declares (1 to MAX_INPUTS inputs)."""
    outs = [et.Join(0)(*[m] * n) for n in range(1, MAX_INPUTS + 1)]
    outs += [et.alloc(i, *[i] * (n - 1)) for n in range(1, MAX_INPUTS + 1)]             # no dims too
    outs += [et.make_vector(*[i] * n, dtype="int64") for n in range(1, MAX_INPUTS + 1)]
    bounds = [i, i + 1, 2 * i, i + 3, 3 * i, i + 2, i - 1]                              # symbolic
    outs += [x[1:3], et.inc_subtensor(x[1:3], 1.0), x[i:i + 2:i, 1:]]
    for k in range(1, 8):                              # k symbolic indices: Subtensor_{k+1}, IncSubtensor_{k+2}
        index = tuple(bounds[:k - 1]) + (slice(bounds[k - 1], None),)
        outs += [x[tuple(bounds[:k])], x[index]]
        if k < 7:
            outs += [et.inc_subtensor(x[index], 1.0), et.set_subtensor(x[tuple(bounds[:k])], 2.0)]
    rows = [np.array([0, 1]), np.array([[1], [0]]), np.array([2, 0]), np.array([0, 0]), np.array([1, 1]),
            np.array([0, 1]), np.array([1, 0])]
    for n in range(1, 4):                                                             # 2 to 4 inputs
        outs += [x[tuple(rows[:n])]]
    for n in range(1, 7):                                                             # 3 to 8 inputs
        outs += [et.inc_subtensor(x[tuple(rows[:n])], 1.0)]
    return outs


VARIADIC_LAYOUTS = {
    **VARIADIC_LAYOUTS,
    "every-arity": ([(F64, (3, 4, 5, 6, 7, 8, 9)), ("int64", ()), (F64, (2, None))], _every_arity),
    "checks-every-arity": ([(F64, (2, None)), ("bool", ()), ("float32", (3,))],   # typed as the value
                           lambda v, c, w: [et.Assert("m")(v, *[c] * n) for n in range(1, MAX_INPUTS)]
                           + [et.CheckAndRaise(ValueError, "w")(w, w > 0)]),
}

# The other ops rulesets/types.egg types: linear algebra, sorting, scans, diagonals, shapes
OTHER_OPS = {
    "linalg": ([(F64, (3, 3)), ("float32", (3, 2)), (F64, (None, None))],
               lambda a, b, c: [linalg.inv(a), linalg.det(a), linalg.cholesky(c), linalg.solve(a, b),
                                linalg.solve(c, a), linalg.inv(c.astype("float32"))]),
    "linalg-stacks": ([("float32", (2, None, 3)), ("int64", (None,) * 4), (F64, (3,)), (F64, (5, 1, 3, 2))],
                      lambda a, u, v, m: [linalg.inv(a), linalg.cholesky(u), linalg.det(a), linalg.det(u),
                                          linalg.solve(a, v), linalg.solve(u, v), linalg.solve(a, m),
                                          linalg.solve(u, m), linalg.solve(a[0], m), linalg.solve(a, m[0, 0]),
                                          a @ v, v @ m]),
    "sort-cumsum-diagonal": ([("int16", (4, 5)), ("float32", (None, 3, 2))],
                             lambda x, y: [et.sort(x, axis=0), et.sort(y, axis=-1), et.cumsum(x, axis=1),
                                           et.cumprod(y, axis=0), et.diagonal(x), et.diagonal(x, -2),
                                           et.diagonal(x, 9), et.diagonal(y, 1, 1, 2), et.diagonal(y, 0, 2, 0),
                                           et.diagonal(y, -1, 0, 1)]),
    "shape-helpers": ([(F64, (4, None)), ("float32", (1, 5))],
                      lambda x, g: [et.specify_shape(x, (4, 7)), et.specify_shape(x, (None, 3)),
                                    et.sum_to_shape(x * g.sum(), g), GradBlocker("zero")(x),
                                    GradBlocker("disconnected")(g)]),
    "decompositions-convolutions-einsum": (
        [(F64, (2, 5, 3)), ("float32", (None, 4, 4)), ("int16", (6,)), ("int64", (None, 2)), ("uint8", (1, 3))],
        lambda x, q, v, k, r: [et.einsum("ab,cb->ac", r, r), et.einsum("ab,b,cb->bca", r, x[0, 0], r),  # sizes 1
                            *linalg.svd(x), linalg.svd(q, compute_uv=False), *linalg.qr(x, "complete"), linalg.pinv(x),
                            *linalg.eigh(q), *linalg.slogdet(q), et.conv1d(v, k, "valid"), et.conv2d(x, k, "same"),
                            et.einsum("bij,bkj->bik", x, x), et.einsum("i,ni,ii->n", v[:4], k.dimshuffle(1, 0), q[0]),
                            et.einsum("i,->i", v, x[0, 0, 0])]),  # a 0-d operand (its term is "")
    "norms-of-stacks": ([("float32", (2, None, 4)), ("int16", (3, 2, 2))],
                        lambda x, i: [linalg.norm(t, o, axis=a, keepdims=k) for t in (x, i)
                                      for o, a in [(None, (-2, -1)), ("nuc", (-2, -1)), (-2, (2, 0)), (np.inf, (-2, -1)),
                                                   (1, (-2, -1)), (3, -1), (0, 0), (-np.inf, 1)] for k in (False, True)]),
}


# Decompositions, convolutions and einsum on drawn shapes: batch axes (stacks) of 0 to 2, every
# size static or unknown, every prop (SVD's full_matrices and compute_uv, QR's modes, conv modes),
# random subscripts: the types the rules derive (from LinalgOp.core_axes, Convolve, Einsum's
# sources) equal make_node's
DRAWN_DTYPES = ("float64", "float32", "int64", "int16", "uint8", "bool")


def _maybe_unknown(data, sizes, label):
    known = data.draw(st.lists(st.booleans(), min_size=len(sizes), max_size=len(sizes)), label=label)
    return tuple(s if k else None for s, k in zip(sizes, known))


def _matrix_stack(data, name, square):
    batch = data.draw(st.lists(st.integers(1, 3), max_size=2), label=f"{name} batch")
    m = data.draw(st.integers(1, 4), label=f"{name} rows")
    n = m if square else data.draw(st.integers(1, 4), label=f"{name} columns")
    dtype = data.draw(st.sampled_from(DRAWN_DTYPES[:-1]), label=f"{name} dtype")
    return et.tensor(name, dtype, _maybe_unknown(data, (*batch, m, n), f"{name} static"))


def _decompositions(data):
    x, q = _matrix_stack(data, "x", square=False), _matrix_stack(data, "q", square=True)
    outs = [linalg.pinv(x), linalg.qr(x, "r"), *linalg.qr(x), *linalg.qr(x, "complete"), linalg.det(q), linalg.inv(q),
            linalg.cholesky(q), linalg.cholesky(q, lower=False), *linalg.slogdet(q), *linalg.eigh(q),
            *linalg.eigh(q, "U"), linalg.svd(x, compute_uv=False), linalg.svd(x, False, False)]
    return [x, q], outs + [*linalg.svd(x), *linalg.svd(x, full_matrices=False)]


def _convolutions(data):
    core = data.draw(st.sampled_from((1, 2)), label="core axes")
    batch = data.draw(st.lists(st.integers(1, 3), max_size=2), label="batch")
    lengths = data.draw(st.lists(st.integers(1, 5), min_size=core, max_size=core), label="lengths")
    kernel = data.draw(st.lists(st.integers(1, 5), min_size=core, max_size=core), label="kernel lengths")
    kernel_batch = [1 if data.draw(st.booleans(), label="broadcast") else b
                    for b in batch[data.draw(st.integers(0, len(batch)), label="kernel batch from"):]]
    dtypes = data.draw(st.lists(st.sampled_from(DRAWN_DTYPES[:-1]), min_size=2, max_size=2), label="dtypes")
    x = et.tensor("x", dtypes[0], _maybe_unknown(data, (*batch, *lengths), "x static"))
    k = et.tensor("k", dtypes[1], _maybe_unknown(data, (*kernel_batch, *kernel), "kernel static"))
    fits = all(b <= a for a, b in zip(lengths, kernel))  # 'valid' needs the kernel inside the input
    return [x, k], [et.Convolve(core, mode)(x, k) for mode in ("full", "same", "valid") if fits or mode != "valid"]


def _einsums(data):
    sizes = dict(zip("abcd", data.draw(st.lists(st.integers(1, 4), min_size=4, max_size=4), label="sizes")))
    terms = data.draw(st.lists(st.text("abcd", max_size=3), min_size=1, max_size=3), label="terms")
    used = sorted(set("".join(terms)))
    output = "".join(data.draw(st.permutations(used), label="output order")[:data.draw(
        st.integers(0, len(used)), label="output ndim")])
    operands = []
    for i, term in enumerate(terms):
        # a size of 1 broadcasts against the letter's size, as in np.einsum
        shape = [1 if data.draw(st.integers(0, 4), label="broadcast") == 0 else sizes[c] for c in term]
        dtype = data.draw(st.sampled_from(DRAWN_DTYPES), label="dtype")
        operands.append(et.tensor(f"x{i}", dtype, _maybe_unknown(data, shape, "static")))
    return operands, [et.einsum(f"{','.join(terms)}->{output}", *operands)]


DRAWN = {"decompositions": _decompositions, "convolutions": _convolutions, "einsums": _einsums}


@pytest.mark.parametrize("name", list(DRAWN))
@settings(max_examples=4, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_type_rules_equal_make_node_on_drawn_shapes(name, data):
    check_exact(*DRAWN[name](data))


@pytest.mark.slow
@pytest.mark.parametrize("name", list(DRAWN))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_type_rules_equal_make_node_on_many_drawn_shapes(name, data):
    check_exact(*DRAWN[name](data))


def saturated(inputs, outputs, rulesets):
    """The e-graph of ``outputs`` after ``rulesets``, with only the inputs' types stated."""
    encoded = encode(FunctionGraph(inputs, outputs, clone=False), facts="leaves")
    saturate(encoded, rulesets)
    data = EGraphData(encoded)
    return data, [data.class_of_id[encoded.ids[o]] for o in outputs]


def test_rules_guarded_on_types_fire_for_decompositions():
    # the sizes and ndims the rules derive are what guards read: a size the analysis knows is
    # a constant (shapes.egg static-size), inv(A) @ U is a solve once U's ndim and dtype are known
    x, a = et.tensor("x", F64, (2, 5, 3)), et.tensor("a", F64, (None, 5, 5))
    outs = [linalg.svd(x)[1].shape[-1], linalg.inv(a) @ linalg.svd(x)[0]]
    data, (size, product) = saturated([x, a], outs, ["types", "shapes", "linalg"])
    assert ("Scalar", (3.0, "int64", 0)) in {(data.nodes[i].op, data.nodes[i].args) for i in data.classes[size]}
    assert "Solve" in {data.nodes[i].op for i in data.classes[product]}


@pytest.mark.parametrize("name", list(VARIADIC_LAYOUTS) + list(OTHER_OPS))
def test_type_rules_equal_make_node_on_variadic_and_other_ops(name):
    types, build = {**VARIADIC_LAYOUTS, **OTHER_OPS}[name]
    inputs = [et.tensor(f"x{i}", dtype, shape) for i, (dtype, shape) in enumerate(types)]
    check_exact(inputs, build(*inputs))


def _constructors_tested() -> set[str]:
    schema, seen = Schema(), set()

    def note(outputs):
        seen.update(schema.constructor(n.op, len(n.inputs)).name for n in toposort(outputs))

    for case in CASES:
        @settings(max_examples=1, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
        @given(data=st.data())
        def one(data):
            note([draw_case(case, data)[3]])
        one()
    for types, build in {**LAYOUTS, **VARIADIC_LAYOUTS, **OTHER_OPS}.values():
        note(build(*[et.tensor(f"x{i}", dtype, shape) for i, (dtype, shape) in enumerate(types)]))
    return seen


#: constructors declared for every arity that no graph can hold (make_node refuses them)
UNBUILDABLE = {"AdvancedIncSubtensor_2": "an advanced increment has an index array: 3 inputs or more"}


def test_every_op_types_egg_types_is_checked_against_make_node():
    """Every constructor rulesets/types.egg names (every op, at every arity it declares) is
    built by a case above, so its derived type is compared with make_node's."""
    named = set(re.findall(r"\(([A-Z][A-Za-z0-9_]*)[ )]", rs.load("types").program))
    typed = named & set(Schema().by_name)
    # eig's results are complex whatever its input: tests/tensor/test_complex.py checks their dtypes
    missing = typed - _constructors_tested() - set(UNBUILDABLE) - {"Eig"}
    x = et.dmatrix("x")
    for name in UNBUILDABLE:  # make_node refuses them: no graph has them
        with pytest.raises(TypeError, match="index input"):
            Schema().by_name[name].op_class(("a",), False).make_node(x, x[0])
    assert not missing, f"types.egg types these constructors, but no case here checks them: {sorted(missing)}"


def test_the_loaded_types_ruleset_types_every_registered_op():
    """types.egg's per-op rules are written from the op registry when it is loaded: each
    elementwise op and reduction hands its constructor to the general rules."""
    rules = {r.name: r.text for r in rs.load("types")}
    for name, op in et.ELEMWISE_OPS.items():
        text = rules.get(f"types/elemwise-{name.replace('_', '-')}", "")
        assert f"(elemwise{op.nin} e \"{camel(name)}\"" in text, name
    for name in et.REDUCTIONS:
        assert f'(reduction e "{camel(name)}"' in rules.get(f"types/reduction-{name.replace('_', '-')}", ""), name


@pytest.mark.parametrize(("n_dtype", "x_dtype"), [("int64", "float32"), ("int8", "float64"), ("int32", "int8"),
                                                  ("uint16", "int64"), ("int16", "int16")])
def test_polygammas_dtype_follows_x_alone(n_dtype, x_dtype):
    # the order n is an integer that promotes with nothing: float32 x gives float32 whatever n is
    n, x = et.scalar("n", dtype=n_dtype), et.vector("x", dtype=x_dtype)
    out = et.polygamma(n, x)
    [(_, expected, derived)] = [t for t in derived_types([n, x], [out]) if t[0] is out]
    assert derived == expected == (et.special_functions.float_dtype(x_dtype), (None,))
