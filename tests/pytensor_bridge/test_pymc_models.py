"""PyMC models from PyMC's docs and gallery: their log-density and gradient graphs converted with
``from_pytensor`` and compiled by eqgraph agree with PyTensor's own function at 20 points.

The reference is PyTensor compiled in FAST_COMPILE mode (its ops' Python implementations), the
same values as its C mode without the C compiler's wait, which a test suite cannot afford. A model
that needs an op eqgraph lacks is an expected failure naming the op, strict, so that it shows up
as a pass when the op lands.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pytensor")
pm = pytest.importorskip("pymc")

import pytensor  # noqa: E402
import pytensor.tensor as pt  # noqa: E402
from pymc_models import MODELS  # noqa: E402
from pytensor.graph.basic import Apply  # noqa: E402
from pytensor.graph.op import Op  # noqa: E402

import eqgraph as eg  # noqa: E402
from eqgraph.pytensor import from_pymc  # noqa: E402

#: the models of the default run (the rest are `slow`): one of each kind of graph
QUICK = {"eight schools (non-centered)", "radon hierarchical (pm.Data)", "logistic regression, logit_p",
         "GP marginal (ExpQuad)", "GARCH(1,1), log-density with a scan (Potential)"}
POINTS = 20


def _params() -> list:
    params = []
    for name, (build, missing) in MODELS.items():
        marks = [] if name in QUICK else [pytest.mark.slow]
        if missing:
            marks.append(pytest.mark.xfail(strict=True, raises=NotImplementedError, reason=missing))
        params.append(pytest.param(build, id=name, marks=marks))
    return params


def points(model, n: int, seed: int = 0):
    """``n`` points of the model's value variables: its initial point, moved at random."""
    rng = np.random.default_rng(seed)
    start = model.initial_point()
    for _ in range(n):
        yield [np.asarray(start[v.name] + rng.normal(0, 0.5, np.shape(start[v.name])), dtype=v.dtype)
               if v.dtype.startswith("float") else start[v.name] for v in model.value_vars]


@pytest.mark.parametrize("build", _params())
def test_logp_and_gradient_match_pytensor(build):
    model = build()
    converted = from_pymc(model)
    f = eg.function(converted.inputs, converted.outputs)
    ref = pytensor.function(model.value_vars, converted.pytensor_outputs, mode="FAST_COMPILE")
    for args in points(model, POINTS):
        (logp, dlogp), (ref_logp, ref_dlogp) = f(*args), ref(*args)
        assert np.isfinite(logp) or not np.isfinite(ref_logp), (logp, ref_logp)
        assert np.isfinite(dlogp).all() or not np.isfinite(ref_dlogp).all(), (dlogp, ref_dlogp)
        np.testing.assert_allclose(logp, ref_logp, rtol=1e-12)
        # relative to the gradient's size: a component that cancels to near 0 has no relative digits
        scale = max(1.0, np.abs(ref_dlogp).max())
        np.testing.assert_allclose(dlogp, ref_dlogp, rtol=1e-12, atol=1e-12 * scale)


class Mystery(Op):
    """An op eqgraph will never know."""

    def make_node(self, x):
        x = pt.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]

    def grad(self, inputs, output_grads):
        return output_grads


def test_an_unsupported_op_names_the_model_variable():
    with pm.Model() as model:
        mu = pm.Normal("mu", 0, 1)
        pm.Normal("y", mu, 1, observed=np.zeros(3))
        pm.Potential("odd_penalty", Mystery()(mu))
    with pytest.raises(NotImplementedError, match=r"Mystery.*in the graph of odd_penalty\): eqgraph has no"):
        from_pymc(model)


def test_pm_data_becomes_a_shared_variable_of_its_value():
    model = MODELS["radon hierarchical (pm.Data)"][0]()
    converted = from_pymc(model)
    data = converted.shared[model["floor_idx"]]
    np.testing.assert_array_equal(data.get_value(), model["floor_idx"].get_value())
