"""The whole Numba function's form of ``Einsum`` of two float64 operands that contracts letters
shared by both (``tensordot`` is such an Einsum): each operand's axes transposed into (free,
contracted) order and reshaped to a matrix, one ``np.dot`` (SciPy's BLAS ``gemm``), and the
product reshaped and transposed to the output's letters.

NumPy's two-operand ``einsum`` adds in its own loops, not through BLAS, so the values agree with
the program to rounding, not always to the last bit, like ``matmul``.  Other subscripts (a letter
twice in one operand, a letter summed in one operand alone, batch letters shared by both operands
and the output, more operands) have no form here; a size-1 axis that einsum would broadcast makes
``np.dot`` raise, and the program runs.
"""

from __future__ import annotations

from eqgraph.exec.numba.kernels import numba


def _plan(terms: tuple, output: str):
    """``(free letters of a, contracted letters, free letters of b)`` or None where the subscripts
    are not one contraction of two operands."""
    if len(terms) != 2:
        return None
    a, b = terms
    if len(set(a)) != len(a) or len(set(b)) != len(b) or len(set(output)) != len(output):
        return None
    contracted = [c for c in a if c in b]
    if any(c in output for c in contracted) or set(output) != (set(a) | set(b)) - set(contracted):
        return None
    return [c for c in a if c not in b], contracted, [c for c in b if c not in a]


def _matrix(name: str, term: str, rows: list, columns: list) -> str:
    """``name`` (axes ``term``) as a C-contiguous matrix: the letters ``rows`` then ``columns``."""
    order = [term.index(c) for c in rows + columns]
    moved = name if order == sorted(order) else f"{name}.transpose(({''.join(f'{d}, ' for d in order)}))"
    counts = [" * ".join(f"{name}.shape[{term.index(c)}]" for c in letters) or "1" for letters in (rows, columns)]
    return f"np.ascontiguousarray({moved}).reshape(({counts[0]}, {counts[1]}))"


def einsum(w, node):
    op, out = node.op, node.outputs[0]
    if any(v.dtype != "float64" for v in (*node.inputs, out)):
        return None
    plan = _plan(op.terms, op.output)
    if plan is None:
        return None
    free_a, contracted, free_b = plan
    (a, b), (ta, tb) = [w.value(v) for v in node.inputs], op.terms
    product = f"contract({_matrix(a, ta, free_a, contracted)}, {_matrix(b, tb, contracted, free_b)})"
    letters = free_a + free_b
    lengths = [f"{a}.shape[{ta.index(c)}]" for c in free_a] + [f"{b}.shape[{tb.index(c)}]" for c in free_b]
    value = f"{product}.reshape(({''.join(f'{s}, ' for s in lengths)}))"
    order = [letters.index(c) for c in op.output]
    if order != sorted(order):
        value = f"np.ascontiguousarray({value}.transpose(({''.join(f'{d}, ' for d in order)})))"
    if out.ndim == 0:
        value = f"{product}[0, 0]"
    return [f"{w.define(out)} = {value}"]


HELPERS = ("contract",)

if numba is not None:
    import numpy as np

    @numba.njit(cache=True, error_model="numpy")
    def contract(a, b):
        """``a @ b`` of two C-contiguous matrices (zeros where the shared length is 0; NumPy's
        ValueError where the lengths differ)."""
        if a.shape[1] != b.shape[0]:
            raise ValueError("einsum: operands could not be broadcast together")
        if a.shape[1] == 0 or a.shape[0] == 0 or b.shape[1] == 0:
            return np.zeros((a.shape[0], b.shape[1]))
        return np.dot(a, b)
else:
    contract = None
