"""CuPy kernels for ``Composite`` nodes: the scalar graph as one ``cupy.ElementwiseKernel``.

The source is plain text (``elementwise_source``), so it is built and tested on machines
without a GPU; ``cupy_kernel`` compiles it (CuPy caches compiled kernels on disk itself).
Only float32, float64 and bool values are supported, with each step computed in its own
dtype; anything else runs ``Composite.perform`` on the GPU, one array call per step.
"""

from __future__ import annotations

from eqgraph.tensor.elemwise import Cast

C_TYPES = {"float64": "double", "float32": "float", "bool": "bool"}

_MAX = "(({0} >= {1} || {0} != {0}) ? {0} : {1})"   # np.maximum: NaN wins
_MIN = "(({0} <= {1} || {0} != {0}) ? {0} : {1})"

# fmt: off
#: step name -> C expression over its arguments (CUDA's math library)
C_FORMS = {
    "add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})", "true_div": "({0} / {1})",
    "neg": "(-{0})", "abs": "fabs({0})", "sqr": "({0} * {0})", "pow": "pow({0}, {1})",
    "maximum": _MAX, "minimum": _MIN, "clip": "(({0} < {1}) ? {1} : (({0} > {2}) ? {2} : {0}))",
    "sign": "(({0} > 0) ? 1 : (({0} < 0) ? -1 : {0}))", "second": "{1}", "switch": "({0} ? {1} : {2})",
    "exp": "exp({0})", "expm1": "expm1({0})", "exp2": "exp2({0})", "log": "log({0})", "log2": "log2({0})",
    "log10": "log10({0})", "log1p": "log1p({0})", "sqrt": "sqrt({0})", "erf": "erf({0})",
    "sigmoid": "(({0}) >= 0 ? 1 / (1 + exp(-{0})) : exp({0}) / (1 + exp({0})))", "softplus": "(log1p(exp(-fabs({0}))) + (({0} > 0) ? {0} : 0))",
    "sin": "sin({0})", "cos": "cos({0})", "tan": "tan({0})", "arcsin": "asin({0})", "arccos": "acos({0})",
    "arctan": "atan({0})", "sinh": "sinh({0})", "cosh": "cosh({0})", "tanh": "tanh({0})",
    "floor": "floor({0})", "ceil": "ceil({0})",
    "eq": "({0} == {1})", "neq": "({0} != {1})", "lt": "({0} < {1})", "le": "({0} <= {1})",
    "gt": "({0} > {1})", "ge": "({0} >= {1})", "and_": "({0} && {1})", "or_": "({0} || {1})",
    "xor": "({0} != {1})", "invert": "(!{0})", "isnan": "isnan({0})", "isinf": "isinf({0})",
}
# fmt: on


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
