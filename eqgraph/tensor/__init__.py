"""The user's vocabulary, like ``aesara.tensor``: ``import eqgraph.tensor as et``.

Types and variables (``TensorType``, ``dmatrix``, ``vector(...)``), constants,
and NumPy-named operations that build graph nodes.
"""

from eqgraph.tensor.type import FLOATX, TensorType
from eqgraph.tensor.var import TensorConstant, TensorVariable
from eqgraph.tensor.basic import (
    NotScalarConstantError, as_tensor, as_tensor_variable, col, constant, get_scalar_constant_value,
    matrix, row, scalar, tensor, tensor3, tensor4, vector, TYPES,
)
from eqgraph.tensor.basic import (  # noqa: F401  (the prefixed TensorTypes: dmatrix, ivector, ...)
    bscalar, bvector, brow, bcol, bmatrix, btensor3, btensor4,
    wscalar, wvector, wrow, wcol, wmatrix, wtensor3, wtensor4,
    iscalar, ivector, irow, icol, imatrix, itensor3, itensor4,
    lscalar, lvector, lrow, lcol, lmatrix, ltensor3, ltensor4,
    fscalar, fvector, frow, fcol, fmatrix, ftensor3, ftensor4,
    dscalar, dvector, drow, dcol, dmatrix, dtensor3, dtensor4,
    cscalar, cvector, crow, ccol, cmatrix, ctensor3, ctensor4,
    zscalar, zvector, zrow, zcol, zmatrix, ztensor3, ztensor4,
)
from eqgraph.tensor.elemwise import ELEMWISE_OPS, SCALAR_OPS, Cast, DimShuffle, Elemwise, cast, dimshuffle
from eqgraph.tensor.shape import (
    Reshape, Shape, SpecifyShape, SumToShape, sum_to_shape, expand_dims, flatten, reshape, shape, shape_of, shape_padleft,
    shape_padright, specify_shape, squeeze, transpose,
)
from eqgraph.tensor.join import Join, MakeVector, concatenate, make_vector, stack
from eqgraph.tensor.alloc import (
    Alloc, ARange, alloc, arange, fill, full, full_like, ones, ones_like, zeros, zeros_like,
)
from eqgraph.tensor.math import (
    REDUCTIONS, MatMul, Reduce, Softmax, all, any, argmax, argmin, dot, log_softmax, logsumexp, matmul,
    max, mean, min, normalize_axis, outer, prod, softmax, std, sum, var,
)
from eqgraph.tensor.subtensor import (
    AdvancedIncSubtensor, AdvancedSubtensor, IncSubtensor, Subtensor, getitem, inc_subtensor,
    set_subtensor,
)

# One module-level value per elementwise op: et.add, et.exp, et.switch, ...
globals().update(ELEMWISE_OPS)
add, sub, mul, true_div, int_div, mod, pow = (ELEMWISE_OPS[n] for n in
                                              ("add", "sub", "mul", "true_div", "int_div", "mod", "pow"))
neg, abs, exp, log, sqrt, sqr = (ELEMWISE_OPS[n] for n in ("neg", "abs", "exp", "log", "sqrt", "sqr"))
eq, neq, lt, le, gt, ge = (ELEMWISE_OPS[n] for n in ("eq", "neq", "lt", "le", "gt", "ge"))
switch = ELEMWISE_OPS["switch"]
where = switch
divide = true_div
floor_divide = int_div
round = ELEMWISE_OPS["round"]
clip = ELEMWISE_OPS["clip"]
maximum, minimum = ELEMWISE_OPS["maximum"], ELEMWISE_OPS["minimum"]
