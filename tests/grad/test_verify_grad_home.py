"""verify_grad lives above the compiler (eqgraph.testing); grad/ imports nothing above itself."""

import ast
import importlib
from pathlib import Path

import numpy as np
import pytest

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.testing import verify_grad

GRAD_DIR = Path(importlib.import_module("eqgraph.grad").__file__).parent
ABOVE_GRAD = ("eqgraph.function", "eqgraph.testing", "eqgraph.exec", "eqgraph.extract", "eqgraph.inspect")


def test_eg_verify_grad_is_the_testing_one():
    assert eg.verify_grad is verify_grad
    verify_grad(lambda x: et.tanh(x) * x, [np.array([0.3, -1.2])], rng=np.random.default_rng(0))


def test_the_old_path_still_works_with_a_deprecation_warning():
    grad_package = importlib.import_module("eqgraph.grad")
    with pytest.warns(DeprecationWarning, match="eqgraph.testing"):
        assert grad_package.verify_grad is verify_grad
    with pytest.warns(DeprecationWarning):
        from eqgraph.grad import verify_grad as old  # noqa: F401
    with pytest.raises(AttributeError, match="no_such_name"):
        grad_package.no_such_name  # noqa: B018


def test_grad_modules_import_nothing_above_them_but_the_alias():
    upward = []
    for path in sorted(GRAD_DIR.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            upward += [(path.name, node.lineno, n) for n in names if n.startswith(ABOVE_GRAD)]
    assert [(f, n) for f, _, n in upward] == [("__init__.py", "eqgraph.testing")], upward
