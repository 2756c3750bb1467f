"""Random tensor graphs, built symbolically with ``eqgraph.tensor`` and evaluated eagerly
with NumPy in the same step, for the differential fuzz test (tests/test_fuzz.py).

Every term carries its symbolic variable and five eager *lanes* of values:

- lane 0, ``N``: NumPy in the graph's own dtypes -- the answer (dtype, shape, value)
  eqgraph must give;
- lane 1, ``R``: the same ops in long double, a more precise reference;
- lanes 2-4: long double again, with every op's rounding modelled as a random relative
  error of a few ``eps`` of the op's dtype (for sums and products, of the operands, scaled
  by the number of terms). How far these lanes stray from ``R`` measures how much the
  graph amplifies rounding, which is how far a correct rewrite may move the result.

Ops whose result jumps (comparisons, floor, ``//``, ``%``) only take graph inputs or
integer terms, so that rounding cannot flip them; ops with a restricted domain (log,
sqrt, fractional powers) only take terms whose lanes are all inside it, by a margin.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import eqgraph.tensor as et

LD = np.longdouble
N_LANES = 5
ULPS_PER_OP = 4.0  # NumPy's transcendental functions are accurate to a few ulps


@dataclass
class Term:
    sym: object              # the eqgraph variable
    lanes: list              # eager values, see the module docstring
    text: str                # the expression as Python source, for reproducers
    op: str = "input"
    args: tuple = ()
    tags: frozenset = frozenset()  # patterns of rules the term contains ("cancel", ...)

    @property
    def value(self) -> np.ndarray:
        return np.asarray(self.lanes[0])  # a Python number for weak constants

    @property
    def shape(self) -> tuple:
        return self.value.shape

    @property
    def ndim(self) -> int:
        return self.value.ndim

    @property
    def kind(self) -> str:
        return self.value.dtype.kind

    @property
    def exact(self) -> bool:
        """Whether every lane holds the same values (inputs, integers, booleans): ops whose
        result jumps may take it."""
        return self.op in ("input", "weak", "constant") or self.kind in "biu"

    def walk(self):
        """This term and every term below it."""
        yield self
        for a in self.args:
            yield from a.walk()


@dataclass
class Graph:
    seed: int
    inputs: list             # [(symbolic input, value)]
    outputs: list            # [Term]
    source: list = field(default_factory=list)  # lines of Python that declare the inputs

    @property
    def tags(self) -> frozenset:
        return frozenset().union(*(t.tags for t in self.outputs))

    def terms(self):
        for out in self.outputs:
            yield from out.walk()

    def describe(self) -> str:
        """Python source that rebuilds the graph and its input values."""
        lines = list(self.source)
        lines.append(f"outputs = [{', '.join(t.text for t in self.outputs)}]")
        for sym, value in self.inputs:
            lines.append(f"{sym.name}_value = np.array({value.tolist()!r}, dtype={value.dtype.name!r})")
        return "\n".join(lines)


# -- eager evaluation ------------------------------------------------------------------
def _to_reference(x):
    x = np.asarray(x)
    return x.astype(LD) if x.dtype.kind in "iuf" else x


def _exact_lanes(value) -> list:
    """The lanes of an input or constant: its value in every lane, floats in long double
    after lane 0 (integers stay integers, so that they wrap around as in lane 0)."""
    reference = value.astype(LD) if value.dtype.kind == "f" else value
    return [value] + [reference] * (N_LANES - 1)


def _jitter(rng, x, scale):
    """``x`` times ``1 + u * scale`` with ``u`` uniform in [-1, 1] per element."""
    if x.dtype.kind != "f":
        return x
    return x * (1 + rng.uniform(-1, 1, size=x.shape).astype(LD) * LD(scale))


def evaluate(rng, fn, args, operand_terms=1):
    """The lanes of ``fn(*args)``; ``operand_terms`` > 1 for reductions and products, whose
    rounding error grows with the number of terms summed."""
    with np.errstate(all="ignore"):
        native = np.asarray(fn(*[a.lanes[0] for a in args]))
        lanes = [native]
        floating = native.dtype.kind == "f"
        eps = float(np.finfo(native.dtype).eps) if floating else 0.0
        for lane in range(1, N_LANES):
            ins = [a.lanes[lane] for a in args]
            if floating:
                ins = [_to_reference(x) for x in ins]
            if lane >= 2 and operand_terms > 1:
                ins = [_jitter(rng, x, operand_terms * eps) for x in ins]
            out = np.asarray(fn(*ins))
            if lane >= 2 and floating:
                out = _jitter(rng, out, ULPS_PER_OP * eps)
            lanes.append(out)
    return lanes


def spread(lanes) -> np.ndarray:
    """Per element, how far the perturbed lanes stray from the reference lane."""
    ref = lanes[1].astype(LD)
    with np.errstate(all="ignore"):
        return np.max([np.abs(p.astype(LD) - ref) for p in lanes[2:]], axis=0)


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _softmax(x):
    x = x if x.dtype.kind == "f" else x.astype(np.float64)  # as eqgraph's Softmax: ints give float64
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


# fmt: off
NUMPY = {  # eqgraph.tensor name -> the NumPy function it must agree with
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "true_div": np.true_divide,
    "int_div": np.floor_divide, "mod": np.remainder, "pow": np.power, "maximum": np.maximum,
    "minimum": np.minimum, "neg": np.negative, "abs": np.abs, "exp": np.exp, "expm1": np.expm1,
    "log": np.log, "log1p": np.log1p, "sqrt": np.sqrt, "sqr": lambda x: np.multiply(x, x),
    "tanh": np.tanh, "sin": np.sin, "cos": np.cos, "arctan": np.arctan, "sigmoid": _sigmoid,
    "softplus": lambda x: np.logaddexp(np.zeros_like(x), x), "floor": np.floor, "ceil": np.ceil,
    "round": np.round, "sign": np.sign, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal, "eq": np.equal, "neq": np.not_equal, "switch": np.where,
    "zeros_like": np.zeros_like, "ones_like": np.ones_like, "softmax": lambda x: _softmax(x),
    "arcsinh": np.arcsinh, "arccosh": np.arccosh, "arctanh": np.arctanh,
}
# fmt: on
NOT_FUZZED = {  # elementwise ops of the registry that the graphs here never draw, and why
    **dict.fromkeys(["exp2", "log2", "log10", "tan", "arcsin", "arccos", "sinh", "cosh", "erf", "log1mexp",
                     "logaddexp", "logdiffexp", "arctan2"], "no domain row yet: drawn by the op tests (tests/op_cases.py) only"),
    **dict.fromkeys(["clip", "second"], "no template draws it yet: drawn by the op tests only"),
    **dict.fromkeys(["real", "imag", "conj", "angle", "complex", "complex_from_polar"],
                    "complex numbers: the graphs here are real; drawn by the op tests and tests/tensor/test_complex.py"),
    **dict.fromkeys(["gammaln", "psi", "tri_gamma", "erfc", "erfcx", "erfinv", "erfcinv", "logit", "gamma", "betaln",
                     "beta", "i0", "i1", "ive", "gammainc", "gammaincc", "gammaincinv", "gammainccinv", "polygamma",
                     "betainc", "betainc_da", "betainc_db"],
                    "SciPy's special functions have no long-double loop, which the reference lanes here are "
                    "computed in: drawn by the op tests and tests/tensor/test_special.py"),
    **dict.fromkeys(["xlogx", "xlogy0"], "no domain row yet (PyTensor's float dtypes, not NumPy's, for integer "
                    "inputs): drawn by the op tests and tests/tensor/test_special.py"),
    **dict.fromkeys(["and_", "or_", "xor", "invert", "isnan", "isinf"],
                    "boolean results: the graphs here draw only comparisons and switch on them"),
}


#: the special input values of an "edgy" graph, per dtype: signed zeros and infinities, NaN,
#: the largest and smallest magnitudes (denormals), just above where exp overflows, and where
#: products overflow
EXTREMES = {
    "float64": np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e300, -1e300, 5e-324, -5e-324, 2.2e-308,
                         1e-20, -1e-20, 700.0, -700.0, 1e200, -1e200, 1.0, -1.0]),
    "float32": np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3e38, -3e38, 1e-45, -1e-45, 1.2e-38,
                         1e-20, -1e-20, 90.0, -90.0, 1e30, -1e30, 1.0, -1.0], dtype="float32"),
}


# -- domains: which terms an op may take -------------------------------------------------
def _margin_above(t: Term, floor: float) -> bool:
    """Every lane of ``t`` is above ``floor`` by more than rounding can move it; an input
    may sit on the floor exactly (log(0) is -inf whoever computes it)."""
    if t.kind not in "fiu":
        return False
    with np.errstate(all="ignore"):
        if t.exact:
            return bool(np.all(t.value >= floor))
        gap = t.lanes[1].astype(LD) - LD(floor)
        return bool(np.all((gap > 0) & (gap > 16 * spread(t.lanes))))


def numeric(t):
    return t.kind in "fiu"


def floating(t):
    return t.kind == "f"


def positive(t):
    return _margin_above(t, 0.0)


def above_minus_one(t):
    return _margin_above(t, -1.0)


def above_one(t):
    return _margin_above(t, 1.0)


def inside_one(t):
    """Inside (-1, 1) by a margin, or exactly on its ends (arctanh is +-inf there)."""
    negated = Term(t.sym, [np.negative(lane) for lane in t.lanes], t.text, t.op)
    return _margin_above(t, -1.0) and _margin_above(negated, -1.0)


def exact_numeric(t):
    return t.exact and t.kind in "fiu"


def exact_nonzero(t):
    return exact_numeric(t) and bool(np.all(t.value != 0))


def constant_float(t):
    return t.op in ("weak", "constant") and t.kind == "f"


UNARY = {  # name: the terms it takes
    "neg": numeric, "abs": numeric, "exp": numeric, "expm1": numeric, "log": positive,
    "log1p": above_minus_one, "sqrt": positive, "sqr": numeric, "tanh": numeric, "sin": floating,
    "cos": floating, "arctan": numeric, "sigmoid": numeric, "softplus": numeric,
    "floor": exact_numeric, "ceil": exact_numeric, "round": exact_numeric, "sign": exact_numeric,
    "zeros_like": numeric, "ones_like": numeric,
    "arcsinh": numeric, "arccosh": above_one, "arctanh": inside_one,
}
#: the unary ops that make_graph(seed) draws: tests pin seeds of its graphs (loop kernels, match
#: bounds, shape roots), so an op added since is drawn only by make_graph(seed, every_op=True),
#: which tests/tensor/test_registry.py fuzzes; make_graph(seed) stays the graph it was
SEEDED_UNARY = ("neg", "abs", "exp", "expm1", "log", "log1p", "sqrt", "sqr", "tanh", "sin", "cos", "arctan",
                "sigmoid", "softplus", "floor", "ceil", "round", "sign", "zeros_like", "ones_like")
BINARY = {  # name: (the first operands it takes, the second operands it takes)
    "add": (numeric, numeric), "sub": (numeric, numeric), "mul": (numeric, numeric),
    "true_div": (numeric, numeric), "maximum": (numeric, numeric), "minimum": (numeric, numeric),
    "pow": (positive, constant_float), "int_div": (exact_numeric, exact_nonzero),
    "mod": (exact_numeric, exact_nonzero),
}


# -- building terms ------------------------------------------------------------------
def _zero_tags(value) -> frozenset:
    """Constants 0 and -0.0 are tagged: the signed-zero bug (KNOWN_BUGS) needs them."""
    if value != 0:
        return frozenset()
    return frozenset({"zero", "negzero"} if np.signbit(value) else {"zero"})


def weak_constant(value) -> Term:
    """A Python number: weak in NumPy's promotion (NEP 50), as in eqgraph's."""
    return Term(et.constant(value), [value] * N_LANES, repr(value), "weak", (), _zero_tags(value))


class Builder:
    """Grows one random graph: a pool of terms; each step applies one op (or a template
    of a few) to terms of the pool, sometimes with a new input."""

    def __init__(self, seed: int, every_op: bool = False):
        self.seed = seed
        self.unary_ops = list(UNARY) if every_op else list(SEEDED_UNARY)
        self.rng = r = np.random.default_rng(seed)           # the graph and its inputs
        self.noise = np.random.default_rng([seed, 1])         # the perturbed lanes: drawn apart,
        #                                                       so that the graphs do not depend on them
        self.inputs: list = []
        self.pool: list[Term] = []
        self.source: list[str] = []
        kinds = ["float64", "float32", "int64"]
        self.dtypes = [str(r.choice(kinds))] + ([str(r.choice(kinds))] if r.random() < 0.35 else [])
        self.edgy = r.random() < 0.4  # zeros, -0.0, tiny and huge values, overflow
        self.base = tuple(int(s) for s in r.integers(1, 5, size=r.integers(0, 4)))

    def choice(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    # -- inputs ---------------------------------------------------------------------
    def values(self, shape, dtype) -> np.ndarray:
        r = self.rng
        if dtype == "int64":
            v = r.integers(-5, 6, size=shape)
            if self.edgy:  # products wrap around
                big = r.choice([2**40, -(2**40), 2**62, -(2**62), 0], size=shape)
                v = np.where(r.random(shape) < 0.2, big, v)
            return np.asarray(v, dtype=dtype)
        v = r.uniform(-3, 3, size=shape)
        if self.edgy:
            v = np.where(r.random(shape) < 0.35, r.choice(EXTREMES[dtype], size=shape), v)
        return np.asarray(v, dtype=dtype)

    def new_input(self, shape, dtype=None, value=None) -> Term:
        dtype = dtype or self.choice(self.dtypes)
        name = f"x{len(self.inputs)}"
        static = tuple(s if self.rng.random() < 0.5 else None for s in shape)
        sym = et.tensor(name, dtype, static)
        value = self.values(shape, dtype) if value is None else value
        self.inputs.append((sym, value))
        self.source.append(f"{name} = et.tensor({name!r}, {dtype!r}, {static})")
        return Term(sym, _exact_lanes(value), name)

    def broadcast_input(self) -> Term:
        """An input whose shape broadcasts against the graph's base shape."""
        n = int(self.rng.integers(0, len(self.base) + 1))
        shape = tuple(1 if self.rng.random() < 0.25 else s for s in self.base[len(self.base) - n:])
        return self.new_input(shape)

    def constant(self, like: Term) -> Term:
        """A Python number (weak, NEP 50) or, sometimes, a 0-d/1-element array of a fixed dtype."""
        value = self.choice([2.0, 0.5, -1.5, 3, -2, 1, 0.0, -0.0, 1.0, -1.0])
        if self.rng.random() < 0.3:
            dtype = self.choice(["float64", "float32", "int64"])
            arr = np.full((1,) * min(like.ndim, int(self.rng.integers(0, 2))), value, dtype=dtype)
            text = f"et.constant(np.array({arr.tolist()!r}, dtype={dtype!r}))"
            return Term(et.constant(arr), _exact_lanes(arr), text,
                        "constant", (), _zero_tags(value))
        return weak_constant(value)

    # -- one op -----------------------------------------------------------------------
    def term(self, sym, fn, args, text, op, operand_terms=1, tags=()) -> Term:
        lanes = evaluate(self.noise, fn, args, operand_terms)
        all_tags = frozenset(tags).union(*(a.tags for a in args))
        return Term(sym, lanes, text, op, tuple(args), all_tags)

    def op(self, name, *args, tags=()) -> Term:
        """``et.<name>(*args)`` and ``NUMPY[name](*args)``; ``args`` are terms or Python numbers."""
        args = [a if isinstance(a, Term) else weak_constant(a) for a in args]
        syms = [a.sym for a in args]
        text = f"et.{name}({', '.join(a.text for a in args)})"
        if _stable_pattern(name, args):
            tags = (*tags, "stable")
        return self.term(getattr(et, name)(*syms), NUMPY[name], args, text, name, tags=tags)

    def step(self) -> Term | None:
        makers = [self.unary, self.unary, self.binary, self.binary, self.template, self.template,
                  self.reduce, self.index, self.dimshuffle, self.reshape, self.matmul, self.chain,
                  self.compare, self.write, self.join]
        return self.choice(makers)()

    def grow(self, n_ops: int) -> Graph:
        for _ in range(int(self.rng.integers(1, 3))):
            self.pool.append(self.broadcast_input())
        made = []
        for _ in range(n_ops * 4):
            if len(made) == n_ops:
                break
            t = self.step()
            if t is not None:
                self.pool.append(t)
                made.append(t)
        outputs = [made[-1]] if made else [self.pool[-1]]
        if len(made) > 1 and self.rng.random() < 0.4:
            outputs.append(self.choice(made[:-1]))
        return Graph(self.seed, self.inputs, outputs, self.source)

    # -- elementwise ------------------------------------------------------------------
    def unary(self):
        t = self.choice(self.pool)
        name = self.choice(self.unary_ops)
        return self.op(name, t) if UNARY[name](t) else None

    def pair(self):
        """Two terms of the pool whose shapes broadcast together."""
        for _ in range(6):
            a, b = self.choice(self.pool), self.choice(self.pool)
            if _broadcasts(a, b):
                return a, b
        return None

    def binary(self):
        pair = self.pair()
        if pair is None:
            return None
        a, b = pair
        if self.rng.random() < 0.3:
            b = self.constant(a)
        if self.rng.random() < 0.5:
            a, b = b, a
        name = self.choice(list(BINARY))
        takes_a, takes_b = BINARY[name]
        return self.op(name, a, b) if takes_a(a) and takes_b(b) else None

    def template(self):
        """A pattern that one of the shipped rules rewrites (rulesets/*.egg)."""
        x = self.choice(self.pool)
        name = self.choice(list(TEMPLATES))
        build, domain, tags = TEMPLATES[name]
        if not domain(x):
            return None
        y = self.choice(self.pool)
        y = y if _broadcasts(x, y) and numeric(y) else x
        out = build(_Expr(self, x), _Expr(self, y), _Calls(self)).term
        return Term(out.sym, out.lanes, out.text, out.op, out.args, out.tags | frozenset(tags))

    def compare(self):
        """A comparison of exact terms, then a switch or a cast that uses it; or a switch on
        an integer term or a boolean input (true where nonzero, as np.where reads it)."""
        exact = [t for t in self.pool if exact_numeric(t)]
        if not exact:
            return None
        a = self.choice(exact)
        how = self.rng.random()
        if how < 0.2 and a.kind in "iu":
            cond = a
        elif how < 0.35:
            cond = self.new_input(a.shape, "bool", value=self.rng.random(a.shape) < 0.5)
        else:
            others = [t for t in exact if _broadcasts(a, t)]
            b = self.choice(others) if others and self.rng.random() < 0.6 else 0
            cond = self.op(self.choice(["lt", "le", "gt", "ge", "eq", "neq"]), a, b)
        pair = self.pair()
        if pair is None or not _broadcasts(cond, *pair) or self.rng.random() < 0.2:
            dtype = self.choice(["float32", "float64", "int64"])
            return self.term(et.cast(cond.sym, dtype), lambda c: c.astype(dtype), [cond],
                             f"et.cast({cond.text}, {dtype!r})", "cast")
        return self.op("switch", cond, *pair)

    # -- reductions ---------------------------------------------------------------------
    def reduce(self):
        t = self.choice(self.pool)
        name = self.choice(["sum", "sum", "prod", "max", "min", "mean"])
        keepdims = bool(self.rng.random() < 0.3)
        axis = None
        if t.ndim and self.rng.random() < 0.7:
            axes = self.rng.permutation(t.ndim)[: self.rng.integers(1, t.ndim + 1)]
            axes = [int(a) - t.ndim if self.rng.random() < 0.3 else int(a) for a in axes]
            axis = axes[0] if len(axes) == 1 and self.rng.random() < 0.5 else tuple(axes)
        reduced = range(t.ndim) if axis is None else np.atleast_1d(axis)
        n = int(np.prod([t.shape[a] for a in reduced]))
        fn = getattr(np, name)
        return self.term(getattr(et, name)(t.sym, axis=axis, keepdims=keepdims),
                         lambda x: fn(x, axis=axis, keepdims=keepdims), [t],
                         f"et.{name}({t.text}, axis={axis}, keepdims={keepdims})", name,
                         operand_terms=n if name in ("sum", "prod", "mean") else 1)

    # -- shapes and indexing ------------------------------------------------------------
    def dimshuffle(self):
        t = self.choice(self.pool)
        if t.ndim >= 2 and self.rng.random() < 0.3:
            return self.term(t.sym.T, lambda x: x.T, [t], f"{t.text}.T", "transpose")
        static = t.sym.type.shape
        kept = [a for a in self.rng.permutation(t.ndim).tolist()
                if static[a] != 1 or self.rng.random() < 0.5]  # axes of static size 1 may go
        order = list(kept)
        for _ in range(int(self.rng.integers(0, 2))):
            order.insert(int(self.rng.integers(0, len(order) + 1)), "x")
        dropped = tuple(a for a in range(t.ndim) if a not in kept)

        def fn(x):
            x = np.transpose(np.squeeze(x, axis=dropped), [sorted(kept).index(k) for k in kept])
            sizes = iter(x.shape)
            return x.reshape([1 if o == "x" else next(sizes) for o in order])

        return self.term(t.sym.dimshuffle(*order), fn, [t], f"{t.text}.dimshuffle{tuple(order)}", "dimshuffle")

    def reshape(self):
        t = self.choice(self.pool)
        rest, dims = int(np.prod(t.shape)), []
        for _ in range(int(self.rng.integers(0, 3))):
            d = self.choice([d for d in range(1, rest + 1) if rest % d == 0])
            dims.append(d)
            rest //= d
        dims = [int(d) for d in self.rng.permutation(dims + [rest])]
        if self.rng.random() < 0.4:
            dims[int(self.rng.integers(len(dims)))] = -1
        shape = tuple(dims)
        return self.term(t.sym.reshape(shape), lambda x: x.reshape(shape), [t], f"{t.text}.reshape({shape})", "reshape")

    def index(self):
        """``t[index]``, the index drawn by ``random_index``."""
        candidates = [t for t in self.pool if t.ndim]
        if not candidates:
            return None
        t = self.choice(candidates)
        drawn = self.random_index(t)
        if drawn is None:
            return None
        sym_index, numpy_index, text = drawn
        return self.term(t.sym[sym_index], lambda x: x[numpy_index], [t], f"{t.text}[{text}]", "index")

    def random_index(self, t: Term, newaxis: bool = True):
        """``(index for eqgraph, index for NumPy, source text)`` selecting a non-empty part
        of ``t``: integers, slices (negative steps too), newaxis and integer arrays (constant
        or inputs of the graph), mixed as NumPy allows; None if the draw is not valid."""
        r = self.rng
        entries = []  # (the index entry for eqgraph, for NumPy, as source text)
        n_arrays = 0
        for axis, n in enumerate(t.shape):
            if axis and r.random() < 0.3:
                break  # the trailing axes are left out
            if newaxis and r.random() < 0.1:
                entries.append((None, None, "None"))
            kind = r.random()
            if kind < 0.25:
                i = int(r.integers(-n, n))
                entries.append((i, i, str(i)))
            elif kind < 0.45 and n_arrays < 2:
                n_arrays += 1
                idx = r.integers(-n, n, size=tuple(int(s) for s in r.integers(1, 4, size=r.integers(1, 3))))
                if r.random() < 0.3:  # a symbolic index array
                    idx_input = self.new_input(idx.shape, "int64", value=idx.astype("int64"))
                    entries.append((idx_input.sym, idx, idx_input.text))
                else:
                    entries.append((idx, idx, f"np.array({idx.tolist()})"))
            else:
                s = self.random_slice(n)
                entries.append((s, s, ":".join("" if p is None else str(p) for p in (s.start, s.stop, s.step))))
        sym_index, numpy_index, text = (tuple(column) for column in zip(*entries))
        try:
            if t.value[numpy_index].size == 0:
                return None
        except IndexError:  # index arrays that do not broadcast together (an input made
            return None     # for one stays unused: the functions ignore unused inputs)
        return sym_index, numpy_index, ", ".join(text)

    def write(self):
        """``set_subtensor(t[index], y)`` or ``inc_subtensor`` (repeated array indices add
        up, as ``np.add.at``: eqgraph follows Aesara there, not ``x[idx] += y``)."""
        candidates = [t for t in self.pool if t.ndim and t.kind in "fi"]
        if not candidates:
            return None
        t = self.choice(candidates)
        drawn = self.random_index(t, newaxis=False)
        if drawn is None:
            return None
        sym_index, numpy_index, text = drawn
        if t.sym[sym_index] is t.sym:  # full slices: et.getitem returns t itself, not a view to write
            return None
        region = t.value[numpy_index].shape
        fits = [y for y in self.pool if y.ndim <= len(region) and np.can_cast(y.value.dtype, t.value.dtype)
                and _broadcasts_to(y.shape, region)]
        y = self.choice(fits) if fits and self.rng.random() < 0.5 else self.new_input(region, t.value.dtype.name)
        set_ = bool(self.rng.random() < 0.5)

        def fn(x, v):
            out = x.copy()
            if set_:
                out[numpy_index] = v
            else:
                np.add.at(out, numpy_index, np.broadcast_to(v, region))  # broadcast by hand: see index_add
            return out

        name = "set_subtensor" if set_ else "inc_subtensor"
        sym = getattr(et, name)(t.sym[sym_index], y.sym)
        return self.term(sym, fn, [t, y], f"et.{name}({t.text}[{text}], {y.text})", name)

    def join(self):
        """``et.concatenate`` or ``et.stack`` of a term and a term or input that fits."""
        t = self.choice(self.pool)
        axis = int(self.rng.integers(0, t.ndim + 1))
        if axis < t.ndim and self.rng.random() < 0.6:
            shape = list(t.shape)
            shape[axis] = int(self.rng.integers(1, 4))
            other = self.new_input(tuple(shape))
            return self.term(et.concatenate([t.sym, other.sym], axis=axis),
                             lambda a, b: np.concatenate([a, b], axis=axis), [t, other],
                             f"et.concatenate([{t.text}, {other.text}], axis={axis})", "concatenate")
        same = [o for o in self.pool if o.shape == t.shape]
        other = self.choice(same) if self.rng.random() < 0.5 else self.new_input(t.shape)
        return self.term(et.stack([t.sym, other.sym], axis=axis), lambda a, b: np.stack([a, b], axis=axis),
                         [t, other], f"et.stack([{t.text}, {other.text}], axis={axis})", "stack")

    def random_slice(self, n: int) -> slice:
        while True:
            s = slice(self.choice([None, int(self.rng.integers(-n - 1, n + 1))]),
                      self.choice([None, int(self.rng.integers(-n - 1, n + 2))]),
                      self.choice([None, 1, 2, -1, -2, 3]))
            if len(range(*s.indices(n))):
                return s

    # -- matrix products --------------------------------------------------------------------
    def matmul(self):
        """``t @ new`` or ``new @ t`` for a term ``t`` and a new input of 1 to 3 dimensions
        that fits it, or ``a @ b`` for two terms of the pool that fit. Repeated, this grows
        chains of every ndim and both association orders."""
        candidates = [t for t in self.pool if 1 <= t.ndim <= 3 and t.kind in "fi"]
        if not candidates:
            return None
        products = [t for t in candidates if t.op == "matmul"]
        t = self.choice(products if products and self.rng.random() < 0.6 else candidates)  # grow chains
        left = bool(self.rng.random() < 0.5)  # t on the left
        fitting = [o for o in candidates if _matmul_fits(*((t, o) if left else (o, t)))]
        if fitting and self.rng.random() < 0.25:
            other = self.choice(fitting)
        else:
            other = self.new_input(self.matmul_partner(t.shape, left))
        return self.product(*((t, other) if left else (other, t)))

    def chain(self):
        """A product of 3 or 4 new inputs of 1 to 3 dimensions, associated at random."""
        t = self.new_input(tuple(int(s) for s in self.rng.integers(1, 5, size=self.rng.integers(1, 4))))
        for _ in range(int(self.rng.integers(2, 4))):
            if t.ndim == 0:  # vector @ vector ended the chain
                break
            left = bool(self.rng.random() < 0.5)
            other = self.new_input(self.matmul_partner(t.shape, left))
            t = self.product(*((t, other) if left else (other, t)))
        return t

    def product(self, a: Term, b: Term) -> Term:
        t = self.term(a.sym @ b.sym, np.matmul, [a, b], f"({a.text} @ {b.text})", "matmul",
                      operand_terms=a.shape[-1])
        with np.errstate(all="ignore"):
            others = associations([o.value for o in chain_operands(t)])
        if any(o.shape == t.shape and _nonfinite_differ(o, t.value).any() for o in others):
            t.tags |= {"overflowing association"}  # matmul-assoc may pick that one
        return t

    def matmul_partner(self, shape, left: bool) -> tuple:
        r = self.rng
        k = shape[-1] if left else (shape[0] if len(shape) == 1 else shape[-2])
        p = int(r.integers(1, 5))
        ndim = int(r.integers(1, 4))
        if ndim == 1:
            return (k,)
        core = (k, p) if left else (p, k)
        if ndim == 2:
            return core
        batch = (self.choice([shape[0], 1]),) if len(shape) == 3 else (int(r.integers(1, 4)),)
        return batch + core


