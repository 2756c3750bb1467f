"""Reverse-mode differentiation: ``grad``, ``Lop``, ``Rop``, ``jacobian``, ``hessian``.

The driver walks the graph once in reverse topological order, sums the
cotangents of variables with several clients, and un-broadcasts in one place.
Per-op knowledge lives in ``vjps.py`` (built-in ops) or on the op itself
(``L_op``/``grad`` for user ops).  ``verify_grad``, which compiles
graphs, sits above the compiler in ``eqgraph/testing.py``.
"""

from __future__ import annotations

import warnings

import eqgraph.tensor as et
from eqgraph.grad.loop import JacobianRows
from eqgraph.grad import vjps, vjps_everyday, vjps_linalg, vjps_special  # noqa: F401 (the last three add table entries)
from eqgraph.grad.types import DisconnectedInputError, NullTypeGradError
from eqgraph.tensor.type import COMPLEX_DTYPES, DISCRETE_DTYPES, TensorType
from eqgraph.terms.basic import Variable
from eqgraph.terms.graph import applys_between, clone_replace, toposort
from eqgraph.terms.null_type import DisconnectedType, NullType, disconnected
from eqgraph.terms.op import Op


def _is(var, type_class) -> bool:
    return isinstance(var, Variable) and isinstance(var.type, type_class)


def _float_dtype(var) -> str:
    return var.dtype if var.dtype in ("float16", "float32", "float64", "complex64", "complex128") else "float64"


def grad(cost, wrt, consider_constant=None, disconnected_inputs="raise", add_names=True, known_grads=None,
         return_disconnected="zero", null_gradients="raise"):
    """Symbolic gradient of the scalar ``cost`` with respect to ``wrt`` (a variable or a list).

    ``add_names``: name each gradient ``(d<cost>/d<wrt>)`` where both are named (PyTensor's names);
    ``known_grads`` ({variable: its cotangent}) starts the walk elsewhere (``cost`` may be None); a
    cotangent given for ``cost`` replaces its ones, and a DisconnectedType one means none;
    ``consider_constant`` lists variables gradients do not flow through;
    ``disconnected_inputs``: "raise", "warn" or "ignore" when ``cost`` does not depend on an input;
    ``return_disconnected``: "zero", "none" or "disconnected" for such inputs;
    ``null_gradients``: "raise" or "return" for undefined (NullType) gradients.
    """
    if disconnected_inputs not in ("raise", "warn", "ignore"):
        raise ValueError(f'disconnected_inputs must be "raise", "warn" or "ignore", not {disconnected_inputs!r}')
    if return_disconnected not in ("zero", "none", "disconnected"):
        raise ValueError(f'return_disconnected must be "zero", "none" or "disconnected", not {return_disconnected!r}')
    single = isinstance(wrt, Variable)
    wrt_list = [wrt] if single else list(wrt)
    for w in wrt_list:
        if not isinstance(w, Variable):
            raise TypeError(f"grad: wrt must be symbolic variables, got {w!r}")
    starts: dict = {}
    if cost is not None:
        if _is(cost, NullType):
            raise ValueError(f"grad: the cost is itself an undefined gradient: {cost.type.why_null}")
        cost = et.as_tensor_variable(cost)
        if cost.dtype in COMPLEX_DTYPES:
            raise TypeError(f"grad: the cost {cost} is complex ({cost.dtype}); a gradient is defined for a real "
                            "cost: differentiate et.real(cost), et.imag(cost) or et.abs(cost)")
        if cost.ndim != 0:
            raise TypeError(f"Cost must be a scalar: grad got {cost} with {cost.ndim} dimensions "
                            "(sum it, or give known_grads)")
        starts[cost] = [et.ones_like(cost, dtype=_float_dtype(cost))]
    for var, g in (known_grads or {}).items():
        starts[var] = [] if _is(g, DisconnectedType) else [g if isinstance(g, Variable) else et.as_tensor_variable(g)]
    if not starts:
        raise ValueError("grad needs a cost or known_grads")

    totals = _backward(list(starts), starts, wrt_list, set(consider_constant or ()))
    results = [_result(w, totals.get(w), disconnected_inputs, return_disconnected, null_gradients)
               for w in wrt_list]
    if add_names and cost is not None and cost.name is not None:
        for w, g in zip(wrt_list, results):
            if isinstance(g, Variable) and g.name is None and w.name is not None and not _is(g, DisconnectedType):
                g.name = f"(d{cost.name}/d{w.name})"
    return results[0] if single else results


