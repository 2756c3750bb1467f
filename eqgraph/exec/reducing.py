"""`ReducingComposite`: a fused elementwise node that also sums (or averages) some of its results.

Without it, ``sum(f(x))`` writes ``f(x)`` to a temporary array and reads it back to add it up.
The fusion pass (``fusion.fuse_reductions``) folds each float64 sum or mean of a fused node's
result into the node: the Numba kernel (``numba/fused.py``) adds each value up as it computes it,
and writes only the results that something else reads.

It is a ``Composite`` (the same scalar graph, ``steps`` and ``outs``) whose output ``k`` is
``reductions[k]`` of the scalar graph's value ``outs[k]`` where that is a ``Reduce`` op, and the
value itself where it is None; so its ``perform``, shapes, gradient (through ``expand``) and
``dprint`` are the Composite's followed by the reductions', and the generated program calls it
as it calls a Composite.  On NumPy (and until the node is hot, or where Numba is missing or
cannot take it) it runs the Composite's NumPy kernel and then the reductions, the calls the
unfused graph made, with the same values; on CuPy and Dask, the Composite's kernel there, then
the reductions' ``perform``.
"""

from __future__ import annotations

import math

import numpy as np

from eqgraph.exec.composite import Composite
from eqgraph.exec.numpy.kernels import numpy_kernel
from eqgraph.exec.numba.fused import kernel_source, reducing_kernel, supported
from eqgraph.exec.numba.kernels import tier
from eqgraph.exec.numba.reductions import KERNELS, SMALL, reduction_kind
from eqgraph.tensor.math import Reduce
from eqgraph.terms.basic import Apply


class ReducingComposite(Composite):
    """A ``Composite`` whose output ``k`` is ``reductions[k]`` (a sum or mean ``Reduce``, all of
    one axis set) of the scalar graph's value ``outs[k]``, or that value where it is None."""

    __props__ = ("nin", "steps", "outs", "reductions")

    def __init__(self, nin: int, steps, outs, reductions):
        super().__init__(nin, steps, outs)
        self.reductions = tuple(reductions)
        if len(self.reductions) != len(self.outs):
            raise ValueError(f"ReducingComposite: {len(self.reductions)} reductions for {len(self.outs)} outputs")
        axes = {r.axis for r in self.reductions if r is not None}
        for r in self.reductions:
            if r is not None and (not isinstance(r, Reduce) or r.name not in ("sum", "mean")):
                raise TypeError(f"ReducingComposite reduces by sums and means (Reduce ops), not {r!r}")
        if len(axes) != 1:
            raise ValueError(f"ReducingComposite needs one axis set for all its reductions, got {sorted(axes)}")
        (self.axis,) = axes

    def elementwise(self) -> Composite:
        """The Composite computing the values that are written or reduced (made once)."""
        if "_elementwise" not in self.__dict__:
            self._elementwise = Composite(self.nin, self.steps, tuple(dict.fromkeys(self.outs)))
        return self._elementwise

    def sources(self) -> list[int]:
        """For each output, the output of ``elementwise()`` it is (or reduces): a value both
        written and reduced is computed once."""
        return [self.elementwise().outs.index(o) for o in self.outs]

    def __str__(self):
        def shown(k, text):
            r = self.reductions[k]
            return text if r is None else f"{str(r).replace('{', '[').replace('}', ']')}({text})"
        return f"Composite{{{self.expression(shown=shown)}}}"

    # -- building ------------------------------------------------------------------
    def make_node(self, *inputs):
        values = super().make_node(*inputs)
        outputs = [var if r is None else r.make_node(var).outputs[0]
                   for var, r in zip(values.outputs, self.reductions)]
        return Apply(self, list(values.inputs), [var.type() for var in outputs])

    def expand(self, inputs) -> list:
        return [v if r is None else r(v) for v, r in zip(super().expand(inputs), self.reductions)]

    # -- running -------------------------------------------------------------------
    def perform(self, node, inputs, output_storage):
        """The reference: the Composite's ``perform``, then each reduction's."""
        elementwise = self.elementwise()
        values = elementwise.make_node(*node.inputs)
        cells = [[None] for _ in elementwise.outs]
        elementwise.perform(values, inputs, cells)
        for k, (r, j) in enumerate(zip(self.reductions, self.sources())):
            if r is None:
                output_storage[k][0] = cells[j][0]
            else:
                r.perform(r.make_node(values.outputs[j]), cells[j], [output_storage[k]])

    def make_call(self, node, no_recycling=(), impl=None, rebind=None):
        """As ``Composite.make_call``; NumPy: the Composite's kernel, then the reductions, until
        the node is hot, then the Numba kernel that reduces as it computes (where it can)."""
        elementwise = self.elementwise()
        values = elementwise.make_node(*node.inputs)
        handed_out = set(no_recycling or ())
        sources = self.sources()
        # the values a call hands out (written outputs that are): fresh memory on each call
        fresh = {j for j, out, r in zip(sources, node.outputs, self.reductions) if r is None and out in handed_out}
        if impl in (None, "numpy"):
            reusable = [k for k, (out, r) in enumerate(zip(node.outputs, self.reductions))
                        if r is not None or out not in handed_out]
            run = numpy_kernel(elementwise, values, [j for j in range(len(elementwise.outs)) if j not in fresh])
            # one step (a lone elementwise node): its NumPy call on the whole array, as unfused
            run = run if len(self.steps) > 1 else getattr(run, "whole", run)
            numpy_run = reduced_after(run, self.reductions, sources, node.inputs[0].ndim)
            if not supported(self, node):
                return numpy_run
            # once compiled, where the kernel does not run, small sums are Numba's loops, as unfused
            # (the kernel tests ``numba_below`` itself)
            hot_numpy_run = reduced_after(run, self.reductions, sources, node.inputs[0].ndim, small_in_numba=True)
            return tier(numpy_run, lambda: reducing_kernel(self, node, hot_numpy_run, reusable), rebind,
                        source=kernel_source(self, node))
        run = elementwise.make_call(values, [values.outputs[j] for j in fresh], impl)
        if run is None:
            return None
        reduce_nodes = [None if r is None else r.make_node(values.outputs[j]) for r, j in zip(self.reductions, sources)]

        def reduced(*inputs):   # the reductions on the backend's arrays, as unfused nodes run them
            computed = list(run(*inputs))
            results = [computed[j] for j in sources]
            for k, rnode in enumerate(reduce_nodes):
                if rnode is not None:
                    cell = [None]
                    rnode.op.perform(rnode, [results[k]], [cell])
                    results[k] = cell[0]
            return results

        return reduced

    # -- static information ----------------------------------------------------------
    def flops(self, inputs, outputs):
        """One per step and element of the inputs' broadcast shape (an output may be reduced)."""
        return int(len(self.steps) * np.prod(np.broadcast_shapes(*inputs), dtype=np.int64))

    def infer_shape(self, fgraph, node, shapes):
        values = super().infer_shape(fgraph, node, shapes)
        return [shape if r is None else r.infer_shape(fgraph, None, [shape])[0]
                for shape, r in zip(values, self.reductions)]


