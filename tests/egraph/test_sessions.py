"""egglog sessions: one pool per thread, failures never leave a session busy or changed,
and user rule text can add rules only (anything else is refused with file:line)."""

import threading

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.egraph import pool as bases
from eqgraph.egraph.adapter import EgglogError, EgglogPanic, Session
from eqgraph.rules.forms import RuleFileError

BUILTINS = ["types", "fold", "algebra", "stability"]


def compile_log1p():
    """A normal compile whose numbers and rewrites show the shared session is intact."""
    x = et.dvector("x")
    f = eg.function([x], et.log(1 + x * 1.0) + et.exp(x) * 2.0, rulesets=BUILTINS)
    values = np.array([0.25, 1.5, 3.0])
    np.testing.assert_allclose(f(values), np.log1p(values) + 2 * np.exp(values), rtol=1e-12)
    assert "Elemwise{log1p}" in str([n.op for n in f.stages.optimized.toposort()])
    assert f.stages.report.stop_reason == "saturated"
    return f


def assert_pool_idle():
    assert not any(base.busy for base in bases.pooled())
    assert all(base.session.depth == 0 and not base.session.broken for base in bases.pooled())


def test_compiles_in_four_threads_at_once_are_each_right():
    results, errors = {}, []
    barrier = threading.Barrier(4)

    def work(k):
        try:
            x = et.dvector("x")
            barrier.wait()
            for _ in range(3):
                f = eg.function([x], et.log(1 + x * 1.0) * float(k + 1), rulesets=BUILTINS)
                results[k] = f(np.array([0.5, 2.0]))
            assert_pool_idle()
        except BaseException as err:  # noqa: BLE001  (a PanicException is a BaseException)
            errors.append(err)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for k in range(4):
        np.testing.assert_allclose(results[k], np.log1p([0.5, 2.0]) * (k + 1), rtol=1e-12)


def test_thread_then_main_then_thread_reuse_their_own_sessions():
    def in_thread():
        errors = []

        def work():
            try:
                compile_log1p()
                assert_pool_idle()
            except BaseException as err:  # noqa: BLE001
                errors.append(err)

        t = threading.Thread(target=work)
        t.start()
        t.join()
        assert errors == []

    in_thread()
    compile_log1p()
    base = next(b for b in bases.pooled() if [r.name for r in b.rulesets] == BUILTINS)
    in_thread()
    compile_log1p()
    assert base in bases.pooled()  # the main thread's base is still the one it made, and free
    assert_pool_idle()


def test_a_session_refuses_another_thread_with_an_eqgraph_error():
    session = Session()
    caught = []
    t = threading.Thread(target=lambda: caught.append(pytest.raises(EgglogError, session.run, "(push)")))
    t.start()
    t.join()
    assert "thread" in str(caught[0].value)
    assert session.run("(ruleset r)") == []  # the owner can still use it


def test_an_egglog_panic_becomes_an_eqgraph_error_and_breaks_only_that_session(monkeypatch):
    PanicException = type("PanicException", (BaseException,), {})  # pyo3's, as egglog raises it

    session = Session()

    class Panicking:
        def parse_program(self, text, filename=None):
            raise PanicException("index out of bounds")

    monkeypatch.setattr(session, "_egraph", Panicking())
    with pytest.raises(EgglogPanic, match="egglog panicked .running rules.egg.: index out of bounds"):
        session.run("(ruleset r)", filename="rules.egg")
    assert session.broken
    with pytest.raises(EgglogPanic, match="cannot be used again"):
        session.run("(ruleset r)")
    session.pop()  # nothing to restore: does not raise


def test_a_failed_compile_leaves_no_session_busy():
    x = et.dvector("x")
    compile_log1p()
    with pytest.raises(RuleFileError, match="Nope"):  # egglog rejects the rule inside the compile
        eg.function([x], et.exp(x), rulesets=BUILTINS + ["(rewrite (Exp a) (Nope a))"])
    assert_pool_idle()
    with pytest.raises(ValueError, match="listed twice"):
        eg.function([x], et.exp(x), rulesets=BUILTINS + ["algebra"])
    assert_pool_idle()
    compile_log1p()


