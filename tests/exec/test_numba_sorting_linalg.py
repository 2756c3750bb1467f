"""The whole Numba function's forms of ``Sort`` (values and indices, stable, along any axis, every
dtype) and of ``Det``, ``SlogDet``, ``MatrixInverse``, ``Eigh`` and ``Lstsq`` (eqgraph/exec/
numba/translate_sorting.py, numba/translate_linalg2.py): the program's values, sorts bit for bit,
LAPACK's results to rounding; where Numba's LAPACK refuses (a singular matrix to invert, a NaN) the
compiled function raises and the function gives the program's answer.  Tests that compile skip
without Numba."""

import numpy as np
import pytest

import eqgraph.tensor as et
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.tensor.linalg import Det, Eigh, MatrixInverse, SlogDet
from eqgraph.tensor.linalg.least_squares import Lstsq
from eqgraph.tensor.sorting import Sort
from test_numba_dtypes import dtypes, edge_values
from test_numba_program import _whole_and_program
from test_numba_translations import _compiled, _kernel_raises, _same

pytestmark = [pytest.mark.skipif(numba_kernels.numba is None, reason="Numba is not installed"),
              pytest.mark.usefixtures("hot_at_once")]


@pytest.mark.parametrize("dtype", dtypes("float64", "int8", slow=["float32", "uint64", "bool"]))
def test_stable_sorts_and_argsorts_along_every_axis(dtype):
    x = et.TensorType(dtype, (None, None, None))("x")
    outs = [op(x, axis=axis) for axis in (0, 1, 2, -1) for op in (et.sort, et.argsort)]
    values = edge_values(dtype, 24, 4).reshape(2, 3, 4)
    ties = np.resize(edge_values(dtype, 3), (3, 2, 4))   # equal values, -0.0 and 0.0: the order shows
    _same([x], outs, Sort, [values], [ties], [values[:, ::-1]], [values[:, :0]])


def test_determinants_inverses_and_eigendecompositions_agree_with_numpy_to_rounding():
    a = et.dmatrix("a")
    outs = [et.linalg.det(a), *et.linalg.slogdet(a), et.linalg.inv(a) * 2.0, *et.linalg.eigh(a),
            et.linalg.eigh(a, UPLO="U")[0] + 1.0]
    rng = np.random.default_rng(3)
    spd = rng.normal(size=(4, 4))
    spd = spd @ spd.T + np.eye(4)
    negative = np.diag([2.0, -3.0, 0.5])
    f = _compiled([a], outs, (Det, SlogDet, MatrixInverse, Eigh), [spd])
    for value in (spd, negative, np.eye(1), spd[::-1, ::-1]):
        whole, program = _whole_and_program(f, [value])
        for k, (got, want) in enumerate(zip(whole, program, strict=True)):
            assert got.dtype == want.dtype and got.shape == want.shape
            if k == 5:   # eigenvectors: LAPACK may pick either sign of each
                got = got * np.where(np.sum(got * want, axis=0) < 0, -1.0, 1.0)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_a_singular_matrix_to_invert_and_a_nan_raise_in_the_kernel_and_the_program_answers():
    a = et.dmatrix("a")
    f = _compiled([a], [et.linalg.inv(a) + 1.0, et.linalg.det(a) * 2.0], MatrixInverse, [np.eye(2)])
    _kernel_raises(f, np.linalg.LinAlgError, [np.ones((2, 2))])
    _kernel_raises(f, ValueError, [np.ones((2, 3))])
    g = _compiled([a], [et.linalg.det(a) * 2.0, et.exp(a)], Det, [np.eye(2)])
    with np.errstate(all="ignore"):
        got = g(np.array([[np.nan, 1.0], [1.0, 2.0]]))
    assert np.isnan(got[0])


def test_eigh_reads_the_other_triangle_as_the_op_does():
    # the op adds both triangles: a NaN in the triangle it does not read still makes NaNs, and the
    # whole function must not return a finite answer there
    a = et.dmatrix("a")
    f = _compiled([a], [et.linalg.eigh(a)[0] * 2.0, et.exp(a)], Eigh, [np.eye(2)])
    value = np.array([[2.0, np.nan], [0.5, 3.0]])
    with np.errstate(all="ignore"):
        got = f(value)[0]
        want = f.program.call.program(value)[0]
    np.testing.assert_array_equal(got, want)


def test_least_squares_agree_with_numpy_to_rounding():
    a, b, m = et.dmatrix("a"), et.dvector("b"), et.dmatrix("m")
    outs = [out * 2 for out in et.linalg.lstsq(a, b)] + [et.linalg.lstsq(a, m, 1e-3)[0] + 1.0]
    rng = np.random.default_rng(4)
    tall, wide, rank_one = rng.normal(size=(6, 3)), rng.normal(size=(3, 5)), np.outer(np.ones(4), np.arange(3.0))
    f = _compiled([a, b, m], outs, Lstsq, [np.ascontiguousarray(v) for v in (tall, tall[:, 0], tall[:, :2])])
    for value in (tall, wide, rank_one):
        args = [np.ascontiguousarray(v) for v in (value, value[:, 0] + 1.0, value[:, :2])]
        whole, program = _whole_and_program(f, args)
        for got, want in zip(whole, program, strict=True):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    _kernel_raises(f, ValueError, [np.ascontiguousarray(v) for v in (tall, tall[:4, 0], tall[:, :2])])
