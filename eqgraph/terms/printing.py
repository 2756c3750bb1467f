"""`debugprint` / `dprint`: the indented text view of a graph (seed 003's style).

    Sum{axis=None} [id A] ''   1
     |Elemwise{add} [id B] ''   0
       |TensorConstant{(1,) of 1.0} [id C]
       |x [id D]

Each Apply or ownerless variable gets an ``[id X]`` label; a node printed once
is printed again only as its label.  For compiled functions and
FunctionGraphs, the trailing number is the node's position in the
topological order.
"""

from __future__ import annotations

import io
import string
import sys

from eqgraph.terms.basic import Variable
from eqgraph.terms.fgraph import FunctionGraph
from eqgraph.terms.graph import toposort


def _label(n: int) -> str:
    letters = string.ascii_uppercase
    out = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        out = letters[r] + out
    return out


def debugprint(obj, file=None, print_type: bool = False, depth: int = -1, ids: str = "CHAR",
               stop_on_name: bool = False):
    """Print the graph of ``obj`` (Variable(s), Apply, FunctionGraph or compiled Function).

    ``file="str"`` returns the text instead of printing it.
    """
    outputs, order = _roots(obj)
    if order is None:
        toposort(outputs)  # the walk below terminates on a cycle but would print it as a tree; refuse it
    labels: dict = {}
    lines: list[str] = []
    topo_index = {node: i for i, node in enumerate(order)} if order is not None else {}

    def label_of(key) -> str:
        if key not in labels:
            labels[key] = _label(len(labels)) if ids == "CHAR" else str(id(key))
        return labels[key]

    for out in outputs:
        # Explicit stack of (variable, depth): no recursion on deep graphs.
        stack = [(out, 0)]
        while stack:
            var, level = stack.pop()
            prefix = _prefix(level)
            node = var.owner
            key = node if node is not None else var
            seen = key in labels
            text = f"{prefix}{_describe(var)} [id {label_of(key)}]"
            if print_type:
                text += f" <{var.type}>"
            if node is not None:
                text += f" '{var.name or ''}'"
                if node in topo_index:
                    text += f"   {topo_index[node]}"
            lines.append(text)
            if node is None or seen or level == depth or (stop_on_name and var.name and level):
                continue
            for inp in reversed(node.inputs):
                stack.append((inp, level + 1))
    text = "\n".join(lines) + "\n"
    if file == "str":
        return text
    (file or sys.stdout).write(text)
    return file


dprint = debugprint


MAX_INDENT = 40  # deeper levels are numbered instead of indented, so output stays linear in size


def _prefix(level: int) -> str:
    if level == 0:
        return ""
    if level <= MAX_INDENT:
        return " " * (2 * level - 1) + "|"
    return " " * (2 * MAX_INDENT - 1) + f"[depth {level}] |"


def _describe(var: Variable) -> str:
    node = var.owner
    if node is None:
        return str(var)
    head = str(node.op)
    if len(node.outputs) > 1:
        head += f".{var.index}"
    return head


def _roots(obj):
    """The output variables to print and, for compiled graphs, the node order."""
    if isinstance(obj, Variable):
        return [obj], None
    fgraph = getattr(obj, "fgraph", None) or getattr(getattr(obj, "maker", None), "fgraph", None)
    if isinstance(obj, FunctionGraph):
        fgraph = obj
    if fgraph is not None:
        return list(fgraph.outputs), fgraph.toposort()
    if hasattr(obj, "outputs") and hasattr(obj, "op"):  # an Apply
        return list(obj.outputs), None
    if isinstance(obj, (list, tuple)):
        return list(obj), None
    raise TypeError(f"debugprint cannot print {type(obj).__name__}")


def pformat(obj, **kwargs) -> str:
    buf = io.StringIO()
    debugprint(obj, file=buf, **kwargs)
    return buf.getvalue()
