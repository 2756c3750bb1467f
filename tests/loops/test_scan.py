"""eqgraph.scan forward: numeric against NumPy loops (cumulative sum, polynomial, fibonacci
taps, sequence taps, n_steps alone, outputs not fed back, shared updates, go_backwards, an
RNN), how the outer e-graph sees a scan, loop-invariant hoisting, and the errors."""

import pickle

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.loops import Scan
from eqgraph.terms import Apply, Op

RNG = np.random.default_rng(0)


def scan_nodes(f):
    return [node for node in f.stages.optimized.toposort() if isinstance(node.op, Scan)]


def test_cumulative_sum():
    x = et.dvector("x")
    out, updates = eg.scan(lambda xt, acc: acc + xt, sequences=x, outputs_info=et.constant(0.0))
    assert updates == {}
    value = RNG.standard_normal(7)
    np.testing.assert_allclose(eg.function([x], out)(value), np.cumsum(value))


def test_polynomial_evaluation():
    # Aesara's tutorial: the sum of coefficients[i] * x ** i, with no state fed back
    coefficients, x = et.dvector("coefficients"), et.dscalar("x")
    components, _ = eg.scan(lambda c, power, x: c * x ** power, sequences=[coefficients, et.arange(1000)],
                            outputs_info=None, non_sequences=x)
    f = eg.function([coefficients, x], components.sum())
    c = np.array([1.0, 0.0, 2.0, -3.0])
    np.testing.assert_allclose(f(c, 3.0), sum(ci * 3.0 ** i for i, ci in enumerate(c)))


def test_fibonacci_with_taps():
    n = et.lscalar("n")
    fib, _ = eg.scan(lambda a, b: a + b, n_steps=n,
                     outputs_info={"initial": np.array([0, 1], dtype="int64"), "taps": [-2, -1]})
    expected, (a, b) = [], (0, 1)
    for _ in range(12):
        a, b = b, a + b
        expected.append(b)
    result = eg.function([n], fib)(12)
    assert result.dtype == np.int64
    np.testing.assert_array_equal(result, expected)


def test_taps_are_passed_in_the_order_given():
    # out[t] = 10 * x[t-3] + x[t-1]; the initial value's first entry is tap -3
    init = et.dvector("init")
    out, _ = eg.scan(lambda older, last: 10 * older + last, outputs_info={"initial": init, "taps": [-3, -1]},
                     n_steps=4)
    history = [1.0, 2.0, 3.0]
    for _ in range(4):
        history.append(10 * history[-3] + history[-1])
    np.testing.assert_allclose(eg.function([init], out)(np.array([1.0, 2.0, 3.0, 99.0])), history[3:])


def test_a_dict_with_tap_minus_one_holds_the_state_itself():
    h0 = et.dvector("h0")
    out, _ = eg.scan(lambda h: h * 2, outputs_info={"initial": h0, "taps": [-1]}, n_steps=2)
    np.testing.assert_allclose(eg.function([h0], out)(np.array([1.0, 3.0])), [[2.0, 6.0], [4.0, 12.0]])


def test_sequence_taps():
    x = et.dvector("x")
    out, _ = eg.scan(lambda before, now, after: before + 2 * now + 3 * after,
                     sequences={"input": x, "taps": [-1, 0, 1]})
    v = RNG.standard_normal(6)
    np.testing.assert_allclose(eg.function([x], out)(v), v[:-2] + 2 * v[1:-1] + 3 * v[2:])


def test_n_steps_alone_and_symbolic():
    n = et.lscalar("n")
    powers, _ = eg.scan(lambda a: a * 2, outputs_info=et.constant(1.0), n_steps=n)
    f = eg.function([n], powers)
    np.testing.assert_allclose(f(5), 2.0 ** np.arange(1, 6))
    assert f(0).shape == (0,)


def test_n_steps_shorter_than_the_sequence():
    x = et.dvector("x")
    out, _ = eg.scan(lambda xt: xt * 3, sequences=x, n_steps=2)
    np.testing.assert_allclose(eg.function([x], out)(np.arange(5.0)), [0.0, 3.0])


