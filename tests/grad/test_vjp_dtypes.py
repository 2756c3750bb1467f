"""The VJP table walked with operands that are not float64: integer, unsigned and boolean
operands (conditions, masks, non-differentiable integer inputs) and float32 ones. Every
elementwise entry is checked against central finite differences of NumPy's own function; the
dtype-sensitive structural entries (switch, clip, masks, ifelse, scan) against known answers.

A VJP written for floats can go wrong on other dtypes in ways a float64 test never shows:
``invert`` is bitwise NOT on integers, ``b * b`` wraps around in int8/uint8, ``b - 1`` is 255
for a uint8 0, and a float64 constant turns a float32 gradient into a float64 one."""

import math

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.grad import vjps
from eqgraph.tensor.type import DISCRETE_DTYPES
from eqgraph.terms.walk import ancestors

NO_RULES = {"rulesets": []}  # the VJPs' own graphs, not what the rules make of them
E = et.ELEMWISE_OPS

# where each elementwise entry is differentiable, per input: wide enough that an integer
# operand's square or difference wraps around in int8 and uint8 (mod's a > 0: an integer a
# at 0 sits on its jump)
# fmt: off
WIDE, POSITIVE = (-100, 100), (1, 100)
DOMAINS = {
    "neg": [WIDE], "abs": [WIDE], "exp": [(-5, 5)], "exp2": [(-5, 5)], "expm1": [(-5, 5)],
    "log": [POSITIVE], "log2": [POSITIVE], "log10": [POSITIVE], "log1p": [(0, 100)], "sqrt": [POSITIVE],
    "sqr": [WIDE], "sin": [WIDE], "cos": [WIDE], "tan": [(-1, 1)], "arcsin": [(-0.9, 0.9)],
    "arccos": [(-0.9, 0.9)], "arctan": [WIDE], "sinh": [(-5, 5)], "cosh": [(-5, 5)], "tanh": [(-5, 5)],
    "arcsinh": [WIDE], "arccosh": [(2, 100)], "arctanh": [(-0.9, 0.9)], "arctan2": [POSITIVE, WIDE],
    "gammaln": [POSITIVE], "psi": [POSITIVE], "erfc": [(-3, 3)], "erfcx": [(-3, 5)], "erfinv": [(-0.9, 0.9)],
    "erfcinv": [(0.1, 1.9)], "logit": [(0.05, 0.95)], "xlogx": [POSITIVE], "xlogy0": [WIDE, POSITIVE],
    "gamma": [(0.5, 5)], "betaln": [POSITIVE, POSITIVE], "beta": [(0.5, 5), (0.5, 5)], "i0": [(-5, 5)],
    "i1": [(-5, 5)], "ive": [(0, 3), (1, 5)], "gammainc": [(1, 5), (1, 5)], "gammaincc": [(1, 5), (1, 5)],
    "gammaincinv": [(1, 5), (0.1, 0.9)], "gammainccinv": [(1, 5), (0.1, 0.9)], "logdiffexp": [(3, 20), (-20, 1)],
    "sigmoid": [(-20, 20)], "softplus": [(-20, 20)], "log1mexp": [(-20, -0.01)], "erf": [(-3, 3)],
    "add": [WIDE, WIDE], "sub": [WIDE, WIDE], "mul": [WIDE, WIDE], "true_div": [WIDE, POSITIVE],
    "pow": [(0.5, 3), (0, 4)], "maximum": [WIDE, WIDE], "minimum": [WIDE, WIDE], "mod": [POSITIVE, POSITIVE],
    "logaddexp": [(-20, 20), (-20, 20)], "clip": [WIDE, (-100, 0), (0, 100)], "second": [WIDE, WIDE],
    "switch": [(-3, 3), WIDE, WIDE], "real": [WIDE], "imag": [WIDE], "conj": [WIDE], "angle": [POSITIVE],
}
# fmt: on
NOT_DIFFERENTIABLE_IN = {"switch": {0}, "second": {0},  # a condition; an operand read for its shape
                         # the order and shape parameters, whose gradients are not implemented (NullType)
                         **dict.fromkeys(["ive", "gammainc", "gammaincc", "gammaincinv", "gammainccinv"], {0})}
