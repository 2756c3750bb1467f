"""Matrix equations of control theory that SciPy solves: ``solve_sylvester`` (``A X + X B = Q``) and
``solve_discrete_are`` (the discrete algebraic Riccati equation), with PyTensor's signatures.

Each op takes several matrices, or stacks of them whose batch axes broadcast (batch axes first, as
everywhere in ``et.linalg``), real or complex, and SciPy solves one system at a time.  The
Lyapunov equations, special cases of Sylvester's, are ``lapack.py``'s.  Gradients are in
``eqgraph/grad/vjps_linalg.py``.
"""

from __future__ import annotations

import numpy as np

from eqgraph.tensor.elemwise import ELEMWISE_OPS as E, broadcast_static_shapes
from eqgraph.tensor.linalg.core import _batch_count, _matrix, float_dtype
from eqgraph.tensor.linalg.lapack import per_matrix, scipy_linalg, to_numpy
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Apply
from eqgraph.terms.op import Op
from eqgraph.xp import array_namespace, as_output, optional_module


class MatrixEquation(Op):
    """An equation in several matrices solved for one, ``X``: subclasses name the matrices
    (``arguments``), give each one's two axes and ``X``'s as letters (``axes``, ``solution``:
    one letter per size, so ``"mn"`` is an M x N matrix) and solve one system (``solve_one``).
    Each argument may be a stack ``(..., rows, cols)``; the stacks' batch axes broadcast."""

    __props__ = ()
    arguments: tuple[str, ...] = ()
    axes: tuple[str, ...] = ()
    solution = ""

    def make_node(self, *matrices):
        if len(matrices) != len(self.arguments):
            raise TypeError(f"{self} takes {len(self.arguments)} matrices ({', '.join(self.arguments)}), "
                            f"got {len(matrices)}")
        matrices = [_matrix(self, m, square=False, arg=name, complex_ok=True)
                    for m, name in zip(matrices, self.arguments)]
        sizes = self._static_sizes(matrices)
        dtype = float_dtype(np.result_type(*(float_dtype(m.dtype) for m in matrices)).name)
        shape = (*self._static_batch(matrices), *(sizes[c] for c in self.solution))
        return Apply(self, matrices, [TensorType(dtype, shape)()])

    def _static_sizes(self, matrices) -> dict:
        """Each letter's static size (None where no argument knows it); an error where two disagree."""
        sizes: dict = {}
        for m, letters in zip(matrices, self.axes):
            for letter, size in zip(letters, m.type.shape[-2:]):
                if size is not None and sizes.get(letter) not in (None, size):
                    raise ValueError(f"{self}: the arguments {self._described(matrices)} do not fit: the sizes "
                                     f"named {letter!r} in {self._layout()} differ")
                sizes[letter] = size if size is not None else sizes.get(letter)
        return sizes

    def _static_batch(self, matrices) -> tuple:
        width = max(m.ndim for m in matrices) - 2
        padded = [TensorType(m.dtype, (1,) * (width + 2 - m.ndim) + m.type.shape[:-2])() for m in matrices]
        return broadcast_static_shapes(self, padded) if width else ()

    def _layout(self) -> str:
        return ", ".join(f"{name} ({', '.join(letters.upper())})" for name, letters in zip(self.arguments, self.axes))

    def _described(self, matrices) -> str:
        return ", ".join(f"{name} {m} of shape {tuple(m.type.shape)}" for name, m in zip(self.arguments, matrices))

    def perform(self, node, inputs, output_storage):
        xp = array_namespace(*inputs)
        dtype = node.outputs[0].type.dtype
        arrays = [to_numpy(x).astype(dtype, copy=False) for x in inputs]
        self._check_sizes(arrays)
        batch = np.broadcast_shapes(*(x.shape[:-2] for x in arrays))
        arrays = [np.broadcast_to(x, batch + x.shape[-2:]) for x in arrays]
        (x,) = per_matrix(lambda *one: (self.solve_one(*one),), *arrays)
        output_storage[0][0] = as_output(xp, xp.asarray(x), node.outputs[0].type)

    def _check_sizes(self, arrays):
        sizes: dict = {}
        for x, letters in zip(arrays, self.axes):
            for letter, size in zip(letters, x.shape[-2:]):
                if sizes.setdefault(letter, size) != size:
                    shapes = ", ".join(f"{name} {x.shape}" for name, x in zip(self.arguments, arrays))
                    raise ValueError(f"{self}: the matrices' shapes {shapes} do not fit {self._layout()}")

    def infer_shape(self, fgraph, node, shapes):
        sizes: dict = {}
        for shape, letters in zip(shapes, self.axes):
            for letter, size in zip(letters, shape[-2:]):
                sizes.setdefault(letter, size)
        width = node.outputs[0].ndim - 2
        padded = [(1,) * (width + 2 - len(shape)) + tuple(shape[:-2]) for shape in shapes]
        batch = [_largest(sizes_of_axis) for sizes_of_axis in zip(*padded)]
        return [(*batch, *(sizes[c] for c in self.solution))]


