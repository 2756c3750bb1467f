"""One row per tensor op: how to build it, NumPy's answer, and inputs to try.

Shared by the op tests (perform vs NumPy, static shapes, infer_shape), the
array-API portability test and, later, the gradient tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import eqgraph.tensor as et


@dataclass
class Case:
    name: str
    build: Callable            # (*symbolic inputs) -> output variable
    reference: Callable        # (*numpy arrays) -> numpy result
    inputs: st.SearchStrategy  # -> list of numpy arrays
    differentiable: tuple = ()  # input positions with a gradient (for the grad tests)
    tags: set = field(default_factory=set)


def floats(lo=-3.0, hi=3.0):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False, width=64)


def arrays(shape, lo=-3.0, hi=3.0, dtype="float64"):
    if np.dtype(dtype).kind == "f":
        elements = floats(lo, hi)
    elif np.dtype(dtype).kind == "b":
        elements = st.booleans()
    else:
        elements = st.integers(int(lo), int(hi))
    return hnp.arrays(dtype, shape, elements=elements)


SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4)


def unary(lo=-3.0, hi=3.0, dtype="float64"):
    return SHAPES.flatmap(lambda s: st.tuples(arrays(s, lo, hi, dtype)).map(list))


def nary(n, lo=-3.0, hi=3.0, dtypes=("float64",) * 3):
    shapes = hnp.mutually_broadcastable_shapes(num_shapes=n, min_dims=0, max_dims=3, max_side=3)
    return shapes.flatmap(lambda bs: st.tuples(*(arrays(s, lo, hi, d) for s, d in zip(bs.input_shapes, dtypes))).map(list))


def _erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _scipy(name, *first):
    """SciPy's special function ``name`` (imported when a case runs: SciPy is an optional extra)."""
    def reference(*xs):
        from scipy import special
        return getattr(special, name)(*first, *xs)
    return reference


E = et.ELEMWISE_OPS


def _betainc_derivative(name):
    """d betainc / da (or db) by central differences of SciPy's betainc (the step suits the
    parameter ranges drawn, 0.5 to 5)."""
    def reference(a, b, x, h=1e-6):
        from scipy import special
        if name == "betainc_da":
            return (special.betainc(a + h, b, x) - special.betainc(a - h, b, x)) / (2 * h)
        return (special.betainc(a, b + h, x) - special.betainc(a, b - h, x)) / (2 * h)
    return reference

