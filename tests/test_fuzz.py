"""Differential fuzz test: random graphs compiled by eqgraph, with the default rules and with
``rulesets=[]``, against the same ops evaluated eagerly by NumPy (tests/fuzz_graphs.py).

Each graph mixes elementwise ops (comparisons and switch included), reductions, broadcasting
between operands of different ndim and static/unknown shapes, matmul chains of vectors,
matrices and 3-d batches, indexing (slices with negative steps, integers, integer arrays)
and writing through it (set_subtensor, inc_subtensor), DimShuffle, reshape, concatenate,
stack, zeros_like/ones_like, float32/float64/int64/bool inputs, Python-number constants, and input
values with 0, -0.0, inf, -inf, NaN, the largest magnitudes (1e300) and denormals (5e-324); switch
takes comparisons, boolean inputs and integer terms as its condition. A graph passes when every output has NumPy's
shape and dtype, and its values agree within what rounding can explain (see
``compare`` below), NaN and inf in the same places.

Deliberate differences from NumPy, allowed only with the default rules (docs/numerics.md: a
default rewrite never turns NumPy's NaN into a number, so ``x*y/y`` is NaN at ``y = 0``):

- "stabilized": a stability rewrite (log1p, softplus, log(exp(x)) -> x, sqrt(x*x) -> |x|,
  ...) gives a finite value where NumPy overflows; it must agree with a long double
  reference where that is finite;
- "signed zero of log1p/expm1": log1p(-0.0) and expm1(-0.0) are -0.0, while NumPy's
  log(1 + -0.0) and exp(-0.0) - 1 are +0.0;
- "inf/NaN of another association": matmul-assoc (rulesets/matmul.egg) picks the cheapest
  association of a chain, whose intermediate products may overflow, or meet inf * 0, where
  NumPy's left-to-right order does not: inf or NaN in other places (float32 values near
  1e38, say).

Graphs spoiled by a bug that is being fixed elsewhere (``KNOWN_BUGS`` below, each with
a strict xfail test in tests/test_fuzz_regressions.py) are counted, not failed.
"""

import dataclasses
import functools
import os
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from fuzz_graphs import LD, Graph, Term, make_graph, spread

DEFAULT_SAMPLE = range(250)      # a sample the default run can afford
#: EQGRAPH_FUZZ_GRAPHS=500 runs a slice of the slow sample (its first graphs)
SLOW_SAMPLE = range(10_000, 10_000 + int(os.environ.get("EQGRAPH_FUZZ_GRAPHS", 5_000)))


# -- checking eqgraph against the eager lanes ----------------------------------------------
MODES = {"default rules": {}, "rulesets=[]": {"rulesets": []}}


@dataclass
class Outcome:
    problems: list = field(default_factory=list)  # mismatches: (mode, kind, text)
    known: list = field(default_factory=list)     # mismatches of a bug in KNOWN_BUGS: (bug, mode, text)
    allowed: list = field(default_factory=list)   # deliberate differences seen: (mode, kind)


def check(graph: Graph, modes=MODES) -> Outcome:
    """Compile ``graph`` with and without rules (or as ``modes`` says: name -> keyword
    arguments of ``eg.function``), run it on its inputs, compare with NumPy."""
    outcome = Outcome()
    syms = [s for s, _ in graph.inputs]
    for mode, kwargs in modes.items():
        found = []
        try:
            f = eg.function(syms, [t.sym for t in graph.outputs], on_unused_input="ignore", **kwargs)
            with np.errstate(all="ignore"):  # overflow and NaN are expected; they are compared
                results = f(*[v.copy() for _, v in graph.inputs])
        except Exception as err:  # noqa: BLE001 -- any crash is a finding, reported with the graph
            found.append(("raised", f"{type(err).__name__}: {str(err)[:300]}"))
            results = []
        for i, (term, got) in enumerate(zip(graph.outputs, results)):
            rules = kwargs.get("rulesets") != []
            kind, text, allowed = compare(term, np.asarray(got), rules, graph.tags)
            if kind:
                found.append((kind, f"output {i}: {text}"))
            outcome.allowed += [(mode, a) for a in allowed]
        for kind, text in found:
            bug = next((name for name, (applies, _) in KNOWN_BUGS.items() if applies(graph, mode, kind, text)), None)
            if bug:
                outcome.known.append((bug, mode, text))
            else:
                outcome.problems.append((mode, kind, text))
    return outcome


