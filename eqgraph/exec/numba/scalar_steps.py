"""How the whole Numba function computes one elementwise step on scalars, as NumPy's loops do.

Values may be float64, float32, bool or integers of any width (``SCALAR_TYPES``).  An elementwise
step on float64, int64 and bool scalars is its ``numba_kernels.FORMS`` entry where Numba's scalars
compute what NumPy's do (``_step_types_ok``); on the other dtypes the step computes in the dtype
NumPy's loop does (``_wide_step``: int8 + int8 in int8, int8 / int8 in float64), each result cast
back to it, so narrow integers wrap as NumPy's and float32 steps round as NumPy's float32 loops.  Casts from
floats to integers follow NumPy's conversion on x86-64 (``_float_to_integer``).
"""

from __future__ import annotations

import numpy as np

from eqgraph.exec.composite import step_name
from eqgraph.exec.numba.kernels import FORMS
from eqgraph.exec.numpy.kernels import NUMPY_FORMS

#: dtype -> its Numba type's name in the generated source
SCALAR_TYPES = {"float64": "float64", "float32": "float32", "bool": "boolean",
                **{f"{kind}{bits}": f"{kind}{bits}" for kind in ("int", "uint") for bits in (8, 16, 32, 64)}}
NUMPY_DTYPES = {dtype: "np.bool_" if dtype == "bool" else f"np.{dtype}" for dtype in SCALAR_TYPES}

_COMPARISONS = frozenset({"eq", "neq", "lt", "le", "gt", "ge"})
_LOGICAL = frozenset({"and_", "or_", "xor", "invert"})


#: the scalar steps' forms, with the casts between the dtypes the whole function handles
_FORMS = {**FORMS, "cast_int64": "np.int64({0})"}
#: integer division and remainder as NumPy's: 0 for a zero divisor, and the minimum integer divided
#: by -1 wraps (Numba's ``//`` would trap there; the negation is done in uint64, see _INT64_WRAPPING)
_INTEGER_FORMS = {"int_div": "(0 if {1} == 0 else (np.int64(np.uint64(0) - np.uint64({0})) if {1} == -1 else {0} // {1}))",
                  "mod": "(0 if {1} == 0 or {1} == -1 else {0} % {1})"}
_INTEGER_STEPS = frozenset({"add", "sub", "mul", "neg", "maximum", "minimum"})
#: int64 arithmetic done in uint64 and converted back, which wraps around as NumPy's int64 does:
#: Numba's signed arithmetic lets LLVM assume it never overflows (``sign(x * x)`` of 2**40 gave 1)
_INT64_WRAPPING = {
    "add": "np.int64(np.uint64({0}) + np.uint64({1}))",
    "sub": "np.int64(np.uint64({0}) - np.uint64({1}))",
    "mul": "np.int64(np.uint64({0}) * np.uint64({1}))",
    "sqr": "np.int64(np.uint64({0}) * np.uint64({0}))",
    "neg": "np.int64(np.uint64(0) - np.uint64({0}))",
    "abs": "({0} if {0} >= 0 else np.int64(np.uint64(0) - np.uint64({0})))",
}
_NUMBERS = ("float64", "int64", "bool")


def _step_types_ok(key: str, ins: list, out: str) -> bool:
    """Whether ``FORMS[key]`` on scalars of dtypes ``ins`` computes what NumPy's step gives in
    dtype ``out``.  Numba's scalars promote int64 and bool to float64 as NumPy does, and int64
    arithmetic wraps as NumPy's; but Numba's ``True + True`` is 2, NumPy's is True (bool
    arithmetic is left out), and integer division and powers differ at zero and below."""
    if key not in _FORMS or not all(d in _NUMBERS for d in ins):
        return False
    if key == "cast_float64":
        return out == "float64"
    if key == "cast_bool":
        return out == "bool"
    if key == "cast_int64":   # from integers only: Numba's conversion of NaN or inf is undefined
        return out == "int64" and ins[0] != "float64"
    if key == "second":
        return out == ins[1]
    if key == "switch":
        return ins[1] == ins[2] == out or out == "float64" and "float64" in ins[1:] and "bool" not in ins[1:]
    if key in _COMPARISONS or key in ("isnan", "isinf"):
        return out == "bool" and (key in _COMPARISONS or ins[0] == "float64")
    if key in _LOGICAL:
        return out == "bool" and all(d == "bool" for d in ins)
    if out == "int64":
        return (key in _INTEGER_STEPS or key in _INTEGER_FORMS) and "int64" in ins
    return out == "float64" and "float64" in ins


