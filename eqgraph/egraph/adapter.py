"""The one module that talks to egglog, so that its private parts stay behind one interface.

Everything goes through egglog's own text language on the low-level
bindings: commands are sent in small batches, outputs are read back, and the
e-graph's tables are read back as Python values (``tables``) for extraction and
inspection.
"""

from __future__ import annotations

import functools
import json
import threading

from egglog import bindings

#: Top-level forms per ``run`` when sending long programs (rule files, the dtype tables):
#: egglog's time and peak memory grow faster than a program's length, so a long file sent
#: in one piece costs far more than the same forms sent a few at a time.
FORMS_PER_RUN = 10


#: e-graphs whose last Python reference died on a thread other than their own: pyo3 may not
#: free them there (it reports an error and leaks them), so they are kept, on purpose
_ORPHANS: list = []
_MISSING = object()


class EgglogError(RuntimeError):
    """egglog rejected a command; the message names the file and line where known."""


class EgglogPanic(EgglogError):
    """egglog itself crashed (a Rust panic) while running a command; the session is broken."""


def _is_panic(err: BaseException) -> bool:
    # pyo3's PanicException derives from BaseException and lives in a module
    # (pyo3_runtime) that cannot be imported, so it is recognised by name
    return type(err).__name__ == "PanicException"


class Session:
    """An egglog e-graph fed with text commands, used only by the thread that made it.

    egglog's e-graph is "unsendable": touching it from another thread panics. A
    session refuses that with a clear error instead, and after any panic it is
    ``broken``: it runs nothing more (``pop`` does nothing), so a pool throws it away.
    """

    def __init__(self, fact_directory=None):
        # ``input`` commands read their files relative to ``fact_directory``
        self._egraph = bindings.EGraph(fact_directory=fact_directory)
        self.thread = threading.get_ident()
        self.depth = 0        # snapshots on egglog's stack (``push`` minus ``pop``)
        self.broken = False   # egglog panicked: the e-graph's state is unknown
        self._declared: list[set[str]] = [set()]  # names ``declare_once`` declared, per push level

    def run(self, text: str, filename: str | None = None) -> list:
        """Parse and run ``text``; return egglog's outputs."""
        self._check_usable()
        try:
            commands = self._egraph.parse_program(text, filename=filename)
            return self._egraph.run_program(*commands)
        except bindings.EggSmolError as err:
            raise EgglogError(str(err)) from None
        except BaseException as err:
            if not _is_panic(err):
                raise
            self.broken = True
            where = f" (running {filename})" if filename else ""
            message = (str(err).splitlines() or [repr(err)])[0]  # the first line; a backtrace may follow
            raise EgglogPanic(f"egglog panicked{where}: {message}") from err

    def __del__(self):
        # a compiled function made in one thread and dropped in another holds its session
        if threading.get_ident() != getattr(self, "thread", threading.get_ident()):
            _ORPHANS.append(getattr(self, "_egraph", None))

    def _check_usable(self) -> None:
        if self.broken:
            raise EgglogPanic("this egglog session panicked earlier and cannot be used again")
        if threading.get_ident() != self.thread:
            raise EgglogError("an egglog session was used from a thread other than the one that made it "
                              "(egglog objects cannot cross threads)")

    def sizes(self) -> dict[str, int]:
        """Rows per function/constructor (``print-size``)."""
        [out] = self.run("(print-size)")
        return dict(out.sizes)

    def run_schedule(self, schedule: str):
        """Run a schedule; return egglog's RunReport."""
        [out] = self.run(f"(run-schedule {schedule})")
        return out.report

    def declare_once(self, name: str, command: str, filename: str | None = None) -> bool:
        """Run ``command``, which declares ``name``, unless this session holds it already (a
        declaration made after a ``push`` is gone after its ``pop``); whether it ran."""
        if any(name in level for level in self._declared):
            return False
        self.run(command, filename=filename)
        self._declared[-1].add(name)
        return True

    def push(self) -> None:
        self.run("(push)")
        self.depth += 1
        self._declared.append(set())

    def pop(self) -> None:
        if self.broken:  # nothing left to restore: the session is thrown away
            return
        self.run("(pop)")
        self.depth -= 1
        self._declared.pop()

    def tables(self, names, containers: dict[str, tuple[str, str]]) -> dict[str, list[tuple]]:
        """The rows of the functions and constructors ``names``, in the order egglog declared
        them: name -> [(input, ..., output)], each value decoded to Python.

        Primitives become int, float, str or bool; an e-class becomes its id (an int, the
        same as the ``T-<id>`` of ``serialize``); ``containers`` names the container sorts:
        sort -> ("vec" | "set", the element sort), a vec read as a tuple, a set as a frozenset.
        A relation's output (its Unit) is None. This reads egglog's frozen tables directly, and
        only the tables asked for: serializing the whole e-graph to JSON and parsing it costs
        several times more on large graphs.
        """
        self._check_usable()
        wanted, found = set(names), {}
        decoder = _Decoder(self._egraph, containers)
        for name, function in self._egraph.freeze().functions.items():
            if name in wanted:
                readers = [decoder.reader(sort) for sort in [*function.input_sorts, function.output_sort]]
                found[name] = [tuple(read(v) for read, v in zip(readers, [*row.inputs, row.output]))
                               for row in function.rows]
        return found

    def serialize(self) -> dict:
        """The e-graph as egraph-serialize JSON: ``{"nodes": ..., "class_data": ...}``."""
        self._check_usable()
        return json.loads(self._egraph.serialize([]).to_json())

    def to_dot(self) -> str:
        self._check_usable()
        return self._egraph.serialize([]).to_dot()


class _Decoder:
    """Egglog values to Python values (``Session.tables``). It keeps no bound method of the
    e-graph: a reference cycle through one would free the e-graph in whichever thread the
    garbage collector next runs, and egglog refuses that."""

    def __init__(self, egraph, containers: dict[str, tuple[str, str]]):
        self.egraph = egraph
        self.containers = containers
        self.caches: dict[str, dict] = {}  # sort -> value -> decoded: analyses share a few set values

    def reader(self, sort: str):
        """A function from a value of ``sort`` to Python (a row's column, read many times)."""
        egraph = self.egraph
        primitive = {"i64": egraph.value_to_i64, "f64": egraph.value_to_f64, "String": egraph.value_to_string,
                     "bool": egraph.value_to_bool}
        if sort in primitive:
            return primitive[sort]
        if sort in self.containers:  # analyses share a few set values: decoded once each
            return functools.partial(self.decode, sort)
        if sort.startswith("@"):  # a relation's Unit
            return _unit
        return egraph.value_to_i64  # an e-class: its id

    def decode(self, sort: str, value):
        cache = self.caches.setdefault(sort, {})
        decoded = cache.get(value, _MISSING)
        if decoded is _MISSING:
            kind, element = self.containers[sort]
            read = self.reader(element)
            if kind == "vec":
                decoded = tuple(read(v) for v in self.egraph.value_to_vec(value))
            else:
                decoded = frozenset(read(v) for v in self.egraph.value_to_set(value))
            cache[value] = decoded
        return decoded


def _unit(value) -> None:
    return None
