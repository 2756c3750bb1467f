"""Encode graphs as egglog terms and saturate them with rulesets kept as data."""

from eqgraph.rules.encode import EncodedGraph as EncodedGraph, encode as encode
from eqgraph.rules.ruleset import Rule as Rule, RuleFileError as RuleFileError, Ruleset as Ruleset
from eqgraph.rules.ruleset import load as load_rules
from eqgraph.rules.saturate import (DEFAULT_RULESETS as DEFAULT_RULESETS, Limits as Limits, Report as Report,
                                    TypeContradiction as TypeContradiction, saturate as saturate)
