"""``eqgraph.function(..., mode="debug")``: run with ``debug_perform`` and check the rewrites.

Every e-class of the e-graph holds terms that the rules claim are equal. After each call a
debug function evaluates, on the call's actual inputs (explicit arguments and shared
values as they were when the call started):

1. the user's graph, node by node: the reference value of each e-class it reaches;
2. the extracted graph (what ran), node by node;
3. up to ``members`` other terms of every e-class those two touched, each on its children's
   values.

While the user's graph runs, each node's perform is also held to its op's declarations, as
PyTensor's DebugMode holds it: an input it changed must be named in ``destroy_map``
(``BadDestroyMap``), an output sharing memory with an input in ``view_map`` or ``destroy_map``,
and two outputs that later nodes read must not share memory (``BadViewMap``). eqgraph reuses
and overwrites arrays on the strength of those declarations, so an op that breaks them gives
wrong answers elsewhere.

Every value is compared with its e-class's reference by the type's ``values_eq_approx``.
The first term that disagrees (innermost first: e-classes in the order the user's graph
computes them) raises ``DebugModeError`` naming the rules that put it in its e-class (a
rule whose one side matches the term and whose other side matches the e-class, as
``f.stages.egraph`` explains members), the two values and the inputs. A rule's bug thus
becomes a named failure even when extraction happened not to choose the wrong term.

Tolerated: positions where one of the two values is inf or NaN (the documented rewrites
such as ``log(exp(x)) -> x`` assume no overflow; README, "Where eqgraph deliberately
differs from NumPy"), and, where ``values_eq_approx`` refuses, differences within
sqrt(epsilon) of the array's largest magnitude (rounding in a reassociated matmul chain or
sum changes small entries by a fraction of the large ones). A rule that is wrong changes
values by far more, and is caught.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from eqgraph.egraph.snapshot import LEAVES
from eqgraph.exec.function import Function
from eqgraph.extract.extraction import Decoder
from eqgraph.extract.view import explaining_rules
from eqgraph.terms.type import describe_value

#: how many terms of each e-class are evaluated besides the user's and the chosen one
MEMBERS = 4


class DebugModeError(AssertionError):
    """A term of an e-class disagrees with the e-class's value on a call's inputs."""


class BadDestroyMap(DebugModeError):
    """An op's perform changed an input that its ``destroy_map`` does not name."""


class BadViewMap(DebugModeError):
    """An op's output shares memory with an input that its ``view_map`` and ``destroy_map`` do
    not name, or with another output that later nodes also read."""


class DebugFunction(Function):
    """A Function whose every call is checked (see the module's docstring)."""

    members = MEMBERS

    def __call__(self, *args, **kwargs):
        shared_before = [container[0] for container in self._containers]
        outputs = super().__call__(*args, **kwargs)
        arguments = [cell[0] for cell in self._local.storage.args]
        with np.errstate(all="ignore"):  # terms the user did not write may overflow: _agree decides
            check_call(self.stages, arguments + shared_before, self.members, self._title())
        return outputs


def run_node(op, node, values) -> list:
    """The outputs of ``node`` (an Apply of ``op``) on ``values``, computed by ``debug_perform``.
    An op that destroys inputs gets copies: the values are the caller's arrays and the other
    terms' operands."""
    destroyed = {i for positions in (getattr(op, "destroy_map", None) or {}).values() for i in positions}
    return _perform(op, node, [np.array(v, copy=True) if i in destroyed and isinstance(v, np.ndarray) else v
                               for i, v in enumerate(values)])


def _perform(op, node, values: list) -> list:
    """The outputs of ``op``'s ``debug_perform`` on ``values`` (which it may change in place)."""
    storage = [[None] for _ in node.outputs]
    op.debug_perform(node, values, storage)
    return [cell[0] for cell in storage]


