"""The held-out benchmark: PyMC's own log-density graphs, compiled by eqgraph and by PyTensor.

    /work/venv-pymc/bin/python bench/pymc_models.py [--all | --only NAME ...] [--calls 100] [--rounds 3]

``bench/models.py`` writes each model by hand for every library; here PyMC builds the graphs
(the gallery models of ``tests/pytensor_bridge/pymc_models.py``), so eqgraph sees exactly what a
PyMC user's sampler compiles. Per model, one graph: the log-density and its gradient in the
model's value variables (``from_pymc``), compiled by

- ``eqgraph``: ``eqgraph.function`` of the converted graph;
- ``eqgraph mode``: ``pytensor.function(..., mode=eqgraph.pytensor.mode())``, the path
  ``pm.sample(compile_kwargs={"mode": ...})`` takes (PyTensor's function machinery around it);
- ``PyTensor C`` and ``PyTensor Numba``: PyTensor's ``FAST_RUN`` and ``NUMBA`` modes.

Reported: compile + first call (seconds; PyTensor's C mode reuses its on-disk cache of compiled
modules, so a second run of this script shows it warm), then the per-call median (microseconds)
after a warm-up long enough for eqgraph's Numba tiers to take over, the libraries interleaved
round by round, and the ratios eqgraph / other. Values and gradients are checked against
PyTensor C's before anything is timed. One BLAS thread, as a sampler's chain has.
The default run is three models (under two minutes); ``--all`` runs every gallery model.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads its BLAS

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "pytensor_bridge"))

import pytensor  # noqa: E402
from models import per_call_medians  # noqa: E402  (bench/models.py: the same interleaved timing)
from pymc_models import MODELS  # noqa: E402

import eqgraph as eg  # noqa: E402
from eqgraph.pytensor import from_pymc, mode  # noqa: E402

#: the default run: one model of each kind of graph that is quick to compile for PyTensor's C and
#: Numba modes (``--only GP`` adds a Cholesky-based one)
DEFAULT = ["eight schools (non-centered)", "logistic regression, logit_p", "radon hierarchical (pm.Data)"]
LIBRARIES = ["eqgraph", "eqgraph mode", "PyTensor C", "PyTensor Numba"]


def compilers(model):
    """Library name -> fn() compiling the model's logp-and-gradient graph into f(*values)."""
    converted = from_pymc(model)
    inputs, outputs = model.value_vars, converted.pytensor_outputs

    def pytensor_mode(m):
        return lambda: pytensor.function(inputs, outputs, mode=m, on_unused_input="ignore")

    return {"eqgraph": lambda: eg.function(converted.inputs, converted.outputs),
            "eqgraph mode": pytensor_mode(mode()),
            "PyTensor C": pytensor_mode("FAST_RUN"),
            "PyTensor Numba": pytensor_mode("NUMBA")}


def point(model) -> list:
    """The model's initial point, moved off it (a prior's centre can hide terms that vanish there)."""
    rng = np.random.default_rng(0)
    start = model.initial_point()
    return [np.asarray(start[v.name] + rng.normal(0, 0.3, np.shape(start[v.name])), dtype=v.dtype)
            for v in model.value_vars]


def compile_timed(compile_fn, values):
    start = time.perf_counter()
    f = compile_fn()
    out = f(*values)
    return f, time.perf_counter() - start, out


def disagreeing(outputs, reference="PyTensor C") -> list[str]:
    """The libraries whose log-density or gradient differs from the reference's."""
    ref = outputs[reference]
    return [name for name, out in outputs.items()
            if not all(np.allclose(np.asarray(b), np.asarray(a), rtol=1e-8, atol=1e-8) for a, b in zip(ref, out))]


def run_model(name, args):
    """(compile seconds, per-call seconds) by library, for one model; None where it cannot run."""
    model = MODELS[name][0]()
    values = point(model)
    funcs, compile_s, outputs = {}, {}, {}
    for lib, compile_fn in compilers(model).items():
        funcs[lib], compile_s[lib], outputs[lib] = compile_timed(compile_fn, values)
    if differ := disagreeing(outputs):
        print(f"{name:<40} VALUES DIFFER: {', '.join(differ)} against PyTensor C")
    print(f"{name:<40}" + "".join(f"{compile_s[n]:>16.2f}" for n in LIBRARIES), flush=True)
    funcs["eqgraph"].wait_compiled()   # else the warm-up may time the program, not the whole function
    for _ in range(args.warmup):
        for f in funcs.values():
            f(*values)
    return per_call_medians(funcs, values, args.calls, args.rounds)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--all", action="store_true", help="every gallery model, not the default three")
    parser.add_argument("--only", nargs="*", help="model names (substrings) to run")
    parser.add_argument("--calls", type=int, default=100, help="calls per timing")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--warmup", type=int, default=300, help="calls before timing (eqgraph's tiers)")
    args = parser.parse_args()
    names = list(MODELS) if args.all or args.only else DEFAULT
    if args.only:
        names = [n for n in names if any(s.lower() in n.lower() for s in args.only)]
    print(f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}; PyTensor {pytensor.__version__}\n")
    print(f"{'compile + first call, s':<40}" + "".join(f"{n:>16}" for n in LIBRARIES))
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # PyTensor's BLAS and Numba object-mode notices
        for name in names:
            try:
                rows.append((name, run_model(name, args)))
            except NotImplementedError as err:
                print(f"{name:<40} cannot be converted yet: {err}")
    print(f"\n{'per call, us':<40}" + "".join(f"{n:>16}" for n in LIBRARIES)
          + "".join(f"{'eq/' + n.split()[-1]:>10}" for n in LIBRARIES[2:]))
    for name, med in rows:
        ours = med["eqgraph"]
        print(f"{name:<40}" + "".join(f"{med[n] * 1e6:>16.1f}" for n in LIBRARIES)
              + "".join(f"{ours / med[n]:>10.2f}" for n in LIBRARIES[2:]))


if __name__ == "__main__":
    main()
