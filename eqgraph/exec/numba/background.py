"""Numba compiles off the calling thread.

A linked program's Numba forms (its whole function, ``program.py``; each node's kernel,
``numba_kernels.tier``) are collected while it is linked (``collecting``) into one ``Compiles``,
which builds them as ``eqgraph.function(..., compile=...)`` says:

- "background" (the default): one worker thread per process builds them while the calls run the
  NumPy program, and each takes over when it is ready, so no call waits on a compile;
- "eager": built (or loaded from the disk cache) before ``eqgraph.function`` returns;
- "deferred": built only when ``f.wait_compiled()`` asks, on the thread that asks.

Numba's typing holds the GIL: compiled on a thread of the calling process, it would stall that
process's calls for a switch interval at a time.  So the worker sends each module source to a
compile server, a child process that compiles it into the disk cache
(``numba_kernels.load_kernel``), and then loads it from there.  The server is started on the
first background build, or ahead of it (``prestart``), and then first compiles the helpers most
whole functions call (``numba_program.warm_up``) until a build comes.  It ends after its parent:
it reads requests from a pipe that the parent's exit closes, finishing the batch it is compiling first, so that what a short process started
compiling is in the disk cache for the next one.  Builds with no source to send (Numba functions of
eqgraph's own modules, compiled on first use) run on the worker thread.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from eqgraph.settings import COMPILE_CHOICES

#: sources that failed to compile in the server, with the error: the build does not try again
FAILED: dict = {}


@dataclass
class Build:
    """One Numba form of a program: ``build()`` makes it (None where that failed), ``install``
    puts it where the program calls it."""

    build: Callable[[], object]
    install: Callable[[object], None]
    source: str | None = None    # the module source the compile server can compile into the disk cache
    whole: bool = False          # the whole function (``program.py``), not a node's kernel


class Compiles:
    """The Numba builds of one linked program, and how far they have got."""

    def __init__(self, mode: str):
        self.mode = mode             # "background", "eager", "deferred", or "off" (Numba off: no builds)
        self.builds: list[Build] = []
        self.whole = None            # the whole function: None (none), "pending", "compiled", "loaded from cache", "failed"
        self.whole_globals = None    # the whole function's caller's globals (``last``: whether it ran the last call)
        self.kernels = 0             # node kernels installed
        self.done = threading.Event()
        self._state = "pending"      # -> "running" -> "done"
        self._lock = threading.Lock()
        if mode == "off":   # nothing to build: waiting returns at once
            self._state = "done"
            self.done.set()

    def add(self, build, install, source=None, whole=False) -> None:
        self.builds.append(Build(build, install, source, whole))
        if whole:
            self.whole = "pending"

    def start(self) -> None:
        """Build now ("eager"), hand the builds to the worker ("background"), or wait ("deferred")."""
        if not self.builds:
            self._state = "done"
            self.done.set()
        elif self.mode == "eager":
            self.run()
        elif self.mode == "background":
            _worker().submit(self)

    def wait(self, timeout: float | None = None) -> bool:
        """Whether every build is done, waiting up to ``timeout`` seconds (None: for good); a
        deferred program builds now, on this thread."""
        if self.mode == "deferred":
            self.run()
        return self.done.wait(timeout)

    def run(self, compiled: dict | None = None) -> None:
        """Build and install every form, unless another thread has begun to.  ``compiled``:
        {source: whether the compile server compiled it (False: it was on disk)}."""
        if self.begin():
            try:
                self.install(self.builds, compiled or {})
            finally:
                self.finish()

    def begin(self) -> bool:
        """Claim the builds for this thread; False where another thread has them."""
        with self._lock:
            if self._state != "pending":
                return False
            self._state = "running"
            return True

    def batches(self) -> list[list[Build]]:
        """The builds in the order the compile server takes them: the whole function alone first,
        as it runs every step once it is in; then the node kernels, which serve the calls the
        whole function leaves to the program (inputs it was measured slower on)."""
        whole = [b for b in self.builds if b.whole]
        return [batch for batch in (whole, [b for b in self.builds if not b.whole]) if batch]

    def install(self, builds: list[Build], compiled: dict) -> None:
        for build in builds:
            self._install(build, compiled.get(build.source))

    def finish(self) -> None:
        self._state = "done"
        self.done.set()

    def _install(self, build: Build, compiled_by_server) -> None:
        try:
            made = build.build()
            if made is not None:
                build.install(made)
        except Exception as err:  # noqa: BLE001  (a Numba gap or bug: the NumPy program keeps running)
            warnings.warn(f"eqgraph: Numba could not build a compiled form; NumPy runs instead "
                          f"({type(err).__name__}: {str(err)[:200]})", RuntimeWarning, stacklevel=2)
            made = None
        if build.whole:
            hit = getattr(made, "cache_hit", False) and not compiled_by_server
            self.whole = "failed" if made is None else "loaded from cache" if hit else "compiled"
        elif made is not None:
            self.kernels += 1

    @property
    def tier(self) -> str:
        """What ran the last call: "numba-whole", else the program with Numba kernels installed
        ("numba-kernels") or without ("numpy")."""
        if self.whole_globals is not None and self.whole_globals["last"]:
            return "numba-whole"
        return "numba-kernels" if self.kernels else "numpy"


_collecting = threading.local()


@contextlib.contextmanager
def collecting(mode: str | None):
    """Collect the builds that the Numba tiers register while a program is linked, into the
    ``Compiles`` yielded; ``mode`` None (Numba off) collects none: the tiers keep NumPy."""
    if mode not in (None, *COMPILE_CHOICES):
        raise ValueError(f"compile must be one of {', '.join(map(repr, COMPILE_CHOICES))}, not {mode!r}")
    compiles = Compiles(mode or "off")
    previous = getattr(_collecting, "compiles", None)
    _collecting.compiles = compiles if mode is not None else None
    try:
        yield compiles
    finally:
        _collecting.compiles = previous


def collector() -> Compiles | None:
    """The ``Compiles`` of the program being linked on this thread, or None (no Numba)."""
    return getattr(_collecting, "compiles", None)


# -- the worker and its compile server -----------------------------------------------------------
_SERVER = r"""
import json, select, sys, warnings
start = json.loads(sys.stdin.readline())
sys.path[:0] = start["path"]
warnings.simplefilter("ignore")
from eqgraph.exec.numba import kernels as numba_kernels
if start["warm"]:
    try:
        from eqgraph.exec.numba import program
        program.warm_up(stop=lambda: bool(select.select([sys.stdin], [], [], 0)[0]))
    except Exception:   # the builds compile what the warm-up could not
        pass
