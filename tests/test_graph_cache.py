"""The on-disk cache of optimized graphs (eqgraph/graph_cache.py): a second compile of an equal
graph, in this process or another, loads what the first chose; anything that could change the
choice makes a new key; an entry that fails a check is ignored and written again."""

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph import graph_cache

ARGS = (np.linspace(-1.0, 1.0, 6).reshape(3, 2), np.array([0.5, -2.0]))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setattr(eg.config, "graph_cache", str(tmp_path))
    return tmp_path


def _model(scale=2.0):
    """A fresh graph each call (new variables, equal structure): a loss of ``x @ w`` and its gradient."""
    x, w = et.dmatrix("x"), et.dvector("w")
    loss = (et.tanh(x @ w) * scale).mean() + et.log(1 + et.exp(w)).sum()
    return [x, w], [loss, eg.grad(loss, w)]


def _expected(scale=2.0):
    x, w = ARGS
    t = np.tanh(x @ w)
    loss = (t * scale).mean() + np.log1p(np.exp(w)).sum()
    grad = x.T @ ((1 - t ** 2) * scale / len(t)) + 1 / (1 + np.exp(-w))
    return loss, grad


def _check(f, scale=2.0):
    loss, grad = f(*ARGS)
    want_loss, want_grad = _expected(scale)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-12)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-12)


def _entries(folder):
    return sorted(p.name for p in folder.glob("*.graph"))


def test_a_second_compile_of_an_equal_graph_loads_the_first_ones_choice(cache):
    first = eg.function(*_model())
    assert first.stages.encoded is not None and len(_entries(cache)) == 1
    second = eg.function(*_model())
    assert second.stages.encoded is None   # loaded: no e-graph was built
    assert eg.dprint(second.stages.optimized, file="str") == eg.dprint(first.stages.optimized, file="str")
    assert graph_cache.graph_digest(second.stages.optimized) == graph_cache.graph_digest(first.stages.optimized)
    assert second.stages.report.stop_reason == first.stages.report.stop_reason
    assert second.stages.report.fired() == first.stages.report.fired()
    _check(second)


def test_a_changed_constant_limit_or_setting_misses(cache):
    eg.function(*_model(2.0))
    assert eg.function(*_model(3.0)).stages.encoded is not None
    assert eg.function(*_model(2.0), limits=eg.Limits(iterations=5)).stages.encoded is not None
    assert eg.function(*_model(2.0), assume_finite=True).stages.encoded is not None
    assert len(_entries(cache)) == 4
    _check(eg.function(*_model(3.0)), scale=3.0)


def test_a_changed_rule_file_misses(cache, tmp_path_factory):
    rules = tmp_path_factory.mktemp("rules") / "mine.egg"
    rules.write_text('(rewrite (Sin (Cos x)) (Sin (Cos x)) :name "first")\n')
    specs = [*eg.DEFAULT_RULESETS, str(rules)]
    eg.function(*_model(), rulesets=specs)
    assert eg.function(*_model(), rulesets=specs).stages.encoded is None
    rules.write_text('(rewrite (Sin (Cos x)) (Sin (Cos x)) :name "second")\n')
    assert eg.function(*_model(), rulesets=specs).stages.encoded is not None


def test_a_hit_reads_this_process_shared_values(cache):
    def compiled():
        x = eg.shared(ARGS[0], name="x")
        w = et.dvector("w")
        return x, eg.function([w], et.tanh(x @ w).sum())

    compiled()
    x, f = compiled()
    assert f.stages.encoded is None
    x.set_value(2 * ARGS[0])
    np.testing.assert_allclose(f(ARGS[1]), np.tanh(2 * ARGS[0] @ ARGS[1]).sum(), rtol=1e-12)


