"""Measure eqgraph's structure from its imports and sizes: circles, upward imports,
function-local imports, long modules, long functions, alias modules.

    python bench/structure.py [--verbose]

Reads every module under ``eqgraph/`` with ``ast`` (nothing is imported) and prints:

- import circles: strongly connected components of the module import graph (every import
  counts, at module level or inside a function);
- imports that run up the layers, by the layer order below;
- imports of eqgraph modules inside functions, with file:line;
- modules over ``MAX_LINES`` lines;
- functions and methods over ``MAX_FUNCTION_LINES`` lines (decorators and docstring included);
- alias modules: modules whose body only re-exports names of other modules (a shim kept for
  an old path), where the importers should name the real module.

Exits non-zero when the goal (``violations``) is not met: no circle, at most
``MAX_UPWARD`` upward imports, no long module or function, no alias module.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "eqgraph"
MAX_LINES = 600
MAX_FUNCTION_LINES = 80
MAX_UPWARD = 1

#: the layers from the bottom up; a module may import its own layer or lower ones.
#: ``inspect`` is a leaf above everything; the package's ``__init__``/``__main__`` are the top.
LAYERS = [
    ("terms", "xp", "settings"),
    ("tensor", "from_function"),   # from_function: ops made from Python functions (as_op, wrap_py)
    ("rules",),   # rule text parsed, named and located; egraph loads and runs it
    ("grad", "egraph"),
    ("extract",),
    ("exec",),
    ("graph_cache",),   # what function's pipeline saved on disk: extracted graphs, keyed by their inputs
    ("function", "evaluate", "compile_io"),   # evaluate: Variable.eval, plugged in from above; compile_io: In, Out
    # testing compiles (verify_grad), loops its inner graph, soundness both sides of a rule: beside inspect
    ("inspect", "testing", "loops", "explore", "soundness"),
    ("pytensor",),   # the PyTensor bridge: converts onto everything below
    ("__init__", "__main__"),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts.pop()
    return ".".join(parts)


def layer(module: str) -> int:
    top = module.split(".")[1] if "." in module else "__init__"
    for i, names in enumerate(LAYERS):
        if top in names:
            return i
    raise KeyError(f"{module}: no layer for {top!r}; add it to LAYERS")


def imports(tree: ast.Module, module: str, modules: set[str]):
    """(imported eqgraph module, line, inside a function) for each import in ``tree``."""
    found = []

    def resolve(name: str) -> str | None:
        while name and name not in modules:  # ``from eqgraph.x import y``: y may be a name in x
            name = name.rpartition(".")[0]
        return name or None

    def visit(node, local: bool):
        for child in ast.iter_child_nodes(node):
            inner = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.split(".")[0] == "eqgraph":
                        found.append((resolve(alias.name), child.lineno, local))
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0 \
                    and child.module.split(".")[0] == "eqgraph":
                for alias in child.names:
                    target = resolve(f"{child.module}.{alias.name}")
                    found.append((target, child.lineno, local))
            visit(child, inner)

    visit(tree, False)
    return [(t, line, local) for t, line, local in found if t is not None and t != module]


def long_functions(tree: ast.Module, where: str) -> list[tuple[str, str, int]]:
    """(file:line, qualified name, length) of each function in ``tree`` over MAX_FUNCTION_LINES,
    nested ones included; a function's length runs from its first decorator to its last line."""
    found = []

    def visit(node, prefix: str):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    first = min([child.lineno] + [d.lineno for d in child.decorator_list])
                    length = child.end_lineno - first + 1
                    if length > MAX_FUNCTION_LINES:
                        found.append((f"{where}:{child.lineno}", name, length))
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def _only_reexports(tree: ast.Module) -> bool:
    """Whether the body is nothing but a docstring, imports, ``__all__`` and ``a = b`` renames."""
    for i, statement in enumerate(tree.body):
        if i == 0 and isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue  # the docstring
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            renames = len(names) == len(targets) and isinstance(statement.value, (ast.Name, ast.Attribute))
            if names == ["__all__"] or renames:
                continue
        return False
    return True


