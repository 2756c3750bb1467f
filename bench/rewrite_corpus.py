"""The corpus of everyday expressions behind ``bench/rewrites.py`` (issue 11), as data.

Each ``Case`` names one expression (or a loss and its gradient), the rewrite family it
exercises, its inputs, a builder, the *key rewrite* a good optimizer applies to it (a
predicate over the compiled graph, see ``Key``), an extreme input where the naive formula
fails, and a stable reference.

A builder takes a namespace ``T`` and the symbolic inputs, and returns one output or a tuple.
The same builder runs three times: with ``eqgraph_namespace()`` (eqgraph.tensor), with
PyTensor's namespace (``bench/rewrites.py`` builds it, so this module never imports PyTensor)
and with ``NUMPY``, which evaluates the formula directly in long double. That last run is the
reference unless the case gives one: long double is exact enough for algebra, shapes and
indexing, but not for ``1 - sigmoid(40)`` or ``log1p(-exp(-1e-20))``, so the stability and
gradient cases give a stable formula (SciPy, run in long double too; mpmath is not installed).

To add a case, call ``case(...)`` below in its family's section; ``tests/bench/`` then checks
that eqgraph compiles it and that it matches its reference on an ordinary input.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.special as sp

# --- namespaces: what a builder may call, spelled the same in every library -------------------


def namespace(module, **overrides) -> types.SimpleNamespace:
    """``module``'s public names, with the ones that differ between libraries overridden."""
    names = {name: getattr(module, name) for name in dir(module) if not name.startswith("_")}
    return types.SimpleNamespace(**{**names, **overrides})


def eqgraph_namespace():
    import eqgraph as eg
    import eqgraph.tensor as et

    return namespace(et, grad=eg.grad,
                     setsub=lambda x, idx, y: et.set_subtensor(x[idx], y),
                     incsub=lambda x, idx, y: et.inc_subtensor(x[idx], y))


def _numpy_setsub(x, idx, y, inc=False):
    out = np.array(x, copy=True)
    out[idx] = out[idx] + y if inc else y
    return out


class NoGradient(TypeError):
    """A builder called ``T.grad`` on the NumPy namespace: such a case must give its reference."""


def _no_grad(*args, **kwargs):
    raise NoGradient("the NumPy namespace has no grad: a gradient case must give its reference")


NUMPY = namespace(
    np, sigmoid=sp.expit, softplus=lambda x: np.logaddexp(0, x), switch=np.where,
    softmax=lambda x, axis=-1: sp.softmax(x, axis=axis),
    log_softmax=lambda x, axis=-1: sp.log_softmax(x, axis=axis),
    logsumexp=lambda x, axis=None, keepdims=False: sp.logsumexp(x, axis=axis, keepdims=keepdims),
    cast=lambda x, dtype: np.asarray(x).astype(dtype),
    alloc=lambda value, *shape: np.broadcast_to(value, shape).copy(),
    fill=lambda model, value: np.full_like(model, value),
    setsub=_numpy_setsub, incsub=lambda x, idx, y: _numpy_setsub(x, idx, y, inc=True),
    grad=_no_grad)


# --- key rewrites: predicates over a compiled graph ------------------------------------------
# bench/rewrites.py turns each library's compiled graph into ``GraphNode``s with normalized op
# names (lower case, no underscores; fused kernels opened up; see ``ALIASES``), so one
# predicate reads both.

@dataclass(eq=False)
class GraphNode:
    name: str
    inputs: list   # GraphNodes, or None for a graph input or constant
    ndim: int


# different names for the same kind of op, mapped to one
ALIASES = {
    "truediv": "div", "truedivide": "div", "divide": "div", "reciprocal": "div",
    "dot22": "dot", "dot22scalar": "dot", "matmul": "dot", "cgemm": "gemm", "cgemv": "gemv", "cger": "ger",
    "expanddims": "dimshuffle", "transpose": "dimshuffle", "matrixtranspose": "dimshuffle", "dropdims": "dimshuffle",
    "squeeze": "dimshuffle", "shapei": "shape", "fill": "second",
    "scalarmaximum": "maximum", "scalarminimum": "minimum",
    "advancedsubtensor": "subtensor", "advancedsubtensor1": "subtensor",
    "advancedincsubtensor": "incsubtensor", "advancedincsubtensor1": "incsubtensor",
    "setsubtensor": "incsubtensor", "allocempty": "alloc",
}
DOTS = {"dot", "gemm", "gemv", "ger"}   # every kind of matrix product
SUMS = {"sum", "mean"}                 # eqgraph has a Mean reduction; PyTensor divides a Sum


def normalize(name: str) -> str:
    name = name.lower().replace("_", "")
    return ALIASES.get(name, name)


