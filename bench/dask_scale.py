"""A linear model's gradient step on data larger than a Dask worker's memory (issue 14).

    python bench/dask_scale.py [--rows 7000000] [--memory-limit 400MB] [--steps 3]

Starts a LocalCluster of 2 worker processes (1 thread each) whose memory limit is
smaller than the data, writes the data to disk chunk by chunk (``da.to_npy_stack``,
so no process ever holds all of it), and runs the same compiled least-squares loss
and gradient (``eqgraph.function(..., backend="dask")``) over it for a few steps.
It reports, in rows per second:

- NumPy (``backend="numpy"``) on a sample that fits in memory;
- Dask on the same in-memory sample, chunked (``chunks=``);
- Dask on the whole data set, read from disk chunk by chunk;

and the peak resident memory of each worker process (sampled every 50 ms), against its limit.
A last section times ``(A @ B) @ v`` as the default cost model extracts it (``A @ B``
first, an ``n x n`` intermediate) and as the Dask cost model does (``A @ (B @ v)``).
"""

from __future__ import annotations

import argparse
import logging
import shutil
import tempfile
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore", "Sending large graph")  # the in-memory sample travels in the graph


def start_peak_sampler(dask_worker, interval: float = 0.05) -> None:
    """On a worker: sample this process's resident memory every ``interval`` seconds,
    keeping the maximum (``ru_maxrss`` would not do: a spawned worker inherits its
    parent's peak)."""
    import threading

    import psutil

    worker, process = dask_worker, psutil.Process()   # client.run passes the worker by this name
    worker.eqgraph_peak_rss = process.memory_info().rss

    def sample():
        while not getattr(worker, "eqgraph_stop_sampling", False):
            worker.eqgraph_peak_rss = max(worker.eqgraph_peak_rss, process.memory_info().rss)
            time.sleep(interval)

    threading.Thread(target=sample, daemon=True).start()


def peak_rss_mb(dask_worker) -> float:
    dask_worker.eqgraph_stop_sampling = True
    return dask_worker.eqgraph_peak_rss / 2**20


def model():
    import eqgraph as eg
    import eqgraph.tensor as et

    x, y, w = et.matrix("x"), et.vector("y"), et.vector("w")
    loss = ((x @ w - y) ** 2).mean()
    return [x, y, w], [loss, eg.grad(loss, w)]


def timed_steps(step, args_of, w, steps: int, lr: float = 0.1):
    """Run ``steps`` gradient steps after one untimed call; return (seconds per step, final
    loss, final w)."""
    import dask

    dask.compute(*step(*args_of(w)))  # warm-up: workers import eqgraph and build their kernels
    start = time.perf_counter()
    loss = None
    for _ in range(steps):
        loss, grad = step(*args_of(w))
        if hasattr(loss, "dask"):
            loss, grad = dask.compute(loss, grad)
        w = w - lr * grad
    return (time.perf_counter() - start) / steps, float(loss), w


