"""verify_grad lives above the compiler (eqgraph.testing); grad/ imports nothing above itself."""

import ast
import importlib
from pathlib import Path

import numpy as np

import eqgraph as eg
import eqgraph.tensor as et
from eqgraph.testing import verify_grad

GRAD_DIR = Path(importlib.import_module("eqgraph.grad").__file__).parent
ABOVE_GRAD = ("eqgraph.function", "eqgraph.testing", "eqgraph.exec", "eqgraph.extract", "eqgraph.inspect")


def test_eg_verify_grad_is_the_testing_one():
    assert eg.verify_grad is verify_grad
    verify_grad(lambda x: et.tanh(x) * x, [np.array([0.3, -1.2])], rng=np.random.default_rng(0))


def test_grad_modules_import_nothing_above_them():
    upward = []
    for path in sorted(GRAD_DIR.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            upward += [(path.name, node.lineno, n) for n in names if n.startswith(ABOVE_GRAD)]
    assert upward == []
