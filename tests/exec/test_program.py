"""The generated straight-line program (eqgraph/exec/numpy/program.py): the same values as the
thunk loop, bit for bit; printable source; errors that name the node; memory freed and
never aliased; the thunk loop kept where per-node hooks are needed."""

import numpy as np
import pytest
from same_type_op import SameTypeOp

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec import source
from eqgraph.exec.link import link
from eqgraph.exec.node_errors import NodeError
from fuzz_graphs import make_graph


def thunk_loop(f, *args):
    """What ``f``'s graph gives when run by the thunk loop instead."""
    program = link(f.fgraph, straight=False)
    for cell, value in zip(program.input_cells, args):
        cell[0] = value
    program.run()
    return [cell[0] for cell in program.output_cells]


def assert_bitwise_equal(got, want):
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("fusion", [True, False])
def test_the_program_gives_the_thunk_loops_values_on_random_graphs(fusion):
    for seed in range(20):
        graph = make_graph(seed)
        syms, outs = [s for s, _ in graph.inputs], [t.sym for t in graph.outputs]
        f = eg.function(syms, outs, on_unused_input="ignore", fusion=fusion, rulesets=[])
        assert f.program.source is not None
        values = [v for _, v in graph.inputs]
        with np.errstate(all="ignore"):
            got = f(*[v.copy() for v in values])
            want = thunk_loop(f, *[v.copy() for v in values])
        try:
            assert_bitwise_equal(got, want)
        except AssertionError as err:
            raise AssertionError(f"seed {seed}:\n{graph.describe()}\n{f.program.source}\n{err}") from err


class Double(SameTypeOp):
    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] * 2.0


def test_the_source_calls_each_kind_of_node_as_its_thunk_would():
    x, m = et.dvector("x"), et.dmatrix("m")
    y = (et.exp(x) * 2.0 + 1.0).sum() + Double()(m @ x).sum() + m.T[0, 0]
    f = eg.function([x, m], [y, x.astype("float32")], rulesets=[])
    source = f.program.source
    assert source.startswith("def program(v0, v1):")  # the arguments, x and m
    assert "= g" in source                   # a fused node: its kernel
    assert "np_matmul(" in source and "np_sum_reduce(" in source and ".T" in source  # NumPy calls
    assert "(n" in source and "c" in source  # a node with perform: perform and its output cells
    assert "array(" in source                 # the cast: one copy
    assert "del " in source                   # intermediates freed at their last reader
    m_value = np.arange(9.0).reshape(3, 3)
    out, cast = f(np.ones(3), m_value)
    assert out == pytest.approx(3 * (2 * np.e + 1) + 2 * m_value.sum()) and cast.dtype == np.float32


def test_numpy_calls_give_what_perform_gives_on_views_scalars_and_reductions():
    x3, v, s = et.dtensor3("x3"), et.lvector("v"), et.dscalar("s")
    outs = [x3.dimshuffle(2, "x", 0, 1), et.specify_shape(x3[:, :1, :], (None, 1, None)).dimshuffle(0, 2), s.dimshuffle("x", "x"),
            x3.sum(axis=(0, 2)), x3.max(axis=1, keepdims=True), v.sum(), v.prod(), x3.mean(), x3.mean(axis=(0, 2), keepdims=True), x3.min(axis=2), (v > 0).any(),
            x3.shape, x3[0] @ x3[1].T, x3[0, 0] @ x3[1, 1], x3.reshape((4, -1)), v.reshape(v.shape),
            et.sum_to_shape(x3 * 2, x3), et.sum_to_shape(x3 * 3, x3[:, :1, :]),  # as it is, and summed
            et.sum_to_shape(et.cast(x3, "int8") * 2, x3[:, :1, :])]  # NumPy sums int8 to int64: cast back
    f = eg.function([x3, v, s], outs, rulesets=[], fusion=False)
    source = f.program.source
    assert "np_add_reduce(" in source and "np_max_reduce(" in source and "[None, None]" in source
    assert ".reshape(" in source and "summed_to(" in source
    values = (np.arange(24.0).reshape(2, 3, 4) - 5, np.array([3, -2, 7]), np.float64(1.5))
    got = f(*[np.asarray(value) for value in values])
    assert_bitwise_equal(got, thunk_loop(f, *[np.asarray(value) for value in values]))
    assert all(type(g) is np.ndarray for g in got)


