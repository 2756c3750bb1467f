"""`debugprint` / `dprint`: the indented text view of a graph (Aesara's style).

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


# -- pprint: the one-line math view -------------------------------------------------------------
#: elementwise ops (by their ``name``) printed between their operands, fully parenthesized
INFIX = {"add": "+", "sub": "-", "mul": "*", "true_div": "/", "int_div": "//", "mod": "%", "pow": "**",
         "eq": "==", "neq": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "and_": "&", "or_": "|",
         "xor": "^"}
PREFIX = {"neg": "-", "invert": "~"}
#: ops (by class name) printed between their operands
INFIX_CLASSES = {"MatMul": "@"}
MAX_TERM = 2000  # characters of one subterm: a deep graph that reuses terms would otherwise grow exponentially


def pprint(obj) -> str:
    """A one-line math view of a graph: ``((x * 2.0) + exp(y))``.

    ``obj`` is a Variable, a list of them, a FunctionGraph or a compiled function (several
    outputs are separated by commas). Arithmetic and comparisons are written between their
    operands, in parentheses; other ops as calls with their props (``sum(x, axis=(0,))``);
    constants by value and variables by name (``<TensorType(float64, (?,))>`` if unnamed).
    A subterm longer than ``MAX_TERM`` characters is cut with ``...``.
    """
    outputs, _ = _roots(obj)
    text: dict = {}
    for node in toposort(outputs):
        args = [_term(v, text) for v in node.inputs]
        whole = _node_text(node, args)
        for out in node.outputs:
            part = whole if len(node.outputs) == 1 else f"{whole}[{out.index}]"
            text[out] = part if len(part) <= MAX_TERM else part[:MAX_TERM] + "..."
    return ", ".join(_term(v, text) for v in outputs)


def _term(var, text) -> str:
    if var in text:
        return text[var]
    if var.name is not None or var.owner is not None:
        return str(var)
    data = getattr(var, "data", None)
    if data is not None and hasattr(data, "tolist") and getattr(data, "size", 0) <= 6:
        return str(data.reshape(-1)[0].item() if data.size == 1 else data.tolist())  # 2.0, [1, 2, 3]
    if data is not None:
        return str(var)
    return f"<{var.type}>"


def _node_text(node, args) -> str:
    op = node.op
    if hasattr(op, "pprint_term"):  # an op with a notation of its own (indexing: x[0:2, i])
        return op.pprint_term(node, args)
    name = getattr(op, "name", None)
    props = {p: getattr(op, p) for p in getattr(type(op), "__props__", ()) if p != "name"}
    if name in INFIX and len(args) == 2:
        return f"({args[0]} {INFIX[name]} {args[1]})"
    if name in PREFIX and len(args) == 1:
        return f"{PREFIX[name]}{args[0]}"
    symbol = INFIX_CLASSES.get(type(op).__name__)
    if symbol and len(args) == 2:
        return f"({args[0]} {symbol} {args[1]})"
    if isinstance(name, str):  # elementwise ops and reductions: numpy's names
        keywords = [f"{k}={v}" for k, v in props.items() if not (k == "keepdims" and v is False) and not (k == "acc_dtype" and not v)]
        return f"{name}({', '.join(args + keywords)})"
    order = props.get("new_order")
    if order is not None:  # a DimShuffle
        kept = [i for i in order if i != "x"]
        if kept == list(range(len(kept))):
            return args[0]  # only broadcastable axes added: broadcasting is implicit in math
        if kept == list(range(len(kept)))[::-1] and len(kept) == len(order):
            return f"{args[0]}.T"
        return f"dimshuffle({args[0]}, {tuple(order)})"
    if "idx_list" in props and len(args) == 1 and str(op).startswith(type(op).__name__ + "{"):
        return f"{args[0]}[{str(op)[len(type(op).__name__) + 1:-1]}]"  # constant indices: x[1:, 0]
    return f"{op}({', '.join(args)})"
