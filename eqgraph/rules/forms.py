"""Rule text as s-expressions: a file's top-level forms with the line each starts on, and the
children of one form, as text; ``RuleFileError`` for text that is no s-expression."""

from __future__ import annotations

import functools
import re


class RuleFileError(ValueError):
    """A malformed rule file; the message starts with ``file:line``."""


#: what ``split_forms`` reads of a file: a newline, a comment, a string (its closing quote in
#: group 1, empty for an unclosed one), a parenthesis, or a run of anything else. A regular
#: expression, not a loop over characters: rule files are parsed on every process's first compile
_FILE_TOKEN = re.compile(r'\n|;[^\n]*|"(?:[^"\\]|\\.)*("?)|[()]|[^()";\n]+', re.S)


def split_forms(text: str, source: str) -> list[tuple[str, int]]:
    """Top-level s-expressions of ``text`` with the line each starts on."""
    forms, depth, start, line, start_line = [], 0, 0, 1, 1
    for token in _FILE_TOKEN.finditer(text):
        part = token.group()
        c = part[0]
        if c == "\n":
            line += 1
        elif c == '"':
            line += part.count("\n")
            if not token.group(1):
                raise RuleFileError(f"{source}:{line}: unterminated string")
        elif c == "(":
            if depth == 0:
                start, start_line = token.start(), line
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                raise RuleFileError(f"{source}:{line}: unexpected ')'")
            if depth == 0:
                forms.append((text[start:token.end()], start_line))
        elif depth == 0 and c != ";" and part.strip():
            raise RuleFileError(f"{source}:{line}: unexpected {part.strip()[0]!r} outside a command")
    if depth:
        raise RuleFileError(f"{source}:{start_line}: unbalanced '(' (the command starting here is not closed)")
    return forms


#: an s-expression's tokens: a string (escapes kept; an unclosed one runs to the end), a
#: parenthesis, or an atom
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[()]|[^\s()"]+')

#: what ``_children`` reads of a form: a string (escapes kept; an unclosed one runs to the end)
#: or a parenthesis. Atoms are the text between them, split at whitespace: a rule's query is
#: mostly atoms, and matching each costs more than splitting the runs between parentheses
_DELIMITER = re.compile(r'"(?:[^"\\]|\\.)*"?|[()]')


def _subforms(form: str) -> list[str]:
    """The direct children of one s-expression, as text."""
    return list(_children(form))


@functools.lru_cache(maxsize=4096)  # a rule's query is read again for each operand order and check
def _children(form: str) -> tuple:
    inner, parts, depth, start, atoms = form[1:-1], [], 0, 0, 0   # atoms: where the text after the last token starts
    for token in _DELIMITER.finditer(inner):
        text = token.group()
        if depth == 0:
            parts.extend(inner[atoms:token.start()].split())
        if text == "(":
            if depth == 0:
                start = token.start()
            depth += 1
        elif text == ")":
            depth -= 1
            if depth == 0:
                parts.append(inner[start:token.end()])
        elif depth == 0:   # a string
            parts.append(text)
        atoms = token.end()
    if depth == 0:
        parts.extend(inner[atoms:].split())
    return tuple(parts)