INTEGER_DTYPES = ["bool", "uint8", "int8", "int64"]
H = 1e-6


#: VJPs that raise NotImplementedError, naming the op (tests/tensor/test_special.py)
NOT_IMPLEMENTED = {"tri_gamma"}
#: complex results, whose gradients (of a real cost) tests/tensor/test_complex.py checks
COMPLEX_RESULTS = {"complex", "complex_from_polar"}
#: an integer order (polygamma) or three operands (betainc and its derivatives): their dtypes and
#: gradients are checked in tests/tensor/test_special.py, not walked here
NOT_WALKED = {"polygamma", "betainc", "betainc_da", "betainc_db"}


def test_every_elementwise_vjp_is_walked():
    assert sorted(k for k in vjps.VJPS if k in et.SCALAR_OPS and k not in NOT_IMPLEMENTED | COMPLEX_RESULTS | NOT_WALKED) \
        == sorted(DOMAINS)


def _integers(lo, hi, dtype, rng, n):
    """``n`` integers of ``dtype`` in [lo, hi], with both ends (where an overflow shows first)."""
    info = (0, 1) if dtype == "bool" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
    lo, hi = max(math.ceil(lo), info[0]), min(math.floor(hi), info[1])
    if lo > hi:
        return None
    return np.r_[lo, hi, rng.integers(lo, hi + 1, n - 2)].astype(dtype)


def _floats(lo, hi, rng, n):
    return rng.uniform(lo, hi, n) if (lo, hi) != (0, 4) else rng.uniform(0.5, 3.5, n)


def _finite_difference(ref, values, p, weights):
    """d sum(weights * ref(*values)) / d values[p], elementwise, with values[p] read as a real."""
    up, down = list(values), list(values)
    up[p] = values[p].astype(np.float64) + H
    down[p] = values[p].astype(np.float64) - H
    with np.errstate(all="ignore"):
        return weights * (ref(*up).astype(np.float64) - ref(*down).astype(np.float64)) / (2 * H)


def _reference(name):
    fn = et.SCALAR_OPS[name].impl(np)
    return lambda *xs: np.asarray(fn(*xs))


def _cases(dtype):
    """(name, position of the integer operand, values): one per entry and input position."""
    rng = np.random.default_rng(sum(map(ord, dtype)))
    for name, domains in sorted(DOMAINS.items()):
        for p, (lo, hi) in enumerate(domains):
            ints = _integers(lo, hi, dtype, rng, 6)
            if ints is None:
                continue
            values = [ints if i == p else _floats(*d, rng, 6) for i, d in enumerate(domains)]
            yield name, p, values


def _discrepancies(dtype):
    """Every (op, input) whose gradient disagrees with finite differences, with an integer
    or boolean operand of ``dtype``: one compiled function for all entries."""
    cases, variables, wrt, costs = [], [], [], []
    for name, p, values in _cases(dtype):
        ins = [et.TensorType(v.dtype.name, (None,))(f"{name}{i}") for i, v in enumerate(values)]
        weights = np.linspace(0.5, 1.5, len(values[0]))
        try:
            out = E[name](*ins)
        except TypeError:  # refused when the graph is built: -x of a bool (NumPy), of an unsigned int (PyTensor)
            assert dtype == "bool" or (name == "neg" and dtype.startswith("uint")), (name, p)
            continue
        costs.append(et.sum(et.cast(out, "float64") * et.constant(weights)))
        # the integer operand too (as in Aesara: a float function of an integer has its gradient),
        # but not a boolean, nor an input the op is not differentiable in
        positions = [i for i in range(len(ins)) if i not in NOT_DIFFERENTIABLE_IN.get(name, set())
                     and not (i == p and dtype == "bool")]
        cases.append((name, p, values, weights, positions, out.dtype))
        variables += ins
        wrt += [ins[i] for i in positions]
    cost = costs[0]
    for c in costs[1:]:
        cost = cost + c
    grads = iter(eg.function(variables, eg.grad(cost, wrt), **NO_RULES)(*[v for c in cases for v in c[2]]))
    wrong = []
    for name, p, values, weights, positions, out_dtype in cases:
        for i in positions:
            got = next(grads)
            if i == p and out_dtype in ("bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32",
                                        "uint64"):
                expected = np.zeros_like(got)  # an integer-valued op of integers: piecewise constant
            else:
                expected = _finite_difference(_reference(name), values, i, weights)
            # float16 outputs (exp of an int8, NumPy's rule) carry 3 digits
            rtol = 2e-2 if out_dtype == "float16" else 1e-5
            if got.shape != expected.shape or not np.allclose(got, expected, rtol=rtol, atol=rtol):
                wrong.append(f"{name} input {i} ({values[i].dtype}) with {values[p].dtype} input {p} = {values[p]}: "
                             f"grad {got}, finite differences {expected}")
    return wrong


