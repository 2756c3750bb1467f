"""Run PyTensor's own test modules against eqgraph and classify every outcome.

One-time download (the only network use): PyTensor 3.0.7's tests, from its repository::

    git clone --depth 1 --branch rel-3.0.7 https://github.com/pymc-devs/pytensor /tmp/pytensor-src

Then, from eqgraph's repository root::

    PYTHONPATH=$PWD python bench/pytensor_suite/run.py /tmp/pytensor-src tests/tensor/test_math.py ...

The PyTensor test modules are imported with ``fake_pytensor`` first on ``sys.meta_path``, so
every ``pytensor`` name they use is eqgraph's. Each test lands in one category:

- *passed*, *skipped* (PyTensor's own skips and xfails, and its ``slow`` marks);
- *not applicable*: the test used a PyTensor internal (an Op subclass, a rewriter, a Mode, a
  linker, a graph feature, anything in ``facts.INTERNAL_MODULES``, or a private ``_name``, such as
  ``subtensor._is_provably_positive``, which PyTensor does not offer its users), or read a config setting
  that chooses PyTensor's compiler (``COMPILER_SETTING``), or its failing assertion checks the
  compiled graph's node classes (``isinstance`` against an Op class), or it used a PyTensor
  internal that eqgraph's objects lack on purpose (``INTERNAL_NAMES``, ``INTERNAL_ATTRIBUTES``),
  or it failed reaching a scan node through PyTensor's output structure (``PYTENSOR_STRUCTURE``).
  eqgraph's compiler is an e-graph, so tests of PyTensor's node classes and rewrite passes have
  nothing to check;
- *missing name or argument*: it used a name eqgraph lacks, or eqgraph rejected an argument or
  attribute (``TypeError`` about an argument, ``AttributeError``, ``ImportError``);
- *different answer*: an assertion failed and no placeholder was used (this includes
  ``pytest.raises`` that saw no error: PyTensor rejects an input that eqgraph takes, and
  ``pytest.warns`` that saw no warning);
- *raises where PyTensor works*: any other exception.

``--budget SECONDS`` bounds the time spent in each module, ``--budget-for PATH=SECONDS`` in the
modules whose path ends so (a larger one for a long module); the tests left are counted as not
run. ``--timeout SECONDS`` (300 unless given) stops a single test that runs longer (a hang) and
counts it as raising ``TestTimeout``. Functions run eqgraph's NumPy program
(``eqgraph.config.compile = "deferred"``), so no test waits on or races a Numba compile. An
interrupt (Ctrl-C) ends the run early and still writes what ran. ``--merge A.md B.md ...``
writes one report of runs made side by side (their seconds and adapter counts added; a test's
outcome in a later run replaces an earlier run's, unless the later one did not reach it).
Writes ``RESULTS.md`` next to this script (``--out`` to change), with the command line, and
the raw outcomes beside it as JSON. Each different answer is shown with its diagnosis from
``diagnoses.toml`` (kept by hand, keyed by test id or a prefix of one: eqgraph bug, harness
artifact, or a convention that docs/conventions.md documents).
"""

from __future__ import annotations

import json
import re
import signal
import tomllib
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest as _pytest

HERE = Path(__file__).resolve().parent
CATEGORIES = ("passed", "skipped", "not applicable", "missing name or argument",
              "different answer", "raises where PyTensor works")
ARGUMENT_ERROR = re.compile(r"unexpected keyword argument|positional argument|required (keyword|positional)"
                            r"|has no attribute|has no setting|cannot import name|No module named")