def chain_times(client, n: int, chunk: int):
    import dask.array as da

    import eqgraph as eg
    import eqgraph.tensor as et
    from eqgraph.exec.dask.backend import DaskCostModel

    rng = da.random.default_rng(1)
    a = rng.normal(size=(n, n), chunks=(chunk, chunk)).persist()
    b = rng.normal(size=(n, n), chunks=(chunk, chunk)).persist()
    v = rng.normal(size=n, chunks=chunk).persist()
    A, B, V = et.matrix("A"), et.matrix("B"), et.vector("v")
    times = {}
    for label, cost_model in (("default cost model", eg.extract.CostModel()), ("Dask cost model", DaskCostModel())):
        f = eg.function([A, B, V], (A @ B) @ V, backend="dask", cost_model=cost_model)
        order = "A @ (B @ v)" if f.stages.optimized.outputs[0].owner.inputs[0].owner is None else "(A @ B) @ v"
        start = time.perf_counter()
        f(a, b, v).compute()
        times[label] = (order, time.perf_counter() - start)
    return times


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=7_000_000)
    parser.add_argument("--features", type=int, default=8)
    parser.add_argument("--chunk-rows", type=int, default=250_000)
    parser.add_argument("--sample-rows", type=int, default=1_000_000)
    # a worker with eqgraph imported holds ~120 MB; Dask pauses one at 80% of its limit
    parser.add_argument("--memory-limit", default="400MB")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--chain-n", type=int, default=3_000)
    args = parser.parse_args(argv)

    import dask.array as da
    import distributed

    import eqgraph as eg

    rows, k = args.rows, args.features
    data_mb = rows * (k + 1) * 8 / 2**20
    def start_cluster():
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           memory_limit=args.memory_limit, dashboard_address=None,
                                           silence_logs=logging.ERROR)
        return cluster, distributed.Client(cluster)

    cluster, client = start_cluster()
    print(f"cluster: 2 workers x 1 thread, memory_limit={args.memory_limit} each; "
          f"data: {rows:,} x {k} float64 + targets = {data_mb:,.0f} MiB", flush=True)

    inputs, outputs = model()
    true_w = np.linspace(-1, 1, k)
    w0 = np.zeros(k)

    # -- a sample that fits: NumPy, then Dask on the same arrays ----------------------------
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(args.sample_rows, k))
    ys = xs @ true_w + 0.1 * rng.normal(size=args.sample_rows)
    on_numpy = eg.function(inputs, outputs)
    on_dask_sample = eg.function(inputs, outputs, backend="dask", chunks=(args.chunk_rows,))
    t_np, loss_np, w_np = timed_steps(on_numpy, lambda w: (xs, ys, w), w0, args.steps)
    xs_d = da.from_array(xs, chunks=(args.chunk_rows, k)).persist()
    ys_d = da.from_array(ys, chunks=args.chunk_rows).persist()
    t_ds, loss_ds, w_ds = timed_steps(on_dask_sample, lambda w: (xs_d, ys_d, w), w0, args.steps)
    assert np.allclose(w_ds, w_np, rtol=1e-10), (w_ds, w_np)
    del xs_d, ys_d
    print(f"sample done: NumPy {t_np:.3f} s/step, Dask {t_ds:.3f} s/step", flush=True)
    client.close()
    cluster.close()
    cluster, client = start_cluster()  # fresh worker processes: their peak RSS is the big run's alone

    # -- the whole data set, on disk, larger than a worker's memory --------------------------
    folder = tempfile.mkdtemp(prefix="eqgraph-dask-scale-")
    try:
        drng = da.random.default_rng(0)
        x_all = drng.normal(size=(rows, k), chunks=(args.chunk_rows, k))
        y_all = x_all @ true_w + 0.1 * drng.normal(size=rows, chunks=args.chunk_rows)
        start = time.perf_counter()
        da.to_npy_stack(f"{folder}/x", x_all)
        da.to_npy_stack(f"{folder}/y", y_all)
        written = time.perf_counter() - start
        client.close()
        cluster.close()
        cluster, client = start_cluster()  # fresh again: the peak below is the gradient steps' alone
        client.run(start_peak_sampler)
        x_disk, y_disk = da.from_npy_stack(f"{folder}/x"), da.from_npy_stack(f"{folder}/y")
        t_big, loss_big, _ = timed_steps(eg.function(inputs, outputs, backend="dask"),
                                             lambda w: (x_disk, y_disk, w), w0, args.steps)
        peaks = client.run(peak_rss_mb)
    finally:
        shutil.rmtree(folder, ignore_errors=True)

    print(f"(data written to disk in {written:.1f} s, {x_disk.numblocks[0]} chunks of {args.chunk_rows:,} rows)")
    print(f"{'run':44s} {'s/step':>8s} {'rows/s':>12s} {'loss':>10s}")
    for label, t, n, loss in (
        (f"NumPy, {args.sample_rows:,} rows in memory", t_np, args.sample_rows, loss_np),
        (f"Dask, same {args.sample_rows:,} rows, chunked", t_ds, args.sample_rows, loss_ds),
        (f"Dask, {rows:,} rows from disk", t_big, rows, loss_big),
    ):
        print(f"{label:44s} {t:8.3f} {n / t:12,.0f} {loss:10.5f}")
    print(f"Dask out-of-core throughput / NumPy in-memory: {(rows / t_big) / (args.sample_rows / t_np):.2f}")
    for address, peak in sorted(peaks.items()):
        print(f"worker {address}: peak RSS {peak:,.0f} MiB (limit {args.memory_limit}; data {data_mb:,.0f} MiB)")

    n = args.chain_n
    for label, (order, seconds) in chain_times(client, n, n // 4).items():
        print(f"(A @ B) @ v, n={n}, 4x4 chunks, {label}: runs {order} in {seconds:.2f} s")
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
