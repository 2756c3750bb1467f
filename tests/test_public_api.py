"""The public surface: each package's ``__all__`` is exactly what it exports, eqgraph.tensor's
names are those users already rely on, and which modules are shadowed by a name is known."""

import importlib
import pkgutil
import types

import pytest

import eqgraph

# eqgraph.tensor's public names (``dir``) before it had ``__all__``; a change here is an API change.
TENSOR_NAMES = """
isneginf isposinf largest math_compositions median power ptp smallest
Assert CheckAndRaise assert_op assertion check_and_raise
ARange AdvancedIncSubtensor AdvancedSubtensor Alloc Cast DimShuffle ELEMWISE_OPS Elemwise FLOATX
IncSubtensor Join MakeVector MatMul NotScalarConstantError REDUCTIONS Reduce Reshape SCALAR_OPS
Shape Softmax SpecifyShape Subtensor SumToShape TYPES TensorConstant TensorType TensorVariable abs
add all alloc and_ any arange arccos arcsin arctan argmax argmin as_tensor as_tensor_variable basic
bcol bmatrix brow bscalar btensor3 btensor4 bvector cast ccol ceil clip cmatrix col concatenate
constant cos cosh crow cscalar ctensor3 ctensor4 cvector dcol dimshuffle divide dmatrix dot drow
dscalar dtensor3 dtensor4 dvector elemwise eq erf exp exp2 expand_dims expm1 fcol fill flatten floor
floor_divide fmatrix frow fscalar ftensor3 ftensor4 full full_like fvector ge
cast_policy get_canonical_form_slice get_scalar_constant_value get_vector_length getitem index_shapes indexed_result_shape grad_blocker gt icol IfElse ifelse conditional RandomStream random rng_type imatrix inc_subtensor int_div invert irow iscalar isinf
isnan itensor3 itensor4 ivector join lcol le lmatrix log log10 log1p log2 log1mexp log_softmax logaddexp logsumexp lrow
lscalar lt ltensor3 ltensor4 lvector make_vector math matmul matrix matrix_transpose max max_and_argmax maximum mean min minimum mod
mul neg neq normalize_axis ones ones_like or_ outer pow prod reshape round row scalar second
set_subtensor shape shape_of sharedvar shape_padleft shape_padright sigmoid sign sin sinh softmax softplus
specify_shape sqr sqrt squeeze stack std sub subtensor sum sum_to_shape switch tan tanh tensor
tensor3 tensor4 transpose true_div type var variable vector wcol where wmatrix wrow wscalar wtensor3 wtensor4
wvector xor zcol zeros zeros_like zmatrix zrow zscalar ztensor3 ztensor4 zvector
Convolve CumOp Einsum ExtractDiag Nonzero Repeat Sort allclose argsort array_split_points atleast_1d
atleast_2d atleast_3d binary_crossentropy broadcast_to categorical_crossentropy column_stack conv
conv1d conv2d cumprod cumsum diag diagonal diff dstack einsum extra_ops eye flatnonzero
horizontal_stack hstack identity_like atleast_Nd is_flat mgrid ogrid nonzero_values stacklists tril_indices tril_indices_from triu_indices triu_indices_from extra_ops_pytensor isclose isfinite kron linalg nan_to_num nnet nonzero pad
products repeat roll sigmoid_binary_crossentropy sort sorting split take_along_axis tensordot tile
trace tri tril triu vertical_stack vstack random_draws random_op special digamma dimshuffle_op numpy_compositions
bincount fill_diagonal fill_diagonal_offset geomspace linspace logspace spacing PLURALS plurals duplicates scalar_ops special_functions
Blockwise blockwise vectorize vectorize_graph
get_underlying_scalar_constant_value upcast moveaxis swapaxes dense_dot ceil_intdiv deg2rad rad2deg reciprocal
round_half_away_from_zero round_half_to_even trunc advanced_inc_subtensor advanced_set_subtensor advanced_subtensor
advanced_subtensor1 flip take alloc_diag bartlett broadcast_shape choose compress inverse_permutation
permute_row_elements ravel_multi_index cov matvec vecdot vecmat empty unravel_index broadcast_arrays Unique unique scalar_from_tensor tensor_from_scalar
""".split()

# Submodules that a same-named export hides as a package attribute. They stay importable by
# path (``import eqgraph.tensor.shape`` works through sys.modules), and each export is public
# API: eg.function and eg.grad, et.alloc and et.shape (the variable module is tensor/variable.py
# because et.var, the variance, would hide a var.py). Renaming these modules would empty this
# list; a new collision fails the test.
KNOWN_SHADOWED = {
    "eqgraph": {"function", "grad"},
    "eqgraph.rules": {"encode", "saturate"},
    "eqgraph.tensor": {"alloc", "shape"},
}


