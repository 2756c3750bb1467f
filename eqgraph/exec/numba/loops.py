"""Numba loop kernels for fused nodes that divide by a value the loop does not change:
``(x - m) / s`` with ``m`` and ``s`` of one element, ``x / x.sum()``, ``x / 3.0``.

Division is the one slow arithmetic instruction: NumPy's ``divide`` by a scalar takes more than
twice as long as a multiply (docs/performance.md), and Numba's loop divides no faster.  PyTensor's Numba loops are compiled with fast-math, so LLVM multiplies by
the reciprocal instead, which is not always the correctly rounded quotient.  Here the quotient
stays NumPy's to the last bit and costs a multiply and four fused multiply-adds:

    y = 1 / d                         (once, before the loop)
    q = n * y                         (within about an ulp of n / d)
    q = q + (n - d*q) * y             (twice; n - d*q is exact with an FMA)

Markstein's theorem: when ``y`` is the correctly rounded reciprocal and ``q`` is within an ulp
of ``n / d`` (true after the first correction), the second correction is the correctly rounded
quotient, provided nothing overflows or underflows on the way.  So the fast loop runs only for
divisors of magnitude within [2**-60, 2**60] (then ``1 / d`` is a normal number, and the
residual of a quotient of magnitude within [2**-900, 2**900] is exact).  The residual is
written ``sign(d) * (d*q - n)`` and added times ``-sign(d) * y``, the same value, so that a
numerator of 0 keeps its sign (``-0.0 / 2`` is ``-0.0``), and NaN stays NaN.  The loop notes
any other quotient outside that range (numerators near underflow or overflow, infinities);
where there was one, the whole loop runs again with plain division, so the kernel never writes
over its inputs.  ``tests/exec/test_numba_loops.py`` compares the quotients bit for bit with
NumPy's on values of every magnitude, zeros of both signs, infinities and NaN.

The kernel is one loop over the flat arrays.  It takes a node whose array inputs (not of one
element by their type) all have the output's rank; at run time they must have one shape, be
C-contiguous and have at least ``LOOP_FROM`` elements, else the node's ufunc kernel
(``numba_kernels``) runs.  Inputs of one element are read once before the loop, and steps that
read only them are computed there too.
"""

from __future__ import annotations

import math

import numpy as np

from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.exec.numba import special as numba_special
from eqgraph.exec.numba.kernels import NUMBA_TYPES, baked_constants, files_version, load_or_warn, numba, scalar_steps
from eqgraph.exec.source import define

#: divisors whose magnitude lies in [1 / DIVISOR_RANGE, DIVISOR_RANGE] take the fast loop
DIVISOR_RANGE = "2.0 ** 60"
#: quotients whose magnitude lies in [2**-QUOTIENT_EXPONENT, 2**QUOTIENT_EXPONENT] are exact (above)
QUOTIENT_EXPONENT = 900
#: the divisors' facts hoisted out of the loop: reciprocal, magnitude, and the signs above
_DIVISOR_FACTS = ["y{j} = 1.0 / {d}", "g{j} = abs({d})", "h{j} = y{j} if {d} < 0 else -y{j}",
                  "p{j} = 1.0 if {d} < 0 else -1.0"]
_NUMPY_DTYPES = {"float64": "np.float64", "bool": "np.bool_"}
#: smaller arrays go to the ufunc kernel: a call of a ``njit`` function costs more than a ufunc's,
#: which the loop's faster quotients repay only from a few hundred elements on
LOOP_FROM = 400
#: part of every kernel's source: a kernel compiled against another ``fma`` is not reused
_VERSION = files_version(__file__)

# The loop notes the range of the quotients' magnitudes as two unsigned integers, the smallest
# and largest bit patterns of |q| (IEEE floats of one sign order as their bits do): integer
# minimum and maximum vectorize, where a test of each quotient would not.
# Zeros (pattern 0) are left out of the smallest by taking it of ``pattern - 1``; NaN (patterns
# above infinity's) out of the largest by taking it of ``pattern + _NAN_LAST``, which wraps
# NaN's patterns around to below every other.
_MAGNITUDE = 0x7FFF_FFFF_FFFF_FFFF          # all bits but the sign
_INFINITY = 0x7FF0_0000_0000_0000
_NAN_LAST = 2 ** 64 - _INFINITY - 1
_LOWEST = (1023 - QUOTIENT_EXPONENT) << 52  # the pattern of 2**-QUOTIENT_EXPONENT
_HIGHEST = (1023 + QUOTIENT_EXPONENT) << 52

