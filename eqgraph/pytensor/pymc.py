"""A PyMC model's log-density and its gradient as one eqgraph graph (``from_pymc``)."""

from __future__ import annotations

from pymc.pytensorf import gradient
from pytensor.tensor.math import variadic_add

from eqgraph.pytensor.convert import Converted, from_pytensor
from eqgraph.pytensor.ops import CHECK_BOUNDS


def from_pymc(model, jacobian: bool = True) -> Converted:
    """``model``'s log-density and its gradient (PyMC's ``model.logp()`` and ``model.dlogp()``,
    built once so that they share nodes), converted: the inputs are ``model.value_vars`` in order,
    the outputs ``[logp, dlogp]``. An op with no translation is reported with the model variables
    whose log-density terms use it."""
    variables = [*model.basic_RVs, *model.potentials]
    terms = model.logp(vars=variables, jacobian=jacobian, sum=False)
    logp = variadic_add(*(term.sum() for term in terms))
    dlogp = gradient(logp, model.continuous_value_vars)
    labels = {term: var.name for term, var in zip(terms, variables)}
    token = CHECK_BOUNDS.set(model.check_bounds)  # its parameter checks, kept or not as PyMC keeps them
    try:
        return from_pytensor([logp, dlogp], inputs=model.value_vars, labels=labels)
    finally:
        CHECK_BOUNDS.reset(token)
