"""Eight float64 lanes as one LLVM vector in Numba (imported only where Numba is installed).

NumPy's ``pairwise_sum`` keeps 8 running sums, ``r[k] += a[8 * j + k]``.  Written as 8 scalars in
Numba they stay 8 scalar add chains (``vaddsd``): Numba runs LLVM's loop vectorizer but not its
SLP vectorizer, which would pack them.  ``Vec8`` is the LLVM type ``<8 x double>``, so the 8 sums
are one register (or two) and each step is one packed addition, about twice as fast as scalar
chains (docs/performance.md).  Every lane is added exactly as the scalar would be
(``fadd`` without fast-math flags: LLVM may not reorder it), so the sums are NumPy's to the bit.

- ``load8(a, i)``: ``a[i:i + 8]`` of a C-contiguous 1-d float64 array (not bounds-checked: the
  caller keeps ``i + 8 <= a.size``; unaligned load);
- ``add8(u, v)``: lane-wise ``u + v``;
- ``tree8(v)``: ``((v0 + v1) + (v2 + v3)) + ((v4 + v5) + (v6 + v7))``, the order in which NumPy
  adds its 8 running sums.

Kernels using it are cached on disk like any other (``cache=True``): ``numba_reductions.rest``
takes a ``Vec8`` argument, and the type pickles into its cache index as any Numba type does.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic, models, register_model

_LLVM_VEC8 = ir.VectorType(ir.DoubleType(), 8)


class Vec8(types.Type):
    """Eight float64 values in one LLVM vector register."""

    def __init__(self):
        super().__init__(name="Vec8")


vec8 = Vec8()


@register_model(Vec8)
class _Vec8Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _LLVM_VEC8)


def _contiguous_float64(array) -> bool:
    return isinstance(array, types.Array) and array.ndim == 1 and array.layout == "C" and array.dtype == types.float64


@intrinsic
def load8(typingctx, array, index):
    """``array[index:index + 8]`` as a ``Vec8``."""
    if not _contiguous_float64(array) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        offset = context.cast(builder, args[1], signature.args[1], types.intp)
        pointer = builder.bitcast(builder.gep(data, [offset], inbounds=True), _LLVM_VEC8.as_pointer())
        return builder.load(pointer, align=8)

    return vec8(array, index), codegen


@intrinsic
def add8(typingctx, u, v):
    """Lane-wise ``u + v`` (IEEE additions, no fast-math)."""
    if not (isinstance(u, Vec8) and isinstance(v, Vec8)):
        return None

    def codegen(context, builder, signature, args):
        return builder.fadd(args[0], args[1])

    return vec8(vec8, vec8), codegen


@intrinsic
def tree8(typingctx, v):
    """The 8 lanes added as NumPy adds its running sums: ``((0+1)+(2+3))+((4+5)+(6+7))``."""
    if not isinstance(v, Vec8):
        return None

    def codegen(context, builder, signature, args):
        values = [builder.extract_element(args[0], ir.Constant(ir.IntType(32), k)) for k in range(8)]
        while len(values) > 1:
            values = [builder.fadd(values[k], values[k + 1]) for k in range(0, len(values), 2)]
        return values[0]

    return types.float64(vec8), codegen


__all__ = ["Vec8", "add8", "load8", "tree8", "vec8"]
