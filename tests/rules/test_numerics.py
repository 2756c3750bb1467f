"""The numerics policy (docs/numerics.md): a default rewrite never turns an undefined value
(0/0, inf - inf, 0 * inf, NaN) into a number; side conditions are proven by the e-graph's
value analysis (types.egg); rules marked ``:assumes finite`` run only under ``assume_finite``."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et

x, y = et.dvector("x"), et.dvector("y")
A = np.array([1.0, 2.0, -4.0, 800.0])
B = np.array([0.0, np.inf, 2.0, -np.inf])


def run(out, inputs=(x, y), args=(A, B), **options):
    with np.errstate(all="ignore"):
        f = eg.function(list(inputs), out, on_unused_input="ignore", **options)
        return f, f(*args)


# the five rows of the fuzz repro r2_ieee_identity_rewrites: eqgraph with the default rules
# must give what NumPy gives wherever NumPy's value is undefined (NaN)
IEEE_ROWS = [
    ("mul-div-cancel", lambda p, q: p * q / q),
    ("add-sub-cancel", lambda p, q: (p + q) - q),
    ("exp-log", lambda p, q: np.exp(np.log(p)) if isinstance(p, np.ndarray) else et.exp(et.log(p))),
    ("sqr-sqrt", lambda p, q: np.sqrt(p) ** 2 if isinstance(p, np.ndarray) else et.sqrt(p) ** 2),
]


@pytest.mark.parametrize("name, formula", IEEE_ROWS, ids=[r[0] for r in IEEE_ROWS])
def test_an_undefined_left_side_stays_nan(name, formula):
    with np.errstate(all="ignore"):
        want = formula(A, B)
    _, got = run(formula(x, y))
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)


def test_a_stability_rewrite_may_compute_a_defined_value_better():
    # log(exp(800)) is 800 as a real number; NumPy's exp overflows to inf on the way
    f, got = run(et.log(et.exp(x)))
    assert f.stages.report.fired().get("algebra/log-exp")
    np.testing.assert_array_equal(got, A)
