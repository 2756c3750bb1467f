"""How ops become egglog constructors, generated from the op classes.

- An elementwise op or a reduction is a constructor named after its ``name`` in
  CamelCase: ``Add``, ``TrueDiv``, ``Log1p``, ``Sum``, ``Argmax`` (egglog's own
  primitives already own ``log``, ``max``, ``+``... so tensor terms never clash). A sum,
  product or mean ends with its accumulator dtype, ``(Sum x axes keepdims "")`` (``""``: the
  input dtype's default); the other reductions have none.
- Any other op is its class name (``MatMul``, ``DimShuffle``). A join takes its inputs
  as one vector child, ``(Join (vec-of a b c) axis)``, whatever their number; the other
  ops whose number of inputs varies get ``_<n>`` (``Subtensor_1``, ``Alloc_3``): see
  "Variadic inputs" below for why not all of them take a vector.
- Inputs come first, then the op's ``__props__`` (and ``__egg_extras__``, facts
  derived from the props for the type rules) as primitive children, each
  with a codec chosen from its Python value: ints are ``i64``, bools ``bool``,
  floats ``f64``, strings ``String``, tuples of ints ``IntVec``
  (``(vec-of 1 0)``; a DimShuffle's ``"x"`` or a shape's ``None`` is ``-1``), an
  indexing op's ``idx_list`` an ``IntVec`` of four numbers an entry (``encode_index``),
  anything else the ``String`` of its ``repr``.

Op families. A rule file names a family of ops, ``@unary`` or ``@binary``, where it would name
one op; the file is loaded with one copy of such a rule per op of the family (rules/families.py).
Copies, not one family term per elementwise node (``(Unary "Exp" x)`` beside ``(Exp x)``), nor
one generic elementwise constructor carrying its op as a prop: on bench/rewrites.py's corpus the
family terms added 6% e-nodes (2,655 to 2,816) and 30% on bench/compile_time.py's chain (1,005 to
1,305 at 500 nodes) with no saturation time won back, while copies add none; a generic
constructor would put every elementwise rule's match in one table and every rule file's op
names behind a prop, for no fewer e-nodes than copies.

A user's Op class with ``__props__`` gets a constructor the first time a graph
using it is encoded: nothing here needs editing.

Variadic inputs. egglog 13 accepts a vector of terms as a child
(``(sort TVec (Vec T))``), keeps it up to date when its entries' e-classes merge, and lets
a ``rule`` take it apart: ``(= e (Join v axis)) (= (vec-length v) 2) (= a (vec-get v 0))``,
even matching an entry's structure, ``(= (Exp x) (vec-get v 0))``. It refuses a vector in
the pattern of a ``rewrite``: ``(rewrite (Join (vec-of a b) axis) ...)`` is "Variable b is
ungrounded" (``vec-of`` is a primitive, computed from bound values, not a pattern;
tests/rules/test_vector_children.py shows both). And the soundness checker, the e-graph
view's rule explanations and the unstable declarations read rule patterns structurally,
drawing or matching each named input: an input hidden in a ``vec-get`` condition is none
of theirs. So an op whose terms the rule files
write as rewrites keeps one constructor per arity, which rules name with their inputs
(``(Subtensor_1 x (vec-of 0 1 0 0) s t)``, ``(Alloc_3 v n m)``); the join, which no rewrite names and
whose type rules walk the vector (types.egg's ``join-parts``), takes a vector: one
constructor, typed at any number of inputs; so does ``Einsum`` (its rules walk its ``sources``).
"""

from __future__ import annotations

import ast
import functools
import json
import re
import warnings
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

import eqgraph.tensor as et
from eqgraph.tensor import linalg
from eqgraph.egraph.adapter import FORMS_PER_RUN
from eqgraph.rules import ruleset
from eqgraph.rules.families import camel
from eqgraph.tensor.grad_blocker import GradBlocker
from eqgraph.tensor.elemwise import Elemwise
from eqgraph.tensor.math import ACCUMULATING, Reduce
from eqgraph.tensor.subtensor import FULL_SLICE
from eqgraph.tensor.type import DTYPES

