"""eqgraph.function and the linker: storage, freeing, reuse, destroy_map, errors, shared, updates."""

import gc
import weakref

import numpy as np
import pytest
from same_type_op import SameTypeOp

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.link import link


class Record(SameTypeOp):
    """Identity that remembers (weakly) the last value it produced."""

    last = None

    def perform(self, node, inputs, out):
        value = inputs[0] + 0  # a fresh array
        Record.last = weakref.ref(value)
        out[0][0] = value

    def infer_shape(self, fgraph, node, shapes):
        return shapes


class AssertFreed(SameTypeOp):
    """Identity that records whether Record's last value was already freed when it ran."""

    freed = None

    def perform(self, node, inputs, out):
        gc.collect()
        AssertFreed.freed = Record.last() is None
        out[0][0] = inputs[0] + 0


def test_large_intermediate_is_freed_before_the_function_returns():
    x = et.dvector("x")
    big = Record()(et.exp(x))            # a large intermediate...
    total = AssertFreed()(big.sum())      # ...not needed once summed
    f = eg.function([x], total)
    f(np.ones(1_000_000))
    assert AssertFreed.freed is True
    f_keep = eg.function([x], total, allow_gc=False)
    f_keep(np.ones(10))
    assert AssertFreed.freed is False


def test_storage_and_compute_maps():
    x = et.dvector("x")
    e = et.exp(x)
    y = e.sum()
    f = eg.function([x], [y, e * 2.0], fusion=False)  # the maps of unfused nodes
    # the thunk loop keeps compute flags; the generated program (test_program.py) does not
    program = link(f.fgraph, straight=False)
    program.input_cells[0][0] = np.zeros(3)
    program.run()
    assert all(len(cell) == 1 for cell in program.storage_map.values())
    [exp_var] = [v for v in program.fgraph.variables if v.owner and v.owner.op == et.exp]
    # exp's value is needed by two nodes; once both ran it was freed (flag 2)
    assert program.compute_map[exp_var][0] == 2 and program.storage_map[exp_var][0] is None
    for out in program.fgraph.outputs:
        assert program.compute_map[out][0] == 1
    assert program.compute_map[program.fgraph.inputs[0]][0] == 1


class ReuseOutput(SameTypeOp):
    """Writes into the array left in its output cell by the previous call, when it fits."""

    reused = 0

    def perform(self, node, inputs, out):
        (x,), (cell,) = inputs, out
        if cell[0] is not None and cell[0].shape == x.shape:
            ReuseOutput.reused += 1
            np.multiply(x, 2, out=cell[0])
        else:
            cell[0] = x * 2


def test_output_cells_keep_values_for_reuse_between_calls():
    x = et.dvector("x")
    y = ReuseOutput()(x).sum()
    f = eg.function([x], y, allow_gc=False)
    ReuseOutput.reused = 0
    assert f(np.ones(4)) == 8 and f(np.full(4, 2.0)) == 16 and f(np.ones(4)) == 8
    assert ReuseOutput.reused == 2


class AddOneInplace(SameTypeOp):
    """x += 1, overwriting its input (destroy_map)."""

    destroy_map = {0: [0]}

    def perform(self, node, inputs, out):
        (x,) = inputs
        x += 1
        out[0][0] = x


def test_destroy_map_never_overwrites_user_inputs_or_values_needed_later():
    x = et.dvector("x")
    f = eg.function([x], AddOneInplace()(x))
    data = np.zeros(3)
    np.testing.assert_array_equal(f(data), np.ones(3))
    np.testing.assert_array_equal(data, np.zeros(3))  # the user's array is untouched
    assert f.program.copies
    e = et.exp(x)
    g = eg.function([x], [AddOneInplace()(e), e * 1.0])  # e is still needed after being destroyed
    a, b = g(np.zeros(2))
    np.testing.assert_array_equal(a, [2.0, 2.0])
    np.testing.assert_array_equal(b, [1.0, 1.0])
    h = eg.function([x], AddOneInplace()(et.exp(x)) * 2.0)  # a private intermediate: no copy needed
    assert not h.program.copies
    np.testing.assert_array_equal(h(np.zeros(2)), [4.0, 4.0])