def _stable_pattern(name, args) -> bool:
    """Whether ``name(*args)`` is the left side of a rule of rulesets/stability.egg or
    algebra.egg that stays finite where NumPy overflows (log(exp(x)) -> x, ...)."""
    (a, *_) = args
    inner = a.op if a.op != "neg" else "neg " + a.args[0].op
    return ((name == "log" and inner in ("exp", "sigmoid", "add", "softmax"))
            or (name == "log1p" and inner == "exp")
            or (name == "sqrt" and (inner == "sqr" or (inner == "mul" and a.args[0] is a.args[1])))
            or (name == "sub" and inner in ("exp", "weak") and args[1].op in ("sigmoid", "weak")))


def _nonfinite_differ(a, b) -> np.ndarray:
    """Where ``a`` or ``b`` is inf or NaN and they are not the same (inf and NaN, +inf and -inf)."""
    return (~np.isfinite(a) | ~np.isfinite(b)) & ~((a == b) | (np.isnan(a) & np.isnan(b)))


def _broadcasts_to(shape, target) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


def _broadcasts(*terms) -> bool:
    try:
        np.broadcast_shapes(*(t.shape for t in terms))
    except ValueError:
        return False
    return True


def _matmul_fits(a: Term, b: Term) -> bool:
    try:
        np.matmul(np.zeros(a.shape), np.zeros(b.shape))
    except ValueError:
        return False
    return True