# fmt: off
UNARY = {  # name: (numpy reference, domain lo, hi)
    "neg": (np.negative, -3, 3), "abs": (np.abs, -3, 3), "exp": (np.exp, -3, 3), "exp2": (np.exp2, -3, 3),
    "expm1": (np.expm1, -3, 3), "log": (np.log, 0.1, 5), "log2": (np.log2, 0.1, 5), "log10": (np.log10, 0.1, 5),
    "log1p": (np.log1p, -0.9, 5), "sqrt": (np.sqrt, 0.1, 5), "sqr": (np.square, -3, 3), "sin": (np.sin, -3, 3),
    "cos": (np.cos, -3, 3), "tan": (np.tan, -1.2, 1.2), "tanh": (np.tanh, -3, 3), "sinh": (np.sinh, -3, 3),
    "cosh": (np.cosh, -3, 3), "arcsin": (np.arcsin, -0.9, 0.9), "arccos": (np.arccos, -0.9, 0.9),
    "arctan": (np.arctan, -3, 3), "arcsinh": (np.arcsinh, -3, 3), "arccosh": (np.arccosh, 1.1, 4),
    "arctanh": (np.arctanh, -0.9, 0.9), "sigmoid": (_sigmoid, -5, 5), "softplus": (lambda x: np.logaddexp(0, x), -5, 5),
    "log1mexp": (lambda x: np.log(-np.expm1(x)), -5, -0.01), "erf": (_erf, -2, 2), "floor": (np.floor, -3, 3), "ceil": (np.ceil, -3, 3), "round": (np.round, -3, 3),
    "sign": (np.sign, -3, 3), "isnan": (np.isnan, -3, 3), "isinf": (np.isinf, -3, 3),
    "gammaln": (_scipy("gammaln"), 0.1, 5), "psi": (_scipy("psi"), 0.1, 5), "tri_gamma": (_scipy("polygamma", 1), 0.1, 5),
    "erfc": (_scipy("erfc"), -3, 3), "erfcx": (_scipy("erfcx"), -3, 3), "erfinv": (_scipy("erfinv"), -0.9, 0.9),
    "erfcinv": (_scipy("erfcinv"), 0.1, 1.9), "logit": (_scipy("logit"), 0.1, 0.9), "gamma": (_scipy("gamma"), 0.1, 5),
    "xlogx": (lambda x: x * np.log(x), 0.1, 5), "i0": (_scipy("i0"), -3, 3), "i1": (_scipy("i1"), -3, 3),
    # on real numbers here; complex ones in tests/tensor/test_complex.py
    "real": (np.real, -3, 3), "imag": (np.imag, -3, 3), "conj": (np.conj, -3, 3), "angle": (np.angle, -3, 3),
}
#: two-argument special functions: name -> (reference, (lo, hi) of each input, the inputs with a gradient)
SPECIAL_BINARY = {
    "betaln": (_scipy("betaln"), (0.2, 5), (0.2, 5), (0, 1)), "beta": (_scipy("beta"), (0.2, 5), (0.2, 5), (0, 1)),
    "ive": (_scipy("ive"), (0.5, 3), (0.1, 3), (1,)), "gammainc": (_scipy("gammainc"), (0.5, 3), (0.1, 5), (1,)),
    "gammaincc": (_scipy("gammaincc"), (0.5, 3), (0.1, 5), (1,)),
    "gammaincinv": (_scipy("gammaincinv"), (0.5, 3), (0.1, 0.9), (1,)),
    "gammainccinv": (_scipy("gammainccinv"), (0.5, 3), (0.1, 0.9), (1,)),
    "logdiffexp": (lambda a, b: np.log(np.exp(a) - np.exp(b)), (1, 3), (-3, 0.5), (0, 1)),
}
#: three-argument special functions: name -> (reference, (lo, hi) of each input, the inputs with a gradient)
SPECIAL_TERNARY = {
    "betainc": (_scipy("betainc"), (0.5, 5), (0.5, 5), (0.05, 0.95), (0, 1, 2)),
    "betainc_da": (None, (0.5, 5), (0.5, 5), (0.05, 0.95), ()),
    "betainc_db": (None, (0.5, 5), (0.5, 5), (0.05, 0.95), ()),
}
BINARY = {  # name: (numpy reference, lo, hi of the second input)
    "add": (np.add, -3, 3), "sub": (np.subtract, -3, 3), "mul": (np.multiply, -3, 3),
    "true_div": (np.true_divide, 0.5, 3), "int_div": (np.floor_divide, 0.5, 3), "mod": (np.mod, 0.5, 3),
    "maximum": (np.maximum, -3, 3), "minimum": (np.minimum, -3, 3), "eq": (np.equal, -3, 3),
    "neq": (np.not_equal, -3, 3), "lt": (np.less, -3, 3), "le": (np.less_equal, -3, 3),
    "gt": (np.greater, -3, 3), "ge": (np.greater_equal, -3, 3), "logaddexp": (np.logaddexp, -3, 3),
    "arctan2": (np.arctan2, 0.5, 3),
    "xlogy0": (lambda x, y: np.where(x == 0, 0.0, x * np.log(y)), 0.1, 3),
}
LOGICAL = {"and_": np.logical_and, "or_": np.logical_or, "xor": np.logical_xor}
BITWISE = {"and_": np.bitwise_and, "or_": np.bitwise_or, "xor": np.bitwise_xor}
NONDIFF = {"floor", "ceil", "round", "sign", "isnan", "isinf", "int_div", "eq", "neq", "lt", "le", "gt", "ge"}
#: computed by scipy.special (or cupyx.scipy.special): not in the array API
SPECIAL = {"erf", "gammaln", "psi", "tri_gamma", "erfc", "erfcx", "erfinv", "erfcinv", "logit", "gamma", "i0", "i1",
           "betaln", "beta", "ive", "gammainc", "gammaincc", "gammaincinv", "gammainccinv", "betainc"}