#: seconds one test may run before it is stopped and counted as raising (``--timeout`` changes it)
DEFAULT_TIMEOUT = 300.0
#: config settings that choose PyTensor's compiler (its mode, linker, rewriter, C toolchain).
#: PyTensor names that eqgraph lacks on purpose, as PyTensor internals: why a user does not reach them.
INTERNAL_NAMES = {
    "pytensor.scan.op.ScanInfo": "constructs PyTensor's layout record to build a Scan op by hand (with mit-mot "
                                 "slices that only its gradient makes); users build loops with scan(), and "
                                 "Scan.info describes eqgraph's",
}
#: attributes of eqgraph objects that PyTensor's rewriter and linker use, not its users: why.
INTERNAL_ATTRIBUTES = {
    ("Scan", "fn"): "the compiled inner function's storage cells (PyTensor's linker)",
    ("Scan", "clone"): "copies the op with its inner FunctionGraph for PyTensor's rewrites",
    ("Scan", "outer_seqs"): "PyTensor's index helpers over its node's input order, used by its scan rewrites",
    ("Scan", "get_oinp_iinp_iout_oout_mappings"): "PyTensor's index maps over its node's inputs and outputs, "
                                                  "used by its scan rewrites",
}
MISSING_ATTRIBUTE = re.compile(r"'(\w+)' object has no attribute '(\w+)'")
#: tests that reach a scan node through PyTensor's output structure (each output a slice of the
#: node's buffer, which holds the initial state: ``out.owner.inputs[0]``); eqgraph's scan returns
#: its outputs directly, so the path leads elsewhere. Counted not applicable only when they fail.
PYTENSOR_STRUCTURE = {
    "tests/scan/test_basic.py::TestScan::test_connection_pattern": "out.owner.inputs[0].owner as the Scan node",
    "tests/scan/test_basic.py::TestScan::test_connection_pattern_multiple_mitmot":
        "the gradient's owner.inputs chain and out.owner.inputs[0].owner as Scan nodes",
    "tests/scan/test_basic.py::TestScan::test_oinp_iinp_iout_oout_mappings": "out.owner.inputs[0].owner as the Scan node",
    "tests/scan/test_basic.py::test_zero_steps_untraced_sit_sot": "xs.owner.inputs[0] as the buffer holding the initial state",
}
COMPILER_SETTING = re.compile(r"has no setting '(mode|linker|optimizer\w*|cxx|vm__\w+|cmodule__\w+"
                              r"|compute_test_value\w*|on_opt_error|optdb__\w+|tensor__\w+|unittests__\w+)'")


def classify(report, touched: list[str], fake) -> tuple[str, str]:
    """(category, the name or message behind it) for one test's report."""
    if report.passed:
        return "passed", ""
    if report.skipped:
        return "skipped", ""
    structure = next((why for test, why in PYTENSOR_STRUCTURE.items()
                      if report.nodeid == test or report.nodeid.startswith(test + "[")), None)
    if structure:
        return "not applicable", f"reads PyTensor's scan output structure: {structure}"
    internal = [t for t in touched if fake.is_internal(t)]
    if internal:
        return "not applicable", internal[0]
    if touched:
        return "missing name or argument", touched[0]
    exc = getattr(report, "excinfo_value", None)
    named = re.findall(r"<missing ([\w.()]+)>", str(exc))
    if named:
        return classify(report, named, fake)
    text = str(exc.args[0]) if isinstance(exc, Exception) and len(exc.args) > 1 else str(exc)
    # PyTensor's test helpers re-raise with a second argument naming the case; the first says why
    message = f"{type(exc).__name__}: {text.strip().splitlines()[0] if text.strip() else ''}"
    if isinstance(exc, AttributeError) and COMPILER_SETTING.search(str(exc)):
        return "not applicable", message[:160]
    attribute = MISSING_ATTRIBUTE.search(str(exc)) if isinstance(exc, AttributeError) else None
    if attribute and attribute.groups() in INTERNAL_ATTRIBUTES:
        return "not applicable", f"{'.'.join(attribute.groups())}: {INTERNAL_ATTRIBUTES[attribute.groups()]}"
    if isinstance(exc, fake.MissingName):
        return "missing name or argument", exc.name
    if isinstance(exc, (TypeError, AttributeError, ImportError)) and ARGUMENT_ERROR.search(text):
        return "missing name or argument", message[:160]
    checked = getattr(report, "node_classes_checked", [])
    if isinstance(exc, AssertionError) and checked:
        return "not applicable", f"checks node classes: isinstance(..., {checked[0]})"
    if isinstance(exc, AssertionError) or "DID NOT RAISE" in str(exc) or "DID NOT WARN" in str(exc):
        return "different answer", message[:200]
    return "raises where PyTensor works", message[:200]


ISINSTANCE = re.compile(r"isinstance\(.+?,\s*\(?([\w., ]+?)\)?\s*\)", re.S)


def node_classes_checked(excinfo) -> list[str]:
    """The Op classes named in ``isinstance`` by the failing statement: a count or check of the
    compiled graph's node classes, which says which rewrites PyTensor applied, not what the graph
    computes (eqgraph's e-graph picks its own nodes)."""
    from eqgraph.terms import Op
    try:
        entry = excinfo.traceback[-1]
        statement = str(entry.statement)
        scope = {**entry.frame.f_globals, **entry.frame.f_locals}
    except Exception:  # no source for the failing frame: nothing to read
        return []
    names = [n.strip().split(".")[-1] for m in ISINSTANCE.finditer(statement) for n in m.group(1).split(",")]
    return [n for n in names if isinstance(scope.get(n), type) and issubclass(scope[n], Op)]


