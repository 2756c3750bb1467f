"""Float64 sums on LLVM vectors (eqgraph/exec/numba/simd.py) in NumPy's pairwise order
(numba/reductions.py, numba/fused.py): the intrinsics themselves, then the sums bit for bit
against NumPy on every length up to 5,000, leaf and block boundaries, non-zero starts, NaN, inf
and -0.0, and the kernels read back from Numba's disk cache by a new process.  Skipped without
Numba, or with it turned off (``EQGRAPH_NUMBA=0``: then nothing imports the extension)."""

import os
import subprocess
import sys

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.exec.numba import reductions as numba_reductions

if numba_kernels.numba is None:   # not installed, or EQGRAPH_NUMBA=0: the Numba functions are not defined
    pytest.skip("Numba is not installed or turned off", allow_module_level=True)

from eqgraph.exec.numba.simd import add8, load8, tree8  # noqa: E402
from eqgraph.exec.reducing import ReducingComposite  # noqa: E402

#: lengths where NumPy's pairwise_sum changes shape: 8 running sums, one block, a leaf split
#: once (128 + 128), a range split further (250 = 120 + 130), the remainders n % 8 and n % 128
EDGES = [0, 1, 7, 8, 9, 15, 16, 17, 127, 128, 129, 135, 136, 248, 250, 255, 256, 257, 263, 264,
         383, 384, 385, 1023, 1024, 1025, 4095, 4096, 4097]
LARGE = [100_003, 262_144, 262_151]


def _same(got, want) -> bool:
    """Bit for bit, NaN for NaN and -0.0 apart from 0.0."""
    got, want = np.float64(got), np.float64(want)
    return (np.isnan(got) and np.isnan(want)) or got.view(np.int64) == want.view(np.int64)


def _values(rng, n):
    """Magnitudes from 1e-8 to 1e8 (so the order of additions shows), now and then NaN or inf."""
    x = rng.normal(size=n) * 10.0 ** rng.uniform(-8, 8, size=n)
    if n > 20 and rng.uniform() < 0.2:
        x[rng.integers(0, n)] = rng.choice([np.inf, -np.inf, np.nan])
    return x


def test_the_intrinsics_load_add_and_add_the_lanes_in_numpys_tree():
    import numba

    @numba.njit
    def summed(a, i, j):
        return tree8(add8(load8(a, i), load8(a, j)))

    a = np.array([1e16, 1.0, -1e16, 1.0, 3.0, 1e-3, -3.0, 7.0, 2.0, 0.5, 0.25, -1e16, 1e16, 8.0, 1.0, 1.0])
    for i, j in [(0, 8), (3, 5), (8, 0), (1, 1)]:
        v = a[i:i + 8] + a[j:j + 8]
        assert summed(a, i, j) == ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]))
    with pytest.raises(numba.core.errors.TypingError):   # float64, C-contiguous, one axis only
        summed(a.astype(np.float32), 0, 8)
    with pytest.raises(numba.core.errors.TypingError):
        summed(a[::2], 0, 0)


def test_pairwise_is_numpys_sum_bit_for_bit_on_every_length_to_5000():
    rng = np.random.default_rng(0)
    a = _values(rng, 5_100)
    for n in range(5_001):
        start = n % 37   # non-zero starts too: a row of a matrix
        want = np.add.reduce(a[start:start + n])
        assert _same(numba_reductions.pairwise(a, start, n), want), (n, start)
    for n in LARGE:
        x = _values(rng, n + 3)
        assert _same(numba_reductions.pairwise(x, 3, n), np.add.reduce(x[3:])), n


def test_whole_rows_and_means_bit_for_bit_at_the_edges():
    rng = np.random.default_rng(1)
    whole, rows = numba_reductions.KERNELS[("whole", False)], numba_reductions.KERNELS[("rows", False)]
    for n in [*EDGES[1:], *LARGE]:
        x = _values(rng, n)
        assert _same(whole(x, False), np.add.reduce(x)) and _same(whole(x, True), np.mean(x)), n
    for n in EDGES[1:]:
        m = _values(rng, 3 * n).reshape(3, n)
        for mean, want in ((False, np.add.reduce(m, axis=1)), (True, np.mean(m, axis=1))):
            assert all(_same(g, w) for g, w in zip(rows(m, mean), want)), n


