"""Which ops the whole Numba function (eqgraph/exec/numba/program.py) leaves to Python: one small
graph per registered op (every elementwise op and reduction of the registries, every structured op
the e-graph's schema declares, and the other ops of ``eqgraph.tensor``) is compiled, and the op
classes of the nodes no translation writes are listed.  The list must equal ``EXPECTED``, each
entry with its reason, so that a new op without a Numba form, or a form that stops covering its op,
fails here; and the ops of the models in bench/models.py are all translated (apart from the large
solves the models' gradients make, which stay LAPACK's).  Nothing is compiled by Numba here: the
translations are read, not run (their values are compared with the program's in the other
tests/exec/test_numba_*.py files)."""

import sys
from pathlib import Path

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.egraph import schema
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.tensor.math import Reduce
from eqgraph.tensor.random import DISTRIBUTIONS, RandomVariable
from eqgraph.tensor.rng_type import random_generator_type
from test_numba_translations import _called_in_python

pytestmark = pytest.mark.skipif(numba_kernels.numba is None, reason="Numba is not installed")

x, y, z = et.dvector("x"), et.dvector("y"), et.dvector("z")
m, n = et.dmatrix("m"), et.dmatrix("n")
i, idx = et.lscalar("i"), et.lvector("idx")
LINALG = ("inv", "det", "slogdet", "eigh", "eig", "svd", "qr", "pinv")


def _structured() -> dict:
    """Graph name -> (inputs, outputs): one graph per structured op, applied to float64 values."""
    graphs = {
        "Cast": ([x], [et.cast(x, "int64") + 1]),
        "DimShuffle": ([m], [m.T * 2.0]),
        "MatMul": ([m, x], [m @ x]),
        "Softmax": ([m], [et.softmax(m, axis=-1), et.log_softmax(m, axis=-1)]),
        "Shape": ([m], [et.shape(m)[0] + 1]),
        "SpecifyShape": ([x], [et.specify_shape(x, (3,)) * 2.0]),
        "Reshape": ([m], [et.reshape(m, (-1,)) * 2.0]),
        "ARange": ([i], [et.arange(i) * 2]),
        "SumToShape": ([m, x], [et.sum_to_shape(m, x[None, :])]),
        "Solve": ([m, x], [et.linalg.solve(m, x)]),
        "ExtractDiag": ([m], [et.diagonal(m) * 2.0]),
        "Sort": ([x], [et.sort(x), et.argsort(x)]),
        "CumOp": ([m], [et.cumsum(m, axis=0), et.cumprod(m, axis=1)]),
        "Convolve": ([x, y], [et.conv.conv1d(x, y)]),
        "Einsum": ([m, n], [et.einsum("ij,jk->ik", m, n) * 2.0]),
        "Tensordot": ([m, n], [et.tensordot(m, n, axes=1) * 2.0]),
        "Alloc": ([i], [et.alloc(1.5, i, 2)]),
        "MakeVector": ([i], [et.make_vector(i, i + 1) * 2]),
        "Join": ([x, y], [et.concatenate([x, y]) * 2.0]),
        "Split": ([x], [part * 2.0 for part in et.split(x, [1, 2], 2)]),
        "Subtensor": ([m, i], [m[i, 1:] * 2.0]),
        "IncSubtensor": ([x, y], [et.inc_subtensor(x[1:3], y) * 2.0]),
        "AdvancedSubtensor": ([m, idx, x], [m[idx] * 2.0, x[x > 0.0] * 2.0]),
        "AdvancedIncSubtensor": ([x, y, idx], [et.inc_subtensor(x[idx], y) * 2.0]),
        "CheckAndRaise": ([x], [et.assert_op(x * 2.0, et.all(x > 0.0))]),
        "IfElse": ([x, i], [et.ifelse(i > 0, x * 2.0, x + 1.0)]),
        "Repeat": ([x], [et.repeat(x, 2) * 2.0]),
        "Nonzero": ([x], [et.flatnonzero(x) * 2]),
        "ArgAlongAxis": ([m, i], [et.argmax(m, axis=i) * 2]),
        "Cholesky": ([m], [et.linalg.cholesky(m) * 2.0]),
    }
    for name in LINALG:
        made = getattr(et.linalg, name)(m)
        graphs[f"linalg.{name}"] = ([m], [out * 2.0 for out in (made if isinstance(made, (list, tuple)) else [made])])
    graphs.update({
        "linalg.expm": ([m], [et.linalg.expm(m) * 2.0]),
        "linalg.lstsq": ([m, x], [out * 2 for out in et.linalg.lstsq(m, x)]),
        "linalg.solve_sylvester": ([m, n], [et.linalg.solve_sylvester(m, n, m) * 2.0]),
        "linalg.solve_discrete_are": ([m, n], [et.linalg.solve_discrete_are(m, n, m, n) * 2.0]),
    })
    return graphs


#: distribution -> its parameters, for a draw of each (the vector ``x`` where an array is wanted)
_DRAW_PARAMS = {"integers": (0, i), "binomial": (i, 0.5), "multinomial": (i, x), "choice": (idx,),
                "permutation": (x,), "multivariate_normal": (x, m), "dirichlet": (x,), "categorical": (x,),
                "hypergeometric": (i, i, i), "betabinom": (i, 1.0, 2.0)}


def _random_graphs() -> dict:
    """Graph name -> (inputs, outputs): a draw of each distribution from a generator input."""
    graphs = {}
    for distribution, (_, names) in DISTRIBUTIONS.items():
        rng = random_generator_type("rng")
        params = _DRAW_PARAMS.get(distribution, (x, *[1.0] * (len(names) - 1)))
        op = RandomVariable(distribution, "int64" if distribution in _INTEGER_DRAWS else "float64", False)
        new_rng, draw = op(rng, *params, return_list=True)
        graphs[f"random.{distribution}"] = ([rng, x, m, i, idx], [draw * 2, new_rng])
    return graphs