#: CuPy has no form for these (cupyx.scipy.special lacks ive and betainc's derivatives): on the GPU the op
#: refuses by name
NO_GPU = {"ive", "betainc_da", "betainc_db"}
# fmt: on


def _cases():
    cases = []
    for name, (ref, lo, hi) in UNARY.items():
        diff = () if name in NONDIFF else (0,)
        # erf and the special functions are not in the array API: they need NumPy/SciPy or CuPy's
        tags = {"numpy-only"} if name in SPECIAL else set()
        cases.append(Case(name, E[name], ref, unary(lo, hi), diff, tags))
    for name, (ref, lo, hi) in BINARY.items():
        shapes = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3)
        strategy = shapes.flatmap(lambda bs, lo=lo, hi=hi: st.tuples(
            arrays(bs.input_shapes[0], -3, 3), arrays(bs.input_shapes[1], lo, hi)).map(list))
        diff = () if name in NONDIFF else (0, 1)
        cases.append(Case(name, E[name], ref, strategy, diff))
    for name, (ref, (lo0, hi0), (lo1, hi1), diff) in SPECIAL_BINARY.items():
        shapes = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=3)
        strategy = shapes.flatmap(lambda bs, d=(lo0, hi0, lo1, hi1): st.tuples(
            arrays(bs.input_shapes[0], d[0], d[1]), arrays(bs.input_shapes[1], d[2], d[3])).map(list))
        tags = ({"numpy-only"} if name in SPECIAL else set()) | ({"no-gpu"} if name in NO_GPU else set())
        cases.append(Case(name, E[name], ref, strategy, diff, tags))
    for name, (ref, *ranges, diff) in SPECIAL_TERNARY.items():
        shapes = hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, max_side=3)
        strategy = shapes.flatmap(lambda bs, r=ranges: st.tuples(
            *[arrays(s, lo, hi) for s, (lo, hi) in zip(bs.input_shapes, r)]).map(list))
        tags = {"numpy-only"} | ({"no-gpu"} if name in NO_GPU else set())
        cases.append(Case(name, E[name], ref or _betainc_derivative(name), strategy, diff, tags))
    cases.append(Case("polygamma", E["polygamma"], _scipy("polygamma"),
                      st.tuples(arrays((3,), 0, 4, dtype="int64"), arrays((3,), 0.2, 5)).map(list),
                      (1,), {"numpy-only"}))
    cases.append(Case("pow", E["pow"], np.power, nary(2, 0.5, 2.5), (0, 1)))
    for name, ref in LOGICAL.items():
        cases.append(Case(f"{name}[bool]", E[name], ref, nary(2, dtypes=("bool", "bool"))))
    for name, ref in BITWISE.items():
        cases.append(Case(f"{name}[int]", E[name], ref, nary(2, -8, 8, dtypes=("int32", "int32"))))
    cases += [
        Case("invert[bool]", E["invert"], np.logical_not, unary(dtype="bool")),
        Case("invert[int]", E["invert"], np.invert, unary(-8, 8, dtype="int64")),
        Case("clip", E["clip"], lambda x, lo, hi: np.where(x < lo, lo, np.where(x > hi, hi, x)), nary(3), (0, 1, 2)),
        Case("switch", E["switch"], np.where, nary(3, dtypes=("bool", "float64", "float64")), (1, 2)),
        Case("cast[int32]", lambda x: et.cast(x, "int32"), lambda x: x.astype("int32"), unary()),
        Case("cast[float32]", lambda x: et.cast(x, "float32"), lambda x: x.astype("float32"), unary(), (0,)),
        Case("add[int8,float32]", E["add"], np.add, nary(2, -5, 5, dtypes=("int8", "float32")), ()),
        Case("true_div[int]", E["true_div"], np.true_divide, nary(2, 1, 5, dtypes=("int32", "int32"))),
        Case("second", E["second"], lambda x, y: np.broadcast_to(y, np.broadcast_shapes(x.shape, y.shape)),
             nary(2), (1,)),
        # complex results: their gradients (of a real cost) are checked in tests/tensor/test_complex.py
        Case("complex", E["complex"], lambda a, b: a + 1j * b, nary(2)),
        Case("complex_from_polar", E["complex_from_polar"], lambda r, t: r * np.exp(1j * t), nary(2)),
    ]
    cases += _reduction_cases() + _structure_cases()
    return cases