# -- steps on the other dtypes (float32, the narrower and unsigned integers) ----------------------
#: float32 steps whose float32 result is the exactly rounded one (IEEE arithmetic, square roots,
#: roundings, comparisons), so that Numba's float32 scalars give NumPy's float32 loops' bits; the
#: transcendental functions are left out: NumPy's float32 loops are its own SIMD approximations,
#: not the C library's ``expf``
_FLOAT32_STEPS = frozenset({"add", "sub", "mul", "true_div", "neg", "abs", "sqr", "maximum", "minimum", "clip",
                            "second", "switch", "sqrt", "floor", "ceil", "round", "sign", "isnan", "isinf"})
#: integer steps that wrap as NumPy's do once each result is cast back to the step's dtype
#: (Numba computes narrow integers in int64)
_WRAPPING_STEPS = frozenset({"add", "sub", "mul", "neg", "abs", "sqr", "maximum", "minimum", "clip", "second",
                             "switch", "sign", "int_div", "mod", "and_", "or_", "xor", "invert"})
#: NumPy's arithmetic on booleans, in booleans: a product is a logical and, a sum a logical or
#: (Numba's ``True + True`` is the integer 2)
_BOOL_ARITHMETIC = {"mul": "({0} & {1})", "add": "({0} | {1})", "minimum": "({0} & {1})", "maximum": "({0} | {1})"}
#: bitwise forms of the logical steps, for integers
_BITWISE_FORMS = {"and_": "({0} & {1})", "or_": "({0} | {1})", "xor": "({0} ^ {1})", "invert": "(~{0})"}


def _numpy_loop_dtype(step_op, ins: list):
    """The dtype NumPy's function for the step computes in, given arrays of dtypes ``ins`` (its
    result's dtype, before the program casts it to the step's), or None where it raises."""
    fn = NUMPY_FORMS.get(step_op.name) or step_op.scalar.impl(np)
    try:
        with np.errstate(all="ignore"):
            return np.asarray(fn(*[np.ones(1, dtype=d) for d in ins])).dtype.name
    except (TypeError, ValueError):
        return None


def cast_form(value: str, source: str, target: str, astype: bool = False) -> str | None:
    """``value`` (a scalar of dtype ``source``) converted to ``target`` as NumPy converts, or None
    where Numba's conversion differs.  Floats to integers (``astype``: as ``ndarray.astype``
    converts them, where ``np.array`` raises for NaN) take ``_float_to_integer``'s form."""
    if source == target:
        return value
    if target == "bool":
        return f"({value} != 0)"
    if source == "bool":
        return f"({NUMPY_DTYPES[target]}(1) if {value} else {NUMPY_DTYPES[target]}(0))"
    if source.startswith("float") and not target.startswith("float"):
        return _float_to_integer(value, target) if astype else None
    return f"{NUMPY_DTYPES[target]}({value})"


#: integer dtype -> the width NumPy's cast from a float converts through on this platform (x86-64's
#: truncating conversion to 64 or 32 bits, then the narrower dtype's bits); uint32 and uint64 take
#: other paths (SIMD conversions through unsigned values) and have no form here
_CONVERTED_THROUGH = {"int64": 64, "int32": 32, "int16": 32, "int8": 32, "uint16": 32, "uint8": 32}


