"""The package's layering, read from its imports: inspect is a leaf, the schema imports nothing
from grad, and no alias module stands in for a moved one."""

import importlib

import pytest

import eqgraph as eg


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


@pytest.mark.parametrize("old", ["eqgraph.exec.shared", "eqgraph.rules.saturate", "eqgraph.rules.encode",
                                 "eqgraph.rules.schema", "eqgraph.rules.adapter", "eqgraph.rules.egraph",
                                 "eqgraph.rules.base", "eqgraph.rules.check"])
def test_no_alias_module_is_kept_for_an_old_path(old):
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)
