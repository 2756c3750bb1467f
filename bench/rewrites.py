"""Issue 11's rewrite benchmark: every corpus expression compiled by eqgraph and by PyTensor.

    PYTHONPATH=. python bench/rewrites.py [--family stability] [--quick] [--case NAME]

The corpus (``bench/rewrite_corpus.py``) holds everyday expressions and gradients across the
rewrite families of issue 11. Each is compiled by eqgraph in both numerics modes (the default,
and ``assume_finite=True``, which also applies the rewrites that assume finite values and
nonzero divisors, as PyTensor does: docs/numerics.md) and by PyTensor's default mode in one
run, and one line is printed per expression:

- ``key``: whether the key rewrite applied (a predicate over the compiled graph; the last
  column says which), for eqgraph / eqgraph with assume_finite / PyTensor; ``ref`` where
  eqgraph refuses it on purpose, as wrong for some values or shapes these inputs may have (the
  case's ``refused`` says why; it counts as not applied);
- ``nodes``: apply nodes in the compiled graph (PyTensor's ``f.maker.fgraph``, without its
  output ``DeepCopyOp``s; eqgraph's ``f.stages.fused``, or ``optimized`` before fusion existed),
  and in brackets the ops with fused elementwise kernels opened up (PyTensor's ``Composite``;
  eqgraph's ``f.stages.optimized``), which is what the key reads;
- ``err``: max relative error (default mode) against the stable reference on the extreme input (``!`` marks
  a non-finite result where the reference is finite, ``~`` an ordinary input: the case has
  no extreme one);
- ``time``: per-call time eqgraph / PyTensor at a medium size (min over repeats of timeit).

PyTensor 3's default mode links with Numba, which leaves out the C BLAS rewrites (Gemm, Gemv):
the dot family's fused forms are scored as that mode compiles them. A summary follows: expressions where eqgraph is non-finite or less accurate than PyTensor, key
rewrites applied by each, and the geometric mean of the time ratios. Without PyTensor the
eqgraph columns are still printed.
"""

from __future__ import annotations

import argparse
import math
import time
import timeit
import warnings

import numpy as np

from rewrite_corpus import CASES, GraphNode, eqgraph_namespace, namespace, normalize, same_result, static_shape


# --- the two libraries ------------------------------------------------------------------------------------

class Eqgraph:
    name = "eqgraph"

    def __init__(self, assume_finite: bool = False):
        import eqgraph as eg
        import eqgraph.tensor as et

        self.eg, self.et, self.T = eg, et, eqgraph_namespace()
        self.assume_finite = assume_finite

    def inputs(self, case):
        return [self.et.tensor(f"x{i}", dtype=d, shape=static_shape(s)) for i, (d, s) in enumerate(case.inputs)]

    def compile(self, inputs, outputs):
        return self.eg.function(inputs, outputs, assume_finite=self.assume_finite)

    def nodes(self, f) -> tuple[int, list]:
        # what runs is f.stages.fused once elementwise fusion (issue 12) is in; the ops are read
        # before fusion, from what extraction chose
        ran = getattr(f.stages, "fused", f.stages.optimized)
        return len(ran.toposort()), graph_nodes(f.stages.optimized.toposort(), self._name, lambda op: None)

    @staticmethod
    def _name(op) -> str:
        kind = type(op).__name__
        if kind in ("Elemwise", "Reduce"):
            return op.name
        if kind == "Softmax":
            return "logsoftmax" if op.log else "softmax"
        return kind


REDUCE_NAMES = {"add": "sum", "mul": "prod", "maximum": "max", "minimum": "min", "and": "all", "or": "any"}