def test_outputs_not_fed_back_beside_a_state():
    x = et.dvector("x")
    (total, doubled), _ = eg.scan(lambda xt, acc: (acc + xt, xt * 2), sequences=x, outputs_info=[0.0, None])
    v = RNG.standard_normal(5)
    t, d = eg.function([x], [total, doubled])(v)
    np.testing.assert_allclose(t, np.cumsum(v))
    np.testing.assert_allclose(d, v * 2)


def test_shared_variable_updated_in_the_loop():
    counter = eg.shared(np.float64(1.0), name="counter")
    x = et.dvector("x")
    seen, updates = eg.scan(lambda xt: (counter * 10, {counter: counter + xt}), sequences=x)
    assert list(updates) == [counter]
    f = eg.function([x], seen, updates=updates)
    v = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(f(v), [10.0, 20.0, 40.0])     # each step reads the previous step's value
    assert counter.get_value() == 7.0
    np.testing.assert_allclose(f(v), [70.0, 80.0, 100.0])    # the next call starts where it stopped
    assert counter.get_value() == 13.0


def test_go_backwards():
    x = et.dvector("x")
    out, _ = eg.scan(lambda xt, acc: acc + xt, sequences=x, outputs_info=0.0, go_backwards=True)
    v = RNG.standard_normal(6)
    np.testing.assert_allclose(eg.function([x], out)(v), np.cumsum(v[::-1]))


def test_go_backwards_keeps_the_meaning_of_sequence_taps():
    # as in PyTensor (checked there: [42, 31, 20]): each tap's slice is reversed, so tap +1 is
    # still the entry after tap 0 in x as given; reversing x first gave [24, 13, 2]
    x = et.dvector("x")
    out, _ = eg.scan(lambda before, after: before + 10 * after, sequences={"input": x, "taps": [-1, 1]},
                     go_backwards=True)
    np.testing.assert_allclose(eg.function([x], out)(np.arange(5.0)), [42.0, 31.0, 20.0])


def numpy_rnn(x, h0, w, u, b):
    h, out = h0, []
    for xt in x:
        h = np.tanh(xt @ w + h @ u + b)
        out.append(h)
    return np.array(out)


def rnn(x, h0, w, u, b):
    hs, _ = eg.scan(lambda xt, h, w, u, b: et.tanh(xt @ w + h @ u + b), sequences=x, outputs_info=h0,
                    non_sequences=[w, u, b])
    return hs


def test_rnn_forward():
    x, w, u = et.dmatrix("x"), et.dmatrix("w"), et.dmatrix("u")
    h0, b = et.dvector("h0"), et.dvector("b")
    values = [RNG.standard_normal(s) for s in [(6, 3), (4,), (3, 4), (4, 4), (4,)]]
    result = eg.function([x, h0, w, u, b], rnn(x, h0, w, u, b))(*values)
    np.testing.assert_allclose(result, numpy_rnn(*values))


def test_nested_scan():
    x = et.dmatrix("x")
    rows, _ = eg.scan(lambda row: eg.scan(lambda v, acc: acc + v, sequences=row, outputs_info=0.0)[0][-1],
                      sequences=x)
    v = RNG.standard_normal((3, 4))
    np.testing.assert_allclose(eg.function([x], rows)(v), v.sum(axis=1))


# -- how the outer e-graph sees a scan ----------------------------------------------------------
def test_identical_scans_merge_and_different_ones_do_not():
    x = et.dvector("x")
    a, _ = eg.scan(lambda xt, acc: acc + xt, sequences=x, outputs_info=0.0)
    b, _ = eg.scan(lambda xt, acc: acc + xt, sequences=x, outputs_info=0.0)
    c, _ = eg.scan(lambda xt, acc: acc * xt, sequences=x, outputs_info=0.0)
    assert a.owner.op == b.owner.op and a.owner.op != c.owner.op
    assert len(scan_nodes(eg.function([x], a + b))) == 1
    assert len(scan_nodes(eg.function([x], a + c))) == 2


