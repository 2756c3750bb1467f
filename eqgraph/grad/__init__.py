"""Gradients: a reverse-mode driver over a table of per-op vector-Jacobian products."""

from eqgraph.grad.driver import Lop as Lop, Rop as Rop, grad as grad, hessian as hessian
from eqgraph.grad.driver import hessian_vector_product as hessian_vector_product, jacobian as jacobian
from eqgraph.grad.types import (DisconnectedInputError as DisconnectedInputError,
                                GradientError as GradientError, NullTypeGradError as NullTypeGradError)
from eqgraph.tensor.grad_blocker import disconnected_grad as disconnected_grad, zero_grad as zero_grad
from eqgraph.tensor.grad_blocker import grad_clip as grad_clip, grad_scale as grad_scale
from eqgraph.terms.null_type import (DisconnectedType as DisconnectedType, NullType as NullType,
                                     grad_not_implemented as grad_not_implemented,
                                     grad_undefined as grad_undefined)

__all__ = [
    "grad", "Lop", "Rop", "jacobian", "hessian", "hessian_vector_product",
    "GradientError", "DisconnectedInputError", "DisconnectedType", "NullType", "NullTypeGradError",
    "disconnected_grad", "grad_not_implemented", "grad_undefined", "zero_grad",
    "grad_clip", "grad_scale",
]