def _backward(outputs, starts, wrt_list, blocked) -> dict:
    """The summed cotangent of each variable on the way from ``starts`` to ``wrt_list``.

    A ``blocked`` (consider_constant) variable stops the walk into its owner, as in PyTensor:
    gradients do not flow through it, but it has its own where ``wrt`` asks for it."""
    order = toposort(outputs)
    depends = set(wrt_list)  # variables that depend on some wrt, through unblocked paths
    for node in order:
        if any(i in depends for i in node.inputs):
            depends.update(o for o in node.outputs if o not in blocked)
    contributions: dict = {v: list(gs) for v, gs in starts.items()}
    totals: dict = {}

    def total(var):
        if var not in totals:
            parts = contributions.get(var, [])
            nulls = [p for p in parts if _is(p, NullType)]
            if nulls:
                totals[var] = nulls[0]
            elif not parts:
                totals[var] = None
            else:
                g = parts[0]
                for p in parts[1:]:
                    g = g + p
                totals[var] = g
        return totals[var]

    for node in reversed(order):
        if not any(o in contributions and o not in blocked for o in node.outputs):
            continue
        if not any(i in depends for i in node.inputs):
            continue
        output_grads = [None if o in blocked else total(o) for o in node.outputs]
        wanted = [inp in depends for inp in node.inputs]
        for inp, want, g in zip(node.inputs, wanted, node_vjp(node, output_grads, wanted)):
            if want and g is not None and not _is(g, DisconnectedType):
                contributions.setdefault(inp, []).append(g)
    for w in wrt_list:
        total(w)
    return totals


def node_vjp(node, output_grads, wanted=None) -> list:
    """The cotangent of each input of ``node`` (None or DisconnectedType: no gradient).

    ``wanted`` says per input whether its cotangent is asked for (None: all are); an input
    not asked for may get None.
    """
    op, inputs = node.op, node.inputs
    live = [g is not None and not _is(g, DisconnectedType) for g in output_grads]
    pattern = op.connection_pattern(node)
    connected = [any(c and l for c, l in zip(row, live)) for row in pattern]
    if not any(live):
        return [None] * len(inputs)
    if any(_is(g, NullType) for g in output_grads):
        return _null_vjp(node, output_grads, wanted, pattern)
    discrete_outputs = all(getattr(o.type, "dtype", None) in DISCRETE_DTYPES for o in node.outputs)
    key = vjps.table_key(op)
    if discrete_outputs or key in vjps.NONDIFFERENTIABLE:
        # piecewise constant: f(x + eps) == f(x) almost everywhere
        return [et.zeros_like(x, dtype=_float_dtype(x)) if c and _is(x, TensorType) else None
                for x, c in zip(inputs, connected)]
    if any(_is_complex(v) for v in (*inputs, *node.outputs)):
        return _complex_vjp(node, output_grads, wanted, connected)
    return _matched_vjp(node, output_grads, wanted, connected)


def _null_vjp(node, output_grads, wanted, pattern) -> list:
    """An input connected (by the op's connection pattern) to an output whose gradient is
    undefined has an undefined gradient; the other inputs get theirs from the defined ones."""
    nulls = [next((g for g, c in zip(output_grads, row) if c and _is(g, NullType)), None) for row in pattern]
    defined = [disconnected() if _is(g, NullType) else g for g in output_grads]
    if all(n is not None or not any(row) for n, row in zip(nulls, pattern)):
        return nulls
    rest = node_vjp(node, defined, [w and n is None for w, n in zip(wanted or [True] * len(nulls), nulls)])
    return [n if n is not None else r for n, r in zip(nulls, rest)]


