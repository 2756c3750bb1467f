"""Numba kernels for ``ReducingComposite`` nodes (``reducing.py``): one loop computes the scalar
graph, writes the results something else reads and adds up the reduced ones, with no
temporary array in between.  It replaces the NumPy kernel once compiled (``numba_kernels.tier``).

The kernel is a plain ``numba.njit`` function of the node's array inputs (one-element constants
are written into it, ``baked_constants``) and of the arrays its written outputs had on the last
call (reused where of the right size), returning the outputs (a float for a reduction to 0-d:
Numba boxes a 0-d array slowly).  It raises ``NotThisCall`` where it cannot take the call
(then the NumPy kernel and reductions run, which also raise NumPy's
errors and warnings): shapes that do not broadcast, an empty result, or an input broadcast at
run time along axes its type does not say are of length 1.

The reduced axes are the last ones (``rows``; all of them is one row) or the first ones
(``columns``).  Seen as a ``(lead, trail)`` matrix (the leading and trailing axes each taken as
one), every input is, by its type, of length 1 along a part or else (checked at run time) of the
full length there, so it is read at ``r * inner + c``, ``r``, ``c`` or ``0``; indices are unsigned
integers, which Numba does not test for wrapping around, so the loads vectorize.
Additions follow NumPy's order on the unfused result, a fresh C-contiguous array (tested bit for
bit against it, ``tests/exec/test_fused_reductions.py``):
- ``rows``: each row is NumPy's pairwise sum (``numba_reductions``): its values computed into a
  buffer a run of whole leaves of ``pairwise_plan`` at a time (``GROUP`` values at most), each
  leaf summed by ``leaf`` and the leaves added by the plan, as ``pairwise_sum`` adds them; never
  a running sum (its error grows with the length);
- ``columns``: row after row into running sums from 0.0, as NumPy adds rows; a single column is
  one contiguous run, summed pairwise as a row.
A mean is that sum divided by the count.  Values are those of the Composite's Numba kernel
(the scalar forms are ``numba_kernels.FORMS``): libm functions may differ from NumPy's by an ulp.
"""

from __future__ import annotations

import math

import numpy as np

from eqgraph.exec.numba import reductions as numba_reductions
from eqgraph.exec.numba import special as numba_special
from eqgraph.exec.numba.kernels import NUMBA_TYPES, baked_constants, load_or_warn, numba, numba_below, scalar_steps
from eqgraph.exec.source import define

_NUMPY_DTYPES = {"float64": "np.float64", "bool": "np.bool_"}


