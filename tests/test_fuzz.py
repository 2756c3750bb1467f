"""Differential fuzz test: random graphs compiled by eqgraph, with the default rules and with
``rulesets=[]``, against the same ops evaluated eagerly by NumPy (tests/fuzz_graphs.py).

Each graph mixes elementwise ops (comparisons and switch included), reductions, broadcasting
between operands of different ndim and static/unknown shapes, matmul chains of vectors,
matrices and 3-d batches, indexing (slices with negative steps, integers, integer arrays)
and writing through it (set_subtensor, inc_subtensor), DimShuffle, reshape, concatenate,
stack, zeros_like/ones_like, float32/float64/int64 inputs, Python-number constants, and input values
with zeros, -0.0, tiny and huge magnitudes. A graph passes when every output has NumPy's
shape and dtype, and its values agree within what rounding can explain (see
``fuzz_graphs.compare``), NaN and inf in the same places.

Deliberate differences from NumPy, allowed only with the default rules:

- "stabilized": a stability rewrite (log1p, softplus, log(exp(x)) -> x, sqrt(x*x) -> |x|,
  ...) gives a finite value where NumPy overflows; it must agree with a long double
  reference where that is finite;
- "assumed y != 0": ``x*y/y -> x`` (rulesets/algebra.egg) assumes ``y`` is neither 0 nor
  infinite, so eqgraph gives ``x`` where NumPy gives NaN;
- "signed zero of log1p/expm1": log1p(-0.0) and expm1(-0.0) are -0.0, while NumPy's
  log(1 + -0.0) and exp(-0.0) - 1 are +0.0.

Graphs spoiled by a bug that is being fixed elsewhere (``fuzz_graphs.KNOWN_BUGS``, each with
a strict xfail test in tests/test_fuzz_regressions.py) are counted, not failed.
"""

from collections import Counter

import pytest

from fuzz_graphs import KNOWN_BUGS, check, make_graph

DEFAULT_SAMPLE = range(250)      # about 15 s on an idle 2-core machine
SLOW_SAMPLE = range(10_000, 15_000)


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


def test_the_sample_reaches_every_feature():
    """The default sample exercises what the fuzz test promises (so that a change of the
    generator cannot quietly drop a part of it)."""
    ops, dtypes, ndims, matmul_ndims, static = Counter(), Counter(), Counter(), Counter(), Counter()
    for seed in DEFAULT_SAMPLE[:150]:
        graph = make_graph(seed)
        for sym, value in graph.inputs:
            dtypes[value.dtype.name] += 1
            ndims[value.ndim] += 1
            static.update("unknown" if s is None else "size 1" if s == 1 else "known" for s in sym.type.shape)
        for term in graph.terms():
            ops[term.op] += 1
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
def test_many_random_graphs_match_numpy():
    """5,000 graphs; prints how many, and the deliberate differences and known bugs met."""
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
