"""Numba kernels for ``ReducingComposite`` nodes (``reducing.py``): one loop computes the scalar
graph, writes the results something else reads and adds up the reduced ones, with no
temporary array in between.  Optional, like ``numba_kernels.py``.

The kernel is a plain ``numba.njit`` function of the node's array inputs (one-element constants
are written into it, ``baked_constants``) returning ``(ok, outputs...)``: ``ok`` is False where
it cannot take the call (then the NumPy kernel and reductions run, which also raise NumPy's
errors and warnings): shapes that do not broadcast, an empty result, or inputs broadcast in a
way the two loops below cannot index.

The reduced axes are the last ones (``rows``; all of them is one row) or the first ones
(``columns``).  Seen as a ``(lead, trail)`` matrix (the leading and trailing axes each taken as
one), every input is full or of length 1 along each part, read at ``r * so + c * si``.
Additions follow NumPy's order on the unfused result, a fresh C-contiguous array (tested bit for
bit against it, ``tests/exec/test_fused_reductions.py``):
- ``rows``: each row is NumPy's pairwise sum (``numba_reductions``): its values computed 128 at a
  time into a buffer, each block summed by ``block`` and the blocks added by ``pairwise_plan``,
  as ``pairwise_sum`` adds them; never a running sum (its error grows with the length);
- ``columns``: row after row into running sums from 0.0, as NumPy adds rows; a single column is
  one contiguous run, summed pairwise as a row.
A mean is that sum divided by the count.  Values are those of the Composite's Numba kernel
(the scalar forms are ``numba_kernels.FORMS``): libm functions may differ from NumPy's by an ulp.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from pathlib import Path

from eqgraph.exec import numba_reductions
from eqgraph.exec.numba_kernels import NUMBA_TYPES, baked_constants, load_kernel, numba, numba_below, scalar_steps

#: part of every kernel's source: a kernel compiled against other summing loops is not reused
_REDUCTIONS_VERSION = hashlib.sha256(Path(numba_reductions.__file__).read_bytes()).hexdigest()[:16]
_NUMPY_DTYPES = {"float64": "np.float64", "bool": "np.bool_"}


def layout(ndim: int, axis) -> tuple[str, int] | None:
    """``(kind, lead)``: ``rows`` where the reduced axes are the last ones, ``columns`` where they
    are the first ones (of the ``ndim``), with the number of leading axes; None otherwise."""
    axis = tuple(sorted(axis))
    if not axis or ndim == 0:
        return None
    if axis == tuple(range(ndim - len(axis), ndim)):
        return "rows", ndim - len(axis)
    if axis == tuple(range(len(axis))):
        return "columns", len(axis)
    return None


def kernel_source(op, node) -> str | None:
    """The module source of ``node``'s kernel, or None where there is none (Numba missing, a
    dtype or step without a scalar form, reduced axes in the middle)."""
    if numba is None:
        return None
    dtypes = op.value_dtypes(node)
    ndim = node.inputs[0].ndim
    found = layout(ndim, op.axis)
    if found is None or any(d not in NUMBA_TYPES for d in dtypes) or any(
            r is not None and (dtypes[o] != "float64" or out.dtype != "float64")
            for r, o, out in zip(op.reductions, op.outs, node.outputs)):
        return None
    kind, lead = found
    literals = baked_constants(op, node)
    kept = [k for k in range(op.nin) if k not in literals]
    names = [literals.get(k, f"x{k}") for k in range(op.nin)]
    steps = scalar_steps(op, names, "")
    if steps is None or not kept:
        return None
    steps = [f"x{k} = f{k}[r * so{k} + c * si{k}]" for k in kept] + steps   # each input read once
    sizes = [f"n{d}" for d in range(ndim)]
    lead_axes, trail_axes = range(lead), range(lead, ndim)
    lines = [f"def kernel({', '.join(f'i{k}' for k in kept)}):"]
    for d in range(ndim):
        lines.append(f"    n{d} = max({', '.join(f'i{k}.shape[{d}]' for k in kept)})" if len(kept) > 1
                     else f"    n{d} = i{kept[0]}.shape[{d}]")
    lines.append(f"    outer, inner = {_product(sizes[:lead])}, {_product(sizes[lead:])}")
    lines.append("    ok = outer * inner > 0")
    for k in kept:
        shape = [f"i{k}.shape[{d}]" for d in range(ndim)]
        lines += [f"    ok = ok and {' and '.join(f'({s} == n{d} or {s} == 1)' for d, s in enumerate(shape))}",
                  f"    lead{k} = {_all_equal(shape, sizes, lead_axes)}",
                  f"    trail{k} = {_all_equal(shape, sizes, trail_axes)}",
                  f"    ok = ok and (lead{k} or {_all_equal(shape, None, lead_axes)}) "
                  f"and (trail{k} or {_all_equal(shape, None, trail_axes)})",
                  f"    si{k} = 1 if trail{k} else 0",
                  f"    so{k} = (inner if trail{k} else 1) if lead{k} else 0",
                  f"    f{k} = i{k}.reshape(i{k}.size)"]
    for reads in op.inputs_read():   # an output must have the loops' shape: some input it reads has it
        full = [f"(lead{k} and trail{k})" for k in sorted(reads) if k in kept]
        if set(kept) - reads:
            lines.append(f"    ok = ok and ({' or '.join(full) or 'False'})")
    reduced_shape = {k: _reduced_shape(r, sizes) for k, r in enumerate(op.reductions) if r is not None}
    empty = [f"np.empty(({'0, ' * node.outputs[k].ndim}), {_NUMPY_DTYPES[dtypes[o]]})"
             for k, o in enumerate(op.outs)]
    lines += ["    if not ok:", f"        return False, {', '.join(empty)}"]
    for k, (r, o) in enumerate(zip(op.reductions, op.outs)):
        if r is None:
            lines.append(f"    w{k} = np.empty(outer * inner, {_NUMPY_DTYPES[dtypes[o]]})")
        else:
            lines.append(f"    w{k} = np.{'empty' if kind == 'rows' else 'zeros'}({'outer' if kind == 'rows' else 'inner'})")
            lines.append(f"    b{k}, s{k} = np.empty(128), np.empty(2 * (max(outer, inner) // 64) + 8)")
    lines.append(f"    count = {'inner' if kind == 'rows' else 'outer'}")
    if kind == "columns":   # one column: one contiguous run, which NumPy sums pairwise as a row
        lines.append("    if inner == 1:")
        lines.append("        outer, inner = 1, outer")
        lines += [f"        so{k}, si{k} = 0, so{k}" for k in kept]
        lines += ["        " + line for line in _rows_loop(op, steps)]
        lines.append("    else:")
        lines += ["        " + line for line in _columns_loop(op, steps)]
    else:
        lines += ["    " + line for line in _rows_loop(op, steps)]
    results = []
    for k, r in enumerate(op.reductions):
        if r is None:
            results.append(f"w{k}.reshape(({''.join(s + ', ' for s in sizes)}))")
        else:
            total = f"(w{k} / count)" if r.name == "mean" else f"w{k}"
            results.append(f"{total}.reshape(({''.join(s + ', ' for s in reduced_shape[k])}))")
    lines.append(f"    return True, {', '.join(results)}")
    return "\n".join(["import math", "import numba", "import numpy as np",
                      "from eqgraph.exec.numba_reductions import block, fold, pairwise_plan",
                      f"# summing loops {_REDUCTIONS_VERSION}", "",
                      "@numba.njit(cache=True, error_model='numpy')", *lines, ""])


def _product(sizes) -> str:
    return " * ".join(sizes) or "1"


def _all_equal(shape, sizes, axes) -> str:
    """Whether ``shape`` is ``sizes`` (or all 1 where ``sizes`` is None) along ``axes``."""
    tests = [f"{shape[d]} == {'1' if sizes is None else sizes[d]}" for d in axes]
    return f"({' and '.join(tests)})" if tests else "True"


def _reduced_shape(r, sizes) -> list:
    return [("1" if r.keepdims else None) if d in r.axis else s for d, s in enumerate(sizes)
            if r.keepdims or d not in r.axis]


def _element(op, steps) -> list[str]:
    """The scalar graph at ``(r, c)``: the values written, and each reduced value into ``v{k}``."""
    lines = list(steps)
    for k, (r, o) in enumerate(zip(op.reductions, op.outs)):
        value = f"t{o - op.nin}"
        lines.append(f"w{k}[r * inner + c] = {value}" if r is None else f"v{k} = {value}")
    return lines


def _rows_loop(op, steps) -> list[str]:
    """Each row (a ``lead`` index ``r``) summed pairwise: leaves of at most 128 values computed
    into ``b{k}``, summed by ``block`` into ``s{k}``, added by the plan."""
    reduced = [k for k, r in enumerate(op.reductions) if r is not None]
    element = _element(op, steps) + [f"b{k}[q] = v{k}" for k in reduced]
    return ["plan = pairwise_plan(inner) if inner > 128 else np.full(1, inner, np.int64)",
            "for r in range(outer):",
            "    c0, leaf = 0, 0",
            "    for m in plan:",
            "        if m == 0:",
            "            continue",
            "        for q in range(m):",
            "            c = c0 + q",
            *["            " + line for line in element],
            *[f"        s{k}[leaf] = block(b{k}, 0, m)" for k in reduced],
            "        c0 += m",
            "        leaf += 1",
            *[f"    w{k}[r] = s{k}[0] if leaf == 1 else fold(plan, s{k})" for k in reduced]]


def _columns_loop(op, steps) -> list[str]:
    reduced = [k for k, r in enumerate(op.reductions) if r is not None]
    element = _element(op, steps) + [f"w{k}[c] += v{k}" for k in reduced]
    return ["for r in range(outer):", "    for c in range(inner):", *["        " + line for line in element]]


def reducing_kernel(op, node, numpy_run):
    """``run(*inputs) -> outputs`` with the Numba kernel, ``numpy_run`` where the kernel cannot
    take a call (or an input has ``numba_below`` elements or more, or is not C-contiguous);
    None where there is no kernel."""
    source = kernel_source(op, node)
    if source is None:
        return None
    try:
        kernel = load_kernel(source)
    except Exception as err:  # noqa: BLE001  (a broken cache or Numba bug: NumPy keeps running)
        warnings.warn(f"eqgraph: Numba could not build a fused reduction; NumPy runs it instead ({err})",
                      RuntimeWarning, stacklevel=2)
        return None
    kept = [k for k in range(op.nin) if k not in baked_constants(op, node)]
    below = numba_below(op)
    params = ", ".join(f"i{k}" for k in range(op.nin))
    tests = [f"i{k}.flags.c_contiguous" for k in kept] + ([f"i{k}.size < below" for k in kept] if below != math.inf else [])
    outs = ", ".join(f"o{k}" for k in range(len(op.outs)))
    lines = [f"def run({params}):",
             f"    if {' and '.join(tests)}:",
             f"        ok, {outs} = kernel({', '.join(f'i{k}' for k in kept)})",
             "        if ok:",
             f"            return {outs},",
             f"    return numpy_run({params})"]
    namespace = {"kernel": kernel, "numpy_run": numpy_run, "below": below}
    exec(compile("\n".join(lines) + "\n", "<eqgraph numba reducing caller>", "exec"), namespace)  # noqa: S102
    return namespace["run"]


def supported(op, node) -> bool:
    return kernel_source(op, node) is not None


__all__ = ["kernel_source", "layout", "reducing_kernel", "supported"]
