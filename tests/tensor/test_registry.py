"""The elementwise op registry (eqgraph/tensor/elemwise.py SCALAR_OPS): every row states every
fact of its op, and every table that consumers read is derived from the rows, so that an op added
as one row (plus its op_cases and fuzz rows) is complete, and a forgotten fact fails here."""

import itertools
import math
import pickle

import fuzz_graphs
import numpy as np
import pytest
from op_cases import CASES
from test_fuzz import _report, check

import eqgraph.tensor as et
from eqgraph.egraph.schema import camel
from eqgraph.exec.cupy import kernels as cupy_kernels
from eqgraph.exec.numba import kernels as numba_kernels
from eqgraph.exec.numba import special as numba_special
from eqgraph.extract.calibrated import MEASURED
from eqgraph.grad import vjps
from eqgraph.tensor.elemwise import SCALAR_OPS
from eqgraph.tensor.scalar_ops import OWN_VJP, No

NAMES = list(SCALAR_OPS)
#: what fuzz_graphs' compare() draws, rather than a row of its UNARY or BINARY
DRAWN_BY_COMPARE = {"lt", "le", "gt", "ge", "eq", "neq", "switch"}
CASE_NAMES = {c.name.split("[")[0] for c in CASES}


@pytest.mark.parametrize("name", NAMES)
def test_every_op_has_backend_forms_or_says_why_not(name):
    row = SCALAR_OPS[name]
    for form, table, none in ((row.numba, numba_kernels.FORMS, numba_kernels.NO_FORM),
                              (row.c, cupy_kernels.C_FORMS, cupy_kernels.NO_FORM)):
        assert isinstance(form, (str, No)), f"{name}: a form is a string or No(reason), not {form!r}"
        if isinstance(form, No):
            assert form.reason and none[name] == form.reason
        else:
            assert table[name] == form
            assert form.format(*[f"a{i}" for i in range(row.nin)])  # one placeholder per input at most


@pytest.mark.parametrize("name", NAMES)
def test_every_op_has_a_vjp_or_is_stated_nondifferentiable(name):
    row = SCALAR_OPS[name]
    if isinstance(row.vjp, No):
        assert row.vjp.reason and name in vjps.NONDIFFERENTIABLE and name not in vjps.VJPS
    else:
        assert callable(row.vjp) and row.nin <= 2 or row.vjp == OWN_VJP, \
            f"{name}: vjp= is a lambda of one or two inputs, No(reason), or OWN_VJP"
        assert name in vjps.VJPS and name not in vjps.NONDIFFERENTIABLE, name


@pytest.mark.parametrize("name", NAMES)
def test_every_op_has_a_calibrated_cost(name):
    """bench/calibrate.py --missing --write measures the ops this names."""
    assert camel(name) in MEASURED["element_ns"], f"{name}: no NumPy cost per element"
    if name in numba_kernels.FORMS:
        assert camel(name) in MEASURED["kernel_element_ns"], f"{name}: no cost inside a Numba loop"


@pytest.mark.parametrize("name", NAMES)
def test_every_op_is_a_public_name_with_test_rows(name):
    assert getattr(et, name) is et.ELEMWISE_OPS[name] and name in et.__all__
    assert name in CASE_NAMES, f"{name}: no row in tests/op_cases.py"
    assert (name in fuzz_graphs.NUMPY) != (name in fuzz_graphs.NOT_FUZZED), \
        f"{name}: a row in tests/fuzz_graphs.py, or its reason in NOT_FUZZED (not both)"
    if name in fuzz_graphs.NUMPY:  # and the terms it takes, or the graphs never draw it
        assert name in {**fuzz_graphs.UNARY, **fuzz_graphs.BINARY} or name in DRAWN_BY_COMPARE, \
            f"{name}: a reference in fuzz_graphs.NUMPY but no domain row in UNARY or BINARY"


def test_the_derived_tables_hold_the_registered_ops_only():
    assert set(vjps.UNARY) | set(vjps.BINARY) <= set(NAMES)
    assert set(numba_kernels.LIBM_EXTRA_NS) == {n for n, r in SCALAR_OPS.items() if r.libm_ns is not None}
    assert set(numba_kernels.FORMS) - set(NAMES) == {"cast_float64", "cast_bool"}
    assert set(cupy_kernels.C_FORMS) <= set(NAMES)


