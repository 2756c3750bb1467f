"""Evenly spaced samples: ``linspace``, ``logspace`` and ``geomspace`` with PyTensor's arguments.

All three are compositions of ``arange`` and elementwise ops, so the e-graph sees ordinary ops and
the gradients with respect to ``start``, ``stop`` (and ``base``) come from them.  ``num`` may be an
integer scalar variable, as in PyTensor; the samples' length is then known only at run time.  The
endpoints are written with an elementwise ``switch`` on the sample's position rather than by
indexing ``samples[-1]``, because ``switch`` computes both branches and an empty ``samples``
(``num=0``) has no last element to index.
"""

from __future__ import annotations

import numpy as np

from eqgraph.settings import config
from eqgraph.tensor.alloc import arange
from eqgraph.tensor.basic import NotScalarConstantError, as_tensor_variable, get_scalar_constant_value
from eqgraph.tensor.elemwise import ELEMWISE_OPS as E, cast
from eqgraph.tensor.dimshuffle_op import dimshuffle
from eqgraph.tensor.shape import expand_dims, shape_padleft, shape_padright
from eqgraph.tensor.type import DISCRETE_DTYPES


def _count(num, what):
    """``num`` as a 0-d int64 tensor; a known negative count is refused, as NumPy refuses it."""
    num = as_tensor_variable(num)
    if num.ndim != 0 or num.dtype not in DISCRETE_DTYPES or num.dtype == "bool":
        raise TypeError(f"{what}: num must be an integer scalar, got {num} ({num.type})")
    try:
        known = int(get_scalar_constant_value(num))
    except NotScalarConstantError:
        known = None
    if known is not None and known < 0:
        raise ValueError(f"{what}: num must be non-negative, got {known}")
    return cast(num, "int64")


def _broadcast(*tensors):
    """The tensors broadcast against each other (``second(a, b)`` is ``b`` at the common shape)."""
    tensors = [as_tensor_variable(t) for t in tensors]
    out = []
    for i, t in enumerate(tensors):
        for other in tensors[:i] + tensors[i + 1:]:
            t = E["second"](other, t)
        out.append(t)
    return out


def _move_first_axis(samples, axis, what):
    """``np.moveaxis(samples, 0, axis)``."""
    ndim = samples.ndim
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}: axis {axis} is out of bounds for samples with {ndim} dimensions")
    order = list(range(1, ndim))
    order.insert(axis % ndim, 0)
    return samples if axis % ndim == 0 else dimshuffle(samples, order)


def _positions(num, ndim):
    """``arange(num)`` on a new first axis, with ``ndim`` broadcastable axes after it."""
    return shape_padright(arange(num), ndim)


def _linspace_core(start, stop, num, endpoint):
    """The samples on a new first axis, and the step between them (NaN where there is none, as
    NumPy's: fewer than two samples with ``endpoint``, none without)."""
    delta = stop - start
    div = num - 1 if endpoint else num
    has_step = E["gt"](div, 0)
    step = E["switch"](has_step, delta / E["maximum"](div, 1), np.nan)
    i = _positions(num, delta.ndim)
    samples = i * delta / E["maximum"](div, 1) + start
    if endpoint:  # exactly stop, whatever the rounding of i * delta / div
        samples = E["switch"](E["and_"](E["eq"](i, div), has_step), stop, samples)
    return samples, step


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """PyTensor's ``linspace``: ``num`` evenly spaced samples from ``start`` to ``stop`` (excluded
    when ``endpoint`` is False), on a new axis ``axis`` when ``start``/``stop`` are arrays; with
    ``retstep`` also the step.  The samples have ``dtype`` (default ``floatX``), by a cast, as in
    PyTensor (an integer ``dtype`` truncates towards zero where NumPy floors)."""
    num = _count(num, "linspace")
    start, stop = _broadcast(start, stop)
    samples, step = _linspace_core(start, stop, num, endpoint)
    samples = cast(_move_first_axis(samples, axis, "linspace"), dtype or config.floatX)
    return (samples, step) if retstep else samples


def _with_base(start, stop, base, axis):
    """``start``, ``stop`` and ``base`` broadcast as NumPy's ``logspace`` does: an array ``base``
    gets the samples' axis too."""
    start, stop, base = (as_tensor_variable(v) for v in (start, stop, base))
    if base.ndim == 0:
        return start, stop, base
    ndim = max(start.ndim, stop.ndim, base.ndim)
    start, stop, base = (shape_padleft(v, ndim - v.ndim) for v in (start, stop, base))
    return start, stop, expand_dims(base, axis)


def logspace(start, stop, num=50, base=10.0, endpoint=True, dtype=None, axis=0):
    """PyTensor's ``logspace``: ``base ** linspace(start, stop, num, endpoint, axis=axis)``."""
    num = _count(num, "logspace")
    start, stop = _broadcast(start, stop)
    start, stop, base = _with_base(start, stop, base, axis)
    samples, _ = _linspace_core(start, stop, num, endpoint)
    samples = _move_first_axis(samples, axis, "logspace")
    return cast(E["pow"](base, samples), dtype or config.floatX)


def _refuse_a_known_zero(value, what):
    value = as_tensor_variable(value)
    known = getattr(value, "data", None)  # a constant's value; an array end is checked too
    if known is None:
        try:
            known = get_scalar_constant_value(value)
        except NotScalarConstantError:
            return
    if (np.asarray(known) == 0).any():
        raise ValueError(f"{what}: a geometric sequence cannot include zero ({value} is 0)")


def geomspace(start, stop, num=50, base=10.0, endpoint=True, dtype=None, axis=0):
    """PyTensor's ``geomspace``: ``num`` samples from ``start`` to ``stop``, each a constant multiple
    of the one before; both ends have ``start``'s sign (where ``stop``'s differs the samples
    between are NaN, as NumPy's real geomspace gives).  ``start`` and ``stop`` are written exactly
    at the ends.  A zero end known when the graph is built is refused."""
    num = _count(num, "geomspace")
    for end in (start, stop):
        _refuse_a_known_zero(end, "geomspace")
    start, stop = _broadcast(start, stop)
    start, stop, base = _with_base(start, stop, base, 0)
    sign = E["sign"](start)
    log_base = E["log"](base)
    low, high = E["log"](start * sign) / log_base, E["log"](stop * sign) / log_base
    exponents, _ = _linspace_core(low, high, num, endpoint)
    i = _positions(num, exponents.ndim - 1)
    samples = E["switch"](E["eq"](i, 0), start * sign, E["pow"](base, exponents))
    if endpoint:
        samples = E["switch"](E["and_"](E["eq"](i, num - 1), E["gt"](num, 1)), stop * sign, samples)
    samples = _move_first_axis(samples * sign, axis, "geomspace")
    return cast(samples, dtype or config.floatX)


__all__ = ["geomspace", "linspace", "logspace"]
