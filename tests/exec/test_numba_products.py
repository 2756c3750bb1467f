"""The whole Numba function's form of two-operand ``Einsum`` contractions and ``tensordot``
(eqgraph/exec/numba/translate_products.py): one BLAS product after transposes and reshapes, the
program's values to rounding (NumPy's einsum adds in its own loops); subscripts it has no form for
stay Python calls.  Tests that compile skip without Numba."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.tensor.products import Einsum
from test_numba_translations import _called_in_python, _same

pytestmark = [pytest.mark.skipif(numba_kernels.numba is None, reason="Numba is not installed"),
              pytest.mark.usefixtures("hot_at_once")]


def test_contractions_and_tensordots_agree_with_numpy_to_rounding():
    a, b, c, v = et.dtensor3("a"), et.dmatrix("b"), et.dmatrix("c"), et.dvector("v")
    outs = [et.einsum("ijk,kl->ijl", a, b), et.einsum("ijk,ji->k", a, c) * 2.0, et.einsum("ijk,kl->lji", a, b),
            et.tensordot(a, c, axes=[[0, 1], [1, 0]]), et.einsum("i,i->", v, v) + 1.0, et.einsum("i,j->ij", v, v)]
    rng = np.random.default_rng(8)
    _same([a, b, c, v], outs, Einsum,
          [rng.normal(size=(2, 3, 4)), rng.normal(size=(4, 5)), rng.normal(size=(3, 2)), rng.normal(size=4)],
          [np.full((2, 3, 4), np.nan), rng.normal(size=(5, 4))[::-1].T, rng.normal(size=(2, 3)).T,
           np.array([np.inf, 1.0, -0.0, 2.0])],
          [rng.normal(size=(0, 3, 0)), np.ones((0, 2)), np.ones((3, 0)), np.zeros(0)], exact=False)


def test_subscripts_without_a_form_are_python_calls():
    a, b = et.dmatrix("a"), et.dmatrix("b")
    f = eg.function([a, b], [et.einsum("ij,ij->i", a, b) * 2.0, et.exp(a) + 1.0, b * 3.0])
    assert [type(n.op).__name__ for n in _called_in_python(f)] == ["Einsum"]
