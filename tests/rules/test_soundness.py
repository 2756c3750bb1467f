"""Every rewrite in every ruleset file is sound: both sides agree on random inputs.

Generic over rules: a new ``.egg`` file under ``rulesets/`` is covered with no
new test.  For each rule, the left-hand pattern is built as a graph from
random variable types and values; the e-graph must report that the rule
matched (so its guards held); then both sides, built from the same bindings,
are evaluated on random arrays and compared with ``values_eq_approx``.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from unification import isvar

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.inspect import parse_pattern
from eqgraph.rules import encode, saturate
from eqgraph.rules.ruleset import Ruleset, builtin_names, load
from eqgraph.rules.schema import Schema
from eqgraph.terms import FunctionGraph

SCHEMA = Schema()
RULES = [(name, rule) for name in builtin_names() for rule in load(name).rules if rule.kind != "rule"]
EXPONENTS = [0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 10.0, -1.5]
CHECKED: set = set()  # rules that matched and were evaluated on both sides
PRIMITIVE_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
                 "/": lambda a, b: a / b, "%": lambda a, b: a % b, "neg": lambda a: -a,
                 "vec-length": len, "vec-of": lambda *items: tuple(items), "vec-empty": tuple}


class Builder:
    """Builds eqgraph variables from rule patterns, choosing values for pattern variables."""

    def __init__(self, shape, draw):
        self.shape, self.draw = shape, draw
        self.tensors: dict = {}   # pattern variable -> symbolic input
        self.values: dict = {}    # pattern variable -> primitive value

    def tensor(self, v):
        if v not in self.tensors:
            self.tensors[v] = et.TensorType("float64", (None,) * len(self.shape))(str(v))
        return self.tensors[v]

    def primitive(self, v, kind):
        if isvar(v):
            if v not in self.values:
                self.values[v] = {"f64": lambda: self.draw(st.sampled_from(EXPONENTS)),
                                  "String": lambda: "float64", "i64": lambda: len(self.shape),
                                  "bool": lambda: False,
                                  "IntVec": lambda: tuple(range(len(self.shape))) + ("x",)}[kind]()
            return self.values[v]
        if isinstance(v, tuple):  # an egglog primitive expression, e.g. (/ c 2.0)
            return PRIMITIVE_OPS[v[0]](*[self.primitive(a, kind) for a in v[1:]])
        return v

    def build(self, pattern):
        if isvar(pattern):
            return self.tensor(pattern)
        head, args = pattern[0], pattern[1:]
        if head == "Scalar":
            value, dtype, ndim = (self.primitive(a, k) for a, k in zip(args, ("f64", "String", "i64")))
            return et.constant(np.full((1,) * ndim, value, dtype=dtype))
        ctor = SCHEMA.by_name[head]
        inputs = [self.build(a) for a in args[: ctor.n_inputs]]
        props = [self.primitive(a, c.sort) for a, c in zip(args[ctor.n_inputs:], ctor.codecs)]
        if head == "Softmax" and isvar(args[1]):  # an axis of the input
            props[0] = self.values[args[1]] = 0
        if head == "DimShuffle" and isvar(args[1]):  # the input's ndim, whatever was drawn
            props[0] = inputs[0].ndim
        props = [c.decode(list(p)) if c.kind == "vec" and not isinstance(p, tuple) else p
                 for p, c in zip(props, ctor.codecs)]
        op = ctor.make_op(props)
        node = op.make_node(*inputs)
        return node.outputs[0]


def _patterns(rule):
    variables: dict = {}
    lhs, rhs = parse_pattern(rule.lhs, variables), parse_pattern(rule.rhs, variables)
    return [(lhs, rhs)] + ([(rhs, lhs)] if rule.kind == "birewrite" else [])


@pytest.mark.parametrize("name, rule", RULES, ids=[r.name for _, r in RULES])
@settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.filter_too_much])
@given(data=st.data())
def test_rule_is_sound(name, rule, data):
    check_rule(rule, data)


def test_an_unsound_rule_is_caught():
    bogus = load('(rewrite (Exp x) (Neg x) :name "bogus")').rules[0]

    @settings(max_examples=5, deadline=None, database=None, phases=[Phase.generate])  # no shrinking
    @given(data=st.data())
    def run(data):
        check_rule(bogus, data)

    with pytest.raises(AssertionError, match="bogus"):
        run()


def check_rule(rule, data):
    # square shapes: elementwise rules do not mind, matrix rules need matching sizes
    shape = data.draw(st.integers(1, 3).flatmap(lambda k: st.sampled_from([(), (k,), (k, k), (k, k, k)])), label="shape")
    alone = Ruleset(rule.ruleset, [rule], f"(ruleset {rule.ruleset}) {rule.text}", rule.source[0])
    for lhs_pattern, rhs_pattern in _patterns(rule):
        builder = Builder(shape, data.draw)
        try:
            lhs = builder.build(lhs_pattern)
        except (TypeError, ValueError):
            continue  # these bindings do not type-check: nothing to test
        inputs = list(builder.tensors.values())
        encoded = encode(FunctionGraph(inputs, [lhs], clone=False), rulesets=["types"])  # a reused session
        try:
            report = saturate(encoded, ["types", alone], eg.Limits(iterations=1))
        finally:
            encoded.release()
        if not report.matches.get(rule.name):
            continue  # a guard did not hold for these bindings
        rhs = builder.build(rhs_pattern)
        assert rhs.dtype == lhs.dtype and rhs.ndim == lhs.ndim, f"{rule} changes the type"
        rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
        values = [rng.uniform(0.1, 2.0, size=shape) * rng.choice([-1, 1], size=shape) for _ in inputs]
        left = eg.function(inputs, lhs, rulesets=[], on_unused_input="ignore")(*values)
        right = eg.function(inputs, rhs, rulesets=[], on_unused_input="ignore")(*values)
        assert left.shape == right.shape, f"{rule}: shapes {left.shape} and {right.shape}"
        assert lhs.type.values_eq_approx(left, right), f"{rule}: {left} != {right} for {values}"
        CHECKED.add(rule.name)


def test_every_rule_was_checked_at_least_once():
    # runs after the parametrized test above: a rule whose guard never held was never tested
    names = {r.name for _, r in RULES}
    assert {"algebra/mul-one", "stability/log1p", "matmul/matmul-assoc", "fold/add-scalars"} <= names
    assert names - CHECKED == set()
