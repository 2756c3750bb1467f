"""Rule text as s-expressions: a file's top-level forms with the line each starts on, and the
children of one form, as text; ``RuleFileError`` for text that is no s-expression."""

from __future__ import annotations

import functools
import re


class RuleFileError(ValueError):
    """A malformed rule file; the message starts with ``file:line``."""


def split_forms(text: str, source: str) -> list[tuple[str, int]]:
    """Top-level s-expressions of ``text`` with the line each starts on."""
    forms, depth, start, line, start_line = [], 0, None, 1, 1
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
        elif c == ";":
            while i < n and text[i] != "\n":
                i += 1
            continue
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                if text[i] == "\\":
                    i += 1
                if i < n and text[i] == "\n":
                    line += 1
                i += 1
            if i >= n:
                raise RuleFileError(f"{source}:{line}: unterminated string")
        elif c == "(":
            if depth == 0:
                start, start_line = i, line
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                raise RuleFileError(f"{source}:{line}: unexpected ')'")
            if depth == 0:
                forms.append((text[start:i + 1], start_line))
        elif depth == 0 and not c.isspace():
            raise RuleFileError(f"{source}:{line}: unexpected {c!r} outside a command")
        i += 1
    if depth:
        raise RuleFileError(f"{source}:{start_line}: unbalanced '(' (the command starting here is not closed)")
    return forms


#: an s-expression's tokens: a string (escapes kept; an unclosed one runs to the end), a
#: parenthesis, or an atom. A regular expression, not a loop over characters: rule files are
#: parsed on every process's first compile, where a Python loop per character is slow
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[()]|[^\s()"]+')


def _subforms(form: str) -> list[str]:
    """The direct children of one s-expression, as text."""
    return list(_children(form))


@functools.lru_cache(maxsize=4096)  # a rule's query is read again for each operand order and check
def _children(form: str) -> tuple:
    inner, parts, depth, start = form[1:-1], [], 0, 0
    for token in _TOKEN.finditer(inner):
        text = token.group()
        if text == "(":
            start = token.start() if depth == 0 else start
            depth += 1
        elif text == ")":
            depth -= 1
            if depth == 0:
                parts.append(inner[start:token.end()])
        elif depth == 0:
            parts.append(text)
    return tuple(parts)
