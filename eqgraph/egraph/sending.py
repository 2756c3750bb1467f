"""Rulesets sent to an egglog session: a few forms at a time, egglog's errors located at the rule
file's line."""

from __future__ import annotations

import re

from eqgraph.egraph.adapter import FORMS_PER_RUN, EgglogPanic
from eqgraph.rules.forms import RuleFileError, split_forms
from eqgraph.rules.ruleset import Ruleset


def send_rules(session, ruleset: Ruleset) -> None:
    """Declare ``ruleset`` and its rules in an egglog session, with errors located; a
    rewrite ruleset with each rule in a ruleset of its own as well (``split_program``).

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
        try:
            session.run("\n" * (line - 1) + program[start:end], filename=ruleset.source)
        except EgglogPanic as err:  # egglog crashed somewhere in these forms
            raise EgglogPanic(f"{ruleset.source}:{line} (or one of the {FORMS_PER_RUN} commands after it): "
                              f"{err}") from err
        except Exception as err:  # noqa: BLE001  (egglog's error, re-raised with our location)
            where = re.search(r"In (\d+):", str(err))
            raise RuleFileError(f"{ruleset.source}:{where.group(1) if where else line}: {err}") from None
