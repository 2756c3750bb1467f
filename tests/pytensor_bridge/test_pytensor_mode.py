"""``eqgraph.pytensor.mode()``: PyTensor functions (and PyMC's compiled log-densities) that run on
eqgraph, with PyTensor's calling conventions: shared variables and updates, ``borrow``."""

from __future__ import annotations

import numpy as np
import pytest

pytensor = pytest.importorskip("pytensor")

import pytensor.tensor as pt  # noqa: E402
from pytensor.compile.io import In, Out  # noqa: E402

from eqgraph.pytensor import mode  # noqa: E402


def test_a_function_with_a_shared_variable_and_its_update():
    x = pt.dvector("x")
    total = pytensor.shared(np.zeros(3), name="total")
    y = (pt.exp(x) * total).sum()
    f = pytensor.function([x], [y, pt.grad(y, x)], updates={total: total + x}, mode=mode())
    ref_total = pytensor.shared(np.zeros(3))
    ref_y = (pt.exp(x) * ref_total).sum()
    ref = pytensor.function([x], [ref_y, pt.grad(ref_y, x)], updates={ref_total: ref_total + x},
                            mode="FAST_COMPILE")
    for values in (np.arange(3.0), np.array([0.5, -1.0, 2.0])):
        for got, want in zip(f(values), ref(values)):
            np.testing.assert_allclose(got, want, rtol=1e-13)
        np.testing.assert_array_equal(total.get_value(), ref_total.get_value())


def test_outputs_never_alias_inputs_or_each_other_even_when_borrowed():
    x = pt.dvector("x")
    f = pytensor.function([In(x, borrow=True)], [Out(x, borrow=True), Out(x * 1.0, borrow=True), x + 0.0],
                          mode=mode())
    value = np.arange(3.0)
    a, b, c = f(value)
    for out in (a, b, c):
        np.testing.assert_array_equal(out, value)
    a[0] = 10.0  # writing to one output changes neither the input nor the others
    assert value[0] == 0.0 and b[0] == 0.0 and c[0] == 0.0


def test_a_pymc_model_compiles_its_logp_on_eqgraph():
    pytest.importorskip("pymc")
    from pymc_models import MODELS

    model = MODELS["eight schools (non-centered)"][0]()
    point = model.initial_point()
    point["mu"] = np.asarray(1.5)
    logp, dlogp = model.compile_logp(mode=mode()), model.compile_dlogp(mode=mode())
    ref_logp, ref_dlogp = model.compile_logp(mode="FAST_COMPILE"), model.compile_dlogp(mode="FAST_COMPILE")
    np.testing.assert_allclose(logp(point), ref_logp(point), rtol=1e-12)
    np.testing.assert_allclose(dlogp(point), ref_dlogp(point), rtol=1e-12, atol=1e-12)