def chain_operands(t: Term) -> list:
    """The operands of the product of products ``t`` (itself, if not a product)."""
    if t.op != "matmul":
        return [t]
    return [o for a in t.args for o in chain_operands(a)]


def associations(values: list) -> list:
    """``values[0] @ ... @ values[-1]`` under every association that NumPy accepts."""
    if len(values) == 1:
        return [values[0]]
    out = []
    for split in range(1, len(values)):
        for left in associations(values[:split]):
            for right in associations(values[split:]):
                try:
                    out.append(np.matmul(left, right))
                except ValueError:
                    pass
    return out


# -- templates: the patterns the shipped rules rewrite, written with operators ----------
class _Expr:
    """A term inside a template: Python operators build terms through ``Builder.op``."""

    def __init__(self, builder: Builder, term: Term):
        self.b, self.term = builder, term

    def _apply(self, name, *args):
        return _Expr(self.b, self.b.op(name, *[a.term if isinstance(a, _Expr) else a for a in args]))

    def __add__(self, o): return self._apply("add", self, o)
    def __radd__(self, o): return self._apply("add", o, self)
    def __sub__(self, o): return self._apply("sub", self, o)
    def __rsub__(self, o): return self._apply("sub", o, self)
    def __mul__(self, o): return self._apply("mul", self, o)
    def __rmul__(self, o): return self._apply("mul", o, self)
    def __truediv__(self, o): return self._apply("true_div", self, o)
    def __pow__(self, o): return self._apply("pow", self, o)
    def __neg__(self): return self._apply("neg", self)


