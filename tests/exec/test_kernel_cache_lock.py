"""Two processes that need the same Numba module compile it once: the second waits for the
first's compile (a lock file per cache key) and loads it from the disk cache."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from eqgraph.exec.numba import kernels as numba_kernels

pytestmark = pytest.mark.skipif(numba_kernels.numba is None or os.name != "posix",
                                reason="needs Numba and POSIX file locks")

#: loads one kernel module and prints whether it came from the disk cache
LOADER = textwrap.dedent("""
    import sys
    from eqgraph.exec.numba import kernels
    source = open(sys.argv[1]).read()
    print("loading", flush=True)
    print(kernels.load_kernel(source).cache_hit, flush=True)
""")


def _source(go: Path) -> str:
    """A kernel module whose compile waits until ``go`` exists: the test decides when the first
    process's compile ends."""
    return textwrap.dedent(f"""
        import os, time
        import numba
        while not os.path.exists({str(go)!r}):
            time.sleep(0.02)

        @numba.njit("float64(float64)", cache=True)
        def kernel(x):
            return x + 1.0
    """)


def _start(source_file: Path, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", LOADER, str(source_file)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for(condition, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.02)


def test_a_process_needing_a_module_another_is_compiling_waits_and_loads_it(tmp_path, monkeypatch):
    go, source_file = tmp_path / "go", tmp_path / "source.py"
    source_file.write_text(_source(go))
    env = dict(os.environ, EQGRAPH_KERNEL_CACHE=str(tmp_path / "kernels"),
               PYTHONPATH=os.pathsep.join(sys.path))
    first = _start(source_file, env)
    try:
        # the first process has written the module and is compiling it (waiting for ``go``)
        _wait_for(lambda: any((tmp_path / "kernels").glob("k_*.py")), "the first compile to start")
        # not compiled yet: the PyTensor mode compiles it in the background rather than wait here
        monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path / "kernels"))
        assert not numba_kernels.on_disk(source_file.read_text())
        second = _start(source_file, env)
        try:
            assert second.stdout.readline().strip() == "loading"
            time.sleep(1.0)   # the second process is at the lock (or past it, were there none)
            go.touch()
            first_out, first_err = first.communicate(timeout=300)
            second_out, second_err = second.communicate(timeout=300)
        finally:
            second.kill()
    finally:
        first.kill()
    assert first.returncode == 0, first_err[-2000:]
    assert second.returncode == 0, second_err[-2000:]
    assert first_out.split()[-1] == "False"    # compiled it
    assert second_out.split()[-1] == "True"    # waited, then loaded it from the disk cache
    assert numba_kernels.on_disk(source_file.read_text())