if numba is not None:
    from llvmlite import ir
    from numba.core import types
    from numba.extending import intrinsic

    @intrinsic
    def fma(typingctx, a, b, c):
        """``a * b + c`` rounded once (LLVM's ``llvm.fma``: one instruction on x86-64 with FMA)."""
        def codegen(context, builder, signature, args):
            return builder.fma(*args)
        return a(a, b, c), codegen

    @intrinsic
    def magnitude_bits(typingctx, x):
        """The bit pattern of ``abs(x)`` (a float64) as an unsigned integer."""
        def codegen(context, builder, signature, args):
            return builder.and_(builder.bitcast(args[0], ir.IntType(64)), ir.Constant(ir.IntType(64), _MAGNITUDE))
        return types.uint64(x), codegen

    @numba.njit(cache=True)
    def exact_range(smallest, largest) -> bool:
        """Whether every quotient the loop noted (``smallest``: least ``pattern - 1``, ``largest``:
        greatest ``pattern + _NAN_LAST``) is 0, NaN, or of magnitude within the exact range."""
        no_nonzero = smallest == np.uint64(2 ** 64 - 1)
        no_number = largest < np.uint64(2 ** 63)   # only NaN (or nothing) was noted
        return (no_nonzero or smallest + np.uint64(1) >= np.uint64(_LOWEST)) and (
            no_number or largest - np.uint64(_NAN_LAST) <= np.uint64(_HIGHEST))


def _invariant_divisions(op, node, literals) -> tuple[set, list]:
    """``(invariant, divisions)``: the value indices the loop does not change (inputs of one
    element, constants, steps reading only those) and the float64 ``true_div`` steps whose
    divisor is one of them and whose numerator is not."""
    invariant = {k for k in range(op.nin) if k in literals or all(node.inputs[k].type.broadcastable)}
    dtypes = op.value_dtypes(node)
    divisions = []
    for j, (step_op, args) in enumerate(op.steps):
        index = op.nin + j
        if all(a in invariant for a in args):
            invariant.add(index)
        elif (getattr(step_op, "name", "") == "true_div" and args[1] in invariant
              and dtypes[index] == dtypes[args[0]] == dtypes[args[1]] == "float64"):
            divisions.append(j)
    return invariant, divisions


def kernel_source(op, node) -> str | None:
    """The module source of ``node``'s loop kernel, or None where it gets none: Numba missing, no
    division by an invariant value, a dtype or step without a scalar form, array inputs of
    another rank than the outputs, an output that reads no array input."""
    if numba_kernels.numba is None or any(o.ndim != node.outputs[0].ndim for o in node.outputs):
        return None
    dtypes = op.value_dtypes(node)
    if any(d not in NUMBA_TYPES for d in dtypes):
        return None
    literals = baked_constants(op, node)
    invariant, divisions = _invariant_divisions(op, node, literals)
    arrays = [k for k in range(op.nin) if k not in invariant]
    if not divisions or not arrays or any(node.inputs[k].ndim != node.outputs[0].ndim for k in arrays) \
            or any(reads <= invariant for reads in op.inputs_read()):
        return None
    kept = [k for k in range(op.nin) if k not in literals]
    names = [literals.get(k, f"s{k}" if k in invariant else f"x{k}") for k in range(op.nin)]
    steps = scalar_steps(op, list(names), "")
    if steps is None:
        return None
    hoisted = [line for j, line in enumerate(steps) if op.nin + j in invariant]
    looped = [(j, line) for j, line in enumerate(steps) if op.nin + j not in invariant]
    value = names + [f"t{j}" for j in range(len(op.steps))]
    divisors = {j: value[op.steps[j][1][1]] for j in divisions}
    first = f"i{arrays[0]}"
    lines = ["@numba.njit(cache=True, error_model='numpy')",
             f"def kernel({', '.join(f'i{k}' for k in kept)}):",
             f"    n = {first}.size",
             *[f"    f{k} = i{k}.reshape(n)" for k in arrays],
             *[f"    s{k} = i{k}.reshape(1)[0]" for k in kept if k in invariant],
             *[f"    {line}" for line in hoisted],
             *[f"    {fact.format(j=j, d=d)}" for j, d in divisors.items() for fact in _DIVISOR_FACTS],
             *[f"    o{k} = np.empty(n, {_NUMPY_DTYPES[dtypes[o]]})" for k, o in enumerate(op.outs)]]
    fast = " and ".join(f"1.0 / {DIVISOR_RANGE} <= abs({d}) <= {DIVISOR_RANGE}" for d in divisors.values())
    notes = [f"lo{j}, hi{j} = np.uint64({2 ** 64 - 1}), np.uint64(0)" for j in divisors]
    lines += [f"    if {fast}:", *[f"        {note}" for note in notes]]
    lines += _loop(op, arrays, looped, divisors, value, "        ")
    exact = " and ".join(f"exact_range(lo{j}, hi{j})" for j in divisors)
    lines += [f"        if {exact}:", f"            return {_returned(op, first)}"]
    lines += _loop(op, arrays, looped, {}, value, "    ")
    lines.append(f"    return {_returned(op, first)}")
    return "\n".join(["import math", "import numba", "import numpy as np", numba_special.IMPORT,
                      "from eqgraph.exec.numba.loops import exact_range, fma, magnitude_bits", f"# loops {_VERSION}", "", *lines, ""])


