"""PyTensor (and PyMC) graphs on eqgraph: ``from_pytensor`` converts a graph, ``mode()`` is a PyTensor
mode whose linker compiles with eqgraph. PyTensor is an extra (``pip install eqgraph[pytensor]``):
importing ``eqgraph`` never imports it.
"""

from eqgraph.pytensor.convert import Converted, from_pytensor
from eqgraph.pytensor.ops import OPS, SCALAR_OPS, UnsupportedOp

__all__ = ["Converted", "OPS", "SCALAR_OPS", "UnsupportedOp", "from_pytensor"]
