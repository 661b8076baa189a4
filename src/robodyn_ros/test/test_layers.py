"""The package's layers (docs/development.md): every import of every module of robodyn_ros, at
its top, inside a function or under TYPE_CHECKING alike, goes to its own layer or one below,
and no modules import each other in a circle. Read from the source with ast: nothing is
imported to check it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "robodyn_ros"

# bottom up; a module's layer is its folder's, or its own name's at the package root
LAYERS = (
    ("errors", "resources", "figures"),
    ("model",),
    ("dynamics",),
    ("robot", "__init__", "_state_call"),  # the package's face hands on Model and Robot
    ("contact", "control", "parallel"),
    ("sim",),
    ("startup", "testing"),
    ("bag",),
    ("identification",),  # from a bag's joint states to the URDF of an estimate
    ("ros",),
    ("cli",),
)
LAYER_OF = {part: floor for floor, parts in enumerate(LAYERS) for part in parts}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> int:
    """The layer of a robodyn_ros module (its name dotted); the package itself is its face."""
    parts = module.split(".")
    return LAYER_OF[parts[1] if len(parts) > 1 else "__init__"]


def imports_of(path: Path, package: str, modules: set[str]) -> set[str]:
    """Those of `modules` that the file, of the package `package` (dotted), imports anywhere
    in it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the file's package up
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        found |= {name for name in names if name in modules}
    return found


def import_graph() -> dict[str, set[str]]:
    files = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    modules = set(files)
    return {module: imports_of(path, module if path.name == "__init__.py"
                               else module.rpartition(".")[0], modules) - {module}
            for module, path in files.items()}


def test_every_module_has_a_layer() -> None:
    unplaced = sorted(module for module in import_graph()
                      if [*module.split("."), "__init__"][1] not in LAYER_OF)
    assert not unplaced, f"modules in no layer of LAYERS: {unplaced}"


def test_no_import_runs_back_up_a_layer() -> None:
    upward = sorted(f"{module} ({layer(module)}) imports {imported} ({layer(imported)})"
                    for module, imported_modules in import_graph().items()
                    for imported in imported_modules if layer(imported) > layer(module))
    assert not upward, "\n".join(upward)


def test_no_modules_import_each_other_in_a_circle() -> None:
    graph = import_graph()
    state: dict[str, str] = {}  # "open" on the current path, "done" after

    def circle_from(module: str, path: list[str]) -> list[str] | None:
        state[module] = "open"
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                return [*path[path.index(imported):], imported] if imported in path \
                    else [module, imported]
            if imported not in state:
                found = circle_from(imported, [*path, imported])
                if found:
                    return found
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            circle = circle_from(module, [module])
            assert circle is None, " -> ".join(circle or ())


@pytest.mark.parametrize("source", [
    "from robodyn_ros.ros.robot_node import RobotNode\n",
    "def late():\n    import robodyn_ros.sim.preview\n",
    "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from robodyn_ros import cli\n",
])
def test_an_import_up_is_seen_wherever_it_is_written(tmp_path, source) -> None:
    """The reader finds an upward import at the top, inside a function and under
    TYPE_CHECKING (a file of the model layer's package, written apart)."""
    path = tmp_path / "probe.py"
    path.write_text(source)
    found = imports_of(path, "robodyn_ros.model", {"robodyn_ros.ros.robot_node",
                                                   "robodyn_ros.sim.preview", "robodyn_ros.cli",
                                                   "robodyn_ros"})
    assert found and max(layer(name) for name in found) > layer("robodyn_ros.model.probe")