class AddArray(Op):
    """A user op with an array prop: NumPy's repr elides the middle of long arrays."""

    __props__ = ("values",)

    def __init__(self, values):
        self.values = values

    def __eq__(self, other):
        return type(other) is AddArray and np.array_equal(self.values, other.values)

    def __hash__(self):
        return hash(self.values.tobytes())

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] + self.values


def test_ops_whose_props_print_alike_do_not_merge():
    a, b = np.zeros(2000), np.zeros(2000)
    b[1000] = 1.0
    assert repr(a) == repr(b)
    x = et.dmatrix("x")
    first, _ = eg.scan(lambda row: AddArray(a)(row), sequences=x)
    second, _ = eg.scan(lambda row: AddArray(b)(row), sequences=x)
    assert first.owner.op != second.owner.op
    result = eg.function([x], first - second)(np.zeros((1, 2000)))
    assert result[0, 1000] == -1.0


def test_the_step_is_optimized_by_the_e_graph():
    x = et.dvector("x")
    out, _ = eg.scan(lambda xt: et.log(1 + xt), sequences=x)
    step = out.owner.op.step()
    assert [str(node.op) for node in step.stages.optimized.toposort()] == ["Elemwise{log1p}"]
    np.testing.assert_allclose(eg.function([x], out)(np.array([1e-20, 1.0])), [1e-20, np.log(2.0)])


def test_loop_invariant_work_is_pulled_out_of_the_loop():
    x, w = et.dvector("x"), et.dvector("w")
    out, _ = eg.scan(lambda xt, acc: acc + xt * et.exp(w).sum(), sequences=x, outputs_info=0.0)
    op = out.owner.op
    inner_ops = {str(node.op) for node in eg.function(op.inner_inputs, op.inner_outputs,
                                                       on_unused_input="ignore").stages.optimized.toposort()}
    assert not any("exp" in name.lower() for name in inner_ops), inner_ops
    hoisted = out.owner.inputs[-1]
    assert hoisted.owner is not None and "sum" in str(hoisted.owner.op).lower()
    xv, wv = RNG.standard_normal(4), RNG.standard_normal(3)
    np.testing.assert_allclose(eg.function([x, w], out)(xv, wv), np.cumsum(xv * np.exp(wv).sum()))


def test_expressions_of_constants_stay_inside_the_loop():
    # x ** 2 broadcasts the constant 2 (a DimShuffle of a constant): hoisted, it became an input
    # whose gradient (log of the base) was computed, warning on negative values
    x = et.dvector("x")
    out, _ = eg.scan(lambda xt: xt ** 2 + et.constant(np.ones(1)) * 3, sequences=x)
    assert out.owner.op.layout.n_invariant == 0


# -- memory, pickling -----------------------------------------------------------------------------
def test_outputs_do_not_share_memory_with_inputs():
    s = eg.shared(np.ones(3), name="s")
    h0 = et.dvector("h0")
    out, updates = eg.scan(lambda h: (h, {s: s * 2}), outputs_info=h0, n_steps=et.lscalar("n"))
    n = out.owner.inputs[0]
    f = eg.function([h0, n], [out, updates[s]])
    start = np.arange(3.0)
    for steps in (0, 2):
        result, final = f(start, steps)
        assert not np.shares_memory(result, start) and not np.shares_memory(final, s.get_value(borrow=True))


def test_a_function_with_a_scan_pickles():
    x = et.dvector("x")
    out, _ = eg.scan(lambda xt, acc: acc + xt, sequences=x, outputs_info=0.0)
    f = eg.function([x], out)
    f(np.ones(2))  # compiles the step before pickling
    g = pickle.loads(pickle.dumps(f))
    np.testing.assert_allclose(g(np.arange(4.0)), [0.0, 1.0, 3.0, 6.0])


