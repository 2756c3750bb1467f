"""The held-out benchmark: PyMC's own log-density graphs, compiled by eqgraph and by PyTensor.

    /work/venv-pymc/bin/python bench/pymc_models.py [--all | --only NAME ...] [--calls 100] [--rounds 3]
    /work/venv-pymc/bin/python bench/pymc_models.py --sample [--only NAME ...] [--tune 1000] [--draws 1000]

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

``--sample`` times what a PyMC user waits for instead: ``pm.sample`` of one chain in each mode
(eqgraph's inside ``eqgraph.pytensor.use()``, which routes PyMC's own compiles too, and as the
``compile_kwargs`` mode alone, with PyTensor's C compiler on and off), first with empty caches (PyTensor's compiledir,
Numba's and eqgraph's kernel cache all fresh) and then with the caches that run left, each run in
a process of its own: seconds from the call to the first draw and to the return, and the time per
gradient while sampling, with eqgraph's ratios to the better of PyTensor's C and Numba modes.
A model's 10 runs take several minutes (PyTensor's C compiles with an empty compiledir among them).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads its BLAS

import argparse  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
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


# --- --sample: pm.sample end to end, each (model, mode, cache state) in a process of its own ---

#: the modes ``pm.sample(compile_kwargs={"mode": ...})`` is given. PyMC compiles functions of its
#: own in PyTensor's default mode and in ``FAST_COMPILE`` whatever that says (the initial point's,
#: the trace's), so with empty caches every mode waits for PyTensor's C compiler unless
#: ``eqgraph.pytensor.use()`` routes those compiles too ("use()"); "no C" runs the plain eqgraph
#: mode with PyTensor's C compiler off (``cxx=``), those functions then run as PyTensor's Python code
SAMPLE_MODES = ["eqgraph use()", "eqgraph mode", "eqgraph mode, no C", "PyTensor C", "PyTensor Numba"]
#: the table's column heads, in ``SAMPLE_MODES``'s order
SAMPLE_HEADS = {"eqgraph use()": "eq-use", "eqgraph mode": "eq", "eqgraph mode, no C": "eq-noC",
                "PyTensor C": "C", "PyTensor Numba": "Numba"}
SAMPLE_SEED = 20261128


@contextlib.contextmanager
def sample_mode(name):
    """The mode for ``compile_kwargs``, inside the context ``pm.sample`` runs in."""
    from eqgraph.pytensor import use

    if name == "eqgraph use()":
        with use() as eqgraph_mode:
            yield eqgraph_mode
        return
    yield {"eqgraph mode": mode, "eqgraph mode, no C": mode, "PyTensor C": lambda: "FAST_RUN",
           "PyTensor Numba": lambda: "NUMBA"}[name]()


def sample_worker(name, mode_name, tune, draws):
    """One ``pm.sample`` (one chain, ``tune`` + ``draws``), timed from the call: the first draw
    (PyMC's callback runs after every step, tuning ones included), the end of tuning, the return;
    the gradients evaluated (NUTS's ``tree_size``, one logp-and-gradient call per leapfrog step);
    CPU seconds (``_cpu_seconds``) to the first draw and in all; and each scalar's posterior mean
    and Monte Carlo standard error, for the agreement check."""
    import arviz as az
    import pymc as pm

    model = MODELS[name][0]()
    marks, steps, cpu = [], [], []
    compiled, batches = _watch_eqgraph()
    whole = []   # when the whole Numba function first ran a step

    def callback(trace, draw):
        marks.append(time.perf_counter())
        cpu.append(_cpu_seconds())
        steps.append(sum(s.get("tree_size", s.get("n_steps", 0)) for s in draw.stats))
        if not whole and any(f.stages.tier == "numba-whole" for f in compiled):
            whole.append(marks[-1])

    with model, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start, start_cpu = time.perf_counter(), _cpu_seconds()
        with sample_mode(mode_name) as compile_mode:
            idata = pm.sample(draws=draws, tune=tune, chains=1, cores=1, random_seed=SAMPLE_SEED,
                              progressbar=False, compute_convergence_checks=False, callback=callback,
                              compile_kwargs={"mode": compile_mode})
        end, end_cpu = time.perf_counter(), _cpu_seconds()
    mcse = az.mcse(idata)
    posterior = {v: (idata.posterior[v].mean(("chain", "draw")).values.ravel().tolist(),
                     mcse[v].values.ravel().tolist()) for v in idata.posterior.data_vars}
    return {"first_draw": marks[0] - start, "tuned": marks[tune - 1] - start if tune else 0.0,
            "wall": end - start, "first_draw_cpu": cpu[0] - start_cpu, "wall_cpu": end_cpu - start_cpu,
            "sampling": marks[-1] - marks[0], "gradients": sum(steps[1:]),
            "whole": whole[0] - start if whole else None,
            "server": [(what, a - start, None if b is None else b - start) for what, a, b in batches],
            "posterior": posterior}


def _watch_eqgraph():
    """(the eqgraph functions the mode compiles, the compile server's batches as (what, start,
    end) on the ``time.perf_counter`` clock), filled in as ``pm.sample`` runs."""
    from eqgraph.exec.numba import background
    from eqgraph.pytensor.linker import EqgraphLinker

    compiled, batches = [], []
    convert, send = EqgraphLinker.fgraph_convert, background._Worker._compile_in_server

    def fgraph_convert(self, *args, **kwargs):
        compiled.append(convert(self, *args, **kwargs))
        return compiled[-1]

    def compile_in_server(self, sources):
        wholes = {b.source for f in compiled for b in f.program.compiles.builds if b.whole}
        kernels = sum(source not in wholes for source in sources)
        what = f"{'whole function + ' if kernels < len(sources) else ''}{kernels} kernels"
        batches.append([what, time.perf_counter(), None])   # None: still compiling at the end
        try:
            return send(self, sources)
        finally:
            batches[-1][2] = time.perf_counter()

    EqgraphLinker.fgraph_convert, background._Worker._compile_in_server = fgraph_convert, compile_in_server
    return compiled, batches


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its children that have ended (PyTensor's C compiler
    runs): on a loaded machine they say what a run costs where wall time says how long it waited."""
    return sum(os.times()[:4])


def fresh_cache_env(root: Path, mode_name: str) -> dict:
    """The environment of a process whose caches all live under ``root``: PyTensor's compiledir
    (its C modules and its Numba mode's cache), Numba's cache and eqgraph's kernel and
    whole-function cache. An empty ``root`` is a machine that has compiled nothing."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               NUMBA_CACHE_DIR=str(root / "numba"), EQGRAPH_KERNEL_CACHE=str(root / "eqgraph"),
               EQGRAPH_GRAPH_CACHE=str(root / "graphs"))
    flags = [f for f in env.get("PYTENSOR_FLAGS", "").split(",") if f and not f.startswith("compiledir=")]
    flags.append(f"compiledir={root / 'pytensor'}")
    if mode_name.endswith("no C"):
        flags.append("cxx=")
    env["PYTENSOR_FLAGS"] = ",".join(flags)
    return env


def run_sample(name, mode_name, root: Path, args) -> dict:
    """``sample_worker`` in a child process with its caches under ``root``."""
    command = [sys.executable, __file__, "--sample-worker", name, mode_name,
               "--tune", str(args.tune), "--draws", str(args.draws)]
    done = subprocess.run(command, env=fresh_cache_env(root, mode_name), capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"pm.sample of {name!r} in {mode_name} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def worst_disagreement(runs: dict) -> float:
    """The largest difference of a posterior mean from PyTensor C's, in combined Monte Carlo
    standard errors, over every scalar and mode."""
    ref = runs["PyTensor C", "cold"]["posterior"]
    worst = 0.0
    for run in runs.values():
        for var, (means, mcses) in run["posterior"].items():
            for m, s, rm, rs in zip(means, mcses, *ref[var]):
                worst = max(worst, abs(m - rm) / np.hypot(s, rs))
    return worst


def sample_model(name, args, scratch: Path) -> dict:
    """Every mode, cold (empty caches) then warm (the caches the cold run left), for one model."""
    runs = {}
    for mode_name in [m for m in SAMPLE_MODES if not args.modes or any(s in m for s in args.modes)]:
        root = scratch / f"{len(list(scratch.iterdir()))}"
        root.mkdir()
        for state in ("cold", "warm"):
            runs[mode_name, state] = run_sample(name, mode_name, root, args)
            r = runs[mode_name, state]
            print(f"  {mode_name:<20}{state:<6}{r['first_draw']:>12.2f}{r['wall']:>10.2f}"
                  f"{r['sampling'] / max(r['gradients'], 1) * 1e6:>12.1f}{r['gradients']:>9}"
                  f"{r['first_draw_cpu']:>12.2f}{r['wall_cpu']:>10.2f}", flush=True)
            if mode_name.startswith("eqgraph"):
                print(f"{'':<28}whole function from {_seconds(r['whole'])}; compile server: "
                      + ("; ".join(f"{what} {a:.1f} s to {_seconds(b)}" for what, a, b in r["server"]) or "idle"),
                      flush=True)
    return runs


def _seconds(t) -> str:
    return "never" if t is None else f"{t:.1f} s"


def print_sample_table(results: dict):
    """Per model and cache state: first draw, wall and per-gradient time of each mode run, and the
    ratios of eqgraph's runs to the better of PyTensor's C and Numba modes."""
    modes = [m for m in SAMPLE_MODES if all((m, "cold") in runs for runs in results.values())]
    ours = [m for m in modes if m.startswith("eqgraph")]
    rated = "PyTensor C" in modes and "PyTensor Numba" in modes
    heads = [SAMPLE_HEADS[m] for m in modes] + ([f"r-{SAMPLE_HEADS[m]}" for m in ours] if rated else [])
    width = 8 * len(heads)
    print(f"\n{'':<30}{'first draw, s':>{width}}{'wall, s':>{width}}{'per gradient, us':>{width}}")
    print(f"{'model, caches':<30}" + "".join(f"{h:>8}" for h in heads) * 3)
    for name, runs in results.items():
        for state in ("cold", "warm"):
            row = f"{name[:23] + ', ' + state:<30}"
            for key in ("first_draw", "wall", "per_gradient"):
                values = {m: _value(runs[m, state], key) for m in modes}
                digits = 0 if key == "per_gradient" else 2
                row += "".join(f"{values[m]:>8.{digits}f}" for m in modes)
                if rated:
                    best = min(values["PyTensor C"], values["PyTensor Numba"])
                    row += "".join(f"{values[m] / best:>8.2f}" for m in ours)
            print(row)
    print("(r-...: that eqgraph run over the better of PyTensor's C and Numba modes)")


def _value(run, key):
    if key == "per_gradient":
        return run["sampling"] / max(run["gradients"], 1) * 1e6
    return run[key]


def sample_main(names, args):
    import tempfile
    print(f"pm.sample: {args.tune} tune + {args.draws} draws, one chain, seed {SAMPLE_SEED}, one BLAS thread; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs\n")
    print(f"  {'mode':<20}{'cache':<6}{'first draw s':>12}{'wall s':>10}{'per grad us':>12}{'grads':>9}"
          f"{'first cpu s':>12}{'cpu s':>10}")
    results = {}
    with tempfile.TemporaryDirectory(prefix="pymc-sample-") as scratch:
        for name in names:
            print(name, flush=True)
            model_dir = Path(scratch) / f"m{len(results)}"
            model_dir.mkdir()
            results[name] = sample_model(name, args, model_dir)
            if ("PyTensor C", "cold") in results[name]:
                print(f"  posterior means agree with PyTensor C's within "
                      f"{worst_disagreement(results[name]):.1f} combined MCSE", flush=True)
    print_sample_table(results)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--all", action="store_true", help="every gallery model, not the default three")
    parser.add_argument("--only", nargs="*", help="model names (substrings) to run")
    parser.add_argument("--calls", type=int, default=100, help="calls per timing")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--warmup", type=int, default=300, help="calls before timing (eqgraph's tiers)")
    parser.add_argument("--sample", action="store_true",
                        help="time pm.sample per mode with empty and warm caches instead")
    parser.add_argument("--tune", type=int, default=1000, help="--sample: tuning steps")
    parser.add_argument("--draws", type=int, default=1000, help="--sample: draws")
    parser.add_argument("--modes", nargs="*", help="--sample: the modes to run (substrings, e.g. 'use()' 'C' "
                        "'Numba'), default all")
    parser.add_argument("--sample-worker", nargs=2, metavar=("MODEL", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sample_worker:
        print(json.dumps(sample_worker(*args.sample_worker, args.tune, args.draws)))
        return
    names = list(MODELS) if args.all or args.only else DEFAULT
    if args.only:
        names = [n for n in names if any(s.lower() in n.lower() for s in args.only)]
    if args.sample:
        sample_main(names, args)
        return
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
