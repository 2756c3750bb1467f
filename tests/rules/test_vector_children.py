"""A join's inputs are one vector child, ``(Join (vec-of a b c) axis)`` (egraph/schema.py):
what egglog 13 accepts and refuses for vector children, joins of any number of inputs, and
the old ``Join_<n>`` spelling in rule files (deprecated, still working)."""

import warnings

import numpy as np
import pytest
from egglog import bindings

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.egraph.schema import Schema
from eqgraph.rules.ruleset import RuleFileError, parse_rules

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


OLD_RULES = """
(rewrite (Exp (Join_2 a b axis)) (Join_2 (Exp a) (Exp b) axis) :name "exp-of-join")
(rule ((= e (Join_2 (Exp a) b 0))) ((union e (Join_2 (Exp a) b 0))) :name "noop")
"""


def test_old_join_names_in_a_rule_file_still_work_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match="Join_<n> is deprecated"):
        rules = parse_rules(OLD_RULES, "oldjoin", "oldjoin.egg")
    text = rules.rules[0].text
    assert "(Join (vec-of (Exp a) (Exp b)) axis)" in text and "(vec-get join-inputs-0 0)" in text
    x, y = et.dvector("x"), et.dvector("y")
    out = et.exp(et.concatenate([x, y]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # warned above (loaded rulesets are cached)
        f = eg.function([x, y], out, rulesets=["types", OLD_RULES])
        proven = eg.equivalent(out, et.concatenate([et.exp(x), et.exp(y)]), rulesets=["types", OLD_RULES])
    matched = {name.split("/")[1]: n for name, n in f.stages.report.matches.items() if not name.startswith("types")}
    assert matched["exp-of-join"] >= 1 and matched["noop"] >= 1
    assert proven
    np.testing.assert_allclose(f([0.0, 1.0], [2.0]), np.exp([0.0, 1.0, 2.0]))


def test_a_birewrite_of_an_old_join_name_is_refused_clearly():
    with pytest.warns(DeprecationWarning), pytest.raises(RuleFileError, match="oldjoin.egg:1: a birewrite"):
        parse_rules("(birewrite (Join_2 a b 0) (Join_2 b a 0))", "oldjoin", "oldjoin.egg")
