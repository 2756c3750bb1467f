"""Compiles of random graphs (tests/fuzz_graphs.py) stay bounded: under small node limits,
no compile ends the process, and the e-graph of each never holds more than 1.25x the limit
(or the encoded graph, where that is larger already) after any step, the analyses' steps included (counted as saturation counts it, from egglog's
table sizes, after every schedule egglog runs; and as ``Report.peak`` says).

The graphs compile in one subprocess with a capped address space, so that a compile that
blows up fails the test instead of taking pytest (and the machine) with it."""

import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

#: the node limit of each graph, by seed: small, so that the bound is exercised (the graphs
#: encode into 10 to 150 e-nodes)
NODE_LIMITS = (40, 100, 2_000)
ADDRESS_SPACE = 4 << 30
DEFAULT_SAMPLE = range(50)
#: EQGRAPH_BOUND_GRAPHS=500 runs a slice of the slow sample (its first graphs)
SLOW_SAMPLE = range(10_000, 10_000 + int(os.environ.get("EQGRAPH_BOUND_GRAPHS", 3_000)))

TESTS = Path(__file__).resolve().parent

SCRIPT = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
import numpy as np, eqgraph as eg
from eqgraph.egraph import adapter
from eqgraph.egraph.saturate import enode_count
from eqgraph.egraph.schema import BASE_CONSTRUCTORS
from fuzz_graphs import make_graph

counted = []  # the term e-nodes egglog held before the first schedule and after each, this compile
run_schedule = adapter.Session.run_schedule

def enodes(session):
    return sum(n for name, n in session.sizes().items() if name[:1].isupper() or name in BASE_CONSTRUCTORS)

def counting(session, schedule):
    if not counted:
        counted.append(enodes(session))
    result = run_schedule(session, schedule)
    counted.append(enodes(session))
    return result

adapter.Session.run_schedule = counting
for seed in range({start}, {stop}):
    graph = make_graph(seed)
    print(json.dumps({{"seed": seed, "started": True}}), flush=True)  # the last one started, if it dies
    counted.clear()
    nodes = {limits}[seed % {n_limits}]
    try:
        f = eg.function([s for s, _ in graph.inputs], [t.sym for t in graph.outputs], on_unused_input="ignore",
                        limits=eg.Limits(nodes=nodes))
    except Exception as err:
        print(json.dumps({{"seed": seed, "raised": f"{{type(err).__name__}}: {{str(err)[:300]}}"}}), flush=True)
        continue
    report = f.stages.report
    print(json.dumps({{"seed": seed, "nodes": nodes, "encoded": counted[0], "counted": max(counted),
                      "peak": report.peak, "stop": report.stop_reason}}), flush=True)
"""


def compile_all(seeds: range) -> list[dict]:
    code = SCRIPT.format(cap=ADDRESS_SPACE, start=seeds.start, stop=seeds.stop, limits=NODE_LIMITS,
                         n_limits=len(NODE_LIMITS))
    root = str(TESTS.parent)  # the eqgraph under test, and fuzz_graphs beside this file
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, str(TESTS), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    last = lines[-1]["seed"] if lines else None
    assert done.returncode == 0, (f"compiling fuzz graph {last} ended the process (rc {done.returncode}):\n"
                                  f"{done.stderr[-3000:]}")
    return [line for line in lines if "started" not in line]


def check_bounds(seeds: range) -> None:
    results = compile_all(seeds)
    assert len(results) == len(seeds)
    raised = [r for r in results if "raised" in r]
    assert not raised, f"{len(raised)} compiles raised under small node limits: {raised[:5]}"
    over = [r for r in results if max(r["peak"], r["counted"]) > max(1.25 * r["nodes"], r["encoded"])]
    assert not over, f"{len(over)} compiles held more than 1.25x their node limit: {over[:5]}"
    # the report's peak is what egglog held: saturate measures after every step it runs
    assert all(r["peak"] == r["counted"] for r in results), [r for r in results if r["peak"] != r["counted"]][:5]
    stops = Counter((r["nodes"], r["stop"]) for r in results)
    assert any(stop == "nodes" for _, stop in stops), stops  # the bound was exercised
    print(f"\n{len(results)} graphs: largest e-graph {max(r['peak'] for r in results)} e-nodes, "
          f"largest over its limit {max(r['peak'] / r['nodes'] for r in results):.2f}x; "
          f"(limit, stop reason): {dict(stops)}")


def test_compiles_of_random_graphs_stay_within_the_node_limit():
    check_bounds(DEFAULT_SAMPLE)


@pytest.mark.slow
def test_many_compiles_of_random_graphs_stay_within_the_node_limit():
    check_bounds(SLOW_SAMPLE)
