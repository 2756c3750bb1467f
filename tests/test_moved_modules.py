"""Graph objects moved down to the tensor level (issue 10); their old import paths still give
the same objects."""

import importlib
import sys

import pytest

import eqgraph as eg
from eqgraph.tensor import grad_blocker, sharedvar


def test_shared_variables_live_at_the_tensor_level_and_the_old_path_still_works(monkeypatch):
    assert eg.shared is sharedvar.shared and eg.SharedVariable is sharedvar.SharedVariable
    monkeypatch.delitem(sys.modules, "eqgraph.exec.shared", raising=False)
    with pytest.deprecated_call(match="eqgraph.tensor.sharedvar"):
        old = importlib.import_module("eqgraph.exec.shared")
    for name in ("Container", "SharedVariable", "TensorSharedVariable", "shared"):
        assert getattr(old, name) is getattr(sharedvar, name), name
    assert isinstance(eg.shared(1.0), old.SharedVariable)


def test_grad_blocker_lives_at_the_tensor_level_and_the_old_path_still_works():
    types = importlib.import_module("eqgraph.grad.types")
    for name in ("GradBlocker", "zero_grad", "disconnected_grad"):
        assert getattr(types, name) is getattr(grad_blocker, name), name
    assert eg.zero_grad is grad_blocker.zero_grad and eg.disconnected_grad is grad_blocker.disconnected_grad
    x = eg.tensor.dvector("x")
    assert isinstance(eg.zero_grad(x).owner.op, types.GradBlocker)



def _imports_of_each_module():
    """{module: the eqgraph modules it imports}, read with ``ast`` by bench/structure.py."""
    structure = importlib.import_module("structure")
    paths = {structure.module_name(p): p for p in structure.ROOT.rglob("*.py")}
    return {name: {target for target, _, _ in structure.imports(structure.ast.parse(path.read_text()), name,
                                                                set(paths))}
            for name, path in paths.items()}


def test_inspect_is_a_leaf_and_the_schema_imports_nothing_from_grad():
    imports = _imports_of_each_module()
    importers_of_inspect = {m for m, targets in imports.items() if "eqgraph.inspect" in targets}
    assert importers_of_inspect == {"eqgraph"}  # only the package, to re-export rewrite/equivalent
    assert not any(t.startswith("eqgraph.grad") for t in imports["eqgraph.egraph.schema"])
    assert "eqgraph.extract.view" in imports["eqgraph.function"]  # f.stages.egraph, from below


def test_tensor_variables_module_has_a_name_the_variance_function_does_not_hide():
    # tensor/var.py was shadowed by et.var, the variance; it is tensor/variable.py now. No alias
    # is kept: importing a module named var would rebind et.var to the module.
    from eqgraph.tensor import variable

    assert callable(eg.tensor.var) and eg.tensor.TensorVariable is variable.TensorVariable
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("eqgraph.tensor.var")
    assert callable(eg.tensor.var)
