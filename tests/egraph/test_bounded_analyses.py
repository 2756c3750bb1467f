"""The analyses run to a fixed point around every rewrite step stay within ``Limits`` too: an
analysis whose rules build e-nodes (fold.egg's, a user's) runs in bounded steps, so a compile
ends in a graph and a stop reason, never in a process that egglog's allocator or the OOM
killer ends.

Each compile that could blow up runs in a subprocess whose address space is capped, so that a
regression fails the test instead of taking pytest (and the machine) with it."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

#: a compile here needs ~400 MB; an unbounded one aborts in egglog long before this
ADDRESS_SPACE = 3 << 30
#: a regression may also grow slowly rather than abort: it fails at this many seconds
SUBPROCESS_SECONDS = 300

PRELUDE = """
import json, resource
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
import numpy as np, eqgraph as eg, eqgraph.tensor as et
from eqgraph.egraph import adapter
from eqgraph.egraph.schema import BASE_CONSTRUCTORS

counts = []  # the term e-nodes egglog holds after every schedule it runs
run_schedule = adapter.Session.run_schedule

def counting(session, schedule):
    result = run_schedule(session, schedule)
    sizes = session.sizes()
    counts.append(sum(n for name, n in sizes.items() if name[:1].isupper() or name in BASE_CONSTRUCTORS))
    return result

adapter.Session.run_schedule = counting
"""


def run_capped(body: str) -> dict:
    """Run ``body`` after PRELUDE in a capped subprocess; return the JSON it prints last."""
    code = PRELUDE.format(cap=ADDRESS_SPACE) + textwrap.dedent(body)
    root = str(Path(__file__).resolve().parents[2])  # the eqgraph under test, not an installed one
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=SUBPROCESS_SECONDS, env=env)
    assert done.returncode == 0, f"the compile ended the process (rc {done.returncode}):\n{done.stderr[-3000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_constant_folding_fed_by_inexact_rewrites_stays_within_the_node_limit():
    # before: fold's fixed point multiplied every pair of the scalars that inexact rewrites had
    # put in one e-class (1.0 and 1e8 * 1e-8), doubling them each round: egglog aborted
    # ("memory allocation of ... bytes failed") at iteration 6 with Limits(nodes=100000)
    result = run_capped("""
        x = et.dmatrix("x")
        out = (et.exp(x) / et.exp(x)) * 1e8 / 1e8
        limits = eg.Limits(nodes=2_000, iterations=8)  # it blew up in iteration 6
        f = eg.function([x], out, limits=limits)
        report = f.stages.report
        value = f(np.full((2, 3), 0.5))
        print(json.dumps({"stop": report.stop_reason, "peak": max(counts), "nodes": limits.nodes,
                          "iterations": report.iterations, "value": value.tolist()}))
    """)
    assert result["peak"] <= 1.25 * result["nodes"]
    # the rewrites keep going on scalars that inexact rules put in one e-class: any limit may
    # be the one that stops it, on a slower or faster machine
    assert result["stop"] in {"nodes", "banned", "iterations", "seconds"}
    # which of the e-class's scalars extraction picks is the numerics rules' business:
    # within a few ulps of 1
    assert all(abs(v - 1.0) < 1e-12 for row in result["value"] for v in row)


def test_an_analysis_without_a_fixed_point_stops_at_the_node_limit():
    # associativity and commutativity run to a fixed point on a sum of 30 terms: exponential
    result = run_capped("""
        rules = '''
        (rewrite (Add a b) (Add b a) :name "add-comm")
        (birewrite (Add a (Add b c)) (Add (Add a b) c) :name "add-assoc")
        '''
        xs = [et.dvector(f"x{i}") for i in range(30)]
        total = xs[0]
        for x in xs[1:]:
            total = total + x
        limits = eg.Limits(nodes=3_000, match_limit=10**7)
        f = eg.function(xs, total, rulesets=["types", (rules, "saturate")], limits=limits)
        values = [np.full(3, float(i)) for i in range(len(xs))]
        print(json.dumps({"stop": f.stages.report.stop_reason, "peak": max(counts), "nodes": limits.nodes,
                          "sizes": f.stages.report.sizes, "sum": f(*values).tolist()}))
    """)
    assert result["peak"] <= 1.25 * result["nodes"]
    assert result["stop"] == "nodes"
    assert result["sizes"][0] > 2 * 59   # the analysis did rewrite the 59 e-nodes of the sum
    assert result["sum"] == [float(sum(range(30)))] * 3


def test_the_report_records_the_peak_analyses_included():
    result = run_capped("""
        rules = '''
        (rewrite (Add a b) (Add b a) :name "add-comm")
        (birewrite (Add a (Add b c)) (Add (Add a b) c) :name "add-assoc")
        '''
        xs = [et.dvector(f"x{i}") for i in range(12)]
        total = xs[0]
        for x in xs[1:]:
            total = total + x
        f = eg.function(xs, total, rulesets=["types", (rules, "saturate")], limits=eg.Limits(nodes=500))
        print(json.dumps({"peak": f.stages.report.peak, "counted": max(counts)}))
    """)
    assert result["peak"] == result["counted"]
