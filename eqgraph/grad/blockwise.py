"""Plugs the gradient driver into ``Blockwise.L_op``: a Blockwise's gradient is its core op's
VJP, which for a built-in op is in this package's table, a layer above ``eqgraph.tensor``."""

from eqgraph.grad.driver import node_vjp
from eqgraph.tensor.blockwise import Blockwise

Blockwise.core_vjp = staticmethod(node_vjp)