def is_alias(tree: ast.Module, module: str, path: Path, imported: list[str]) -> bool:
    """A module whose body only re-exports another's names: a plain module that defines nothing,
    or a package ``__init__`` that re-exports nothing of its own package (a package that gathers
    its own submodules' names is its public face, not an alias)."""
    if not imported or not _only_reexports(tree):
        return False
    if path.name != "__init__.py":
        return True
    return not any(target.startswith(f"{module}.") for target in imported)


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively; components of more than one module."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
    return out


def measure(verbose: bool = False) -> dict:
    paths = sorted(ROOT.rglob("*.py"))
    modules = {module_name(p): p for p in paths}
    graph: dict[str, set[str]] = defaultdict(set)
    upward, local, long_modules, long_funcs, aliases = [], [], [], [], []
    for name, path in modules.items():
        text = path.read_text()
        lines = text.count("\n")
        if lines > MAX_LINES:
            long_modules.append((name, lines))
        graph[name]
        tree, relative = ast.parse(text), path.relative_to(ROOT.parent)
        long_funcs += long_functions(tree, str(relative))
        found = imports(tree, name, set(modules))
        if is_alias(tree, name, path, [target for target, _, _ in found]):
            aliases.append(name)
        for target, line, inside in found:
            where = f"{relative}:{line}"
            graph[name].add(target)
            if inside and (not local or local[-1][0] != where):  # one per import statement
                local.append((where, target))
            if target != "eqgraph" and layer(target) > layer(name):
                upward.append((where, name, target))
    circles = strongly_connected(graph)
    print(f"modules: {len(modules)}")
    print(f"import circles: {len(circles)}" + "".join(f"\n  {len(c)} modules: {', '.join(c)}" for c in circles))
    print(f"imports up the layers: {len(upward)}"
          + "".join(f"\n  {w}: {a} -> {b}" for w, a, b in upward))
    print(f"function-local imports of eqgraph modules: {len(local)} in {len({w.split(':')[0] for w, _ in local})} files"
          + ("".join(f"\n  {w}: {t}" for w, t in local) if verbose else ""))
    print(f"modules over {MAX_LINES} lines: {len(long_modules)}"
          + "".join(f"\n  {n}: {k}" for n, k in long_modules))
    print(f"functions over {MAX_FUNCTION_LINES} lines: {len(long_funcs)}"
          + "".join(f"\n  {w} {n} ({k} lines)" for w, n, k in long_funcs))
    print(f"alias modules: {len(aliases)}" + "".join(f"\n  {n}" for n in aliases))
    return dict(circles=circles, upward=upward, local=local, long=long_modules, long_functions=long_funcs,
                aliases=aliases)


def violations(measured: dict) -> list[str]:
    """What in ``measured`` (``measure``'s result) misses the goal, one line each; empty if none."""
    found = [f"import circle: {', '.join(c)}" for c in measured["circles"]]
    if len(measured["upward"]) > MAX_UPWARD:
        found += [f"upward import (at most {MAX_UPWARD} allowed): {w}: {a} -> {b}"
                  for w, a, b in measured["upward"]]
    found += [f"module over {MAX_LINES} lines: {n} ({k})" for n, k in measured["long"]]
    found += [f"function over {MAX_FUNCTION_LINES} lines: {w} {n} ({k})"
              for w, n, k in measured["long_functions"]]
    found += [f"alias module: {n}" for n in measured["aliases"]]
    return found


if __name__ == "__main__":
    missed = violations(measure(verbose="--verbose" in sys.argv or "-v" in sys.argv))
    if missed:
        print(f"\n{len(missed)} violations of the goal", file=sys.stderr)
    sys.exit(1 if missed else 0)