def test_call_by_position_and_keyword_and_output_structure():
    x, y = et.dvector("x"), et.dscalar("y")
    f = eg.function([x, y], [x * y, (x + y).sum()])
    a, b = f(np.ones(2), 3.0)
    np.testing.assert_array_equal(a, [3.0, 3.0]) and np.testing.assert_equal(b, 8.0)
    a2, _ = f(np.ones(2), y=3.0)
    np.testing.assert_array_equal(a, a2)
    single = eg.function([x], x.sum())
    assert single(np.arange(3.0)) == 3.0
    assert isinstance(eg.function([x], [x.sum()])(np.ones(2)), list)


def test_outputs_may_be_inputs_or_constants_and_are_not_aliased():
    x = et.dvector("x")
    f = eg.function([x], [x, et.constant(2.0), x.T])
    data = np.ones(2)
    out_x, two, out_t = f(data)
    assert out_x is not data and np.array_equal(out_x, data) and two == 2.0
    out_x[0] = 5.0
    assert data[0] == 1.0 and out_t[0] == 1.0
    two[...] = 3.0  # a writable copy, not the constant's read-only data
    assert f(data)[1] == 2.0


@pytest.mark.parametrize("call, message", [
    (lambda f: f(np.ones(2)), r"Too few arguments to function 'f': expected 2 \(#0 \('x'\), #1 \('y'\)\), got 1"),
    (lambda f: f(np.ones(2), 1.0, 2.0), "Too many arguments"),
    (lambda f: f(np.ones(2), z=1.0), "unknown keyword argument 'z'.*'x', 'y'"),
    (lambda f: f(np.ones(2), x=np.ones(2)), "twice"),
    (lambda f: f(y=1.0), r"missing input\(s\): #0 \('x'\)"),
    (lambda f: f(np.ones((2, 2)), 1.0),
     r"Bad argument #0 \('x'\) to function 'f': expected a 1-d float64 array of shape \(\?,\), got ndarray of dtype float64 and shape \(2, 2\)"),
    (lambda f: f(np.ones(2, dtype="complex64"), 1.0), "Bad argument #0.*complex64.*loss of precision"),
    (lambda f: f(np.ones(2), "a"), r"Bad argument #1 \('y'\).*0-d float64 array"),
])
def test_argument_errors_name_the_argument(call, message):
    x, y = et.dvector("x"), et.dscalar("y")
    f = eg.function([x, y], x * y, name="f")
    with pytest.raises(TypeError, match=message):
        call(f)


def test_allow_input_downcast_and_trust_input():
    x = et.fvector("x")
    f = eg.function([x], x * 2, allow_input_downcast=True)
    assert f(np.ones(2)).dtype == np.float32
    with pytest.raises(TypeError, match="float32"):
        eg.function([x], x * 2)(np.ones(2))
    fast = eg.function([x], x * 2, trust_input=True)
    np.testing.assert_array_equal(fast(np.ones(2, dtype="float32")), [2, 2])


def test_compile_errors():
    x, y = et.dvector("x"), et.dvector("y")
    with pytest.raises(eg.UnusedInputError, match=r"Input #1 \(y\) is not used"):
        eg.function([x, y], x * 2)
    with pytest.warns(UserWarning, match="not used"):
        eg.function([x, y], x * 2, on_unused_input="warn")
    eg.function([x, y], x * 2, on_unused_input="ignore")
    with pytest.raises(TypeError, match="Constant"):
        eg.function([et.constant(1.0)], x)
    with pytest.raises(TypeError, match="shared variable"):
        s = eg.shared(np.ones(2))
        eg.function([s], s * 2)
    with pytest.raises(ValueError, match="more than once"):
        eg.function([x, x], x)
    with pytest.raises(eg.terms.MissingInputError, match="y"):
        eg.function([x], x + y)
    with pytest.raises(TypeError, match="list of inputs"):
        eg.function(x, x)


