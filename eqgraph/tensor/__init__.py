"""The user's vocabulary, like ``aesara.tensor``: ``import eqgraph.tensor as et``.

Types and variables (``TensorType``, ``dmatrix``, ``vector(...)``), constants,
and NumPy-named operations that build graph nodes.
"""

import sys as _sys

from eqgraph.tensor import variable
from eqgraph.tensor.type import FLOATX, TensorType
from eqgraph.tensor.variable import TensorConstant, TensorVariable
from eqgraph.tensor.basic import (
    NotScalarConstantError, as_tensor, as_tensor_variable, col, constant, get_scalar_constant_value,
    get_underlying_scalar_constant_value, matrix, row, scalar, scalar_from_tensor, tensor, tensor3, tensor4,
    tensor_from_scalar, upcast, vector, TYPES,
)
from eqgraph.tensor.basic import (  # the prefixed TensorTypes: dmatrix, ivector, ...
    bscalar, bvector, brow, bcol, bmatrix, btensor3, btensor4,
    wscalar, wvector, wrow, wcol, wmatrix, wtensor3, wtensor4,
    iscalar, ivector, irow, icol, imatrix, itensor3, itensor4,
    lscalar, lvector, lrow, lcol, lmatrix, ltensor3, ltensor4,
    fscalar, fvector, frow, fcol, fmatrix, ftensor3, ftensor4,
    dscalar, dvector, drow, dcol, dmatrix, dtensor3, dtensor4,
    cscalar, cvector, crow, ccol, cmatrix, ctensor3, ctensor4,
    zscalar, zvector, zrow, zcol, zmatrix, ztensor3, ztensor4,
)
from eqgraph.tensor.plurals import PLURALS
from eqgraph.tensor.elemwise import ELEMWISE_OPS, SCALAR_OPS, Cast, Elemwise, cast
from eqgraph.tensor.dimshuffle_op import DimShuffle, dimshuffle
from eqgraph.tensor.shape import (
    Reshape, Shape, SpecifyShape, SumToShape, sum_to_shape, expand_dims, flatten, reshape, shape, shape_of, shape_padleft,
    shape_padright, specify_shape, squeeze, transpose, matrix_transpose, moveaxis, swapaxes,
)
from eqgraph.tensor.join import Join, concatenate, stack
from eqgraph.tensor.shape import MakeVector, make_vector
from eqgraph.tensor.alloc import (
    Alloc, ARange, alloc, arange, empty, fill, full, full_like, ones, ones_like, zeros, zeros_like,
)
from eqgraph.tensor.math import (
    REDUCTIONS, MatMul, Reduce, Softmax, all, any, argmax, argmin, dot, logsumexp, matmul,
    max, max_and_argmax, mean, min, normalize_axis, outer, prod, std, sum, var,
    ceil_intdiv, deg2rad, dense_dot, rad2deg, reciprocal, round_half_away_from_zero, round_half_to_even, trunc,
)
from eqgraph.tensor.conditional import IfElse, ifelse
from eqgraph.tensor.assertion import Assert, CheckAndRaise, assert_op, check_and_raise
from eqgraph.tensor import random
from eqgraph.tensor.random import RandomStream
from eqgraph.tensor.subtensor import (
    AdvancedIncSubtensor, AdvancedSubtensor, IncSubtensor, Subtensor, getitem, inc_subtensor,
    set_subtensor, advanced_inc_subtensor, advanced_set_subtensor, advanced_subtensor, advanced_subtensor1, flip,
    take,
)
from eqgraph.tensor.index_shapes import get_canonical_form_slice, indexed_result_shape

# One module-level value per elementwise op, bound from the registry (tensor/elemwise.py): et.add,
# et.exp, et.switch, ...; tests/test_public_api.py checks that each is here and in __all__
globals().update(ELEMWISE_OPS)
globals().update(PLURALS)  # et.dvectors("x", "y"), et.matrices(3), ... (tensor/plurals.py)
divide = ELEMWISE_OPS["true_div"]
floor_divide = ELEMWISE_OPS["int_div"]
digamma = ELEMWISE_OPS["psi"]  # PyTensor's other name of psi

