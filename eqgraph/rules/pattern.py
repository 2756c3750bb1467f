"""Rule patterns as Python terms: nested tuples ``(op, *args)`` with kanren variables.

Read by the e-graph inspector (which rule explains a member) and by the rule
checker (which builds graphs from patterns).
"""

from __future__ import annotations

from kanren import var

from eqgraph.rules.forms import _subforms


def parse_pattern(text: str, variables: dict):
    """An egglog pattern as nested tuples ``(op, *args)`` with kanren variables."""
    text = text.strip()
    if text.startswith("("):
        parts = _subforms(text)
        return (parts[0], *[parse_pattern(p, variables) for p in parts[1:]])
    if text.startswith('"'):
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return variables.setdefault(text, var(text))