def _is_complex(var) -> bool:
    return _is(var, TensorType) and var.dtype in COMPLEX_DTYPES


def _conj(g):
    return et.conj(g) if _is_complex(g) else g


def _complex_vjp(node, output_grads, wanted, connected) -> list:
    """The cotangents of a node that holds complex values, in PyTensor's convention for a real
    cost C: a complex z's is dC/d(re z) + i dC/d(im z), which for a holomorphic f is
    ``g * conj(f'(z))``: the real VJP ``g * f'(z)`` between conjugates. A real input gets the
    real part of what it would get as a complex one."""
    rule = vjps.complex_rule(node.op)
    if rule is None:
        described = ", ".join(f"{i} ({i.type})" for i in node.inputs)
        raise NotImplementedError(
            f"{node.op} has no gradient through complex values (inputs: {described}): the gradient of a real "
            "cost is defined here through the holomorphic elementwise ops, linear ops, matmul, inv, det and "
            "solve, and through real, imag, abs, angle, conj, complex and complex_from_polar")
    if rule == "holomorphic":
        output_grads = [_conj(g) for g in output_grads]
    cotangents = _matched_vjp(node, output_grads, wanted, connected)
    if rule == "holomorphic":
        cotangents = [_conj(c) for c in cotangents]
    return [et.real(c) if _is_complex(c) and not _is_complex(x) and _is(x, TensorType) else c
            for x, c in zip(node.inputs, cotangents)]


def _matched_vjp(node, output_grads, wanted, connected) -> list:
    """The cotangents of ``node`` by its VJP: the table's, else the op's own."""
    op, inputs = node.op, node.inputs
    found = vjps.match(node, wanted)
    if found is not None:
        rule, term_inputs, props = found
        if rule.all_outputs:
            g = [None if _is(o, DisconnectedType) else o for o in output_grads]
            cotangents = rule(g, list(node.outputs), term_inputs, props)
        else:
            cotangents = rule(output_grads[0], node.outputs[0], term_inputs, props)
        if rule.broadcasts:
            cotangents = [unbroadcast(c, x, [i for i in inputs if i is not x]) for c, x in zip(cotangents, inputs)]
    else:
        cotangents = _op_grad(op, node, output_grads)
    out = []
    for x, c, is_connected in zip(inputs, cotangents, connected):
        if not is_connected or c is None:
            out.append(disconnected())
        elif _is(c, TensorType) and c.dtype in DISCRETE_DTYPES:
            out.append(_with_static_shape(et.cast(c, "float64"), x))  # gradients never have integer dtypes
        else:
            out.append(_with_static_shape(c, x))
    return out


def _with_static_shape(c, x):
    """``c`` with the static sizes of ``x``, whose cotangent it is (so of its shape at run time).

    A VJP's arithmetic can lose a size that ``x`` has: the cotangent of a (1,)-vector ``a`` in
    ``a @ b`` is ``g * b``, as long as ``b``, of unknown length. The VJP of the op that made
    ``a`` (a DimShuffle that added that axis) must see the 1 to drop the axis.
    """
    if not (_is(c, TensorType) and _is(x, TensorType)) or c.ndim != x.ndim:
        return c
    if any(s is not None and k is not None and s != k for s, k in zip(c.type.shape, x.type.shape)):
        return c  # a static size that disagrees is the VJP's to explain, not to hide here
    return et.specify_shape(c, x.type.shape)


def _op_grad(op, node, output_grads) -> list:
    """A user op's own gradient (``L_op``, or ``grad``)."""
    grads = [g if g is not None else disconnected() for g in output_grads]
    uses_default = type(op).L_op is Op.L_op and type(op).grad is Op.grad
    if uses_default:
        raise NotImplementedError(
            f"{op} has no gradient: define grad(inputs, output_grads) or L_op on {type(op).__name__}, "
            "or add an entry to eqgraph/grad/vjps.py")
    result = op.L_op(list(node.inputs), list(node.outputs), grads)
    if len(result) != len(node.inputs):
        raise ValueError(f"{op}.grad returned {len(result)} gradients for {len(node.inputs)} inputs")
    return list(result)