SORTS = """
(sort T)
(sort IntVec (Vec i64))
(sort IntSet (Set i64))
(sort StrSet (Set String))
(sort StrVec (Vec String))
(sort TVec (Vec T))                        ; the inputs of a join, however many
(constructor N (i64) T :unextractable)     ; the id of an encoded node: never extracted
(constructor Var (i64) T)                  ; the i-th input of the graph
(constructor Scalar (f64 String i64) T)    ; a constant of size 1: value, dtype, ndim
(constructor Ints (IntVec String) T)       ; a short integer vector (a shape, say): values, dtype
(constructor Array (i64 String String) T)  ; any other constant: handle, dtype, shape
(constructor Out (T i64) T)                ; output i of a node with several outputs
"""

#: the constructors SORTS declares (every other one comes from an op: Schema.by_name)
BASE_CONSTRUCTORS = frozenset({"N", "Var", "Scalar", "Array", "Ints", "Out"})
#: SORTS' container sorts: sort -> (vec or set, the element sort), for reading tables back
CONTAINER_SORTS = {"IntVec": ("vec", "i64"), "IntSet": ("set", "i64"), "StrSet": ("set", "String"),
                   "StrVec": ("vec", "String"), "TVec": ("vec", "T")}

ANALYSES = """
(function dtype (T) StrSet :merge (set-intersect old new))   ; {dtype}; {} is a contradiction
(function dim (T i64) IntSet :merge (set-intersect old new)) ; {size} per known axis
(function ndim (T) IntSet :merge (set-intersect old new))     ; {number of dimensions}
(relation dim-at-most (T i64 i64))                           ; axis, a bound on its size where it is unknown
(relation dim-within (T i64 T i64))                          ; axis j of a term is at most axis k of another
(function shape-root (T) i64 :merge (min old new))            ; an encoded term of this shape at run time (types.egg)
(relation type-error (T i64))                                ; axis with no possible value (-1: dtype, -2: ndim), or -3: elementwise operands of unequal ndim
(function dtype-index (String) i64 :no-merge)                ; a dtype's position in DTYPES
(function promotions (String) StrVec :no-merge)               ; a: NumPy's result dtype of a and each dtype
(function op-dtypes (String) StrVec :no-merge)                ; constructor: output dtype per input dtype
(relation integer-dtype (String))                            ; the signed and unsigned integer dtypes
(relation float-dtype (String))                              ; the real floating-point dtypes
(function inexact (String) bool :no-merge)                   ; a float or complex dtype?
(relation real-dtype (String))                               ; the dtypes that are not complex
(relation real-dtypes (StrSet))                              ; {d} for each real d: (real-dtypes (dtype e)) says e is real
(real-dtype "bool") (real-dtype "int8") (real-dtype "int16") (real-dtype "int32") (real-dtype "int64")
(real-dtype "uint8") (real-dtype "uint16") (real-dtype "uint32") (real-dtype "uint64")
(real-dtype "float16") (real-dtype "float32") (real-dtype "float64")
(real-dtypes (set-of "bool")) (real-dtypes (set-of "int8")) (real-dtypes (set-of "int16"))
(real-dtypes (set-of "int32")) (real-dtypes (set-of "int64")) (real-dtypes (set-of "uint8"))
(real-dtypes (set-of "uint16")) (real-dtypes (set-of "uint32")) (real-dtypes (set-of "uint64"))
(real-dtypes (set-of "float16")) (real-dtypes (set-of "float32")) (real-dtypes (set-of "float64"))
(relation known-finite (T))                                  ; value facts (types.egg): no inf, no NaN
(relation known-nonzero (T))                                 ; no element is 0
(relation known-positive (T))                                ; every element > 0 or NaN
(relation known-nonneg (T))                                  ; every element >= 0 or NaN
"""


