"""The on-disk cache of optimized graphs: a process that compiles a graph another process already
compiled loads what saturation and extraction chose instead of running them again.

The key is a SHA-256 over a canonical serialization of everything the choice depends on: the
graph (each node's op and its properties, the types, names and constant values, in the graph's
topological order, with variables numbered by position), the rule files as loaded, the limits,
the cost model, ``exact_extraction``, the settings that reach the rules, and eqgraph's own source.
Nothing in it depends on object ids or on the order of a dict or set. A graph holding something
that has no canonical form (a callable, an object array, a structure nested past ``MAX_DEPTH``)
is not cached.

The value is the extracted graph before fusion (fusion and linking are cheap and run again), as
a flat list of variables and nodes so that a deep graph pickles without deep recursion; the
graph's inputs are stored as their positions and become the compiling graph's own inputs, which
keeps shared variables bound to this process's values. An entry is checked three times: its
payload's hash, the key it was stored under, and the canonical form of the graph it rebuilds
against the one it was stored from. An entry that fails any check, or cannot be read, is
ignored, and the compile that follows writes a good one over it; entries are written to a
temporary file and renamed into place, so a reader never sees half of one.

Where: ``eqgraph.config.graph_cache`` (a directory; "" turns the cache off), by default
``EQGRAPH_GRAPH_CACHE`` or ``~/.cache/eqgraph/graphs``. How much: ``eqgraph.config.graph_cache_size``
bytes of entries; a store that goes past it deletes the least recently used entries first (a
load sets its entry's modification time, which is what "used" reads).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import enum
import hashlib
import inspect
import os
import pickle
import sys
import tempfile
import types
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from eqgraph.extract.extraction import Extraction
from eqgraph.settings import config
from eqgraph.terms.basic import Apply, Constant, Variable
from eqgraph.terms.fgraph import FunctionGraph
from eqgraph.terms.walk import toposort

#: part of every key and of every entry's header: a change of either layout makes old entries misses
FORMAT = 1
MAGIC = f"eqgraph graph cache {FORMAT}\n".encode()
#: how deep op properties may nest before a graph counts as having no canonical form
MAX_DEPTH = 40


class Uncacheable(Exception):
    """Something in the graph or the settings has no canonical serialization."""


def cache_dir() -> Path | None:
    """The cache's directory, or None when the cache is off."""
    where = config.graph_cache
    if where is None:
        where = os.environ.get("EQGRAPH_GRAPH_CACHE", str(Path.home() / ".cache" / "eqgraph" / "graphs"))
    return Path(where) if where else None


@dataclass
class Entry:
    """What a key found: the saturation report and the extraction, whose ``fgraph`` is the graph."""

    report: object
    extraction: Extraction
    path: Path


# -- the key ---------------------------------------------------------------------------------------

def key(graph: FunctionGraph, rulesets, limits, cost_model, exact_extraction: bool, impl: str) -> str | None:
    """The cache key of compiling ``graph`` with these settings, or None where the cache is off
    or something has no canonical form."""
    if cache_dir() is None:
        return None
    canon = _Canon()
    try:
        canon.feed(("format", FORMAT, "eqgraph", _source_digest(),
                    "python", sys.version_info[:2], "numpy", np.__version__,
                    "settings", config.floatX, config.cast_policy, config.numba, impl,
                    "rulesets", [_ruleset_form(r) for r in rulesets],
                    "limits", limits, "cost", cost_model, "exact", exact_extraction))
        _feed_graph(canon, graph)
    except Uncacheable:
        return None
    return canon.hexdigest()


def _ruleset_form(ruleset) -> tuple:
    """What of a loaded ruleset decides what it does: its program text, mode and assumptions."""
    return (ruleset.name, ruleset.program, ruleset.saturate, sorted(ruleset.granted),
            [getattr(r, "name", str(r)) for r in ruleset.withheld])


def graph_digest(graph: FunctionGraph) -> str:
    """The canonical form of ``graph`` alone, hashed (raises Uncacheable)."""
    canon = _Canon()
    _feed_graph(canon, graph)
    return canon.hexdigest()


