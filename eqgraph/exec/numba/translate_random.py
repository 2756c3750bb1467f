"""The whole Numba function's form of ``RandomVariable``: Numba's ``np.random.Generator`` methods
are NumPy's own algorithms on the same bit generator, so a loop drawing one element at a time, in
C order of the draw's shape, gives the numbers NumPy's vectorized method gives and leaves the
generator in the same state (NumPy's loops draw element after element in that order too).

The draw advances the generator it is given in place, where the op draws from a copy: the
whole function's caller copies each generator it is passed, and a draw is translated only where
its generator is read by no other node and is no output (``Writer.readers``), so no one sees the
state it leaves behind but the draw's own new generator, which is that same object.

Each distribution's parameters are checked before anything is drawn, at least as strictly as
NumPy (or SciPy, for the distributions ``_random_host`` scales itself) checks them: where a check
fails the function raises and the caller runs the program, whose draw gives the value or names
the error.  Stricter checks (a NaN or a zero scale refused) only send such calls to the program.

Left to the program, with the reason:

- ``weibull`` and ``wald``: Numba's algorithms draw other numbers than NumPy's;
- ``vonmises``, ``hypergeometric``: Numba's generator has no such method;
- ``cauchy``, ``halfcauchy``, ``gumbel``, ``pareto``, ``truncexpon``, ``gengamma``: ``_random_host``
  applies NumPy's ``tan``, ``log``, ``log1p``, ``expm1`` or ``power`` to the draws, whose float64
  loops may be NumPy's own SIMD forms rather than the C library's that Numba calls;
- ``multinomial``, ``choice``, ``permutation``, ``multivariate_normal``, ``dirichlet``,
  ``betabinom``: draws with core dimensions or several passes over the shape (``categorical``,
  one uniform per element and a sum along the core axis, has its loop here).
"""

from __future__ import annotations

from eqgraph.exec.numba.scalar_steps import NUMPY_DTYPES, cast_form
from eqgraph.tensor.random import RandomVariable

_POSITIVE = "{} > 0.0"
_PROBABILITY = "0.0 <= {} <= 1.0"
#: distribution -> (the draw of one element, ``{g}`` the generator and ``{0}``, ``{1}``, ... its
#: parameters' elements as float64 or int64; each parameter's check on its elements, None for
#: none; a check on all the parameters of one element, or None; the dtype drawn)
DRAWS = {
    "normal": ("{g}.normal({0}, {1})", (None, "{} >= 0.0 and math.copysign(1.0, {}) > 0.0"), None, "float64"),
    "uniform": ("{g}.uniform({0}, {1})", (None, None), "math.isfinite({1} - {0})", "float64"),
    "integers": ("{g}.integers({0}, {1})", (None, None), "{0} < {1}", "int64"),
    "bernoulli": ("{g}.binomial(1, {0})", (_PROBABILITY,), None, "int64"),
    "binomial": ("{g}.binomial({0}, {1})", ("{} >= 0", _PROBABILITY), None, "int64"),
    "gamma": ("{g}.standard_gamma({0}) * {1}", (_POSITIVE, _POSITIVE), None, "float64"),
    "beta": ("{g}.beta({0}, {1})", (_POSITIVE, _POSITIVE), None, "float64"),
    "exponential": ("{g}.exponential({0})", (_POSITIVE,), None, "float64"),
    "poisson": ("{g}.poisson({0})", ("0.0 <= {} <= 1e15",), None, "int64"),
    "negative_binomial": ("{g}.negative_binomial({0}, {1})", (_POSITIVE, "0.0 < {} <= 1.0"), None, "int64"),
    "geometric": ("{g}.geometric({0})", ("0.0 < {} <= 1.0",), None, "int64"),
    "lognormal": ("{g}.lognormal({0}, {1})", (None, _POSITIVE), None, "float64"),
    "laplace": ("{g}.laplace({0}, {1})", (None, _POSITIVE), None, "float64"),
    "logistic": ("{g}.logistic({0}, {1})", (None, _POSITIVE), None, "float64"),
    "chisquare": ("{g}.chisquare({0})", (_POSITIVE,), None, "float64"),
    "triangular": ("{g}.triangular({0}, {1}, {2})", (None, None, None), "{0} <= {1} <= {2} and {0} < {2}",
                   "float64"),
    # the host's draws, scaled as ``_random_host`` scales them (SciPy's ``standard * scale + loc``)
    "t": ("{g}.standard_t({0}) * {2} + {1}", (_POSITIVE, None, _POSITIVE), None, "float64"),
    "halfnormal": ("abs({g}.standard_normal()) * {1} + {0}", (None, _POSITIVE), None, "float64"),
    "invgamma": ("1.0 / ({g}.standard_gamma({0}) * 1.0) * {1} + 0.0", (_POSITIVE, _POSITIVE), None, "float64"),
}
#: parameters NumPy reads as integers (the others it converts to float64)
_INTEGER_PARAMS = {"integers": (0, 1), "binomial": (0,)}
_INTEGERS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32")