def compare(term: Term, got: np.ndarray, rules: bool, tags: frozenset):
    """``(kind of mismatch or None, description, [deliberate differences seen])`` for
    eqgraph's ``got`` against the lanes of ``term``."""
    want = np.asarray(term.value)
    if got.shape != want.shape:
        return "shape", f"shape {got.shape}, NumPy's is {want.shape}", []
    if got.dtype != want.dtype:
        return "dtype", f"dtype {got.dtype}, NumPy's is {want.dtype}", []
    if want.dtype.kind != "f":
        bad = got != want
        return ("value", _first(bad, got, want, term), []) if bad.any() else (None, "", [])
    with np.errstate(all="ignore"):
        ref, s = term.lanes[1].astype(LD), spread(term.lanes)
        finite_lanes = np.array([np.isfinite(lane) for lane in term.lanes[1:]])
        unsure = finite_lanes.any(axis=0) != finite_lanes.all(axis=0)  # rounding decides finiteness
        eps, tiny = np.finfo(want.dtype).eps, np.finfo(want.dtype).tiny
        g, w = got.astype(LD), want.astype(LD)

        def close(a, b):
            return (a == b) | (np.abs(a - b) <= 8 * s + 4 * eps * np.abs(b) + tiny)

        fin_g, fin_w = np.isfinite(g), np.isfinite(w)
        bad = np.where(fin_g & fin_w, ~close(g, w), ~fin_g & fin_w)
        inf_sign = np.isinf(g) & np.isinf(w) & (g != w)
        bad |= ~fin_g & ~fin_w & ~(np.isnan(g) & np.isnan(w)) & (g != w) & ~inf_sign
        # With rules, eqgraph may be more accurate than NumPy where NumPy overflowed on the
        # way (stability rewrites; beyond long double's range too, as log(exp(1e200)) -> 1e200).
        differs = bad | (fin_g & ~fin_w)
        ref_rounded = ref.astype(want.dtype).astype(LD)  # inf where the exact value overflows the dtype
        stabilized = differs & np.where(np.isfinite(ref), close(g, ref_rounded), fin_g & ("stable" in tags))
        # matmul-assoc picks the cheapest association, whose products may overflow (or meet
        # inf * 0) where NumPy's left-to-right ones do not; such an overflow may flip an inf's sign
        reassociated = (differs & (~fin_g | ~fin_w) | inf_sign) & ("overflowing association" in tags)
        inf_sign = inf_sign & ~(reassociated & rules)
        bad = differs & ~((stabilized | reassociated) & rules)
        zero_sign = (g == 0) & (w == 0) & (np.signbit(g) != np.signbit(w))
        bad, inf_sign, zero_sign = bad & ~unsure, inf_sign & ~unsure, zero_sign & ~unsure
        allowed = [kind for kind, mask in (("stabilized", stabilized),
                                           ("inf/NaN of another association", reassociated))
                   if rules and mask.any()]
        if rules and "stable" in tags and (zero_sign | inf_sign).any():
            # log1p(-0.0) and expm1(-0.0) are -0.0, as the functions' Taylor series say;
            # log(1 + -0.0) and exp(-0.0) - 1 are +0.0
            allowed.append("signed zero of log1p/expm1")
            zero_sign, inf_sign = zero_sign & False, inf_sign & False
        for kind, mask in (("value", bad), ("signed zero", zero_sign | inf_sign)):
            if mask.any():
                return kind, _first(mask, got, want, term), allowed
        return None, "", allowed