def unbroadcast(g, x, others=()):
    """``g`` summed back to the shape of ``x`` (the inverse of broadcasting ``x`` into ``g``).

    ``others`` are the op's other inputs: on an axis where all of them have static
    size 1, ``x`` set the output's size and was not broadcast.
    """
    if not (_is(g, TensorType) and _is(x, TensorType)):
        return g
    if g.ndim > x.ndim:
        g = et.sum(g, axis=tuple(range(g.ndim - x.ndim)))
    static_sum, unknown = [], False
    for axis, (size, out) in enumerate(zip(x.type.shape, g.type.shape)):
        if size == 1 and out != 1:
            static_sum.append(axis)
        elif size is None and out != 1 and not all(
                getattr(o.type, "shape", (1,) * x.ndim)[axis] == 1 for o in others if o.ndim == x.ndim):
            unknown = True  # x may have size 1 at run time while the output does not
    if unknown:
        return et.sum_to_shape(g, x)  # decided at run time
    return et.sum(g, axis=tuple(static_sum), keepdims=True) if static_sum else g


def _result(w, g, disconnected_inputs, return_disconnected, null_gradients):
    if g is None:
        message = (f"grad was asked for the gradient with respect to {w}, which the cost does not depend "
                   "on (or reaches only through integer or constant paths)")
        if disconnected_inputs == "raise":
            raise DisconnectedInputError(message + '; pass disconnected_inputs="ignore" or "warn" to allow it')
        if disconnected_inputs == "warn":
            warnings.warn(message, stacklevel=3)
        if return_disconnected == "none":
            return None
        if return_disconnected == "disconnected":
            return disconnected()
        return et.zeros_like(w, dtype=_float_dtype(w)) if _is(w, TensorType) else None
    if _is(g, NullType):
        if null_gradients == "raise":
            raise NullTypeGradError(f"The gradient with respect to {w} is undefined: {g.type.why_null}")
        return g
    if _is(w, TensorType):
        dtype = _float_dtype(w)
        if g.dtype != dtype:
            g = et.cast(g, dtype)
        if g.type.shape != w.type.shape:
            g = unbroadcast(g, w) if g.ndim >= w.ndim else g
    return g


# -- other products ---------------------------------------------------------------------------------
def Lop(f, wrt, eval_points, consider_constant=None, disconnected_inputs="raise"):
    """``eval_points`` times the Jacobian of ``f`` (the vector-Jacobian product)."""
    fs = [f] if isinstance(f, Variable) else list(f)
    points = [eval_points] if isinstance(eval_points, Variable) or not isinstance(eval_points, (list, tuple)) \
        else list(eval_points)
    known = {v: et.as_tensor_variable(p) for v, p in zip(fs, points)}
    return grad(None, wrt, consider_constant=consider_constant, known_grads=known,
                disconnected_inputs=disconnected_inputs)


def Rop(f, wrt, eval_points, use_op_pushforward=None):
    """The Jacobian of ``f`` times ``eval_points`` (the Jacobian-vector product); a list of them
    where ``f`` is a list.

    When every op between ``wrt`` and ``f`` defines ``R_op``, those are
    chained forward.  Otherwise it is built as a double L-op: with ``u`` like
    ``f``, ``J v = d(J^T u)/du ^T v``; the result does not depend on ``u``, which
    is then replaced by zeros. ``use_op_pushforward`` (PyTensor's): False always builds the
    double L-op; True or None chain the ops' ``R_op`` where every op has one (eqgraph's own ops
    have their L-ops only, so through them it is the double L-op: the same product).
    """
    if isinstance(f, (list, tuple)):
        return type(f)(Rop(one, wrt, eval_points, use_op_pushforward) for one in f)
    single = isinstance(wrt, Variable)
    wrt_list = [wrt] if single else list(wrt)
    points = [eval_points] if single else list(eval_points)
    points = _checked_points(wrt_list, points)
    f = et.as_tensor_variable(f)
    if use_op_pushforward is not False:
        forward = _forward_rop(f, wrt_list, points)
        if forward is not None:
            return forward
    u = TensorType(_float_dtype(f), f.type.shape)("u")
    jt_u = Lop(f, wrt_list, u, disconnected_inputs="ignore")
    terms = [Lop(g, u, v, disconnected_inputs="ignore") for g, v in zip(jt_u, points) if g is not None]
    if not terms:
        return et.zeros_like(f, dtype=u.dtype)
    result = terms[0]
    for t in terms[1:]:
        result = result + t
    return clone_replace(result, {u: et.zeros_like(f, dtype=u.dtype)})


