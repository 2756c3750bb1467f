"""A family rule's copies (rules/families.py) go to egglog only where they may match: a compile
pays for the copies whose query names only ops its graph holds or its rules may build, and a
copy still fires wherever its query's ops appear."""

import threading

import numpy as np

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.egraph.adapter import Session
from eqgraph.egraph.saturate import DEFAULT_RULESETS, load_rulesets
from eqgraph.rules.ruleset import load, reachable_constructors


def family_copies() -> list:
    return [rule for ruleset in load_rulesets(DEFAULT_RULESETS) for rule in ruleset.rules if rule.family_op]


def copies_of(ctor: str) -> set[str]:
    """The names of the default rulesets' family copies made for the op ``ctor``."""
    return {rule.name for rule in family_copies() if rule.family_op == ctor}


def sent_in_fresh_thread(monkeypatch, *graphs) -> list[set[str]]:
    """Compile ``graphs`` (thunks giving inputs and outputs) in order, in a new thread (so with
    a new pooled session): per compile, the rule names of every rule command sent to egglog."""
    sent, errors, run = [], [], Session.run

    def spy(self, text, filename=None):
        sent[-1].update(name for name in all_copies if f':name "{name}"' in text)
        return run(self, text, filename=filename)

    def work():
        try:
            for graph in graphs:
                sent.append(set())
                inputs, outputs = graph()
                eg.function(inputs, outputs)
        except BaseException as err:  # noqa: BLE001  (re-raised in the test's thread)
            errors.append(err)

    all_copies = {rule.name for rule in family_copies()}
    monkeypatch.setattr(Session, "run", spy)
    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return sent


def exp_graph():
    x = et.dvector("x")
    return [x], [et.exp(x) * 2.0 + 1.0]


def arctanh_graph():
    x = et.dvector("x")
    return [x], [et.arctanh(x)[1:3]]


def test_a_graph_without_arctanh_gets_no_arctanh_copy_and_one_with_it_gets_them(monkeypatch):
    arctanh = copies_of("Arctanh")
    assert len(arctanh) == 4   # dimshuffle-, index-, index-...-symbolic and take-arctanh
    without, with_it, again = sent_in_fresh_thread(monkeypatch, exp_graph, arctanh_graph, arctanh_graph)
    assert not without & arctanh and without & copies_of("Exp")
    # x[1:3] is a Subtensor_1: the copies for a symbolic or an array index cannot match
    assert with_it & arctanh == {"indexing/index-arctanh", "shapes/dimshuffle-arctanh"}
    assert not again   # the pooled session kept them
    assert len(without) < len(family_copies()) // 2


def test_a_copy_whose_query_names_an_op_no_rule_can_build_is_not_sent(monkeypatch):
    # exp's index copies match only below a Subtensor, which no rule builds from this graph:
    # sending them cost egglog as much as the rest of the compile's rules would
    exp = copies_of("Exp")
    [sent] = sent_in_fresh_thread(monkeypatch, exp_graph)
    assert sent & exp and not {name for name in sent if name.startswith("indexing/")}, sorted(sent)


def test_the_copies_of_an_op_a_rule_builds_are_sent_with_the_graph():
    rules = load('(rewrite (Log (Add x (Scalar 1.0 d n))) (Log1p x) :name "log1p")\n'
                 '(rewrite (DimShuffle (@unary x) n o) (@unary (DimShuffle x n o)) :name "ds-@unary")')
    assert "Log1p" in reachable_constructors([rules], {"Log", "Add", "Scalar", "N"})
    assert "Log1p" not in reachable_constructors([rules], {"Log", "Add", "N"})   # no constant: no match
    assert len(rules.deferred()) == len(rules.rules) - 1


def test_a_copy_fires_where_a_rule_builds_its_op_mid_saturation():
    # log(1 + x) becomes log1p(x) in saturation; index-log1p then moves the index below it,
    # also in a session of its own (profiling), which holds only the copies the runner sent
    x = et.dvector("x")
    out = et.log(1.0 + x)[1:3]
    for profile in (False, True):
        f = eg.function([x], out, profile=profile)
        ops = [str(node.op) for node in f.stages.optimized.toposort()]
        assert ops[0].startswith("Subtensor") and "log1p" in str(ops), ops
        np.testing.assert_allclose(f(np.array([0.5, 1.0, 2.0])), np.log1p([1.0, 2.0]))