def test_a_broken_base_is_thrown_away_and_replaced(monkeypatch):
    f = compile_log1p()
    base = next(b for b in bases.pooled() if [r.name for r in b.rulesets] == BUILTINS)
    base.session.broken = True  # as after a panic
    bases.release(base)
    assert base not in bases.pooled()
    assert compile_log1p().stages.report.matches == f.stages.report.matches


@pytest.mark.parametrize("text, line, message", [
    ("(push)", 1, r"\(push ...\) is not allowed"),
    ('(rewrite (Exp a) (Exp a))\n(pop)', 2, r"\(pop ...\) is not allowed"),
    ('(panic "boom")', 1, r"\(panic ...\) is not allowed"),
    ("(relation r (i64))\n\n(delete (Var 0))", 3, r"\(delete ...\) is not allowed"),
    ("(subsume (Var 0))", 1, r"\(subsume ...\) is not allowed"),
    ("(set-option enable_proofs 1)", 1, r"\(set-option ...\) is not allowed"),
    ('(include "other.egg")', 1, r"\(include ...\) is not allowed"),
    ('(input r "facts.tsv")', 1, r"\(input ...\) is not allowed"),
    ('(output "out.txt" (Var 0))', 1, r"\(output ...\) is not allowed"),
    ("(rewrite (Exp a) (Exp a))\n(run 100)", 2, r"\(run ...\) is not allowed"),
    ("(let big (Var 0))", 1, r"\(let ...\) is not allowed"),
    ('(rule ((= e (Exp a)))\n ((panic "p")))', 1, r"a rule may not use \(panic"),
    ("(rule ((= e (Exp a))) ((delete (Exp a))))", 1, r"a rule may not use \(delete"),
])
def test_commands_that_are_not_rules_are_refused_and_the_next_compile_is_unaffected(tmp_path, text, line,
                                                                                     message):
    path = tmp_path / "mine.egg"
    path.write_text(text)
    x = et.dvector("x")
    with pytest.raises(RuleFileError, match=f"{path}:{line}: {message}"):
        eg.function([x], et.exp(x), rulesets=BUILTINS + [path])
    assert_pool_idle()
    compile_log1p()


def test_declarations_and_facts_of_the_files_own_relations_are_accepted():
    x = et.dvector("x")
    text = """(relation small (i64))
(small 2)
(function weight (T) i64 :merge (min old new))
(rewrite (Mul a (Scalar 2.0 d n)) (Add a a) :name "twice")"""
    f = eg.function([x], x * 2.0, rulesets=BUILTINS + [text])
    np.testing.assert_allclose(f(np.array([1.5])), [3.0])
    compile_log1p()


def test_ruleset_name_clashes_are_refused(tmp_path):
    x = et.dvector("x")
    mine = tmp_path / "algebra.egg"
    mine.write_text('(rewrite (Mul a b) (Mul b a) :name "comm")\n')
    with pytest.raises(ValueError, match=f"'algebra' comes from both .*algebra.egg and {mine}"):
        eg.function([x], x * 3.0, rulesets=BUILTINS + [mine])
    compile_log1p()
    reserved = tmp_path / "encode.egg"
    reserved.write_text('(rewrite (Exp a) (Exp a))\n')
    with pytest.raises(RuleFileError, match="'encode' .* is reserved"):
        eg.function([x], et.exp(x), rulesets=BUILTINS + [reserved])
    compile_log1p()
    # alone, a user's algebra.egg is just a ruleset of that name
    f = eg.function([x], x * 3.0, rulesets=["types", mine])
    assert f.stages.report.matches["algebra/comm"] >= 1
    compile_log1p()


def test_a_compiled_functions_stages_do_not_show_a_later_compiles_egraph():
    x = et.dvector("x")
    y = et.exp(x)
    f = eg.function([x], y)
    eg.function([x], et.log(x))  # reuses the pooled session f was compiled in
    with pytest.raises(RuntimeError, match="snapshot"):
        f.stages.encoded.session.sizes()
    assert "(Exp (Var 0))" in str(f.stages.egraph.eclass(y))  # the snapshot is f's own
