"""Rules as data: `.egg` files in egglog's own language, loaded by name, path or string.

A rule file is a sequence of egglog commands; each ``rewrite``, ``birewrite``
and ``rule`` becomes a :class:`Rule` with a name and a source location.  The
thin layer over egglog is only this:

- the file's stem is its ruleset: ``:ruleset`` may be omitted (it is added);
- ``:name "mul-one"`` becomes ``algebra/mul-one``; an unnamed rule is named
  ``algebra:12`` after its line;
- ``:same-dtype x`` on a (bi)rewrite is short for the guard that the left side
  keeps ``x``'s dtype: it expands to ``(= (dtype LHS) (dtype x))``, added last to
  ``:when`` (``Rule.text``, ``lhs``, ``rhs`` and ``when`` hold the expanded rule);
- ``:domain (positive-definite A)`` on a (bi)rewrite says where its left side is defined
  (``Cholesky A`` runs only for positive definite matrices). egglog never sees it; the
  soundness checker (``eqgraph.soundness``) draws half of its operands inside that domain, where
  random draws almost never land (a stack of positive definite matrices). ``DOMAINS`` lists
  the kinds; the rule holds for every operand regardless, outside the domain both sides fail;
- ``:assumes finite`` marks a rule that holds only if every value is a finite number and no
  divisor is zero (``x - x -> 0``, ``x / x -> 1``: NaN for x = inf). Such a rule is kept out
  of the program egglog runs unless the compile grants the assumption
  (``eqgraph.function(..., assume_finite=True)``, ``Ruleset.granting``); every other rule must
  keep inf, NaN and division by zero as they are (docs/numerics.md). ``ASSUMPTIONS`` lists the
  kinds; the soundness checker draws inf, NaN and zeros for a rule without one;
- ``:exception reassociation`` marks the one documented exception to that, applied by default:
  a rule that reorders sums of products (matrix chains, an inverse times b as a solve), which
  with inf entries may turn NaN into inf or inf into NaN, as every BLAS does. The soundness
  checker draws finite values for it;
- a ruleset's mode says how saturation runs it: ``"step"`` (one step per
  iteration, a rewrite ruleset) or ``"saturate"`` (an analysis, run to a fixed
  point around every rewrite step, like ``types``).  The schedule gives it as
  ``(spec, mode)``; a bare spec takes the file's own default: ``"saturate"`` if
  it has a comment line ``;; eqgraph: saturate``, else ``"step"``.

Declarations (``relation``, ``function``, ``constructor``, ``datatype``,
``sort``) and facts of the relations the file declares (``(axis-index 0)``)
are sent as written.  Nothing else is accepted: rule text runs in an
egglog session that compiles share, so a command that runs, checks, prints,
pushes or pops (or any other), and a rule that deletes, subsumes or panics, is
refused with an error naming the file and line (an allow-list: a command
egglog adds later is refused until someone decides it is harmless).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, fields, replace
from pathlib import Path

from eqgraph.rules.families import copies, family_named, one_line
from eqgraph.rules.forms import _TOKEN, RuleFileError, _subforms, split_forms
from eqgraph.rules.orders import COMMUTATIVE, _swapped, operand_orders
from eqgraph.rules.rule_text import (_built_constructors, _max_new_nodes, _new_nodes_per_match,
                                     _query_constructors, _read_tables, _written_tables)

RULESETS_DIR = Path(__file__).resolve().parents[2] / "rulesets"
RULE_HEADS = ("rewrite", "birewrite", "rule")
#: commands that only declare something: sent as written
DECLARATION_HEADS = ("relation", "function", "constructor", "datatype", "datatype*", "sort")
#: actions a rule may not take: they remove terms or stop egglog, never add equalities
FORBIDDEN_ACTIONS = ("delete", "subsume", "panic")
#: rulesets the compiler declares itself (encode.py)
RESERVED_RULESETS = ("encode", "encoded")
#: how saturation runs a ruleset: an analysis to a fixed point, or a rewrite ruleset one step at a time
MODES = ("saturate", "step")
#: the guard a rule states with ``:same-dtype X`` (spelled as the built-in rules always wrote it)
SAME_DTYPE_GUARD = "(= (dtype {lhs}) (dtype {term}))"
#: what ``:domain (kind var ...)`` may name: operands the soundness checker knows how to draw
DOMAINS = ("positive-definite",)
#: what ``:assumes KIND`` may name: an assumption a compile may grant (docs/numerics.md)
ASSUMPTIONS = ("finite",)
#: what ``:exception KIND`` may name: a documented exception to the numerics policy, on by default
EXCEPTIONS = ("reassociation",)


@dataclass(frozen=True)
class Rule:
    name: str                 # "algebra/mul-one"
    ruleset: str
    kind: str                 # "rewrite" | "birewrite" | "rule"
    text: str                 # the egglog command sent
    source: tuple[str, int]   # (file, line)
    lhs: str | None = None    # the patterns of a (bi)rewrite, as written
    rhs: str | None = None
    when: str | None = None
    domain: tuple = ()        # (kind, variable) pairs of its ``:domain``: where its left side is defined
    assumes: str | None = None  # the assumption of its ``:assumes`` (ASSUMPTIONS), None for a rule that needs none
    exception: str | None = None  # its ``:exception`` (EXCEPTIONS): how it may change inf and NaN by default
    family_op: str | None = None  # a family's copy (rules/families.py): the constructor every query names

    def __str__(self):
        return f"{self.name} ({self.source[0]}:{self.source[1]})"

    def __hash__(self):  # the fields' hash, once: saturation looks every rule up at each step
        held = self.__dict__.get("_hash")
        if held is None:   # the fields as they are: astuple would deep-copy each of them first
            held = self.__dict__["_hash"] = hash(tuple(getattr(self, f.name) for f in fields(self)))
        return held

    def __getstate__(self):  # string hashes differ between processes: a pickle keeps no hash
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    def new_nodes_per_match(self) -> dict[str, int]:
        """At most how many e-nodes one match adds, per rule as egglog names it (a
        birewrite is two rules, ``name=>`` building the right side and ``name<=`` the
        left): the constructor terms it builds. Constructors are capitalized (``Mul``,
        ``Scalar``); ``union``, ``set``, analyses and relations (``(input-roots e s)``)
        add rows, not e-nodes, and counting them would ban the analysis of a large graph."""
        return dict(_new_nodes_per_match(self))

    @property
    def max_new_nodes(self) -> int:
        """At most how many e-nodes one match of each of its directions adds, together."""
        return _max_new_nodes(self)

    def may_match(self, empty) -> bool:
        """False only where no match can exist: each direction's query names a constructor
        of ``empty`` (those with no e-node). A query's every constructor term must exist for
        it to match (egglog looks terms up in a query; it never builds them)."""
        return any(not (needed & empty) for needed in _query_constructors(self))

    def reads(self) -> frozenset:
        """The tables (constructors, functions, relations) that must all have rows for this
        rule to match: those its query names, for a general rule; none for a (bi)rewrite,
        which is left to ``may_match``. A name that is no table (a primitive) is harmless."""
        return _read_tables(self)

    def writes(self) -> frozenset:
        """The tables its actions may add rows to: every name they apply, and a rewrite's
        sides (at most: a name that is no table is harmless)."""
        return _written_tables(self)

    def directions(self) -> tuple[tuple[frozenset, frozenset], ...]:
        """Per direction, (the constructors its query names, those its actions build): a
        direction builds its terms only where every constructor of its query has an e-node."""
        return tuple(zip(_query_constructors(self), _built_constructors(self)))


def _withholding(written: Ruleset, granted: frozenset) -> Ruleset:
    """``written`` without the rules that assume what ``granted`` lacks, their lines kept blank."""
    program, kept, withheld = written.program, [], []
    for rule in written.rules:
        if rule.assumes is None or rule.assumes in granted:
            kept.append(rule)
        else:
            withheld.append(rule)
            program = program.replace(rule.text, "\n" * rule.text.count("\n"), 1)
    return Ruleset(written.name, kept, program, written.source, written.saturate, granted, tuple(withheld),
                   written)


def reachable_constructors(rulesets, present) -> frozenset:
    """The constructors that may have e-nodes while ``rulesets`` run on an e-graph whose terms
    name ``present``: those, and what every rule builds where all its query needs is reachable."""
    reached, directions = set(present), [d for ruleset in rulesets for rule in ruleset.rules
                                         for d in rule.directions()]
    grew = True
    while grew:
        grew = False
        for needed, built in directions:
            if not built <= reached and needed <= reached:
                reached |= built
                grew = True
    return frozenset(reached)


@dataclass
class Ruleset:
    name: str
    rules: list[Rule]
    program: str = ""         # the file as sent to egglog (same lines, rules completed)
    source: str = "<string>"
    saturate: bool = False    # an analysis: run to a fixed point around each rewrite step
    granted: frozenset = frozenset(ASSUMPTIONS)  # the assumptions its rules may make
    withheld: tuple = ()      # the file's rules left out: they assume what was not granted
    written: Ruleset | None = None    # the file with every rule, whatever it assumes (None: this is it)

    def __iter__(self):
        return iter(self.rules)

    def granting(self, assumptions) -> Ruleset:
        """This ruleset with the rules whose ``:assumes`` is among ``assumptions`` and no other
        assuming rule; the same object where that changes nothing (sessions are pooled by
        ruleset identity, so a variant is made once and kept)."""
        granted = frozenset(assumptions)
        written = self.written or self
        if granted == self.granted or not any(r.assumes for r in written.rules):
            return self
        if granted >= written.granted and written.saturate == self.saturate:
            return written
        cache = written.__dict__.setdefault("_variants", {})
        key = (granted, self.saturate)
        if key not in cache:
            cache[key] = replace(_withholding(written, granted), saturate=self.saturate)
        return cache[key]

    @property
    def mode(self) -> str:
        return "saturate" if self.saturate else "step"

    @property
    def max_new_nodes(self) -> int:
        """At most how many e-nodes one step of this ruleset adds per match its rules may apply
        (summed once per list of rules: the runner asks before every analysis)."""
        held = self.__dict__.get("_max_new_nodes")
        if held is None or held[0] is not self.rules or held[1] != len(self.rules):
            held = self.__dict__["_max_new_nodes"] = (self.rules, len(self.rules),
                                                      sum(rule.max_new_nodes for rule in self.rules))
        return held[2]

    @property
    def split(self) -> bool:
        """Whether ``egglog_program`` sends each rule in a ruleset of its own (``split_program``):
        a rewrite ruleset's, and an analysis's that builds no e-node. A run of either can then
        leave out the rules that cannot match; an analysis that builds e-nodes (fold's scalars)
        runs whole, in steps bounded by its worst case."""
        return self.mode == "step" or self.max_new_nodes == 0

    def egglog_program(self) -> str:
        """What ``egraph.sending.send_rules`` sends (``split_program`` or ``program_with_orders``),
        made once: it rewrites the text of every rule."""
        made = self.__dict__.get("_egglog_program")
        if made is None or made[0] != self.mode:
            made = self.__dict__["_egglog_program"] = (
                self.mode, self.split_program() if self.split else self.program_with_orders())
        return made[1]

    def deferred(self) -> list[Rule]:
        """The family copies that ``egglog_program`` leaves out, each sent by its own
        ``deferred_program`` once its op may have an e-node (egraph/sending.py). Only a rewrite
        ruleset's: an analysis is sent whole, its runs leave out the rules that cannot match."""
        return [rule for rule in self.rules if rule.family_op] if self.mode == "step" else []

    def deferred_program(self, rule: Rule) -> str:
        """The text that sends ``rule``, one of ``deferred()``, into its one-rule ruleset."""
        made = self.__dict__.get("_deferred_programs")
        if made is None or made[0] != self.mode:   # (mode, swapped ops, rule -> its place, rule -> its text)
            made = self.__dict__["_deferred_programs"] = (
                self.mode, self.swapped_ops(), {r: k for k, r in enumerate(self.rules) if r.family_op}, {})
        _, swapped, places, texts = made
        if rule not in texts:   # one at a time: most compiles send few of them
            texts[rule] = self._in_own_ruleset(places[rule], rule, swapped)
        return texts[rule]

    def rule_rulesets(self) -> list[str]:
        """The names of one-rule rulesets, as declared by ``split_program``."""
        return [f"{self.name}__{k}" for k in range(len(self.rules))]

    def split_program(self) -> str:
        """The program with each rule in a ruleset of its own (``rule_rulesets``) and the
        ruleset itself their union (egglog's ``unstable-combined-ruleset``), line for line;
        each rule with its ``operand_orders`` beside it, in its ruleset; the ``deferred`` rules
        left out (their lines kept), their rulesets declared.

        Why: egglog's run costs something for every rule it holds, and a back-off step searches
        the whole e-graph for every rule it runs, also for rules that cannot match (their
        constructors have no e-node yet). Split, a step or an analysis runs the union of only
        the rules that may match (egraph/runner.py), and profiling times one rule at a time."""
        if not self.rules:
            return self.program
        swapped, deferred = self.swapped_ops(), set(self.deferred())
        declaration = f"(ruleset {self.name})"
        if not self.program.startswith(declaration):
            raise ValueError(f"{self.source}: the program does not start by declaring its ruleset")
        program = " ".join(f"(ruleset {name})" for name in self.rule_rulesets()) + self.program[len(declaration):]
        sent = ["\n" * rule.text.count("\n") if rule in deferred else self._in_own_ruleset(k, rule, swapped)
                for k, rule in enumerate(self.rules)]
        program = _replaced_in_order(program, self.rules, sent) or self._replaced(program, sent)
        return program + f"\n(unstable-combined-ruleset {self.name} {' '.join(self.rule_rulesets())})"

    def _replaced(self, program: str, sent: list[str]) -> str:
        """``program`` with each rule's first occurrence replaced by its ``sent`` text, one at a time."""
        for rule, text in zip(self.rules, sent):
            if rule.text not in program:
                raise ValueError(f"{rule.source[0]}:{rule.source[1]}: {rule.name} is not in ruleset {self.name}")
            program = program.replace(rule.text, text, 1)
        return program

    def _in_own_ruleset(self, k: int, rule: Rule, swapped: tuple) -> str:
        """``rule`` (the ``k``-th) in its one-rule ruleset, with its operand orders."""
        mine = f':ruleset {self.name} :name "{rule.name}"'
        if mine not in rule.text:
            raise ValueError(f"{rule.source[0]}:{rule.source[1]}: {rule.name} is not in ruleset {self.name}")
        text = rule.text.replace(mine, f':ruleset {self.name}__{k} :name "{rule.name}"', 1)
        return " ".join([text, *operand_orders(rule, text, swapped)])

    def program_with_orders(self) -> str:
        """The program with each rule's ``operand_orders`` beside it (an analysis's program)."""
        program, ops = self.program, self.swapped_ops()
        for rule in self.rules:
            program = program.replace(rule.text, " ".join([rule.text, *operand_orders(rule, rule.text, ops)]), 1)
        return program

    def swapped_ops(self) -> tuple:
        """The COMMUTATIVE constructors whose operand orders the rules need: those this ruleset
        does not commute itself (``(rewrite (Add a b) (Add b a))`` makes every swapped term)."""
        commuted = {_subforms(rule.lhs)[0] for rule in self.rules
                    if rule.kind != "rule" and rule.lhs and rule.rhs and _swapped(rule.lhs) == rule.rhs}
        return tuple(op for op in COMMUTATIVE if op not in commuted)


def _replaced_in_order(program: str, rules: list[Rule], sent: list[str]) -> str | None:
    """``Ruleset._replaced`` in one pass over ``program``, where the rules come in its order (a
    rule file's do); None where they do not (the soundness checker's rulesets). A rule's text
    names it (``:name``), so it occurs once, and the first occurrence after the rule before
    it is the first of all."""
    pieces, position = [], 0
    for rule, text in zip(rules, sent):
        start = program.find(rule.text, position)
        if start < 0:
            return None
        pieces += [program[position:start], text]
        position = start + len(rule.text)
    pieces.append(program[position:])
    return "".join(pieces)


def _forbidden_action(form: str) -> str | None:
    """The first of FORBIDDEN_ACTIONS used anywhere in ``form`` (outside strings), if any."""
    if not any(action in form for action in FORBIDDEN_ACTIONS):   # most rules: no need to read its tokens
        return None
    tokens = [t.group() for t in _TOKEN.finditer(form)]
    return next((t for before, t in zip(tokens, tokens[1:]) if before == "(" and t in FORBIDDEN_ACTIONS), None)


def _expand_same_dtype(form: str, parts: list[str], source: str, line: int) -> str:
    """``form`` with ``:same-dtype X`` replaced by its guard, the last one of ``:when``:
    ``(rewrite L R :when (g) :same-dtype x)`` -> ``(rewrite L R :when (g (= (dtype L) (dtype x))))``."""
    term = _option(parts, ":same-dtype")
    if parts[0] not in ("rewrite", "birewrite") or len(parts) < 3:
        raise RuleFileError(f"{source}:{line}: :same-dtype belongs to a rewrite or birewrite, not ({parts[0]} ...)")
    if term is None or term.startswith(":"):
        raise RuleFileError(f"{source}:{line}: :same-dtype needs the term whose dtype the left side keeps, "
                            "e.g. :same-dtype x")
    guard = SAME_DTYPE_GUARD.format(lhs=parts[1], term=term)
    option = re.compile(r"\s*:same-dtype\s+" + re.escape(term))
    when = _option(parts, ":when")
    if when is None:
        return option.sub(lambda _: f" :when ({guard})", form, count=1)
    guards = f"({guard})" if when == "()" else f"{when[:-1]} {guard})"
    form = option.sub("", form, count=1)
    return re.sub(r"(:when\s+)" + re.escape(when), lambda m: m.group(1) + guards, form, count=1)


def _take_domain(form: str, parts: list[str], source: str, line: int) -> tuple[str, tuple]:
    """``form`` without its ``:domain (kind var ...)``, and the (kind, var) pairs it names."""
    given = _option(parts, ":domain")
    words = _subforms(given) if given and given.startswith("(") else []
    if parts[0] not in ("rewrite", "birewrite") or len(words) < 2 or words[0] not in DOMAINS:
        raise RuleFileError(f"{source}:{line}: :domain belongs to a rewrite or birewrite and names a kind of "
                            f"{', '.join(DOMAINS)} and the variables in it, e.g. :domain (positive-definite A); "
                            f"got {given!r} on ({parts[0]} ...)")
    form = re.sub(r"\s*:domain\s+" + re.escape(given), "", form, count=1)
    return form, tuple((words[0], v) for v in words[1:])


def _take_option(form: str, parts: list[str], key: str, kinds: tuple, source: str, line: int) -> tuple[str, str]:
    """``form`` without its ``KEY KIND`` (``:assumes finite``), and the kind, one of ``kinds``."""
    given = _option(parts, key)
    if given not in kinds:
        what = "what the rule assumes of every value" if key == ":assumes" else "the policy exception the rule is"
        raise RuleFileError(f"{source}:{line}: {key} names {what}, one of {', '.join(kinds)} "
                            f"(e.g. {key} {kinds[0]}; docs/numerics.md), not {given!r}")
    return re.sub(r"\s*" + key + r"\s+" + re.escape(given), "", form, count=1), given


def _option(parts: list[str], key: str):
    if key in parts:
        i = parts.index(key)
        return parts[i + 1] if i + 1 < len(parts) else None
    return None


# -- loading --------------------------------------------------------------------------------------
def parse_rules(text: str, ruleset: str, source: str) -> Ruleset:
    if ruleset in RESERVED_RULESETS:
        raise RuleFileError(f"{source}: the ruleset name {ruleset!r} (from the file's name) is reserved by "
                            f"eqgraph ({', '.join(RESERVED_RULESETS)}); rename the file")

    rules, edits = [], []   # edits: (form, replacement) applied to the text, keeping its lines
    declared: set[str] = set()  # the relations and functions the file declares
    for form, line in split_forms(text, source):
        parts = _subforms(form)
        head = parts[0] if parts else ""
        if head == "ruleset":
            edits.append((form, re.sub(r"[^\n]", " ", form)))  # every file is its own ruleset
            continue
        if head in DECLARATION_HEADS:
            declared.add(parts[1] if len(parts) > 1 else "")
            continue
        if head in declared:  # a fact of a relation this file declares, e.g. (axis-index 0)
            continue
        if head not in RULE_HEADS:
            raise RuleFileError(
                f"{source}:{line}: ({head} ...) is not allowed in a rule file; it may hold only rules "
                f"({', '.join(RULE_HEADS)}), rulesets, declarations ({', '.join(DECLARATION_HEADS)}) "
                "and facts of the relations it declares")
        family = family_named(form, source, line)
        if family is None:
            rule = _rule(form, parts, ruleset, source, line)
            rules.append(rule)
            edits.append((form, rule.text + "\n" * (form.count("\n") - rule.text.count("\n"))))
            continue
        flat = one_line(form)
        made = copies(_rule(flat, _subforms(flat), ruleset, source, line), family)
        if not all(made[0].family_op in needed for needed in _query_constructors(made[0])):
            made = [replace(rule, family_op=None) for rule in made]   # a direction may match without its op
        rules += made
        edits.append((form, " ".join(rule.text for rule in made) + "\n" * form.count("\n")))
    duplicates = {name for name, n in Counter(r.name for r in rules).items() if n > 1}
    if duplicates:
        raise RuleFileError(f"{source}: rule names must be unique, repeated: {sorted(duplicates)}")
    saturate = bool(re.search(r"^;;\s*eqgraph:\s*saturate\b", text, re.MULTILINE))
    program, position = [f"(ruleset {ruleset}) "], 0
    for form, replacement in edits:
        start = text.index(form, position)
        program += [text[position:start], replacement]
        position = start + len(form)
    program.append(text[position:])
    written = Ruleset(ruleset, rules, "".join(program), source, saturate, frozenset(ASSUMPTIONS))
    return written.granting(())   # by default no rule assumes anything (docs/numerics.md)


def _rule(form: str, parts: list[str], ruleset: str, source: str, line: int) -> Rule:
    """The rule that ``form`` (a rewrite, birewrite or rule, in ``parts``) of file ``source`` writes."""
    head = parts[0]
    if ":same-dtype" in parts:
        form = _expand_same_dtype(form, parts, source, line)
        parts = _subforms(form)
    domain = ()
    if ":domain" in parts:
        form, domain = _take_domain(form, parts, source, line)
        parts = _subforms(form)
    assumes = exception = None
    if ":assumes" in parts:
        form, assumes = _take_option(form, parts, ":assumes", ASSUMPTIONS, source, line)
        parts = _subforms(form)
    if ":exception" in parts:
        form, exception = _take_option(form, parts, ":exception", EXCEPTIONS, source, line)
        parts = _subforms(form)
    forbidden = _forbidden_action(form)
    if forbidden:
        raise RuleFileError(f"{source}:{line}: a rule may not use ({forbidden} ...): rules only add "
                            "terms, equalities and facts")
    given = _option(parts, ":ruleset")
    if given is not None and given != ruleset:
        raise RuleFileError(f"{source}:{line}: rule says :ruleset {given}, but the file's ruleset is "
                            f"{ruleset!r} (one ruleset per file, named after it)")
    name = _option(parts, ":name")
    name = f"{ruleset}/{name.strip(chr(34))}" if name else f"{ruleset}:{line}"
    body = re.sub(r'\s*:name\s+"(?:[^"\\]|\\.)*"', "", form[:-1])
    body = re.sub(r"\s*:ruleset\s+\S+", "", body)
    egg = f'{body} :ruleset {ruleset} :name "{name}")'
    lhs = rhs = when = None
    if head in ("rewrite", "birewrite") and len(parts) >= 3:
        lhs, rhs, when = parts[1], parts[2], _option(parts, ":when")
    return Rule(name, ruleset, head, egg, (source, line), lhs, rhs, when, domain, assumes, exception)


#: where a rule file takes the type rules generated from the op registry (rulesets/types.egg)
OP_TYPE_RULES = ";; eqgraph: op-type-rules"
#: makes those type rules (``() -> str``). The e-graph's schema, which derives them from the op
#: registry, sits a layer above this one, so it plugs its maker in (egraph/schema.py, imported by
#: ``import eqgraph``) rather than being imported here.
op_type_rules = None


def _read(path: Path) -> str:
    """A rule file's text, with the op registry's type rules after the line that asks for them."""
    text = path.read_text()
    if OP_TYPE_RULES not in text:
        return text
    if op_type_rules is None:
        raise RuleFileError(f"{path}: its line {OP_TYPE_RULES!r} asks for the op registry's type rules, which "
                            "eqgraph.egraph.schema makes; import eqgraph before loading the file")
    return text.replace(OP_TYPE_RULES, f"{OP_TYPE_RULES}\n{op_type_rules()}", 1)


def builtin_names() -> list[str]:
    return sorted(p.stem for p in RULESETS_DIR.glob("*.egg"))


_CACHE: dict = {}
_BUILTIN_FILES: dict = {}   # built-in name -> its file's resolved path


def load(spec) -> Ruleset:
    """A ruleset from a built-in name (``"algebra"``), a path to a ``.egg`` file, a
    ``Ruleset``, or rule text (anything with a parenthesis); or a pair ``(one of
    those, mode)`` with a mode of ``MODES``, overriding the file's own default."""
    if isinstance(spec, tuple):
        return _with_mode(spec)
    if isinstance(spec, Ruleset):
        return spec
    if isinstance(spec, str) and not spec.strip():
        # refused, not read as no rules: a blank entry is more often a name or path that went
        # missing (an unset variable) than a wish for nothing, and as a path it is the directory "."
        raise ValueError(f"rulesets: the entry {spec!r} is blank: it is no built-in ruleset name, no rule file "
                         "and no rule text; leave it out for no rules")
    if isinstance(spec, Path) or (isinstance(spec, str) and "(" not in spec):
        builtin = _BUILTIN_FILES.get(spec) if isinstance(spec, str) and not os.path.exists(spec) else None
        path = Path(builtin or spec)
        if builtin is None and not path.suffix and not path.exists():
            path = RULESETS_DIR / f"{spec}.egg"
            if not path.exists():
                raise ValueError(f"No built-in ruleset named {spec!r}; built-ins: {', '.join(builtin_names())}")
            _BUILTIN_FILES[spec] = str(path.resolve())  # a compile loads each file a few times: resolve once
        if builtin is None and not path.exists():
            raise FileNotFoundError(f"Rule file {path} does not exist")
        key = (builtin or str(path.resolve()), os.stat(path).st_mtime_ns)
        if key not in _CACHE:  # setdefault: two threads loading one file get the same Ruleset
            _CACHE.setdefault(key, parse_rules(_read(path), re.sub(r"\W", "_", path.stem), str(path)))
        return _CACHE[key]
    if isinstance(spec, str):
        if spec not in _CACHE:
            _CACHE.setdefault(spec, parse_rules(spec, f"user{len(_CACHE)}", "<string>"))
        return _CACHE[spec]
    raise TypeError(f"Cannot load rules from {spec!r}")


def _with_mode(spec: tuple) -> Ruleset:
    """The ruleset of a schedule entry ``(spec, mode)``: the loaded one if it already has
    that mode, else one copy of it per mode (cached: pooled sessions know rulesets by identity)."""
    if len(spec) != 2 or spec[1] not in MODES:
        raise ValueError(f"rulesets: a schedule entry is (ruleset, mode) with a mode of {', '.join(map(repr, MODES))}, "
                         f"not {spec!r}")
    ruleset, mode = load(spec[0]), spec[1]
    if ruleset.mode == mode:
        return ruleset
    key = ("mode", id(ruleset), mode)
    if key not in _CACHE:
        _CACHE.setdefault(key, (ruleset, replace(ruleset, saturate=mode == "saturate")))
    return _CACHE[key][1]   # the pair keeps ``ruleset`` alive, so its id is not reused


def check_unique(rulesets: list[Ruleset]) -> None:
    """Refuse two rulesets of one name (a file listed twice, or a user's ``algebra.egg``
    beside the built-in ``algebra``): egglog would mix their rules or fail half-way."""
    seen: dict[str, Ruleset] = {}
    for ruleset in rulesets:
        other = seen.setdefault(ruleset.name, ruleset)
        if other is not ruleset or rulesets.count(ruleset) > 1:
            # one file twice, maybe in two modes ("fold" and ("fold", "step")): two Rulesets, one source
            twice = ("is listed twice" if other is ruleset or other.source == ruleset.source else
                     f"comes from both {other.source} and {ruleset.source}; rename one file")
            raise ValueError(f"rulesets: the ruleset {ruleset.name!r} {twice} (ruleset names, taken from "
                             "file names, must be unique in one compile)")
