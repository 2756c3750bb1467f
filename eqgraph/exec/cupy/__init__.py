"""The CuPy back end: fused nodes as CuPy elementwise kernels."""