def test_shared_variables_and_updates():
    w = eg.shared(np.zeros(2), name="w")
    count = eg.shared(0, name="count")
    x = et.dvector("x")
    step = eg.function([x], (w * x).sum(), updates={w: w + x, count: count + 1})
    assert step(np.ones(2)) == 0.0 and step(np.ones(2)) == 2.0
    np.testing.assert_array_equal(w.get_value(), [2.0, 2.0])
    assert count.get_value() == 2
    # updates see the values from before the call, all together
    a, b = eg.shared(1.0, "a"), eg.shared(2.0, "b")
    swap = eg.function([], [], updates={a: b, b: a})
    swap()
    assert (a.get_value(), b.get_value()) == (2.0, 1.0)
    # set_value / get_value copy unless borrow
    v = np.ones(2)
    w.set_value(v)
    v[0] = 7.0
    assert w.get_value()[0] == 1.0
    got = w.get_value()
    got[0] = 9.0
    assert w.get_value()[0] == 1.0
    assert w.get_value(borrow=True) is w.container[0]
    with pytest.raises(TypeError):
        w.set_value(np.ones((2, 2)))
    with pytest.raises(TypeError, match="update of w"):
        eg.function([x], x, updates={w: et.dmatrix()})


class FailWhenNegative(SameTypeOp):
    def perform(self, node, inputs, out):
        if (inputs[0] < 0).any():
            raise ValueError("negative input")
        out[0][0] = inputs[0]


def test_updates_are_atomic_when_a_call_fails():
    w = eg.shared(np.zeros(2), name="w")
    n = eg.shared(0, name="n")
    x = et.dvector("x")
    f = eg.function([x], FailWhenNegative()(x * 1.0), updates={w: w + x, n: n + 1})
    f(np.ones(2))
    with pytest.raises(ValueError, match="negative"):
        f(-np.ones(2))
    np.testing.assert_array_equal(w.get_value(), [1.0, 1.0])
    assert n.get_value() == 1


def test_givens():
    x, y = et.dvector("x"), et.dvector("y")
    s = eg.shared(np.full(2, 3.0), "s")
    f = eg.function([y], (x * s).sum(), givens={x: y * 2.0})
    assert f(np.ones(2)) == 12.0
    k = et.dvector("k")
    g = eg.function([k], s * 10, givens={s: k})
    np.testing.assert_array_equal(g(np.ones(2)), [10.0, 10.0])


def test_profile_summary():
    x = et.dmatrix("x")
    f = eg.function([x], (x @ x).sum(), profile=True, name="prof")
    for _ in range(3):
        f(np.ones((20, 20)))
    text = f.profile.summary()
    assert "prof" in text and "matmul" in text and "3 calls" in text
    [mm] = [s for s in f.profile.nodes if str(s.node.op) == "matmul"]
    assert mm.calls == 3 and mm.flops == 2 * 20 * 20 * 20 and mm.output_bytes == 20 * 20 * 8
    assert "MFLOP/s" in text


def test_eval_uses_a_cached_function():
    x = et.dvector("x")
    y = (x * 2).sum()
    assert y.eval({x: np.ones(3)}) == 6.0
    assert y.eval({"x": np.ones(2)}) == 4.0
    from eqgraph.evaluate import _CACHE

    assert len(_CACHE[y]) == 1
    assert et.constant(3.0).eval() == 3.0


def test_cupy_backend_without_cupy_is_a_clear_error():
    try:
        import cupy  # noqa: F401

        pytest.skip("CuPy is installed: covered by the GPU tests")
    except ImportError:
        pass
    with pytest.raises(eg.BackendUnavailable, match="needs CuPy"):
        eg.function([et.dvector("x")], et.dvector("x") * 2, backend="cupy", on_unused_input="ignore")
    with pytest.raises(ValueError, match="Unknown backend"):
        eg.function([], et.constant(1.0), backend="tpu")


def test_cupy_backend_without_a_gpu_is_a_clear_error(monkeypatch):
    """CuPy installed on a machine without a GPU (the CI case for the "gpu" extra)."""
    import sys
    import types

    class CUDARuntimeError(RuntimeError):
        pass

    def fake_cupy(count):
        runtime = types.SimpleNamespace(getDeviceCount=count, CUDARuntimeError=CUDARuntimeError)
        return types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime), ndarray=type(None))

    def no_driver():
        raise CUDARuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")

    x = et.dvector("x")
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(lambda: 0))
    with pytest.raises(eg.BackendUnavailable, match="found no GPU"):
        eg.function([x], x * 2, backend="cupy")
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(no_driver))
    with pytest.raises(eg.BackendUnavailable, match="cannot reach a GPU.*no CUDA-capable device"):
        eg.function([x], x * 2, backend="cupy")
