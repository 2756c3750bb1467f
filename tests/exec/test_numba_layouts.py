"""Every Numba kernel kind takes every memory layout the NumPy path takes: once a node (or the
whole program) is hot and compiled for C-contiguous arrays, a Fortran-ordered, strided, reversed,
0-d or empty argument gets NumPy's result (the kernel's, or NumPy's call where the kernel does
not take that layout), never a Numba TypingError."""

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.exec.numba import kernels as numba_kernels

pytestmark = pytest.mark.skipif(numba_kernels.numba is None, reason="Numba is not installed")

#: calls of each function, every tier compiled (``compile="eager"``)
HOT = 2

m, v, s = et.dmatrix("m"), et.dvector("v"), et.dscalar("s")
#: one graph per Numba kernel kind: a fused elementwise ufunc (numba_kernels), a loop dividing by
#: an invariant (numba_loops), fused reductions by rows, by columns and whole (numba_fused),
#: plain sums, means and softmaxes (numba_reductions), and the whole program (numba_program) on
#: the small sizes
GRAPHS = {
    "elementwise": ([m], lambda: m * 2.0 + m * m - 1.0),
    "transcendental": ([m], lambda: et.exp(m) * et.tanh(m)),
    "divide by invariant": ([m, s], lambda: (m - s) / s),
    "var by columns": ([m], lambda: et.var(m, axis=0)),
    "std by rows": ([m], lambda: et.std(m, axis=1)),
    "fused whole sum": ([m], lambda: (m * m + 1.0).sum()),
    "sum by columns": ([m], lambda: m.sum(axis=0)),
    "mean by rows keepdims": ([m], lambda: m.mean(axis=1, keepdims=True)),
    "softmax": ([m], lambda: et.nnet.softmax(m, axis=-1)),
    "log softmax of a vector": ([v], lambda: et.nnet.log_softmax(v)),
    "vector sum": ([v], lambda: (v * 3.0).sum()),
    "scalar": ([s], lambda: et.exp(s) * 2.0 + s),
}


def layouts(shape, rng):
    """name -> an array of ``shape`` (or of no elements) in that memory layout."""
    a = rng.normal(size=shape)
    if len(shape) == 0:
        return {"0-d": a, "0-d scalar": np.float64(a)}
    bigger = np.zeros(tuple(2 * n for n in shape))
    bigger[tuple(slice(None, None, 2) for _ in shape)] = a
    reversed_ = np.ascontiguousarray(a[tuple(slice(None, None, -1) for _ in shape)])
    found = {"C": a, "Fortran": np.asfortranarray(a), "strided view": bigger[tuple(slice(None, None, 2) for _ in shape)],
             "negative strides": reversed_[tuple(slice(None, None, -1) for _ in shape)],
             "empty": np.zeros((0,) + shape[1:])}
    if len(shape) == 2:
        found["transposed view"] = np.ascontiguousarray(a.T).T
    return found


def argument(var, value_ndim_shape, rng):
    if var.ndim == 0:
        return np.float64(1.5) if var is s else rng.normal()
    return value_ndim_shape


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # the mean of nothing, as NumPy
@pytest.mark.parametrize("rulesets", [None, []], ids=["default rules", "no rules"])
@pytest.mark.parametrize("size", [(4, 3), (70, 60)], ids=["small", "large"])
@pytest.mark.parametrize("name", list(GRAPHS))
def test_a_hot_numba_kernel_takes_every_layout(name, size, rulesets):
    inputs, build = GRAPHS[name]
    kwargs = {} if rulesets is None else {"rulesets": rulesets}
    f, reference = eg.function(inputs, build(), compile="eager", **kwargs), eg.function(inputs, build(), **kwargs)
    rng = np.random.default_rng(0)
    shape = {2: size, 1: size[:1], 0: ()}[inputs[0].ndim]
    hot = [layouts(shape, rng)["C"] if var.ndim == inputs[0].ndim and var.ndim else np.float64(1.5)
           for var in inputs]
    for _ in range(HOT):
        f(*hot)
    for layout, value in layouts(shape, rng).items():
        args = [value if var.ndim == inputs[0].ndim else np.float64(1.5) for var in inputs]
        try:
            want = reference(*args)   # the reference is cold: NumPy's calls
        except ValueError as refused:   # a softmax of an empty axis: NumPy's maximum.reduce refuses it
            with pytest.raises(type(refused)):
                f(*args)
            continue
        got = f(*args)
        assert got.dtype == want.dtype and got.shape == want.shape, layout
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0, err_msg=layout)
