"""The whole program as one Numba function (eqgraph/exec/numba/program.py): the same values as
the hot program on models with gradients, random graphs (NaN, inf, broadcasting), the
program's error for bad inputs, the program itself for untranslatable graphs and without
Numba, outputs that share no memory, and the disk cache in a second process.  Tests that
compile skip without Numba."""


import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.exec.numba import program as numba_program
from eqgraph.exec.numba import reductions as numba_reductions
from eqgraph.terms.basic import Constant
from fuzz_graphs import make_graph
from test_fusion_numba import assert_miss_then_hit

needs_numba = pytest.mark.skipif(numba_kernels.numba is None, reason="Numba is not installed")


def _whole_and_program(f, args):
    """``(results of the whole function, results of the hot program)`` for ``args``; the first
    call makes both hot."""
    call = f.program.call
    assert hasattr(call, "whole_source"), "the graph has no whole function"
    with np.errstate(all="ignore"):
        f(*[np.copy(a) for a in args])
        assert hasattr(call.__globals__["hot"], "py_func"), "the whole function was not compiled"
        whole = f(*args)
        program = call.program(*args)
    return (whole if isinstance(whole, list) else [whole]), program


def _assert_same(got, want, exact=True):
    for g, w in zip(got, want, strict=True):
        assert type(g) is np.ndarray and g.shape == w.shape and g.dtype == w.dtype, (g, w)
        if exact:
            np.testing.assert_array_equal(g, w)   # NaN where the program has NaN
        else:
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-300)


# -- models with gradients ---------------------------------------------------------------------
def _logreg():
    x, y, w, b = et.dmatrix("x"), et.dvector("y"), et.dvector("w"), et.dscalar("b")
    p = et.sigmoid(x @ w + b)
    loss = -(y * et.log(p) + (1 - y) * et.log(1 - p)).mean()
    return [x, y, w, b], [loss, *eg.grad(loss, [w, b])]


def _mlp():
    x, y, w1, b1, w2, b2 = (et.dmatrix("x"), et.dvector("y"), et.dmatrix("w1"), et.dvector("b1"),
                            et.dvector("w2"), et.dscalar("b2"))
    loss = ((et.tanh(x @ w1 + b1) @ w2 + b2 - y) ** 2).mean()
    return [x, y, w1, b1, w2, b2], [loss, *eg.grad(loss, [w1, b1, w2, b2])]


def _xent():
    x, y, w = et.dmatrix("x"), et.dmatrix("y"), et.dmatrix("w")
    loss = -(y * et.log_softmax(x @ w)).sum(axis=1).mean()
    return [x, y, w], [loss, eg.grad(loss, w)]


def _standardize():
    x = et.dvector("x")
    return [x], [(x - x.mean()) / et.sqrt(((x - x.mean()) ** 2).mean() + 1e-8)]


def _model_values(rng, name, rows=10):
    x = rng.normal(size=(rows, 8))
    labels = (rng.uniform(size=rows) > 0.5).astype(float)
    return {"logreg": [x, labels, rng.normal(size=8), np.array(0.1)],
            "mlp": [x, labels, rng.normal(size=(8, 16)), np.zeros(16), rng.normal(size=16), np.array(0.0)],
            "xent": [x, np.eye(10)[rng.integers(0, 10, rows)], rng.normal(size=(8, 10))],
            "standardize": [rng.normal(size=rows)]}[name]


MODELS = {"logreg": _logreg, "mlp": _mlp, "xent": _xent, "standardize": _standardize}


@needs_numba
@pytest.mark.parametrize("name", sorted(MODELS))
def test_models_with_gradients_give_the_hot_programs_values_bit_for_bit(name, hot_at_once):
    inputs, outputs = MODELS[name]()
    f = eg.function(inputs, outputs)
    rng = np.random.default_rng(0)
    for rows in (10, 1, 3):
        args = _model_values(rng, name, rows)
        _assert_same(*_whole_and_program(f, args))
    args = _model_values(rng, name)
    args[0] = args[0].copy()
    args[0].flat[[1, 5, 7]] = [np.nan, np.inf, -np.inf]
    _assert_same(*_whole_and_program(f, args))


@needs_numba
def test_the_whole_function_takes_over_once_compiled_below_the_cost_models_bound(monkeypatch):
    monkeypatch.setattr(numba_program, "TRIALS", 0)   # above the bound: the program, unmeasured
    inputs, outputs = _logreg()
    f = eg.function(inputs, outputs, compile="deferred")
    call = f.program.call
    small = _model_values(np.random.default_rng(1), "logreg")
    f(*small)
    assert call.__globals__["hot"] is None and f.stages.tier != "numba-whole"   # not compiled yet
    assert f.wait_compiled(timeout=600)
    f(*small)
    hot = call.__globals__["hot"]
    assert hasattr(hot, "py_func") and f.stages.tier == "numba-whole"
    below = numba_program.whole_below(f.program.order)
    large = _model_values(np.random.default_rng(2), "logreg", rows=int(below))   # 8 columns: 8x the bound
    calls = []
    monkeypatch.setitem(call.__globals__, "hot", lambda *a: calls.append(1) or hot(*a))
    f(*small)
    f(*large)
    assert len(calls) == 1 and f.stages.tier != "numba-whole"