def check_call(stages, input_values, members: int = MEMBERS, title: str = "the function") -> None:
    """Raise DebugModeError at the first e-class term that disagrees on these inputs."""
    extraction, data = stages.extraction, stages.extraction.data
    rules = list(stages.report.rules.values())
    values: dict = {}      # e-class -> value (a list of values for a node with several outputs)
    order: list = []       # e-classes in the order the graphs compute them
    others: dict = {}      # e-class -> [(value, variable)]: more variables of the graphs in it
    inputs = dict(zip(data.fgraph.inputs, input_values))

    classes = {var: data.class_of_id.get(k) for var, k in data.ids.items()}
    classes.update((var, eclass) for eclass, var in extraction.variables.items())
    class_of = classes.get

    def add(eclass, value, var):
        if eclass is None:
            return
        if eclass in values:
            others.setdefault(eclass, []).append((value, var))
        else:
            values[eclass] = value
            order.append(eclass)

    reference = _evaluate(data.fgraph, inputs, check_declarations=True)
    for var, value in reference.items():
        add(class_of(var), value, var)
    for eclass, outputs in _multi_output_classes(data.fgraph, reference, class_of, data):
        add(eclass, outputs, None)
    ran = _evaluate(extraction.fgraph, dict(zip(extraction.fgraph.inputs, input_values)))
    for eclass, var in extraction.variables.items():
        if var in ran and var.owner is not None:
            add(eclass, ran[var], var)
    report = _Reporter(data, rules, inputs, title)
    decoder = Decoder(data)
    for eclass in order:  # innermost first: the first disagreement is where a rule went wrong
        for value, var in others.get(eclass, ()):
            member = _member(var, eclass, class_of, data)
            report.compare(eclass, member, values[eclass], value, var.type, var)
        checked = 0
        for node_id in data.classes.get(eclass, ()):
            if checked >= members:
                break
            node = data.nodes[node_id]
            if node.op in LEAVES or node.op == "Out" or any(c not in values for c in node.children):
                continue
            op = decoder.op(node)
            if op is None:
                continue
            try:
                apply = op.make_node(*[extraction.types[c]() for c in node.children])
            except Exception:  # noqa: BLE001  (a term make_node refuses is never run)
                continue
            expected = values[eclass]
            if len(apply.outputs) == 1:
                expected = [expected]
            elif not (isinstance(expected, list) and len(expected) == len(apply.outputs)):
                continue  # a class of several outputs the graphs never computed as one node
            checked += 1
            try:
                outputs = run_node(op, apply, [values[c] for c in node.children])
            except Exception as err:  # noqa: BLE001  (reported: an equal term must run)
                report.failed(eclass, node_id, values[eclass], err)
                continue
            for want, got, out in zip(expected, outputs, apply.outputs):  # output by output
                report.compare(eclass, node_id, want, got, out.type, None)


def _evaluate(fgraph, inputs: dict, check_declarations: bool = False) -> dict:
    """Variables of ``fgraph`` -> their values (constants included), node by node; with
    ``check_declarations`` each perform is held to its op's destroy_map and view_map.

    As lazily as the program: a lazy op (an ifelse) gets only the inputs its thunk asks for,
    and a node that raises on these inputs is left out with everything after it (the call
    succeeded, so no output needed it: an untaken branch, say ``x[n - 1]`` under ``n > 0``)."""
    values = dict(inputs)
    for var in fgraph.variables:
        if hasattr(var, "data") and var.owner is None and var not in values:
            values[var] = var.data
    for node in fgraph.toposort():
        try:
            if getattr(node.op, "lazy", False):
                outputs = _run_lazy(node, values)
            elif check_declarations:
                outputs = _run_declared(fgraph, node, [values[v] for v in node.inputs])
            else:
                outputs = run_node(node.op, node, [values[v] for v in node.inputs])
        except DebugModeError:
            raise
        except Exception:  # noqa: BLE001  (not needed by the call: see the docstring)
            continue
        if outputs is not None:
            values.update(zip(node.outputs, outputs))
    return values


