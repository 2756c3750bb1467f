"""``ifelse(cond, then, else)``: a lazy conditional, only the taken branch runs (PyTensor's ifelse).

    y = ifelse(et.lt(a, b), et.mean(x), et.exp(x).sum())          # one output
    u, v = ifelse(c, [a, b], [x, y])                               # several: pairs of branches

``switch`` computes both branches and chooses per element; ``ifelse`` takes a scalar
condition and computes only what the chosen branch needs. It does so through Aesara's
lazy-thunk protocol: the thunk of an ``IfElse`` node returns the input indices it still
needs (first the condition, then the chosen branch) and ``[]`` once its outputs are
computed; the linker (``eqgraph/exec/lazy.py``) runs the nodes it asks for, and nothing else.

In the e-graph an ``IfElse`` node is one term, ``(IfElse_<n> cond then... else...)``, like any
op with several inputs: rewrites inside each branch happen as everywhere else, and no rule
moves work out of a branch (none matches through it), so a branch's own work stays behind
the condition. A subterm that a branch shares with work done unconditionally is computed
once, unconditionally: that costs nothing, it was computed anyway. Extraction prices both
branches (it cannot know which will be taken), so it never trades unconditional work for
branch work it believes free.

The outputs are copies of the chosen branch's values, never views: whichever branch ran,
an output never shares memory with an input (a view of one of two inputs could not be
declared with ``view_map``).
"""

from __future__ import annotations

from eqgraph.tensor.alloc import zeros_like
from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.tensor.shape import make_vector
from eqgraph.tensor.type import FLOAT_DTYPES, TensorType
from eqgraph.terms.basic import Apply, Variable
from eqgraph.terms.op import Op
from eqgraph.xp import copy_array


class IfElse(Op):
    """``IfElse(n_outs)(cond, *then, *else)``: the ``n_outs`` then-values if ``cond`` else the others."""

    __props__ = ("n_outs",)
    #: its thunks are lazy (Aesara's protocol): the linker runs such graphs with ``exec/lazy.py``
    lazy = True

    def __init__(self, n_outs: int):
        self.n_outs = int(n_outs)

    def make_node(self, cond, *branches):
        n = self.n_outs
        if len(branches) != 2 * n:
            raise ValueError(f"{self} takes a condition and {n} then-values and {n} else-values, "
                             f"got {len(branches)} values")
        cond = as_tensor_variable(cond)
        if cond.ndim != 0:
            raise TypeError(f"ifelse: the condition must be a scalar, got {cond} of type {cond.type} "
                            "(use et.switch to choose per element)")
        thens = [as_tensor_variable(v) for v in branches[:n]]
        elses = [_like(as_tensor_variable(e), t, i) for i, (t, e) in enumerate(zip(thens, branches[n:]))]
        outputs = [_common_type(t, e)() for t, e in zip(thens, elses)]
        return Apply(self, [cond, *thens, *elses], outputs)

    # -- running ----------------------------------------------------------------------------
    def perform(self, node, inputs, output_storage):
        """The eager form (both branches already computed), for callers outside the lazy linker."""
        n = self.n_outs
        chosen = inputs[1:1 + n] if inputs[0] else inputs[1 + n:]
        for cell, value in zip(output_storage, chosen):
            cell[0] = copy_array(value)

    def make_thunk(self, node, storage_map, compute_map, no_recycling, impl=None):
        n = self.n_outs
        cond_cell, cond_done = storage_map[node.inputs[0]], compute_map[node.inputs[0]]
        branch = {True: list(range(1, 1 + n)), False: list(range(1 + n, 1 + 2 * n))}
        in_cells = [storage_map[v] for v in node.inputs]
        in_done = [compute_map[v] for v in node.inputs]
        out_cells = [storage_map[v] for v in node.outputs]
        out_done = [compute_map[v] for v in node.outputs]

        def thunk():
            if not cond_done[0]:
                return [0]
            chosen = branch[bool(cond_cell[0])]
            needed = [j for j in chosen if not in_done[j][0]]
            if needed:
                return needed
            for cell, j in zip(out_cells, chosen):
                cell[0] = copy_array(in_cells[j][0])
            for flag in out_done:
                flag[0] = 1
            return []

        thunk.inputs, thunk.outputs, thunk.lazy = in_cells, out_cells, True
        return thunk

    # -- differentiation ----------------------------------------------------------------------
    def connection_pattern(self, node):
        n = self.n_outs
        cond = [[True] * n]  # connected, with a zero gradient (as in PyTensor): see L_op
        branches = [[i == k for k in range(n)] for i in range(n)]
        return cond + branches + branches

    def L_op(self, inputs, outputs, output_grads):
        """Each branch gets the output's gradient where it was taken and zeros where not; the
        condition gets zeros (the choice is piecewise constant in it)."""
        n = self.n_outs
        cond, thens, elses = inputs[0], inputs[1:1 + n], inputs[1 + n:]
        grads = [g if _is_tensor(g) else zeros_like(o) for g, o in zip(output_grads, outputs)]
        then_grads = ifelse(cond, grads, [zeros_like(t, dtype=g.dtype) for t, g in zip(thens, grads)])
        else_grads = ifelse(cond, [zeros_like(e, dtype=g.dtype) for e, g in zip(elses, grads)], grads)
        cond_grad = zeros_like(cond, dtype=cond.dtype if cond.dtype in FLOAT_DTYPES else "float64")
        return [cond_grad, *_listed(then_grads), *_listed(else_grads)]

    def R_op(self, inputs, eval_points):
        n = self.n_outs
        if any(p is None for p in eval_points[1:]):
            return [None] * n
        return _listed(ifelse(inputs[0], list(eval_points[1:1 + n]), list(eval_points[1 + n:])))

    def infer_shape(self, fgraph, node, input_shapes):
        n = self.n_outs
        shapes = []
        for then_shape, else_shape in zip(input_shapes[1:1 + n], input_shapes[1 + n:]):
            if not then_shape:
                shapes.append(())
                continue
            chosen = ifelse(node.inputs[0], make_vector(*then_shape), make_vector(*else_shape))
            shapes.append(tuple(chosen[i] for i in range(len(then_shape))))
        return shapes