@pytest.mark.parametrize("dtype", INTEGER_DTYPES)
def test_elementwise_vjps_with_an_integer_or_boolean_operand(dtype):
    assert _discrepancies(dtype) == []


def test_sigmoid_of_an_unsigned_integer():
    # -abs(x) of an unsigned integer wraps around; computed so, sigmoid(uint8 1) would be 0, and
    # softplus's gradient (a sigmoid) with it
    x = et.TensorType("uint8", (None,))("x")
    values = np.array([0, 1, 20, 255], "uint8")
    np.testing.assert_allclose(eg.function([x], et.sigmoid(x), **NO_RULES)(values),
                               1 / (1 + np.exp(-values.astype(float))), rtol=1e-3)


# -- float32 stays float32 ----------------------------------------------------------------------------
def _float64_in_gradient(cost, grads) -> list:
    """The ops of the gradient graph (not of the cost's own graph) that make float64 values."""
    forward = set(ancestors([cost]))
    return sorted({str(v.owner.op) for v in ancestors(grads) if v not in forward and v.owner is not None
                   and getattr(v.type, "dtype", None) == "float64"})


def _float32_cases(other, rng):
    """(name, integer position or None, values): every entry with float32 operands, one of them
    of dtype ``other`` when it is not float32 (so entries of two inputs or more)."""
    for name, domains in sorted(DOMAINS.items()):
        for p in range(len(domains)) if other != "float32" and len(domains) > 1 else [None] * (other == "float32"):
            values = [_floats(*d, rng, 5).astype("float32") for d in domains]
            if p is not None:
                values[p] = _integers(*domains[p], other, rng, 5)
                if values[p] is None:
                    continue
            yield name, p, values


@pytest.mark.parametrize("other", ["float32", "bool", "uint8", "int8"])
def test_elementwise_vjps_of_float32_stay_float32(other):
    """NumPy computes float32 with a bool, uint8 or int8 in float32: the float32 operands'
    gradients are float32 all along, and agree with finite differences of the float64 function."""
    wrong, variables, values, wrt, checks, total = [], [], [], [], [], None
    for name, p, vals in _float32_cases(other, np.random.default_rng(3)):
        ins = [et.TensorType(v.dtype.name, (None,))(f"{name}{i}") for i, v in enumerate(vals)]
        try:
            out = E[name](*ins)
        except TypeError:  # -x of a bool is refused when the graph is built
            continue
        if out.dtype != "float32":  # second(x, int8) is an int8
            assert name == "second" and p == 1, (name, p, out.dtype)
            continue
        weights = np.linspace(0.5, 1.5, 5).astype("float32")
        cost = et.sum(out * et.constant(weights))
        positions = [i for i in range(len(ins)) if i != p and i not in NOT_DIFFERENTIABLE_IN.get(name, set())]
        grads = eg.grad(cost, [ins[i] for i in positions])
        made_float64 = _float64_in_gradient(cost, grads)
        if made_float64 or any(g.dtype != "float32" for g in grads):
            wrong.append(f"{name} with {other} input {p}: gradients {[g.dtype for g in grads]}, "
                         f"float64 made by {made_float64}")
        total = cost if total is None else total + cost
        variables += ins
        values += vals
        wrt += [ins[i] for i in positions]
        checks += [(name, p, vals, weights, i) for i in positions]
    got = eg.function(variables, eg.grad(total, wrt), **NO_RULES)(*values)
    for (name, p, vals, weights, i), g in zip(checks, got):
        expected = _finite_difference(_reference(name), [v.astype(np.float64) for v in vals], i, weights)
        if g.dtype != np.float32 or not np.allclose(g, expected, rtol=2e-3, atol=2e-3):
            wrong.append(f"{name} input {i} with {other} input {p}: grad {g} ({g.dtype}), "
                         f"finite differences {expected}")
    assert wrong == []


