"""`TensorVariable` and `TensorConstant`: Python operators and NumPy-style methods.

``==`` and ``!=`` keep their identity meaning (variables are dictionary keys);
use ``et.eq``/``et.neq`` for elementwise comparison, as in Aesara.
"""

from __future__ import annotations

import math

from eqgraph.terms.basic import Constant, Variable
from eqgraph.terms.printing import debugprint

#: ``eqgraph.tensor``, whose functions the operators call (``x + y`` is ``et.add(x, y)``).
#: The ops are built on this module, so it cannot import them: the package binds it
#: (``eqgraph/tensor/__init__.py``) once every op exists.
et = None


class _TensorOperators:
    """Operators and methods shared by tensor variables and constants."""

    __slots__ = ()

    # -- static information ---------------------------------------------------
    @property
    def ndim(self) -> int:
        return self.type.ndim

    @property
    def dtype(self) -> str:
        return self.type.dtype

    @property
    def broadcastable(self) -> tuple:
        return self.type.broadcastable

    @property
    def shape(self):
        return et.shape(self)

    @property
    def size(self):
        return et.prod(et.shape(self))

    @property
    def T(self):
        return et.transpose(self)

    @property
    def mT(self):
        """The transpose of each matrix: the last two axes swapped (NumPy's and PyTensor's ``mT``)."""
        return et.matrix_transpose(self)

    # -- arithmetic -------------------------------------------------------------
    def __add__(self, other): return et.add(self, other)
    def __radd__(self, other): return et.add(other, self)
    def __sub__(self, other): return et.sub(self, other)
    def __rsub__(self, other): return et.sub(other, self)
    def __mul__(self, other): return et.mul(self, other)
    def __rmul__(self, other): return et.mul(other, self)
    def __truediv__(self, other): return et.true_div(self, other)
    def __rtruediv__(self, other): return et.true_div(other, self)
    def __floordiv__(self, other): return et.int_div(self, other)
    def __rfloordiv__(self, other): return et.int_div(other, self)
    def __mod__(self, other): return et.mod(self, other)
    def __rmod__(self, other): return et.mod(other, self)
    def __pow__(self, other): return et.pow(self, other)
    def __rpow__(self, other): return et.pow(other, self)
    def __matmul__(self, other): return et.matmul(self, other)
    def __rmatmul__(self, other): return et.matmul(other, self)
    def __neg__(self): return et.neg(self)
    def __pos__(self): return self
    def __abs__(self): return et.abs(self)
    def __invert__(self): return et.invert(self)
    def __and__(self, other): return et.and_(self, other)
    def __rand__(self, other): return et.and_(other, self)
    def __or__(self, other): return et.or_(self, other)
    def __ror__(self, other): return et.or_(other, self)
    def __xor__(self, other): return et.xor(self, other)
    def __rxor__(self, other): return et.xor(other, self)
    def __lt__(self, other): return et.lt(self, other)
    def __le__(self, other): return et.le(self, other)
    def __gt__(self, other): return et.gt(self, other)
    def __ge__(self, other): return et.ge(self, other)

    def __bool__(self):
        raise TypeError(f"The truth value of the symbolic variable {self} is unknown until it is "
                        "computed; use et.switch / et.all / et.any in the graph instead")

    def __iter__(self):
        if self.ndim == 0 or self.type.shape[0] is None:
            raise TypeError(f"Cannot iterate over {self}: its first dimension is not known statically")
        for i in range(self.type.shape[0]):
            yield self[i]

    def __len__(self):
        if self.ndim == 0 or self.type.shape[0] is None:
            raise TypeError(f"len() of {self} is unknown statically; use x.shape[0]")
        return self.type.shape[0]

    def __getitem__(self, index):
        return et.getitem(self, index)

    # -- methods ------------------------------------------------------------------
    def sum(self, axis=None, keepdims=False, dtype=None, acc_dtype=None): return et.sum(self, axis, keepdims, dtype, acc_dtype)
    def prod(self, axis=None, keepdims=False, dtype=None, acc_dtype=None): return et.prod(self, axis, keepdims, dtype, acc_dtype)
    def mean(self, axis=None, keepdims=False, dtype=None, acc_dtype=None): return et.mean(self, axis, keepdims, dtype, acc_dtype)
    def var(self, axis=None, ddof=0, keepdims=False, corrected=False): return et.var(self, axis, ddof, keepdims, corrected)
    def std(self, axis=None, ddof=0, keepdims=False, corrected=False): return et.std(self, axis, ddof, keepdims, corrected)
    def max(self, axis=None, keepdims=False): return et.max(self, axis, keepdims)
    def min(self, axis=None, keepdims=False): return et.min(self, axis, keepdims)
    def all(self, axis=None, keepdims=False): return et.all(self, axis, keepdims)
    def any(self, axis=None, keepdims=False): return et.any(self, axis, keepdims)
    def argmax(self, axis=None, keepdims=False): return et.argmax(self, axis, keepdims)
    def argmin(self, axis=None, keepdims=False): return et.argmin(self, axis, keepdims)
    def dot(self, other): return et.dot(self, other)

    # x[idx].set(y) / x[idx].inc(y): a copy of x with x[idx] = y / x[idx] += y (PyTensor's, JAX's .at[])
    def set(self, y): return et.set_subtensor(self, y)
    def inc(self, y): return et.inc_subtensor(self, y)

    def clip(self, lo, hi): return et.clip(self, lo, hi)
    def astype(self, dtype): return et.cast(self, dtype)
    def flatten(self, ndim=1): return et.flatten(self, ndim)
    def ravel(self): return et.flatten(self, 1)
    def fill(self, value):
        """``value`` broadcast to this tensor's shape (PyTensor's ``x.fill(value)``)."""
        return et.fill(self, value)
    def swapaxes(self, axis1, axis2): return et.swapaxes(self, axis1, axis2)
    def choose(self, choices, mode="raise"): return et.choose(self, choices, mode)
    def repeat(self, repeats, axis=None): return et.repeat(self, repeats, axis)
    def diagonal(self, offset=0, axis1=0, axis2=1): return et.diagonal(self, offset, axis1, axis2)
    def trace(self, offset=0, axis1=0, axis2=1): return et.trace(self, offset, axis1, axis2)
    def nonzero(self, return_matrix=False): return et.nonzero(self, return_matrix)
    def nonzero_values(self): return et.nonzero_values(self)
    def compress(self, condition, axis=None): return et.compress(condition, self, axis)
    def ptp(self, axis=None, keepdims=False): return et.ptp(self, axis, keepdims)
    def dimshuffle(self, *order):
        if len(order) == 1 and isinstance(order[0], (list, tuple)):
            order = tuple(order[0])
        return et.dimshuffle(self, order)

    def reshape(self, *shape, ndim=None):
        if len(shape) == 1 and not isinstance(shape[0], int) and not (
            isinstance(shape[0], Variable) and shape[0].ndim == 0
        ):
            shape = shape[0]
        return et.reshape(self, shape, ndim=ndim)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            axes = axes[0]
        return et.transpose(self, axes or None)

    def squeeze(self, axis=None): return et.squeeze(self, axis)
    def sort(self, axis=-1, kind=None, order=None): return et.sort(self, axis, kind, order)
    def argsort(self, axis=-1, kind=None, order=None): return et.argsort(self, axis, kind, order)
    def cumsum(self, axis=None): return et.cumsum(self, axis)
    def cumprod(self, axis=None): return et.cumprod(self, axis)
    def conj(self):
        """The complex conjugate; a real tensor is its own (PyTensor's method adds no node)."""
        return et.conj(self) if self.dtype.startswith("complex") else self

    conjugate = conj

    @property
    def real(self): return et.real(self)

    @property
    def imag(self): return et.imag(self)

    def norm(self, L, axis=None, keepdims=False):
        """PyTensor's ``x.norm(L)``: ``sum(|x|**L) ** (1/L)`` over ``axis`` (all axes when None)."""
        if L == 0 or math.isinf(float(L)):
            raise NotImplementedError(f"{self}.norm(L={L}): L must be a finite nonzero order")
        return et.sum(et.abs(self) ** L, axis=axis, keepdims=keepdims) ** (1.0 / L)
    def exp(self): return et.exp(self)
    def log(self): return et.log(self)
    def sqrt(self): return et.sqrt(self)
    def round(self): return et.round(self)
    def take(self, indices, axis=None, mode="raise"): return et.take(self, indices, axis, mode)
    def zeros_like(self, dtype=None): return et.zeros_like(self, dtype)
    def ones_like(self, dtype=None): return et.ones_like(self, dtype)

    def dprint(self, **kwargs):
        return debugprint(self, **kwargs)

    def _specify_shape(self, shape):
        """``specify_shape(self, shape)``, for ``TensorType.convert_variable`` (a layer below the op)."""
        return et.specify_shape(self, shape)


class TensorVariable(_TensorOperators, Variable):
    """A symbolic n-d array."""

    __slots__ = ()


class TensorConstant(_TensorOperators, Constant):
    """A symbolic n-d array whose value is known.

    ``weak`` marks constants made from Python numbers: like NumPy's Python
    scalars, they take the dtype of the arrays they are combined with.
    """

    __slots__ = ("weak",)

    def __init__(self, type, data, name=None, weak: bool = False):
        super().__init__(type, data, name)
        self.weak = weak

    @property
    def value(self):
        """The constant's array (PyTensor's name for ``data``)."""
        return self.data

    def clone(self, name=None):
        return TensorConstant(self.type, self.data, self.name if name is None else name, self.weak)
