"""Shape roots stated by the encoder (eqgraph/egraph/encode.py) for types.egg's `shape-root`:
every root is a true witness (the term and its root have one shape at run time, on random
graphs with broadcasting), and a chain of elementwise ops gets its input's root at once."""

import numpy as np
import pytest
from fuzz_graphs import make_graph

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph import egraph
from eqgraph.terms import FunctionGraph
from eqgraph.terms.graph import toposort


def stated_roots(inputs, outputs) -> dict:
    """{variable: the variable of its shape-root}, as encoded, before any rule runs."""
    fgraph = FunctionGraph(inputs, outputs, clone=False)
    with egraph.session(["types"]) as session:
        encoded = session.encode(fgraph)
        by_id = {k: v for v, k in encoded.ids.items()}
        roots = {}
        for var, k in encoded.ids.items():
            [text] = encoded.session.run(f"(extract (shape-root (N {k})))")
            roots[var] = by_id[int(str(text))]
    return roots


@pytest.mark.parametrize("seed", range(40))
def test_every_stated_root_has_the_terms_shape_at_run_time(seed):
    graph = make_graph(seed)
    inputs = [sym for sym, _ in graph.inputs]
    outputs = [t.sym for t in graph.outputs]
    roots = stated_roots(inputs, outputs)
    terms = [v for v in roots if hasattr(v.type, "shape")]
    run = eg.function(inputs, [v for v in terms], rulesets=[])
    with np.errstate(all="ignore"):
        values = dict(zip(terms, run(*[value for _, value in graph.inputs])))
    for var in terms:
        root = roots[var]
        assert np.shape(values[var]) == np.shape(values[root]), (var, root)


def test_an_elementwise_chain_has_its_inputs_root():
    x, s = et.dvector("x"), et.dscalar("s")
    a = x
    for _ in range(30):
        t = et.tanh(a)
        a = t * 0.5 + t * x - s  # a constant and a broadcast 0-d input keep the shape
    roots = stated_roots([x, s], [a, et.dot(a, a) + s])
    elementwise = [v for v in roots if v.owner and v.type.ndim == 1 and isinstance(v.owner.op, et.Elemwise)]
    assert len(elementwise) > 100 and all(roots[v] is x for v in elementwise)
    product = next(v for v in roots if v.owner and not isinstance(v.owner.op, et.Elemwise) and v.type.ndim == 0)
    assert roots[product] is product  # not elementwise: its own root