# everyday NumPy functions: after the elementwise names, since ``where`` here replaces
# the elementwise one above (it also takes one argument, as np.where does)
from eqgraph.tensor.sorting import Sort, argsort, sort, take_along_axis  # noqa: E402
from eqgraph.tensor.extra_ops import (  # noqa: E402
    CumOp, Nonzero, Repeat, allclose, array_split_points, bincount, fill_diagonal, fill_diagonal_offset, atleast_1d, atleast_2d, atleast_3d, broadcast_to,
    column_stack, cumprod, cumsum, diff, dstack, eye, flatnonzero, hstack, identity_like,
    isclose, isfinite, nan_to_num, nonzero, pad, repeat, roll, split, tri, tril, triu, vstack, where,
)
from eqgraph.tensor.extra_ops import atleast_Nd  # noqa: E402
from eqgraph.tensor.extra_ops_pytensor import (  # noqa: E402
    get_vector_length, horizontal_stack, is_flat, mgrid, nonzero_values, ogrid, stacklists, tile, tril_indices,
    tril_indices_from, triu_indices, triu_indices_from, Unique, unique, vertical_stack,
)
from eqgraph.tensor.numpy_compositions import (  # noqa: E402
    alloc_diag, bartlett, broadcast_shape, choose, compress, inverse_permutation, permute_row_elements,
    ravel_multi_index, unravel_index, broadcast_arrays,
)
from eqgraph.tensor.math_compositions import (  # noqa: E402
    cov, isneginf, isposinf, largest, matvec, median, power, ptp, smallest, vecdot, vecmat,
)
from eqgraph.tensor.spacing import geomspace, linspace, logspace  # noqa: E402
from eqgraph.tensor.products import (  # noqa: E402
    Einsum, ExtractDiag, diag, diagonal, einsum, kron, tensordot, trace,
)
from eqgraph.tensor.nnet import (  # noqa: E402
    binary_crossentropy, categorical_crossentropy, log_softmax, sigmoid_binary_crossentropy, softmax,
)
from eqgraph.tensor.conv import Convolve, conv1d, conv2d  # noqa: E402
from eqgraph.tensor import linalg  # noqa: E402
from eqgraph.tensor.blockwise import Blockwise, vectorize, vectorize_graph  # noqa: E402
from eqgraph.tensor import special  # noqa: E402  (PyTensor's pt.special names)

