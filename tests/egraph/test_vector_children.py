"""A join's inputs are one vector child, ``(Join (vec-of a b c) axis)`` (egraph/schema.py):
what egglog 13 accepts and refuses for vector children, joins of any number of inputs, and
the old ``Join_<n>`` spelling in rule files (deprecated, still working)."""


import numpy as np
import pytest
from egglog import bindings

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.egraph.schema import Schema

PRELUDE = """
(sort T)
(sort TVec (Vec T))
(constructor Var (i64) T)
(constructor Exp (T) T)
(constructor Join (TVec i64) T)
(let $j (Join (vec-of (Exp (Var 0)) (Var 1)) 0))
"""


def _run(program: str):
    egraph = bindings.EGraph()
    return egraph.run_program(*egraph.parse_program(PRELUDE + program))


def test_egglog_refuses_a_vector_in_a_rewrite_pattern():
    """Why the other variadic ops keep Subtensor_1, Alloc_3: a rewrite cannot name a vector's entries."""
    with pytest.raises(Exception, match="ungrounded"):
        _run("(rewrite (Join (vec-of a b) axis) (Exp a))")


def test_egglog_matches_a_vector_child_in_conditions_and_rebuilds_it():
    _run("(rewrite (Join v axis) (Join (vec-of b x) axis)"
         " :when ((= (vec-length v) 2) (= (Exp x) (vec-get v 0)) (= b (vec-get v 1))))\n(run 1)\n"
         "(check (= $j (Join (vec-of (Var 1) (Var 0)) 0)))")
    with pytest.raises(Exception):  # a length condition that does not hold matches nothing
        _run("(rewrite (Join v axis) (Var 9) :when ((= (vec-length v) 3)))\n(run 1)\n(check (= $j (Var 9)))")
    # when two entries' e-classes merge, the joins that hold them are one e-node
    _run("(let $p (Join (vec-of (Var 0) (Var 1)) 0))\n(let $q (Join (vec-of (Var 0) (Var 2)) 0))\n"
         "(union (Var 1) (Var 2))\n(run 1)\n(check (= $p $q))")


def test_one_join_constructor_for_any_number_of_inputs():
    schema = Schema()
    assert schema.constructor(et.Join(0), 2) is schema.constructor(et.Join(1), 11)
    assert schema.by_name["Join"].declaration() == "(constructor Join (TVec i64) T)"
    assert not any(name.startswith("Join_") for name in schema.by_name)


def test_a_join_of_many_inputs_compiles_and_is_typed():
    xs = [et.tensor(f"x{i}", "float64", (2, None)) for i in range(11)]   # more than MAX_INPUTS
    y = et.concatenate(xs, axis=1) * 1.0
    f = eg.function(xs, y)
    values = [np.full((2, i + 1), float(i)) for i in range(11)]
    np.testing.assert_array_equal(f(*values), np.concatenate(values, axis=1))
    data = f.stages.extraction.data
    join = next(n for n in data.nodes.values() if n.op == "Join")
    assert len(join.children) == 11 and join.args == (1,)
    assert data.static_type(join.eclass) == ("float64", (2, None))   # types.egg walks the vector
