"""The one module that talks to egglog (DESIGN decision 1).

Everything goes through egglog's own text language on the low-level
bindings: commands are sent in small batches, outputs are read back, and the
e-graph is serialized to JSON for extraction and inspection.
"""

from __future__ import annotations

import json

from egglog import bindings

#: Top-level forms per ``run`` when sending long programs (rule files, the dtype tables):
#: egglog's time and peak memory grow faster than a program's length (types.egg in one
#: piece: 180 ms and 216 MB peak; ten forms at a time: 40 ms and under 1 MB).
FORMS_PER_RUN = 10


class EgglogError(RuntimeError):
    """egglog rejected a command; the message names the file and line where known."""


class Session:
    """An egglog e-graph fed with text commands."""

    def __init__(self, fact_directory=None):
        # ``input`` commands read their files relative to ``fact_directory``
        self._egraph = bindings.EGraph(fact_directory=fact_directory)

    def run(self, text: str, filename: str | None = None) -> list:
        """Parse and run ``text``; return egglog's outputs."""
        try:
            commands = self._egraph.parse_program(text, filename=filename)
            return self._egraph.run_program(*commands)
        except bindings.EggSmolError as err:
            raise EgglogError(str(err)) from None

    def sizes(self) -> dict[str, int]:
        """Rows per function/constructor (``print-size``)."""
        [out] = self.run("(print-size)")
        return dict(out.sizes)

    def run_schedule(self, schedule: str):
        """Run a schedule; return egglog's RunReport."""
        [out] = self.run(f"(run-schedule {schedule})")
        return out.report

    def push(self) -> None:
        self.run("(push)")

    def pop(self) -> None:
        self.run("(pop)")

    def serialize(self) -> dict:
        """The e-graph as egraph-serialize JSON: ``{"nodes": ..., "class_data": ...}``."""
        return json.loads(self._egraph.serialize([]).to_json())

    def to_dot(self) -> str:
        return self._egraph.serialize([]).to_dot()
