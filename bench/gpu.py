"""The CuPy backend on a GPU, side by side in one run: bench/suite.py's 50-op elementwise chain
(one fused ElementwiseKernel) against the same loop written in CuPy by hand (one kernel per op)
and against eqgraph's NumPy backend on the host; the 2,000-node graph; a large normal draw by
the GPU generator against the host's.

    python bench/gpu.py        # needs CuPy and an NVIDIA GPU (pip install -e ".[gpu]")

PyTensor has no GPU backend to compare with (its JAX backend would be a separate install).
"""
import sys
import time

import numpy as np

try:
    import cupy
    if cupy.cuda.runtime.getDeviceCount() < 1:
        raise ImportError("no GPU")
except Exception as err:  # noqa: BLE001  (no CuPy, no driver or no device: nothing to measure)
    sys.exit(f"bench/gpu.py needs CuPy and a GPU: {err}")

sys.path.insert(0, "bench")
import eqgraph as eg  # noqa: E402
import eqgraph.tensor as et  # noqa: E402
from suite import chain, deep  # noqa: E402


def best(f, *a, n=10):
    f(*a); cupy.cuda.Device().synchronize()
    ts = []
    for _ in range(n):
        t = time.perf_counter(); r = f(*a); cupy.cuda.Device().synchronize(); ts.append(time.perf_counter() - t)
    return min(ts)


def cupy_chain(x, steps=50):
    y = x
    for _ in range(steps // 5):
        y = cupy.tanh(y * 0.9 + 0.1) * 0.5 - y * 0.25 + x
    return y


for n in (1_000_000, 10_000_000):
    x = et.dvector("x")
    host = np.random.default_rng(0).normal(size=n)
    dev = cupy.asarray(host)
    f_gpu = eg.function([x], chain(et, x), backend="cupy")
    f_cpu = eg.function([x], chain(et, x))
    g = best(f_gpu, dev); c = best(cupy_chain, dev); h = best(f_cpu, host, n=3)
    err = float(abs(f_gpu(dev).get() - f_cpu(host)).max())
    print(f"50-op chain n={n:>10,}: eqgraph cupy {g*1e3:8.3f} ms | hand CuPy {c*1e3:8.3f} ms ({g/c:.2f}x) | "
          f"eqgraph host {h*1e3:8.1f} ms ({h/g:.0f}x slower) | max diff {err:.1e}", flush=True)
x = et.dvector("x")
f_gpu = eg.function([x], deep(et, x), backend="cupy")
dev = cupy.asarray(np.random.default_rng(0).normal(size=1_000_000))
print(f"2,000-node graph n=1e6: eqgraph cupy {best(f_gpu, dev)*1e3:.2f} ms", flush=True)
rs = eg.RandomStream(0)
f = eg.function([], rs.normal(0, 1, size=(10_000_000,)), backend="cupy")
f_host = eg.function([], eg.RandomStream(0).normal(0, 1, size=(10_000_000,)))
print(f"normal draw 1e7: GPU generator {best(lambda: f(), n=5)*1e3:.2f} ms (returned to host) vs host generator "
      f"{best(lambda: f_host(), n=3)*1e3:.1f} ms", flush=True)
# every distribution drawn on the device (eqgraph.tensor.random_draws) against the host's NumPy draw
DRAW_ROWS = [("integers", (0, 1000, (10_000_000,))), ("binomial", (20, 0.3, (10_000_000,))),
             ("multinomial", (20, np.full(8, 1 / 8), (1_000_000,))), ("choice", (10_000_000, (1_000_000,), False)),
             ("permutation", (10_000_000,))]
for name, args in DRAW_ROWS:
    f = eg.function([], getattr(eg.RandomStream(0), name)(*args), backend="cupy")
    f_host = eg.function([], getattr(eg.RandomStream(0), name)(*args))
    on_gpu, on_host = best(lambda: f(), n=5), best(lambda: f_host(), n=2)
    print(f"{name} draw {args}: GPU {on_gpu*1e3:.2f} ms vs host {on_host*1e3:.1f} ms ({on_host/on_gpu:.0f}x)", flush=True)