@functools.cache
def dtype_facts() -> str:
    """The dtype tables of rulesets/types.egg, computed from NumPy and the ops themselves.

    ``(promotions a)`` is a vector over DTYPES of NumPy's result dtype of ``a`` and each;
    ``(op-dtypes C)`` a vector over DTYPES of the output dtype of constructor ``C`` (an
    elementwise op or a reduction) on inputs of that dtype, "" where NumPy has no loop.
    Vectors keep the tables to one row per dtype or op: the e-graph is serialized on every
    compile, and a row per pair (a thousand) made that cost more than the rest of a small
    compile.
    """
    rows = [f'(set (dtype-index "{d}") {i})' for i, d in enumerate(DTYPES)]
    rows += [f'(integer-dtype "{d}")' for d in DTYPES if np.dtype(d).kind in "iu"]
    rows += [f'(float-dtype "{d}")' for d in DTYPES if np.dtype(d).kind == "f"]
    rows += [f'(set (inexact "{d}") {"true" if np.dtype(d).kind in "fc" else "false"})' for d in DTYPES]
    rows += [f'(set (promotions "{a}") (vec-of {_quoted(np.result_type(a, b).name for b in DTYPES)}))'
             for a in DTYPES]
    ops = [(camel(name), op, op.nin) for name, op in et.ELEMWISE_OPS.items()
           if op.scalar.promote is None]  # second and switch promote their own way (types.egg)
    ops += [(camel(name), Reduce(name, (0,), False), None) for name in et.REDUCTIONS]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # probing erf on complex numbers, say
        tables = {ctor: [_output_dtype(op, nin, d) for d in DTYPES] for ctor, op, nin in ops}
        tables.update({f"{camel(name)}@{k}": [_typed_by_dtype(op, k, d) for d in DTYPES]
                       for name, op, k in typed_by_one_input()})
    tables["promotion"] = list(DTYPES)                           # switch: its branches promoted
    tables["MatMul"] = ["" if d == "bool" else d for d in DTYPES]  # MatMul.make_node refuses bool
    tables["Convolve"] = tables["MatMul"]                          # and so does Convolve.make_node
    rows += [f'(set (op-dtypes "{ctor}") (vec-of {_quoted(outs)}))' for ctor, outs in tables.items()]
    return "\n".join(rows) + "\n"


def _quoted(strings) -> str:
    return " ".join(f'"{s}"' for s in strings)


def typed_by_one_input():
    """(name, op, k) for each binary elementwise op whose output dtype follows input ``k`` alone,
    the other input being an integer order (polygamma's n): types.egg's ``typed-by`` reads the
    table ``"<Constructor>@k"``, indexed by input k's dtype."""
    return [(name, op, op.scalar.promote[0]) for name, op in et.ELEMWISE_OPS.items()
            if op.nin == 2 and op.scalar.promote is not None and len(op.scalar.promote) == 1]


def _typed_by_dtype(op, k, dtype) -> str:
    dtypes = ["int64", "int64"]
    dtypes[k] = dtype
    try:
        return op.output_dtype(dtypes)
    except TypeError:  # no output dtype for such an input (a complex x); make_node refuses it too
        return ""


def _output_dtype(op, nin, dtype) -> str:
    try:
        return op.output_dtype([dtype] * nin) if nin else op.output_dtype(dtype)
    except TypeError:  # NumPy has no such loop (invert of a float); make_node refuses it too
        return ""


def send_prelude(session, schema: Schema) -> None:
    """Send a new e-graph its sorts, analyses, dtype tables and constructors (the tables
    a few rows at a time, ``adapter.FORMS_PER_RUN``)."""
    session.run(SORTS + ANALYSES + schema.take_declarations())
    rows = dtype_facts().splitlines()
    for i in range(0, len(rows), FORMS_PER_RUN):
        session.run("\n".join(rows[i:i + FORMS_PER_RUN]))


