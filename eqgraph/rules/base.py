"""Deprecated: moved to ``eqgraph.egraph.pool`` (issue 10)."""

from eqgraph.rules._moved import alias

alias(__name__, "eqgraph.egraph.pool")
