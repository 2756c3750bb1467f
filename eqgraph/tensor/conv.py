"""Convolution of signals and images: `Convolve` (``conv1d``, ``conv2d``), as ``np.convolve`` and
``scipy.signal.convolve2d`` compute it (the kernel is flipped), over the last one or two axes.

Leading axes are batch axes and broadcast, as in NumPy's ``matmul``.  ``mode`` is ``"full"``
(every overlap), ``"valid"`` (the kernel inside the input) or ``"same"`` (``full`` cropped to the
input's size, centred as SciPy centres it; ``np.convolve`` gives a kernel longer than the input
``len(kernel)`` elements instead).  The gradients are convolutions again
(``eqgraph/grad/vjps_everyday.py``).
"""

from __future__ import annotations

import numpy as np

from eqgraph.tensor.basic import as_tensor_variable
from eqgraph.tensor.elemwise import broadcast_static_shapes
from eqgraph.tensor.shape import broadcast_shape_vars, int64_const
from eqgraph.tensor.type import TensorType
from eqgraph.terms.basic import Apply
from eqgraph.terms.op import Op
from eqgraph.xp import array_namespace, as_output

MODES = ("full", "valid", "same")


def output_size(mode, n, k):
    """The output's size along one convolved axis, for an input of ``n`` and a kernel of ``k``
    (ints, or scalar variables)."""
    if mode == "full":
        return n + k - 1
    return n - k + 1 if mode == "valid" else n


def crop_start(mode, k):
    """Where ``mode``'s output starts inside the ``full`` output, along one axis."""
    if mode == "full":
        return 0
    return k - 1 if mode == "valid" else (k - 1) // 2