@pytest.mark.parametrize("damage", ["truncated", "flipped byte", "garbage", "another key's entry"])
def test_a_corrupt_entry_is_ignored_and_written_again(cache, damage):
    eg.function(*_model())
    [entry] = cache.glob("*.graph")
    eg.function(*_model(3.0))
    [other] = [p for p in cache.glob("*.graph") if p != entry]
    blob = entry.read_bytes()
    damaged = {"truncated": blob[: len(blob) // 2],
               "flipped byte": blob[:-10] + bytes([blob[-10] ^ 1]) + blob[-9:],
               "garbage": b"not an entry",
               "another key's entry": other.read_bytes()}[damage]
    entry.write_bytes(damaged)
    f = eg.function(*_model())
    assert f.stages.encoded is not None   # compiled again
    _check(f)
    assert entry.read_bytes() != damaged   # a good entry written over the bad one
    assert eg.function(*_model()).stages.encoded is None


def test_an_entry_for_another_graph_under_this_key_is_ignored(cache):
    f = eg.function(*_model())
    [mine] = cache.glob("*.graph")
    x, w = et.dmatrix("x"), et.dvector("w")
    eg.function([x, w], (x @ w).sum())
    [theirs] = [p for p in cache.glob("*.graph") if p != mine]
    assert graph_cache.load(mine.stem, f.stages.graph) is not None
    # a well-formed entry, header and checksum intact, that says it is this key's, but whose
    # graph computes other outputs
    payload = theirs.read_bytes().split(b"\n", 2)[2].replace(theirs.stem.encode(), mine.stem.encode())
    mine.write_bytes(graph_cache.MAGIC + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
    assert graph_cache.load(mine.stem, f.stages.graph) is None


def test_what_has_no_canonical_form_is_not_cached(cache):
    class Opaque:
        def __init__(self):
            self.run = lambda: None   # a callable: no canonical form

    with pytest.raises(graph_cache.Uncacheable):
        graph_cache._Canon().feed(Opaque())
    x = et.dvector("x")
    f = eg.function([x], (x * 2).sum(), cost_model=_OpaqueCostModel())
    assert f.stages.encoded is not None and _entries(cache) == []
    np.testing.assert_allclose(f(ARGS[1]), 2 * ARGS[1].sum())


class _OpaqueCostModel(eg.CostModel):
    def __init__(self):
        super().__init__()
        self.callback = lambda: None


def test_debug_and_profiled_compiles_build_the_egraph(cache):
    eg.function(*_model())
    assert eg.function(*_model(), mode="debug").stages.encoded is not None
    assert eg.function(*_model(), profile=True).stages.encoded is not None


def test_a_loaded_function_says_why_it_has_no_egraph(cache):
    eg.function(*_model())
    loaded = eg.function(*_model())
    with pytest.raises(RuntimeError, match="graph cache"):
        loaded.stages.egraph
    assert "saturation stopped" in str(loaded.stages)


def test_the_cache_is_off_for_an_empty_directory_and_checks_its_setting(tmp_path, monkeypatch):
    monkeypatch.setattr(eg.config, "graph_cache", "")
    eg.function(*_model())
    assert eg.function(*_model()).stages.encoded is not None
    with pytest.raises(TypeError, match="graph_cache"):
        eg.config.graph_cache = 3


_SCRIPT = """
import sys
import numpy as np
import eqgraph as eg
import eqgraph.tensor as et
eg.config.compile = "deferred"
x, w = et.dmatrix("x"), et.dvector("w")
loss = (et.tanh(x @ w) * float(sys.argv[1])).mean() + et.log(1 + et.exp(w)).sum()
f = eg.function([x, w], [loss, eg.grad(loss, w)])
value = f(np.linspace(-1.0, 1.0, 6).reshape(3, 2), np.array([0.5, -2.0]))[0]
print("loaded" if f.stages.encoded is None else "compiled", repr(float(value)))
"""


def test_a_second_process_loads_what_the_first_compiled(tmp_path):
    def run(scale, seed):
        env = {**os.environ, "EQGRAPH_GRAPH_CACHE": str(tmp_path), "PYTHONHASHSEED": seed,
               "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
        done = subprocess.run([sys.executable, "-c", _SCRIPT, scale], env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        how, value = done.stdout.split()
        return how, float(value)

    # other hash seeds: the key depends on no set's or dict's order, nor on object ids
    assert run("2.0", "1")[0] == "compiled"
    how, value = run("2.0", "2")
    assert how == "loaded" and value == pytest.approx(_expected(2.0)[0], rel=1e-12)
    assert run("3.0", "3")[0] == "compiled"


def _store_filler(cache, name: str, size: int, used: float):
    """An entry of ``size`` bytes, last used at ``used`` (seconds since the epoch)."""
    path = cache / f"{name}.graph"
    path.write_bytes(b"x" * size)
    os.utime(path, (used, used))
    return path


def test_storing_past_the_size_limit_evicts_the_least_recently_used_entries(cache, monkeypatch):
    oldest = _store_filler(cache, "a" * 64, 4000, 1_000_000)
    newer = _store_filler(cache, "b" * 64, 4000, 2_000_000)
    first = eg.function(*_model())   # its entry is the newest
    [stored] = [p for p in cache.glob("*.graph") if p not in (oldest, newer)]
    assert first.stages.encoded is not None
    # room for two entries like it (the next differs in one constant): the two oldest must go
    monkeypatch.setattr(eg.config, "graph_cache_size", 2 * stored.stat().st_size + 1000)
    eg.function(*_model(scale=3.0))
    assert not oldest.exists() and not newer.exists()
    assert stored.exists() and len(_entries(cache)) == 2


def test_a_load_counts_as_a_use_for_eviction(cache, monkeypatch):
    eg.function(*_model())
    [stored] = cache.glob("*.graph")
    os.utime(stored, (1_000_000, 1_000_000))   # stored long ago ...
    other = _store_filler(cache, "c" * 64, 4000, 2_000_000)
    assert eg.function(*_model()).stages.encoded is None   # ... and loaded now
    monkeypatch.setattr(eg.config, "graph_cache_size", 2 * stored.stat().st_size + 1000)
    eg.function(*_model(scale=3.0))
    assert stored.exists() and not other.exists()


def test_the_size_limit_setting_is_checked():
    assert eg.config.graph_cache_size > 0
    for bad in (0, -5, 1.5, "1GB", True):
        with pytest.raises((TypeError, ValueError), match="graph_cache_size"):
            eg.config.graph_cache_size = bad