def _axis_cases(ndim_min=1):
    """Strategy of (array, axis, keepdims) with axis None, an int or a tuple."""
    shapes = hnp.array_shapes(min_dims=ndim_min, max_dims=3, min_side=1, max_side=4)

    def with_axis(shape):
        n = len(shape)
        axes = st.one_of(st.none(), st.integers(-n, n - 1),
                         st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True).map(tuple))
        return st.tuples(arrays(shape), axes, st.booleans())

    return shapes.flatmap(with_axis)


def _reduction_cases():
    cases = []
    reductions = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "mean": np.mean,
                  "all": np.all, "any": np.any, "var": np.var, "std": np.std}
    for name, ref in reductions.items():
        fn = getattr(et, name)
        diff = () if name in ("all", "any") else (0,)
        cases.append(Case(
            name, None, None, _axis_cases(), diff, tags={"axis"} | ({"minmax"} if name in ("max", "min") else set())))
        cases[-1].build = lambda x, axis, keepdims, fn=fn: fn(x, axis=axis, keepdims=keepdims)
        cases[-1].reference = lambda x, axis, keepdims, ref=ref: ref(x, axis=axis, keepdims=keepdims)
    for name, ref in {"argmax": np.argmax, "argmin": np.argmin}.items():
        fn = getattr(et, name)
        strategy = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4).flatmap(
            lambda s: st.tuples(arrays(s), st.one_of(st.none(), st.integers(-len(s), len(s) - 1)), st.booleans()))
        case = Case(name, lambda x, axis, keepdims, fn=fn: fn(x, axis=axis, keepdims=keepdims),
                    lambda x, axis, keepdims, ref=ref: ref(x, axis=axis, keepdims=keepdims), strategy, tags={"axis"})
        cases.append(case)
    cases.append(Case("logsumexp", lambda x, axis, keepdims: et.logsumexp(x, axis, keepdims),
                      lambda x, axis, keepdims: np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims)),
                      _axis_cases(), (0,), tags={"axis"}))
    for log in (False, True):
        def ref(x, axis, keepdims, log=log):
            e = np.exp(x - x.max(axis=axis, keepdims=True))
            s = e / e.sum(axis=axis, keepdims=True)
            return np.log(s) if log else s
        strategy = hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4).flatmap(
            lambda s: st.tuples(arrays(s), st.integers(-len(s), len(s) - 1), st.just(False)))
        fn = et.log_softmax if log else et.softmax
        cases.append(Case("log_softmax" if log else "softmax", lambda x, axis, k, fn=fn: fn(x, axis=axis),
                          ref, strategy, (0,), tags={"axis"}))
    return cases


def _matmul_shapes():
    n = st.integers(1, 4)
    return st.one_of(
        st.tuples(n, n, n).map(lambda t: ((t[0], t[1]), (t[1], t[2]))),
        st.tuples(n, n).map(lambda t: ((t[0], t[1]), (t[1],))),
        st.tuples(n, n).map(lambda t: ((t[0],), (t[0], t[1]))),
        n.map(lambda k: ((k,), (k,))),
        st.tuples(n, n, n, n).map(lambda t: ((t[0], t[1], t[2]), (t[2], t[3]))),
        st.tuples(n, n, n, n).map(lambda t: ((t[0], 1, t[1], t[2]), (t[3], t[2], 2))),
    )


