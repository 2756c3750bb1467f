"""Backends: where arrays live while a compiled function runs ("numpy", "cupy"; "dask" is in
``dask/backend.py``, built by ``eqgraph.function``)."""

from __future__ import annotations

import numpy as np

from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.extract.costs import KERNEL_ELEMENT_COST, CostModel


class BackendUnavailable(RuntimeError):
    """The requested backend cannot run on this machine."""


class NumpyBackend:
    name = "numpy"

    @staticmethod
    def cost_model() -> CostModel:
        """Fused nodes run in Numba loops where Numba is installed: extraction prices that."""
        return CostModel(kernel_element_cost=KERNEL_ELEMENT_COST if numba_kernels.numba is not None else None)

    @staticmethod
    def to_device(value):
        return value

    @staticmethod
    def to_host(value):
        return value

    @staticmethod
    def is_device_array(value) -> bool:
        return False


class CupyBackend:
    """Inputs are moved to the GPU, results come back as NumPy unless inputs were CuPy."""

    name = "cupy"

    def __init__(self):
        try:
            import cupy
        except ImportError as err:
            raise BackendUnavailable(
                'backend="cupy" needs CuPy: pip install "eqgraph[gpu]" on a machine with an NVIDIA GPU'
            ) from err
        try:
            if cupy.cuda.runtime.getDeviceCount() < 1:
                raise BackendUnavailable('backend="cupy": CuPy found no GPU')
        except cupy.cuda.runtime.CUDARuntimeError as err:
            raise BackendUnavailable(f'backend="cupy": CuPy cannot reach a GPU ({err})') from err
        self.cupy = cupy

    def to_device(self, value):
        if isinstance(value, (np.ndarray, np.generic)):
            return self.cupy.asarray(value)
        return value

    def to_host(self, value):
        return value.get() if isinstance(value, self.cupy.ndarray) else value

    def is_device_array(self, value) -> bool:
        return isinstance(value, self.cupy.ndarray)


def get_backend(name):
    """The backend named ``name``, or ``name`` itself if it is a backend object
    (anything with ``name``, ``to_device``, ``to_host`` and ``is_device_array``)."""
    if not isinstance(name, str):
        return name
    if name == "numpy":
        return NumpyBackend()
    if name == "cupy":
        return CupyBackend()
    raise ValueError(f'Unknown backend {name!r}: use "numpy", "cupy" or "dask"')