def _feed_graph(canon: _Canon, graph: FunctionGraph) -> None:
    """Feed ``graph`` to ``canon``: inputs by position, nodes in topological order, each
    variable by its number in that walk (constants by value)."""
    number = {var: i for i, var in enumerate(graph.inputs)}
    canon.feed(("inputs", [(type(v), v.type, v.name) for v in graph.inputs]))

    def ref(var):
        if var in number:
            return number[var]
        if isinstance(var, Constant):
            return ("constant", type(var), var.type, var.data, var.name)
        raise Uncacheable(f"{var} is neither an input, a constant nor computed by the graph")

    for node in toposort(graph.outputs, graph.inputs):
        if type(node) is not Apply:
            raise Uncacheable(f"a node of class {type(node).__name__}")
        canon.feed(("node", node.op, [ref(v) for v in node.inputs],
                    [(type(v), v.type, v.name) for v in node.outputs]))
        for var in node.outputs:
            number[var] = len(number)
    canon.feed(("outputs", [ref(v) for v in graph.outputs]))


class _Canon:
    """Collects values in a form that two equal values share in any process, then hashes it.

    An op or a type met again (the same object) is written as the hash of its form, computed
    once: a graph's nodes share a few op and type objects many times over."""

    def __init__(self, memo: dict | None = None):
        self.parts: list[str] = []
        self.memo = {} if memo is None else memo   # id -> (the object, kept alive; its hash)

    def hexdigest(self) -> str:
        return hashlib.sha256("".join(self.parts).encode("utf-8", "surrogatepass")).hexdigest()

    def put(self, *parts) -> None:
        for part in parts:   # each part prefixed by its length: no two sequences join alike
            text = part.hex() if isinstance(part, bytes) else str(part)
            self.parts.append(f"{len(text)}:{text}")

    def feed(self, value, depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            raise Uncacheable("values nested too deep")
        deeper = depth + 1
        if value is None or isinstance(value, (bool, int, str, bytes)):
            self.put(type(value).__name__, value)
        elif isinstance(value, float):
            self.put("float", value.hex())
        elif isinstance(value, (tuple, list)):
            self.put(type(value).__name__, len(value))
            for item in value:
                self.feed(item, deeper)
        elif isinstance(value, complex):
            self.put("complex", value.real.hex(), value.imag.hex())
        elif isinstance(value, enum.Enum):
            self.put("enum", _class_name(type(value)), value.name)
        elif isinstance(value, type):
            self.put("class", _class_name(value), _class_source(value))
        elif isinstance(value, np.ndarray):
            self._array(value)
        elif isinstance(value, np.dtype):
            self.put("dtype", value.str)
        elif isinstance(value, np.generic):
            self.put("numpy", value.dtype.str, value.tobytes())
        elif isinstance(value, dict):
            self._items("dict", value.items(), deeper)
        elif isinstance(value, (set, frozenset)):
            self._items("set", ((item, None) for item in value), deeper)
        elif isinstance(value, slice):
            self.feed(("slice", value.start, value.stop, value.step), deeper)
        elif isinstance(value, FunctionGraph):   # a loop's or a composite's inner graph
            self.put("graph", graph_digest(value))
        elif isinstance(value, (Variable, Apply)):
            raise Uncacheable(f"a property holds the graph object {value}")
        elif isinstance(value, np.ufunc):
            self.put("ufunc", value.__name__)
        elif isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
            raise Uncacheable(f"a property holds the callable {value!r}")
        else:
            self._object(value, deeper)

    def _array(self, value: np.ndarray) -> None:
        if value.dtype.hasobject:
            raise Uncacheable("an array of Python objects")
        self.put("ndarray", value.dtype.str, value.shape,
                 hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest())

    def _items(self, kind: str, items, depth: int) -> None:
        """A dict's items or a set's members in the order of their own canonical forms."""
        forms = []
        for k, v in items:
            one = _Canon(self.memo)
            one.feed((k, v), depth)
            forms.append(one.hexdigest())
        self.put(kind, len(forms), *sorted(forms))

    def _object(self, value, depth: int) -> None:
        """An op, a type, a cost model: its class and what defines it (``__props__``, a
        dataclass's fields, else its attributes), hashed once per object."""
        known = self.memo.get(id(value))
        if known is None:
            cls = type(value)
            props = getattr(cls, "__props__", None)
            if props is not None:
                state = [(p, getattr(value, p)) for p in props]
            elif dataclasses.is_dataclass(value):
                state = [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)]
            elif hasattr(value, "__dict__"):
                state = sorted(vars(value).items())
            else:
                raise Uncacheable(f"no canonical form for {cls.__name__} {value!r}")
            one = _Canon(self.memo)
            one.put("object", _class_name(cls), _class_source(cls))
            one.feed(state, depth)
            known = self.memo[id(value)] = (value, one.hexdigest())
        self.put("object", known[1])