def ifelse(condition, then_branch, else_branch, name=None):
    """``then_branch`` if the scalar ``condition`` is true, else ``else_branch``, computing
    only the branch taken. Each branch is a variable or a list of them (then a list comes
    back); the pairs must have the same dtype and number of dimensions (a plain number or array
    takes the dtype of the variable it pairs with)."""
    single = not isinstance(then_branch, (list, tuple))
    thens = [then_branch] if single else list(then_branch)
    elses = [else_branch] if not isinstance(else_branch, (list, tuple)) else list(else_branch)
    if len(thens) != len(elses):
        raise ValueError(f"ifelse: the then branch has {len(thens)} values and the else branch {len(elses)}; "
                         "they must pair up")
    if not thens:
        raise ValueError("ifelse needs at least one value per branch")
    for i, (then, other) in enumerate(zip(thens, elses)):  # a plain value takes its partner's dtype
        if isinstance(then, Variable) and not isinstance(other, Variable):
            elses[i] = as_tensor_variable(other, dtype=then.type.dtype)
        elif isinstance(other, Variable) and not isinstance(then, Variable):
            thens[i] = as_tensor_variable(then, dtype=other.type.dtype)
    outputs = IfElse(len(thens))(condition, *thens, *elses, return_list=True)
    if name is not None:
        for i, out in enumerate(outputs):
            out.name = name if single else f"{name}_{i}"
    return outputs[0] if single else outputs


def _like(value: Variable, then: Variable, i: int) -> Variable:
    """The else-value, checked against its then-value: same dtype and number of dimensions."""
    if value.type.dtype != then.type.dtype or value.ndim != then.ndim:
        raise TypeError(f"ifelse: output {i}'s branches differ in type: then {then} is {then.type}, "
                        f"else {value} is {value.type}; cast one (et.cast) or reshape it to match")
    return value


def _common_type(a: Variable, b: Variable) -> TensorType:
    """The output type: each axis static where both branches agree on its size."""
    shape = [s if s == o else None for s, o in zip(a.type.shape, b.type.shape)]
    return TensorType(a.type.dtype, shape)


def _is_tensor(var) -> bool:
    return isinstance(var, Variable) and isinstance(var.type, TensorType)


def _listed(outputs) -> list:
    return list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
