"""Op families in rule files: one rule for every op of a kind.

A rule file names a family where it would name one op: ``@unary`` stands for each unary
elementwise op, ``@binary`` for each binary one. A rule that names a family is the same rule
once per op of it, each named after its op where its ``:name`` says ``@family``::

    (rewrite (DimShuffle (@unary x) n o) (@unary (DimShuffle x n o)) :name "dimshuffle-@unary")

is ``dimshuffle-exp``, ``dimshuffle-log``... one for each of the ops ``SCALAR_OPS`` lists with
one input. A rule names at most one family (two would be every pair of ops). The rule loader
reads such a form once and makes its copies from what it read (``copies``); they take the place
of the rule on its first line, so errors and reports name the line it was written on.

A copy says which op it was made for (``Rule.family_op``): it cannot match until a term of
that op is in the e-graph, so it is sent to egglog only once one may be (egraph/sending.py),
and a compile of a graph with few elementwise ops does not declare the hundreds of copies of
the others.

Why copies and not one e-graph term per family (egraph/schema.py's docstring has the numbers): a
copy matches the op's own table, which holds no row for most ops in most graphs, and such a
rule is skipped (``Rule.may_match``); a family term would be one more e-node for every
elementwise node of every graph.
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace

import eqgraph.tensor as et
from eqgraph.rules.forms import RuleFileError

FAMILY = re.compile(r"@([a-z][a-z0-9-]*)")
STRING = r'"(?:[^"\\]|\\.)*"'


def camel(name: str) -> str:
    """The e-graph constructor of the registry's op ``name`` (``true_div`` -> ``TrueDiv``)."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_") if part)


@functools.cache
def families() -> dict[str, tuple[tuple[str, str], ...]]:
    """Family name -> (constructor, rule-name word) per op, from the op registry."""
    def members(nin):
        return tuple((camel(name), name.rstrip("_").replace("_", "-"))
                     for name, op in et.ELEMWISE_OPS.items() if op.nin == nin)

    return {"unary": members(1), "binary": members(2)}


def family_named(form: str, source: str, line: int) -> str | None:
    """The family that ``form`` names (None if none); an error for two, or for a name that is
    no family."""
    named = {m.group(1) for m in FAMILY.finditer(re.sub(STRING, '""', _code(form)))}
    if not named:
        return None
    if len(named) > 1:
        raise RuleFileError(f"{source}:{line}: a rule names one op family, this one names "
                            f"{', '.join('@' + n for n in sorted(named))}")
    [family] = named
    if family not in families():
        raise RuleFileError(f"{source}:{line}: @{family} is no op family; families: "
                            f"{', '.join('@' + n for n in families())}")
    return family


def one_line(form: str) -> str:
    """``form`` on one line, without its comments: its copies all go on its first line."""
    return " ".join(_code(form).split())


def copies(rule, family: str) -> list:
    """``rule`` (a Rule read from a form naming ``family``) once per op of the family, each
    with ``family_op`` its op's constructor: the form is read once, not once per op."""
    def instance(ctor: str, word: str):
        def put(text):
            return text and _instance(text, family, ctor, word)
        return replace(rule, name=rule.name.replace(f"@{family}", word), text=put(rule.text), lhs=put(rule.lhs),
                       rhs=put(rule.rhs), when=put(rule.when), family_op=ctor)

    return [instance(ctor, word) for ctor, word in families()[family]]


def _instance(form: str, family: str, ctor: str, word: str) -> str:
    """One op's copy: the family as its constructor in patterns, as its word in strings (the name)."""
    pieces = re.split(f"({STRING})", form)  # strings at odd positions
    return "".join(p.replace(f"@{family}", word) if i % 2 else re.sub(rf"@{family}\b", ctor, p)
                   for i, p in enumerate(pieces))


def _code(form: str) -> str:
    """``form`` without its comments (a copy is written on one line, where a comment would end it)."""
    return re.sub(f"({STRING})|;[^\n]*", lambda m: m.group(1) or "", form)
