"""PyTensor's ``Elemwise`` of a ``ScalarLoop`` (the loops its gradients of ``betainc``,
``gammainc`` and ``hyp2f1`` are written as) as one ``eqgraph.scan`` over whole arrays.

PyTensor runs one scalar loop per element: each element's states are updated ``n_steps`` times
(its own ``n_steps``: the count is an elementwise input too), or, in a while loop, until the
element's condition holds after an update. The scan runs every element in step and masks the
updates of the elements whose loop has ended, so each element gets exactly the updates its own
loop would make; a while loop's scan stops once no element is still running.

A while loop whose count is 0 or less reports that it stopped (``done`` true), as the op's
documentation and PyTensor's C code say (its Python and Numba implementations report false).
A for loop refuses a negative count, as every PyTensor implementation does.
"""

from __future__ import annotations

import numpy as np

import eqgraph.tensor as et
from eqgraph.loops import scan, until


def scalar_loop(loop, xs, apply_scalar) -> list:
    """The outputs of ``Elemwise(loop)`` on eqgraph inputs ``xs`` (the step counts, the initial
    states, the constants): the final states, then, for a while loop, whether it stopped by its
    condition (true also where the count was not positive, as PyTensor's ``done``).
    ``apply_scalar(op, dtype, args)`` converts one scalar node of the inner graph."""
    inner = loop.fgraph
    # each input in its inner input's dtype (PyTensor's graph may hold a cast-free int constant)
    xs = [xs[0], *[x if x.dtype == i.type.dtype else et.cast(x, i.type.dtype) for x, i in zip(xs[1:], inner.inputs)]]
    shape = et.broadcast_shape(*xs)
    counts, *values = [et.broadcast_to(x, shape) for x in xs]
    if not loop.is_while:
        counts = et.CheckAndRaise(ValueError, f"{loop}: a negative number of steps (a loop without a "
                                              "termination condition)")(counts, et.all(et.ge(counts, 0)))
    n_states = len(inner.outputs) - loop.is_while
    initial, constants = values[:n_states], values[n_states:]
    held = et.zeros_like(counts, dtype="bool")   # per element: whether its condition has held

    def step(i, *args):
        states, (held, counts, *constants) = args[:n_states], args[n_states:]
        running = et.and_(et.invert(held), et.lt(i, counts))
        new = inline_scalar_graph(inner, [*states, *constants], apply_scalar)
        states = [et.switch(running, n, s) for n, s in zip(new[:n_states], states)]
        if not loop.is_while:
            return [*states, held]
        held = et.or_(held, et.and_(running, new[-1]))
        still_running = et.and_(et.invert(held), et.lt(i + 1, counts))
        return [*states, held], until(et.invert(et.any(still_running)))

    steps = _largest(counts)
    outputs = scan(step, sequences=[et.arange(steps, dtype="int64")], outputs_info=[*initial, held],
                   non_sequences=[counts, *constants], n_steps=steps, return_list=True, return_updates=False)
    finals = [_last(out, first) for out, first in zip(outputs, [*initial, held])]
    if not loop.is_while:
        return finals[:n_states]
    # PyTensor's done: the condition held, or the loop never started (a count of 0 or less)
    return [*finals[:n_states], et.or_(finals[n_states], et.le(counts, 0))]


def inline_scalar_graph(inner, args, apply_scalar) -> list:
    """The outputs of the scalar graph ``inner`` (a ``Composite``'s or a ``ScalarLoop``'s) on whole
    arrays ``args``, node by node."""
    memo = dict(zip(inner.inputs, args))
    for node in inner.toposort():
        ins = [memo[i] if i in memo else _constant(i) for i in node.inputs]
        outs = apply_scalar(node.op, node.outputs[0].type.dtype, ins)
        memo.update(zip(node.outputs, outs if isinstance(outs, (list, tuple)) else [outs]))
    return [memo[o] if o in memo else _constant(o) for o in inner.outputs]


def _constant(c):
    return et.constant(np.asarray(c.data, dtype=c.type.dtype))


def _largest(counts):
    """The largest count, 0 where there are none."""
    return et.max(et.concatenate([et.flatten(counts), et.zeros((1,), dtype=counts.dtype)]))


def _last(steps, first):
    """The value after the last step: ``first`` where no step ran."""
    return et.concatenate([et.shape_padleft(first), steps], axis=0)[-1]