_INTEGER_DRAWS = ("integers", "bernoulli", "binomial", "multinomial", "choice", "permutation", "poisson",
                  "negative_binomial", "categorical", "geometric", "hypergeometric", "betabinom")


def _elementwise_graph(name):
    op = et.ELEMWISE_OPS[name]
    args = {1: [x], 2: [x, y], 3: [x, y, z]}[op.nin]
    if name in ("and_", "or_", "xor", "invert"):
        args = [a > 0.0 for a in args]
    if name == "switch":
        args = [x > 0.0, y, z]
    if name == "polygamma":  # the order is an integer
        return [i, x], [op(i, x)]
    return [x, y, z], [op(*args)]


def _reduction_graph(name):
    out = Reduce(name, (1,), False)(m > 0.0 if name in ("all", "any") else m)
    return [m], [out * 2]


_NO_FORM = "no Numba form of this special function (numba_kernels.NO_FORM)"
#: graph -> (the op classes its program calls in Python, or that keep it from a whole function;
#: why)
EXPECTED = {
    **{name: (["Elemwise"], _NO_FORM) for name in ("betainc", "ive")},
    "Convolve": (["Convolve"], "no translation yet"),
    "IfElse": (["IfElse"], "a lazy branch: the program evaluates only the branch taken"),
    "Repeat": (["Repeat"], "no translation yet"),
    "Nonzero": (["Nonzero"], "no translation yet"),
    "ArgAlongAxis": (["ArgAlongAxis"], "the axis is known only at run time"),
    "linalg.svd": (["SVD"], "no translation yet"),
    "linalg.eig": (["Eig", "Elemwise", "Elemwise"], "complex results: the whole function holds real values only"),
    **{name: (["Elemwise"], "a complex result: the whole function holds real values only")
       for name in ("complex", "complex_from_polar")},
    "linalg.qr": (["QR"], "no translation yet"),
    "linalg.pinv": (["Pinv"], "no translation yet"),
    "linalg.expm": (["Expm"], "Numba's np.linalg has no matrix exponential (SciPy's expm)"),
    "linalg.solve_sylvester": (["SolveSylvester"], "Numba's np.linalg has no Schur decomposition (SciPy's "
                                                   "Bartels-Stewart solver)"),
    "linalg.solve_discrete_are": (["SolveDiscreteARE"], "Numba's np.linalg has no QZ decomposition (SciPy's solver)"),
    **{f"random.{name}": (["RandomVariable"], "Numba's Generator draws other numbers (its algorithm differs)")
       for name in ("weibull", "wald")},
    **{f"random.{name}": (["RandomVariable"], "Numba's Generator has no such method")
       for name in ("vonmises", "hypergeometric")},
    **{f"random.{name}": (["RandomVariable"], "NumPy's tan, log, log1p, expm1 or power of the draws: NumPy's "
                                              "float64 loops, which may not be the C library's that Numba calls")
       for name in ("cauchy", "halfcauchy", "gumbel", "pareto", "truncexpon", "gengamma")},
    **{f"random.{name}": (["RandomVariable"], "a draw with core dimensions or several passes over its shape")
       for name in ("multinomial", "choice", "permutation", "multivariate_normal", "dirichlet", "betabinom")},
}


def _graphs():
    graphs = {name: (lambda name=name: _elementwise_graph(name)) for name in et.ELEMWISE_OPS}
    graphs.update({f"Reduce.{name}": (lambda name=name: _reduction_graph(name)) for name in et.REDUCTIONS})
    graphs.update({name: (lambda made=made: made) for name, made in _structured().items()})
    graphs.update({name: (lambda made=made: made) for name, made in _random_graphs().items()})
    return graphs


def _python_calls(inputs, outputs) -> list:
    f = eg.function(inputs, outputs, on_unused_input="ignore")
    return sorted(type(node.op).__name__ for node in _called_in_python(f))


def test_every_registered_op_has_a_graph_here():
    # elementwise ops and reductions have a graph per name; a GradBlocker only marks a gradient
    classes = {type(op).__name__ for op, _ in schema._prototypes()} - {"Elemwise", "Reduce", "GradBlocker"}
    named = set(_structured()) | {"MatrixInverse", "Det", "SlogDet", "Eigh", "Eig", "SVD", "QR",
                                                       "Pinv"}
    assert classes <= named, sorted(classes - named)


def test_the_ops_called_in_python_are_the_expected_ones():
    found = {}
    for name, build in _graphs().items():
        try:
            calls = _python_calls(*build())
        except Exception as err:  # noqa: BLE001
            calls = [f"ERROR {type(err).__name__}: {err}"[:200]]
        if calls:
            found[name] = calls
    assert found == {name: calls for name, (calls, _) in EXPECTED.items()}


#: the bench models' nodes left to Python: none (the GP's large solves call LAPACK from Numba)
MODEL_CALLS = {}


def test_no_op_of_the_bench_models_is_left_to_python():
    sys.path.insert(0, str(Path(__file__).parents[2] / "bench"))
    try:
        from models import EqgraphNS, model_table
    finally:
        sys.path.pop(0)
    lib = EqgraphNS()
    calls = {}
    for model, (fn, params, data) in model_table(np.random.default_rng(0)).items():
        f = lib.compile(fn, params, data)
        calls[model] = sorted(type(node.op).__name__ for node in _called_in_python(f))
        assert hasattr(f.program.call, "whole_source"), f"{model} has no whole function"
    assert {model: names for model, names in calls.items() if names} == MODEL_CALLS
