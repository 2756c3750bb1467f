"""A base for the small user Ops the tests define: one input, an output of its type."""

import eqgraph.tensor as et
from eqgraph.terms import Apply, Op


class SameTypeOp(Op):
    """``make_node`` for a one-input op whose output has the input's type; subclasses
    write ``perform`` (and ``grad``, ``destroy_map``... as the test needs)."""

    __props__ = ()

    def make_node(self, x):
        x = et.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])
