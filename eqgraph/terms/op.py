"""`Op`: the definition of a computation (Aesara's ``Op`` contract).

An Op builds typed Apply nodes (``make_node``) and computes their outputs
(``perform``).  ``__props__`` names the attributes that define the
computation; from it ``__eq__``, ``__hash__`` and ``__str__`` are generated, and
the e-graph encoder reads the same tuple to encode an op as a term.
"""

from __future__ import annotations


class Op:
    """Base class of all ops.  Subclasses define ``make_node`` and ``perform``."""

    #: index of the output that ``__call__`` returns; None: the only one, or the list of all
    default_output: int | None = None
    #: {output index: [input indices]} outputs that are views of inputs
    view_map: dict = {}
    #: {output index: [input indices]} inputs that the op overwrites
    destroy_map: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__props__" not in cls.__dict__:
            return
        props = cls.__dict__["__props__"]
        if not isinstance(props, tuple):
            raise TypeError(f"{cls.__name__}.__props__ must be a tuple, not {props!r}")
        if "__eq__" not in cls.__dict__:
            cls.__eq__ = _props_eq
        if "__hash__" not in cls.__dict__:
            cls.__hash__ = _props_hash
        if "__str__" not in cls.__dict__:
            cls.__str__ = _props_str

    # -- building ---------------------------------------------------------
    def make_node(self, *inputs):
        raise NotImplementedError(f"{type(self).__name__} does not define make_node")

    def __call__(self, *inputs, name=None, return_list=False, **kwargs):
        node = self.make_node(*inputs, **kwargs)
        if name is not None:
            if self.default_output is not None:
                node.outputs[self.default_output].name = name
            elif len(node.outputs) == 1:
                node.outputs[0].name = name
            else:
                for i, out in enumerate(node.outputs):
                    out.name = f"{name}_{i}"
        if return_list:
            return list(node.outputs)
        if self.default_output is not None:
            return node.outputs[self.default_output]
        if len(node.outputs) == 1:
            return node.outputs[0]
        return list(node.outputs)

    def _props(self):
        return tuple(getattr(self, p) for p in getattr(type(self), "__props__", ()))

    def _props_dict(self):
        return {p: getattr(self, p) for p in getattr(type(self), "__props__", ())}

    # -- running ----------------------------------------------------------
    def perform(self, node, inputs, output_storage):
        raise NotImplementedError(f"{self} does not define perform")

    def debug_perform(self, node, inputs, output_storage):
        """What debugging modes run instead of ``perform``; the same by default."""
        return self.perform(node, inputs, output_storage)

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
        """A zero-argument callable running ``perform`` on ``storage_map`` cells.

        It marks the node's outputs as computed in ``compute_map``.  The linker
        calls thunks in topological order; ``no_recycling`` lists outputs whose
        cells must be emptied before each run (nothing is reused for them).
        """
        perform = self.debug_perform if impl == "debug" else self.perform
        input_cells = [storage_map[v] for v in node.inputs]
        output_cells = [storage_map[v] for v in node.outputs]
        computed = [compute_map[v] for v in node.outputs]
        recycle = set(no_recycling or ())
        fresh = [storage_map[v] for v in node.outputs if v in recycle]

        def thunk():
            for cell in fresh:
                cell[0] = None
            perform(node, [cell[0] for cell in input_cells], output_cells)
            for flag in computed:
                flag[0] = 1

        thunk.inputs = input_cells
        thunk.outputs = output_cells
        thunk.perform = perform
        thunk.lazy = False
        return thunk

    def do_constant_folding(self, fgraph, node) -> bool:
        return True

    # -- static information -------------------------------------------------
    def infer_shape(self, fgraph, node, input_shapes):
        """Symbolic shapes of the outputs from the inputs' shapes (Aesara's signature)."""
        raise NotImplementedError(f"{self} does not define infer_shape")

    def flops(self, inputs, outputs):
        """Floating-point operations for these input/output shapes, or None if unknown."""
        return None

    # -- differentiation ------------------------------------------------------
    def connection_pattern(self, node):
        """``[input][output]`` booleans: does the input's value affect the output?"""
        return [[True] * len(node.outputs) for _ in node.inputs]

    def grad(self, inputs, output_grads):
        raise NotImplementedError(f"{self} does not define grad")

    def L_op(self, inputs, outputs, output_grads):
        return self.grad(inputs, output_grads)

    def R_op(self, inputs, eval_points):
        raise NotImplementedError(f"{self} does not define R_op")

    def __str__(self):
        return type(self).__name__

    def __repr__(self):
        return str(self)


def _props_eq(self, other):
    return type(self) is type(other) and self._props() == other._props()


def _props_hash(self):
    return hash((type(self), self._props()))


def _props_str(self):
    props = self._props_dict()
    if not props:
        return type(self).__name__
    if len(props) == 1:
        return f"{type(self).__name__}{{{next(iter(props.values()))}}}"
    inner = ", ".join(f"{k}={v}" for k, v in props.items())
    return f"{type(self).__name__}{{{inner}}}"