def _largest(sizes):
    """The broadcast size of one batch axis: the largest (the others are 1 or the same)."""
    result = sizes[0]
    for size in sizes[1:]:
        result = E["maximum"](result, size)
    return result


class SolveSylvester(MatrixEquation):
    """``X`` with ``A X + X B = Q``: SciPy's ``solve_sylvester`` (Bartels-Stewart) for an M x M
    ``A``, an N x N ``B`` and an M x N ``Q``.  Without SciPy NumPy solves the same equation written
    as one system of ``M N`` unknowns (``kron``), which costs ``(M N)^3``."""

    arguments, axes, solution = ("a", "b", "q"), ("mm", "nn", "mn"), "mn"

    def solve_one(self, a, b, q):
        module = optional_module("scipy.linalg")
        if module is not None:
            return module.solve_sylvester(a, b, q)
        # rows of X one after another: vec(A X) = (A kron I) vec(X), vec(X B) = (I kron B^T) vec(X)
        m, n = q.shape
        system = np.kron(a, np.eye(n, dtype=a.dtype)) + np.kron(np.eye(m, dtype=a.dtype), b.T)
        return np.linalg.solve(system, q.reshape(m * n)).reshape(m, n)

    def flops(self, inputs, outputs):
        m, n = int(inputs[0][-1]), int(inputs[1][-1])
        return _batch_count(outputs[0]) * (25 * (m ** 3 + n ** 3) + 4 * m * n * (m + n))


class SolveDiscreteARE(MatrixEquation):
    """The stabilizing ``X`` of the discrete algebraic Riccati equation
    ``A^H X A - X - (A^H X B) (R + B^H X B)^-1 (B^H X A) + Q = 0``: SciPy's ``solve_discrete_are``
    for an M x M ``A`` and ``Q``, an M x N ``B`` and an N x N ``R``.  Where SciPy finds no
    stabilizing solution the result is NaN, as PyTensor's (SciPy raises).  ``Q`` and ``R`` are read
    through their Hermitian (real: symmetric) parts ``(Q + Q^H) / 2``, which is all the equation
    has of them for a symmetric ``X``: a ``Q`` that is not quite symmetric is solved, not refused
    as SciPy does, and the gradient with respect to ``Q`` and ``R`` is that of their parts."""

    arguments, axes, solution = ("a", "b", "q", "r"), ("mm", "mn", "mm", "nn"), "mm"

    def solve_one(self, a, b, q, r):
        module = scipy_linalg(self)
        q, r = (q + q.conj().T) / 2, (r + r.conj().T) / 2
        try:
            return module.solve_discrete_are(a, b, q, r)
        except np.linalg.LinAlgError:
            return np.full(a.shape, np.nan, dtype=a.dtype)

    def flops(self, inputs, outputs):
        m, n = int(inputs[0][-1]), int(inputs[1][-1])
        return _batch_count(outputs[0]) * 30 * (2 * m + n) ** 3


def solve_sylvester(a, b, q):
    """``X`` with ``a @ X + X @ b = q`` (SciPy's and PyTensor's ``solve_sylvester``)."""
    return SolveSylvester()(a, b, q)


def solve_discrete_are(a, b, q, r):
    """The stabilizing solution ``X`` of the discrete algebraic Riccati equation (SciPy's and
    PyTensor's ``solve_discrete_are``; NaN where there is none, as PyTensor's)."""
    return SolveDiscreteARE()(a, b, q, r)


__all__ = ["MatrixEquation", "SolveDiscreteARE", "SolveSylvester", "solve_discrete_are", "solve_sylvester"]