class PyTensor:
    name = "pytensor"

    def __init__(self):
        import pytensor
        import pytensor.tensor as pt
        from pytensor.tensor import special

        self.pytensor, self.pt = pytensor, pt
        self.T = namespace(pt, grad=pytensor.grad, softmax=special.softmax, log_softmax=special.log_softmax,
                           setsub=lambda x, idx, y: pt.set_subtensor(x[idx], y),
                           incsub=lambda x, idx, y: pt.inc_subtensor(x[idx], y))

    def inputs(self, case):
        return [self.pt.tensor(f"x{i}", dtype=d, shape=static_shape(s)) for i, (d, s) in enumerate(case.inputs)]

    def compile(self, inputs, outputs):
        return self.pytensor.function(inputs, outputs)

    def nodes(self, f) -> tuple[int, list]:
        order = [n for n in f.maker.fgraph.toposort() if type(n.op).__name__ != "DeepCopyOp"]
        return len(order), graph_nodes(order, self._name, self._inner)

    @staticmethod
    def _inner(op):
        return getattr(getattr(op, "scalar_op", None), "fgraph", None) or getattr(op, "fgraph", None)

    @staticmethod
    def _name(op) -> str:
        kind = type(op).__name__
        if kind == "Blockwise":
            return type(op.core_op).__name__
        scalar = getattr(op, "scalar_op", None)
        if kind == "Elemwise":
            return type(scalar).__name__
        if scalar is not None and kind in ("CAReduce", "Sum", "Prod", "Max", "Min", "All", "Any"):
            return REDUCE_NAMES.get(normalize(type(scalar).__name__), kind)
        return kind


def graph_nodes(order, name_of, inner_of) -> list[GraphNode]:
    """Normalized nodes of ``order`` (apply nodes, topologically sorted), opening up every op
    with an inner graph (a fused kernel) so that a predicate sees the ops it computes."""
    found = []

    def walk(apply_nodes, producer, ndim=None):
        for node in apply_nodes:
            args = [producer.get(v) for v in node.inputs]
            rank = node.outputs[0].type.ndim if ndim is None else ndim   # inner scalars: the kernel's
            inner = inner_of(node.op)
            if inner is not None:
                local = dict(zip(inner.inputs, args))
                walk(inner.toposort(), local, rank)
                producer.update((out, local.get(v)) for out, v in zip(node.outputs, inner.outputs))
                continue
            made = GraphNode(normalize(name_of(node.op)), args, rank)
            found.append(made)
            producer.update((out, made) for out in node.outputs)

    walk(order, {})
    return found


# --- measuring ---------------------------------------------------------------------------------------------

def relative_error(got, want) -> tuple[float, bool]:
    """(max relative error, whether ``got`` is non-finite where ``want`` is finite).

    The reference is first rounded to ``got``'s dtype: a float32 result cannot hold exp(-120).
    NaN where the reference is NaN, and the same infinity, count as exact."""
    got = np.asarray(got)
    with np.errstate(all="ignore"):
        want = np.asarray(want).astype(got.dtype if got.dtype.kind == "f" else np.longdouble)
    got, want = got.astype(np.longdouble), want.astype(np.longdouble)
    if got.shape != want.shape:
        return math.inf, False
    nonfinite = bool(np.any(~np.isfinite(got) & np.isfinite(want)))
    exact = (np.isnan(got) & np.isnan(want)) | (got == want)
    tiny = np.finfo(np.float64).tiny
    with np.errstate(all="ignore"):
        err = np.where(exact, 0, np.abs(got - want) / np.maximum(np.abs(want), tiny))
    err = np.where(np.isnan(err), np.inf, err)
    return (float(err.max()) if err.size else 0.0), nonfinite


def per_call(fn, repeat: int) -> float:
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    number = max(1, int(0.01 / once))
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def measure(lib, case, repeat: int) -> dict:
    """Compile ``case`` with ``lib``; its key, node counts, error on the extreme input, time."""
    try:
        xs = lib.inputs(case)
        out = case.build(lib.T, *xs)
        f = lib.compile(xs, list(out) if isinstance(out, tuple) else [out])
        count, nodes = lib.nodes(f)
    except Exception as error:  # a library that cannot build or compile a case is a finding
        return {"error": f"{type(error).__name__}: {error}".splitlines()[0][:100]}
    values = case.extreme_values() or case.ordinary("tiny")
    with np.errstate(all="ignore"):
        try:
            errors = [relative_error(g, w) for g, w in zip(f(*values), case.expected(values))]
        except Exception as error:
            return {"error": f"run: {type(error).__name__}: {error}".splitlines()[0][:100]}
    medium = case.ordinary("medium", seed=1)
    seconds = per_call(lambda: f(*medium), repeat) if repeat else math.nan
    return {"key": bool(case.key.holds(nodes)), "count": count, "ops": len(nodes),
            "err": max(e for e, _ in errors), "nonfinite": any(bad for _, bad in errors), "time": seconds,
            "witness": on_witness(case, f)}


