"""``eqgraph.pytensor.mode()``: PyTensor functions (and PyMC's compiled log-densities) that run on
eqgraph, with PyTensor's calling conventions: shared variables and updates, ``borrow``."""

from __future__ import annotations

import numpy as np
import pytest

pytensor = pytest.importorskip("pytensor")

import pytensor.tensor as pt  # noqa: E402
from pytensor.compile.io import In, Out  # noqa: E402

import eqgraph as eg  # noqa: E402
from eqgraph.exec.numba import kernels as numba_kernels  # noqa: E402
from eqgraph.pytensor import mode  # noqa: E402

needs_numba = pytest.mark.skipif(numba_kernels.numba is None, reason="Numba is off or not installed")


def test_a_function_with_a_shared_variable_and_its_update():
    x = pt.dvector("x")
    total = pytensor.shared(np.zeros(3), name="total")
    y = (pt.exp(x) * total).sum()
    f = pytensor.function([x], [y, pt.grad(y, x)], updates={total: total + x}, mode=mode())
    ref_total = pytensor.shared(np.zeros(3))
    ref_y = (pt.exp(x) * ref_total).sum()
    ref = pytensor.function([x], [ref_y, pt.grad(ref_y, x)], updates={ref_total: ref_total + x},
                            mode="FAST_COMPILE")
    for values in (np.arange(3.0), np.array([0.5, -1.0, 2.0])):
        for got, want in zip(f(values), ref(values)):
            np.testing.assert_allclose(got, want, rtol=1e-13)
        np.testing.assert_array_equal(total.get_value(), ref_total.get_value())


def test_outputs_never_alias_inputs_or_each_other_even_when_borrowed():
    x = pt.dvector("x")
    f = pytensor.function([In(x, borrow=True)], [Out(x, borrow=True), Out(x * 1.0, borrow=True), x + 0.0],
                          mode=mode())
    value = np.arange(3.0)
    a, b, c = f(value)
    for out in (a, b, c):
        np.testing.assert_array_equal(out, value)
    a[0] = 10.0  # writing to one output changes neither the input nor the others
    assert value[0] == 0.0 and b[0] == 0.0 and c[0] == 0.0


def test_a_pymc_model_compiles_its_logp_on_eqgraph():
    pytest.importorskip("pymc")
    from pymc_models import MODELS

    model = MODELS["eight schools (non-centered)"][0]()
    point = model.initial_point()
    point["mu"] = np.asarray(1.5)
    logp, dlogp = model.compile_logp(mode=mode()), model.compile_dlogp(mode=mode())
    ref_logp, ref_dlogp = model.compile_logp(mode="FAST_COMPILE"), model.compile_dlogp(mode="FAST_COMPILE")
    np.testing.assert_allclose(logp(point), ref_logp(point), rtol=1e-12)
    np.testing.assert_allclose(dlogp(point), ref_dlogp(point), rtol=1e-12, atol=1e-12)


def _eqgraph_function(f):
    return f.maker.linker.eqgraph_function


@needs_numba
def test_a_graph_whose_numba_forms_are_on_disk_runs_compiled_from_its_first_call(tmp_path, monkeypatch):
    """A sampler's first steps run the whole Numba function where a previous process compiled it:
    the mode loads it before returning instead of leaving the first calls to the NumPy program."""
    pytest.importorskip("numba")
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(eg.config, "compile", "background")   # the default that the tests' conftest changes
    x, m = pt.dvector("x"), pt.dmatrix("m")
    y = pt.log1p(pt.exp(pt.dot(m, x))).sum() + (x * x).sum()   # more than one kernel: a whole function
    first = pytensor.function([x, m], [y, pt.grad(y, x)], mode=mode())
    assert _eqgraph_function(first).wait_compiled(timeout=300)
    again = pytensor.function([x, m], [y, pt.grad(y, x)], mode=mode())
    assert _eqgraph_function(again).stages.whole_function in ("loaded from cache", "compiled")
    values = np.array([0.5, -1.0, 2.0]), np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    for got, want in zip(again(*values), first(*values)):
        np.testing.assert_allclose(got, want, rtol=1e-13)
    assert _eqgraph_function(again).stages.tier == "numba-whole"


@needs_numba
def test_a_graph_not_on_disk_compiles_in_the_background(tmp_path, monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.setenv("EQGRAPH_KERNEL_CACHE", str(tmp_path))
    monkeypatch.setattr(eg.config, "compile", "background")   # the default that the tests' conftest changes
    x, m = pt.dvector("x"), pt.dmatrix("m")
    y = pt.sin(pt.dot(m, x)).sum() * pt.expm1(x).sum()
    f = pytensor.function([x, m], y, mode=mode())
    compiled = _eqgraph_function(f)
    assert compiled.stages.whole_function == "pending"   # the NumPy program serves until it is ready
    assert compiled.wait_compiled(timeout=300)
    xv, mv = np.array([0.25, 1.5]), np.array([[1.0, -2.0], [0.5, 3.0]])
    np.testing.assert_allclose(f(xv, mv), np.sin(mv @ xv).sum() * np.expm1(xv).sum(), rtol=1e-13)


def test_a_graph_compiled_before_is_loaded_from_the_graph_cache(tmp_path, monkeypatch):
    """The mode's compiles go through eqgraph.function, so a graph that PyTensor hands it again
    (a sampler's next process) skips the e-graph."""
    monkeypatch.setattr(eg.config, "graph_cache", str(tmp_path))   # off in the tests' conftest

    def compiled():
        x, m = pt.dvector("x"), pt.dmatrix("m")
        y = pt.log1p(pt.exp(pt.dot(m, x))).sum() + (x * x).sum()
        return pytensor.function([x, m], [y, pt.grad(y, x)], mode=mode())

    first, again = compiled(), compiled()
    assert _eqgraph_function(first).stages.encoded is not None
    assert _eqgraph_function(again).stages.encoded is None
    values = np.array([0.5, -1.0, 2.0]), np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    for got, want in zip(again(*values), first(*values)):
        np.testing.assert_allclose(got, want, rtol=1e-13)
