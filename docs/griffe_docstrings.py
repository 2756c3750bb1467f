"""A Griffe extension for the API reference: eqgraph's docstrings write parameters as
``name : what it is`` (a description after the colon, no type), which the NumPy-style parser
would read as a type. This moves that text into the description before the docstring is
parsed, and ends the Parameters section at the first unindented paragraph after it (in the
source, such a closing paragraph belongs to the function, not to the last parameter).
The docstrings themselves stay as they are in the code.
"""

from __future__ import annotations

import re

import griffe

ENTRY = re.compile(r"^(?P<name>\*{0,2}[A-Za-z_][A-Za-z0-9_]*(?:, *\*{0,2}[A-Za-z_][A-Za-z0-9_]*)*) : (?P<text>.+)$")
HEADER = re.compile(r"^-{3,}$")


def rewrite_parameters(text: str) -> str:
    """The docstring with each ``name : text`` entry of its Parameters section written as
    ``name`` and an indented description, and a ``Notes`` header before a closing paragraph."""
    lines = text.split("\n")
    out, in_section, after_blank = [], False, False
    for i, line in enumerate(lines):
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if HEADER.match(following.strip()) and line.strip():
            in_section = line.strip() == "Parameters"
            out.append(line)
            continue
        if in_section and not HEADER.match(line.strip()):
            entry = ENTRY.match(line)
            if entry:
                out += [entry["name"], "    " + entry["text"]]
                after_blank = False
                continue
            if line.strip() and not line.startswith(" ") and after_blank:
                out += ["Notes", "-----"]
                in_section = False
            after_blank = not line.strip()
        out.append(line)
    return "\n".join(out)


class NameColonDescription(griffe.Extension):
    """Rewrites each documented object's docstring with :func:`rewrite_parameters`."""

    def on_instance(self, *, node, obj, agent, **kwargs) -> None:
        if obj.docstring is not None and "Parameters" in obj.docstring.value:
            obj.docstring.value = rewrite_parameters(obj.docstring.value)