@needs_numba
@pytest.mark.parametrize("whole_faster", [True, False])
def test_above_the_bound_the_faster_of_the_whole_function_and_the_program_serves(monkeypatch, whole_faster):
    """Above ``whole_below`` the first calls on each input size alternate, timed, between the
    whole function and the program; then the faster serves that size alone."""
    inputs, outputs = _logreg()
    f = eg.function(inputs, outputs, compile="eager")
    call, below = f.program.call, numba_program.whole_below(f.program.order)
    hot, program = call.__globals__["hot"], call.program
    ran = []
    monkeypatch.setitem(call.__globals__, "hot", lambda *a: ran.append("whole") or hot(*a))
    monkeypatch.setitem(call.__globals__, "program", lambda *a: ran.append("program") or program(*a))
    durations = {"whole": 1 if whole_faster else 5, "program": 5 if whole_faster else 1}
    elapsed = {"ns": 0, "counted": 0}

    def clock():   # the time of the calls made since the last reading
        elapsed["ns"] += sum(durations[name] for name in ran[elapsed["counted"]:])
        elapsed["counted"] = len(ran)
        return elapsed["ns"]

    monkeypatch.setattr(numba_program, "_clock", clock)
    large = _model_values(np.random.default_rng(2), "logreg", rows=int(below))
    want = program(*large)
    ran.clear()
    for _ in range(2 * numba_program.TRIALS + 3):
        _assert_same(f(*large), want, exact=False)   # BLAS kernels may differ in the last bit
    trials = ran[:2 * numba_program.TRIALS]
    assert trials == ["whole", "program"] * numba_program.TRIALS
    assert ran[len(trials):] == ["whole" if whole_faster else "program"] * 3
    assert (f.stages.tier == "numba-whole") is whole_faster


# -- random graphs ---------------------------------------------------------------------------------
def _random_graph(rng):
    """A random float64 graph over inputs of shapes (n,), (1,), (n, m), (1, m), (n, 1) and a scalar,
    through elementwise ops (comparisons, switch), sums, means, softmax, transposes and matmul."""
    n = m = int(rng.integers(1, 5))   # square: every pair of inputs broadcasts
    specs = [("v", (None,), (n,)), ("one", (None,), (1,)), ("a", (None, None), (n, m)),
             ("row", (1, None), (1, m)), ("col", (None, 1), (n, 1)), ("s", (), ())]
    inputs = [et.tensor(name, "float64", static) for name, static, _ in specs]
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e300])
    values = []
    for _, _, shape in specs:
        v = rng.normal(size=shape) * 3
        if v.size and rng.uniform() < 0.5:
            v.flat[rng.integers(0, v.size)] = rng.choice(special)
        values.append(v)
    pool = list(inputs)
    unary = [et.exp, et.tanh, et.abs, et.sigmoid, et.softplus, lambda t: t * t, lambda t: -t, et.log, et.sqrt]
    binary = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a - b, lambda a, b: a / b, et.maximum,
              lambda a, b: et.switch(a > b, a, b * 2.0), lambda a, b: et.switch(et.isnan(a), b, a)]
    for _ in range(int(rng.integers(3, 9))):
        kind = rng.uniform()
        a = pool[int(rng.integers(len(pool)))]
        if kind < 0.3:
            pool.append(unary[int(rng.integers(len(unary)))](a))
        elif kind < 0.7:
            b = pool[int(rng.integers(len(pool)))]
            if a.ndim == 2 and b.ndim == 1 and rng.uniform() < 0.3:
                pool.append(a @ et.ones_like(a[0]) if rng.uniform() < 0.5 else a.T @ a)
                continue
            try:
                pool.append(binary[int(rng.integers(len(binary)))](a, b))
            except (ValueError, TypeError):   # shapes that do not broadcast statically
                continue
        elif kind < 0.85 and a.ndim:
            axis = int(rng.integers(a.ndim)) if a.ndim == 2 and rng.uniform() < 0.6 else None
            pool.append(a.mean(axis=axis) if rng.uniform() < 0.5 else a.sum(axis=axis))
        elif a.ndim == 2:
            pool.append(et.softmax(a, axis=1) if rng.uniform() < 0.5 else a.T)
    outputs = pool[len(inputs):][-3:] or [inputs[0] * 2.0]
    return inputs, outputs, values