def _first(bad, got, want, term) -> str:
    idx = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.ndim else ()
    return (f"{int(bad.sum())} of {bad.size} elements differ, e.g. at {idx}: eqgraph {got[idx]!r}, "
            f"NumPy {want[idx]!r}, long double {term.lanes[1][idx]!r}")


# -- bugs known and being fixed elsewhere: the graphs they spoil are counted, not failed ---
#: name: (whether a mismatch (graph, mode, kind, text) is the bug, its strict-xfail test in
#: tests/test_fuzz_regressions.py). Empty: every bug the fuzz test found is fixed.
KNOWN_BUGS: dict = {}


# -- gradients against finite differences ------------------------------------------------
#: the step of the central differences, relative to the inputs' scale: small enough for the
#: second-order error, large enough that rounding (eps / step) stays near 1e-10
FD_STEP = 1e-5


def check_gradient(graph: Graph, seed: int):
    """``(problem or None, why skipped or None)``: the gradient of a weighted sum of the graph's
    float64 outputs, with respect to its float64 inputs, in a random direction, against
    central differences of the same function compiled without rules.

    Points near a kink or a jump (abs at 0, maximum of equals, a comparison that a small
    step flips, floor near an integer) have no derivative to compare: there the one-sided
    differences disagree, and the graph is skipped; so is one whose values are not finite."""
    rng = np.random.default_rng([seed, 2])
    wrt = [(s, v) for s, v in graph.inputs if v.dtype == np.float64 and v.size]
    outs = [t for t in graph.outputs if t.value.dtype == np.float64 and t.value.size]
    values = [v for _, v in graph.inputs]
    if not wrt or not outs or not all(np.isfinite(v).all() for _, v in wrt):
        return None, "no finite float64 input or float64 output"
    weights = [rng.normal(size=t.shape) for t in outs]
    cost = sum(et.sum(t.sym * et.constant(w)) for t, w in zip(outs, weights))
    syms = [s for s, _ in graph.inputs]
    try:
        grads = eg.grad(cost, [s for s, _ in wrt], disconnected_inputs="ignore")
        gradient = eg.function(syms, grads, on_unused_input="ignore")
        forward = eg.function(syms, cost, on_unused_input="ignore", rulesets=[])
    except Exception as err:  # noqa: BLE001 -- a crash is a finding, reported with the graph
        return f"raised {type(err).__name__}: {str(err)[:300]}", None
    directions = [rng.normal(size=v.shape) for _, v in wrt]
    positions = [i for i, (s, _) in enumerate(graph.inputs) if any(s is w for w, _ in wrt)]

    def at(t):
        moved = list(values)
        for i, d in zip(positions, directions):
            moved[i] = values[i] + t * d
        with np.errstate(all="ignore"):
            return float(forward(*[v.copy() for v in moved]))

    magnitudes = np.concatenate([np.abs(v).ravel() for _, v in wrt])
    # near 1e200 or 700, differences of overflowing or saturated terms measure nothing; near
    # 1e-20, partial derivatives of 1e20 cancel (x / x) with rounding errors far above the step's
    if (magnitudes > 1e3).any() or ((magnitudes > 0) & (magnitudes < 1e-8)).any():
        return None, "extreme inputs"
    scale = max(1.0, float(magnitudes.max()))
    h = FD_STEP * scale
    f0, fp, fm = at(0.0), at(h), at(-h)
    if not np.isfinite([f0, fp, fm]).all():
        return None, "the cost is not finite near the point"
    forward_diff, backward_diff, central = (fp - f0) / h, (f0 - fm) / h, (fp - fm) / (2 * h)
    noise = 1e-7 * (abs(f0) + abs(fp) + abs(fm)) / h  # rounding of the cost, over the step
    if abs(forward_diff - backward_diff) > 1e-3 * (abs(central) + 1) + 10 * noise:
        return None, "near a kink"
    with np.errstate(all="ignore"):
        got = gradient(*[v.copy() for v in values])
        directional = float(sum(np.sum(g * d) for g, d in zip(got, directions)))
    if not abs(directional - central) <= 1e-4 * (abs(central) + 1) + 10 * noise:
        return (f"gradient . direction = {directional!r}, central differences {central!r} "
                f"(one-sided {forward_diff!r}, {backward_diff!r}; step {h:g})"), None
    return None, None