class TestTimeout(Exception):
    """A test ran past the per-test limit (a hang becomes an outcome, not a stuck run)."""


class Classifier:
    """pytest plugin: records each test's category, and each module that failed to collect."""

    def __init__(self, fake, budget: dict, timeout: float = DEFAULT_TIMEOUT):
        self.fake = fake
        self.budget = budget
        self.timeout = timeout
        self.deadlines: dict[str, float] = {}
        self.adapted: Counter = Counter()
        self.results: list[tuple[str, str, str]] = []   # (nodeid, category, detail)
        self.seen: set[str] = set()

    def pytest_runtest_setup(self, item):
        self.fake.TOUCHED.clear()
        self.fake.ADAPTED.clear()
        self.fake.IN_TEST[0] = True
        module = module_of(item.nodeid)
        budget = next((b for m, b in self.budget.items() if m and module.endswith(m)), self.budget[""])
        deadline = self.deadlines.setdefault(module, time.monotonic() + budget)
        if time.monotonic() > deadline:
            self.fake.IN_TEST[0] = False
            _pytest.skip("over the module's time budget")

    def pytest_runtest_logfinish(self, nodeid, location):
        self.fake.IN_TEST[0] = False

    @_pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        # SIGALRM interrupts Python-level waits (a lock, a queue, a sleep); a hang inside native
        # code ends when that code returns to Python
        def stop(signum, frame):
            raise TestTimeout(f"timeout: the test ran past {self.timeout:g} s")

        previous = signal.signal(signal.SIGALRM, stop)
        signal.setitimer(signal.ITIMER_REAL, self.timeout)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    @_pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if call.excinfo is not None:
            report.excinfo_value = call.excinfo.value
        if report.failed and isinstance(getattr(report, "excinfo_value", None), AssertionError):
            # reading the failing statement parses its source file: only where it can matter
            report.node_classes_checked = node_classes_checked(call.excinfo)
        if item.nodeid in self.seen or (report.when == "setup" and report.passed):
            return
        if report.when == "teardown" and report.passed:
            return
        self.seen.add(item.nodeid)
        self.adapted.update(set(self.fake.ADAPTED))
        category, detail = classify(report, list(self.fake.TOUCHED), self.fake)
        if report.skipped and "time budget" in str(report.longrepr):
            category = "not run (time budget)"
        self.results.append((item.nodeid, category, detail))

    def pytest_collectreport(self, report):
        if report.failed:
            self.results.append((report.nodeid, "collection error", str(report.longrepr)[-300:]))


def run(src: Path, modules: list[str], budget: dict, timeout: float):
    facts_path = Path("/tmp") / "eqgraph-pytensor-facts.json"
    subprocess.run([sys.executable, str(HERE / "facts.py"), str(facts_path)], check=True,
                   env={"PATH": "/usr/bin:/bin"})
    sys.path.insert(0, str(HERE))
    import fake_pytensor
    facts = json.loads(facts_path.read_text())
    facts["internal"] += list(INTERNAL_NAMES)
    fake_pytensor.install(facts)
    sys.path.insert(0, str(src))
    import eqgraph
    # every function answers with its NumPy program: a background Numba compile per function would
    # take most of the CPU, and which program answered a call would depend on timing
    eqgraph.config.compile = "deferred"
    import pytest
    plugin = Classifier(fake_pytensor, budget, timeout)
    pytest.main([*(str(src / m) for m in modules), "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                 "--rootdir", str(src), "-c", str(HERE / "suite.ini"),
                 "-W", "ignore", "--tb=no", "--no-header", "--continue-on-collection-errors"], plugins=[plugin])
    return plugin.results, plugin.adapted


def diagnosis(nodeid: str, diagnoses: dict) -> str:
    """The hand-kept diagnosis of the longest test-id prefix that matches ``nodeid``."""
    keys = [k for k in diagnoses if nodeid.startswith(k)]
    return diagnoses[max(keys, key=len)] if keys else "not diagnosed yet"


def module_of(nodeid: str) -> str:
    return nodeid.split("::")[0]