def _structure_cases():
    def pair(shapes):
        return st.tuples(arrays(shapes[0]), arrays(shapes[1])).map(list)

    sq = hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=4)
    vec = hnp.array_shapes(min_dims=1, max_dims=1, min_side=1, max_side=5)
    one_vector = vec.flatmap(lambda s: st.tuples(arrays(s)).map(list))
    cases = [
        Case("matmul", et.matmul, np.matmul, _matmul_shapes().flatmap(pair), (0, 1)),
        Case("dot", et.dot, np.dot, _matmul_shapes().filter(lambda s: len(s[0]) <= 2 and len(s[1]) <= 2).flatmap(pair), (0, 1)),
        Case("outer", et.outer, np.outer, st.tuples(vec, vec).flatmap(pair), (0, 1)),
        Case("transpose", lambda x: x.T, lambda x: x.T, unary(), (0,)),
        Case("dimshuffle", lambda x: x.dimshuffle(1, "x", 0), lambda x: x.T[:, None, :],
             hnp.array_shapes(min_dims=2, max_dims=2, max_side=4).flatmap(lambda s: st.tuples(arrays(s)).map(list)), (0,)),
        Case("reshape", lambda x: x.reshape((-1, 2)), lambda x: x.reshape((-1, 2)),
             st.tuples(st.integers(1, 3), st.integers(1, 3)).flatmap(lambda t: st.tuples(arrays((t[0], 2 * t[1]))).map(list)), (0,)),
        Case("reshape[symbolic]", lambda x: x.reshape((x.shape[1], x.shape[0])), lambda x: x.reshape((x.shape[1], x.shape[0])),
             sq.filter(lambda s: len(s) == 2).flatmap(lambda s: st.tuples(arrays(s)).map(list)), (0,)),
        Case("flatten", lambda x: x.flatten(), lambda x: x.reshape(-1), unary(), (0,)),
        Case("flatten[2]", lambda x: x.flatten(2), lambda x: x.reshape(x.shape[0], -1), sq.flatmap(lambda s: st.tuples(arrays(s)).map(list)), (0,)),
        Case("shape", lambda x: x.shape, lambda x: np.asarray(x.shape, dtype="int64"), unary()),
        Case("specify_shape", lambda x: et.specify_shape(x, (None,) * x.ndim), lambda x: x, unary(), (0,)),
        Case("alloc", lambda v, x: et.alloc(v, x.shape[0], 3), lambda v, x: np.broadcast_to(v, (x.shape[0], 3)).copy(),
             st.tuples(arrays(()), arrays(st.integers(1, 4).map(lambda n: (n,)))).map(list), (0,)),
        Case("zeros_like", et.zeros_like, np.zeros_like, unary()),
        Case("ones_like", et.ones_like, np.ones_like, unary()),
        Case("full", lambda x: et.full((2, x.shape[0]), 7.0), lambda x: np.full((2, x.shape[0]), 7.0), one_vector),
        Case("zeros", lambda x: et.zeros((x.shape[0], 2)), lambda x: np.zeros((x.shape[0], 2)), one_vector),
        Case("arange", lambda n: et.arange(1, n, 2), lambda n: np.arange(1, n, 2),
             st.integers(0, 9).map(lambda n: [np.asarray(n, dtype="int64")])),
        Case("concatenate", lambda x, y: et.concatenate([x, y], axis=1), lambda x, y: np.concatenate([x, y], axis=1),
             st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)).flatmap(
                 lambda t: st.tuples(arrays((t[0], t[1])), arrays((t[0], t[2]))).map(list)), (0, 1)),
        Case("stack", lambda x, y: et.stack([x, y], axis=1), lambda x, y: np.stack([x, y], axis=1),
             vec.flatmap(lambda s: st.tuples(arrays(s), arrays(s)).map(list)), (0, 1)),
        Case("make_vector", lambda a, b: et.stack([a, b]), lambda a, b: np.stack([a, b]),
             st.tuples(arrays(()), arrays(())).map(list), (0, 1)),
        Case("subtensor", lambda x: x[1:, 0], lambda x: x[1:, 0],
             hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=4).flatmap(lambda s: st.tuples(arrays(s)).map(list)), (0,)),
        Case("subtensor[step]", lambda x: x[::-2], lambda x: x[::-2], unary().filter(lambda a: a[0].ndim), (0,)),
        Case("subtensor[symbolic]", lambda x, i: x[i:], lambda x, i: x[i:],
             vec.flatmap(lambda s: st.tuples(arrays(s), st.integers(-s[0], s[0]).map(lambda i: np.asarray(i, "int64"))).map(list)), (0,)),
        Case("subtensor[newaxis]", lambda x: x[None, ..., None], lambda x: x[None, ..., None], unary(), (0,)),
        Case("advanced_subtensor", lambda x, i: x[i], lambda x, i: x[i],
             vec.flatmap(lambda s: st.tuples(arrays(s), hnp.arrays("int64", st.integers(1, 4).map(lambda n: (n,)), elements=st.integers(-s[0], s[0] - 1))).map(list)), (0,)),
        Case("advanced_subtensor[2d]", lambda x, i: x[:, i], lambda x, i: x[:, i],
             sq.filter(lambda s: len(s) == 2).flatmap(lambda s: st.tuples(arrays(s), hnp.arrays("int64", (2, 2), elements=st.integers(0, s[1] - 1))).map(list)), (0,)),
        Case("advanced_subtensor[mask]", lambda x: x[x > 0], lambda x: x[x > 0], unary().filter(lambda a: a[0].ndim)),
        Case("set_subtensor", lambda x, y: et.set_subtensor(x[1:], y), lambda x, y: _set(x, slice(1, None), y),
             vec.flatmap(lambda s: st.tuples(arrays(s), arrays(()))).map(list), (0, 1)),
        Case("inc_subtensor", lambda x, y: et.inc_subtensor(x[:, 0], y), lambda x, y: _inc(x, (slice(None), 0), y),
             sq.filter(lambda s: len(s) == 2).flatmap(lambda s: st.tuples(arrays(s), arrays((s[0],)))).map(list), (0, 1)),
        Case("inc_subtensor[advanced]", lambda x, i, y: et.inc_subtensor(x[i], y), _add_at,
             vec.flatmap(lambda s: st.tuples(arrays(s), hnp.arrays("int64", (3,), elements=st.integers(0, s[0] - 1)), arrays(()))).map(list),
             (0, 2), tags={"numpy-only"}),
    ]
    return cases


def _set(x, idx, y):
    out = x.copy()
    out[idx] = y
    return out


def _inc(x, idx, y):
    out = x.copy()
    out[idx] += y
    return out


def _add_at(x, i, y):
    out = x.copy()
    np.add.at(out, i, y)
    return out


def split_inputs(case, value):
    """(arrays, extra python arguments) for one drawn example."""
    if "axis" in case.tags:
        return [value[0]], tuple(value[1:])
    return list(value), ()


def symbolic_inputs(arrays, static: bool):
    return [et.TensorType(a.dtype, a.shape if static else (None,) * a.ndim)(f"x{i}")
            for i, a in enumerate(arrays)]


def draw_case(case, data, static=None):
    """One drawn example of ``case``: (arrays, extra Python arguments, symbolic inputs,
    symbolic output); the inputs' static shapes are known, unknown, or drawn (None)."""
    arrays, extra = split_inputs(case, data.draw(case.inputs, label="inputs"))
    if static is None:
        static = data.draw(st.booleans(), label="static shapes")
    xs = symbolic_inputs(arrays, static)
    return arrays, extra, xs, case.build(*xs, *extra)


CASES = _cases()
CASE_IDS = [c.name for c in CASES]