@needs_numba
@pytest.mark.parametrize("seed", range(6))
def test_random_graphs_give_the_hot_programs_values(seed, hot_at_once):
    rng = np.random.default_rng(seed)
    inputs, outputs, values = _random_graph(rng)
    f = eg.function(inputs, outputs, on_unused_input="ignore")
    if not hasattr(f.program.call, "whole_source"):
        pytest.skip("this graph has a node without a translation")
    got, want = _whole_and_program(f, values)
    _assert_same(got, want, exact=False)   # np.dot and NumPy's matmul may use different BLAS kernels


@needs_numba
@pytest.mark.slow
def test_many_random_graphs_give_the_hot_programs_values(hot_at_once):
    compared = 0
    for seed in range(6, 80):
        inputs, outputs, values = _random_graph(np.random.default_rng(seed))
        f = eg.function(inputs, outputs, on_unused_input="ignore")
        if hasattr(f.program.call, "whole_source"):
            _assert_same(*_whole_and_program(f, values), exact=False)
            compared += 1
    assert compared > 40


@needs_numba
@pytest.mark.parametrize("seed", [2, 79, 105, 251])
def test_fuzz_graphs_give_the_hot_programs_values(seed, hot_at_once):
    """Graphs of tests/fuzz_graphs.py that have a whole function: the first four of the 10 among
    seeds 0-599 (measured; most have float32 or indexing nodes, which keep the program)."""
    graph = make_graph(seed)
    f = eg.function([s for s, _ in graph.inputs], [t.sym for t in graph.outputs], on_unused_input="ignore")
    _assert_same(*_whole_and_program(f, [v for _, v in graph.inputs]), exact=False)


@needs_numba
def test_products_of_a_matrix_of_one_row_or_column_are_numpys_bit_for_bit(hot_at_once):
    # NumPy's matmul takes a one-row matrix times a vector as a dot product, and Numba's np.dot
    # as a gemv, which adds in another order (the last bit differed on half of such products)
    m, v, n = et.dmatrix("m"), et.dvector("v"), et.dmatrix("n")
    f = eg.function([m, v, n], [m @ v, v @ n, m @ n])
    rng = np.random.default_rng(0)
    for rows, cols in [(1, 16), (16, 1), (1, 1), (3, 16)] * 10:
        args = [rng.normal(size=(rows, 16)), rng.normal(size=16), rng.normal(size=(16, cols))]
        _assert_same(*_whole_and_program(f, args))


# -- broadcasting, errors, memory ---------------------------------------------------------------
@needs_numba
def test_runtime_broadcasting_of_length_one_axes_and_outputs_of_other_ranks(hot_at_once):
    x, y, s = et.dvector("x"), et.dvector("y"), et.dscalar("s")
    m = et.dmatrix("m")
    outs = [x * y + s, (m + x).sum(axis=0), s * 2.0 + 1.0, et.exp(m) * y[:, None]]
    f = eg.function([x, y, s, m], outs)
    for xv, yv, mv in [(np.ones(1), np.arange(3.0), np.ones((3, 1))), (np.arange(3.0), np.ones(1), np.ones((1, 3))),
                       (np.arange(3.0), np.arange(3.0), np.arange(9.0).reshape(3, 3))]:
        _assert_same(*_whole_and_program(f, [xv, yv, np.array(0.5), mv]))


@needs_numba
def test_a_bad_shape_gives_the_programs_error_naming_the_node(hot_at_once):
    x, y, w = et.dvector("x"), et.dvector("y"), et.dmatrix("w")
    f = eg.function([x, y, w], [(et.exp(x) + y).sum() * 2.0, w @ x])
    good = [np.ones(3), np.ones(3), np.ones((2, 3))]
    _whole_and_program(f, good)   # hot
    for bad in ([np.ones(3), np.ones(4), np.ones((2, 3))], [np.ones(3), np.ones(3), np.ones((2, 4))]):
        with pytest.raises(ValueError) as whole_error:
            f(*bad)
        with pytest.raises(ValueError) as program_error:
            f.program.call.program(*bad)
        assert str(whole_error.value) == str(program_error.value)
        assert "shape" in str(whole_error.value)
    np.testing.assert_array_equal(f(*good)[1], np.full(2, 3.0))   # still right after the refusals


@needs_numba
def test_results_share_no_memory_with_the_arguments_or_each_other(hot_at_once):
    x, m = et.dvector("x"), et.dmatrix("m")
    f = eg.function([x, m], [x, m.T, m.dimshuffle(1, 0), (m * 2.0).sum(axis=1), x + 1.0])
    xv, mv = np.arange(3.0), np.arange(6.0).reshape(2, 3)
    got, _ = _whole_and_program(f, [xv, mv])
    arrays = [xv, mv, *got]
    for i, a in enumerate(arrays):
        for b in arrays[i + 1:]:
            assert not np.shares_memory(a, b)


