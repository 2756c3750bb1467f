"""PyTensor (and PyMC) graphs on eqgraph: ``from_pytensor`` converts a graph, ``from_pymc`` a PyMC
model's log-density and gradient, and ``mode()`` is a PyTensor mode that compiles with eqgraph.

PyTensor is an extra (``pip install eqgraph[pytensor]``): importing ``eqgraph`` never imports it,
and importing this package does not import PyMC.
"""

from eqgraph.pytensor.convert import Converted, from_pytensor
from eqgraph.pytensor.mode import EqgraphLinker, mode
from eqgraph.pytensor.ops import OPS, SCALAR_OPS, UnsupportedOp

__all__ = ["OPS", "SCALAR_OPS", "Converted", "EqgraphLinker", "UnsupportedOp", "from_pymc", "from_pytensor",
           "mode"]


def from_pymc(model, jacobian: bool = True):
    """See ``eqgraph.pytensor.pymc.from_pymc`` (imported on first use: PyMC is slow to import)."""
    from eqgraph.pytensor.pymc import from_pymc as convert

    return convert(model, jacobian)