def test_signed_zeros_sum_as_numpy_from_its_identity():
    """NumPy's sum starts from its identity, 0.0: eight or more -0.0 give 0.0, not the -0.0 that
    NumPy's 8 running sums hold on their own."""
    whole, rows = numba_reductions.KERNELS[("whole", False)], numba_reductions.KERNELS[("rows", False)]
    for n in [1, 7, 8, 9, 128, 200, 300, 5000]:
        x = np.full(n, -0.0)
        assert _same(whole(x, False), np.add.reduce(x)) and _same(whole(x, True), np.mean(x)), n
        assert all(_same(g, w) for g, w in zip(rows(x.reshape(1, n), False), np.add.reduce(x.reshape(1, n), axis=1)))
        assert _same(numba_reductions.KERNELS[("columns", False)](x.reshape(n, 1), False)[0], np.add.reduce(x))
    x = np.array([-0.0] * 9 + [0.0] * 7 + [np.inf, -np.inf])
    with np.errstate(invalid="ignore"):   # inf - inf
        assert _same(whole(x, False), np.add.reduce(x))


def test_fused_sums_bit_for_bit_at_leaf_edges(tmp_path, monkeypatch):
    """Against NumPy itself (the unfused program, once hot, runs ``numba_reductions``' loops)."""
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(eg.config, "compile", "eager")
    x, m = et.dvector("x"), et.dmatrix("m")
    half = x * 0.5
    f = eg.function([x], [half.sum(), (half * half - 1.0).mean()], rulesets=[])   # one node, two sums
    fr = eg.function([m], (m * 0.5).sum(axis=1), rulesets=[])
    [node] = [n for n in f.fgraph.toposort() if isinstance(n.op, ReducingComposite)]
    assert len([r for r in node.op.reductions if r is not None]) == 2
    assert any(isinstance(n.op, ReducingComposite) for n in fr.fgraph.toposort())
    rng = np.random.default_rng(2)
    for n in [*EDGES[1:], LARGE[0]]:
        for v in (_values(rng, n), np.full(n, -0.0)):
            for _ in range(3):   # cold, then hot
                total, mean = f(v)
                [rowsum] = fr(v.reshape(1, n))
            with np.errstate(all="ignore"):
                assert _same(total, np.add.reduce(v * 0.5)) and _same(rowsum, total), n
                assert _same(mean, np.add.reduce((v * 0.5) * (v * 0.5) - 1.0) / np.intp(n)), n


def test_a_new_process_reads_the_vector_kernels_from_numbas_disk_cache(tmp_path):
    """A summing loop (``Vec8`` values; ``rest`` takes one) and a fused kernel calling them: the
    first process compiles and caches them, the second loads both."""
    script = (
        "import numpy as np, eqgraph as eg, eqgraph.tensor as et\n"
        "from eqgraph.exec.numba import kernels as numba_kernels, reductions as numba_reductions\n"
        "x = et.dvector('x')\n"
        "f = eg.function([x], ((x - 0.5) * 3.0).mean(), rulesets=[], compile='eager')\n"
        "v = np.linspace(-1.0, 1.0, 1001)\n"
        "for _ in range(3):\n"
        "    got = f(v)\n"
        "assert got == np.mean((v - 0.5) * 3.0), got\n"
        "[kernel] = numba_kernels._loaded.values()\n"
        "whole = numba_reductions.KERNELS[('whole', False)]\n"
        "assert whole(v, False) == np.add.reduce(v)\n"
        "print(*('hit' if d.stats.cache_hits else 'miss' for d in (kernel, whole)))\n")
    env = {**os.environ, "EQGRAPH_KERNEL_CACHE": str(tmp_path / "kernels"), "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
           "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
            for _ in range(2)]
    assert [r.stdout.split() for r in runs] == [["miss"] * 2, ["hit"] * 2], [r.stderr[-800:] for r in runs]