__all__ = [
    # types and variables
    "FLOATX", "TensorType", "TensorConstant", "TensorVariable", "NotScalarConstantError",
    "as_tensor", "as_tensor_variable", "col", "constant", "get_scalar_constant_value",
    "get_underlying_scalar_constant_value", "matrix", "row", "scalar", "scalar_from_tensor", "tensor", "tensor3",
    "tensor4", "tensor_from_scalar", "upcast", "vector", "TYPES",
    # the prefixed TensorTypes
    "bscalar", "bvector", "brow", "bcol", "bmatrix", "btensor3", "btensor4",
    "wscalar", "wvector", "wrow", "wcol", "wmatrix", "wtensor3", "wtensor4",
    "iscalar", "ivector", "irow", "icol", "imatrix", "itensor3", "itensor4",
    "lscalar", "lvector", "lrow", "lcol", "lmatrix", "ltensor3", "ltensor4",
    "fscalar", "fvector", "frow", "fcol", "fmatrix", "ftensor3", "ftensor4",
    "dscalar", "dvector", "drow", "dcol", "dmatrix", "dtensor3", "dtensor4",
    "cscalar", "cvector", "crow", "ccol", "cmatrix", "ctensor3", "ctensor4",
    "zscalar", "zvector", "zrow", "zcol", "zmatrix", "ztensor3", "ztensor4",
    # elementwise
    "ELEMWISE_OPS", "SCALAR_OPS", "Cast", "DimShuffle", "Elemwise", "cast", "dimshuffle",
    "where", "divide", "floor_divide", "digamma",
    # shapes
    "Reshape", "Shape", "SpecifyShape", "SumToShape", "sum_to_shape", "expand_dims", "flatten",
    "reshape", "shape", "shape_of", "shape_padleft", "shape_padright", "specify_shape", "squeeze",
    "transpose", "matrix_transpose", "moveaxis", "swapaxes",
    # joining
    "Join", "MakeVector", "concatenate", "make_vector", "stack",
    # allocation
    "Alloc", "ARange", "alloc", "arange", "empty", "fill", "full", "full_like", "ones", "ones_like", "zeros",
    "zeros_like",
    # reductions and products
    "REDUCTIONS", "MatMul", "Reduce", "Softmax", "all", "any", "argmax", "argmin", "dot",
    "log_softmax", "logsumexp", "matmul", "max", "max_and_argmax", "mean", "min", "normalize_axis", "outer", "prod",
    "softmax", "std", "sum", "var", "dense_dot",
    # elementwise compositions
    "ceil_intdiv", "deg2rad", "rad2deg", "reciprocal", "round_half_away_from_zero", "round_half_to_even", "trunc",
    # control flow
    "IfElse", "ifelse",
    # run-time checks
    "Assert", "CheckAndRaise", "assert_op", "check_and_raise",
    # random numbers
    "RandomStream",
    # indexing
    "AdvancedIncSubtensor", "AdvancedSubtensor", "IncSubtensor", "Subtensor", "getitem",
    "inc_subtensor", "set_subtensor", "advanced_inc_subtensor", "advanced_set_subtensor", "advanced_subtensor",
    "advanced_subtensor1", "flip", "take", "get_canonical_form_slice", "indexed_result_shape",
    # everyday NumPy functions
    "Sort", "argsort", "sort", "take_along_axis",
    "CumOp", "Nonzero", "Repeat", "allclose", "array_split_points", "bincount", "fill_diagonal",
    "fill_diagonal_offset", "atleast_1d", "atleast_2d", "atleast_3d", "atleast_Nd",
    "is_flat", "mgrid", "nonzero_values", "ogrid", "stacklists", "tril_indices", "tril_indices_from", "triu_indices",
    "triu_indices_from", "Unique", "unique",
    "broadcast_to", "column_stack", "cumprod", "cumsum", "diff", "dstack", "eye", "flatnonzero", "get_vector_length",
    "horizontal_stack", "hstack", "identity_like", "isclose", "isfinite", "nan_to_num", "nonzero", "pad",
    "repeat", "roll", "split", "tile", "tri", "tril", "triu", "vertical_stack", "vstack",
    "alloc_diag", "bartlett", "broadcast_shape", "choose", "compress", "inverse_permutation",
    "permute_row_elements", "ravel_multi_index", "unravel_index", "broadcast_arrays",
    "isneginf", "isposinf", "largest", "median", "power", "ptp", "smallest", "cov", "matvec", "vecdot", "vecmat",
    "geomspace", "linspace", "logspace",
    "Einsum", "ExtractDiag", "diag", "diagonal", "einsum", "kron", "tensordot", "trace",
    "binary_crossentropy", "categorical_crossentropy", "sigmoid_binary_crossentropy",
    "Convolve", "conv1d", "conv2d",
    "Blockwise", "vectorize", "vectorize_graph",
]
__all__ += [name for name in ELEMWISE_OPS if name not in __all__]   # every elementwise op's name
__all__ += ["PLURALS", *sorted(PLURALS)]   # the plural constructors

# The operators of TensorVariable call the ops through this namespace (see variable.py).
variable.et = _sys.modules[__name__]
