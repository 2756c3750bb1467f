"""The e-graph modules moved from eqgraph.rules to eqgraph.egraph; their old names still work
(the same module objects), with a DeprecationWarning."""

import importlib
import sys

import pytest

import eqgraph.rules

MOVED = {"adapter": "adapter", "base": "pool", "schema": "schema", "encode": "encode", "saturate": "saturate",
         "egraph": "snapshot"}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_path_is_the_new_module(old, monkeypatch):
    monkeypatch.delitem(sys.modules, f"eqgraph.rules.{old}", raising=False)
    with pytest.deprecated_call(match=f"eqgraph.rules.{old} moved to eqgraph.egraph.{MOVED[old]}"):
        module = importlib.import_module(f"eqgraph.rules.{old}")
    assert module is importlib.import_module(f"eqgraph.egraph.{MOVED[old]}")
    monkeypatch.delattr(eqgraph.rules, old, raising=False)  # as if it had never been imported


@pytest.mark.parametrize("name", ["Limits", "Report", "DEFAULT_RULESETS", "TypeContradiction", "EncodedGraph"])
def test_names_once_exported_by_rules_still_are(name):
    import eqgraph.egraph

    with pytest.deprecated_call(match=f"eqgraph.rules.{name} moved"):
        value = getattr(eqgraph.rules, name)
    assert value is getattr(eqgraph.egraph, name)


def test_an_unknown_name_is_still_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        eqgraph.rules.nothing  # noqa: B018