def _packages():
    found = [eqgraph]
    for info in pkgutil.walk_packages(eqgraph.__path__, "eqgraph."):
        if info.ispkg:
            found.append(importlib.import_module(info.name))
    return found


def _public(module):
    return {n for n in dir(module) if not n.startswith("_")}


def test_tensor_names_are_unchanged():
    """The pinned names, and every elementwise op of the registry (adding one adds its name)."""
    et = importlib.import_module("eqgraph.tensor")
    assert sorted(_public(et)) == sorted(set(TENSOR_NAMES) | set(et.ELEMWISE_OPS) | set(et.PLURALS))


def test_tensor_all_lists_every_public_name_but_its_submodules():
    et = importlib.import_module("eqgraph.tensor")
    assert len(et.__all__) == len(set(et.__all__))
    submodules = {n for n in TENSOR_NAMES if isinstance(getattr(et, n), types.ModuleType)}
    assert submodules == {"assertion", "basic", "conditional", "elemwise", "grad_blocker", "join", "math", "random", "rng_type",
                          "sharedvar", "subtensor", "type", "variable", "conv", "extra_ops", "linalg", "nnet",
                          "products", "sorting", "random_draws", "random_op", "spacing", "plurals", "duplicates", "special",
                          "blockwise", "scalar_ops", "special_functions", "dimshuffle_op", "numpy_compositions", "math_compositions", "index_shapes",
                          "extra_ops_pytensor", "cast_policy"}
    assert set(et.__all__) == (set(TENSOR_NAMES) | set(et.ELEMWISE_OPS) | set(et.PLURALS)) - submodules


def test_every_elementwise_op_is_a_tensor_name():
    et = importlib.import_module("eqgraph.tensor")
    assert set(et.ELEMWISE_OPS) == set(et.SCALAR_OPS)
    for name, op in et.ELEMWISE_OPS.items():
        assert getattr(et, name) is op, name
    assert et.divide is et.true_div and et.floor_divide is et.int_div and et.digamma is et.psi
    assert et.special.gammaln is et.gammaln and et.special.digamma is et.psi  # PyTensor's pt.special names
    c, a = et.bvector("c"), et.dvector("a")
    assert et.where(c, a, -a).owner.op is et.switch  # where with one argument is nonzero (extra_ops.py)


@pytest.mark.parametrize("name", ["eqgraph", "eqgraph.terms", "eqgraph.tensor", "eqgraph.grad", "eqgraph.extract",
                                  "eqgraph.loops"])
def test_all_is_exactly_the_public_names(name):
    package = importlib.import_module(name)
    exported = set(package.__all__)
    assert len(package.__all__) == len(exported), "a name listed twice"
    missing = [n for n in exported if not hasattr(package, n)]
    assert not missing, f"{name}.__all__ names what it does not define: {missing}"
    public_values = {n for n in _public(package) if not isinstance(getattr(package, n), types.ModuleType)}
    exported_values = {n for n in exported if not isinstance(getattr(package, n), types.ModuleType)}
    assert exported_values == public_values, f"{name}: not in __all__: {sorted(public_values - exported_values)}"


def test_star_import_gives_the_names():
    namespace = {}
    exec("from eqgraph.tensor import *", namespace)
    assert namespace["dmatrix"] is importlib.import_module("eqgraph.tensor").dmatrix
    assert "math" not in namespace  # the submodule is not exported over the standard library's name


def test_no_new_module_is_shadowed_by_a_name_its_package_exports():
    shadowed = {}
    for package in _packages():
        for info in pkgutil.iter_modules(package.__path__):
            value = getattr(package, info.name, None)
            if value is not None and value is not importlib.import_module(f"{package.__name__}.{info.name}"):
                shadowed.setdefault(package.__name__, set()).add(info.name)
    new = {name: sorted(modules - KNOWN_SHADOWED.get(name, set())) for name, modules in shadowed.items()}
    assert not any(new.values()), f"modules hidden by a same-named export: {new}"


def test_extract_is_the_function_and_its_module_is_extraction():
    import eqgraph.extract

    module = importlib.import_module("eqgraph.extract.extraction")
    assert eqgraph.extract.extract is module.extract and callable(eqgraph.extract.extract)
    assert eqgraph.extract.Extraction is module.Extraction
