"""What the soundness checker draws for a rule's pattern: a ``Binding`` of its variables (tensor
types, then inputs and arrays; primitives such as dtypes, ndims and constants) and the schedules
that put every ndim and dtype mix in turn.

Values are drawn as check.py's docstring says: nonzero finite values, and for a rule that assumes
nothing inf, NaN and zeros among them; a ``:domain`` operand inside its domain.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from unification import isvar

import eqgraph.tensor as et
from eqgraph.egraph.schema import Schema, encode_index
from eqgraph.soundness.guard_facts import alias_operands, guard_value
from eqgraph.tensor.subtensor import FULL_SLICE
from eqgraph.terms import Constant

DTYPES = ("float64", "float32", "int64", "bool")
#: the dtypes of the checker's second pass: complex operands, since a rule that holds for real
#: numbers only (log(exp(x)) = x) must say so in its guards (types.egg's real-dtypes); a pass of
#: its own leaves the real draws as they are
COMPLEX_PASS_DTYPES = ("complex128",)
#: the second pass draws this share of the first's bindings
COMPLEX_PASS_SHARE = 0.25
NDIMS = (0, 1, 2, 3)
CONSTANTS = (0.0, 0.5, 1.0, -1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 10.0, -1.5)  # for f64 variables
#: the exceptions a drawn run-time check raises (its props name the class)
CHECK_EXCEPTIONS = ("AssertionError", "ValueError")
#: egglog's primitive functions that rule patterns use, for building right-hand sides
PRIMITIVES = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
              "/": lambda a, b: a / b, "%": lambda a, b: a % b, "neg": lambda a: -a, "min": min, "max": max,
              "vec-length": len, "vec-of": lambda *items: tuple(items), "vec-empty": tuple,
              "vec-get": lambda vec, i: vec[i],
              "set-get": lambda one, i: one}  # a guard-bound set of one (derived) is held as its element
SCHEMA = Schema()
#: the values IEEE arithmetic gets wrong as real-number identities: a rule that assumes nothing keeps them
SPECIAL_FLOATS = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0])
#: complex values get none: NumPy's complex arithmetic has no one infinity to keep ((inf+0j) * 1 is
#: inf+nanj, where C99's Annex G and x * 1 -> x both give inf+0j; a division by a complex zero makes
#: such infinities), docs/conventions.md
SPECIAL_SHARE = 0.3   # of the drawn elements, for such a rule
CONSTANT_SHARE = 0.3  # of its operands drawn as constants, for guards that read value facts


def _positive_definite(rng, shape, dtype):
    """A stack of symmetric positive definite matrices: ``R @ R.mT + n * I`` (the identity for bool)."""
    n = shape[-1]
    identity = np.broadcast_to(np.eye(n, dtype=dtype), shape)
    if dtype == "bool":
        return identity.copy()
    r = rng.integers(-3, 4, size=shape) if dtype.startswith("int") else rng.uniform(-2.0, 2.0, size=shape)
    if dtype.startswith("complex"):  # Hermitian positive definite: R @ R^H + n * I
        r = r + 1j * rng.uniform(-2.0, 2.0, size=shape)
    return np.asarray(r @ np.conj(np.swapaxes(r, -1, -2)) + n * identity, dtype=dtype)


#: the operands a rule's ``:domain`` asks for (ruleset.DOMAINS), drawn from (rng, shape, dtype);
#: their last two axes are drawn equal
DOMAIN_VALUES = {"positive-definite": _positive_definite}
#: ops whose index list (``idx_list``) is drawn for the operand's ndim, and the entry that reads
#: their one index input (a 0-d integer "?", an array "a"; None: no index input); the other props
#: they carry (``slicing``, ``int_indices``, ``block_at``) are derived from it
INDEXED = {"Subtensor_1": None, "IncSubtensor_2": None, "Subtensor_2": "?", "AdvancedSubtensor_2": "a"}
#: the entries an index is drawn from: in range for every axis size the draws use (1 or more)
INDEX_ENTRIES = (0, -1, FULL_SLICE, ("slice", 1, None, None), ("slice", None, None, -1),
                 ("slice", 0, 1, None), ("slice", None, -1, None))


class Uncheckable(ValueError):
    """A rule the checker cannot check (the message says why): reported, not raised."""


class UnknownConstructor(Uncheckable):
    """A pattern names a constructor the checker cannot build."""


def _every_mix_in_turn(mixes: list, rng):
    """Each of ``mixes`` once per pass, in a new order each pass: ndim and dtype mixes come
    from two such schedules, and a fixed order would pair them the same way every pass."""
    while True:
        for i in rng.permutation(len(mixes)):
            yield mixes[i]


def _dtype_mixes(n: int, rng, first_pass: int, dtypes=DTYPES):
    """Dtypes for ``n`` typed pattern variables, of ``dtypes``.  The first ``first_pass`` draws
    (one pass over the ndim mixes) give them all one dtype, since guards mostly ask for that;
    after it, every mix in turn on every other draw.  So a rule wrong for one mix of dtypes (x
    float64 over an int64 constant) meets it within ``first_pass + 2 * len(dtypes) ** n`` draws,
    not by luck."""
    same = _every_mix_in_turn([(d,) * n for d in dtypes], rng)
    mixed = _every_mix_in_turn(list(itertools.product(dtypes, repeat=n)), rng)
    for _ in range(first_pass):
        yield next(same)
    while True:
        yield next(same)
        yield next(mixed)


def _dtype_variables(pattern) -> list:
    """The pattern variables that stand for a dtype: of a constant (``Scalar``, ``Ints``) or a
    ``dtype`` prop (``Cast``), in order of appearance."""
    found = []

    def visit(p):
        if not isinstance(p, tuple):
            return
        head, args = p[0], p[1:]
        if head in ("Scalar", "Ints"):
            positions = [1]
        elif head in SCHEMA.by_name:
            ctor = SCHEMA.by_name[head]
            positions = [ctor.n_inputs + i for i, prop in enumerate(ctor.props) if prop == "dtype"]
            for a in args[:ctor.n_inputs]:
                visit(a)
        else:
            positions = []
        for i in positions:
            if i < len(args) and isvar(args[i]) and args[i] not in found:
                found.append(args[i])

    visit(pattern)
    return found


# -- bindings: pattern variables -> graphs and values -------------------------------------------
def _variable_kinds(pattern, kinds=None) -> dict:
    """Pattern variable -> "T" (a tensor) or the egglog sort of the primitive it stands for."""
    kinds = {} if kinds is None else kinds
    if isvar(pattern):
        kinds.setdefault(pattern, "T")
        return kinds
    if not isinstance(pattern, tuple):
        return kinds
    head, args = pattern[0], pattern[1:]
    if head == "Scalar":
        sorts, n_inputs = ("f64", "String", "i64"), 0
    elif head == "Ints":
        sorts, n_inputs = ("IntVec", "String"), 0
    elif head in SCHEMA.by_name:
        ctor = SCHEMA.by_name[head]
        sorts, n_inputs = tuple(c.sort for c in ctor.codecs), ctor.n_inputs
    else:
        raise UnknownConstructor(f"constructor {head} is not a built-in op (the checker builds built-in ops only)")
    for a in args[:n_inputs]:
        _variable_kinds(a, kinds)
    for a, sort in zip(args[n_inputs:], sorts):
        if isvar(a):
            kinds.setdefault(a, sort)
    return kinds


def _name(variable) -> str:
    return str(variable).lstrip("~")  # kanren prints its variables as ~x


class Binding:
    """Values for a pattern's variables: tensor types (then inputs and arrays) and primitives."""

    def __init__(self, ndims: dict, rng, dtypes: dict, domain: dict | None = None, derived: dict | None = None,
                 special: bool = False, alias: bool = False):
        self.rng = rng
        self.special = special  # draw inf, NaN and zeros (a rule that assumes nothing must keep them)
        self.size = int(rng.integers(2, 4))  # every axis is this size or 1, so operands broadcast
        self.tensors: dict = {}   # pattern variable -> input variable
        self.operands: dict = {}  # pattern variable -> the term it matches in the left side (build_left)
        self._matching: dict | None = None  # pattern variable -> the terms it met, while build_left runs
        self.derived = derived or {}
        self.shapes: dict = {}    # input variable -> its runtime shape
        self.domain: dict = {}    # input variable -> the kind of operand its rule's :domain asks for
        for v, ndim in ndims.items():
            dtype = dtypes[v]
            shape = tuple(1 if rng.random() < 0.25 else self.size for _ in range(ndim))
            if v in (domain or {}) and ndim >= 2:  # square matrices, values drawn in arrays()
                shape = shape[:-1] + shape[-2:-1]
            static = tuple(s if rng.random() < 0.5 else None for s in shape)
            if special and v not in (domain or {}) and rng.random() < CONSTANT_SHARE:
                shape = (1,) * ndim   # a size-1 constant: the encoder writes its value, types.egg knows facts of it
                self.tensors[v] = et.constant(self._values(shape, str(dtype)), name=_name(v))
            else:
                self.tensors[v] = et.TensorType(str(dtype), static)(_name(v))
            self.shapes[self.tensors[v]] = shape
            if v in (domain or {}) and ndim >= 2:
                self.domain[self.tensors[v]] = domain[v]
        if alias:  # guards that ask two operands for one run-time shape (shape-root) hold where they are one
            alias_operands(self.tensors, rng)
        # the dtypes of constants and casts come from the mix too
        self.primitives: dict = {v: d for v, d in dtypes.items() if v not in ndims}
        self.rounded = False  # a constant built from a rule's arithmetic was rounded to its dtype
        for v, (prop, operand) in (derived or {}).items():  # read off an operand by the guards
            if operand in self.tensors:
                self.primitives[v] = getattr(self.tensors[operand].type, prop)

    def build_left(self, pattern):
        """The left side's graph; after it, a tensor variable that ``make_node`` cast stands for
        the cast, as in the e-graph (``sqrt`` of a bool reads ``Cast{float32}(x)``): the right
        side is built of it, and a dtype or ndim its guards read off ``x`` is the cast's.

        A broadcast operand (``DimShuffle(x)``) keeps the term drawn, as a right side built of
        it is another e-class there: NumPy's power of size-1 arrays is C's ``pow`` (inf at
        ``(-inf) ** 0.5``) where a broadcast exponent takes its ``sqrt`` path (NaN), so values
        on those draws follow the layout drawn, not the rule."""
        self._matching = {}
        try:
            graph = self.build(pattern)
        finally:
            matching, self._matching = self._matching, None
        for v, terms in matching.items():
            if {t.type.dtype for t in terms} == {self.tensors[v].type.dtype}:
                continue
            if len(set(terms)) > 1:   # no one term for v: this graph is no instance of the pattern
                raise ValueError(f"{_name(v)} matches {len(set(terms))} different terms in the left side")
            self.operands[v] = terms[0]
        for v, (prop, operand) in self.derived.items():
            if prop == "guard":   # computed by a general rule's guards from what is bound by now
                expression, matched = operand
                self.primitives[v] = guard_value(expression, matched, self.primitives,
                                                 lambda t: graph if t is matched else self.operands.get(t, self.tensors[t]))
            elif operand in self.operands:
                self.primitives[v] = getattr(self.operands[operand].type, prop)
        return graph

    def inputs(self) -> list:
        """The tensors drawn as graph inputs (the others are constants)."""
        return [t for t in dict.fromkeys(self.tensors.values()) if not isinstance(t, Constant)]

    def tensors_by_name(self):
        return [(_name(v), t) for v, t in self.tensors.items()]

    def primitives_by_name(self):
        return [(_name(v), p) for v, p in self.primitives.items()]

    def arrays(self) -> dict:
        """Nonzero values of each tensor's runtime shape (which its static shape allows); a
        ``:domain`` operand's values lie in its domain."""
        out = {}
        for t in self.inputs():
            shape, dtype = self.shapes[t], t.type.dtype
            if t in self.domain:
                out[t] = np.asarray(DOMAIN_VALUES[self.domain[t]](self.rng, shape, dtype), dtype=dtype)
            else:
                out[t] = self._values(shape, dtype)
        return out

    def _values(self, shape: tuple, dtype: str) -> np.ndarray:
        """Nonzero finite values; for a rule that assumes nothing, some of them (a share
        ``SPECIAL_SHARE``) inf, -inf, NaN, 0.0 or -0.0 (0 or False for integers and booleans; none for
        complex values)."""
        rng = self.rng
        if dtype == "bool":
            value = np.ones(shape, dtype=bool)
        elif dtype.startswith("int"):
            value = rng.integers(1, 4, size=shape) * rng.choice([-1, 1], size=shape)
        else:
            value = rng.uniform(0.1, 2.0, size=shape) * rng.choice([-1, 1], size=shape)
            if dtype.startswith("complex"):  # both parts nonzero, of both signs, the imaginary one past pi
                # at times, where a branch cut makes log(exp(z)) another number than z
                value = value + 1j * rng.uniform(0.1, 4.0, size=shape) * rng.choice([-1, 1], size=shape)
        value = np.asarray(value, dtype=dtype)
        if self.special and np.dtype(dtype).kind != "c":
            specials = SPECIAL_FLOATS if np.dtype(dtype).kind == "f" else np.zeros(1)
            where = rng.random(shape) < SPECIAL_SHARE
            value[where] = rng.choice(specials, size=int(where.sum())).astype(dtype)
        return value

    def primitive(self, v, sort: str):
        if isinstance(v, tuple):  # an egglog primitive expression, e.g. (/ c 2.0)
            return PRIMITIVES[v[0]](*[self.primitive(a, sort) for a in v[1:]])
        if not isvar(v):
            return v
        if v not in self.primitives:
            self.primitives[v] = self._draw_primitive(sort)
        return self.primitives[v]

    def _draw_primitive(self, sort: str):
        rng = self.rng
        drawn = list(self.tensors.values())
        likely = drawn and rng.random() < 0.75  # the ndim or dtype of an operand: guards compare them
        if sort == "f64":
            return float(rng.choice(CONSTANTS))
        if sort == "String":
            return drawn[rng.integers(len(drawn))].type.dtype if likely else str(rng.choice(DTYPES))
        if sort == "i64":
            return drawn[rng.integers(len(drawn))].type.ndim if likely else int(rng.choice(NDIMS))
        if sort == "bool":
            return bool(rng.random() < 0.5)
        if sort == "IntVec":
            return tuple(int(i) for i in rng.permutation(int(rng.choice(NDIMS))))
        raise UnknownConstructor(f"cannot draw a value of sort {sort}")

    def build(self, pattern):
        if isvar(pattern) and self.derived.get(pattern, ("",))[0] == "term":  # a term a guard names
            return self.build(self.derived[pattern][1])
        if isvar(pattern):
            return self.operands.get(pattern, self.tensors[pattern])
        head, args = pattern[0], pattern[1:]
        if head == "Scalar":
            value, dtype, ndim = (self.primitive(a, s) for a, s in zip(args, ("f64", "String", "i64")))
            data = np.full((1,) * ndim, value, dtype=dtype)
            stored = data.reshape(-1)[0]
            if stored != value and not (math.isnan(value) and np.isnan(stored)):  # 0.5 as an int64 is another constant
                raise ValueError(f"{value} is not a {dtype}")
            # 1/3 as a float32; or NaN/inf, which the encoder keeps as an Array (encode.scalar_row), not
            # the Scalar the rule builds: either way the e-graph's right side is not the one built here
            self.rounded |= not math.isfinite(value) or float(stored) != value
            return et.constant(data)
        if head == "Ints":
            return et.constant(np.asarray(self.primitive(args[0], "IntVec"), dtype=self.primitive(args[1], "String")))
        ctor = SCHEMA.by_name[head]
        inputs = [self.build(a) for a in args[: ctor.n_inputs]]
        if head in INDEXED:
            self._bind_index(ctor, args[ctor.n_inputs:], inputs[0].ndim)
        props = [self._prop(head, a, c, inputs) for a, c in zip(args[ctor.n_inputs:], ctor.codecs)]
        # -1 is "x"; an index list is four numbers an entry (schema.encode_index)
        props = [c.decode(p) if c.kind in ("vec", "index", "repr") else p for p, c in zip(props, ctor.codecs)]
        node = ctor.make_op(props).make_node(*inputs)
        if self._matching is not None:
            for arg, term in zip(args[: ctor.n_inputs], node.inputs):
                if isvar(arg):
                    self._matching.setdefault(arg, []).append(term)
        return node.outputs[0]

    def _bind_index(self, ctor, props: tuple, ndim: int) -> None:
        """Draw an index list of ``ndim`` entries (as the op stores it: padded with whole slices)
        for an unbound ``idx_list`` variable, and bind the props derived from it as the op has them."""
        idx = props[0]
        if not isvar(idx) or idx in self.primitives:
            return
        if ndim == 0:
            raise IndexError("a 0-d operand has no axis to index")
        touched = int(self.rng.integers(1, ndim + 1))
        entries = [INDEX_ENTRIES[i] for i in self.rng.integers(len(INDEX_ENTRIES), size=touched)]
        if INDEXED[ctor.name] is not None:  # the index input takes one of the touched axes
            entries[int(self.rng.integers(touched))] = INDEXED[ctor.name]
        idx_list = tuple(entries) + (FULL_SLICE,) * (ndim - touched)
        self.primitives[idx] = encode_index(idx_list)
        op = ctor.make_op([idx_list] + [None] * (len(ctor.props) - 1))
        for arg, prop, codec in zip(props[1:], ctor.props[1:], ctor.codecs[1:]):
            if isvar(arg) and arg not in self.primitives:
                value = getattr(op, prop)
                self.primitives[arg] = tuple(value) if codec.kind == "vec" else value

    def _prop(self, head, arg, codec, inputs):
        # props that must agree with an input to type-check: drawn from that input
        if isvar(arg) and arg not in self.primitives and inputs:
            x = inputs[0]
            if head == "DimShuffle" and codec.sort == "i64":  # the input's ndim
                self.primitives[arg] = x.ndim
            elif head == "DimShuffle" and codec.sort == "IntVec":  # a permutation, maybe a new axis
                order = [int(i) for i in self.rng.permutation(x.ndim)]
                if len(order) < 3 and self.rng.random() < 0.5:
                    order.insert(int(self.rng.integers(len(order) + 1)), "x")
                self.primitives[arg] = tuple(order)
            elif head == "Softmax" and codec.sort == "i64":  # an axis of the input
                if x.ndim == 0:
                    raise TypeError("softmax needs an axis")
                self.primitives[arg] = int(self.rng.integers(x.ndim))
            elif head.startswith("CheckAndRaise_") and codec.sort == "String":  # an exception's name (or message)
                self.primitives[arg] = str(self.rng.choice(CHECK_EXCEPTIONS))
        return self.primitive(arg, codec.sort)