def test_softmax_and_results_of_known_dtype_skip_perform_and_the_dtype_check():
    m, i = et.dmatrix("m"), et.imatrix("i")
    outs = [et.softmax(m), et.log_softmax(m, axis=0), et.softmax(i),   # an int input: perform casts
            m @ m, m.sum(axis=1), i.sum(axis=1), (m > 0).max(axis=0), m.mean(axis=1), m[0] @ m[1]]
    f = eg.function([m, i], outs, rulesets=[], fusion=False)
    source = f.program.source
    assert source.count("softmax_numpy(") == 2
    matmul_line = next(line for line in source.splitlines() if "np_matmul(" in line and ".shape" not in line)
    after = source.splitlines()[source.splitlines().index(matmul_line) + 1]
    assert "asarray" not in after   # float64 @ float64 with axes: already an ndarray of float64
    values = (np.arange(16.0).reshape(4, 4) - 5, np.arange(12, dtype=np.int32).reshape(3, 4) - 3)
    with np.errstate(all="ignore"):
        got = f(*values)
        assert_bitwise_equal(got, thunk_loop(f, *values))
    assert all(type(g) is np.ndarray for g in got)
    np.testing.assert_allclose(got[0].sum(axis=1), 1.0)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_count_of_a_mean_is_one_line_with_the_thunk_loops_value(dtype):
    x = et.vector("x", dtype=dtype)
    cost = et.tanh(x).mean()
    outs = [cost, eg.grad(cost, x), x.mean(axis=0, keepdims=True)]
    f = eg.function([x], outs)
    source = f.program.source
    assert "Shape" not in source and "np_asarray(" not in source   # no shape vector, no pick, no cast
    assert ".shape[0]], dtype=" in source
    value = np.linspace(-2, 2, 7).astype(dtype)
    got = f(value)
    assert_bitwise_equal(got, thunk_loop(f, value))
    np.testing.assert_allclose(got[1], (1 - np.tanh(value) ** 2) / 7, rtol=1e-6)
    # a count read by something else as well, or handed out: the nodes run as they are
    n = et.cast(x.shape[0], dtype)
    g = eg.function([x], [x.sum() / n, n], rulesets=[])
    assert_bitwise_equal(g(value), thunk_loop(g, value))


def test_profiling_lazy_graphs_and_the_thunk_loop_option_keep_per_node_hooks():
    x = et.dvector("x")
    assert eg.function([x], x * 2.0, profile=True).program.source is None
    assert eg.function([x], eg.ifelse(x.sum() > 0, x * 2.0, x - 1.0)).program.source is None
    assert link(eg.function([x], x * 2.0).fgraph, straight=False).source is None


class OwnThunk(SameTypeOp):
    """An op with a make_thunk of its own (it doubles its input)."""

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
        x_cell, out_cell = storage_map[node.inputs[0]], storage_map[node.outputs[0]]

        def thunk():
            if x_cell[0].shape[0] > 5:
                raise ValueError("too long")
            out_cell[0] = x_cell[0] * 2.0
            compute_map[node.outputs[0]][0] = 1

        return thunk


class Explode(SameTypeOp):
    def perform(self, node, inputs, out):
        raise RuntimeError("boom")


def test_an_op_with_its_own_thunk_runs_through_it_and_frees_what_it_read():
    x = et.dvector("x")
    f = eg.function([x], OwnThunk()(et.exp(x)) + 1.0)
    assert "t" in f.program.source and "()" in f.program.source
    np.testing.assert_array_equal(f(np.zeros(2)), [3.0, 3.0])
    exp_vars = [v for v in f.fgraph.variables if v.owner is not None and v.owner.op != OwnThunk()
                and any(c.op == OwnThunk() for c, _ in f.fgraph.clients[v] if c != "output")]
    assert exp_vars and all(f.program.storage_map[v][0] is None for v in exp_vars)  # emptied after the thunk
    with pytest.raises(ValueError, match="OwnThunk failed: ValueError: too long") as info:
        f(np.zeros(6))
    assert "shape (6,)" in str(info.value) and info.value.node.op == OwnThunk()


def test_errors_name_the_node_and_its_input_shapes_for_each_kind_of_node():
    x, y = et.dvector("x"), et.dvector("y")
    fused = eg.function([x, y], et.exp(x) * y + 1.0, rulesets=[])  # one Composite
    with pytest.raises(ValueError, match="Composite") as info:
        fused(np.ones(2), np.ones(3))
    assert "step" in str(info.value.__cause__) and "shape (3,)" in str(info.value)
    perform = eg.function([x], Explode()(x * 2.0))
    with pytest.raises(RuntimeError, match="Explode failed: RuntimeError: boom") as info:
        perform(np.ones(4))
    assert isinstance(info.value, NodeError) and "shape (4,)" in str(info.value)
    # the failing node is the one named, also after others ran; the next call works
    g = eg.function([x, y], (et.exp(x).sum() * 2.0 + x[:3]) @ y, rulesets=[])
    with pytest.raises(ValueError) as info:
        g(np.ones(3), np.ones(4))
    assert "matmul" in str(info.value.node.op).lower() or "Dot" in str(info.value.node.op)
    assert g(np.ones(3), np.ones(3)) == pytest.approx(3 * (2 * 3 * np.e + 1))