for line in sys.stdin:
    replies = []
    for source in json.loads(line):
        try:
            replies.append(not numba_kernels.load_kernel(source).cache_hit)
        except Exception as err:
            replies.append(f"{type(err).__name__}: {err}"[:500])
    print(json.dumps(replies), flush=True)
"""


#: how long a process's exit waits for its worker thread to send the server what was submitted
HANDOVER_SECONDS = 10.0


class _Worker:
    """One daemon thread building the programs handed to it, one after the other, skipping those
    no longer referenced (a program dropped before its turn costs nothing)."""

    def __init__(self):
        self.pid = os.getpid()
        self.queue: queue.Queue = queue.Queue()
        self.server = None
        self.server_cache = None     # the cache folder the server compiles into
        self.server_failed = False
        self._server_lock = threading.Lock()   # the worker thread and ``prestart`` may both start it
        self.handed_over = threading.Event()   # set while nothing submitted waits to reach the server
        self.handed_over.set()
        self._queue_lock = threading.Lock()
        threading.Thread(target=self._loop, name="eqgraph-numba-compiles", daemon=True).start()
        atexit.register(self.detach)

    def submit(self, compiles: Compiles) -> None:
        with self._queue_lock:
            self.handed_over.clear()
            self.queue.put(weakref.ref(compiles))

    def _loop(self) -> None:
        while True:
            self._mark_handed_over()
            compiles = self.queue.get()()
            if compiles is None or not compiles.begin():
                continue
            try:
                for batch in compiles.batches():
                    compiles.install(batch, self._compiled(batch))
            finally:
                compiles.finish()
            del compiles

    def _compiled(self, builds: list[Build]) -> dict:
        """{source: whether the server compiled it} for ``builds``, compiled into the disk cache
        by the server; {} where there is no server (the builds then compile on this thread)."""
        sources = [b.source for b in builds if b.source is not None]
        try:
            return self._compile_in_server(sources) if sources else {}
        except Exception:  # noqa: BLE001  (no server, or it died)
            self.stop()
            self.server_failed = True
            return {}
        finally:   # without a server the builds compile on this thread: nothing left to hand over
            self._mark_handed_over()

    def _mark_handed_over(self) -> None:
        with self._queue_lock:
            if self.queue.empty():
                self.handed_over.set()

    def _compile_in_server(self, sources: list) -> dict:
        """{source: whether the server compiled it}; a source it could not compile goes to ``FAILED``."""
        server = self._server(os.environ.get("EQGRAPH_KERNEL_CACHE"))
        if server is None:
            return {}
        server.stdin.write(json.dumps(sources) + "\n")
        server.stdin.flush()
        self._mark_handed_over()
        replies = json.loads(server.stdout.readline())
        compiled = {}
        for source, reply in zip(sources, replies):
            if isinstance(reply, str):
                FAILED[source] = reply
            else:
                compiled[source] = reply
        return compiled

    def _server(self, cache: str | None, warm: bool = False):
        """The server compiling into the cache folder ``cache`` (None: the default one).  A server
        serves one folder: a process loads a kernel once (``numba_kernels.load_kernel``), so one
        that had loaded it from another folder would not compile it into this one.  ``warm``: a
        server started now first compiles the helpers most whole functions call
        (``numba_program.warm_up``) until the first request comes."""
        with self._server_lock:
            return self._started_server(cache, warm)

    def _started_server(self, cache: str | None, warm: bool):
        if self.server is not None and self.server_cache != cache:
            self.stop()
        if self.server is None and not self.server_failed:
            env = {k: v for k, v in os.environ.items() if k != "EQGRAPH_KERNEL_CACHE"}
            if cache is not None:
                env["EQGRAPH_KERNEL_CACHE"] = cache
            try:
                self.server = subprocess.Popen([sys.executable, "-c", _SERVER], stdin=subprocess.PIPE, env=env,
                                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                self.server_cache = cache
                self.server.stdin.write(json.dumps({"path": sys.path, "warm": warm}) + "\n")
                self.server.stdin.flush()
            except OSError:
                self.server_failed = True
        return self.server

    def detach(self) -> None:
        """At this process's exit: close the server's pipe and leave it to finish the batch it is
        compiling into the disk cache (then it reads the end of its input and exits), so that the
        next process loads what this one paid for; a server with nothing to do exits at once.
        A build submitted just before the exit is first handed to the server (this thread would
        otherwise close the pipe before the worker thread, starved of the GIL, had written it)."""
        self.handed_over.wait(HANDOVER_SECONDS)
        server, self.server = self.server, None
        if server is not None:
            with contextlib.suppress(OSError, ValueError):
                server.stdin.close()

    def stop(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            with contextlib.suppress(OSError, ValueError):
                server.stdin.close()
            server.kill()
            server.wait()


def prestart() -> None:
    """Start this process's compile server now, for the current cache folder, so that its start
    (a Python process importing Numba and eqgraph) and its compile of the common helpers overlap
    the e-graph compile that comes before the first build is handed to it."""
    _worker()._server(os.environ.get("EQGRAPH_KERNEL_CACHE"), warm=True)


_the_worker: _Worker | None = None
_worker_lock = threading.Lock()


def _worker() -> _Worker:
    """This process's worker (a forked child starts its own: the parent's thread is not in it)."""
    global _the_worker
    with _worker_lock:
        if _the_worker is None or _the_worker.pid != os.getpid():
            _the_worker = _Worker()
        return _the_worker


__all__ = ["Build", "Compiles", "FAILED", "collecting", "collector", "prestart"]