#: ops whose inputs are one vector child, ``(Join (vec-of a b c) axis)`` (module docstring)
VECTOR_INPUTS = (et.Join, et.Einsum)
VARIADIC = (et.Alloc, et.MakeVector, et.Subtensor, et.AdvancedSubtensor, et.IncSubtensor,
            et.AdvancedIncSubtensor, et.IfElse, et.random.RandomVariable,
            et.CheckAndRaise)  # named Op_<inputs>, e.g. IfElse_3
#: joins, allocs, vectors of scalars and basic indexing are declared, and typed by
#: rulesets/types.egg, for up to this many inputs (a constructor first declared by a graph's
#: encoding has no type rules)
MAX_INPUTS = 8


# -- the list-like part of rulesets/types.egg, generated from the op registry ------------------
def type_rules() -> str:
    """The rules of types.egg that are one per op or per arity, which rules/ruleset.py puts in
    place of its ``;; eqgraph: op-type-rules`` line when the file is loaded: each elementwise op and
    reduction hands its term to the general rules (``elemwise<n>``, ``reduction``); each join,
    alloc and vector of scalars names its inputs by position (``join-part``, ``alloc-size``,
    ``vector-entry``); each basic indexing op its input and layout; and each output of each
    decomposition its layout (``linalg.LinalgOp.core_axes``, read by ``linalg-output``). Inputs are ``x0``,
    ``x1``...; props are ``p-`` and the prop's name (``p-axis``, ``p-slicing``)."""
    schema, rules = Schema(), []

    def rule(name, ctor_name, actions):
        ctor = schema.by_name[ctor_name]
        inputs = ["v"] if ctor.vector else [f"x{i}" for i in range(ctor.n_inputs)]  # v: the vector of inputs
        children = inputs + [f"p-{p}" for p in ctor.props]
        term = " ".join([ctor.name, *children])
        rules.append(f'(rule ((= e ({term}))) ({actions}) :name "{name}")')

    for name, op in et.ELEMWISE_OPS.items():
        args = " ".join(f"x{i}" for i in range(op.nin))
        rule(f"elemwise-{_kebab(name)}", camel(name), f'(elemwise{op.nin} e "{camel(name)}" {args})')
    for name, op, k in typed_by_one_input():
        rule(f"typed-by-{_kebab(name)}", camel(name), f'(typed-by e "{camel(name)}@{k}" x{k} x{1 - k})')
    for name in et.REDUCTIONS:
        rule(f"reduction-{_kebab(name)}", camel(name), f'(reduction e "{camel(name)}" x0 p-axis p-keepdims)')
    rule("join", "Join", "(join-of e (vec-length v) p-axis) (join-parts e v 0)")  # any number of inputs
    for n in range(1, MAX_INPUTS + 1):
        sizes = " ".join(f"(alloc-size e {i - 1} x{i})" for i in range(1, n))  # x0 is the value
        rule(f"alloc-{n - 1}", f"Alloc_{n}", f"(alloc-of e x0 {n - 1}) {sizes}".rstrip())
        entries = " ".join(f"(vector-entry e {i} x{i})" for i in range(n))
        vector_type = "(set (dtype e) (set-of p-dtype)) (set (ndim e) (set-of 1))"
        rule(f"make-vector-{n}", f"MakeVector_{n}", f"{vector_type} (set (dim e 0) (set-of {n})) {entries}")
        rule(f"subtensor-{n}", f"Subtensor_{n}", "(subtensor e x0 p-slicing)")
        if n > 1:  # x[...] += x1: shaped like x
            rule(f"same-type-inc-{n}", f"IncSubtensor_{n}", "(same-type e x0)")
            rule(f"same-type-advanced-inc-{n}", f"AdvancedIncSubtensor_{n}", "(same-type e x0)")
            rule(f"checked-value-{n}", f"CheckAndRaise_{n}", "(checked-value e x0)")
    rules += [_linalg_rule(schema, op, j) for op in _linalg_ops() for j in range(len(op.core_axes()))]
    return "\n".join(rules) + "\n"


