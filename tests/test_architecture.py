"""The package's structure, read from its source: layers, cycles, function length, family names.

- dependencies point one way, ``data -> models -> inference -> reports -> bayesclass`` (the API and CLI), with
  the foundation modules ``bayesclass._lazy``, ``bayesclass._cache`` and ``bayesclass._interrupts`` below all: no
  module imports a layer above its own, even inside a function;
- no import cycle between modules (imports inside functions included; ``TYPE_CHECKING`` blocks excluded);
- no function body is longer than 100 lines;
- outside ``models/``, no code compares anything with a family's registry name (families are data: a new one is
  one module and one registry line).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bayesclass.models import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"data": "bayesclass.data", "models": "bayesclass.models", "inference": "bayesclass.inference"}
FOLDERS |= {"reports": "bayesclass.reports", "bayesclass": "bayesclass"}
LAYERS = ("foundation", "data", "models", "inference", "reports", "bayesclass")
FOUNDATION = {"bayesclass._lazy", "bayesclass._cache", "bayesclass._interrupts"}


def _modules() -> dict[str, Path]:
    modules = {}
    for folder, package in FOLDERS.items():
        for path in (ROOT / folder).rglob("*.py"):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            name = ".".join((package, *parts[:-1], *(() if parts[-1] == "__init__" else parts[-1:])))
            modules[name] = path
    return modules


MODULES = _modules()


def _layer(module: str) -> int:
    if module in FOUNDATION:
        return 0
    for index, layer in enumerate(LAYERS[1:-1], start=1):
        if module == f"bayesclass.{layer}" or module.startswith(f"bayesclass.{layer}."):
            return index
    return len(LAYERS) - 1  # bayesclass itself, its CLI and API modules


def _is_type_checking(node: ast.If) -> bool:
    return ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def _imports(module: str) -> set[str]:
    """The package modules ``module`` imports (anywhere but in ``if TYPE_CHECKING:``)."""
    tree = ast.parse(MODULES[module].read_text())
    skipped = {id(child) for node in ast.walk(tree) if isinstance(node, ast.If) and _is_type_checking(node)
               for child in ast.walk(node)}  # fmt: skip
    package = module if MODULES[module].name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        found |= {name for name in names if name in MODULES and name != module}
    return found


GRAPH = {module: _imports(module) for module in MODULES}


def test_the_module_map_sees_the_whole_package():
    assert {"bayesclass.inference.result", "bayesclass.inference.engines.fit", "bayesclass.cli"} <= set(MODULES)
    assert "bayesclass.inference.result" in GRAPH["bayesclass.inference.engines.fit"]


def test_no_module_imports_a_layer_above_its_own():
    upward = sorted(
        f"{module} ({LAYERS[_layer(module)]}) imports {target} ({LAYERS[_layer(target)]})"
        for module, targets in GRAPH.items()
        for target in targets
        if _layer(target) > _layer(module)
    )
    assert not upward, upward


def test_no_import_cycle():
    cycles, state = [], {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for target in sorted(GRAPH[module]):
            if state.get(target) == "open":
                cycles.append(path[path.index(target) :] + [target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = "done"

    for module in sorted(GRAPH):
        if module not in state:
            visit(module, [module])
    # a package's __init__ re-exporting its own submodules is not a cycle of concerns: drop parent <-> child pairs
    real = [
        cycle
        for cycle in cycles
        if not all(b.startswith(f"{a}.") or a.startswith(f"{b}.") for a, b in zip(cycle, cycle[1:], strict=False))
    ]
    assert not real, real


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_function_body_is_over_100_lines(module):
    long = [
        f"{node.name} ({node.end_lineno - node.body[0].lineno + 1} lines)"
        for node in ast.walk(ast.parse(MODULES[module].read_text()))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.body[0].lineno + 1 > 100
    ]
    assert not long, long


def test_no_code_outside_models_branches_on_a_family_name():
    names = set(REGISTRY)
    found = []
    for module, path in MODULES.items():
        if module.startswith("bayesclass.models"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                constants = [part for part in (node.left, *node.comparators) if isinstance(part, ast.Constant)]
                if any(constant.value in names for constant in constants):
                    found.append(f"{module}:{node.lineno}: {ast.unparse(node)}")
    assert not found, found


def test_no_code_outside_the_engines_branches_on_a_sampling_methods_name():
    from bayesclass.inference.engines.methods import SAMPLERS

    found = []
    for module, path in MODULES.items():
        if module.startswith(("bayesclass.inference.engines", "bayesclass.models")):
            continue  # the engines are the methods; a family says which methods its hyperparameters allow
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                parts = [node.left, *node.comparators]
                constants = [part.value for part in parts if isinstance(part, ast.Constant)]
                constants += [item.value for part in parts if isinstance(part, ast.Tuple | ast.List | ast.Set)
                              for item in part.elts if isinstance(item, ast.Constant)]  # fmt: skip
                if any(value in SAMPLERS for value in constants):
                    found.append(f"{module}:{node.lineno}: {ast.unparse(node)}")
    assert not found, found
