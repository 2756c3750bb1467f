"""Rulesets sent to an egglog session: a few forms at a time, egglog's errors located at the rule
file's line. A rewrite ruleset's family copies (``Ruleset.deferred``) go later, each once its
query's ops may have e-nodes (``send_deferred``): most graphs hold few of the registry's ops, and
a copy cannot match without its op."""

from __future__ import annotations

import re

from eqgraph.egraph.adapter import FORMS_PER_RUN, EgglogPanic
from eqgraph.rules.forms import RuleFileError, split_forms
from eqgraph.rules.ruleset import Rule, Ruleset


def send_rules(session, ruleset: Ruleset) -> None:
    """Declare ``ruleset`` and its rules in an egglog session, with errors located; a
    rewrite ruleset with each rule in a ruleset of its own as well (``split_program``),
    its ``deferred`` rules left for ``send_deferred``.

    The program goes a few forms at a time (``adapter.FORMS_PER_RUN``), each chunk
    padded with newlines so that egglog's line numbers are the file's.
    """
    program = ruleset.egglog_program()
    forms, position = [], 0
    for form, line in split_forms(program, ruleset.source):
        start = program.index(form, position)
        position = start + len(form)
        forms.append((start, position, line))
    for i in range(0, len(forms), FORMS_PER_RUN):
        (start, _, line), (_, end, _) = forms[i], forms[min(i + FORMS_PER_RUN, len(forms)) - 1]
        _located(ruleset.source, line, f"(or one of the {FORMS_PER_RUN} commands after it)",
                 lambda: session.run("\n" * (line - 1) + program[start:end], filename=ruleset.source))


def send_deferred(session, ruleset: Ruleset, rules) -> list[Rule]:
    """Declare those of ``rules`` (of ``ruleset.deferred()``) that the session does not hold
    yet; the ones it sent. What is sent after a ``push`` is gone after its ``pop``."""
    sent = []
    for rule in rules:
        line = rule.source[1]
        command = "\n" * (line - 1) + ruleset.deferred_program(rule)
        if _located(ruleset.source, line, f"({rule.name})",
                    lambda: session.declare_once(command, command, filename=ruleset.source)):
            sent.append(rule)
    return sent


def _located(source: str, line: int, what: str, send):
    """``send()``, egglog's errors re-raised naming ``source``:``line``."""
    try:
        return send()
    except EgglogPanic as err:  # egglog crashed somewhere in these forms
        raise EgglogPanic(f"{source}:{line} {what}: {err}") from err
    except Exception as err:  # noqa: BLE001  (egglog's error, re-raised with our location)
        where = re.search(r"In (\d+):", str(err))
        raise RuleFileError(f"{source}:{where.group(1) if where else line}: {err}") from None
