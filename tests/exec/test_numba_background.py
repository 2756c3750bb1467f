"""The background worker's order (the whole function first, on its own) and a compile server that
outlives its parent long enough to finish the batch it was compiling into the disk cache."""

import os
import subprocess
import sys
import time

import pytest

import eqgraph as eg
from eqgraph.exec.numba import background
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.settings import config

needs_numba = pytest.mark.skipif(not config.numba, reason="Numba is off (EQGRAPH_NUMBA=0)")


def test_the_whole_function_is_compiled_and_installed_before_the_kernels(monkeypatch):
    events = []

    def build(name):
        return background.Build(lambda: events.append(f"build {name}") or name,
                                lambda made: events.append(f"install {made}"), source=f"source {name}",
                                whole=name == "whole")

    def compile_in_server(worker, sources):
        events.append(f"server {sources}")
        return {source: True for source in sources}

    monkeypatch.setattr(background._Worker, "_compile_in_server", compile_in_server)
    compiles = background.Compiles("background")
    compiles.builds = [build("kernel a"), build("whole"), build("kernel b")]
    compiles.start()
    assert compiles.wait(timeout=60)
    assert events == ["server ['source whole']", "build whole", "install whole",
                      "server ['source kernel a', 'source kernel b']", "build kernel a", "install kernel a",
                      "build kernel b", "install kernel b"]
    assert compiles.whole == "compiled" and compiles.kernels == 2


def test_programs_without_a_whole_function_send_their_kernels_in_one_batch():
    compiles = background.Compiles("deferred")
    kernels = [background.Build(lambda: None, lambda made: None, source=f"k{i}") for i in range(3)]
    compiles.builds = list(kernels)
    assert compiles.batches() == [kernels]


_EXITS_AT_ONCE = (
    "import numpy as np, eqgraph as eg, eqgraph.tensor as et\n"
    "x, w = et.dmatrix('x'), et.dvector('w')\n"
    "loss = et.tanh(x @ w).mean()\n"
    "f = eg.function([x, w], [loss, eg.grad(loss, w)], compile='background')\n"
    "f(np.ones((3, 2)), np.ones(2))\n"
    "print(f.stages.whole_function)\n")


# the worker thread reaches the server only after the main thread has exited, as on a loaded machine
_SLOW_WORKER = (
    "import time\n"
    "from eqgraph.exec.numba import background\n"
    "started = background._Worker._server\n"
    "background._Worker._server = lambda self, *a, **k: (time.sleep(2), started(self, *a, **k))[1]\n")


@needs_numba
@pytest.mark.parametrize("worker", ["prompt", "slow"])
def test_a_process_that_exits_leaves_the_whole_function_it_started_in_the_cache(tmp_path, monkeypatch, worker):
    env = {**os.environ, "EQGRAPH_KERNEL_CACHE": str(tmp_path), "EQGRAPH_GRAPH_CACHE": "",
           "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    script = (_SLOW_WORKER if worker == "slow" else "") + _EXITS_AT_ONCE
    first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                           timeout=600)
    assert first.returncode == 0 and first.stdout.strip() == "pending", first.stderr[-800:]
    # the source the whole function of that graph has, from a compile here that builds nothing
    import eqgraph.tensor as et
    x, w = et.dmatrix("x"), et.dvector("w")
    loss = et.tanh(x @ w).mean()
    f = eg.function([x, w], [loss, eg.grad(loss, w)], compile="deferred")
    [whole] = [b.source for b in f.program.compiles.builds if b.whole]
    key = numba_kernels._key(whole)
    deadline = time.monotonic() + 600
    while not numba_kernels._on_disk(tmp_path, key):   # the detached server is still compiling
        assert time.monotonic() < deadline, "the compile server left nothing in the cache"
        time.sleep(0.5)
    second = subprocess.run([sys.executable, "-c", _EXITS_AT_ONCE.replace(
        "print(f.stages.whole_function)", "f.wait_compiled(600)\nprint(f.stages.whole_function)")],
        env=env, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0 and second.stdout.strip() == "loaded from cache", second.stderr[-800:]


@needs_numba
def test_a_prestarted_server_is_the_one_the_builds_use(tmp_path, monkeypatch):
    import eqgraph.tensor as et
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    background.prestart()
    server = background._worker().server
    assert server is not None and server.poll() is None
    x, w = et.dmatrix("x"), et.dvector("w")
    loss = (et.tanh(x @ w) * 3).mean()
    f = eg.function([x, w], [loss, eg.grad(loss, w)], compile="background")
    assert f.wait_compiled(timeout=600)
    assert background._worker().server is server and f.stages.whole_function == "compiled"


@needs_numba
def test_a_prestarted_server_warms_up_before_any_request(tmp_path, monkeypatch):
    """``prestart``'s server reads its first line (where to import from) at once, not with the
    first request, and compiles the common helpers into the disk cache while no build is sent."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path / "kernels"))
    background.prestart()
    try:
        deadline = time.monotonic() + 600   # a bound on the wait, not a measured time
        while not list(tmp_path.rglob("*broadcast_dim*.nbi")) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert list(tmp_path.rglob("*broadcast_dim*.nbi"))
    finally:
        background._worker().stop()


_AFTER_WARM_UP = """
import numpy as np
import eqgraph as eg
import eqgraph.tensor as et
from numba.core import event
from eqgraph.exec.numba import kernels, program

x, m, s = et.dvector("x"), et.dmatrix("m"), et.dscalar("s")
data = et.constant(np.linspace(0.0, 1.0, 12).reshape(4, 3))
cost = ((x - s) ** 2).sum() + (m * x).sum() + m.sum(axis=1).sum() + et.dot(data, x).sum()
f = eg.function([x, m, s], [cost, *eg.grad(cost, [x, m, s])], compile="deferred")
program.warm_up()
compiled = []

class Compiles(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__module__ + "." + ev.data["dispatcher"].py_func.__qualname__)

    def on_end(self, ev):
        pass

event.register("numba:compile", Compiles())
kernels.load_kernel(f.program.call.whole_source)
print([name for name in compiled if name.startswith("eqgraph.") or "dot" in name])
"""


@needs_numba
def test_after_the_warm_up_a_whole_function_compiles_none_of_the_helpers(tmp_path):
    """``warm_up`` compiles the helpers for the argument types the translations give them (a
    literal is a type of its own): a whole function of vector and matrix sums, with the
    gradients' broadcasting, and of a constant matrix's product with a vector then compiles only
    its own code."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), EQGRAPH_KERNEL_CACHE=str(tmp_path / "kernels"),
               EQGRAPH_GRAPH_CACHE="")
    out = subprocess.run([sys.executable, "-c", _AFTER_WARM_UP], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-800:]
    assert out.stdout.strip().splitlines()[-1] == "[]"


@needs_numba
def test_the_warm_up_stops_when_asked():
    from eqgraph.exec.numba import program as numba_program
    asked = []
    numba_program.warm_up(stop=lambda: asked.append(1) or True)
    assert asked == [1]