def _loop(op, arrays, looped, divisors, value, indent) -> list[str]:
    """The loop over the elements: its steps, the fast quotients (noting the ones outside the
    proven range) for the steps in ``divisors``, the outputs written."""
    lines = [f"{indent}for i in range(np.uint64(n)):   # unsigned: Numba does not test it for wrapping"]
    inner = indent + "    "
    lines += [f"{inner}x{k} = f{k}[i]" for k in arrays]
    for j, line in looped:
        if j not in divisors:
            lines.append(f"{inner}{line}")
            continue
        n, q, b, r = value[op.steps[j][1][0]], f"q{j}", f"b{j}", f"fma(g{j}, q{j}, m{j})"
        lines += [f"{inner}m{j} = {n} * p{j}",
                  f"{inner}{q} = {n} * y{j}",
                  f"{inner}{b} = magnitude_bits({q})",
                  f"{inner}lo{j} = min(lo{j}, {b} - np.uint64(1))",
                  f"{inner}hi{j} = max(hi{j}, {b} + np.uint64({_NAN_LAST}))",
                  f"{inner}{q} = fma({r}, h{j}, {q})",
                  f"{inner}t{j} = fma({r}, h{j}, {q})"]
    lines += [f"{inner}o{k}[i] = {value[o]}" for k, o in enumerate(op.outs)]
    return lines


def _returned(op, first) -> str:
    outs = [f"o{k}.reshape({first}.shape)" for k in range(len(op.outs))]
    return outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"


def loop_kernel(op, node, numpy_run, below=math.inf):
    """``run(*inputs) -> outputs`` with the loop kernel where the inputs suit it, or None where
    there is no kernel.  Inputs that do not suit it (fewer than ``LOOP_FROM`` elements, not
    C-contiguous, array inputs of other shapes, broadcasting) go to the ufunc kernel
    (``numba_kernels.numba_kernel``, built at the first such call) or ``numpy_run``; so do
    arrays of ``below`` elements or more."""
    source = kernel_source(op, node)
    kernel = None if source is None else load_or_warn(source, "a fused loop kernel")
    if kernel is None:
        return None
    literals = baked_constants(op, node)
    invariant, _ = _invariant_divisions(op, node, literals)
    arrays = [f"i{k}" for k in range(op.nin) if k not in invariant]
    params = ", ".join(f"i{k}" for k in range(op.nin))
    suits = [f"{LOOP_FROM} <= {arrays[0]}.size < below"] + [f"{x}.flags.c_contiguous" for x in arrays] \
        + [f"{x}.shape == {arrays[0]}.shape" for x in arrays[1:]]
    call = f"kernel({', '.join(f'i{k}' for k in range(op.nin) if k not in literals)})"
    source = "\n".join([f"def run({params}):",
                        f"    if {' and '.join(suits)}:",
                        f"        return {'(' + call + ',)' if len(op.outs) == 1 else call}",
                        f"    return other({params})", ""])
    other = None

    def other_run(*inputs):
        nonlocal other
        if other is None:
            other = numba_kernels.numba_kernel(op, node, numpy_run, below) or numpy_run
        return other(*inputs)

    namespace = {"kernel": kernel, "other": other_run, "below": below}
    return define(source, "<eqgraph loop kernel caller>", namespace)["run"]


def tiered(op, node, numpy_run, rebind=None):
    """``numba_kernels.tiered``, with the loop kernel once hot where the node divides by an
    invariant value (``kernel_source``)."""
    if kernel_source(op, node) is None:
        return numba_kernels.tiered(op, node, numpy_run, rebind)
    below = numba_kernels.numba_below(op)
    return numba_kernels.tier(numpy_run, lambda: loop_kernel(op, node, numpy_run, below), rebind, below,
                              source=kernel_source(op, node))


__all__ = ["DIVISOR_RANGE", "LOOP_FROM", "QUOTIENT_EXPONENT", "kernel_source", "loop_kernel", "tiered"]