def on_witness(case, f) -> str | None:
    """What the compiled ``f`` gives on the inputs where the case's refused rewrite changes the
    result: "same" (as the reference), "changed", or "raises"; None for a case with no witness."""
    values = case.witness_values()
    if values is None:
        return None
    with np.errstate(all="ignore"):
        try:
            got = f(*values)
        except Exception:  # noqa: BLE001  (PyTensor refuses a length-1 operand broadcast at run time)
            return "raises"
        same = all(same_result(g, w) for g, w in zip(got, case.expected(values), strict=True))
    return "same" if same else "changed"


def eps_of(case) -> float:
    return max(np.finfo(d).eps if np.dtype(d).kind == "f" else 0.0 for d, _ in case.inputs)


def worse(ours: dict, theirs: dict | None, eps: float) -> bool:
    """eqgraph less accurate than PyTensor, beyond a factor 2 and 100 ulps (a sum that cancels
    to near 0 on an ordinary input has a large relative error whichever order it adds in)."""
    if "error" in ours:
        return True
    if theirs is None or "error" in theirs:
        return False
    return ours["nonfinite"] and not theirs["nonfinite"] or ours["err"] > max(2 * theirs["err"], 100 * eps)


# --- the table -------------------------------------------------------------------------------------------------

def cell(result, field, refused=None) -> str:
    if result is None:
        return "-"
    if "error" in result:
        return "ERR"
    if field == "key":
        return "yes" if result["key"] else "ref" if refused else "no"
    if field == "nodes":
        return f"{result['count']}({result['ops']})"
    mark = "!" if result["nonfinite"] else ""
    return f"{result['err']:.1e}{mark}"


def row(case, ours, theirs, finite) -> str:
    extreme = "" if case.extreme is not None else "~"
    ratio = "-"
    if theirs and "error" not in theirs and "error" not in ours and not math.isnan(ours["time"]):
        ratio = f"{ours['time'] / theirs['time']:.3g}"
    return (f"{case.name:<32} {case.family:<11} {cell(ours, 'key', case.refused):>3}/{cell(finite, 'key'):>3}/"
            f"{cell(theirs, 'key'):<3} "
            f"{cell(ours, 'nodes'):>7}/{cell(theirs, 'nodes'):<7} {extreme}{cell(ours, 'err'):>9} "
            f"{extreme}{cell(theirs, 'err'):>9} {ratio:>6}  {case.key.text}")


def summary(results, finite) -> list[str]:
    lines = summary_of(results)
    keys = sum(1 for f in finite if f.get("key"))
    gained = [c.name for (c, o, _), f in zip(results, finite) if f.get("key") and not o.get("key")]
    changed = [c.name for (c, _, _), f in zip(results, finite) if f.get("witness") == "changed"]
    failed = [c.name for (c, _, _), f in zip(results, finite) if "error" in f]
    return lines + [f"with assume_finite=True: key rewrite applied {keys}, fails {len(failed)} {failed}",
                    f"  applied only when assuming finite values: {len(gained)} {gained}",
                    f"  results changed on their witness inputs: {len(changed)} {changed}"]


