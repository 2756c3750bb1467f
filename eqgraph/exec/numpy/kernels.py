"""CPU kernels for ``Composite`` nodes: the scalar graph as generated Python source.

``numpy_kernel`` writes one function per fused node, straight-line, with locals for
values and each step's NumPy function bound as a constant (``f3 = np.exp``), so a
call pays one Python call per step and nothing else.  Every step computes what the
step's ``Elemwise`` thunk computes (same NumPy function, same cast to the step's dtype),
so results are bit-for-bit those of unfused execution.

On large arrays the same steps run block by block (``BLOCK`` elements at a time,
each step writing into a preallocated block with ``out=``): the intermediates stay in
cache instead of each making a full pass over memory, and nothing is allocated per
step (functions that are not ufuncs, like ``sigmoid``, make a block-sized temporary).
That path is taken when every input is either the full broadcast shape or a
single element, which covers chains over one array and its constants; other
broadcasting (an outer product, say) runs the straight-line function on whole arrays.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from eqgraph.exec.source import define
from eqgraph.tensor.elemwise import Cast

#: elements per block: 4096 float64 are 32 KiB, so a few live blocks stay in L1/L2
BLOCK = 4096
#: below this many output elements the whole-array function runs (blocks would only add calls)
BLOCKED_FROM = 4 * BLOCK


def _second(x, y):
    """``second(x, y)``: a copy of ``y`` broadcast against ``x``, as the scalar op's NumPy form
    (``broadcast_to`` then a copy), without ``np.broadcast_shapes`` and ``broadcast_to``'s
    Python layers, which dominate a call on a few elements."""
    out = np.empty(np.broadcast(x, y).shape, dtype=y.dtype)
    np.copyto(out, y)
    return out


#: steps whose NumPy form in a kernel is a faster equivalent of the op's own: x*x as a ufunc
#: (so it can write into a block), second without the broadcasting helpers
NUMPY_FORMS = {"sqr": np.square, "second": _second}


def numpy_kernel(op, node, reusable=()):
    """``run(*input arrays) -> list of output arrays`` for ``node`` (a Composite's Apply).

    Outputs listed in ``reusable`` (intermediates no call hands out) keep their memory from
    one call to the next on the blocked path: fresh large arrays cost page faults on every
    call (``x / sqrt(mean(x**2))`` on 1e5 elements spent most of its time there).  Each
    ``run`` has buffers of its own, so programs (one per thread) never share them."""
    _, inner = op.inner([v.type for v in node.inputs])
    steps = []   # (function or None for a cast, argument indices, dtype, exact)
    for (step_op, args), inner_node in zip(op.steps, inner):
        dtype = inner_node.outputs[0].type.numpy_dtype
        if isinstance(step_op, Cast):
            steps.append((None, args, dtype, False))
            continue
        fn = NUMPY_FORMS.get(step_op.name) or step_op.scalar.impl(np)
        in_dtypes = [v.type.numpy_dtype for v in inner_node.inputs]
        steps.append((fn, args, dtype, exact_ufunc(fn, tuple(in_dtypes), dtype) and inner_node.outputs[0].ndim > 0))
    # output -> the input it may be written into, where its step is a ufunc that can take out=
    overwrites = {k: j for k, j in op.inplace if steps[op.outs[k] - op.nin][3]}
    whole = _compile(_whole_source(op.nin, steps, op.outs, {op.outs[k] - op.nin: j for k, j in overwrites.items()}),
                     steps)
    ndim = node.outputs[0].ndim
    if ndim == 0:
        return whole
    blocked = []  # compiled on first use: most nodes never see a large array
    depends = op.inputs_read()
    out_dtypes = [steps[o - op.nin][2] for o in op.outs]
    kept = [None] * len(op.outs)              # last call's flat arrays of reusable outputs
    reuse = [k in set(reusable) for k in range(len(op.outs))]

    def run(*inputs):
        n = max([x.size for x in inputs])  # a list: a generator costs more on a few inputs
        if n < BLOCKED_FROM:
            return whole(*inputs)
        shape = np.broadcast_shapes(*[x.shape for x in inputs])
        full = [x.shape == shape for x in inputs]
        if math.prod(shape) != n or not all(full[k] or inputs[k].size == 1 for k in range(len(inputs))) \
                or not all(any(full[k] for k in ks) for ks in depends):
            return whole(*inputs)
        flat = [np.ascontiguousarray(x).reshape(-1) if f else np.broadcast_to(x.reshape(1), (n,))
                for x, f in zip(inputs, full)]
        if not blocked:
            source, buffers = _blocked_source(op.nin, steps, op.outs)
            blocked.append(_compile(source, steps, {f"B{k}": d for k, d in enumerate(buffers)}))
        outs = []
        for k, dtype in enumerate(out_dtypes):
            j = overwrites.get(k)
            if j is not None and full[j] and inputs[j].flags.writeable and flat[j].dtype == dtype:
                outs.append(flat[j])  # in place: nothing reads input j after this output's step
                continue
            old = kept[k]
            out = old if old is not None and old.shape[0] == n else np.empty(n, dtype=dtype)
            if reuse[k]:
                kept[k] = out
            outs.append(out)
        blocked[0](n, *flat, *outs)
        return [o.reshape(shape) for o in outs]

    run.whole = whole
    return run


@functools.lru_cache(maxsize=4096)
def exact_ufunc(fn, in_dtypes: tuple, dtype) -> bool:
    """Whether ``fn`` is a ufunc whose own loop for ``in_dtypes`` gives ``dtype`` (then
    ``out=`` a block of that dtype computes exactly what a fresh result would)."""
    if not isinstance(fn, np.ufunc):
        return False
    with np.errstate(all="ignore"):
        probe = fn(*[np.ones(1, dtype=d) for d in in_dtypes])
    return isinstance(probe, np.ndarray) and probe.dtype == dtype


def _name(nin: int, index: int) -> str:
    return f"i{index}" if index < nin else f"t{index - nin}"


def _whole_source(nin, steps, outs, inplace=None) -> str:
    """Each intermediate is deleted after its last use: kept alive to the end, every step
    would get fresh memory from the system (page faults on each call), where freed
    memory is otherwise reused (a long chain on large arrays runs several times slower).  ``inplace``:
    {step: input} for output steps that write into that input where it has their shape."""
    params = ", ".join(f"i{k}" for k in range(nin))
    lines = [f"def kernel({params}):"]
    last_use = {a: j for j, (_, args, _, _) in enumerate(steps) for a in args}
    for j, (fn, args, _, exact) in enumerate(steps):
        call = ", ".join(_name(nin, a) for a in args)
        if j in (inplace or {}):
            target = f"i{inplace[j]}"
            lines.append(f"    t{j} = f{j}({call}, out={target}) if {fits(target, [f'i{k}' for k in range(nin)])} "
                         f"else f{j}({call})")
            continue
        lines += ["    " + line for line in step_source(f"t{j}", j, call, fn is None, exact)]
        dead = sorted({a for a in args if a >= nin and last_use[a] == j and a not in outs})
        if dead:
            lines.append(f"    del {', '.join(_name(nin, a) for a in dead)}")
    lines.append(f"    return [{', '.join(_name(nin, o) for o in outs)}]")
    return "\n".join(lines) + "\n"


def fits(target: str, inputs: list[str]) -> str:
    """The run-time test that an elementwise result over ``inputs`` may be written into
    ``target`` (one of them): it is writeable, and no input broadcasts it to a larger shape."""
    others = [f"({x}.shape == {target}.shape or ({x}.size == 1 and {x}.ndim <= {target}.ndim))"
              for x in inputs if x != target]
    return " and ".join([f"{target}.flags.writeable", *others])


def step_source(target: str, j: int, call: str, is_cast: bool, exact: bool) -> list[str]:
    """The lines computing step ``j`` into ``target``, what an ``Elemwise`` (or ``Cast``)
    thunk computes: ``f{j}`` applied to ``call``, the result as an array of dtype ``d{j}``
    (a cast always copies).  ``exact``: the function is known to return that already."""
    if is_cast:
        return [f"{target} = array({call}, dtype=d{j})"]
    lines = [f"{target} = f{j}({call})"]
    if not exact:
        lines.append(f"if type({target}) is not ndarray or {target}.dtype != d{j}: "
                     f"{target} = asarray({target}, dtype=d{j})")
    return lines


def _blocked_source(nin, steps, outs) -> str:
    """Inputs arrive flat (length n), and so do the outputs' arrays, written in place; the
    other steps share a few block buffers, each reused once the value in it is dead (one
    buffer per step would put hundreds of blocks, more than the cache, in play)."""
    params = ", ".join(f"i{k}" for k in range(nin))
    last_use = {a: j for j, (_, args, _, _) in enumerate(steps) for a in args}
    free: dict = {}        # dtype -> buffer numbers free for reuse
    buffers: list = []     # dtype of each buffer
    buffer_of: dict = {}   # step -> its buffer number (steps that are outputs write into them)
    for j, (_, args, dtype, _) in enumerate(steps):
        if nin + j not in outs:
            pool = free.setdefault(dtype, [])
            buffer_of[j] = pool.pop() if pool else len(buffers)
            if buffer_of[j] == len(buffers):
                buffers.append(dtype)
        # taken after choosing j's buffer, so that a step never writes over its own inputs
        for a in set(args):
            if a - nin in buffer_of and last_use[a] == j:
                free.setdefault(steps[a - nin][2], []).append(buffer_of[a - nin])
    target = {j: f"b{buffer_of[j]}[:e - s]" if j in buffer_of else f"o{j}[s:e]" for j in range(len(steps))}
    out_params = ", ".join(f"o{o - nin}" for o in outs)
    lines = [f"def kernel(n, {params}, {out_params}):"]
    lines += [f"    b{k} = empty(min(n, BLOCK), dtype=B{k})" for k in range(len(buffers))]
    lines.append("    for s in range(0, n, BLOCK):")
    lines.append("        e = min(s + BLOCK, n)")
    for k in range(nin):
        lines.append(f"        a{k} = i{k}[s:e]")
    for j, (fn, args, _, exact) in enumerate(steps):
        call = ", ".join(f"a{a}" if a < nin else f"u{a - nin}" for a in args)
        lines.append(f"        u{j} = {target[j]}")
        if fn is None:  # a cast: assignment converts as np.array(x, dtype) does
            lines.append(f"        u{j}[...] = {call}")
        elif exact:
            lines.append(f"        f{j}({call}, out=u{j})")
        else:  # not a ufunc, or one whose own loop gives another dtype: convert on assignment
            lines.append(f"        u{j}[...] = f{j}({call})")
    return "\n".join(lines) + "\n", buffers


def _compile(source: str, steps, constants=None):
    namespace = {"array": np.array, "asarray": np.asarray, "ndarray": np.ndarray, "empty": np.empty,
                 "BLOCK": BLOCK, **(constants or {})}
    for j, (fn, _, dtype, _) in enumerate(steps):
        namespace[f"f{j}"], namespace[f"d{j}"] = fn, dtype
    define(source, "<eqgraph composite kernel>", namespace)
    kernel = namespace["kernel"]
    kernel.source = source
    return kernel


__all__ = ["BLOCK", "exact_ufunc", "fits", "numpy_kernel", "step_source"]