def reduced_after(run, reductions, sources, ndim: int, small_in_numba: bool = False):
    """``run`` (a Composite's NumPy kernel) followed by ``reductions`` of its outputs ``sources``
    (``ReducingComposite.sources``) on NumPy: what the
    generated program calls for an unfused float64 sum or mean (``numpy_calls._reduce``),
    ``np.add.reduce``, divided by the count, an intp, for a mean; a 0-d result as an array.
    ``small_in_numba``: small results are summed by ``numba_reductions``' loops, as a hot
    unfused program sums them (the same values)."""
    todo = []
    for k, r in enumerate(reductions):
        if r is not None:
            kind = reduction_kind(r.name, "float64", "float64", ndim, r.axis, r.keepdims) if small_in_numba else None
            todo.append((k, r.axis, r.keepdims, r.name == "mean", kind and KERNELS[kind], kind and SMALL[kind[0]]))
    add = np.add.reduce

    def reduced(*inputs):
        computed = run(*inputs)
        results = [computed[j] for j in sources]
        for k, axis, keepdims, mean, loop, small in todo:
            v = results[k]
            # the kernel's result has its inputs' layout (NumPy's ufuncs keep a Fortran order): the
            # loops, which add in NumPy's order for C-contiguous arrays, take only those
            if loop is not None and 0 < v.size <= small and v.flags.c_contiguous:
                total = loop(v, mean)
            else:
                total = add(v, axis=axis, keepdims=keepdims)
                if mean:
                    total = total / np.intp(math.prod([v.shape[a] for a in axis]))
            results[k] = total if type(total) is np.ndarray else np.asarray(total)
        return results

    return reduced


__all__ = ["ReducingComposite", "reduced_after"]
