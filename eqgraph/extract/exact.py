"""Exact extraction: the cheapest DAG as a mixed-integer program (optional; needs SciPy).

For e-node n, x[n] = 1 when it is chosen; for e-class c, y[c] = 1 when the
graph needs it, and t[c] is its position in an order that forbids cycles:

    minimize   sum(price[n] * x[n])              each chosen node paid once
    subject to y[root] = 1
               sum(x[n] for n in c) = y[c]       one node per needed class
               x[n] <= y[k]                      a chosen node needs its children k
               t[c] - t[k] >= 1 - K (1 - x[n])   a chosen node comes after its children

The prices are those of the cheapest-first pass, an unstable e-node's with its
weight above the whole e-graph's cost (extraction._Pricer), so the optimum has the
fewest unstable e-nodes first. SciPy's HiGHS solves it. A matrix chain or the
starter rules' e-graphs solve quickly; the cyclic e-graphs of associativity and
commutativity solve slowly (a few hundred e-nodes can reach the ``seconds`` limit,
after which the cheaper of HiGHS's best DAG and the local search's is kept).
"""

from __future__ import annotations

import numpy as np


class ExactExtractionUnavailable(RuntimeError):
    """The integer program could not be set up or solved (no SciPy, too large, no solution)."""


def exact_choice(extraction, roots: list[str], max_nodes: int = 5000, seconds: float = 10.0) -> tuple[dict, bool]:
    """(the e-node per needed e-class of a cheapest DAG for ``roots``, whether it is proven
    optimal: after ``seconds`` HiGHS returns the best DAG it has found)."""
    try:
        from scipy.optimize import Bounds, LinearConstraint, milp
        from scipy.sparse import coo_array
    except ImportError as err:
        raise ExactExtractionUnavailable('exact extraction needs SciPy: pip install "eqgraph[exact]"') from err
    data, prices = extraction.data, extraction.node_cost
    nodes = sorted(prices)  # the e-nodes the first pass could price (make_node accepts them)
    if len(nodes) > max_nodes:
        raise ExactExtractionUnavailable(f"the e-graph has {len(nodes)} candidate e-nodes, more than "
                                         f"max_nodes={max_nodes} for exact extraction")
    classes = sorted({data.nodes[n].eclass for n in nodes} | {c for n in nodes for c in data.nodes[n].children})
    n_x, n_c = len(nodes), len(classes)
    x = {n: i for i, n in enumerate(nodes)}
    y = {c: n_x + i for i, c in enumerate(classes)}
    t = {c: n_x + n_c + i for i, c in enumerate(classes)}
    big = n_c + 1
    rows, cols, vals, lower, upper = [], [], [], [], []

    def constraint(terms, lo, hi):
        row = len(lower)
        for col, val in terms:
            rows.append(row)
            cols.append(col)
            vals.append(val)
        lower.append(lo)
        upper.append(hi)

    members: dict[str, list] = {c: [] for c in classes}
    for n in nodes:
        members[data.nodes[n].eclass].append(n)
    for c in classes:
        constraint([(x[n], 1.0) for n in members[c]] + [(y[c], -1.0)], 0.0, 0.0)
    for n in nodes:
        node = data.nodes[n]
        for k in set(node.children):
            constraint([(x[n], 1.0), (y[k], -1.0)], -np.inf, 0.0)
            constraint([(t[node.eclass], 1.0), (t[k], -1.0), (x[n], -big)], 1.0 - big, np.inf)
    n_vars = n_x + 2 * n_c
    lo, hi = np.zeros(n_vars), np.ones(n_vars)
    hi[n_x + n_c:] = n_c
    for root in roots:
        if root not in y:
            raise ExactExtractionUnavailable(f"e-class {root} has no extractable e-node")
        lo[y[root]] = 1.0
    cost = np.zeros(n_vars)
    cost[:n_x] = [prices[n] for n in nodes]
    integrality = np.zeros(n_vars)
    integrality[: n_x + n_c] = 1
    matrix = coo_array((vals, (rows, cols)), shape=(len(lower), n_vars)).tocsr()
    result = milp(cost, constraints=LinearConstraint(matrix, lower, upper), integrality=integrality,
                  bounds=Bounds(lo, hi), options={"time_limit": seconds})
    if result.x is None:
        raise ExactExtractionUnavailable(f"the integer program found no solution: {result.message}")
    chosen = result.x[:n_x] > 0.5
    return {data.nodes[n].eclass: n for n, keep in zip(nodes, chosen) if keep}, result.status == 0