def report(results, adapted: Counter, command: str, seconds: float) -> str:
    by_module = defaultdict(Counter)
    for nodeid, category, _ in results:
        by_module[module_of(nodeid)][category] += 1
    cats = list(CATEGORIES) + ["collection error", "not run (time budget)"]
    lines = ["# PyTensor's tests, run against eqgraph", "", "Produced by:", "", "```", command, "```",
             "", f"{len(results)} outcomes in {seconds:.0f} s; `run.py` says how each category is "
             "decided, `fake_pytensor.py` how names are mapped.", "",
             "| module | " + " | ".join(cats) + " |", "|---|" + "---:|" * len(cats)]
    for module, counts in sorted(by_module.items()):
        lines.append(f"| `{module}` | " + " | ".join(str(counts[c]) for c in cats) + " |")
    lines += ["", "## Adapters used (tests that needed each)", "", "| tests | adapter |", "|---:|---|"]
    lines += [f"| {n} | `{name}` |" for name, n in adapted.most_common()]
    blocked = Counter(detail for _, category, detail in results if category == "missing name or argument")
    lines += ["", "## Missing names and arguments, by tests blocked", "", "| tests | name or error |", "|---:|---|"]
    lines += [f"| {n} | `{name.replace('|', '/')}` |" for name, n in blocked.most_common(60)]
    diagnoses = tomllib.loads((HERE / "diagnoses.toml").read_text())
    lines += ["", "## Different answers", "", "| test | assertion | diagnosis |", "|---|---|---|"]
    lines += [f"| `{nodeid}` | {detail.replace('|', '/')} | {diagnosis(nodeid, diagnoses)} |"
              for nodeid, category, detail in results if category == "different answer"]
    lines += ["", "## Raises where PyTensor works (first 60 messages, with counts)", "",
              "| tests | error |", "|---:|---|"]
    raised = Counter(detail for _, category, detail in results if category == "raises where PyTensor works")
    lines += [f"| {n} | {message.replace('|', '/')} |" for message, n in raised.most_common(60)]
    return "\n".join(lines) + "\n"


ADAPTER_ROW = re.compile(r"^\| (\d+) \| `(.+)` \|$")


def merged(reports: list[Path]) -> tuple[list, Counter, list[str], float]:
    """The outcomes, adapter counts, command lines and seconds of runs written by this script
    (each a RESULTS.md with its JSON beside it). A test's outcome in a later run replaces an
    earlier run's, unless the later run did not reach it (its time budget)."""
    outcomes, adapted, commands, seconds = {}, Counter(), [], 0.0
    for path in reports:
        text = path.read_text()
        for nodeid, category, detail in json.loads(path.with_suffix(".json").read_text()):
            if category != "not run (time budget)" or nodeid not in outcomes:
                outcomes[nodeid] = (nodeid, category, detail)
        adapters = text.split("## Adapters used", 1)[1].split("\n## ", 1)[0]
        adapted += Counter({m.group(2): int(m.group(1)) for m in map(ADAPTER_ROW.match, adapters.splitlines()) if m})
        commands.append(text.split("```\n", 1)[1].split("\n```", 1)[0])
        seconds += float(re.search(r"outcomes in (\d+) s", text).group(1))
    return list(outcomes.values()), adapted, commands, seconds


def main(argv: list[str]) -> int:
    out = HERE / "RESULTS.md"
    if "--out" in argv:
        at = argv.index("--out")
        out = Path(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    if argv[:1] == ["--merge"]:  # --merge RESULTS_A.md RESULTS_B.md ...: one report of runs made side by side
        results, adapted, commands, seconds = merged([Path(a) for a in argv[1:]])
        out.write_text(report(results, adapted, "\n".join(commands), seconds))
        out.with_suffix(".json").write_text(json.dumps(results, indent=0))
        print(f"wrote {out}")
        return 0
    if len(argv) < 2:
        print(__doc__)
        return 2
    budget = {"": 1e9}   # seconds per module, by the end of its path; "" for every other module
    while "--budget" in argv or "--budget-for" in argv:
        at = argv.index("--budget") if "--budget" in argv else argv.index("--budget-for")
        if argv[at] == "--budget":
            budget[""] = float(argv[at + 1])
        else:
            module, seconds = argv[at + 1].rsplit("=", 1)
            budget[module] = float(seconds)
        argv = argv[:at] + argv[at + 2:]
    timeout = DEFAULT_TIMEOUT
    if "--timeout" in argv:
        at = argv.index("--timeout")
        timeout = float(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    start = time.monotonic()
    results, adapted = run(Path(argv[0]).resolve(), argv[1:], budget, timeout)
    options = [f"--budget {budget['']:g}"] * (budget[""] < 1e9) + [f"--budget-for {m}={b:g}" for m, b in budget.items() if m]
    options += [f"--timeout {timeout:g}"] * (timeout != DEFAULT_TIMEOUT)
    command = "PYTHONPATH=$PWD python bench/pytensor_suite/run.py " + " ".join([*options, *argv])
    out.write_text(report(results, adapted, command, time.monotonic() - start))
    (out.with_suffix(".json")).write_text(json.dumps(results, indent=0))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