def summary_of(results) -> list[str]:
    both = [(c, o, t) for c, o, t in results if t is not None]
    failed = [f"{c.name}: {o['error']}" for c, o, _ in results if "error" in o]  # the error, to find it again
    nonfinite = [c.name for c, o, _ in results if "error" not in o and o["nonfinite"]]
    less = [c.name for c, o, t in results if "error" not in o and worse(o, t, eps_of(c))]
    ours_keys = sum(1 for _, o, _ in results if o.get("key"))
    theirs_keys = sum(1 for _, _, t in both if t.get("key"))
    ratios = [o["time"] / t["time"] for _, o, t in both
              if "error" not in o and "error" not in t and not math.isnan(o["time"])]
    lines = [f"{len(results)} expressions",
             f"eqgraph fails to compile or run: {len(failed)} {failed}",
             f"eqgraph non-finite where the reference is finite: {len(nonfinite)} {nonfinite}",
             f"eqgraph less accurate than PyTensor: {len(less)} {less}",
             f"key rewrite applied: eqgraph {ours_keys}, PyTensor {theirs_keys}"]
    if both:
        only_ours = [c.name for c, o, t in both if o.get("key") and not t.get("key")]
        only_theirs = [c.name for c, o, t in both if t.get("key") and not o.get("key")]
        refused = [name for name in only_theirs if next(c for c, _, _ in both if c.name == name).refused]
        lines += [f"  only eqgraph: {len(only_ours)} {only_ours}",
                  f"  only PyTensor: {len(only_theirs)} {only_theirs}",
                  f"    of which eqgraph refuses on purpose (wrong for some values or shapes of these inputs): "
                  f"{len(refused)} {refused}"]
        witnessed = [(c.name, o.get("witness"), t.get("witness")) for c, o, t in both if c.witness is not None]
        changed = [name for name, _, theirs in witnessed if theirs == "changed"]
        lines += [f"  refused rewrites on their witness inputs (eqgraph / PyTensor): "
                  + ", ".join(f"{name} {ours}/{theirs}" for name, ours, theirs in witnessed),
                  f"  key rewrites applied without changing a result on a witness: eqgraph "
                  f"{ours_keys - sum(1 for _, o, _ in both if o.get('key') and o.get('witness') == 'changed')}, "
                  f"PyTensor {theirs_keys - sum(1 for c, _, t in both if t.get('key') and c.name in changed)}"]
        pt_failed = [c.name for c, _, t in both if "error" in t]
        lines.append(f"PyTensor fails to compile or run: {len(pt_failed)} {pt_failed}")
    for family in dict.fromkeys(c.family for c, _, _ in results):
        mine = [(o, t) for c, o, t in results if c.family == family]
        lines.append(f"  {family:<11} key eqgraph {sum(1 for o, _ in mine if o.get('key')):>2}, "
                     f"PyTensor {sum(1 for _, t in mine if t and t.get('key')):>2} of {len(mine)}")
    if ratios:
        geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        lines.append(f"geomean time ratio eqgraph/PyTensor: {geomean:.2f} over {len(ratios)} expressions "
                     f"(min {min(ratios):.2f}, max {max(ratios):.2f})")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", help="only this family (stability, canonical, gradient, shapes, "
                                         "indexing, reductions, alloc, dot)")
    parser.add_argument("--case", help="only the cases whose name contains this")
    parser.add_argument("--quick", action="store_true", help="time with 2 repeats instead of 5")
    parser.add_argument("--no-time", action="store_true", help="skip the timing")
    args = parser.parse_args(argv)
    cases = [c for c in CASES if (args.family is None or c.family == args.family)
             and (args.case is None or args.case in c.name)]
    if not cases:
        parser.error(f"no case in family {args.family!r} matching {args.case!r}")
    repeat = 0 if args.no_time else 2 if args.quick else 5
    ours, ours_finite = Eqgraph(), Eqgraph(assume_finite=True)
    try:
        theirs = PyTensor()
    except ImportError:
        theirs = None
        print("(PyTensor not installed: pip install -e '.[bench]' to compare)")
    warnings.simplefilter("ignore")
    if theirs is not None:
        linker = type(theirs.pytensor.compile.mode.get_default_mode().linker).__name__
        print(f"eqgraph (default rulesets; key e/f: default / assume_finite=True) vs PyTensor "
              f"{theirs.pytensor.__version__} (default mode, {linker})")
    print(f"{'case':<32} {'family':<11} key e/f/p {'nodes e/p':^15} {'err eq':>10} {'err pt':>10} {'time':>6}  key")
    results, finite = [], []
    start = time.perf_counter()
    for case in cases:
        result = (case, measure(ours, case, repeat), theirs and measure(theirs, case, repeat))
        results.append(result)
        finite.append(measure(ours_finite, case, 0))   # keys and witnesses; the time is the default's
        print(row(*result, finite[-1]), flush=True)
    print()
    print("\n".join(summary(results, finite)))
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