ruleset.op_type_rules = type_rules  # what a rule file's ";; eqgraph: op-type-rules" line stands for


def _linalg_ops() -> list:
    """Every decomposition of eqgraph.tensor.linalg, once per value of its props."""
    classes, found = [linalg.LinalgOp], []
    while classes:
        cls = classes.pop(0)
        found += cls.instances() if cls is not linalg.LinalgOp else []
        classes += [c for c in cls.__subclasses__() if c.__module__ == linalg.LinalgOp.__module__]
    return found


def _linalg_rule(schema: Schema, op, j: int) -> str:
    """The rule typing output ``j`` of ``op`` from its ``core_axes`` (types.egg's ``linalg-output``):
    ``(Out (SVD x0 true true) 0)`` has core axes "mm", the rows of x0 twice."""
    ctor, axes = schema.constructor(op, 1), op.core_axes()
    term = f"({' '.join([ctor.name, 'x0', *ctor.encode_props(op)])})"
    if len(axes) > 1:
        term = f"(Out {term} {j})"
    dtype = f"(linalg-{op.output_kinds()[j]}-dtype e x0)"  # types.egg: how the dtype follows x0's
    facts = " ".join([f"(linalg-output e x0 {len(axes[j])}) {dtype}"] + [f'(core-axis e {t} "{c}")' for t, c in enumerate(axes[j])])
    variant = "-".join(_kebab(str(v)).lower() for v in ctor.encode_props(op)).replace('"', "")
    words = re.sub(r"(?<=[a-z])(?=[A-Z])", "-", ctor.name).lower()  # SlogDet: slog-det
    name = "-".join(p for p in ("linalg", words, variant, str(j) if len(axes) > 1 else "") if p)
    return f'(rule ((= e {term})) ({facts}) :name "{name}")'


def _kebab(name: str) -> str:
    return name.replace("_", "-")


# -- index lists ------------------------------------------------------------------------------
# An index list (Subtensor.idx_list and its kin) is an IntVec of four i64 per entry, a kind
# and three parts, so that rules match and build entries with vec-get and vec-of (an IntVec,
# not a sort of its own: egglog cannot tell two vector sorts of i64 apart in (vec-of ...)):
#   (0 k 0 0)                an integer position k
#   (1 0 0 0)                a new axis (None)
#   (2 0 0 0)                a 0-d integer index input ("?")
#   (3 0 0 0)                an integer or boolean array input ("a", advanced indexing)
#   (1abc start stop step)   a slice: a, b, c say what start, stop and step are: 0 absent
#                            (None; its part is 0), 1 the i64 given, 2 an index input (part 0)
# so x[:] is (1000 0 0 0), x[2:] (1100 2 0 0), x[2:5] (1110 2 5 0) and x[::-1] (1001 0 0 -1).
INDEX_INT, INDEX_NEWAXIS, INDEX_SCALAR, INDEX_ARRAY, INDEX_SLICE = 0, 1, 2, 3, 1000
_ENTRY_KINDS = {None: INDEX_NEWAXIS, "?": INDEX_SCALAR, "a": INDEX_ARRAY}
_KIND_ENTRIES = {kind: entry for entry, kind in _ENTRY_KINDS.items()}


def encode_index(idx_list) -> tuple[int, ...]:
    """The numbers of an index list (four per entry, see above)."""
    numbers = []
    for entry in idx_list:
        if isinstance(entry, tuple) and len(entry) == 4 and entry[0] == "slice":
            states = [_part_state(p, idx_list) for p in entry[1:]]
            numbers += [INDEX_SLICE + 100 * states[0] + 10 * states[1] + states[2],
                        *(int(p) if state == 1 else 0 for p, state in zip(entry[1:], states))]
        elif _is_int(entry):
            numbers += [INDEX_INT, int(entry), 0, 0]
        elif isinstance(entry, (str, type(None))) and entry in _ENTRY_KINDS:
            numbers += [_ENTRY_KINDS[entry], 0, 0, 0]
        else:
            raise ValueError(f"index list {idx_list!r}: entry {entry!r} is no integer, ('slice', start, stop, step), "
                             "None, '?' or 'a'")
    return tuple(numbers)


