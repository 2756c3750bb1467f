"""Linear algebra, like ``numpy.linalg`` / ``pytensor.tensor.linalg``: ``import eqgraph.tensor as et;
et.linalg.solve(A, b)``.

Each decomposition or solve is one op on a matrix or a stack of matrices (``(..., M, N)``: the
last two axes are the matrix, the leading ones a batch, as in NumPy and PyTensor's Blockwise)
computed by NumPy; ``solve_triangular`` and ``solve(assume_a=...)`` use SciPy when it is
installed (the ``exact`` extra) and otherwise NumPy on the matrix's triangle, which gives the same
result; what only SciPy computes (``lu``, ``schur``, ``qz``, pivoted QR...) is in ``lapack.py``.
Everything else (``norm``, ``matrix_power``, ``cho_solve``, ``kron``) is written with these and
the ordinary ops.  Gradients are in ``eqgraph/grad/vjps_linalg.py``;
the classic identities (``inv(A) @ b -> solve(A, b)``, ...) are rules in ``rulesets/linalg.egg``.
"""

from eqgraph.tensor.extra_ops import tril, triu
from eqgraph.tensor.linalg.core import (
    Cholesky, Det, Eig, Eigh, LinalgOp, MatrixInverse, Pinv, QR, SVD, SlogDet, Solve, cho_solve, cholesky, det,
    eig, eigvals, inv, matrix_power, pinv, slogdet, solve, solve_triangular, svd)
from eqgraph.tensor.linalg.eigen import eigh, eigvalsh
from eqgraph.tensor.linalg.norms import norm
from eqgraph.tensor.linalg.constructors import block_diag, matrix_dot
from eqgraph.tensor.linalg.tensor_solve import tensorinv, tensorsolve
from eqgraph.tensor.linalg.lapack import (  # qr: NumPy's modes, and SciPy's pivoting and "raw"
    lu, lu_factor, lu_solve, ordqz, pivot_to_permutation, qr, qz, schur, solve_continuous_lyapunov,
    solve_discrete_lyapunov)
from eqgraph.tensor.linalg.matrix_functions import expm
from eqgraph.tensor.linalg.control import solve_discrete_are, solve_sylvester
from eqgraph.tensor.linalg.least_squares import lstsq
from eqgraph.tensor.products import kron

matrix_inverse = inv  # PyTensor's other name of inv

__all__ = [
    "block_diag", "matrix_dot", "tensorinv", "tensorsolve",
    "Cholesky", "Det", "Eig", "Eigh", "LinalgOp", "MatrixInverse", "Pinv", "QR", "SVD", "SlogDet", "Solve",
    "cho_solve", "cholesky", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv", "kron", "matrix_inverse", "matrix_power", "norm", "pinv", "qr",
    "slogdet", "solve", "solve_triangular", "svd", "tril", "triu",
    "lu", "lu_factor", "lu_solve", "ordqz", "pivot_to_permutation", "qz", "schur", "solve_continuous_lyapunov",
    "solve_discrete_lyapunov", "solve_discrete_are", "solve_sylvester", "expm", "lstsq",
]