# -- the tests ----------------------------------------------------------------------
def _report(seed, graph, problems) -> str:
    lines = [f"fuzz graph {seed}: eqgraph disagrees with NumPy"]
    lines += [f"  [{mode}] {kind}: {text}" for mode, kind, text in problems]
    lines += ["reproduce with `fuzz_graphs.make_graph(%d)`; the graph:" % seed, graph.describe()]
    return "\n".join(lines)


@pytest.mark.parametrize("seed", DEFAULT_SAMPLE)
def test_random_graph_matches_numpy(seed):
    graph = make_graph(seed)
    outcome = check(graph)
    assert not outcome.problems, _report(seed, graph, outcome.problems)


GRADIENT_SAMPLE = range(100)  # about a third have float64 inputs and outputs, as checked


@functools.cache  # the coverage test reads the same results: a file runs in one process (--dist loadfile)
def _gradient_outcome(seed: int):
    return check_gradient(make_graph(seed), seed)


@pytest.mark.parametrize("seed", GRADIENT_SAMPLE)
def test_random_graph_gradient_matches_finite_differences(seed):
    graph = make_graph(seed)
    problem, _ = _gradient_outcome(seed)
    assert problem is None, (f"fuzz graph {seed}: its gradient disagrees: {problem}\n"
                             f"reproduce with `fuzz_graphs.make_graph({seed})`; the graph:\n{graph.describe()}")


@pytest.mark.parametrize("key, wrong", [
    ("mul", lambda g, out, a, b: [g * b, g * b]),      # the second operand's cotangent is the first's
    ("exp", lambda g, out, x: [g * x]),
])
def test_the_gradient_check_catches_a_wrong_vjp(monkeypatch, key, wrong):
    """The one-sided test skips kinks, not wrong derivatives: with one wrong VJP, some graph
    of the sample disagrees."""
    from eqgraph.grad import vjps

    monkeypatch.setitem(vjps.VJPS, key, [dataclasses.replace(vjps.VJPS[key][0], fn=wrong)])
    assert any(check_gradient(make_graph(seed), seed)[0] for seed in GRADIENT_SAMPLE)


def test_the_gradient_sample_checks_most_graphs():
    """Kinks and non-finite values skip a graph: the sample still checks gradients."""
    skipped = Counter(_gradient_outcome(seed)[1] for seed in GRADIENT_SAMPLE)
    assert skipped[None] >= len(GRADIENT_SAMPLE) // 5, skipped


def test_the_sample_reaches_every_feature():
    """The default sample exercises what the fuzz test promises (so that a change of the
    generator cannot quietly drop a part of it)."""
    ops, dtypes, ndims, matmul_ndims, static = Counter(), Counter(), Counter(), Counter(), Counter()
    extremes, conditions = Counter(), Counter()
    for seed in DEFAULT_SAMPLE[:150]:
        graph = make_graph(seed)
        for sym, value in graph.inputs:
            dtypes[value.dtype.name] += 1
            ndims[value.ndim] += 1
            static.update("unknown" if s is None else "size 1" if s == 1 else "known" for s in sym.type.shape)
            if value.dtype.kind == "f":
                extremes.update(name for name, seen in _extremes(value).items() if seen.any())
        for term in graph.terms():
            ops[term.op] += 1
            if term.op == "switch":
                conditions[term.args[0].value.dtype.kind] += 1
            if term.op == "matmul":
                matmul_ndims.update(a.ndim for a in term.args)
                if any(a.op == "matmul" for a in term.args):
                    ops["matmul chain"] += 1
    for op in ("add", "mul", "true_div", "log", "exp", "switch", "sum", "prod", "max", "mean",
               "index", "dimshuffle", "transpose", "reshape", "matmul", "matmul chain", "log1p", "pow",
               "set_subtensor", "inc_subtensor", "concatenate", "stack"):
        assert ops[op] > 0, f"no {op} in the sample: {ops}"
    assert any(ops[c] for c in ("lt", "le", "gt", "ge", "eq", "neq")), ops
    assert set(dtypes) >= {"float32", "float64", "int64"}, dtypes
    assert set(ndims) >= {0, 1, 2, 3}, ndims
    assert set(matmul_ndims) >= {1, 2, 3}, matmul_ndims
    assert set(static) == {"unknown", "size 1", "known"}, static
    assert set(extremes) == {"0", "-0.0", "inf", "-inf", "NaN", "huge", "-huge", "denormal"}, extremes
    assert set(conditions) == {"b", "i"}, conditions  # comparisons, boolean inputs, integer terms