@needs_numba
def test_untranslatable_graphs_keep_the_program(hot_at_once):
    x = et.dvector("x")
    z = et.fvector("z")
    single = eg.function([z], (et.exp(z) + 1).sum() * z)   # float32 exp has no translation
    assert not hasattr(single.program.call, "whole_source")
    # a generator (a value of a type without a dtype) is passed to the draws translate_random writes
    rng = eg.shared(np.random.default_rng(0))
    drawn = eg.function([x], et.random.normal(0.0, 1.0, size=(3,), rng=rng) * x + x * 2.0 + 1.0)
    assert hasattr(drawn.program.call, "whole_source")
    assert drawn(np.ones(3)).shape == (3,)


def test_without_numba_the_program_runs(monkeypatch):
    monkeypatch.setattr(numba_kernels, "numba", None)
    inputs, outputs = _logreg()
    f = eg.function(inputs, outputs)
    assert not hasattr(f.program.call, "whole_source")
    rng = np.random.default_rng(0)
    args = _model_values(rng, "logreg")
    loss, gw, gb = f(*args)
    p = 1 / (1 + np.exp(-(args[0] @ args[2] + args[3])))
    np.testing.assert_allclose(gw, args[0].T @ ((p - args[1]) / 10), rtol=1e-12)


@needs_numba
def test_a_new_process_loads_the_whole_function_from_the_disk_cache(tmp_path):
    script = (
        "import numpy as np, eqgraph as eg, eqgraph.tensor as et\n"
        "x, w = et.dmatrix('x'), et.dvector('w')\n"
        "loss = et.tanh(x @ w).mean()\n"
        "f = eg.function([x, w], [loss, eg.grad(loss, w)], compile='eager')\n"
        "for _ in range(2): f(np.ones((3, 2)), np.ones(2))\n"
        "hot = f.program.call.__globals__['hot']\n"
        "print('hit' if hot.cache_hit else 'miss')\n")
    assert_miss_then_hit(script, tmp_path)


@needs_numba
def test_the_whole_functions_source_names_the_summing_loops_it_is_compiled_against():
    """A whole function compiled into the disk cache carries a copy of the summing loops it calls,
    and once loaded that copy answers even the loops' own calls: a function cached before a change
    of ``numba_reductions`` (or of the vector type it uses) made sums of -0.0 come out -0.0 after
    the fix.  So its source, the cache's key, holds a hash of those files (and of its own module,
    whose helpers it calls too)."""
    inputs, outputs = _standardize()
    f = eg.function(inputs, outputs)
    constants = {v: v.data for v in f.fgraph.variables if isinstance(v, Constant)}
    source, _ = numba_program.whole_source(f.fgraph, f.fgraph.toposort(), constants)
    assert numba_reductions.VERSION == numba_kernels.files_version(*numba_reductions.COMPILED_FROM)
    assert numba_reductions.VERSION in source and numba_kernels.files_version(numba_program.__file__) in source
    assert {p.name for p in numba_reductions.COMPILED_FROM} == {"reductions.py", "simd.py"}


@needs_numba
def test_zero_d_outputs_of_every_dtype_are_fresh_0d_arrays_of_their_dtype(monkeypatch):
    """The whole function returns a float64 0-d output as a float (cheaper to box than a 0-d array)
    and its caller makes it a 0-d array again, on the sizes the cost model sends to it and on the
    calls that measure it against the program; 0-d outputs of other dtypes stay 0-d arrays."""
    monkeypatch.setattr(eg.config, "compile", "eager")
    monkeypatch.setattr(numba_program, "MIN_NODES", 1)
    x, n = et.dvector("x"), et.lvector("n")
    outs = [(x * 2.0).sum(), (n * 3).sum(), (x > 0).any(), et.cast(x, "float32").max(), x.mean(), x * 2.0]
    f = eg.function([x, n], outs)
    assert f.program.call.whole_source.count("np.float64(") == 2   # the float64 sum and mean
    for size in (3, 10**6):   # under whole_below, and above it (measured against the program)
        xs, ns = np.linspace(-1.0, 2.0, size), np.arange(size, dtype=np.int64)
        for _ in range(2 * numba_program.TRIALS + 2):
            got = f(xs, ns)
            _assert_same(got, f.program.call.program(xs, ns))
            assert not any(np.shares_memory(a, b) for a in got for b in got if a is not b)
        assert size > 3 or f.stages.tier == "numba-whole"