@dataclass(frozen=True)
class Key:
    """The key rewrite of a case: ``holds(nodes)`` on the compiled graph's normalized nodes."""

    text: str
    holds: Callable


def _names(spec) -> set:
    return {spec} if isinstance(spec, str) else set(spec)


def _count(nodes, names) -> int:
    return sum(n.name in names for n in nodes)


def lacks(*names) -> Key:
    """None of these ops is left."""
    return Key("no " + "|".join(names), lambda nodes: _count(nodes, set(names)) == 0)


def has(*names) -> Key:
    """One of these ops is there (the stable form a rewrite introduces)."""
    return Key("has " + "|".join(names), lambda nodes: _count(nodes, set(names)) > 0)


def at_most(spec, k: int) -> Key:
    """At most ``k`` ops named ``spec`` (a name or a set of names) are left."""
    names = _names(spec)
    return Key(f"<={k} {'|'.join(sorted(names))}", lambda nodes: _count(nodes, names) <= k)


def _past_layout(node):
    """The node under any dimshuffles: PyTensor spells ``W @ x`` as ``squeeze(dot(W, x[:, None]))``."""
    while node is not None and node.name == "dimshuffle":
        node = node.inputs[0]
    return node


def _chain_at(node, specs) -> bool:
    if node is None or node.name not in _names(specs[0]):
        return False
    return len(specs) == 1 or any(_chain_at(_past_layout(i), specs[1:]) for i in node.inputs)


def no_chain(*specs) -> Key:
    """No node ``a`` whose input is a ``b`` whose input is a ``c`` ... (each spec a name or a set),
    reading through dimshuffles between them."""
    text = "no " + "(".join("|".join(sorted(_names(s))) for s in specs) + ")" * (len(specs) - 1)
    return Key(text, lambda nodes: not any(_chain_at(n, specs) for n in nodes))


def no_matrix_product() -> Key:
    return Key("no matrix-matrix dot", lambda nodes: not any(n.name in DOTS and n.ndim == 2 for n in nodes))


def all_of(*keys) -> Key:
    return Key(" & ".join(k.text for k in keys), lambda nodes: all(k.holds(nodes) for k in keys))


# --- inputs --------------------------------------------------------------------------------------
# An input is (dtype, shape template): ints are static sizes (in the type), letters are sizes the
# type leaves unknown, chosen per run (SIZES: tiny for correctness, medium for timing).

SIZES = {"tiny": {"v": 12, "r": 4, "c": 5}, "medium": {"v": 200_000, "r": 400, "c": 500}}
F64, F32 = "float64", "float32"
KINDS = {
    "s": (F64, ()), "v": (F64, ("v",)), "m": (F64, ("r", "c")), "mt": (F64, ("c", "r")),
    "w": (F64, ("c",)), "y": (F64, ("r",)), "s32": (F32, ()), "v32": (F32, ("v",)),
    "m32": (F32, ("r", "c")), "w32": (F32, ("c",)), "y32": (F32, ("r",)),
}


def concrete_shape(template, size: str) -> tuple:
    return tuple(d if isinstance(d, int) else SIZES[size][d] for d in template)


def static_shape(template) -> tuple:
    return tuple(d if isinstance(d, int) else None for d in template)


@dataclass(frozen=True)
class Case:
    name: str
    family: str
    inputs: tuple          # (dtype, shape template) per input
    build: Callable        # build(T, *inputs) -> output or tuple of outputs
    key: Key
    extreme: tuple | None  # one array per input where the naive formula fails; None: no such input
    reference: Callable | None  # reference(*long double arrays) -> output(s); None: NUMPY in long double
    domain: tuple          # ordinary inputs are uniform in [lo, hi)
    refused: str | None = None  # why eqgraph refuses the key rewrite for these inputs' dtype and shapes
    witness: tuple | None = None  # with ``refused``: one array per input on which the key rewrite changes the result

    def ordinary(self, size: str, seed: int = 0) -> list:
        rng = np.random.default_rng(seed)
        lo, hi = self.domain
        return [rng.uniform(lo, hi, concrete_shape(shape, size)).astype(dtype) for dtype, shape in self.inputs]

    def extreme_values(self) -> list | None:
        if self.extreme is None:
            return None
        return [np.asarray(v, dtype=dtype) for v, (dtype, _) in zip(self.extreme, self.inputs)]

    def witness_values(self) -> list | None:
        if self.witness is None:
            return None
        return [np.asarray(v, dtype=dtype) for v, (dtype, _) in zip(self.witness, self.inputs)]

    def expected(self, values) -> list:
        """The reference outputs on ``values``, as a list."""
        if self.reference is not None:
            # in long double: SciPy's expit(-720.0) is 0 in float64, but 2.03e-313 is a float64
            out = self.reference(*[np.asarray(v, dtype=np.longdouble) for v in values])
        else:
            with np.errstate(all="ignore"):
                out = self.build(NUMPY, *[np.asarray(v, dtype=np.longdouble) for v in values])
        return list(out) if isinstance(out, tuple) else [out]