def test_the_other_vjps_of_float32_stay_float32():
    x = et.TensorType("float32", (3, 3))("x")
    spd = x @ x.T + et.eye(3, dtype="float32") * np.float32(3)
    costs = {
        "sum": et.sum(x), "mean": et.mean(x, axis=0).sum(), "prod": et.prod(x), "max": et.max(x, axis=0).sum(),
        "logsumexp": et.logsumexp(x, axis=1).sum(), "softmax": et.sum(et.softmax(x, axis=1)[:, 0]),
        "log_softmax": et.sum(et.log_softmax(x, axis=1)[:, 0]), "matmul": et.sum(x @ x),
        "matmul int8": et.sum(x @ et.constant(np.ones((3, 3), "int8"))), "var": et.var(x), "std": et.std(x),
        "cumsum": et.sum(et.cumsum(x, axis=0)), "cumprod": et.sum(et.cumprod(x, axis=0)),
        "sort": et.sum(et.sort(x, axis=0)[0]), "to float16": et.sum(et.cast(x, "float16")),
        "times int8": et.mean(x * et.constant(np.ones(3, "int8"))), "pow int8": et.sum(x ** et.constant(np.int8(3))),
        "mask": et.sum(x[x > 0]), "clip": et.sum(et.clip(x, 0, 1)), "switch": et.sum(et.switch(x > 0, x, 0)),
        "diagonal": et.sum(et.diagonal(x)), "einsum": et.einsum("ij,jk->", x, x),
        "repeat": et.sum(et.repeat(x, 2, axis=0)), "concatenate": et.sum(et.concatenate([x, x])),
        "reshape": et.sum(et.reshape(x, (-1,)) ** 2), "inc_subtensor": et.sum(et.inc_subtensor(x[0], 1)),
        "ifelse": et.sum(et.ifelse(et.lscalar("c"), x, x * 2)), "alloc": et.sum(et.alloc(et.sum(x), 3)),
        "det": et.linalg.det(spd), "inv": et.sum(et.linalg.inv(spd)), "cholesky": et.sum(et.linalg.cholesky(spd)),
        "solve": et.sum(et.linalg.solve(spd, x[0])),
    }
    made_float64 = {}
    for name, cost in costs.items():
        g = eg.grad(cost, x)
        if g.dtype != "float32" or _float64_in_gradient(cost, [g]):
            made_float64[name] = (g.dtype, _float64_in_gradient(cost, [g]))
    assert made_float64 == {}


# -- conditions, masks and index arrays of every integer dtype ------------------------------------------
XV = np.array([1.5, -2.0, 0.5, 3.0])
WV = np.array([1.0, 2.0, 3.0, 4.0])


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32", "int64"])
def test_index_arrays_of_every_integer_dtype(dtype):
    x, y = et.dvector("x"), et.dvector("y")
    index = et.TensorType(dtype, (None,))("index")
    at = np.array([0, 2, 2, 3] if dtype.startswith("u") else [0, -2, 2, -1], dtype)  # repeated, and from the end
    read = et.sum(x[index] * WV)
    added = et.sum(et.inc_subtensor(x[index], y) * WV)
    got = eg.function([x, y, index], [eg.grad(read, x), *eg.grad(added, [x, y])], **NO_RULES)(XV, np.ones(4), at)
    expected_read = np.zeros(4)
    np.add.at(expected_read, at.astype(int), WV)
    np.testing.assert_allclose(got[0], expected_read)
    np.testing.assert_allclose(got[1], WV)
    np.testing.assert_allclose(got[2], WV[at.astype(int)])


