"""The nodes of a graph: `Variable`, `Constant` and `Apply`, as in Aesara.

A graph is bipartite: a Variable points to the Apply that produced it
(``owner``) and its position among that Apply's outputs (``index``); an Apply
points to its ``op``, ``inputs`` and ``outputs``.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
import weakref

from eqgraph.terms.walk import toposort

_ids = itertools.count()


class Variable:
    """A datum at some point of a computation: an input, an intermediate or an output."""

    __slots__ = ("type", "owner", "index", "name", "auto_name", "tag", "__weakref__")

    def __init__(self, type, owner=None, index=None, name=None):
        self.type = type
        self.owner = owner
        self.index = index
        self.name = name
        self.auto_name = f"auto_{next(_ids)}"
        self.tag = {}

    def clone(self, name=None):
        """A new Variable of the same type and name, with no owner."""
        return type(self)(self.type, None, None, self.name if name is None else name)

    #: compiles and runs a graph for ``eval``.  The compiler sits layers above this one, so
    #: it plugs itself in (``eqgraph/evaluate.py``, run by ``import eqgraph``) rather than
    #: being imported here.
    evaluator = None

    def eval(self, inputs_to_values=None, **kwargs):
        """Compile (cached) and evaluate this variable given ``{input: value}``; ``kwargs`` are
        ``eqgraph.function``'s (``mode=...``), as PyTensor's ``eval`` passes them on."""
        return Variable.evaluator(self, inputs_to_values or {}, **kwargs)

    def __str__(self):
        if self.name is not None:
            return self.name
        if self.owner is not None:
            op = self.owner.op
            if len(self.owner.outputs) == 1:
                return f"{op}.0"
            return f"{op}.{self.index}"
        return f"<{self.type}>"

    def __repr__(self):
        return str(self)

    # Variables are graph nodes: equality is identity, which keeps them hashable.
    __hash__ = object.__hash__

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other


class Constant(Variable):
    """A Variable whose value is known when the graph is built.

    ``data`` is set once (it is filtered through the type and, for arrays, made
    read-only); constants compare by value through :meth:`signature`.
    """

    __slots__ = ("_data", "_signature")

    def __init__(self, type, data, name=None):
        super().__init__(type, None, None, name)
        self._data = None
        self._signature = None
        self.data = data

    @property
    def data(self):
        return self._data

    @data.setter
    def data(self, value):
        if self._data is not None:
            raise ValueError(f"Constant {self} already has data; it can be set only once")
        value = self.type.filter(value)
        if hasattr(value, "setflags"):
            value.setflags(write=False)
        self._data = value

    # ``owner`` is a slot on Variable; this read-only property shadows it.
    @property
    def owner(self):
        return None

    @owner.setter
    def owner(self, value):
        if value is not None:
            raise ValueError("a Constant cannot have an owner")

    def signature(self):
        """A hashable key equal for constants of equal type and value."""
        if self._signature is None:
            data = self._data
            if hasattr(data, "tobytes") and hasattr(data, "dtype"):
                digest = hashlib.sha1(data.tobytes()).hexdigest()
                self._signature = (self.type, str(data.dtype), tuple(data.shape), digest)
            else:
                self._signature = (self.type, data)
        return self._signature

    def equals(self, other) -> bool:
        return isinstance(other, Constant) and self.signature() == other.signature()

    def clone(self, name=None):
        return type(self)(self.type, self._data, self.name if name is None else name)

    def __setstate__(self, state):
        _, slots = state
        for name, value in slots.items():
            setattr(self, name, value)
        if hasattr(self._data, "setflags"):  # an unpickled array is writeable again
            self._data.setflags(write=False)

    def __str__(self):
        if self.name is not None:
            return self.name
        return f"{type(self).__name__}{{{_short(self._data)}}}"


def _short(data) -> str:
    shape = getattr(data, "shape", None)
    if shape is not None and len(shape) > 0:
        flat = data.reshape(-1)
        if flat.size and bool(((flat == flat[0]) | ((flat != flat) & (flat[0] != flat[0]))).all()):  # NaN too
            return f"{tuple(shape)} of {flat[0]}"
        return f"{tuple(shape)} array"
    if shape == ():
        return str(data[()] if hasattr(data, "__getitem__") else data)
    return str(data)


class Apply:
    """The application of an ``op`` to ``inputs``, producing ``outputs``."""

    __slots__ = ("op", "inputs", "outputs", "tag", "__weakref__")

    def __init__(self, op, inputs, outputs):
        self.op = op
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self.tag = {}
        for value in self.inputs:
            if not isinstance(value, Variable):
                raise TypeError(f"The inputs of an Apply must be Variables, not {value!r}")
        for index, output in enumerate(self.outputs):
            if not isinstance(output, Variable):
                raise TypeError(f"The outputs of an Apply must be Variables, not {output!r}")
            if output.owner is None:
                output.owner, output.index = self, index
            elif output.owner is not self or output.index != index:
                raise ValueError(f"output {output} already belongs to another Apply")

    def default_output(self):
        """The output that ``op(...)`` returns: ``op.default_output`` or the only output."""
        index = getattr(self.op, "default_output", None)
        if index is not None:
            return self.outputs[index]
        if len(self.outputs) == 1:
            return self.outputs[0]
        raise ValueError(f"{self.op}.default_output is None and the node has several outputs")

    @property
    def out(self):
        return self.default_output()

    @property
    def nin(self):
        return len(self.inputs)

    @property
    def nout(self):
        return len(self.outputs)

    def clone(self):
        """A copy with the same op and inputs and fresh outputs."""
        return Apply(self.op, self.inputs, [o.clone() for o in self.outputs])

    def clone_with_new_inputs(self, inputs, strict: bool = True):
        """A copy applied to ``inputs``.

        With ``strict``, each new input is filtered through the old input's type
        (so types may narrow but never change); otherwise the node is rebuilt by
        ``op.make_node`` and output types may change.
        """
        inputs = list(inputs)
        if len(inputs) != len(self.inputs):
            raise ValueError(f"{self.op} takes {len(self.inputs)} inputs, got {len(inputs)}")
        if strict:
            inputs = [old.type.filter_variable(new) for old, new in zip(self.inputs, inputs)]
            if all(new.type == old.type for old, new in zip(self.inputs, inputs)):
                node = self.clone()
                node.inputs = inputs
                return node
        return self.op.make_node(*inputs)

    def __str__(self):
        return f"{self.op}({', '.join(map(str, self.inputs))})"

    __repr__ = __str__

    def __copy__(self):
        """A shallow copy, as Python's default would make (``__reduce_ex__`` is for pickling)."""
        new = object.__new__(type(self))
        for name in ("op", "inputs", "outputs", "tag"):
            setattr(new, name, getattr(self, name))
        return new

    def __reduce_ex__(self, protocol):
        """Pickle a graph in topological order, so pickling never recurses along a chain.

        Pickle saves an object's inputs before the object, one Python call deeper each
        time: a chain of 100 nodes already hit the recursion limit.  The first node
        pickled instead hands pickle a plan: its ancestors in topological order.  Each
        of those is then saved plainly (its ``__slots__``), finding its inputs already
        saved.
        """
        plan = _pickle_plan.__dict__.get("current", _no_plan)()
        if plan is not None and self in plan.members:
            return object.__reduce_ex__(self, protocol)
        plan = _Plan(toposort(self.outputs))  # ends with self
        _pickle_plan.current = weakref.ref(plan)
        return _last_of, (plan,)


class _Plan(list):
    """The nodes one pickling saves in order.  Only the pickler (its memo) holds it, so it
    lives exactly as long as that pickling, even one that fails part-way; its nodes count
    as planned only while it lives."""

    def __init__(self, nodes):
        super().__init__(nodes)
        self.members = set(nodes)

    def __reduce__(self):
        return list, (), None, iter(self)  # saved as a plain list of the nodes


#: per thread: a weak reference to the plan being pickled
_pickle_plan = threading.local()


def _no_plan():
    return None


def _last_of(plan):
    return plan[-1]