CASES: list[Case] = []


def case(name, family, inputs, build, key, extreme=None, reference=None, domain=(-2.0, 2.0), refused=None,
         witness=None):
    """Add a case; ``inputs`` is a list of KINDS names or (dtype, shape template) pairs. ``refused``
    says why eqgraph does not apply the key rewrite on purpose for these inputs (it would be
    wrong for some of their values or shapes); the case still counts as not applied, and
    ``witness`` gives inputs on which the rewritten graph would compute another result."""
    if (refused is None) != (witness is None):
        raise ValueError(f"case {name}: a refused rewrite needs a witness, and only a refused one has one")
    kinds = tuple(KINDS[i] if isinstance(i, str) else i for i in inputs)
    CASES.append(Case(name, family, kinds, build, key, extreme, reference, domain, refused, witness))


def same_result(got, want) -> bool:
    """Bit-for-bit the same meaning: shape, values (NaN equal to NaN) and the sign of zeros."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    return (got.shape == want.shape and np.array_equal(got, want, equal_nan=True)
            and np.array_equal(np.signbit(got), np.signbit(want)))


# why eqgraph refuses a key rewrite that PyTensor applies (tests/bench/ checks that it does not apply)
NAN_INF = "floats: an inf or NaN operand gives NaN, not 0"
SIGNED_ZERO = "floats: -0.0 + 0.0 is +0.0"
BROADCAST = "a length-1 operand broadcasts at run time"
NAN_ZERO = "floats: x / x is NaN at 0, inf and NaN"
CANCEL = "floats: a cancelled y that is inf or NaN (or 0, dividing) gives NaN, not x (docs/numerics.md)"


# --- stable references -------------------------------------------------------------------------

def softplus(x):
    return np.logaddexp(0.0, x)


def log1mexp(x):
    """log(1 - exp(x)) for x < 0, accurate on both sides of -log 2 (Maechler's note)."""
    with np.errstate(divide="ignore"):
        return np.where(x > -np.log(2), np.log(-np.expm1(x)), np.log1p(-np.exp(np.minimum(x, 0))))


def bce(z, y):
    """-(y log sigmoid(z) + (1 - y) log(1 - sigmoid(z))), written with softplus."""
    return y * softplus(-z) + (1 - y) * softplus(z)


def naive_bce(T, z, y):
    p = T.sigmoid(z)
    return -(y * T.log(p) + (1 - y) * T.log(1 - p))


def logreg(T, X, w, y):
    return naive_bce(T, X @ w, y).mean()


def logreg_reference(X, w, y):
    z = X @ w
    return bce(z, y).mean(), X.T @ (sp.expit(z) - y) / len(y)


def cross_entropy_grad(X, y):
    return sp.softmax(X, axis=1) * y.sum(axis=1, keepdims=True) - y


# logits 40, -40, 800, -800 with labels that make the naive loss log(0)
LOGREG_EXTREME = ([[8.0, 0, 0, 0, 0], [-8.0, 0, 0, 0, 0], [160.0, 0, 0, 0, 0], [-160.0, 0, 0, 0, 0]],
                  [5.0, 0, 0, 0, 0], [0.0, 1.0, 0.0, 1.0])
ROWS_1000 = ([[1000.0, 999.0, 0.0], [-1000.0, -1001.0, -1002.0]],)
GAP_120 = ([[0.0, 120.0, -5.0], [3.0, 1.0, 2.0]], [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
NEAR_ZERO = ([-1e-20, -1e-10, -1e-3, -0.5, -50.0],)
BIG = ([1000.0, 999.0, 998.0, -5.0, 0.0],)
SQUARE = ("float64", ("r", "r"))
POSITIVE = (0.5, 2.0)
# the max shift, or an op that does it: what a stable logsumexp/softmax compiles to
MAX_SHIFTED = has("max", "logsumexp", "softmax", "logsoftmax")

# --- stability: the naive formula overflows, underflows or cancels ---------------------------------
S = "stability"
case("logsumexp", S, ["v"], lambda T, x: T.log(T.exp(x).sum()), MAX_SHIFTED, BIG, sp.logsumexp)
case("logsumexp-underflow", S, ["v"], lambda T, x: T.log(T.exp(x).sum()), MAX_SHIFTED,
     ([-1000.0, -1001.0, -1200.0],), sp.logsumexp)
case("logsumexp-neg", S, ["v"], lambda T, x: T.log(T.sum(T.exp(-x))), MAX_SHIFTED,
     ([-1000.0, -999.0, 3.0],), lambda x: sp.logsumexp(-x))
case("logsumexp-rows", S, ["m"], lambda T, X: T.log(T.sum(T.exp(X), axis=1)), MAX_SHIFTED, ROWS_1000,
     lambda X: sp.logsumexp(X, axis=1))
case("logsumexp-cols-keepdims", S, ["m"], lambda T, X: T.log(T.exp(X).sum(axis=0, keepdims=True)), MAX_SHIFTED,
     ROWS_1000, lambda X: sp.logsumexp(X, axis=0, keepdims=True))
case("log-mean-exp", S, ["v"], lambda T, x: T.log(T.mean(T.exp(x))), MAX_SHIFTED, BIG,
     lambda x: sp.logsumexp(x) - np.log(len(x)))
case("logsumexp-plus-y", S, ["v", "v"], lambda T, x, y: T.log(T.exp(x + y).sum()), MAX_SHIFTED,
     (BIG[0], [1.0, 2.0, -3.0, 4.0, 0.0]), lambda x, y: sp.logsumexp(x + y))
case("logaddexp", S, ["v", "v"], lambda T, a, b: T.log(T.exp(a) + T.exp(b)),
     no_chain("log", "add", "exp"), ([1000.0, -1000.0, 0.0], [999.0, -1001.0, 800.0]), np.logaddexp)
case("logaddexp-scalar", S, ["s", "s"], lambda T, a, b: T.log(T.exp(a) + T.exp(b)),
     no_chain("log", "add", "exp"), (-800.0, -801.0), np.logaddexp)
case("softplus-log", S, ["v"], lambda T, x: T.log(1 + T.exp(x)),
     all_of(no_chain("log", "add", "exp"), no_chain("log1p", "exp")), ([800.0, -800.0, 40.0, -40.0],), softplus)
case("softplus-log1p", S, ["v"], lambda T, x: T.log1p(T.exp(x)), no_chain("log1p", "exp"),
     ([800.0, -800.0, 40.0],), softplus)
case("softmax", S, ["v"], lambda T, x: T.exp(x) / T.exp(x).sum(), MAX_SHIFTED, BIG, sp.softmax)
case("softmax-rows", S, ["m"], lambda T, X: T.exp(X) / T.exp(X).sum(axis=1, keepdims=True), MAX_SHIFTED,
     ROWS_1000, lambda X: sp.softmax(X, axis=1))
case("softmax-hand-shifted", S, ["m"],
     lambda T, X: T.exp(X - X.max(axis=1, keepdims=True)) / T.exp(X - X.max(axis=1, keepdims=True)).sum(
         axis=1, keepdims=True), MAX_SHIFTED, ROWS_1000, lambda X: sp.softmax(X, axis=1))
case("log-softmax-naive", S, ["v"], lambda T, x: T.log(T.exp(x) / T.exp(x).sum()),
     all_of(no_chain("log", ("div", "softmax")), MAX_SHIFTED), BIG, sp.log_softmax)
case("log-of-softmax", S, ["m"], lambda T, X: T.log(T.softmax(X, axis=-1)), no_chain("log", "softmax"),
     ([[0.0, -800.0, 1.0], [5.0, 4.0, 3.0]],), lambda X: sp.log_softmax(X, axis=1))
case("sigmoid-from-exp", S, ["v"], lambda T, x: T.exp(x) / (1 + T.exp(x)), has("sigmoid"),
     ([800.0, -800.0, 40.0],), sp.expit)
case("sigmoid-reciprocal", S, ["v"], lambda T, x: 1 / (1 + T.exp(-x)), has("sigmoid"),
     ([-720.0, -50.0, 50.0],), sp.expit)
case("one-minus-sigmoid", S, ["v"], lambda T, x: 1 - T.sigmoid(x), no_chain("sub", "sigmoid"),
     ([40.0, 37.0, 100.0],), lambda x: sp.expit(-x))
case("log1mexp-log1p", S, ["v"], lambda T, x: T.log1p(-T.exp(x)), has("log1mexp", "expm1"), NEAR_ZERO,
     log1mexp, domain=(-3.0, -0.1))
case("log1mexp-log", S, ["v"], lambda T, x: T.log(1 - T.exp(x)), has("log1mexp", "expm1"), NEAR_ZERO,
     log1mexp, domain=(-3.0, -0.1))
case("log-sigmoid", S, ["v"], lambda T, x: T.log(T.sigmoid(x)), no_chain("log", "sigmoid"),
     ([-800.0, -40.0, 40.0],), lambda x: -softplus(-x))
case("log-one-minus-sigmoid", S, ["v"], lambda T, x: T.log(1 - T.sigmoid(x)), no_chain("log", "sub", "sigmoid"),
     ([40.0, 800.0, -3.0],), lambda x: -softplus(x))
case("softplus-minus-x", S, ["v"], lambda T, x: T.softplus(x) - x, no_chain("sub", "softplus"),
     ([40.0, 50.0, -3.0],), lambda x: softplus(-x))
case("binary-cross-entropy", S, ["v", "v"], naive_bce,
     all_of(no_chain("log", "sigmoid"), no_chain("log", "sub", "sigmoid")),
     ([40.0, -40.0, 800.0, -800.0], [0.0, 1.0, 0.0, 1.0]), bce)
case("logreg-loss", S, ["m", "w", "y"], logreg, all_of(no_chain("log", "sigmoid"), no_chain("log", "sub", "sigmoid")),
     LOGREG_EXTREME, lambda X, w, y: logreg_reference(X, w, y)[0])
case("logreg-loss-and-grad", S, ["m", "w", "y"], lambda T, X, w, y: (logreg(T, X, w, y), T.grad(logreg(T, X, w, y), w)),
     all_of(no_chain("log", "sigmoid"), no_chain("log", "sub", "sigmoid")), LOGREG_EXTREME, logreg_reference)
case("logreg-loss-and-grad-f32", S, ["m32", "w32", "y32"],
     lambda T, X, w, y: (logreg(T, X, w, y), T.grad(logreg(T, X, w, y), w)),
     all_of(no_chain("log", "sigmoid"), no_chain("log", "sub", "sigmoid")), LOGREG_EXTREME, logreg_reference)
case("categorical-cross-entropy", S, ["m", "m"], lambda T, X, y: -(y * T.log(T.softmax(X, axis=-1))).sum(axis=1),
     no_chain("log", "softmax"), GAP_120, lambda X, y: -(y * sp.log_softmax(X, axis=1)).sum(axis=1))
case("categorical-cross-entropy-naive", S, ["m", "m"],
     lambda T, X, y: -(y * T.log(T.exp(X) / T.exp(X).sum(axis=1, keepdims=True))).sum(axis=1),
     all_of(no_chain("log", ("div", "softmax")), MAX_SHIFTED), ([[0.0, 800.0, -5.0], [3.0, 1.0, 2.0]], GAP_120[1]),
     lambda X, y: -(y * sp.log_softmax(X, axis=1)).sum(axis=1))

# --- canonical algebra: forms that cancel, fold or merge ---------------------------------------------
C = "canonical"
case("x-minus-x", C, ["v"], lambda T, x: x - x, lacks("sub"), refused=NAN_INF,
     witness=([np.inf, np.nan, 1.0],))
case("x-div-x", C, ["v"], lambda T, x: x / x, lacks("div"), domain=POSITIVE, refused=NAN_ZERO,
     witness=([0.0, np.inf, np.nan, 2.0],))
case("x-times-0", C, ["v"], lambda T, x: x * 0, lacks("mul"), refused=NAN_INF,
     witness=([np.inf, np.nan, 1.0],))
case("add-then-sub", C, ["v", "v"], lambda T, x, y: (x + y) - y, lacks("sub"),
     ([1.0, 3.0], [1e16, -1e17]), lambda x, y: x)   # not applied by default: y may be inf (docs/numerics.md)
case("commuted-add-cancels", C, ["v", "v"], lambda T, x, y: (x + y) - (y + x), lacks("sub"), refused=NAN_INF,
     witness=([np.inf, 1.0], [1.0, 2.0]))
case("commuted-mul-cancels", C, ["v", "v"], lambda T, x, y: x * y - y * x, lacks("sub"), refused=NAN_INF,
     witness=([np.inf, 1.0], [1.0, 2.0]))
case("mul-constants", C, ["v"], lambda T, x: (x * 2) * 3, at_most("mul", 1))
case("add-constants", C, ["v"], lambda T, x: (x + 2) + 3, at_most("add", 1))
case("exp-times-exp", C, ["v", "v"], lambda T, a, b: T.exp(a) * T.exp(b), at_most("exp", 1),
     ([800.0, -760.0], [-790.0, 770.0]), lambda a, b: np.exp(a + b))
case("pow-minus-one", C, ["v"], lambda T, x: x ** -1, lacks("pow"), domain=POSITIVE)
case("pow-three", C, ["v"], lambda T, x: x ** 3, lacks("pow"))
case("pow-two", C, ["v"], lambda T, x: x ** 2, lacks("pow"))
case("pow-half", C, ["v"], lambda T, x: x ** 0.5, lacks("pow"), domain=POSITIVE)
case("switch-constant-condition", C, ["v", "v"], lambda T, a, b: T.switch(1, a, b), lacks("switch"))
case("switch-same-branches", C, ["v", "v"], lambda T, c, y: T.switch(c > 0, y, y), lacks("switch"))
case("exp-of-log", C, ["v"], lambda T, x: T.exp(T.log(x)), no_chain("exp", "log"),
     ([-1.0, 2.0, 0.0, 1e-300],), domain=POSITIVE)
case("log-of-exp", C, ["v"], lambda T, x: T.log(T.exp(x)), no_chain("log", "exp"), ([800.0, -800.0, 1.0],),
     lambda x: x)
case("cast-of-cast", C, ["v32"], lambda T, x: T.cast(T.cast(x, "float64"), "float32"), lacks("cast"))
case("neg-neg", C, ["v"], lambda T, x: -(-x), lacks("neg"))
case("identities", C, ["v"], lambda T, x: (x * 1 + 0) / 1, lacks("mul", "add", "div"), refused=SIGNED_ZERO,
     witness=([-0.0, 1.0],))
case("sub-of-neg", C, ["v", "v"], lambda T, x, y: x - (-y), lacks("neg"))
case("div-then-mul", C, ["v", "v"], lambda T, x, y: (x / y) * y, lacks("div"), domain=POSITIVE, refused=CANCEL,
     witness=([1.0, 2.0, 3.0], [0.0, np.inf, 1.0]))
case("sqrt-of-square", C, ["v"], lambda T, x: T.sqrt(x * x), lacks("sqrt"), ([1e200, -1e200, 3.0],), np.abs)

# --- gradients: what grad builds, and what a cleanup leaves ----------------------------------------------
G = "gradient"
NO_FILL = lacks("second", "alloc")
case("grad-sum-exp", G, ["v"], lambda T, x: T.grad(T.exp(x).sum(), x), all_of(NO_FILL, at_most("exp", 1)),
     reference=np.exp)
case("grad-mean-square", G, ["v"], lambda T, x: T.grad((x ** 2).mean(), x), NO_FILL,
     reference=lambda x: 2 * x / len(x))
case("grad-logsumexp", G, ["v"], lambda T, x: T.grad(T.log(T.exp(x).sum()), x), MAX_SHIFTED, BIG, sp.softmax)
case("grad-logsumexp-f32", G, ["v32"], lambda T, x: T.grad(T.logsumexp(x), x), MAX_SHIFTED,
     ([0.0, 120.0, -5.0],), sp.softmax)
case("grad-log-softmax-ce", G, ["m", "m"], lambda T, X, y: T.grad(-(y * T.log_softmax(X, axis=-1)).sum(), X),
     MAX_SHIFTED, GAP_120, cross_entropy_grad)
case("grad-log-softmax-ce-f32", G, ["m32", "m32"],
     lambda T, X, y: T.grad(-(y * T.log_softmax(X, axis=-1)).sum(), X), MAX_SHIFTED, GAP_120, cross_entropy_grad)
case("grad-log-of-softmax-ce", G, ["m", "m"], lambda T, X, y: T.grad(-(y * T.log(T.softmax(X, axis=-1))).sum(), X),
     no_chain("log", "softmax"), GAP_120, cross_entropy_grad)
case("grad-softplus", G, ["v"], lambda T, x: T.grad(T.softplus(x).sum(), x), has("sigmoid"),
     ([800.0, -800.0, 40.0],), sp.expit)
case("grad-softplus-naive", G, ["v"], lambda T, x: T.grad(T.log1p(T.exp(x)).sum(), x), has("sigmoid"),
     ([800.0, -800.0, 40.0],), sp.expit)
case("grad-sigmoid", G, ["v"], lambda T, x: T.grad(T.sigmoid(x).sum(), x), NO_FILL,
     ([800.0, -800.0, 40.0],), lambda x: sp.expit(x) * sp.expit(-x))
case("grad-tanh", G, ["v"], lambda T, x: T.grad(T.tanh(x).sum(), x), NO_FILL,
     reference=lambda x: 1 - np.tanh(x) ** 2)
case("grad-broadcast-bias", G, ["m", "w"], lambda T, X, b: T.grad(((X + b) ** 2).sum(), b), at_most(SUMS, 1),
     reference=lambda X, b: 2 * (X + b).sum(axis=0))
case("grad-scalar-scale", G, ["m", "s"], lambda T, X, s: T.grad((X * s).sum(), s), all_of(at_most(SUMS, 1), NO_FILL),
     reference=lambda X, s: X.sum())
case("grad-matvec", G, ["m", "w"], lambda T, X, w: T.grad((X @ w).sum(), w), NO_FILL,
     reference=lambda X, w: X.sum(axis=0))
case("grad-logistic-logits", G, ["v", "v"], lambda T, z, y: T.grad(naive_bce(T, z, y).mean(), z),
     all_of(no_chain("div", "sigmoid"), no_chain("div", "sub", "sigmoid")),
     ([40.0, -40.0, 800.0, -800.0], [0.0, 1.0, 0.0, 1.0]), lambda z, y: (sp.expit(z) - y) / len(z))
case("grad-norm", G, ["v"], lambda T, x: T.grad(T.sqrt((x ** 2).sum()), x), NO_FILL,
     reference=lambda x: x / np.sqrt((x * x).sum()))
case("grad-mlp-layer", G, ["m", ("float64", ("c", 3))], lambda T, X, W: T.grad((T.tanh(X @ W) ** 2).mean(), W),
     NO_FILL, reference=lambda X, W: X.T @ (2 * np.tanh(X @ W) * (1 - np.tanh(X @ W) ** 2)) / (X.shape[0] * 3))

# --- shapes: infer_shape instead of computing, static sizes as constants ---------------------------
SH = "shapes"
case("shape-of-exp", SH, ["m"], lambda T, X: T.exp(X).shape[0], lacks("exp"))
case("shape-of-matmul", SH, ["m", "mt"], lambda T, A, B: (A @ B).shape[1], lacks(*DOTS))
case("shape-of-zeros-like", SH, ["m"], lambda T, X: T.zeros_like(X).shape[1], lacks("alloc", "second"))
case("static-shape", SH, [("float64", (3, 4))], lambda T, X: X.shape[0] * X, lacks("shape"))
case("reshape-chain", SH, [("float64", (4, 6))], lambda T, X: X.reshape((24,)).reshape((6, 4)), at_most("reshape", 1))
case("reshape-same-shape", SH, [("float64", (4, 6))], lambda T, X: X.reshape((4, 6)) * 2, lacks("reshape"))
case("flatten-size", SH, ["m"], lambda T, X: X.flatten().shape[0], lacks("reshape"))
case("transpose-twice", SH, ["m"], lambda T, X: X.T.T * 2, lacks("dimshuffle"))
case("expand-then-squeeze", SH, ["v"], lambda T, x: T.squeeze(T.expand_dims(x, 0), 0) * 2, lacks("dimshuffle"))
case("row-mean-static", SH, [("float64", ("r", 5))], lambda T, X: T.sum(X, axis=1) / X.shape[1], lacks("shape"))
case("standardize-rows", SH, ["m"], lambda T, X: (X - X.mean(axis=1, keepdims=True)) / X.std(axis=1, keepdims=True),
     at_most(SUMS, 2))

# --- indexing: compute only what is read -------------------------------------------------------------------
IX = "indexing"
case("slice-of-exp", IX, ["v"], lambda T, x: T.exp(x)[:10], no_chain("subtensor", "exp"))
case("index-of-exp", IX, ["v"], lambda T, x: T.exp(x)[3], no_chain("subtensor", "exp"))
case("row-of-matmul", IX, ["m", "mt"], lambda T, A, B: (A @ B)[0], no_chain("subtensor", DOTS))
case("column-of-matmul", IX, ["m", "mt"], lambda T, A, B: (A @ B)[:, 0], no_chain("subtensor", DOTS))
case("index-of-add", IX, ["v", "v"], lambda T, x, y: (x + y)[2], no_chain("subtensor", "add"), refused=BROADCAST,
     witness=([1.0], [1.0, 2.0, 3.0]))
case("slice-of-neg-matrix", IX, ["m"], lambda T, X: (-X)[:, 1:3], no_chain("subtensor", "neg"))
case("slice-of-sigmoid", IX, ["m"], lambda T, X: T.sigmoid(X)[:2], no_chain("subtensor", "sigmoid"))
case("take-of-exp", IX, ["v"], lambda T, x: T.exp(x)[[0, 2, 5]], no_chain("subtensor", "exp"))
case("slice-of-slice", IX, ["v"], lambda T, x: x[2:][:3] * 2, at_most("subtensor", 1))
case("index-of-row-slice", IX, ["m"], lambda T, X: X[1:][:, 0] * 2, at_most("subtensor", 1))
case("index-of-transpose", IX, ["m"], lambda T, X: X.T[0] * 2, lacks("dimshuffle"))
case("read-after-write", IX, ["v", ("float64", (2,))], lambda T, x, y: T.setsub(x, slice(1, 3), y)[1:3] * 2,
     lacks("incsubtensor"))
case("inc-by-zero", IX, ["v"], lambda T, x: T.incsub(x, slice(0, 2), 0.0) * 2, lacks("incsubtensor"),
     refused=SIGNED_ZERO, witness=([-0.0, -0.0, 1.0],))
case("set-to-itself", IX, ["v"], lambda T, x: T.setsub(x, slice(1, 3), x[1:3]) * 2, lacks("incsubtensor"))
case("index-of-alloc", IX, ["v"], lambda T, x: T.alloc(x, 5, x.shape[0])[2] * 2, lacks("alloc"))

# --- reductions -------------------------------------------------------------------------------------------------
R = "reductions"
case("sum-of-scaled", R, ["v"], lambda T, x: (2 * x).sum(), no_chain("sum", "mul"))
case("row-sums-of-scaled", R, ["m", "s"], lambda T, X, s: (X * s).sum(axis=1), no_chain("sum", "mul"))
case("sum-of-divided", R, ["v"], lambda T, x: (x / 4).sum(), no_chain("sum", ("mul", "div")))
case("sum-of-neg", R, ["v"], lambda T, x: (-x).sum(), no_chain("sum", "neg"))
case("sum-of-sum", R, ["m"], lambda T, X: X.sum(axis=0).sum(), at_most(SUMS, 1))
case("mean-of-mean", R, ["m"], lambda T, X: X.mean(axis=0).mean(), at_most(SUMS, 1))
case("sum-of-zeros", R, ["v"], lambda T, x: T.zeros_like(x).sum(), lacks("sum"))
case("sum-of-alloc", R, ["s"], lambda T, s: T.alloc(s, 7).sum(), lacks("sum"))
case("neg-max-neg", R, ["v"], lambda T, x: -T.max(-x), lacks("neg"))
case("mean-static", R, [("float64", (8,))], lambda T, x: x.mean(), lacks("shape"))
case("sum-of-square-of-neg", R, ["v"], lambda T, x: ((-x) ** 2).sum(), lacks("neg"))

# --- alloc and fill -------------------------------------------------------------------------------------------------
A = "alloc"
case("plus-zeros-like", A, ["v"], lambda T, x: x + T.zeros_like(x), lacks("add", "alloc", "second"),
     refused=SIGNED_ZERO, witness=([-0.0, 1.0],))
case("minus-zeros-like", A, ["v"], lambda T, x: x - T.zeros_like(x), lacks("sub", "alloc", "second"))
case("times-ones-like", A, ["v"], lambda T, x: x * T.ones_like(x), lacks("mul", "alloc", "second"))
case("zeros-like-times", A, ["v", "v"], lambda T, x, y: T.zeros_like(x) * y, lacks("mul"), refused=NAN_INF,
     witness=([1.0, 1.0], [np.inf, np.nan]))
case("full-like-times", A, ["v", "v"], lambda T, x, y: T.full_like(x, 2.0) * y, lacks("alloc", "second"),
     refused=BROADCAST, witness=([1.0, 1.0, 1.0], [1.0]))
case("fill-plus", A, ["v"], lambda T, x: T.fill(x, 3.0) + x, lacks("alloc", "second"))
case("alloc-same-shape", A, ["v"], lambda T, x: T.alloc(x, x.shape[0]) * 2, lacks("alloc"))
case("alloc-broadcast-add", A, ["m", "s"], lambda T, X, s: T.alloc(s, X.shape[0], X.shape[1]) + X, lacks("alloc"))
case("zeros-plus-static", A, [("float64", (3,))], lambda T, x: x + T.zeros((3,)), lacks("alloc", "add"),
     refused=SIGNED_ZERO, witness=([-0.0, 1.0, 2.0],))
case("alloc-of-alloc", A, ["s"], lambda T, s: T.alloc(T.alloc(s, 3), 2, 3), at_most("alloc", 1))
case("ones-alloc-times", A, ["v"], lambda T, x: T.alloc(1.0, x.shape[0]) * x, lacks("alloc", "mul"))

# --- dot: products a BLAS kernel can fuse, and chains to reassociate -----------------------------------------
D = "dot"
case("matvec-plus-bias", D, ["m", "w", "y"], lambda T, W, x, b: W @ x + b, no_chain("add", DOTS))
case("transposed-matvec-plus-bias", D, ["m", "y", "w"], lambda T, W, x, b: W.T @ x + b, no_chain("add", DOTS))
case("scaled-matmul-plus", D, ["s", "m", "mt", SQUARE], lambda T, a, A, B, C: a * (A @ B) + C,
     all_of(no_chain("add", DOTS), no_chain("add", "mul", DOTS)))
case("matmul-plus", D, ["m", "mt", SQUARE], lambda T, A, B, C: A @ B + C, no_chain("add", DOTS))
case("scaled-matmul", D, ["m", "mt"], lambda T, A, B: 2 * (A @ B), no_chain("mul", DOTS))
case("matmul-chain-vector", D, [(F64, (200, 300)), (F64, (300, 200)), (F64, (200,))],
     lambda T, A, B, v: A @ B @ v, no_matrix_product())
case("matmul-of-negs", D, ["m", "mt"], lambda T, A, B: (-A) @ (-B), lacks("neg"))
case("matmul-of-zeros", D, ["m", "mt"], lambda T, A, B: A @ T.zeros_like(B), lacks(*DOTS), refused=NAN_INF,
     witness=([[np.inf, 1.0], [1.0, 1.0]], [[1.0, 1.0], [1.0, 1.0]]))
