"""The whole Numba function on the shapes of PyMC's log-density graphs (written here with
eqgraph's own API, so that the tests run without PyMC): reductions over no axes (PyMC sums each
term's elementwise log-density over the axes it has, none for a scalar term), and the float32 and
int8 constants and mixed-dtype steps its graphs carry.  Each graph's whole function gives the
program's values bit for bit, every node translated.  Tests that compile skip without Numba."""

import numpy as np
import pytest

import eqgraph.tensor as et
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.exec.composite import Composite
from eqgraph.tensor.elemwise import Elemwise
from eqgraph.tensor.alloc import ARange, Alloc
from eqgraph.tensor.linalg import Solve
from eqgraph.tensor.math import MatMul, Reduce
from test_numba_translations import _compiled, _kernel_raises, _same

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


def test_boolean_products_and_sums_with_float32_and_int8_constants():
    # PyMC's Poisson log-density: (exp(x) == 0) * mask (a product of booleans, NumPy's logical and),
    # its switch picking a float32 0 or a float64 value, the int8 0 it compares with
    x, y = et.dvector("x"), et.dvector("y")
    zero8, zero32 = et.constant(np.int8(0)), et.constant(np.float32(0.0))
    half32 = et.constant(np.float32(-0.5))
    both = et.eq(et.exp(x), zero8) * (y > 0.0)
    either = et.eq(x, zero8) + (y < 0.0)
    outs = [et.switch(both, zero32, x * y), et.switch(either, half32 * y, x), half32 * x * x, both, either]
    cases = [[np.array([-800.0, 0.0, 1.0, np.nan, -np.inf]), np.array([1.0, -1.0, 0.0, 2.0, 3.0])],
             [np.zeros(0), np.zeros(0)]]
    _same([x, y], outs, (Composite, Elemwise), *cases)


def test_alloc_of_an_array_broadcasts_it_into_the_shape():
    # PyMC's mixture broadcasts a matrix of component log-densities to the observations' shape
    m, v, n = et.dmatrix("m"), et.lvector("v"), et.lscalar("n")
    outs = [et.alloc(m, n, m.shape[1]) * 2.0, et.alloc(v, 3, n) + 1, et.alloc(m[:, ::-1], m.shape[0], 2)]
    good = [np.array([[1.0, -0.0]]), np.array([4, -5], dtype="int64"), np.int64(2)]
    _same([m, v, n], outs, Alloc, good, [np.array([[1.0, 2.0], [np.nan, 3.0]]), np.array([7], dtype="int64"), np.int64(2)])
    f = _compiled([m, v, n], outs, Alloc, good)
    _kernel_raises(f, ValueError, [np.ones((3, 2)), np.array([4, 5], dtype="int64"), np.int64(2)])


def test_arange_with_int8_bounds():
    n = et.lscalar("n")
    start, step = et.constant(np.int8(0)), et.constant(np.int8(2))
    outs = [et.arange(start, n, step) * 3, et.arange(et.constant(np.int8(-3)), n, et.constant(np.int8(1)))]
    _same([n], outs, ARange, [np.int64(9)], [np.int64(-7)], [np.int64(0)])


def _stack_of_one(name):
    return et.TensorType("float64", (1, None, None))(name)


def test_solves_and_products_on_stacks_of_one_matrix():
    # PyMC's GP: PyTensor's batched triangular solves of the Cholesky factor and their gradient's
    # outer product, each on a stack of one matrix; the op solves stacks as NumPy's solve of the
    # triangle it reads, which the whole function follows
    a, b, c = _stack_of_one("a"), _stack_of_one("b"), _stack_of_one("c")
    lower = et.linalg.solve_triangular(a, b, lower=True)
    outs = [lower, et.linalg.solve_triangular(a, b, lower=False, trans=1) * 2.0,
            et.linalg.solve_triangular(a, b, lower=True, unit_diagonal=True),
            et.linalg.solve(a, b) + 1.0, lower @ c, b @ c]
    n = 5
    matrix = np.tril(rng.normal(size=(n, n))) + 4 * np.eye(n) + np.triu(np.full((n, n), 7.0), 1)
    cases = [[matrix[None], rng.normal(size=(1, n, 1)), rng.normal(size=(1, 1, 3))],
             [matrix.T[None] + np.eye(n), rng.normal(size=(1, n, 2)), rng.normal(size=(1, 2, 2))]]
    _same([a, b, c], outs, (Solve, MatMul), *cases, exact=False)
