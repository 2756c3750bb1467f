"""The NumPy back end: the program as one generated Python function, and the kernels of fused nodes."""
