"""Run-time failures that name the node (like Aesara's ``raise_with_op``).

When a thunk raises, the error a user sees says which op failed, on which inputs
(named as in their graph), with which shapes and dtypes, and a short ``dprint`` of
the node; the original exception is chained (``raise ... from err``).

The raised error is an instance of a subclass of *both* :class:`NodeError` and the
original exception's class, made once per class: ``except ValueError`` still
catches a broadcast mismatch, ``except NodeError`` catches any run-time failure,
and ``err.node`` is the Apply node.  A subclass is used rather than re-raising the
original class with a longer message because many exception classes take other
constructor arguments (``OSError``, ``UnicodeDecodeError``, user classes), and
their ``__str__`` would not show the added text.  Where the class cannot be
subclassed, the error is a plain :class:`NodeError` (still chained).
"""

from __future__ import annotations

from eqgraph.terms.printing import debugprint
from eqgraph.terms.type import describe_value


class NodeError(Exception):
    """An op failed while a compiled function ran; ``node`` is the Apply node that failed."""

    def __init__(self, message, node=None):
        super().__init__(message)
        self.node = node

    def __str__(self):  # the message, whatever the original class's __str__ would print
        return str(self.args[0]) if self.args else ""

    def __reduce__(self):  # the subclass is made again on loading (the node is not kept)
        return _rebuild, (type(self).original, str(self))


NodeError.original = NodeError


_SUBCLASSES: dict[type, type] = {}


def node_error_class(cls: type) -> type:
    """The subclass of ``NodeError`` and ``cls`` (cached); NodeError itself if there is none."""
    if issubclass(cls, NodeError):
        return cls
    if cls not in _SUBCLASSES:
        try:  # named and placed like the original, so tracebacks read "ValueError: ..."
            _SUBCLASSES[cls] = type(cls.__name__, (NodeError, cls),
                                    {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
                                     "__init__": NodeError.__init__, "__str__": NodeError.__str__,
                                     "original": cls})
        except TypeError:  # a class that cannot be subclassed, or whose memory layout conflicts
            _SUBCLASSES[cls] = NodeError
    return _SUBCLASSES[cls]


def _rebuild(original: type, message: str) -> NodeError:
    return node_error_class(original)(message)


def describe_failure(node, input_values, err: BaseException) -> str:
    """What failed, where, on what: the message of the raised NodeError."""
    lines = [f"{node.op} failed: {type(err).__name__}: {err}",
             f"Apply node that caused the error: {node}",
             "Inputs:"]
    for i, (var, value) in enumerate(zip(node.inputs, input_values)):
        lines.append(f"  #{i} {var} <{var.type}>: {describe_value(value)}")
    graph = debugprint(node, file="str", print_type=True, depth=3).rstrip("\n")
    lines.append("Node (dprint, depth 3):")
    lines.extend("  " + line for line in graph.splitlines())
    return "\n".join(lines)


def raise_with_node(node, input_values, err: Exception):
    """Raise ``err`` again as an error naming ``node``, chained to ``err``."""
    message = describe_failure(node, input_values, err)
    raise node_error_class(type(err))(message, node) from err
