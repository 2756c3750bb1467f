"""CuPy kernels for ``Composite`` nodes: the scalar graph as one ``cupy.ElementwiseKernel``.

The source is plain text (``elementwise_source``), so it is built and tested on machines
without a GPU; ``cupy_kernel`` compiles it (CuPy caches compiled kernels on disk itself).
Only float32, float64 and bool values are supported, with each step computed in its own
dtype; anything else runs ``Composite.perform`` on the GPU, one array call per step.
"""

from __future__ import annotations

from eqgraph.tensor.elemwise import SCALAR_OPS, Cast
from eqgraph.tensor.scalar_ops import No

C_TYPES = {"float64": "double", "float32": "float", "bool": "bool"}

#: step name -> C expression over its arguments (CUDA's math library): each elementwise op's ``c`` form
C_FORMS = {name: s.c for name, s in SCALAR_OPS.items() if isinstance(s.c, str)}
#: elementwise ops with no C form, and why: a group with one of them runs step by step on the GPU
NO_FORM = {name: s.c.reason for name, s in SCALAR_OPS.items() if isinstance(s.c, No)}


def elementwise_source(op, node) -> tuple | None:
    """``(in_params, out_params, operation, name)`` for ``cupy.ElementwiseKernel``, or None
    where a dtype or a step is not supported."""
    dtypes = op.value_dtypes(node)
    if any(d not in C_TYPES for d in dtypes):
        return None
    names = [f"i{k}" for k in range(op.nin)]
    body = []
    for j, (step_op, args) in enumerate(op.steps):
        ctype = C_TYPES[dtypes[op.nin + j]]
        if isinstance(step_op, Cast):
            expr = f"({ctype})({names[args[0]]})"
        elif step_op.name in C_FORMS:
            expr = C_FORMS[step_op.name].format(*[names[a] for a in args])
        else:
            return None
        body.append(f"{ctype} t{j} = ({ctype}){expr};")
        names.append(f"t{j}")
    body += [f"o{k} = {names[index]};" for k, index in enumerate(op.outs)]
    in_params = ", ".join(f"{dtypes[k]} i{k}" for k in range(op.nin))
    out_params = ", ".join(f"{dtypes[index]} o{k}" for k, index in enumerate(op.outs))
    name = "eqgraph_composite_" + "_".join(
        (f"cast_{s.dtype}" if isinstance(s, Cast) else s.name.rstrip("_")) for s, _ in op.steps[:6])
    return in_params, out_params, "\n".join(body), name


def cupy_kernel(op, node):
    """``run(*device arrays) -> outputs`` with one ElementwiseKernel, or None where the node
    is not supported (or CuPy is missing)."""
    source = elementwise_source(op, node)
    if source is None or not op.outputs_read_every_input():  # every output gets the full shape
        return None
    try:
        import cupy
    except ImportError:
        return None
    kernel = cupy.ElementwiseKernel(*source)
    nout = len(op.outs)
    return (lambda *inputs: [kernel(*inputs)]) if nout == 1 else (lambda *inputs: list(kernel(*inputs)))


__all__ = ["C_FORMS", "cupy_kernel", "elementwise_source"]