def _checked_points(wrt_list, points) -> list:
    """The evaluation points as tensors, each of its ``wrt``'s number of dimensions."""
    if len(points) != len(wrt_list):
        raise ValueError(f"Rop: {len(wrt_list)} variables in wrt but {len(points)} eval_points")
    checked = []
    for w, p in zip(wrt_list, points):
        p = et.as_tensor_variable(p)
        if p.ndim != w.ndim:
            raise ValueError(f"Rop: the eval point {p} ({p.ndim}-d, {p.type}) must have the dimensions of "
                             f"{w} ({w.ndim}-d, {w.type})")
        checked.append(p)
    return checked


def _forward_rop(f, wrt_list, points):
    """Chain the ops' own ``R_op`` from ``wrt`` to ``f``; None if some op has none."""
    nodes = applys_between(wrt_list, [f])
    if not nodes or any(type(node.op).R_op is Op.R_op for node in nodes):
        return None
    tangents = {w: p for w, p in zip(wrt_list, points)}
    not_differentiable: dict = {}  # output -> the node whose R_op returned None for it
    for node in nodes:
        for i in node.inputs:
            if i in not_differentiable:
                _raise_not_differentiable(not_differentiable[i], i, f)
        eval_points = [tangents.get(i) for i in node.inputs]
        if all(p is None for p in eval_points):
            continue
        result = node.op.R_op(list(node.inputs), eval_points)
        for out, tangent in zip(node.outputs, [None] * len(node.outputs) if result is None else result):
            if tangent is not None:
                tangents[out] = tangent
            else:
                not_differentiable[out] = node
    if f in not_differentiable:
        _raise_not_differentiable(not_differentiable[f], f, f)
    return tangents.get(f)


def _raise_not_differentiable(node, out, f):
    raise NullTypeGradError(
        f"Rop: {node.op} is not differentiable: its R_op returned None for output {node.outputs.index(out)} "
        f"of {node.op}({', '.join(map(str, node.inputs))}); Rop of {f} needs it")


def _like_wrt(wrt, results):
    """``results`` as PyTensor returns them: one variable for one ``wrt``, else a list or a tuple
    as ``wrt`` was."""
    if isinstance(wrt, Variable):
        return results[0]
    return tuple(results) if isinstance(wrt, tuple) else list(results)


def jacobian(expression, wrt, consider_constant=None, disconnected_inputs="raise", vectorize=False):
    """The Jacobian of ``expression`` for each of ``wrt``: of shape ``expression.shape + w.shape``
    (PyTensor's), a variable, list or tuple as ``wrt`` is.

    An expression of more than one dimension is flattened, differentiated, and the rows reshaped.
    For a static length the rows are built one by one and stacked, so the e-graph sees them all;
    for a length known only at run time one row's graph is run in a loop (``JacobianRows``, see
    ``eqgraph/grad/loop.py`` for why a loop). ``vectorize=True`` (PyTensor's) instead builds one
    vector-Jacobian product and batches it over the rows of an identity matrix
    (``vectorize_graph``): the same values, from one batched graph rather than one per row.
    """
    expression = et.as_tensor_variable(expression)
    wrt_list = [wrt] if isinstance(wrt, Variable) else list(wrt)
    kwargs = {"consider_constant": consider_constant, "disconnected_inputs": disconnected_inputs}
    if expression.ndim == 0:
        return _like_wrt(wrt, grad(expression, wrt_list, **kwargs))
    jacobian_rows = _vectorized_jacobian if vectorize else _vector_jacobian
    if expression.ndim == 1:
        return _like_wrt(wrt, jacobian_rows(expression, wrt_list, kwargs))
    rows = jacobian_rows(et.flatten(expression), wrt_list, kwargs)
    sizes = et.shape_of(expression)
    return _like_wrt(wrt, [et.reshape(r, (*sizes, *et.shape_of(w)), ndim=expression.ndim + w.ndim)
                           for r, w in zip(rows, wrt_list)])


