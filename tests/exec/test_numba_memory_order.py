"""Float sums in the whole Numba function add in the order NumPy adds the program's values: NumPy
lays an elementwise result out as its inputs lie in memory (the transpose of a C-ordered matrix
gives a Fortran-ordered result, a C-ordered operand of full shape wins a conflict), and sums in
memory order, so a sum of such a result over rows is running sums where a C-ordered one would
be added pairwise.  Each graph's whole function gives the program's bits."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.exec.numpy.kernels import BLOCKED_FROM
from test_numba_program import _assert_same, _whole_and_program

pytestmark = [pytest.mark.skipif(numba_kernels.numba is None, reason="Numba is not installed"),
              pytest.mark.usefixtures("hot_at_once")]

m, n, v = et.dmatrix("m"), et.dmatrix("n"), et.dvector("v")
rng = np.random.default_rng(11)


def _graphs():
    t = m.T
    return {
        "fused rows": [(t * 2.0 + 1.0).sum(axis=1)],
        "fused columns": [(t * 2.0 + 1.0).sum(axis=0)],
        "fused whole": [(t * 2.0 + 1.0).sum()],
        "kept and summed": [t * 2.0 + 1.0, (t * 2.0 + 1.0).sum(axis=1) * 3.0],
        "a vector broadcast": [(t * 2.0 + v).sum(axis=1)],
        "a C-ordered operand wins": [(t * 2.0 + n).sum(axis=1)],
        "transposed twice": [((t * 2.0).T * 3.0).sum(axis=1)],
        "means": [(t * 2.0 - 1.0).mean(axis=1), (t * 2.0 - 1.0).mean(axis=0)],
    }


@pytest.mark.parametrize("name", sorted(_graphs()))
def test_sums_of_elementwise_results_of_transposed_matrices_add_in_numpys_order(name):
    outputs = _graphs()[name]
    inputs = [x for x in (m, n, v) if x in _ancestors(outputs)]
    f = eg.function(inputs, outputs)
    for shape in [(30, 30), (7, 130), (130, 3), (1, 30), (30, 1), (200, 150)]:
        sizes = {m: shape, n: shape[::-1], v: shape[:1]}
        whole, program = _whole_and_program(f, [rng.normal(size=sizes[x]) for x in inputs])
        # a matrix of one row or column lies in C order too, and the program's fused kernels
        # lay large results out in C order: such calls may be the program's
        assert f.program.call.__globals__["last"] or 1 in shape or shape[0] * shape[1] >= BLOCKED_FROM, \
            "the whole function did not run"
        _assert_same(whole, program)


def _ancestors(outputs) -> set:
    seen, stack = set(), list(outputs)
    while stack:
        x = stack.pop()
        if x not in seen:
            seen.add(x)
            stack.extend(x.owner.inputs if x.owner is not None else ())
    return seen


def test_sums_to_shape_of_a_transposed_result_add_in_numpys_order():
    g = m.T * 2.0 + 1.0
    outputs = [et.sum_to_shape(g, n[:1]) * 3.0, et.sum_to_shape(g, n[:, :1]) * 3.0, et.sum_to_shape(g, n[:1, :1]) * 3.0]
    f = eg.function([m, n], outputs)
    for shape in [(30, 30), (7, 130), (130, 3)]:
        whole, program = _whole_and_program(f, [rng.normal(size=shape), rng.normal(size=shape[::-1])])
        assert f.program.call.__globals__["last"], "the whole function did not run"
        _assert_same(whole, program)
