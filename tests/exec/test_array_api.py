"""Every op's perform runs under array_api_strict: no NumPy-only behaviour in the code
that would also run on CuPy."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import eqgraph as eg
from op_cases import CASES, SPECIAL, draw_case

xps = pytest.importorskip("array_api_strict")


class StrictBackend:
    """Constants and inputs become array_api_strict arrays; results stay strict."""

    name = "array_api_strict"

    @staticmethod
    def to_device(value):
        return xps.asarray(np.asarray(value)) if isinstance(value, (np.ndarray, np.generic)) else value

    @staticmethod
    def to_host(value):
        return np.asarray(value)

    @staticmethod
    def is_device_array(value):
        return isinstance(value, type(xps.asarray(0)))


PORTABLE = [c for c in CASES if "numpy-only" not in c.tags]


@pytest.mark.parametrize("case", PORTABLE, ids=[c.name for c in PORTABLE])
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_perform_under_array_api_strict(case, data):
    arrays, extra, xs, out = draw_case(case, data, static=False)
    f = eg.function(xs, out, on_unused_input="ignore", backend=StrictBackend())
    got = f(*[xps.asarray(a) for a in arrays])
    assert isinstance(got, type(xps.asarray(0))), type(got)
    expected = np.asarray(case.reference(*arrays, *extra))
    got = np.asarray(got)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-12)


def test_numpy_only_cases_are_few():
    # a guard so that new ops do not quietly opt out of the portability check
    assert sorted(c.name for c in CASES if "numpy-only" in c.tags) == sorted(
        ["inc_subtensor[advanced]", *SPECIAL, "betainc_da", "betainc_db", "polygamma"])