def _class_name(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


_SOURCES: dict = {}


def _class_source(cls) -> str:
    """The hash of the file defining ``cls`` when it is not eqgraph's (eqgraph's own source is
    in every key): a user's op whose code changed makes a new key."""
    module = cls.__module__
    if module == "eqgraph" or module.startswith("eqgraph.") or module == "builtins":
        return ""
    if cls not in _SOURCES:
        try:
            _SOURCES[cls] = hashlib.sha256(Path(inspect.getfile(cls)).read_bytes()).hexdigest()
        except (TypeError, OSError):   # a class with no file (built in, made at run time)
            _SOURCES[cls] = module
    return _SOURCES[cls]


_SOURCE_DIGEST: list = []


def _source_digest() -> str:
    """A hash of eqgraph's Python files (its version number among them), read once per process:
    any change to the compiler makes new keys, whatever its version number says."""
    if not _SOURCE_DIGEST:
        digest = hashlib.sha256()
        root = Path(__file__).parent
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
        _SOURCE_DIGEST.append(digest.hexdigest())
    return _SOURCE_DIGEST[0]


# -- the value -------------------------------------------------------------------------------------

def store(key_: str | None, graph: FunctionGraph, report, extraction: Extraction) -> Path | None:
    """Write what saturation and extraction chose for ``graph`` under ``key_``; None where it is
    not written (no key, a result that depended on the clock, a graph that does not round-trip)."""
    if key_ is None or extraction.stopped or str(report.stop_reason) == "seconds":
        return None
    try:
        payload = pickle.dumps(_flatten(key_, graph, report, extraction), protocol=pickle.HIGHEST_PROTOCOL)
        if _rebuild(pickle.loads(payload), key_, graph) is None:
            return None
    except (Uncacheable, pickle.PicklingError, TypeError, AttributeError, RecursionError, ValueError):
        return None
    directory = cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{key_}.graph"
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".tmp-", delete=False) as out:
            out.write(MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
        os.replace(out.name, path)
    except OSError:   # a read-only or full disk leaves the compile uncached, not failed
        return None
    evict(directory, config.graph_cache_size)
    return path


def evict(directory: Path, limit: int) -> list[Path]:
    """Delete the least recently used entries of ``directory`` until the rest take at most
    ``limit`` bytes; the entries deleted. Another process may delete or replace an entry at the
    same time: what is gone already counts as deleted."""
    entries = []
    for path in directory.glob("*.graph"):
        try:
            info = path.stat()
        except OSError:
            continue
        entries.append((info.st_mtime, info.st_size, path))
    total = sum(size for _, size, _ in entries)
    deleted = []
    for _, size, path in sorted(entries):
        if total <= limit:
            break
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError:
            continue
        total -= size
        deleted.append(path)
    return deleted


def load(key_: str | None, graph: FunctionGraph) -> Entry | None:
    """What ``store`` wrote under ``key_``, rebuilt on ``graph``'s inputs; None for a miss or an
    entry that fails a check."""
    if key_ is None:
        return None
    path = cache_dir() / f"{key_}.graph"
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    with contextlib.suppress(OSError):   # a use: eviction deletes the least recently used first
        os.utime(path)
    header, _, rest = blob.partition(b"\n")
    checksum, _, payload = rest.partition(b"\n")
    if header + b"\n" != MAGIC or hashlib.sha256(payload).hexdigest().encode() != checksum:
        return None
    try:
        found = _rebuild(pickle.loads(payload), key_, graph)
    except Exception:  # noqa: BLE001  an entry from another environment: recompiling is always safe
        return None
    return None if found is None else Entry(*found, path)


def _flatten(key_: str, graph: FunctionGraph, report, extraction: Extraction) -> dict:
    """The extracted graph as flat lists: each variable copied without its owner, each node
    as (op, input numbers, output numbers); the inputs are numbered by position."""
    fgraph = extraction.fgraph
    if list(fgraph.inputs) != list(graph.inputs):
        raise Uncacheable("the extracted graph's inputs are not the compiled graph's")
    number = {var: i for i, var in enumerate(graph.inputs)}
    variables, nodes = [], []

    def ref(var) -> int:
        if var not in number:
            if not isinstance(var, Constant) or var.owner is not None:
                raise Uncacheable(f"{var} is not computed in the graph")
            number[var] = len(graph.inputs) + len(variables)
            variables.append(_detached(var))
        return number[var]

    for node in toposort(fgraph.outputs, fgraph.inputs):
        if type(node) is not Apply:
            raise Uncacheable(f"a node of class {type(node).__name__}")
        inputs = [ref(v) for v in node.inputs]
        outputs = []
        for var in node.outputs:
            number[var] = len(graph.inputs) + len(variables)
            variables.append(_detached(var))
            outputs.append(number[var])
        nodes.append((node.op, inputs, outputs))
    return dict(key=key_, inputs=len(graph.inputs), variables=variables, nodes=nodes,
                outputs=[ref(v) for v in fgraph.outputs], digest=graph_digest(fgraph),
                report=_fired_rules_only(report), dag_cost=extraction.dag_cost, unstable=extraction.unstable, exact=extraction.exact)


def _fired_rules_only(report):
    """``report`` keeping the rules that fired (what its summary and ``assumed()`` read): every
    rule's parsed form would make an entry many times the size of its graph."""
    fired = report.fired()
    return dataclasses.replace(report, rules={k: v for k, v in report.rules.items() if k in fired})


def _detached(var: Variable) -> Variable:
    """A shallow copy of ``var`` with no owner and no tags: pickled alone, it pulls in no graph."""
    twin = copy.copy(var)
    twin.owner, twin.index, twin.tag = None, None, {}
    return twin


def _fits(outputs, wanted) -> bool:
    """Whether ``outputs`` can stand for ``wanted``: as many, each of its type or a narrower one."""
    return len(outputs) == len(wanted) and all(
        out.type == want.type or bool(want.type.is_super(out.type)) for out, want in zip(outputs, wanted))


def _rebuild(flat: dict, key_: str, graph: FunctionGraph):
    """(report, Extraction) from a flattened entry, on ``graph``'s inputs; None if the entry is
    for another key or graph, or rebuilds a graph other than the one stored."""
    if flat.get("key") != key_ or flat["inputs"] != len(graph.inputs):
        return None
    variables = list(graph.inputs) + flat["variables"]
    for op, inputs, outputs in flat["nodes"]:
        Apply(op, [variables[i] for i in inputs], [variables[i] for i in outputs])
    fgraph = FunctionGraph(graph.inputs, [variables[i] for i in flat["outputs"]], clone=False)
    if graph_digest(fgraph) != flat["digest"] or not _fits(fgraph.outputs, graph.outputs):
        return None
    extraction = Extraction(data=None, choice={}, cost={}, node_cost={}, types={}, fgraph=fgraph,
                            dag_cost=flat["dag_cost"], unstable=flat["unstable"], exact=flat["exact"])
    return flat["report"], extraction
