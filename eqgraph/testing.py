"""Helpers for testing graphs: ``verify_grad`` checks symbolic gradients against finite differences.

It compiles graphs, so it sits above the compiler (``eqgraph.function``); the
gradient driver in ``eqgraph/grad/`` stays below it. ``eg.verify_grad`` is this function.
"""

from __future__ import annotations

from functools import partial

import numpy as np

import eqgraph.tensor as et
from eqgraph.function import function as _function
from eqgraph.grad.driver import grad
from eqgraph.grad.types import GradientError
from eqgraph.tensor.type import TensorType

__all__ = ["verify_grad"]


def verify_grad(fun, pt, n_tests=2, rng=None, eps=None, out_type=None, abs_tol=None, rel_tol=None, mode=None,
                cast_to_output_type=False, no_debug_ref=True):
    """Check ``grad`` of ``fun`` at the points ``pt`` against central finite differences.

    A random projection of ``fun``'s output makes the cost scalar; raises
    GradientError with both values where they disagree. The arguments are PyTensor's:
    ``mode`` compiles every function here (a mode ``eqgraph.function`` takes); ``out_type``,
    when given, is the dtype ``fun``'s output must have; ``cast_to_output_type`` draws the
    projection in a float32 output's dtype rather than float64. ``no_debug_ref`` is accepted
    and has no effect: the finite differences always run the compiled function of ``mode``,
    there being no separate reference mode to choose.
    """
    rng = rng if rng is not None else np.random.default_rng()
    pt = [np.array(p, dtype="float64") if np.asarray(p).dtype.kind not in "fc" else np.array(p) for p in pt]
    inputs = [TensorType(p.dtype, (None,) * p.ndim)(f"input{i}") for i, p in enumerate(pt)]
    out = et.as_tensor_variable(fun(*inputs))
    if out_type is not None and out.dtype != np.dtype(out_type).name:
        raise TypeError(f"verify_grad: fun's output has dtype {out.dtype}, not out_type={out_type!r}")
    # finite differences are only as precise as the lowest precision on the way
    single_precision = any(p.dtype == np.float32 for p in pt) or out.dtype in ("float32", "float16")
    eps = eps if eps is not None else (1e-3 if single_precision else 1e-6)
    abs_tol = abs_tol if abs_tol is not None else (1e-2 if single_precision else 1e-4)
    rel_tol = rel_tol if rel_tol is not None else (1e-2 if single_precision else 1e-4)
    projection_dtype = out.dtype if cast_to_output_type and out.dtype == "float32" else "float64"
    function = partial(_function, mode=mode, on_unused_input="ignore")
    out_value = function(inputs, out)(*pt)
    for _ in range(n_tests):
        projection = et.constant((rng.random(np.shape(out_value)) + 0.5).astype(projection_dtype))
        cost = et.sum(out * projection)
        grads = grad(cost, inputs, disconnected_inputs="ignore")
        analytic = function(inputs, grads)(*pt)
        cost_fn = function(inputs, cost)
        for i, (p, a) in enumerate(zip(pt, analytic)):
            numeric = np.zeros(p.shape)
            flat = numeric.reshape(-1)
            for j in range(p.size):
                up, down = [q.copy() for q in pt], [q.copy() for q in pt]
                up[i].reshape(-1)[j] += eps
                down[i].reshape(-1)[j] -= eps
                flat[j] = (cost_fn(*up) - cost_fn(*down)) / (2 * eps)
            abs_err = np.abs(np.asarray(a) - numeric)
            rel_err = abs_err / np.maximum(np.abs(a) + np.abs(numeric), 1e-8)
            bad = (abs_err > abs_tol) & (rel_err > rel_tol)
            if bad.any():
                k = int(np.argmax(np.where(bad, rel_err, -1).reshape(-1)))
                raise GradientError(i, k, p.shape, np.asarray(a).reshape(-1)[k], numeric.reshape(-1)[k],
                                    abs_err.reshape(-1)[k], rel_err.reshape(-1)[k], abs_tol, rel_tol)