def _is_int(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _part_state(part, idx_list) -> int:
    """0 for an absent slice part (None), 1 for an integer, 2 for an index input ("?")."""
    if part is None:
        return 0
    if _is_int(part):
        return 1
    if part == "?":
        return 2
    raise ValueError(f"index list {idx_list!r}: slice part {part!r} is no integer, None or '?'")


def decode_index(numbers) -> tuple:
    """The index list of its numbers (``encode_index`` read back)."""
    if len(numbers) % 4:
        raise ValueError(f"an index list has four numbers per entry, not {len(numbers)}: {tuple(numbers)}")
    entries = []
    for i in range(0, len(numbers), 4):
        kind, *parts = numbers[i:i + 4]
        states = (kind // 100 % 10, kind // 10 % 10, kind % 10)
        if kind == INDEX_INT:
            entries.append(parts[0])
        elif kind in _KIND_ENTRIES:
            entries.append(_KIND_ENTRIES[kind])
        elif kind // 1000 == 1 and max(states) <= 2 and all(st == 1 or p == 0 for p, st in zip(parts, states)):
            entries.append(("slice", *(None if st == 0 else p if st == 1 else "?" for p, st in zip(parts, states))))
        else:
            raise ValueError(f"index list entry {i // 4} of {tuple(numbers)} is ({kind} {' '.join(map(str, parts))}): "
                             "not (0 k 0 0), (1-3 0 0 0) or a slice's (1abc start stop step) with 0 for each part "
                             "whose a, b or c is 0 or 2")
    return tuple(entries)


# -- prop codecs ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Codec:
    sort: str
    kind: str              # "int" | "bool" | "float" | "str" | "vec" | "index" | "repr"
    marker: object = None  # what -1 stands for in a vec ("x" or None)

    def encode(self, value) -> str:
        if self.kind == "int":
            return str(int(value))
        if self.kind == "bool":
            return "true" if value else "false"
        if self.kind == "float":
            return repr(float(value))
        if self.kind == "str":
            return json.dumps(value)
        if self.kind == "vec":
            items = [-1 if v == self.marker and not isinstance(v, int) else int(v) for v in value]
            return f"(vec-of {' '.join(map(str, items))})" if items else "(vec-empty)"
        if self.kind == "index":
            return self.encode_read(encode_index(value))
        return json.dumps(repr(value))

    def encode_read(self, value) -> str:
        """The encoding of a value as read back from egglog (before ``decode``)."""
        if self.kind in ("vec", "index"):
            return f"(vec-of {' '.join(map(str, value))})" if value else "(vec-empty)"
        if self.kind == "repr":
            return json.dumps(value)
        return self.encode(value)

    def decode(self, value):
        """From the Python value read back from egglog (int, bool, float, str or list of ints)."""
        if self.kind == "vec":
            return tuple(self.marker if v == -1 else v for v in value)
        if self.kind == "index":
            return decode_index(value)
        if self.kind == "repr":
            return ast.literal_eval(value)
        return value


def codec_for(value) -> Codec:
    if isinstance(value, bool):
        return Codec("bool", "bool")
    if isinstance(value, int):
        return Codec("i64", "int")
    if isinstance(value, float):
        return Codec("f64", "float")
    if isinstance(value, str):
        return Codec("String", "str")
    if isinstance(value, tuple) and all(isinstance(v, int) or v in ("x", None) for v in value):
        marker = "x" if "x" in value else (None if None in value else "x")
        return Codec("IntVec", "vec", marker)
    return Codec("String", "repr")


#: the index list of an indexing op (``idx_list``)
INDEX_CODEC = Codec("IntVec", "index")
INDEXING_OPS = (et.Subtensor, et.AdvancedSubtensor, et.IncSubtensor, et.AdvancedIncSubtensor)


def _codec(op, prop: str) -> Codec:
    if prop == "idx_list" and isinstance(op, INDEXING_OPS):
        return INDEX_CODEC
    return codec_for(getattr(op, prop))


def _vec_like(value) -> bool:
    return isinstance(value, tuple) and all(isinstance(v, int) or v in ("x", None) for v in value)


# -- constructors -------------------------------------------------------------------------------
@dataclass
class Constructor:
    name: str
    op_class: type
    n_inputs: int
    props: tuple                      # names of the props encoded as children
    codecs: tuple                     # one Codec per prop
    fixed: dict = field(default_factory=dict)  # props implied by the name (e.g. name="add")
    vector: bool = False              # the inputs are one TVec child (VECTOR_INPUTS)

    def declaration(self) -> str:
        inputs = ["TVec"] if self.vector else ["T"] * self.n_inputs
        args = " ".join(inputs + [c.sort for c in self.codecs])
        return f"(constructor {self.name} ({args}) T)"

    def fits(self, op) -> bool:
        """Whether this constructor's codecs can encode ``op``'s props without loss."""
        for p, codec in zip(self.props, self.codecs):
            if codec.kind in ("repr", "index"):  # any literal, any index list
                continue
            kind = codec_for(getattr(op, p)).kind
            if kind != codec.kind and not (codec.kind == "vec" and kind in ("vec", "repr")
                                           and _vec_like(getattr(op, p))):
                return False
        return True

    def encode_props(self, op) -> list[str]:
        return [c.encode(getattr(op, p)) for p, c in zip(self.props, self.codecs)]

    def make_op(self, values):
        """The op for decoded prop values (in ``props`` order)."""
        kwargs = dict(self.fixed, **dict(zip(self.props, values)))  # extras are ignored: derived
        if self.op_class is Elemwise:
            return et.ELEMWISE_OPS[kwargs["name"]]
        order = getattr(self.op_class, "__props__", ())
        return self.op_class(*[kwargs[p] for p in order])


def _constructor_for(op, n_inputs: int) -> Constructor:
    cls = type(op)
    props = tuple(getattr(cls, "__props__", ()))
    fixed = {}
    if isinstance(op, (Elemwise, Reduce)):
        name, fixed = camel(op.name), {"name": op.name}
        props = tuple(p for p in props if p != "name")
        if isinstance(op, Reduce) and op.name not in ACCUMULATING:  # max, argmax...: no accumulator
            fixed, props = {**fixed, "acc_dtype": ""}, tuple(p for p in props if p != "acc_dtype")
    elif isinstance(op, VECTOR_INPUTS):
        name = cls.__name__
    else:
        name = cls.__name__ + (f"_{n_inputs}" if isinstance(op, VARIADIC) else "")
    # derived facts an op offers to the type rules (e.g. Subtensor's slicing) follow its props
    props += tuple(getattr(cls, "__egg_extras__", ()))
    codecs = tuple(_codec(op, p) for p in props)
    vector = isinstance(op, VECTOR_INPUTS)
    return Constructor(name, cls, 0 if vector else n_inputs, props, codecs, fixed, vector)


def _prototypes():
    """One op of each built-in kind, so rule files can name every constructor: the elementwise ops,
    reductions and decompositions from their registries, the other structured ops listed here (an
    op class has no example of its props to derive one from; a rule file that names a structured
    op no rule named before needs it added)."""
    ops = [(op, op.nin) for op in et.ELEMWISE_OPS.values()]
    ops += [(Reduce(name, (0,), False), 1) for name in et.REDUCTIONS]
    ops += [(et.Cast("float64"), 1), (et.DimShuffle(1, (0, "x")), 1), (et.MatMul(), 2),
            (et.Softmax(0, False), 1), (et.Shape(), 1), (et.SpecifyShape((None,)), 1),
            (et.Reshape(1), 2), (et.ARange("int64"), 3), (et.SumToShape(), 2), (GradBlocker("zero"), 1),
            (et.IfElse(1), 3)]  # an ifelse of one output, for rulesets/ifelse.egg
    # the linear algebra that rulesets/linalg.egg names, and the ops that types.egg types
    ops += [(op, 1) for op in _linalg_ops()]
    ops += [(linalg.Solve(), 2), (et.ExtractDiag(0, 0, 1), 1), (et.Sort(0, False), 1), (et.CumOp(0, "add"), 1),
            (et.Convolve(1, "full"), 2), (et.Einsum("ab,bc->ac"), 2)]  # one Einsum for any number of operands
    for n in range(1, MAX_INPUTS + 1):
        ops += [(et.Alloc(), n), (et.MakeVector("int64"), n), (et.Join(0), n),  # one Join for all n
                (et.Subtensor((FULL_SLICE,)), n)]
        if n > 1:  # x, y and the indices
            ops += [(et.IncSubtensor((FULL_SLICE,), False), n), (et.AdvancedIncSubtensor(("a",), False), n),
                    (et.Assert(), n)]  # the value and n - 1 conditions: rulesets/assertions.egg
    for n in range(1, 5):  # x and up to three index arrays: the layouts types.egg writes out
        ops += [(et.AdvancedSubtensor(("a",)), n)]
    return ops


class Schema:
    """The constructors declared in one e-graph; built-ins up front, others on first use."""

    def __init__(self):
        self.by_name: dict[str, Constructor] = {}
        self._by_key: dict = {}
        self.pending: list[str] = []   # declarations not yet sent to egglog
        self.read_only = False         # a snapshot's schema: declares nothing new (``frozen``)
        for op, n in _prototypes():
            self.constructor(op, n)

    def constructor(self, op, n_inputs: int) -> Constructor:
        arity = "vector" if isinstance(op, VECTOR_INPUTS) else n_inputs  # one constructor for any number
        key = (type(op), getattr(op, "name", None) if isinstance(op, (Elemwise, Reduce)) else None, arity)
        ctor = self._by_key.get(key)
        if ctor is not None and not ctor.fits(op):
            # a user op whose props changed kind (2 then 2.5): a variant with its own codecs
            key = (*key, tuple(codec_for(getattr(op, p)).kind for p in ctor.props))
            ctor = self._by_key.get(key)
        if ctor is None and self.read_only:
            raise KeyError(f"{type(op).__name__} with {n_inputs} inputs has no constructor in this e-graph")
        if ctor is None:
            ctor = _constructor_for(op, n_inputs)
            base, n = ctor.name, 1
            while ctor.name in self.by_name:  # another arity or prop kinds of the same op class
                ctor.name, n = f"{base}_{n}", n + 1
            self._by_key[key] = ctor
            self.by_name[ctor.name] = ctor
            self.pending.append(ctor.declaration())
        return ctor

    def copy(self) -> Schema:
        """A schema with the same declared constructors (new ones go to the copy only)."""
        other = Schema.__new__(Schema)
        other.by_name, other._by_key, other.pending = dict(self.by_name), dict(self._by_key), list(self.pending)
        other.read_only = False
        return other

    def frozen(self) -> Schema:
        """A read-only copy (an e-graph snapshot's): it finds the declared constructors and
        declares no new one."""
        other = self.copy()
        other.by_name, other._by_key = MappingProxyType(other.by_name), MappingProxyType(other._by_key)
        other.pending, other.read_only = [], True
        return other

    def take_declarations(self) -> str:
        text, self.pending = "\n".join(self.pending), []
        return text

    def describe(self) -> str:
        """Every constructor with its signature, for people writing rules."""
        rows = [f"({c.name} {' '.join((['(vec-of T...)'] if c.vector else ['T'] * c.n_inputs) + [f'{p}:{k.sort}' for p, k in zip(c.props, c.codecs)])})"
                for c in self.by_name.values()]
        return "\n".join(sorted(rows))
