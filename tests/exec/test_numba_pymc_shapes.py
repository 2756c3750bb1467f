"""The whole Numba function on the shapes of PyMC's log-density graphs (written here with
eqgraph's own API, so that the tests run without PyMC): reductions over no axes (PyMC sums each
term's elementwise log-density over the axes it has, none for a scalar term), and the float32 and
int8 constants and mixed-dtype steps its graphs carry.  Each graph's whole function gives the
program's values bit for bit, every node translated.  Tests that compile skip without Numba."""

import numpy as np
import pytest

import eqgraph.tensor as et
from eqgraph.exec import numba_kernels
from eqgraph.tensor.math import Reduce
from test_numba_program import hot_at_once  # noqa: F401  (a fixture)
from test_numba_translations import _same

pytestmark = [pytest.mark.skipif(numba_kernels.numba is None, reason="Numba is not installed"),
              pytest.mark.usefixtures("hot_at_once")]

rng = np.random.default_rng(11)


def test_reductions_over_no_axes_are_their_input_cast_to_the_result_dtype():
    x, s = et.dvector("x"), et.dscalar("s")
    m, b = et.TensorType("int8", (None, None))("m"), et.TensorType("bool", ())("b")
    f32 = et.TensorType("float32", (None,))("f")
    outs = [et.sum(x, axis=()) * 2.0, et.sum(s, axis=()) + 1.0, et.all(b, axis=()), et.any(s, axis=()),
            et.sum(m.T, axis=()), et.mean(m, axis=()), et.max(f32, axis=()), et.prod(x[::-2], axis=()),
            et.all(x, axis=()), et.sum(b, axis=())]
    cases = [[rng.normal(size=5), np.float64(0.5), np.bool_(True),
              np.array([[1, -128], [127, 3]], dtype="int8"), np.array([1.5, np.nan], dtype="float32")],
             [np.array([np.nan, -0.0, np.inf]), np.float64(0.0), np.bool_(False),
              np.zeros((0, 3), dtype="int8"), np.zeros(0, dtype="float32")]]
    _same([x, s, b, m, f32], outs, Reduce, *cases)