def test_threads_share_a_compiled_scan():
    from concurrent.futures import ThreadPoolExecutor

    x = et.dvector("x")
    out, _ = eg.scan(lambda xt, acc: acc * 0.5 + xt, sequences=x, outputs_info=0.0)
    f = eg.function([x], out)
    inputs = [RNG.standard_normal(50) for _ in range(8)]

    def expected(v):
        acc, result = 0.0, []
        for value in v:
            acc = acc * 0.5 + value
            result.append(acc)
        return result

    with ThreadPoolExecutor(4) as pool:  # the step compiles on the first calls, in several threads
        results = list(pool.map(f, inputs))
    for v, r in zip(inputs, results):
        np.testing.assert_allclose(r, expected(v))


# -- errors ----------------------------------------------------------------------------------------
def test_a_sequence_too_short_for_n_steps_is_named():
    x = et.dvector("x")
    out, _ = eg.scan(lambda xt: xt, sequences=x, n_steps=5)
    with pytest.raises(ValueError, match="sequence 0 has 3 entries; 5 steps with taps .0. need 5"):
        eg.function([x], out)(np.ones(3))


def test_a_state_of_another_dtype_is_refused():
    x = et.dvector("x")  # float32 state + float64 step = float64
    with pytest.raises(TypeError, match=r"output 0 of fn .* fed back as a state of type TensorType\(float32, \(\)\)"):
        eg.scan(lambda xt, acc: acc + xt, sequences=x, outputs_info=np.float32(0))


def test_a_state_that_changes_shape_is_named():
    h0 = et.dvector("h0")
    out, _ = eg.scan(lambda h: et.concatenate([h, h]), outputs_info=h0, n_steps=2)
    with pytest.raises(ValueError, match=r"output 0 has shape \(4,\) at step 0, but \(2,\) at its initial state"):
        eg.function([h0], out)(np.ones(2))


def test_argument_errors():
    x = et.dvector("x")
    with pytest.raises(ValueError, match="needs sequences or n_steps"):
        eg.scan(lambda: x)
    with pytest.raises(ValueError, match="fn returned 2 outputs but outputs_info describes 1"):
        eg.scan(lambda xt, acc: (acc, acc), sequences=x, outputs_info=[0.0])
    with pytest.raises(ValueError, match="taps must be negative"):
        eg.scan(lambda a: a, outputs_info={"initial": x, "taps": [0]}, n_steps=2)
    with pytest.raises(ValueError, match="is a scalar; a sequence is iterated over its first axis"):
        eg.scan(lambda a: a, sequences=et.dscalar("s"))
    with pytest.raises(TypeError, match="n_steps must be an integer scalar"):
        eg.scan(lambda: x, n_steps=et.dscalar("n"))
    with pytest.raises(TypeError, match="updates must update shared variables"):
        eg.scan(lambda xt: (xt, {x: xt}), sequences=x)
    with pytest.raises(TypeError, match=r"scan calls fn with 3 arguments, in this order: sequences\[0\] at tap 0, "
                                        r"outputs_info\[0\] at tap -1, non_sequences\[0\]; <lambda> cannot take them"):
        eg.scan(lambda xt, acc: acc + xt, sequences=x, outputs_info=0.0, non_sequences=x)
    w = eg.shared(np.ones(2), name="w")
    with pytest.raises(ValueError, match=r"scan\(strict=True\): fn reads w, which is not in non_sequences"):
        eg.scan(lambda xt: xt * w, sequences=x, strict=True)
    eg.scan(lambda xt, w: xt * w.sum(), sequences=x, non_sequences=w, strict=True)  # listed: accepted
    with pytest.raises(ValueError, match="fn returned no outputs and no updates"):
        eg.scan(lambda xt: {}, sequences=x)
    n = et.lscalar("n")
    out, _ = eg.scan(lambda: x * 2, n_steps=n)
    with pytest.raises(ValueError, match="n_steps must be >= 0, got -1"):
        eg.function([x, n], out)(np.ones(2), -1)


def test_map_reduce_and_folds():
    from eqgraph import loops

    x = et.dvector("x")
    v = np.array([1.0, 2.0, 4.0])
    squares, _ = loops.map(lambda xt: xt ** 2, x)
    total, _ = loops.reduce(lambda xt, acc: acc + xt, x, 0.0)
    left, _ = loops.foldl(lambda xt, acc: acc * 10 + xt, x, 0.0)
    right, _ = loops.foldr(lambda xt, acc: acc * 10 + xt, x, 0.0)
    results = eg.function([x], [squares, total, left, right])(v)
    np.testing.assert_allclose(results[0], v ** 2)
    assert [float(r) for r in results[1:]] == [7.0, 124.0, 421.0]


