"""Deprecated: moved to ``eqgraph.egraph.saturate`` (issue 10)."""

from eqgraph.rules._moved import alias

alias(__name__, "eqgraph.egraph.saturate")