def random_variable(w, node):
    """A draw of a distribution of ``DRAWS``, or a categorical one, on a generator nothing else
    reads; or None."""
    op = node.op
    rng, *inputs = node.inputs
    new_rng, out = node.outputs
    size, params = (inputs[0], inputs[1:]) if op.sized else (None, inputs)
    if op.options or w.readers.get(rng, 2) != 1:
        return None
    if op.distribution == "categorical":
        return _categorical(w, node, size, params[0])
    if op.distribution not in DRAWS:
        return None
    form, checks, joint, drawn = DRAWS[op.distribution]
    integer = _INTEGER_PARAMS.get(op.distribution, ())
    if not _params_ok(params, integer, out) or cast_form("v", drawn, out.dtype) is None:
        return None
    gen = w.value(rng)
    lines = _checked(w, params, checks)
    lines += _shaped(w, node, size, params, out)
    element, loop, at = lines.pop()
    scalars = [_scalar(e, k in integer) for k, e in enumerate(element)]
    body = []
    if joint is not None:
        body.append(f"if not ({joint.format(*scalars)}): raise ValueError('{op.distribution}: parameters')")
    value = cast_form(form.format(*scalars, g=gen), drawn, out.dtype)
    name = w.define(out)
    indent = "    " * len(loop)
    if not loop:
        lines += [*body, f"{name} = {value}"]
    else:
        shape = f"({''.join(n + ', ' for n, _ in loop)})"
        lines.append(f"{name} = np.empty({shape}, dtype={NUMPY_DTYPES[out.dtype]})")
        if joint is not None:   # NumPy checks the parameters even where nothing is drawn
            lines.append(f"if {name}.size == 0: raise ValueError('{op.distribution}: nothing drawn')")
        lines += [f"{'    ' * d}for {i} in range({n}):" for d, (n, i) in enumerate(loop)]
        lines += [indent + line for line in body]
        lines.append(f"{indent}{name}[{at}] = {value}")
    w.names[new_rng] = gen
    return lines


def _categorical(w, node, size, p):
    """``categorical``, as ``_random_host`` draws it: per element of the batch a uniform draw and
    the number of the cumulative sums of ``p``'s last axis (added in order, as ``np.cumsum``)
    below it, at most the last category."""
    rng, out = node.inputs[0], node.outputs[1]
    batch = p.ndim - 1
    if p.dtype != "float64" or batch > out.ndim or cast_form("v", "int64", out.dtype) is None:
        return None
    gen, name, rank = w.value(rng), w.value(p), out.ndim
    lines = []
    if size is not None:
        lengths = [f"{w.value(size)}[{d}]" for d in range(rank)]
    else:
        lengths = [f"{name}.shape[{d}]" for d in range(batch)]
    ns = [w.fresh("n") for _ in range(rank)]
    lines += [f"{n} = {length}" for n, length in zip(ns, lengths)]
    subscripts = []
    for dd in range(batch):   # each batch axis of p is 1 or the draw's (the host's ValueError otherwise)
        d, moves = rank - batch + dd, w.fresh("m")
        lines += [f"if {name}.shape[{dd}] != 1 and {name}.shape[{dd}] != {ns[d]}: raise ValueError('size')",
                  f"{moves} = 1 if {name}.shape[{dd}] != 1 else 0"]
        subscripts.append(f"i{d} * {moves}")
    k, target = f"{name}.shape[{batch}]", w.define(out)
    if rank:
        lines.append(f"{target} = np.empty(({''.join(n + ', ' for n in ns)}), dtype={NUMPY_DTYPES[out.dtype]})")
    lines += [f"{'    ' * d}for i{d} in range({n}):" for d, n in enumerate(ns)]
    indent, row = "    " * rank, ", ".join([*subscripts, "j"])
    at = f"[{', '.join(f'i{d}' for d in range(rank))}]" if rank else ""
    lines += [f"{indent}u = {gen}.uniform(0.0, 1.0)", f"{indent}below = 0", f"{indent}total = 0.0",
              f"{indent}for j in range({k}):", f"{indent}    total += {name}[{row}]",
              f"{indent}    if total < u: below += 1",
              f"{indent}{target}{at} = {cast_form(f'np.int64(min(below, {k} - 1))', 'int64', out.dtype)}"]
    w.names[node.outputs[0]] = gen
    return lines