class NotThisCall(Exception):
    """Raised by a kernel that cannot take a call (then the NumPy kernel runs it)."""


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
    dtype or step without a scalar form, reduced axes in the middle, an input of length 1 on
    some but not all of the leading or trailing axes, an output smaller than the loops)."""
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
    parts = (range(lead), range(lead, ndim))
    ones = {}   # input -> (length 1 on the leading axes, on the trailing axes), from its type
    for k in kept:
        shape = node.inputs[k].type.shape
        ones[k] = tuple(all(shape[d] == 1 for d in axes) for axes in parts)
        if any(not one and any(shape[d] == 1 for d in axes) for one, axes in zip(ones[k], parts)):
            return None
    if not kept or not all(_full_size(op, reads, ones, kept) for reads in op.inputs_read()):
        return None
    steps = scalar_steps(op, [literals.get(k, f"x{k}") for k in range(op.nin)], "")
    if steps is None:
        return None
    index = {(False, False): "r * uinner + c", (False, True): "r", (True, False): "c", (True, True): "0"}
    steps = [f"x{k} = f{k}[{index[ones[k]]}]" for k in kept] + steps   # each input read once
    sizes = [f"n{d}" for d in range(ndim)]
    written = [k for k, r in enumerate(op.reductions) if r is None]
    lines = [f"def kernel({', '.join([f'i{k}' for k in kept] + [f'p{k}' for k in written])}):"]
    for d in range(ndim):
        lines.append(f"    n{d} = max({', '.join(f'i{k}.shape[{d}]' for k in kept)})" if len(kept) > 1
                     else f"    n{d} = i{kept[0]}.shape[{d}]")
    lines.append(f"    outer, inner = {_product(sizes[:lead])}, {_product(sizes[lead:])}")
    lines.append("    uinner = np.uint64(inner)   # indices are unsigned: Numba tests signed ones for wrapping around")
    checks = [f"i{k}.shape[{d}] == n{d}" for k in kept for one, axes in zip(ones[k], parts) if not one for d in axes]
    lines.append(f"    ok = outer * inner > 0{''.join(' and ' + c for c in checks)}")
    lines += ["    if not ok:  # NumPy's broadcasting (or its error), or an empty array: the NumPy kernel runs",
              "        raise NotThisCall()"]
    lines += [f"    f{k} = i{k}.reshape(i{k}.size)" for k in kept]
    for k in written:   # the array of the last call where it was given, of the right size
        lines.append(f"    w{k} = p{k}.reshape(p{k}.size) if p{k}.size == outer * inner "
                     f"else np.empty(outer * inner, {_NUMPY_DTYPES[dtypes[op.outs[k]]]})")
    for k, r in enumerate(op.reductions):
        if r is not None:
            lines.append(f"    w{k} = np.{'empty' if kind == 'rows' else 'zeros'}({'outer' if kind == 'rows' else 'inner'})")
            lines.append(f"    b{k} = np.empty({numba_reductions.GROUP})")
    if kind == "columns":   # one column: one contiguous run, which NumPy sums pairwise as a row
        lines.append("    if inner == 1:")
        lines += ["        c = np.uint64(0)"] + ["        " + line for line in _pairwise_loop(op, steps, "outer", "r", "c")]
        lines.append("    else:")
        lines += ["        " + line for line in _columns_loop(op, steps)]
    else:
        lines += ["    " + line for line in _pairwise_loop(op, steps, "inner", "c", "r")]
    results = []
    for k, r in enumerate(op.reductions):
        if r is None:
            results.append(f"w{k}.reshape(({''.join(s + ', ' for s in sizes)}))")
            continue
        count = "inner" if kind == "rows" else "outer"
        shape = _reduced_shape(r, sizes)
        if not shape:   # a float (the caller makes it a 0-d array): Numba boxes a 0-d array slowly
            results.append(f"w{k}[0] / {count}" if r.name == "mean" else f"w{k}[0]")
        else:
            total = f"(w{k} / {count})" if r.name == "mean" else f"w{k}"
            results.append(f"{total}.reshape(({''.join(s + ', ' for s in shape)}))")
    lines.append(f"    return {', '.join(results)}")
    return "\n".join(["import math", "import numba", "import numpy as np", numba_special.IMPORT,
                      "from eqgraph.exec.numba.fused import NotThisCall",
                      "from eqgraph.exec.numba.reductions import fold, leaf_group, leaf_sums, pairwise_plan",
                      f"# summing loops {numba_reductions.VERSION}", "",
                      f"@numba.njit({_signature(node, dtypes, op, kept, written)}, cache=True, error_model='numpy')",
                      *lines, ""])


def _signature(node, dtypes, op, kept, written) -> str:
    """The kernel's argument types, written out so that loading its module compiles it (the compile
    server fills the disk cache before the kernel takes over: no call compiles it): C-contiguous
    inputs, read-only (which takes writable arrays too), and the written outputs' arrays."""
    def array(dtype, ndim, readonly):
        return f"numba.types.Array(numba.{NUMBA_TYPES[dtype]}, {ndim}, 'C'{', readonly=True' if readonly else ''})"

    types = [array(node.inputs[k].dtype, node.inputs[k].ndim, True) for k in kept]
    types += [array(dtypes[op.outs[k]], node.outputs[k].ndim, False) for k in written]
    return f"({', '.join(types)},)"


def _full_size(op, reads, ones, kept) -> bool:
    """Whether a value reading the inputs ``reads`` has the loops' shape: along each part
    (leading, trailing axes), it reads an input not of length 1, or every input is of length 1."""
    return all(any(not ones[k][part] for k in reads if k in kept) or all(ones[k][part] for k in kept)
               for part in (0, 1))


def _product(sizes) -> str:
    return " * ".join(sizes) or "1"


def _reduced_shape(r, sizes) -> list:
    return [("1" if r.keepdims else None) if d in r.axis else s for d, s in enumerate(sizes)
            if r.keepdims or d not in r.axis]


def _element(op, steps, reduced_into) -> list[str]:
    """The scalar graph at ``(r, c)``: the values written, and each reduced one as ``reduced_into``
    (a format of ``k`` and the value) says."""
    lines = list(steps)
    for k, (r, o) in enumerate(zip(op.reductions, op.outs)):
        value = f"t{o - op.nin}"
        lines.append(f"w{k}[r * uinner + c] = {value}" if r is None else reduced_into.format(k=k, value=value))
    return lines