def test_a_missing_fact_is_an_error_where_the_row_is_written():
    with pytest.raises(TypeError, match="numba"):
        type(SCALAR_OPS["exp"])(1, "exp", vjp=lambda g, y, x: g * y, c="exp({0})")


def test_ops_pickle_as_the_registered_op():
    assert pickle.loads(pickle.dumps(et.arctanh)) is et.arctanh


# -- the Numba forms compute what NumPy computes, special values included ---------------------
SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 3.0, -7.0, 0.5, -0.5, 1.5, 0.7, 1e-300, -1e300, 1e308, 5e-324,
           math.inf, -math.inf, math.nan, -math.log(2.0), np.nextafter(-math.log(2.0), 0), 700.0, -745.0]
LOGICAL = ("and_", "or_", "xor", "invert")
#: ulps allowed beyond the default 4 where libm and SciPy both round a small result near a zero of
#: the function: lgamma(-2.5) is -0.0562437164976740507 (near its zero at -2.457), glibc's lgamma
#: gives ...407 and SciPy's gammaln ...401, 6 ulps apart
ULPS = {"gammaln": 8}


def _arguments(name, a, b):
    """Each op's arguments from two float64 values: booleans for the logical ops and the condition."""
    if name in LOGICAL:
        return [f"({a} > 0.6)", f"({b} > 0.6)"]
    if name == "switch":
        return [f"({a} > 0.6)", a, b]
    return [a, b, "1.25"]


def _numpy_arguments(name, a, b):
    if name in LOGICAL:
        return [a > 0.6, b > 0.6]
    if name == "switch":
        return [a > 0.6, a, b]
    return [a, b, np.full_like(a, 1.25)]


def test_numba_forms_agree_with_numpy_on_special_values():
    """Bit for bit (signed zeros, NaN) where the form is arithmetic; within 4 ulps where it calls libm."""
    numba = numba_kernels.numba
    if numba is None:
        pytest.skip("Numba is missing or turned off (EQGRAPH_NUMBA=0)")
    ops = [n for n in NAMES if n in numba_kernels.FORMS]
    lines = ["def run(x, y, out):", "    for i in range(x.shape[0]):", "        a = x[i]", "        b = y[i]"]
    for k, name in enumerate(ops):
        args = _arguments(name, "a", "b")[: SCALAR_OPS[name].nin]
        lines.append(f"        out[{k}, i] = {numba_kernels.FORMS[name].format(*args)}")
    namespace = {"math": math, "np": np, "special": numba_special}
    exec("\n".join(lines), namespace)  # noqa: S102 (the forms under test)
    run = numba.njit(error_model="numpy")(namespace["run"])  # the model Numba's ufuncs compile with
    x, y = (np.array(v, dtype=np.float64) for v in zip(*itertools.product(SPECIAL, SPECIAL)))
    out, wrong = np.empty((len(ops), x.size)), {}
    with np.errstate(all="ignore"):
        run(x, y, out)
        for k, name in enumerate(ops):
            row = SCALAR_OPS[name]
            want = np.asarray(row.impl(np)(*_numpy_arguments(name, x, y)[: row.nin]), dtype=np.float64)
            got = out[k]
            same = (got == want) & (np.signbit(got) == np.signbit(want))
            same |= np.isnan(got) & np.isnan(want)
            if row.libm_ns is not None:
                same |= np.abs(got - want) <= ULPS.get(name, 4) * np.spacing(np.abs(want))
            bad = np.flatnonzero(~same)[:3]
            if bad.size:
                wrong[name] = [(x[i], y[i], got[i], want[i]) for i in bad]
    assert not wrong, wrong


def _first_graph_with(name):
    """The first fuzz graph (of every_op draws) that applies ``name``."""
    for seed in range(400):
        graph = fuzz_graphs.make_graph(seed, every_op=True)
        if any(term.op == name for term in graph.terms()):
            return seed, graph
    raise AssertionError(f"no fuzz graph of seeds 0-399 draws {name}")


@pytest.mark.parametrize("name", [n for n in fuzz_graphs.UNARY if n not in fuzz_graphs.SEEDED_UNARY])
def test_each_op_added_to_the_fuzz_table_is_fuzzed(name):
    """make_graph(seed) keeps the ops other tests pinned seeds on; each op added to the table since
    is fuzzed here, in the first graph that draws it."""
    seed, graph = _first_graph_with(name)
    outcome = check(graph)
    assert not outcome.problems, _report(seed, graph, outcome.problems)