def _vector_jacobian(expression, wrt_list, kwargs) -> list:
    """The Jacobian of the vector ``expression`` for each of ``wrt_list``: one row per element."""
    n = expression.type.shape[0]
    if n is None:
        index = TensorType("int64", ())("i")
        rows = grad(expression[index], wrt_list, **kwargs)
        op = JacobianRows.build(index, rows, wrt_list)
        return op(et.shape_of(expression)[0], *op.free, return_list=True)
    if n == 0:
        return [et.zeros((0, *et.shape_of(w)), dtype=_float_dtype(w)) for w in wrt_list]
    rows = [grad(expression[i], wrt_list, **kwargs) for i in range(n)]
    return [et.stack([row[j] for row in rows]) for j in range(len(wrt_list))]


def _vectorized_jacobian(expression, wrt_list, kwargs) -> list:
    """The Jacobian of the vector ``expression``: its vector-Jacobian product for a symbolic
    cotangent, batched over the rows of the identity."""
    cotangent = TensorType(_float_dtype(expression), expression.type.shape)("row_tangent")
    single_rows = Lop(expression, wrt_list, cotangent, **kwargs)
    n = et.shape_of(expression)[0]
    rows = et.vectorize_graph(single_rows, {cotangent: et.eye(n, dtype=cotangent.dtype)})
    # a gradient that does not depend on the cotangent (a disconnected input's zeros) is not
    # batched by vectorize_graph: it is the same in every row
    return [r if r.ndim == w.ndim + 1 else et.broadcast_to(r, (n, *et.shape_of(w)))
            for r, w in zip(rows, wrt_list)]


def hessian_vector_product(cost, wrt, p, **grad_kwargs):
    """The Hessian of the scalar ``cost`` times ``p`` for each of ``wrt`` (PyTensor's), without the
    Hessian: the gradient of ``sum(grad(cost, w) * p)``. ``p`` has ``wrt``'s shapes (a list for a
    list); the result is a variable, list or tuple as ``wrt`` is."""
    wrt_list = [wrt] if isinstance(wrt, Variable) else list(wrt)
    p_list = [p] if isinstance(p, Variable) or not isinstance(p, (list, tuple)) else list(p)
    if len(p_list) != len(wrt_list):
        raise ValueError(f"hessian_vector_product: {len(wrt_list)} wrt but {len(p_list)} vectors p")
    grads = grad(cost, wrt_list, **grad_kwargs)
    inner = et.add(*[(g * v).sum() for g, v in zip(grads, p_list)]) if len(grads) > 1 else (grads[0] * p_list[0]).sum()
    return _like_wrt(wrt, grad(inner, wrt_list, **grad_kwargs))


def hessian(cost, wrt, consider_constant=None, disconnected_inputs="raise"):
    """The second derivatives of the scalar ``cost`` for each of ``wrt``: of shape
    ``w.shape + w.shape`` (a matrix for a vector ``w``), a variable, list or tuple as ``wrt`` is."""
    cost = et.as_tensor_variable(cost)
    if cost.ndim != 0:
        raise ValueError(f"hessian needs a scalar cost, got {cost} of type {cost.type}")
    wrt_list = [wrt] if isinstance(wrt, Variable) else list(wrt)
    out = []
    for w in wrt_list:
        g = grad(cost, w, consider_constant=consider_constant, disconnected_inputs=disconnected_inputs)
        out.append(jacobian(et.specify_shape(g, w.type.shape), w, consider_constant=consider_constant,
                            disconnected_inputs="ignore"))
    return _like_wrt(wrt, out)
