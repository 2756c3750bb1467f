"""``lstsq``: NumPy's least-squares solution of ``a @ x = b``, with its residuals, rank and singular
values, under NumPy's and PyTensor's signature ``lstsq(a, b, rcond)``."""

from __future__ import annotations

import numpy as np

from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.tensor.elemwise import ELEMWISE_OPS as E
from eqgraph.tensor.linalg.core import float_dtype, real_dtype
from eqgraph.tensor.shape import shape, shape_of
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Apply
from eqgraph.terms.op import Op
from eqgraph.xp import array_namespace, as_output


class Lstsq(Op):
    """``np.linalg.lstsq(a, b, rcond)``: ``(x, residuals, rank, s)`` for a matrix ``a`` (M x N) and
    ``b`` a vector (M,) or a matrix (M x K); ``x`` is (N,) or (N x K), the residuals the squared
    2-norms of ``b - a @ x``'s columns (none where ``a``'s rank is below N or M <= N), the rank
    int32 and ``s`` ``a``'s singular values.  One system: NumPy's lstsq takes no stacks."""

    __props__ = ()

    def make_node(self, a, b, rcond):
        a, b, rcond = (as_tensor_variable(v) for v in (a, b, rcond))
        if a.ndim != 2:
            raise TypeError(f"{self}: a must be a matrix (M, N), got {a} with {a.ndim} dimensions")
        if b.ndim not in (1, 2):
            raise TypeError(f"{self}: b must be a vector (M,) or a matrix (M, K), got {b} with {b.ndim} dimensions")
        if rcond.ndim != 0:
            raise TypeError(f"{self}: rcond must be a scalar (the cutoff of the small singular values, relative "
                            f"to the largest), got {rcond} with {rcond.ndim} dimensions")
        (m, n), rows = a.type.shape, b.type.shape[0]
        if m is not None and rows is not None and m != rows:
            raise ValueError(f"{self}: a {a} of shape {a.type.shape} and b {b} of shape {b.type.shape} do not "
                             "match (a's rows must equal b's)")
        dtype = float_dtype(np.result_type(float_dtype(a.dtype), float_dtype(b.dtype)).name)
        x = TensorType(dtype, (n, *b.type.shape[1:]))
        small = None if m is None or n is None else min(m, n)
        return Apply(self, [a, b, rcond], [x(), TensorType(real_dtype(dtype), (None,))(),
                                           TensorType("int32", ())(), TensorType(real_dtype(dtype), (small,))()])

    def perform(self, node, inputs, output_storage):
        a, b, rcond = inputs
        xp = array_namespace(a, b)
        dtype = node.outputs[0].type.dtype
        if a.shape[0] != b.shape[0]:
            raise ValueError(f"{self}: a of shape {a.shape} and b of shape {b.shape} do not match (a's rows must "
                             "equal b's)")
        results = np.linalg.lstsq(np.asarray(a, dtype=dtype), np.asarray(b, dtype=dtype), rcond=float(rcond))
        for cell, value, out in zip(output_storage, results, node.outputs):
            cell[0] = as_output(xp, xp.asarray(np.asarray(value, dtype=out.type.dtype)), out.type)

    def infer_shape(self, fgraph, node, shapes):
        (m, n), b = shapes[0], shapes[1]
        # the residuals' length depends on the rank, a value: the output's own
        return [(n, *b[1:]), (shape(node.outputs[1])[0],), (), (E["minimum"](m, n),)]

    def flops(self, inputs, outputs):
        m, n = (int(s) for s in inputs[0])
        cols = int(inputs[1][1]) if len(inputs[1]) > 1 else 1
        return 4 * m * n * min(m, n) + 2 * m * n * cols


def lstsq(a, b, rcond=None):
    """``[x, residuals, rank, s]``, as ``np.linalg.lstsq(a, b, rcond)`` (a list, as PyTensor's):
    ``x`` minimizes ``|b - a @ x|``.  ``rcond`` (a number or a scalar tensor; None: the machine
    precision of the dtype computed in times ``max(M, N)``, NumPy's default) is where ``a``'s small
    singular values are cut off, relative to its largest."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if rcond is None and a.ndim == 2:
        dtype = float_dtype(np.result_type(float_dtype(a.dtype), float_dtype(b.dtype)).name)
        rcond = float(np.finfo(dtype).eps) * E["maximum"](*shape_of(a))
    return list(Lstsq()(a, b, -1.0 if rcond is None else rcond))


__all__ = ["Lstsq", "lstsq"]