class _Calls:
    """``f.log(x)`` and friends inside a template."""

    def __init__(self, builder: Builder):
        self.b = builder

    def __getattr__(self, name):
        return lambda x: _Expr(self.b, self.b.op(name, x.term))


# fmt: off
TEMPLATES = {  # name: (build(x, y, f), the x it takes, tags); y broadcasts with x
    "log(1+x)":         (lambda x, y, f: f.log(1 + x), above_minus_one, ()),
    "log(x+1)":         (lambda x, y, f: f.log(x + 1.0), above_minus_one, ()),
    "exp(x)-1":         (lambda x, y, f: f.exp(x) - 1, numeric, ()),
    "log(exp(x))":      (lambda x, y, f: f.log(f.exp(x)), numeric, ()),
    "sqrt(x*x)":        (lambda x, y, f: f.sqrt(x * x), numeric, ()),
    "sqrt(sqr(x))":     (lambda x, y, f: f.sqrt(f.sqr(x)), numeric, ()),
    "x*y/y":            (lambda x, y, f: x * y / y, numeric, ("cancel",)),
    "y*x/y":            (lambda x, y, f: y * x / y, numeric, ("cancel",)),
    "x**2":             (lambda x, y, f: x ** 2.0, floating, ()),
    "x**3":             (lambda x, y, f: x ** 3.0, floating, ()),
    "x**6":             (lambda x, y, f: x ** 6.0, floating, ()),
    "x**0.5":           (lambda x, y, f: x ** 0.5, positive, ()),
    "x**1":             (lambda x, y, f: x ** 1.0, floating, ()),
    "x*1":              (lambda x, y, f: x * 1.0, numeric, ()),
    "1*x":              (lambda x, y, f: 1 * x, numeric, ()),
    "x+0":              (lambda x, y, f: x + 0.0, numeric, ()),
    "0+x":              (lambda x, y, f: 0 + x, numeric, ()),
    "x-0":              (lambda x, y, f: x - 0.0, numeric, ()),
    "x/1":              (lambda x, y, f: x / 1.0, numeric, ()),
    "--x":              (lambda x, y, f: -(-x), numeric, ()),
    "x*-1":             (lambda x, y, f: x * -1.0, numeric, ()),
    "x/4":              (lambda x, y, f: x / 4.0, numeric, ()),
    "x/-3":             (lambda x, y, f: x / -3.0, numeric, ()),
    "x*x":              (lambda x, y, f: x * x, numeric, ()),
    "(x+y)-y":          (lambda x, y, f: (x + y) - y, numeric, ("add-cancel",)),
    "y+(x-y)":          (lambda x, y, f: y + (x - y), numeric, ("add-cancel",)),
    "x+-y":             (lambda x, y, f: x + -y, numeric, ()),
    "x--y":             (lambda x, y, f: x - -y, numeric, ()),
    "log1p(exp(x))":    (lambda x, y, f: f.log1p(f.exp(x)), numeric, ()),
    "log(sigmoid(x))":  (lambda x, y, f: f.log(f.sigmoid(x)), numeric, ()),
    "log(sigmoid(-x))": (lambda x, y, f: f.log(f.sigmoid(-x)), numeric, ()),
    "1-sigmoid(x)":     (lambda x, y, f: 1 - f.sigmoid(x), numeric, ()),
    "log(softmax(x))":  (lambda x, y, f: f.log(f.softmax(x)), lambda t: numeric(t) and t.ndim > 0, ()),
}
# fmt: on


def make_graph(seed: int, every_op: bool = False) -> Graph:
    """The random graph number ``seed`` (the same graph on every machine); ``every_op``: drawing
    every unary op of the table, not only SEEDED_UNARY."""
    builder = Builder(seed, every_op)
    return builder.grow(int(builder.rng.integers(2, 10)))