def _run_declared(fgraph, node, inputs: list) -> list:
    """``node``'s outputs, raising BadDestroyMap or BadViewMap where its perform did what its
    op's destroy_map and view_map do not declare. The inputs are copies: a perform that
    destroys one must not change the values the rest of the check reads."""
    inputs = [np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in inputs]
    before = [np.array(v, copy=True) if isinstance(v, np.ndarray) else None for v in inputs]
    outputs = _perform(node.op, node, inputs)   # the copies above are the ones it may destroy
    destroy_map, view_map = getattr(node.op, "destroy_map", {}) or {}, getattr(node.op, "view_map", {}) or {}
    destroyed = {i for positions in destroy_map.values() for i in positions}
    for i, (now, was) in enumerate(zip(inputs, before)):
        if was is not None and i not in destroyed and not _same_array(now, was):
            raise BadDestroyMap(f"debug mode: {node.op} changed its input {i} ({node.inputs[i]}) in place, "
                                f"from {_show(was)} to {_show(now)}, but its destroy_map {destroy_map} does not "
                                f"name it; node {node}")
    for o, out in enumerate(outputs):
        if not isinstance(out, np.ndarray):
            continue
        declared = set(view_map.get(o, ())) | set(destroy_map.get(o, ()))
        for i, inp in enumerate(inputs):
            if isinstance(inp, np.ndarray) and i not in declared and np.may_share_memory(out, inp):
                raise BadViewMap(f"debug mode: output {o} of {node.op} shares memory with its input {i} "
                                 f"({node.inputs[i]}), but neither its view_map {view_map} nor its destroy_map "
                                 f"{destroy_map} says so; node {node}")
        if declared or not _read_later(fgraph, node.outputs[o]):
            continue
        for other, other_out in enumerate(outputs):
            if (other != o and isinstance(other_out, np.ndarray) and _read_later(fgraph, node.outputs[other])
                    and np.may_share_memory(out, other_out)):
                raise BadViewMap(f"debug mode: outputs {o} and {other} of {node.op} share memory and later "
                                 f"nodes read both, so writing one in place would change the other; node {node}")
    return outputs


def _same_array(now, was) -> bool:
    if now.shape != was.shape or now.dtype != was.dtype:
        return False
    return bool(np.array_equal(now, was, equal_nan=now.dtype.kind in "fc"))


def _read_later(fgraph, var) -> bool:
    """Whether a node of ``fgraph`` reads ``var`` (an output of the function alone is not)."""
    return any(client != "output" for client, _ in fgraph.clients.get(var, ()))


def _run_lazy(node, values):
    """A lazy node's outputs from the inputs known in ``values``, or None if it needs others."""
    storage = {v: [values.get(v)] for v in node.inputs + node.outputs}
    computed = {v: [int(v in values)] for v in node.inputs + node.outputs}
    for v in node.outputs:
        computed[v][0] = 0
    if node.op.make_thunk(node, storage, computed, no_recycling=[], impl="debug")():
        return None
    return [storage[v][0] for v in node.outputs]


def _multi_output_classes(fgraph, values, class_of, data):
    """(e-class, [output values]) for each node with several outputs: its e-class (the child
    of the ``Out`` e-nodes) holds the list of its outputs' values."""
    for node in fgraph.toposort():
        if len(node.outputs) < 2 or any(o not in values for o in node.outputs):
            continue
        first = class_of(node.outputs[0])
        for member in data.classes.get(first, ()):
            enode = data.nodes[member]
            if enode.op == "Out" and enode.args[0] == 0:
                yield enode.children[0], [values[o] for o in node.outputs]
                break


