"""Vector-Jacobian products of the special functions that a row's lambda cannot state: polygamma,
whose integer order must not become a float (as the rows' inputs do), and the three-input betainc
and its derivatives in a and b. Entries of the one table in ``vjps.py``."""

from __future__ import annotations

from eqgraph.grad.vjps import _real, entry
from eqgraph.tensor.elemwise import ELEMWISE_OPS as E
from eqgraph.tensor.special_functions import not_implemented, undefined


@entry("polygamma", 2, broadcasts=True)
def _polygamma(g, out, n, x):
    return [undefined("polygamma", 0, n, "the order n is an integer"), g * E["polygamma"](n + 1, _real(x, g))]


@entry("betainc", 3, broadcasts=True)
def _betainc(g, out, a, b, x):
    # d/dx: x^(a-1) (1-x)^(b-1) / beta(a, b), the integrand; d/da and d/db by the continued fraction's
    # derivative (betainc_da, betainc_db: exec/numba/special.py)
    density = E["exp"]((a - 1) * E["log"](x) + (b - 1) * E["log1p"](-x) - E["betaln"](a, b))
    return [g * E["betainc_da"](a, b, x), g * E["betainc_db"](a, b, x), g * density]


def _second_derivatives(name):
    def vjp(g, out, a, b, x):
        return [not_implemented(name, k, v, "the second derivatives of betainc") for k, v in enumerate((a, b, x))]
    return vjp


for _name in ("betainc_da", "betainc_db"):
    entry(_name, 3, broadcasts=True)(_second_derivatives(_name))