class Convolve(Op):
    """The convolution of ``x`` with ``kernel`` over their last ``core`` (1 or 2) axes."""

    __props__ = ("core", "mode")

    def __init__(self, core: int, mode: str = "full"):
        if core not in (1, 2):
            raise ValueError(f"Convolve: core must be 1 or 2 axes, not {core}")
        if mode not in MODES:
            raise ValueError(f"Convolve: mode must be one of {MODES}, not {mode!r}")
        self.core, self.mode = int(core), mode

    def __str__(self):
        return f"Conv{self.core}d{{{self.mode}}}"

    def make_node(self, x, kernel):
        x, kernel = as_tensor_variable(x), as_tensor_variable(kernel)
        for v, what in ((x, "input"), (kernel, "kernel")):
            if v.ndim < self.core:
                raise TypeError(f"{self}: the {what} {v} needs at least {self.core} dimensions, has {v.ndim}")
        if "bool" in (x.dtype, kernel.dtype):
            raise TypeError(f"{self}: boolean tensors are not convolved ({x}: {x.dtype}, {kernel}: {kernel.dtype})")
        core_x, core_k = x.type.shape[-self.core:], kernel.type.shape[-self.core:]
        if self.mode == "valid" and any(n is not None and k is not None and k > n for n, k in zip(core_x, core_k)):
            raise ValueError(f"{self}: the kernel {kernel} {kernel.type.shape} is larger than the input {x} "
                             f"{x.type.shape}; 'valid' needs it to fit inside")
        batch_x, batch_k = x.type.shape[:-self.core], kernel.type.shape[:-self.core]
        n = max(len(batch_x), len(batch_k))
        batch = broadcast_static_shapes(self, [TensorType("float64", (1,) * (n - len(b)) + b)()
                                               for b in (batch_x, batch_k)]) if n else ()
        # 'same' keeps the input's length whatever the kernel's; the other modes need both
        core = tuple(n if self.mode == "same" else None if n is None or k is None else output_size(self.mode, n, k)
                     for n, k in zip(core_x, core_k))
        dtype = np.result_type(x.dtype, kernel.dtype).name
        return Apply(self, [x, kernel], [TensorType(dtype, batch + core)()])

    def perform(self, node, inputs, output_storage):
        x, kernel = inputs
        xp = array_namespace(x, kernel)
        axes = tuple(range(-self.core, 0))
        k_sizes = kernel.shape[-self.core:]
        for value, what in ((x, "input"), (kernel, "kernel")):  # as np.convolve: nothing to centre or slide
            if 0 in value.shape[-self.core:]:
                raise ValueError(f"{self}: the {what}'s shape {value.shape} is empty along a convolved axis")
        if self.mode == "valid" and any(k > n for n, k in zip(x.shape[-self.core:], k_sizes)):
            raise ValueError(f"{self}: the kernel's shape {kernel.shape} is larger than the input's {x.shape}")
        if self.mode != "valid":  # zeros around x: every overlap becomes a 'valid' position
            widths = [(0, 0)] * (x.ndim - self.core) + [(k - 1, k - 1) for k in k_sizes]
            x = xp.pad(x, widths) if hasattr(xp, "pad") else np.pad(x, widths)
        flipped = xp.flip(kernel, axis=axes)
        full = (_correlate_windows if xp is np else _correlate_shifts)(xp, x, flipped, self.core)
        if self.mode == "same":
            n_sizes = inputs[0].shape[-self.core:]
            starts = [crop_start("same", k) for k in k_sizes]
            full = full[(Ellipsis, *[slice(s, s + n) for s, n in zip(starts, n_sizes)])]
        output_storage[0][0] = as_output(xp, xp.asarray(full, copy=True), node.outputs[0].type)

    def infer_shape(self, fgraph, node, shapes):
        sx, sk = shapes
        bx, bk = tuple(sx[:-self.core]), tuple(sk[:-self.core])
        n = max(len(bx), len(bk))
        one = int64_const(1)
        bx, bk = (one,) * (n - len(bx)) + bx, (one,) * (n - len(bk)) + bk
        batch = broadcast_shape_vars([bx, bk], node.outputs[0].type.shape[:n]) if n else ()
        core = tuple(output_size(self.mode, a, b) for a, b in zip(sx[-self.core:], sk[-self.core:]))
        return [batch + core]

    def flops(self, inputs, outputs):
        return 2 * int(np.prod(outputs[0], dtype=np.int64)) * int(np.prod(inputs[1][-self.core:], dtype=np.int64))


def _correlate_windows(xp, x, kernel, core):
    """The 'valid' correlation over the last ``core`` axes: every window of ``x`` times the kernel,
    summed (NumPy: a strided view of the windows and one einsum)."""
    sizes = kernel.shape[-core:]
    windows = np.lib.stride_tricks.sliding_window_view(x, sizes, axis=tuple(range(-core, 0)))
    return xp.einsum("...ij,...j->...i" if core == 1 else "...abij,...ij->...ab", windows, kernel)


def _correlate_shifts(xp, x, kernel, core):
    """The same with only slicing, products and sums (any array-API namespace): one shifted
    slice of ``x`` per kernel element."""
    sizes = kernel.shape[-core:]
    out_sizes = [n - k + 1 for n, k in zip(x.shape[-core:], sizes)]
    total = None
    for offsets in np.ndindex(*sizes):
        piece = x[(Ellipsis, *[slice(o, o + m) for o, m in zip(offsets, out_sizes)])]
        term = piece * kernel[(Ellipsis, *offsets, *([None] * core))]
        total = term if total is None else total + term
    return total


def conv1d(x, kernel, mode="full"):
    """``np.convolve(x, kernel, mode)`` over the last axis (leading axes are batches)."""
    return Convolve(1, mode)(x, kernel)


def conv2d(x, kernel, mode="full"):
    """``scipy.signal.convolve2d(x, kernel, mode)`` over the last two axes (leading axes are batches)."""
    return Convolve(2, mode)(x, kernel)


__all__ = ["Convolve", "conv1d", "conv2d"]
