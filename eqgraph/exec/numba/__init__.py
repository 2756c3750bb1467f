"""The Numba back end: kernels of fused nodes, the whole graph as one function, and their
background compilation. Importing this package does not import Numba."""
