"""PyTensor's ``cast_policy = "numpy+floatX"`` for elementwise ops (``eqgraph.config.cast_policy``).

Where PyTensor's ``upcast`` gives an op's output dtype (its ``upcast_out`` ops, integers in and
integers out: add, mul, maximum, switch's branches; and true_div), a float that NumPy would make
wider than floatX from no input that wide is floatX: int32 + float32 is float32, int64 * 2.5 is
float32 (a Python float counts as floatX), int32 / int32 is floatX. The float functions (exp,
arctan2: PyTensor's ``upgrade_to_float``) give int32 float64 under either policy. Under "custom"
NumPy's dtype stands.
"""

from __future__ import annotations

import numpy as np

from eqgraph.settings import config
from eqgraph.tensor.basic import upcast


def promoted(op) -> range | tuple:
    """The positions of ``op``'s inputs that promote together (all but polygamma's order, say)."""
    return range(op.nin) if op.scalar.promote is None else op.scalar.promote


def floatx_target(op, dtype: str, inputs) -> str | None:
    """The dtype that ``op``'s promoted ``inputs`` are cast to under "numpy+floatX", so that every
    backend computes in floatX as PyTensor's C code does; None where NumPy's ``dtype`` stands."""
    if config.cast_policy != "numpy+floatX" or np.dtype(dtype).kind != "f":
        return None
    target = upcast(*[config.floatX if _weak_float(inputs[i]) else inputs[i].dtype for i in promoted(op)])
    target = target if np.dtype(target).kind == "f" else config.floatX  # true_div of integers
    if target == dtype or not (op.name == "true_div" or _integer_output(op)):
        return None
    return target


def _weak_float(x) -> bool:
    # a Python float, which PyTensor makes a floatX constant under this policy
    return getattr(x, "weak", False) and np.dtype(x.dtype).kind == "f"


def _integer_output(op) -> bool:
    try:
        return np.dtype(op.output_dtype(["int64"] * op.nin)).kind in "iu"
    except TypeError:  # no loop for integers: not an upcasting op
        return False
