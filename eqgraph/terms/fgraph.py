"""`FunctionGraph`: a graph with declared inputs and outputs, and its clients, as in Aesara."""

from __future__ import annotations

from eqgraph.terms.basic import Apply, Constant, Variable
from eqgraph.terms.graph import GraphCycleError, ancestors, clone_get_equiv, toposort


class MissingInputError(ValueError):
    """An output depends on a variable that is neither an input nor a constant."""


class FunctionGraph:
    """Inputs, outputs, every Apply between them, and who uses each variable.

    ``clients[var]`` lists ``(apply, input_index)`` pairs, and ``("output", i)``
    when ``var`` is the graph's ``i``-th output.  With ``clone=True`` (the
    default) the graph is copied first so the user's graph is never modified.
    """

    def __init__(self, inputs, outputs, clone: bool = True):
        inputs, outputs = list(inputs), list(outputs)
        for var in inputs:
            if isinstance(var, Constant):
                raise TypeError(f"Constant {var} cannot be an input of a FunctionGraph; "
                                "constants are part of the graph already")
            if not isinstance(var, Variable):
                raise TypeError(f"FunctionGraph inputs must be Variables, not {var!r}")
        if len(set(inputs)) != len(inputs):
            raise ValueError("a variable is listed twice among the inputs")
        for var in outputs:
            if not isinstance(var, Variable):
                raise TypeError(f"FunctionGraph outputs must be Variables, not {var!r}")
        #: {original variable or Apply: its copy} when the graph was cloned
        self.equiv: dict = {}
        if clone:
            self.equiv = memo = clone_get_equiv(inputs, outputs, copy_inputs=True, copy_orphans=False)
            inputs, outputs = [memo[v] for v in inputs], [memo[v] for v in outputs]
        self.inputs: list[Variable] = inputs
        self.outputs: list[Variable] = []
        self.clients: dict[Variable, list] = {v: [] for v in inputs}
        self.apply_nodes: set[Apply] = set()
        self.variables: set[Variable] = set(inputs)
        for i, out in enumerate(outputs):
            self._import_var(out)
            self.outputs.append(out)
            self.clients[out].append(("output", i))

    # -- building -----------------------------------------------------------
    def _import_var(self, var: Variable) -> None:
        """Add ``var`` and the nodes it depends on, checking every leaf is known."""
        if var in self.variables:
            return
        for node in toposort([var], self.inputs):
            if node in self.apply_nodes:
                continue
            for i, inp in enumerate(node.inputs):
                if inp.owner is None and inp not in self.variables:
                    if not isinstance(inp, Constant):
                        raise MissingInputError(
                            f"Input {inp} (of type {inp.type}) is needed to compute "
                            f"{node.outputs[0]} but was not provided as an input")
                    self.variables.add(inp)
                    self.clients.setdefault(inp, [])
                self.clients[inp].append((node, i))
            self.apply_nodes.add(node)
            for out in node.outputs:
                self.variables.add(out)
                self.clients.setdefault(out, [])
        if var.owner is None and var not in self.variables:
            if not isinstance(var, Constant):
                raise MissingInputError(f"Output {var} is neither an input nor a constant")
            self.variables.add(var)
            self.clients.setdefault(var, [])

    def _prune(self, var: Variable) -> None:
        """Remove ``var``'s owner (and, in turn, its inputs' owners) once nothing uses them."""
        stack = [var]
        while stack:
            v = stack.pop()
            node = v.owner
            if v.owner is None or node not in self.apply_nodes:
                if v.owner is None and not self.clients.get(v) and v not in self.inputs:
                    self.variables.discard(v)
                    self.clients.pop(v, None)
                continue
            if any(self.clients.get(o) for o in node.outputs):
                continue
            self.apply_nodes.discard(node)
            for o in node.outputs:
                self.variables.discard(o)
                self.clients.pop(o, None)
            for i, inp in enumerate(node.inputs):
                self.clients[inp].remove((node, i))
                stack.append(inp)

    # -- editing ------------------------------------------------------------
    def replace(self, var: Variable, new_var: Variable, reason=None) -> None:
        """Make every client of ``var`` use ``new_var`` instead.

        ``new_var`` passes through ``var.type.filter_variable``: it may narrow the
        type, never change it; an incompatible type raises TypeError.
        """
        if var not in self.variables:
            raise ValueError(f"{var} is not in this FunctionGraph")
        try:
            new_var = var.type.filter_variable(new_var)
        except TypeError as err:
            raise TypeError(f"Cannot replace {var} (type {var.type}) with {new_var} "
                            f"(type {getattr(new_var, 'type', '?')}): {err}"
                            + (f" [reason: {reason}]" if reason else "")) from err
        if new_var is var:
            return
        if var in ancestors([new_var], self.inputs):
            raise GraphCycleError(f"Cannot replace {var} with {new_var}: {new_var} depends on {var}, "
                                  "so the graph would have a cycle")
        self._import_var(new_var)
        for client, i in list(self.clients[var]):
            if client == "output":
                self.outputs[i] = new_var
            else:
                client.inputs[i] = new_var
            self.clients[new_var].append((client, i))
        self.clients[var] = []
        self._prune(var)

    def replace_all(self, pairs, reason=None) -> None:
        for var, new_var in pairs:
            self.replace(var, new_var, reason=reason)

    # -- reading ------------------------------------------------------------
    def toposort(self) -> list[Apply]:
        return toposort(self.outputs, self.inputs)

    def clone(self) -> "FunctionGraph":
        return FunctionGraph(self.inputs, self.outputs, clone=True)

    def check_integrity(self) -> None:
        """Raise if clients, apply_nodes and variables disagree with the graph."""
        nodes = set(self.toposort())
        if nodes != self.apply_nodes:
            raise AssertionError("apply_nodes does not match the graph")
        for node in nodes:
            for i, inp in enumerate(node.inputs):
                if (node, i) not in self.clients.get(inp, []):
                    raise AssertionError(f"missing client ({node}, {i}) of {inp}")
        for i, out in enumerate(self.outputs):
            if ("output", i) not in self.clients.get(out, []):
                raise AssertionError(f"missing output client of {out}")

    def __reduce__(self):
        # inputs and outputs say everything; clients are rebuilt on load (``equiv``, the
        # map from the user's graph, is not kept: it would pickle that graph too)
        return _restore, (self.inputs, self.outputs)

    def __str__(self):
        return f"FunctionGraph({', '.join(map(str, self.outputs))})"

    __repr__ = __str__


def _restore(inputs, outputs) -> FunctionGraph:
    return FunctionGraph(inputs, outputs, clone=False)
