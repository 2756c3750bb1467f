"""What a rule's text says, read once per rule: the constructors its query names and its actions
build (per direction: a birewrite has two), the tables it reads and writes, and how many e-nodes
one match may add (each function takes a ``ruleset.Rule``). Saturation's schedulers and the rule
skipping ask these on every step."""

from __future__ import annotations

import functools
import re

from eqgraph.rules.forms import _subforms


@functools.cache  # saturate asks on every compile: each rule's text is read once
def _new_nodes_per_match(rule) -> dict[str, int]:
    if rule.kind == "rule":
        parts = _parts(rule)
        return {rule.name: _constructor_terms(parts[2]) if len(parts) > 2 else 0}
    built = _constructor_terms(rule.rhs or "")
    if rule.kind == "birewrite":
        return {f"{rule.name}=>": built, f"{rule.name}<=": _constructor_terms(rule.lhs or "")}
    return {rule.name: built}


@functools.cache  # schedulers ask before every step, for every rule of the step
def _max_new_nodes(rule) -> int:
    return sum(_new_nodes_per_match(rule).values())


@functools.cache
def _parts(rule) -> list[str]:
    """A general rule's command in its parts: ``rule``, the query, the actions, the options."""
    return _subforms(rule.text)


@functools.cache
def _query_constructors(rule) -> tuple[frozenset, ...]:
    """Per direction of ``rule`` (a birewrite has two), the constructors its query names."""
    if rule.kind == "rule":
        parts = _parts(rule)
        queries = [parts[1] if len(parts) > 1 else ""]
    else:
        sides = [rule.lhs] + ([rule.rhs] if rule.kind == "birewrite" else [])
        queries = [f"{side or ''} {rule.when or ''}" for side in sides]
    return tuple(frozenset(re.findall(r"\((?=[A-Z])([^\s()]+)", query)) for query in queries)


@functools.cache
def _built_constructors(rule) -> tuple[frozenset, ...]:
    """Per direction of ``rule``, in ``_query_constructors``' order, the constructors it builds."""
    if rule.kind == "rule":
        parts = _parts(rule)
        built = [parts[2] if len(parts) > 2 else ""]
    else:
        built = [rule.rhs or ""] + ([rule.lhs or ""] if rule.kind == "birewrite" else [])
    return tuple(frozenset(re.findall(r"\((?=[A-Z])([^\s()]+)", text)) for text in built)


_APPLIED = re.compile(r"\(([^\s()]+)")   # the name each parenthesis applies


@functools.cache
def _read_tables(rule) -> frozenset:
    if rule.kind != "rule":
        return frozenset()
    parts = _parts(rule)
    return frozenset(_APPLIED.findall(parts[1])) if len(parts) > 1 else frozenset()


@functools.cache
def _written_tables(rule) -> frozenset:
    if rule.kind != "rule":
        return frozenset(_APPLIED.findall(f"{rule.lhs or ''} {rule.rhs or ''}"))
    parts = _parts(rule)
    return frozenset(_APPLIED.findall(parts[2])) if len(parts) > 2 else frozenset()


def _constructor_terms(text: str) -> int:
    """How many constructor applications ``text`` writes: at most one new e-node each."""
    return len(re.findall(r"\((?=[A-Z])", text))
