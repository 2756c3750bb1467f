"""The finite-difference gradient of a real cost of a complex matrix, in PyTensor's convention
for such gradients: dC/d(re z) + i dC/d(im z), each by central differences."""

import numpy as np


def complex_numeric_gradient(cost, z: np.ndarray, step: float = 1e-6) -> np.ndarray:
    gradient = np.zeros_like(z)
    for i in np.ndindex(z.shape):
        h = np.zeros(z.shape)
        h[i] = step
        gradient[i] = (cost(z + h) - cost(z - h) + 1j * (cost(z + 1j * h) - cost(z - 1j * h))) / (2 * step)
    return gradient
