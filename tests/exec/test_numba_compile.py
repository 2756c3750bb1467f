"""When the Numba forms are compiled (eqgraph/exec/numba/background.py): in the background while the
NumPy program answers the calls, before ``eg.function`` returns (``compile="eager"``), or when
``f.wait_compiled()`` asks; what ``f.stages.tier`` and ``f.stages.whole_function`` report; the
disk cache across processes; the off switch.  Tests that compile skip without Numba."""

import os
import subprocess
import sys
import threading
import warnings

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.exec.numba import program as numba_program

needs_numba = pytest.mark.skipif(numba_kernels.numba is None, reason="Numba is not installed")


def _model():
    x, w = et.dmatrix("x"), et.dvector("w")
    loss = et.tanh(x @ w).mean()
    return [x, w], [loss, eg.grad(loss, w)]


ARGS = (np.linspace(-1, 1, 6).reshape(3, 2), np.array([0.5, -2.0]))


def _reference():
    x, w = ARGS
    t = np.tanh(x @ w)
    return [t.mean(), x.T @ ((1 - t ** 2) / 3)]


def _assert_right(got):
    for g, want in zip(got, _reference(), strict=True):
        np.testing.assert_allclose(g, want, rtol=1e-12)


@needs_numba
def test_in_the_background_the_program_answers_until_the_whole_function_is_ready(monkeypatch, tmp_path):
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))   # compiled, not found on disk
    monkeypatch.setattr(numba_kernels, "_loaded", {})
    release = threading.Event()
    compile_whole = numba_program._compile

    def held_back(source):   # the build waits for the test, so the calls below run before it is ready
        release.wait()
        return compile_whole(source)

    monkeypatch.setattr(numba_program, "_compile", held_back)
    f = eg.function(*_model(), compile="background")
    for _ in range(3):
        _assert_right(f(*ARGS))
        assert f.stages.tier == "numpy" and f.stages.whole_function == "pending"
    assert f.wait_compiled(timeout=0.05) is False
    release.set()
    assert f.wait_compiled(timeout=600)
    assert f.stages.whole_function == "compiled"   # by the compile server, into the empty cache
    _assert_right(f(*ARGS))
    assert f.stages.tier == "numba-whole"


@needs_numba
def test_eager_compiles_before_returning(monkeypatch):
    monkeypatch.setattr(eg.config, "compile", "background")   # the argument wins over the setting
    f = eg.function(*_model(), compile="eager")
    assert f.stages.whole_function in ("compiled", "loaded from cache")
    _assert_right(f(*ARGS))
    assert f.stages.tier == "numba-whole"


@needs_numba
def test_deferred_compiles_only_when_asked():
    f = eg.function(*_model(), compile="deferred")
    _assert_right(f(*ARGS))
    assert f.stages.tier == "numpy" and f.stages.whole_function == "pending"
    assert f.wait_compiled()
    _assert_right(f(*ARGS))
    assert f.stages.tier == "numba-whole"


@needs_numba
def test_large_inputs_run_the_program_with_its_numba_kernels(monkeypatch):
    monkeypatch.setattr(numba_program, "TRIALS", 0)   # above whole_below: the program, unmeasured
    f = eg.function(*_model(), compile="eager")
    _assert_right(f(*ARGS))
    assert f.stages.tier == "numba-whole"
    x, w = np.linspace(-1, 1, 3000).reshape(1500, 2), ARGS[1]
    t = np.tanh(x @ w)
    for got, want in zip(f(x, w), [t.mean(), x.T @ ((1 - t ** 2) / 1500)]):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert f.stages.tier == "numba-kernels"   # above whole_below: the program, its fused nodes in Numba