def _pairwise_loop(op, steps, length: str, along: str, across: str) -> list[str]:
    """For each ``across`` index, the values along ``along`` (``length`` of them) summed in
    NumPy's pairwise order: a run of whole leaves of the plan (``leaf_group``: at most ``GROUP``
    values) computed into ``b{k}``, the leaves summed into ``s{k}``, then added by the plan and
    to 0.0 (``np.add.reduce`` starts from its identity: a sum of -0.0 is 0.0)."""
    reduced = [k for k, r in enumerate(op.reductions) if r is not None]
    element = _element(op, steps, "b{k}[q] = {value}")
    loop = "for r in range(np.uint64(outer)):" if across == "r" else "for _ in range(1):"
    return [f"plan = pairwise_plan({length})",
            *[f"s{k} = np.empty(plan.shape[0])" for k in reduced],
            loop,
            "    start, count, first = np.uint64(0), 0, 0",
            "    while first < plan.shape[0]:",
            "        last, size, leaves = leaf_group(plan, first)",
            "        for q in range(np.uint64(size)):",
            f"            {along} = start + q",
            *["            " + line for line in element],
            *[f"        leaf_sums(b{k}, plan, first, last, s{k}, count)" for k in reduced],
            "        start += np.uint64(size)",
            "        count += leaves",
            "        first = last",
            *[f"    w{k}[{across}] = 0.0 + (s{k}[0] if count == 1 else fold(plan, s{k}))" for k in reduced]]


def _columns_loop(op, steps) -> list[str]:
    element = _element(op, steps, "w{k}[c] += {value}")
    return ["for r in range(np.uint64(outer)):", "    for c in range(uinner):", *["        " + line for line in element]]


def reducing_kernel(op, node, numpy_run, reusable=()):
    """``run(*inputs) -> outputs`` with the Numba kernel, ``numpy_run`` where the kernel cannot
    take a call (or an input has ``numba_below`` elements or more, or is not C-contiguous);
    None where there is no kernel.  The written outputs listed in ``reusable`` (no call hands
    them out) keep their array from one call to the next, as ``kernels.numpy_kernel``'s do:
    a fresh large array costs page faults on every call."""
    source = kernel_source(op, node)
    if source is None:
        return None
    kernel = load_or_warn(source, "a fused reduction")
    if kernel is None:
        return None
    kept = [k for k in range(op.nin) if k not in baked_constants(op, node)]
    written = [k for k, r in enumerate(op.reductions) if r is None]
    below = numba_below(op)
    params = ", ".join(f"i{k}" for k in range(op.nin))
    tests = [f"i{k}.flags.c_contiguous" for k in kept] + ([f"i{k}.size < below" for k in kept] if below != math.inf else [])
    outs = ", ".join(f"o{k}" for k in range(len(op.outs)))
    namespace = {"kernel": kernel, "numpy_run": numpy_run, "below": below}
    for k in written:   # a call's array is kept where it is reusable; the others get fresh memory
        namespace[f"p{k}"] = np.empty((0,) * node.outputs[k].ndim, dtype=node.outputs[k].type.numpy_dtype)
    keep = [f"p{k}" for k in written if k in set(reusable)]
    got = [f"asarray(o{k})" if out.ndim == 0 else f"o{k}" for k, out in enumerate(node.outputs)]
    namespace.update(asarray=np.asarray, NotThisCall=NotThisCall)
    lines = [f"def run({params}):",
             *([f"    global {', '.join(keep)}"] if keep else []),
             f"    if {' and '.join(tests)}:",
             "        try:",
             f"            {outs}, = kernel({', '.join([f'i{k}' for k in kept] + [f'p{k}' for k in written])})"
             if len(op.outs) > 1 else f"            {outs} = kernel({', '.join([f'i{k}' for k in kept] + [f'p{k}' for k in written])})",
             "        except NotThisCall:",
             "            return numpy_run(" + params + ")",
             *([f"        {', '.join(keep)} = {', '.join(f'o{k}' for k in written if k in set(reusable))}"] if keep else []),
             f"        return {', '.join(got)},",
             f"    return numpy_run({params})"]
    define("\n".join(lines) + "\n", "<eqgraph numba reducing caller>", namespace)
    return namespace["run"]


def supported(op, node) -> bool:
    return kernel_source(op, node) is not None


__all__ = ["kernel_source", "layout", "NotThisCall", "reducing_kernel", "supported"]
