"""Vector-Jacobian products of the everyday ops (sorting, cumulative ops, repeat, einsum,
diagonals, convolution): entries of the one table in ``vjps.py``, kept in a sibling module so
that neither passes 600 lines.  Each is written with ops, so it is differentiable again.
"""

from __future__ import annotations

import eqgraph.tensor as et
from eqgraph.grad.vjps import entry
from eqgraph.tensor.conv import Convolve, crop_start, output_size
from eqgraph.tensor.extra_ops import CumOp
from eqgraph.tensor.products import Einsum, ExtractDiag
from eqgraph.tensor.sorting import along_axis_index
from eqgraph.terms.null_type import disconnected

E = et.ELEMWISE_OPS


def _along(x, axis, index):
    return x[(slice(None),) * axis + (index,)]


def _flip(x, axes):
    index = [slice(None)] * x.ndim
    for a in axes:
        index[a] = slice(None, None, -1)
    return x[tuple(index)]


@entry("Sort", 1)
def _sort(g, out, x, axis, arg):  # the output's cotangent goes back where each element came from
    where = along_axis_index(et.argsort(x, axis), axis)
    return [et.inc_subtensor(et.zeros_like(g)[where], g)]


@entry("CumOp", 1)
def _cumulative(g, out, x, axis, mode):
    def reverse_cumsum(v):  # sum over the outputs each input contributed to
        return _flip(CumOp(axis, "add")(_flip(v, [axis])), [axis])

    if mode == "add":
        return [reverse_cumsum(g)]
    return [_cumprod_vjp(g, out, x, axis, reverse_cumsum)]


def _cumprod_vjp(g, out, x, axis, reverse_cumsum):
    # d out_j / d x_i (j >= i) is the product of x_0..x_j but x_i: out_j / x_i before the first
    # zero; at the first zero, the cumulative product with that zero read as 1; after it, 0
    # (every such product holds the first zero). Dividing by a zero would make 0 / 0 = NaN.
    zero = E["eq"](x, 0)
    zeros_so_far = CumOp(axis, "add")(et.cast(zero, "int64"))
    before = E["eq"](zeros_so_far, 0)
    first = E["and_"](zero, E["eq"](zeros_so_far, 1))
    before_part = reverse_cumsum(g * out) / E["switch"](before, x, 1)
    first_part = reverse_cumsum(g * CumOp(axis, "mul")(E["switch"](first, 1, x)))
    return E["switch"](before, before_part, E["switch"](first, first_part, 0))


@entry("Repeat", 2)
def _repeat(g, out, x, repeats, axis):
    # x[i]'s cotangent is the sum of g over its block [start_i, end_i): a difference of running sums
    n = et.shape_of(x)[axis]
    counts = repeats if repeats.ndim else et.alloc(repeats, n)
    ends = CumOp(0, "add")(counts)
    zero = et.zeros_like(_along(g, axis, slice(0, 1)))
    running = et.concatenate([zero, CumOp(axis, "add")(g)], axis=axis)
    return [_along(running, axis, ends) - _along(running, axis, ends - counts), disconnected()]


@entry("Einsum")
def _einsum(g, out, operands, subscripts):
    op = Einsum(subscripts)
    grads = []
    for i, (term, x) in enumerate(zip(op.terms, operands)):
        # a term that repeats an index reads a diagonal of x: differentiate with respect to
        # that diagonal (its distinct letters), then place the cotangent back on it
        letters = "".join(dict.fromkeys(term))
        read = x if letters == term else Einsum(f"{term}->{letters}")(x)
        others = [(t, o) for j, (t, o) in enumerate(zip(op.terms, operands)) if j != i]
        available = set(op.output).union(*[set(t) for t, _ in others])
        kept = "".join(c for c in letters if c in available)  # letters summed over x alone come back by fill
        spec = ",".join([op.output, *[t for t, _ in others]]) + "->" + kept
        part = Einsum(spec)(g, *[o for _, o in others])
        if kept != letters:
            part = et.fill(read, et.dimshuffle(part, [kept.index(c) if c in kept else "x" for c in letters]))
        part = et.sum_to_shape(part, read)  # an axis of size 1 in x may have been broadcast
        grads.append(part if letters == term else _on_diagonal(part, letters, term, x))
    return grads


def _on_diagonal(part, letters: str, term: str, x):
    """The array of ``x``'s shape holding ``part`` (indexed by ``letters``) where the repeated
    letters of ``term`` agree, and zeros elsewhere: ``"ii"`` puts a vector on the diagonal."""
    placed = et.dimshuffle(part, [letters.index(c) if term.index(c) == axis else "x"
                                  for axis, c in enumerate(term)])
    shape = et.shape_of(x)
    for axis, c in enumerate(term):
        first = term.index(c)
        if first != axis:  # keep the entries whose index on this axis equals the first one's
            agree = et.eye(shape[first], shape[axis], dtype=part.dtype)
            placed = placed * et.dimshuffle(agree, [0 if a == first else 1 if a == axis else "x"
                                                    for a in range(len(term))])
    return placed


@entry("ExtractDiag", 1)
def _extract_diag(g, out, x, offset, axis1, axis2):
    op = ExtractDiag(offset, axis1, axis2)
    moved = op.moved(et.zeros_like(x, dtype=g.dtype))
    placed = et.inc_subtensor(moved[op.index(moved, et.shape_of(g)[-1])], g)
    return [op.moved_back(placed)]


@entry("Convolve", 2, broadcasts=True)
def _convolve(g, out, x, kernel, core, mode):
    # with g_full the cotangent of the 'full' output, x's is g_full correlated with the kernel and
    # the kernel's is g_full correlated with x: both 'valid' convolutions with a flipped operand
    if mode != "full":
        n_sizes, k_sizes = et.shape_of(x)[-core:], et.shape_of(kernel)[-core:]
        full = [*et.shape_of(g)[:-core], *[output_size("full", n, k) for n, k in zip(n_sizes, k_sizes)]]
        starts = [crop_start(mode, k) for k in k_sizes]
        window = (Ellipsis, *[slice(s, s + m) for s, m in zip(starts, et.shape_of(g)[-core:])])
        g = et.set_subtensor(et.zeros(full, dtype=g.dtype)[window], g)
    valid = Convolve(core, "valid")
    return [valid(g, _flip(kernel, range(kernel.ndim - core, kernel.ndim))),
            valid(g, _flip(x, range(x.ndim - core, x.ndim)))]

