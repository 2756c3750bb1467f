"""The explorer page's contents, without a browser: self-contained, the user's names, which
rule explains each member, why the chosen one won, and the command line."""

import re
import textwrap

import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.__main__ import main
from eqgraph.inspect import explore
from explorer_helpers import class_holding, member, page_data


def test_the_page_is_one_file_that_needs_no_network(softplus_page):
    text = open(softplus_page, encoding="utf-8").read()
    assert text == softplus_page.html and str(softplus_page).endswith("softplus.html")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)  # nothing fetched
    assert "cytoscape" in text and "dagre" in text  # the layout library is inlined
    assert softplus_page._repr_html_().startswith("<iframe srcdoc=")


def test_inputs_are_shown_by_the_users_names(softplus_page):
    data = page_data(softplus_page)
    labels = {n["label"] for n in data["nodes"] if n["op"] == "Var"}
    assert labels == {"x", "w"}
    names = {c["name"] for c in data["classes"] if c["name"]}
    assert {"x", "w"} <= names


def test_each_member_says_which_rule_added_it(softplus_page):
    data = page_data(softplus_page)
    eclass = class_holding(data, "Softplus")
    softplus, log = member(data, eclass, "Softplus"), member(data, eclass, "Log")
    rules = [data["rules"][r] for r in softplus["rules"]]
    assert [r["name"] for r in rules] == ["stability/softplus"]
    assert rules[0]["file"].endswith("stability.egg") and rules[0]["line"] > 0
    assert rules[0]["matches"] >= 1 and data["classes"].index(eclass) in rules[0]["classes"]
    assert log["orig"] and not softplus["orig"]  # log(...) is the user's; softplus a rule's


def test_no_rewrite_no_explanation(tmp_path):
    """A rule's right side matching a member is not enough: its left side must match another
    member of the same e-class. With no rewrite run, no member has a rule behind it, though
    the stability rules (loaded, never run) would match log(1 + exp(x))'s pieces."""
    x = et.dvector("x")
    page = explore(et.log(1 + et.exp(x)), rulesets=[("types", "saturate")], path=tmp_path / "p.html")
    assert not any(n["rules"] for n in page_data(page)["nodes"])


def test_a_rule_explains_a_member_only_with_one_binding_of_both_sides(tmp_path):
    """Matched separately, (Add a b) and (Mul b a) would both explain Mul(x, w), since each
    side matches something; bound together, only the rule that swaps explains the swapped
    product."""
    x, w = et.dvector("x"), et.dvector("w")
    rules = '(rewrite (Add a b) (Mul b a) :name "swapped")\n(rewrite (Add a b) (Mul a b) :name "kept")'
    data = page_data(explore(x + w, rulesets=[("types", "saturate"), rules], path=tmp_path / "p.html"))
    rule = lambda r: data["rules"][r]["name"].split("/")[-1]  # "userN/": N counts the rule strings loaded
    explained = {tuple(data["classes"][c]["name"] for c in n["ch"]): [rule(r) for r in n["rules"]]
                 for n in data["nodes"] if n["op"] == "Mul"}
    assert explained == {("w", "x"): ["swapped"], ("x", "w"): ["kept"]}


def test_why_the_chosen_member_won(softplus_page):
    data = page_data(softplus_page)
    eclass = class_holding(data, "Softplus")
    chosen = data["nodes"][eclass["chosen"]]
    log = member(data, eclass, "Log")
    assert chosen["op"] == "Softplus" and chosen["unstable"] is None
    pattern = data["unstable"][log["unstable"]]  # log(1 + exp(..)) is declared unstable
    assert pattern["file"].endswith(".egg") and pattern["text"].startswith("(Log")
    assert chosen["total"] is not None and chosen["own"] is not None
    assert chosen["total"] >= chosen["own"] >= 0  # the stability weight is not shown as cost
    assert chosen["total"] < 1e12


def test_only_the_unstable_patterns_extraction_avoided_are_marked(tmp_path):
    """Compiled without the stability rule file, extraction avoided none of its patterns:
    the page must not say it did."""
    x = et.dvector("x")
    f = eg.function([x], et.log(1 + et.exp(x)), rulesets=[("types", "saturate"), ("fold", "saturate"), "algebra"])
    data = page_data(f.stages.egraph.explore(tmp_path / "p.html"))
    assert data["unstable"] == [] and all(n["unstable"] is None for n in data["nodes"])


def test_before_and_after_extraction(softplus_page):
    data = page_data(softplus_page)
    ops = lambda ids: {data["nodes"][n]["op"] for n in ids}
    assert {"Log", "Add", "Exp", "Mul", "Sum"} <= ops(data["before"])
    assert "Softplus" in ops(data["after"]) and "Log" not in ops(data["after"])


def test_a_name_cannot_end_the_pages_script(tmp_path):
    x = et.dvector("</script><b>x")
    page = explore(et.exp(x), path=tmp_path / "p.html")
    assert page_data(page)["classes"][0]["name"] == "</script><b>x" or any(
        c["name"] == "</script><b>x" for c in page_data(page)["classes"])
    assert page.html.count("</script>") == page.html.count("<script")


def test_rewrite_explored_shows_a_reassociated_matmul_chain(tmp_path):
    A, B = et.TensorType("float64", (300, 300))("A"), et.TensorType("float64", (300, 300))("B")
    v = et.TensorType("float64", (300,))("v")
    page = explore((A @ B) @ v, path=tmp_path / "chain.html")
    data = page_data(page)
    root = data["classes"][data["outputs"][0]["cls"]]
    assert len(root["nodes"]) >= 2  # (A @ B) @ v and A @ (B @ v)
    chosen = data["nodes"][root["chosen"]]
    assert data["classes"][chosen["ch"][0]]["name"] == "A"  # A @ (B @ v) won
    assert any(data["rules"][r]["name"].startswith("matmul/") for r in chosen["rules"])


SCRIPT = """
import eqgraph as eg
import eqgraph.tensor as et

def compiled():
    x = et.dvector("x")
    return eg.function([x], et.log(1 + et.exp(x)))

def graph():
    x = et.dvector("x")
    return [et.exp(x) * 2]

def number():
    return 3
"""


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(SCRIPT))
    return path


@pytest.mark.parametrize("name", ["compiled", "graph"])
def test_command_line_writes_the_page(script, tmp_path, capsys, name):
    out = tmp_path / f"{name}.html"
    assert main(["explore", f"{script}:{name}", "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    assert {n["label"] for n in page_data(type("P", (), {"html": out.read_text()})())["nodes"]
            if n["op"] == "Var"} == {"x"}


@pytest.mark.parametrize("target, message", [
    ("{script}:missing", "defines no function 'missing'"),
    ("{script}:number", "returned int, expected an eqgraph.function or a graph"),
    ("{script}", "expected SCRIPT.py:FUNCTION"),
    ("nowhere.py:f", "no script 'nowhere.py'"),
])
def test_command_line_names_what_it_cannot_explore(script, capsys, target, message):
    assert main(["explore", target.format(script=script)]) == 2
    assert message in capsys.readouterr().err