def test_boolean_masks_read_and_write_where_true():
    x, y = et.dvector("x"), et.dvector("y")
    mask = np.array([True, False, True, True])
    written = np.ones(3)  # y: one value per True
    cases = [  # (cost, wrt, the gradients)
        (et.sum(x[et.constant(mask)] * WV[mask]), [x], [np.where(mask, WV, 0)]),
        (et.sum(x[x > 0] ** 2), [x], [np.where(XV > 0, 2 * XV, 0)]),
        (et.sum(et.set_subtensor(x[et.constant(mask)], y) * WV), [x, y], [np.where(mask, 0, WV), WV[mask]]),
        (et.sum(et.inc_subtensor(x[et.constant(mask)], y) * WV), [x, y], [WV, WV[mask]]),
    ]
    for cost, wrt, expected in cases:
        got = eg.function([x, y], eg.grad(cost, wrt), on_unused_input="ignore", **NO_RULES)(XV, written)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e)
    # a comparison is flat in both operands: only the x outside it gets a gradient
    cost = et.sum(et.cast(et.gt(x, y), "float64") * x)
    got = eg.function([x, y], eg.grad(cost, [x, y]), **NO_RULES)(XV, np.zeros(4))
    np.testing.assert_allclose(got, [(XV > 0) * 1.0, np.zeros(4)])


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int64"])
def test_integer_valued_ops_of_integers_have_zero_gradients(dtype):
    i = et.TensorType(dtype, (None,))("i")
    values = np.array([1, 0, 1, 1], dtype)
    for build in (et.max, et.min, et.sign, et.abs, lambda i: et.clip(i, 0, 1), lambda i: et.maximum(i, 0),
                  lambda i: et.switch(i, i, 0)):
        try:
            term = build(i)
        except TypeError:  # sign of a bool, refused as NumPy refuses it
            continue
        assert term.dtype in DISCRETE_DTYPES, term  # integer-valued: clip of a bool by ints is an int64
        g = eg.grad(et.sum(et.cast(term, "float64")), i)
        assert g.dtype == "float64", term
        np.testing.assert_array_equal(eg.function([i], g, **NO_RULES)(values), np.zeros(4))


@pytest.mark.parametrize("dtype, value", [("int64", 2), ("int64", -1), ("int64", 0), ("uint8", 255), ("int8", -128),
                                          ("bool", True), ("float64", 0.5)])
def test_ifelse_takes_the_then_branch_for_any_nonzero_condition(dtype, value):
    c, a, b = et.TensorType(dtype, ())("c"), et.dscalar("a"), et.dscalar("b")
    got = eg.function([c, a, b], eg.grad(et.ifelse(c, a * 3, b * 5), [a, b]), **NO_RULES)(np.asarray(value, dtype), 1.0, 1.0)
    np.testing.assert_allclose(got, [3.0, 0.0] if value else [0.0, 5.0])


def test_scan_with_integer_sequences_and_non_sequences():
    # the loop's gradient goes to the float inputs only; integer ones steer the loop
    labels, scale = et.TensorType("uint8", (None,))("labels"), et.TensorType("int8", ())("scale")
    h0, w = et.dscalar("h0"), et.dscalar("w")

    def step(label, h, w, scale):
        return et.switch(label, h * w, h + w) * scale

    hs, _ = eg.scan(step, sequences=labels, outputs_info=h0, non_sequences=[w, scale])
    f = eg.function([labels, h0, w, scale], eg.grad(hs[-1], [h0, w]), **NO_RULES)
    lv, sv, h0v, wv = np.array([1, 0, 3, 0], "uint8"), np.int8(-2), 0.7, 1.3

    def unrolled(h0v, wv):
        h = h0v
        for label in lv:
            h = (h * wv if label else h + wv) * sv
        return h

    expected = [(unrolled(h0v + H, wv) - unrolled(h0v - H, wv)) / (2 * H),
                (unrolled(h0v, wv + H) - unrolled(h0v, wv - H)) / (2 * H)]
    np.testing.assert_allclose(f(lv, h0v, wv, sv), expected, rtol=1e-6)