def _extremes(value: np.ndarray) -> dict:
    with np.errstate(all="ignore"):
        huge = np.isfinite(value) & (np.abs(value) >= 1e300 if value.dtype == np.float64 else np.abs(value) >= 1e38)
        return {"0": (value == 0) & ~np.signbit(value), "-0.0": (value == 0) & np.signbit(value),
                "inf": value == np.inf, "-inf": value == -np.inf, "NaN": np.isnan(value),
                "huge": huge & (value > 0), "-huge": huge & (value < 0),
                "denormal": (value != 0) & (np.abs(value) < np.finfo(value.dtype).tiny)}


@pytest.mark.parametrize("rule", [
    '(rewrite (Exp x) x :when ((= (dtype (Exp x)) (dtype x))) :name "exp-drops")',
    '(rewrite (Mul x y) x :when ((= (dtype (Mul x y)) (dtype x))) :name "mul-drops")',
    '(rewrite (Log1p x) (Log x) :name "log1p-is-log")',
    '(rewrite (TrueDiv x y) (Mul x y) :name "div-is-mul")',
])
def test_the_comparison_catches_an_unsound_rule(rule):
    """The tolerances leave room for rounding, not for wrong rewrites: compiled with one
    unsound rule, some graph of the sample disagrees."""
    modes = {"unsound rule": {"rulesets": [rule]}}
    assert any(check(make_graph(seed), modes).problems for seed in DEFAULT_SAMPLE[:150])


@pytest.mark.slow
def test_many_random_graph_gradients_match_finite_differences():
    """The gradient check on the slow sample; prints how many graphs it checked."""
    failures, skipped = [], Counter()
    for seed in SLOW_SAMPLE:
        graph = make_graph(seed)
        problem, why = check_gradient(graph, seed)
        skipped[why] += 1
        if problem:
            failures.append(f"fuzz graph {seed}: {problem}\n{graph.describe()}")
    print(f"\n{len(SLOW_SAMPLE)} graphs: {skipped[None]} checked, skipped: {dict(skipped)}")
    assert not failures, f"{len(failures)} gradients disagree:\n\n" + "\n\n".join(failures[:10])


@pytest.mark.slow
def test_many_random_graphs_match_numpy():
    """5,000 graphs (or EQGRAPH_FUZZ_GRAPHS); prints how many, and the deliberate differences and known bugs met."""
    failures, allowed, known = [], Counter(), Counter()
    for seed in SLOW_SAMPLE:
        graph = make_graph(seed)
        outcome = check(graph)
        allowed.update(kind for _, kind in outcome.allowed)
        known.update(bug for bug, _, _ in outcome.known)
        if outcome.problems:
            failures.append(_report(seed, graph, outcome.problems))
    print(f"\n{len(SLOW_SAMPLE)} graphs, {len(failures)} mismatches; deliberate differences met: "
          f"{dict(allowed)}; graphs hitting known bugs: {dict(known)}")
    for name, (_, test) in KNOWN_BUGS.items():
        print(f"  known bug {name!r}: {known[name]} graphs, see {test}")
    assert not failures, f"{len(failures)} of {len(SLOW_SAMPLE)} graphs disagree:\n\n" + "\n\n".join(failures[:10])