@needs_numba
def test_the_whole_functions_constants_are_arguments_or_literals():
    x = et.dvector("x")
    f = eg.function([x], (x * np.array([1.0, 2.0, 3.0]) + 2.5).sum() * x, rulesets=[], compile="eager")
    source = f.program.call.whole_source
    header, body = source.split("def kernel(")
    params = body.split(")")[0].split(", ")
    assert len(params) == 2 and "2.5" in body   # x, the array constant; the scalar is a literal
    kernel = f.program.call.__globals__["hot"]
    assert not [name for name, value in kernel.py_func.__globals__.items() if isinstance(value, np.ndarray)]
    np.testing.assert_allclose(f(np.ones(3)), np.full(3, 13.5))


def _broken(source):
    raise RuntimeError("no such loop")


@needs_numba
def test_a_failed_build_is_reported_and_the_program_keeps_running(monkeypatch):
    monkeypatch.setattr(numba_program, "_compile", _broken)
    f = eg.function(*_model(), compile="deferred")
    with pytest.warns(RuntimeWarning, match="Numba could not build.*no such loop"):
        assert f.wait_compiled()
    assert f.stages.whole_function == "failed"
    _assert_right(f(*ARGS))
    assert f.stages.tier != "numba-whole"


@needs_numba
def test_the_background_worker_outlives_a_failed_build(monkeypatch):
    monkeypatch.setattr(numba_program, "_compile", _broken)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # the worker thread's warning about it
        f = eg.function(*_model(), compile="background")
        assert f.wait_compiled(timeout=600) and f.stages.whole_function == "failed"
    monkeypatch.undo()
    g = eg.function(*_model(), compile="background")
    assert g.wait_compiled(timeout=600) and g.stages.whole_function in ("compiled", "loaded from cache")


def test_numba_off_runs_the_numpy_program_alone(monkeypatch):
    monkeypatch.setattr(eg.config, "numba", False)
    f = eg.function(*_model(), compile="eager")
    assert f.stages.whole_function is None and f.wait_compiled(timeout=0)
    _assert_right(f(*ARGS))
    assert f.stages.tier == "numpy"


def test_a_bad_compile_argument_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match="compile must be one of 'background', 'eager', 'deferred'.*'later'"):
        eg.function(*_model(), compile="later")
    with pytest.raises(ValueError, match="eqgraph.config.compile must be one of"):
        eg.config.compile = "sometimes"