class _Reporter:
    def __init__(self, data, rules, inputs, title):
        self.data, self.rules, self.inputs, self.title = data, rules, inputs, title

    def compare(self, eclass, node_id, expected, got, ttype, var) -> None:
        if _agree(ttype, expected, got):
            return
        what = (f"the term {self.data.describe_node(self.data.nodes[node_id], 2)}" if node_id is not None
                else f"the graph's variable {var} ({var.owner.op if var.owner is not None else 'an input'})")
        self._raise(eclass, node_id, f"{what} gives {_show(got)}, but the e-class's value is {_show(expected)}")

    def failed(self, eclass, node_id, expected, err) -> None:
        term = self.data.describe_node(self.data.nodes[node_id], 2)
        self._raise(eclass, node_id, f"the term {term} raised {type(err).__name__}: {err} "
                                     f"(the e-class's value is {_show(expected)})")

    def _raise(self, eclass, node_id, message):
        rules = (_blamed(self.rules, self.data, eclass, node_id) if node_id is not None
                 else self._blamed_by_members(eclass))
        blame = (f"rule {', '.join(str(r) for r in rules)} is unsound: its two sides disagree"
                 if rules else "no rule's two sides match this term and its e-class (it came from a "
                              "general (rule ...) or from the graph itself)")
        inputs = "\n".join(f"  {var}: {_show(value)}" for var, value in self.inputs.items())
        raise DebugModeError(f"debug mode, {self.title}: {blame}.\nIn e-class {eclass} "
                             f"({self.data.describe_class(eclass)}), {message}.\nInputs:\n{inputs}")

    def _blamed_by_members(self, eclass) -> list:
        """A graph variable disagrees with its e-class (an input merged with a term): the rules
        that put some member of the e-class there, by one side matching it and the other the class."""
        found: list = []
        for member in self.data.classes.get(eclass, ()):
            found += [r for r in _blamed(self.rules, self.data, eclass, member) if r not in found]
        return found


def _member(var, eclass, class_of, data):
    """The e-node of ``eclass`` that is ``var``'s node (same op, same child e-classes), or None."""
    node = var.owner
    if node is None or len(node.outputs) != 1:
        return None
    name = data.schema.constructor(node.op, len(node.inputs)).name
    children = tuple(class_of(v) for v in node.inputs)
    return next((m for m in data.classes.get(eclass, ())
                 if data.nodes[m].op == name and data.nodes[m].children == children), None)


def _blamed(rules, data, eclass, node_id) -> list:
    """The rules with one side matching the term ``node_id`` and the other its e-class, in
    either direction (``log(exp(x)) -> x`` puts ``x`` in the class of ``log(exp(x))``: the
    term that disagrees may be either side)."""
    found = explaining_rules(rules, data, eclass, node_id)
    reversed_rules = [replace(r, lhs=r.rhs, rhs=r.lhs) for r in rules if r.lhs is not None and r not in found]
    return found + explaining_rules(reversed_rules, data, eclass, node_id)


def _agree(ttype, expected, got) -> bool:
    values_eq_approx = getattr(ttype, "values_eq_approx", None)
    if values_eq_approx is None:
        return True  # a type that cannot compare values (a random generator): nothing to check
    if values_eq_approx(expected, got):
        return True
    expected, got = np.asarray(expected), np.asarray(got)
    if not (expected.dtype.kind in "fc" and got.dtype.kind in "fc" and expected.shape == got.shape):
        return False
    finite = np.isfinite(expected) & np.isfinite(got)  # elsewhere one side overflowed (module docstring)
    if not finite.any() or values_eq_approx(np.where(finite, expected, 0), np.where(finite, got, 0)):
        return True
    # rounding moves a small entry of a reassociated sum by a fraction of the array's largest
    # entries, not of its own size: compare against that scale, at sqrt(epsilon)
    scale = float(np.max(np.abs(expected[finite])))
    rtol = float(np.sqrt(np.finfo(np.result_type(expected.dtype, got.dtype)).eps))
    return bool(np.all(np.abs(expected[finite] - got[finite]) <= rtol * (scale + 1e-30)))


def _show(value) -> str:
    if hasattr(value, "shape") and getattr(value, "size", 0) <= 8:
        return f"{np.asarray(value).tolist()!r} ({describe_value(value)})"
    return describe_value(value)