def test_allow_gc_false_keeps_output_cells_for_reuse_and_results_are_fresh_arrays():
    x = et.dvector("x")
    f = eg.function([x], [et.exp(x) * 2.0, (x + 1.0).sum()], allow_gc=False)
    a, _ = f(np.zeros(2))
    b, _ = f(np.zeros(2))
    assert a is not b and not np.shares_memory(a, b)
    np.testing.assert_array_equal(a, [2.0, 2.0])


def test_elementwise_results_reuse_dead_intermediates_and_never_protected_memory():
    x = et.dvector("x")
    w = eg.shared(np.ones(3), name="w")
    c = et.constant(np.array([1.0, 2.0, 3.0]))
    e = et.exp(x)
    outs = [(e * 2.0 + 1.0) * w, et.log(x + w) * 3.0 + c, e.T * 1.0, x * c]
    f = eg.function([x], outs, fusion=False, rulesets=[])
    source = f.program.source
    assert "out=" in source
    for line in source.splitlines():  # never into an input, a shared value or a constant
        if "out=" in line:
            buffer = line.split("out=")[1].split(")")[0]
            assert buffer.startswith("v") and buffer not in ("v0", "v1")
    data = np.arange(3.0)
    first = f(data)
    np.testing.assert_array_equal(data, np.arange(3.0))
    np.testing.assert_array_equal(w.get_value(), np.ones(3))
    np.testing.assert_array_equal(c.data, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(first[2], np.exp(data))  # e is read again after being scaled: not reused
    assert_bitwise_equal(first, thunk_loop(f, data.copy(), w.get_value()))
    second = f(data)
    for a, b in zip(first, second):
        assert not np.shares_memory(a, b)  # every call hands out fresh arrays
    assert_bitwise_equal(first, second)
    # a broadcasting operand of another shape: the result is not written into the smaller array
    m, v = et.dmatrix("m"), et.dvector("v")
    g = eg.function([m, v], et.exp(v) + m, fusion=False, rulesets=[])
    np.testing.assert_array_equal(g(np.zeros((2, 3)), np.zeros(3)), np.ones((2, 3)))


def test_a_call_passes_arguments_and_results_without_cells_and_copies_what_would_alias():
    """Without shared values, ``Function`` calls the program with its arguments and takes its
    results (``program.call``); the cell-based ``run`` gives the same.  An output that is an
    argument, a constant or another output still comes back as memory of its own."""
    x, y = et.dvector("x"), et.dvector("y")
    c = et.constant(np.array([1.0, 2.0]))
    s = et.exp(x) * y + 1.0
    f = eg.function([x, y], [s, x, c, s, (x * y).sum()], rulesets=[])
    assert f.program.call is not None and f._direct
    a, b = np.array([0.5, -1.0]), np.array([2.0, 3.0])
    got = f(a, b)
    assert_bitwise_equal(got, thunk_loop(f, a, b))
    assert not any(np.shares_memory(r, v) for r in got for v in (a, b, c.data))
    assert not np.shares_memory(got[0], got[3])
    for cell, value in zip(f.program.input_cells, (a, b)):
        cell[0] = value
    f.program.run()
    assert_bitwise_equal([cell[0] for cell in f.program.output_cells], got)
    with pytest.raises(TypeError, match="Bad argument #1"):
        f(a, "text")
    g = eg.function([x, y], [s, x], rulesets=[], trust_input=True)
    first, same = g(a, b)
    assert_bitwise_equal([first], [got[0]]) and same is not a and np.array_equal(same, a)


def test_one_element_constants_are_passed_as_0d_arrays_only_where_the_shape_stays_the_same():
    x = et.dvector("x")
    c, cc = et.constant(np.array([2.0])), et.constant(np.array([[3.0]]))
    i = et.constant(np.array([2], dtype=np.int8))
    outs = [x + c, x * cc, x - i, et.maximum(x, c)]
    f = eg.function([x], outs, rulesets=[], fusion=False)
    assert f.program.source.count("_0d)") == 4    # x * cc: make_node gave x the constant's rank first
    for n in (0, 1, 5):
        value = np.linspace(-1.0, 1.0, n)
        got = f(value)
        assert_bitwise_equal(got, thunk_loop(f, value))
        assert got[1].shape == (1, n)


def test_generated_source_is_compiled_once_per_text_and_each_function_keeps_its_own_values():
    x = et.dvector("x")
    f, g = eg.function([x], et.exp(x) * 2.0 + 1.0), eg.function([x], et.exp(x) * 3.0 + 1.0)
    before = source._code.cache_info()
    h = eg.function([x], et.exp(x) * 2.0 + 1.0)  # the same program and kernel texts as f
    after = source._code.cache_info()
    assert after.misses == before.misses and after.hits > before.hits
    v = np.array([0.0, 1.0])
    np.testing.assert_allclose(f(v), np.exp(v) * 2 + 1)
    np.testing.assert_allclose(g(v), np.exp(v) * 3 + 1)  # one code object, its own constants
    np.testing.assert_allclose(h(v), f(v))