def _float_to_integer(value: str, target: str) -> str | None:
    """NumPy's ``astype`` of a float to ``target``: the value truncated where it fits the width
    converted through, else that width's minimum (the x86 "integer indefinite", also for NaN and
    inf), then wrapped to ``target``.  Numba's own conversion of NaN, inf and values out of range
    is undefined (LLVM's ``fptosi``), so it only ever sees values in range."""
    bits = _CONVERTED_THROUGH.get(target)
    if bits is None:
        return None
    low = -2 ** (bits - 1)
    wide = f"(np.int64({value}) if {float(low)!r} <= {value} < {float(-low)!r} else np.int64({low}))"
    return wide if target == "int64" else f"{NUMPY_DTYPES[target]}({wide})"


def _wide_step(step_op, args: list, ins: list, out: str) -> str | None:
    """A step of a dtype ``_step_types_ok`` leaves out: its arguments cast to the dtype NumPy's loop
    computes in, the form in that dtype (each result cast back to it: Numba computes narrow
    integers in int64, and float32 with float64 literals), then cast to the step's dtype ``out``
    as the program casts; or None where Numba would not give NumPy's bits."""
    key = step_name(step_op)
    if key.startswith("cast_"):
        return cast_form(args[0], ins[0], out, astype=True)
    if key not in _FORMS:
        return None
    if key in ("isnan", "isinf"):
        return _FORMS[key].format(args[0]) if ins[0].startswith("float") and out == "bool" else None
    picks = key == "switch"   # NumPy's where picks in the branches' common dtype
    compute = np.result_type(*ins[picks:]).name
    if key in _COMPARISONS:   # compared in the common dtype, where it holds every value
        if out != "bool" or not all(np.can_cast(d, compute, "safe") for d in ins):
            return None
    else:   # NumPy's loop casts the arguments to its dtype (int8 / int8 divides in float64)
        loop = _numpy_loop_dtype(step_op, ins)
        if loop is None or picks and loop != compute:
            return None
        compute = loop
    form = _wide_form(key, compute)
    if form is None:
        return None
    cast_args = [cast_form(arg, dtype, "bool" if picks and k == 0 else compute)
                 for k, (arg, dtype) in enumerate(zip(args, ins))]
    if None in cast_args:
        return None
    value = form.format(*cast_args)
    if key in _COMPARISONS:
        return value
    return cast_form(f"{NUMPY_DTYPES[compute]}({value})", compute, out)


def _wide_form(key: str, compute: str) -> str | None:
    """The form of step ``key`` on scalars of dtype ``compute`` (cast to it), or None."""
    if compute not in SCALAR_TYPES:
        return None
    if compute == "bool":
        if key in _BOOL_ARITHMETIC:
            return _BOOL_ARITHMETIC[key]
        return _FORMS[key] if key in _LOGICAL or key in _COMPARISONS or key in ("second", "switch") else None
    if compute.startswith("float"):
        return _FORMS[key] if compute == "float64" or key in _FLOAT32_STEPS or key in _COMPARISONS else None
    if key not in _WRAPPING_STEPS and key not in _COMPARISONS:
        return None
    if compute == "int64" and key in _INT64_WRAPPING:   # (int_div: _INTEGER_FORMS wraps for every width)
        return _INT64_WRAPPING[key]
    if compute.startswith("uint") and key in ("int_div", "mod"):   # no negative divisor; and 0 of the
        # same type: Numba unifies int64 and uint64 as float64, which loses bits
        return f"({NUMPY_DTYPES[compute]}(0) if {{1}} == 0 else {{0}} {'//' if key == 'int_div' else '%'} {{1}})"
    return _BITWISE_FORMS.get(key) or _INTEGER_FORMS.get(key) or _FORMS[key]


def step_form(step_op, args: list, ins: list, out: str) -> str | None:
    """The expression of a step on the expressions ``args`` (of dtypes ``ins``) giving NumPy's value
    in dtype ``out``, or None where the whole function has no such form."""
    key = step_name(step_op)
    if _step_types_ok(key, ins, out):
        if out == "int64":
            return (_INT64_WRAPPING.get(key) or _INTEGER_FORMS.get(key) or _FORMS[key]).format(*args)
        return _FORMS[key].format(*args)
    return _wide_step(step_op, args, ins, out)
