"""``eqgraph.pytensor.use()``: inside the block, PyTensor's default mode is eqgraph's and
``FAST_COMPILE`` requests link with PyTensor's ``PerformLinker``, so that the functions a library
compiles on its own (PyMC's trace function and initial point) never wait for PyTensor's C
compiler; a graph eqgraph cannot translate (a random draw) runs on ``PerformLinker`` instead."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytensor = pytest.importorskip("pytensor")

import pytensor.compile.mode as pytensor_modes  # noqa: E402
import pytensor.tensor as pt  # noqa: E402
try:   # PyTensor 3 moved it
    from pytensor.compile.maker import FunctionMaker  # noqa: E402
except ImportError:
    from pytensor.compile.function.types import FunctionMaker  # noqa: E402
from pytensor.link.basic import PerformLinker  # noqa: E402

from eqgraph.pytensor import EqgraphDefaultLinker, EqgraphLinker, UnsupportedOp, use  # noqa: E402
from eqgraph.pytensor.convert import UnsupportedType  # noqa: E402

# PyTensor 3 warns that a random op's call will return its next generator too; these tests take it
# from the node's outputs, which both versions give
pytestmark = pytest.mark.filterwarnings("ignore:RandomVariable Ops will stop hiding:DeprecationWarning")


def test_a_function_compiled_without_a_mode_inside_the_block_runs_on_eqgraph():
    x = pt.dvector("x")
    with use():
        f = pytensor.function([x], [pt.exp(x).sum(), pt.grad(pt.exp(x).sum(), x)])
    assert type(f.maker.linker) is EqgraphDefaultLinker and f.maker.linker.fallback is None
    assert f.maker.linker.eqgraph_function is not None
    values = np.array([0.5, -1.0, 2.0])
    total, grad = f(values)
    np.testing.assert_allclose(total, np.exp(values).sum(), rtol=1e-14)
    np.testing.assert_allclose(grad, np.exp(values), rtol=1e-14)


def test_leaving_the_block_restores_pytensor_defaults_also_after_an_error():
    before = pytensor.config.mode, pytensor_modes.FAST_COMPILE, pytensor_modes.predefined_modes["FAST_COMPILE"]
    with pytest.raises(RuntimeError, match="inside"):
        with use() as mode:
            assert pytensor.config.mode is mode
            assert type(pytensor_modes.get_mode("FAST_COMPILE").linker) is PerformLinker
            assert type(pytensor_modes.FAST_COMPILE.linker) is PerformLinker
            raise RuntimeError("inside")
    after = pytensor.config.mode, pytensor_modes.FAST_COMPILE, pytensor_modes.predefined_modes["FAST_COMPILE"]
    assert all(a is b for a, b in zip(after, before))


def test_a_random_draw_falls_back_to_perform_and_keeps_its_generator_updates():
    rng = pytensor.shared(np.random.default_rng(7))
    next_rng, draw = pt.random.normal(0.0, 1.0, size=3, rng=rng).owner.outputs
    with use():
        f = pytensor.function([], draw, updates={rng: next_rng})
    assert type(f.maker.linker) is EqgraphDefaultLinker
    assert isinstance(f.maker.linker.fallback, (UnsupportedOp, UnsupportedType))
    first, second = f(), f()
    expected = np.random.default_rng(7)
    np.testing.assert_array_equal(first, expected.normal(0.0, 1.0, size=3))
    np.testing.assert_array_equal(second, expected.normal(0.0, 1.0, size=3))


def test_the_explicit_eqgraph_mode_still_refuses_what_it_cannot_translate():
    from eqgraph.pytensor import mode

    rng = pytensor.shared(np.random.default_rng(7))
    draw = pt.random.normal(0.0, 1.0, size=3, rng=rng)
    with pytest.raises((UnsupportedOp, UnsupportedType), match="from_pytensor"):
        pytensor.function([], draw, mode=mode())


def test_fast_compile_inside_the_block_never_loads_pytensors_c_virtual_machine(tmp_path):
    """PyTensor's own FAST_COMPILE links with its virtual machine, whose module imports (and with an
    empty compiledir compiles) a C extension; inside the block FAST_COMPILE runs no such module."""
    script = textwrap.dedent("""
        import sys
        import pytensor, pytensor.tensor as pt
        from eqgraph.pytensor import use
        x = pt.dvector("x")
        with use():
            f = pytensor.function([x], pt.exp(x) + 1, mode="FAST_COMPILE")
            g = pytensor.function([x], pt.exp(x) + 1, mode=pytensor.compile.mode.FAST_COMPILE)
        assert f([0.0])[0] == 2.0 and g([0.0])[0] == 2.0
        print("pytensor.link.c.cvm" in sys.modules)
    """)
    env = dict(os.environ, PYTENSOR_FLAGS=f"compiledir={tmp_path / 'pytensor'}")
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "False"


def test_pm_sample_inside_the_block_compiles_nothing_with_pytensors_own_linkers(monkeypatch):
    pm = pytest.importorskip("pymc")
    from pymc_models import MODELS

    linkers = []
    create = FunctionMaker.create

    def recording_create(self, *args, **kwargs):
        function = create(self, *args, **kwargs)
        linkers.append(self.linker)
        return function

    monkeypatch.setattr(FunctionMaker, "create", recording_create)
    model = MODELS["eight schools (non-centered)"][0]()
    with model, use() as mode:
        idata = pm.sample(draws=20, tune=20, chains=1, cores=1, random_seed=3, progressbar=False,
                          compute_convergence_checks=False, compile_kwargs={"mode": mode})
    assert linkers and {type(k) for k in linkers} <= {EqgraphLinker, EqgraphDefaultLinker, PerformLinker}, linkers
    # the function NUTS calls, the largest: on eqgraph, not fallen back
    nuts = max(linkers, key=lambda k: len(k.fgraph.apply_nodes))
    assert isinstance(nuts, EqgraphDefaultLinker) and nuts.fallback is None and nuts.eqgraph_function is not None
    assert np.isfinite(idata.posterior["mu"].values).all()
