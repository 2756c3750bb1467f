"""Functions of a square matrix that SciPy computes: ``expm``, the matrix exponential, of a matrix
or of each matrix of a stack ``(..., M, M)``, real or complex.  Its gradient is in
``eqgraph/grad/vjps_linalg.py``."""

from __future__ import annotations

from eqgraph.tensor.linalg.lapack import ScipyLinalgOp, _batch_count


class Expm(ScipyLinalgOp):
    """``scipy.linalg.expm``: ``exp(A) = I + A + A^2/2! + ...`` of a square matrix, in the input's
    precision (float32 and complex64 stay so; integers are computed in float64)."""

    def compute_one(self, module, a):
        return (module.expm(a),)

    def flops(self, inputs, outputs):
        # scaling and squaring: a degree-13 Pade approximant (six products and a solve), then
        # squarings; about twenty matrix products of work in all
        return _batch_count(inputs[0]) * 20 * 2 * int(inputs[0][-1]) ** 3


def expm(a):
    """The matrix exponential of the square matrix ``a`` (or of each matrix of a stack), as
    ``scipy.linalg.expm``."""
    return Expm()(a)


__all__ = ["Expm", "expm"]
