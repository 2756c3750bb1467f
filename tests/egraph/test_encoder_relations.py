"""The encoder's declarations (egraph/encode.py): a pooled base keeps one tagged relation per
number of children and the union rules of the terms it met, at depth 0, so a compile of ops met
before declares nothing; the e-graph and the results are those of a fresh session's."""

import threading

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.egraph import encode as encoder
from eqgraph.tensor import linalg
from eqgraph.egraph import pool as bases
from eqgraph.egraph.adapter import EgglogError, Session
from tests.same_type_op import SameTypeOp


class Triple(SameTypeOp):
    """A user op: its constructor is declared by the compile that meets it, after the push."""

    def perform(self, node, inputs, out):
        out[0][0] = inputs[0] * 3.0


def in_new_thread(work):
    """Run ``work`` in a thread of its own: it starts with an empty pool of bases."""
    result, errors = [], []

    def target():
        try:
            result.append(work())
        except BaseException as err:  # re-raised in the test's thread
            errors.append(err)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return result[0]


def spy_runs(monkeypatch) -> list[str]:
    """The text of every egglog program sent from now on."""
    sent, run = [], Session.run

    def spying(self, text, filename=None):
        sent.append(text)
        return run(self, text, filename)

    monkeypatch.setattr(Session, "run", spying)
    return sent


def declarations(sent: list[str]) -> list[str]:
    return [t for t in sent if "(relation " in t or "(rule " in t]


def eigh_sum(x):
    m = x.reshape(2, 2)
    values, vectors = np.linalg.eigh(m.T + m)
    return values + vectors.sum()


X, Y = np.array([0.5, 1.5, 2.5, 3.5]), np.array([1.0, -2.0, 0.25, 4.0])


def graphs():
    """(name, inputs, outputs, expected) covering a join, an Ints shape, a multi-output node
    (eigh's values and vectors) and a user op."""
    x, y = et.dvector("x"), et.dvector("y")
    m = x.reshape((2, 2))
    return [
        ("elemwise", [x, y], [et.exp(x) + y * 2.0, et.log(1 + x)], [np.exp(X) + Y * 2, np.log1p(X)]),
        ("join", [x, y], [et.concatenate([x, y, x]).sum()], [2 * X.sum() + Y.sum()]),
        ("ints shape", [x], [m.sum(axis=0), et.zeros((3, 2)).shape[0] + x], [X.reshape(2, 2).sum(0), X + 3]),
        ("multi output", [x], [linalg.eigh(m.T + m)[0] + linalg.eigh(m.T + m)[1].sum()], [eigh_sum(X)]),
        ("user op", [x], [Triple()(x) + 1.0], [3 * X + 1]),
    ]


def compile_all(limit=len(graphs())):
    """Compile every graph; return (e-graph sizes, outputs) per graph."""
    found = []
    for name, inputs, outputs, expected in graphs()[:limit]:
        f = eg.function(inputs, outputs)
        values = f(*[X, Y][:len(inputs)])
        for got, want in zip(values, expected):
            np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=name)
        found.append((f.stages.report.sizes, [np.asarray(v).tolist() for v in values]))
    return found


def test_a_second_compile_of_the_same_ops_declares_nothing(monkeypatch):
    def work():
        first = compile_all()
        sent = spy_runs(monkeypatch)
        second = compile_all()
        return first, second, sent

    first, second, sent = in_new_thread(work)
    assert first == second   # the same e-graph sizes and outputs
    # only the user op's rule is declared again: its constructor lives in one compile's layer
    assert [t for t in declarations(sent) if "Triple" not in t] == []


def test_a_compile_inside_a_compile_uses_a_fresh_session_with_the_same_e_graph():
    def work():
        pooled = compile_all()
        held = bases.acquire(bases.pooled()[0].rulesets)  # every base busy: compiles get fresh sessions
        try:
            assert held is not None and bases.acquire(held.rulesets) is None
            fresh = compile_all()
        finally:
            bases.release(held)
        return pooled, fresh

    pooled, fresh = in_new_thread(work)
    assert pooled == fresh


def test_a_base_keeps_at_most_the_cap_and_compiles_beyond_it_are_right(monkeypatch):
    monkeypatch.setattr(encoder, "MAX_PERSISTED", 3)

    def work():
        first = compile_all()
        [base] = bases.pooled()
        kept = dict(base.term_tags)
        second = compile_all()
        assert base.term_tags == kept and len(kept) == 3
        assert base.session.depth == 0 and not base.busy
        return first, second

    first, second = in_new_thread(work)
    assert first == second


def test_tags_are_never_reused_for_another_term(monkeypatch):
    monkeypatch.setattr(encoder, "MAX_PERSISTED", 2)

    def work():
        seen: dict[int, str] = {}
        sent = spy_runs(monkeypatch)
        compile_all()
        compile_all()
        for text in declarations(sent):
            for line in text.splitlines():
                if line.startswith("(rule ((enc_t") and "union" in line:
                    tag = int(line.split()[2])
                    assert seen.setdefault(tag, line) == line
        return seen

    assert len(in_new_thread(work)) > 2


def test_a_failed_declaration_at_depth_0_discards_the_base(monkeypatch):
    def work():
        compile_all(limit=1)
        [base] = bases.pooled()
        run = Session.run

        def failing(self, text, filename=None):
            if "(rule ((enc_t" in text and self is base.session and self.depth == 0:
                run(self, text.split("\n")[0])   # half of the declarations got in
                raise EgglogError("injected failure")
            return run(self, text, filename)

        with monkeypatch.context() as patch, pytest.raises(EgglogError, match="injected"):
            # (a context: no record of ``failing`` outlives this thread, which owns ``base``)
            patch.setattr(Session, "run", failing)
            compile_all(limit=2)   # the join is new: its rule is declared at depth 0
        assert base not in bases.pooled() and not base.busy
        return compile_all()   # a fresh base, right

    in_new_thread(work)