def test_arrays_of_another_namespace_are_refused_by_name():
    xps = pytest.importorskip("array_api_strict")
    x = et.dvector("x")
    out, _ = eg.scan(lambda xt: xt * 2, sequences=x)
    with pytest.raises(TypeError, match=r"Scan\{scan, 1 outputs\} runs on the NumPy backend only; .*array_api_strict"):
        out.owner.op.perform(out.owner, [xps.asarray([1.0, 2.0])], [[None]])


def test_the_number_of_steps_is_static_when_the_graph_fixes_it():
    x = et.TensorType("float64", (6, 2))("x")
    by_length, _ = eg.scan(lambda before, now: before + now, sequences={"input": x, "taps": [-2, 0]})
    by_constant, _ = eg.scan(lambda h: h * 2, outputs_info=et.dvector("h0"), n_steps=3)
    by_variable, _ = eg.scan(lambda h: h * 2, outputs_info=et.dvector("h0"), n_steps=et.lscalar("n"))
    assert by_length.type.shape == (4, 2) and by_constant.type.shape == (3, None)
    assert by_variable.type.shape == (None, None)
    np.testing.assert_allclose(eg.function([x], by_length)(np.ones((6, 2))), np.full((4, 2), 2.0))


def test_random_draws_in_the_loop_are_new_at_each_step():
    # the generator's default_update makes it a loop state, as in PyTensor; hoisted as
    # loop-invariant, every step got the same draw
    if not hasattr(eg, "RandomStream"):
        pytest.skip("needs eg.RandomStream")
    x = et.dvector("x")
    out, updates = eg.scan(lambda xt: xt + eg.RandomStream(0).normal(size=()), sequences=x)
    assert len(updates) == 1
    f = eg.function([x], out, updates=updates)
    first, second = f(np.zeros(4)), f(np.zeros(4))
    reference = eg.function([], eg.RandomStream(0).normal(size=()))
    np.testing.assert_allclose(np.concatenate([first, second]), [float(reference()) for _ in range(8)])


def test_a_draw_made_before_the_loop_is_one_value_for_every_step():
    # the step reads the draw z, a value; z's generator is not the loop's to advance
    z_rng = eg.shared(np.random.default_rng(0))
    z = et.random.normal(0, 1, rng=z_rng)
    z_rng.default_update = z.owner.outputs[0]
    (acc, per_step), updates = eg.scan(lambda acc: (acc + z, z), outputs_info=[et.as_tensor(np.float64(0.0)), None],
                                       n_steps=4)
    assert not updates
    f = eg.function([], [acc, per_step])
    (sums, draws), (_, next_draws) = f(), f()
    assert len(set(draws.tolist())) == 1 and draws[0] == np.random.default_rng(0).normal(0, 1)
    np.testing.assert_allclose(sums, draws[0] * np.arange(1, 5))
    assert next_draws[0] != draws[0]   # the function's call, not the loop's steps, advances z_rng


def test_a_draw_made_in_the_step_from_a_stream_made_before_the_loop_is_new_at_each_step():
    srng = eg.RandomStream(4)
    draws, updates = eg.scan(lambda: srng.normal(size=()), n_steps=4)
    assert len(updates) == 1
    assert len(set(eg.function([], draws, updates=updates)().tolist())) == 4


def test_a_draw_made_in_the_step_from_a_generator_made_before_the_loop_is_new_at_each_step():
    rng = eg.shared(np.random.default_rng(3))
    template = et.random.normal(0, 1, rng=rng)
    rng.default_update = template.owner.outputs[0]
    draws, updates = eg.scan(lambda: et.random.normal(0, 1, rng=rng), n_steps=4)
    assert list(updates) == [rng]
    values = eg.function([], draws, updates=updates)()
    assert len(set(values.tolist())) == 4
