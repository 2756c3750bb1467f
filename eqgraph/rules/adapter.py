"""Deprecated: moved to ``eqgraph.egraph.adapter`` (issue 10)."""

from eqgraph.rules._moved import alias

alias(__name__, "eqgraph.egraph.adapter")