def _run(script: str, cache, **env) -> subprocess.CompletedProcess:
    env = {**os.environ, "EQGRAPH_KERNEL_CACHE": str(cache), **env,
           "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)


MODEL_SCRIPT = (
    "import sys, numpy as np, eqgraph as eg, eqgraph.tensor as et\n"
    "x, w = et.dmatrix('x'), et.dvector('w')\n"
    "loss = et.tanh(x @ w).mean()\n"
    "f = eg.function([x, w], [loss, eg.grad(loss, w)], compile=sys.argv[1] if len(sys.argv) > 1 else 'background')\n"
    "f(np.ones((3, 2)), np.ones(2))\n")


@needs_numba
def test_a_new_process_loads_the_whole_function_from_the_disk_cache(tmp_path):
    script = MODEL_SCRIPT + "assert f.wait_compiled(600)\nprint(f.stages.whole_function)\n"
    first, second = _run(script, tmp_path), _run(script, tmp_path)
    assert [first.stdout.strip(), second.stdout.strip()] == ["compiled", "loaded from cache"], \
        [first.stderr[-800:], second.stderr[-800:]]


@needs_numba
def test_a_process_exits_while_its_background_compile_runs(tmp_path):
    """The worker is a daemon thread and the compile server ends with its parent: exiting does
    not wait for the compile."""
    done = _run(MODEL_SCRIPT + "print(f.stages.whole_function)\n", tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == "pending", done.stderr[-800:]


def test_eqgraph_numba_0_never_imports_numba(tmp_path):
    script = MODEL_SCRIPT + ("f.wait_compiled()\n"
                             "print(f.stages.tier, f.stages.whole_function, 'numba' in sys.modules)\n")
    done = _run(script, tmp_path, EQGRAPH_NUMBA="0")
    assert done.stdout.strip() == "numpy None False", done.stderr[-800:]


def test_a_program_with_numba_off_has_nothing_to_wait_for():
    from eqgraph.exec.numba.background import Compiles

    off = Compiles("off")   # what a Program made without ``link`` holds
    assert off.wait(timeout=None) and off.tier == "numpy" and off.whole is None


@needs_numba
def test_a_kernel_is_loaded_once_per_process_whatever_the_cache_folder(monkeypatch, tmp_path):
    """A kernel's module is named by its source: a second copy of it in one process has the same
    symbols as the first, and the copy's Numba environment is left unset (its arrays box with no
    dtype).  So a process that has a kernel keeps it, even where another cache folder or a fresh
    memo would load it again."""
    f = eg.function(*_model(), compile="eager")
    sources = [b.source for b in f.program.compiles.builds if b.source is not None]
    first = [numba_kernels.load_kernel(source) for source in sources]
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(numba_kernels, "_loaded", {})
    assert [numba_kernels.load_kernel(source) for source in sources] == first


_TWO_FOLDERS = """
import os, sys, warnings
import numpy as np, eqgraph as eg, eqgraph.tensor as et
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.exec.numba import program as numba_program
x, w = et.dmatrix("x"), et.dvector("w")
loss = et.tanh(x @ w).mean()
model = [x, w], [loss, eg.grad(loss, w)]
args = np.linspace(-1, 1, 6).reshape(3, 2), np.array([0.5, -2.0])
f = eg.function(*model, compile="background")   # the compile server fills the folder given here
assert f.wait_compiled(timeout=600)
f(*args)
os.environ["EQGRAPH_KERNEL_CACHE"] = sys.argv[1]
numba_kernels._loaded.clear()   # a fresh memo: the kernels are looked up again, in the other folder
numba_program._compile = lambda source: 1 / 0   # the node kernels run, not the whole function
warnings.simplefilter("ignore")
g = eg.function(*model, compile="deferred")
g.wait_compiled()
np.testing.assert_allclose(g(*args)[0], np.tanh(args[0] @ args[1]).mean(), rtol=1e-12)
print(g.stages.tier)
"""


@needs_numba
def test_kernels_from_two_cache_folders_run_in_one_process(tmp_path):
    """The same kernels loaded from one cache folder, then looked up afresh in another, which the
    first run fills and the second finds full: no kernel is loaded twice, and both runs are right."""
    shared = tmp_path / "shared"
    for run in range(2):
        env = {**os.environ, "EQGRAPH_KERNEL_CACHE": str(tmp_path / f"first{run}"),
               "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
        done = subprocess.run([sys.executable, "-c", _TWO_FOLDERS, str(shared)], env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0 and done.stdout.split() == ["numba-kernels"], done.stderr[-1500:]


@needs_numba
def test_a_function_of_shared_values_runs_as_the_whole_function_and_updates_them():
    # regression: a function reading shared variables (PyMC's pm.Data) kept the per-node program,
    # hundreds of times slower than the whole function on a hierarchical regression
    x = eg.shared(ARGS[0], name="x")
    w = et.dvector("w")
    steps = eg.shared(np.int64(0), name="steps")
    loss = et.tanh(x @ w).mean()
    f = eg.function([w], [loss, eg.grad(loss, w)], updates=[(steps, steps + 1)], compile="eager")
    for calls in (1, 2):
        _assert_right(f(ARGS[1]))
        assert f.stages.tier == "numba-whole" and steps.get_value() == calls
    x.set_value(2 * ARGS[0])   # read anew at each call
    t = np.tanh(2 * ARGS[0] @ ARGS[1])
    got = f(ARGS[1])
    np.testing.assert_allclose(got[0], t.mean(), rtol=1e-12)
    np.testing.assert_allclose(got[1], 2 * ARGS[0].T @ ((1 - t ** 2) / 3), rtol=1e-12)
    assert steps.get_value() == 3 and not np.shares_memory(got[1], x.get_value(borrow=True))