def _params_ok(params, integer, out) -> bool:
    """Whether each parameter broadcasts to the draw's rank and converts exactly as NumPy converts
    it (to int64 for an integer parameter, which must have an integer dtype; else to float64)."""
    for k, param in enumerate(params):
        if param.ndim > out.ndim or param.dtype == "uint64" or k in integer and param.dtype not in _INTEGERS:
            return False
    return True


def _scalar(expression: str, integer: bool) -> str:
    return f"np.int64({expression})" if integer else f"float({expression})"


def _checked(w, params, checks) -> list:
    """Lines raising a ValueError where an element of a parameter fails its check (every element,
    whatever is drawn: NumPy checks the parameters first)."""
    lines = []
    for k, (param, check) in enumerate(zip(params, checks)):
        if check is None:
            continue
        name = w.value(param)
        if param.ndim == 0:
            lines.append(f"if not ({check.format(name, name)}): raise ValueError('parameter {k}')")
        else:
            lines += [f"for e in {name}.flat:", f"    if not ({check.format('e', 'e')}): raise ValueError('parameter {k}')"]
    return lines


def _shaped(w, node, size, params, out) -> list:
    """Lines computing the draw's shape (``size``'s entries, or the parameters' broadcast shape),
    checking that each parameter broadcasts to it; last, ``(element expressions of the parameters,
    [(length, index)] of the loops, the output's subscript)``."""
    lines, rank = [], out.ndim
    if size is not None:
        sizes = w.value(size)
        lengths = [w.fresh("n") for _ in range(rank)]
        lines += [f"{n} = {sizes}[{d}]" for d, n in enumerate(lengths)]
    else:
        lengths = None
    dims = [[] for _ in range(rank)]
    element = []
    for param in params:
        scalar = w.one_element(param)
        if scalar is not None or param.ndim == 0:
            element.append(scalar if scalar is not None else w.value(param))
            continue
        name, subscripts = w.value(param), []
        for dd in range(param.ndim):
            d = rank - param.ndim + dd
            dims[d].append(f"{name}.shape[{dd}]")
            moves = w.fresh("m")   # 0 where the parameter's axis has length 1: NumPy broadcasts it
            lines.append(f"{moves} = 1 if {name}.shape[{dd}] != 1 else 0")
            subscripts.append(f"i{d} * {moves}")
        element.append(f"{name}[{', '.join(subscripts)}]")
    if lengths is None:
        lengths = []
        for d in range(rank):
            size_d = "1"
            for dim in dims[d]:
                size_d = dim if size_d == "1" else f"broadcast_dim({size_d}, {dim})"
            lengths.append(w.fresh("n"))
            lines.append(f"{lengths[-1]} = {size_d}")
    else:   # each parameter's axis is 1 or the size's (NumPy's ValueError otherwise)
        for d in range(rank):
            for dim in dims[d]:
                lines.append(f"if {dim} != 1 and {dim} != {lengths[d]}: raise ValueError('size')")
    loop = [(n, f"i{d}") for d, n in enumerate(lengths)]
    lines.append((element, loop, ", ".join(i for _, i in loop)))
    return lines


TRANSLATIONS = {RandomVariable: random_variable}
