"""dynamics.jit: the kernel cache. Its folder is keyed by the source of every module of the
package that compiles a kernel, in whichever layer it lives (numba checks a cached kernel only
against its own file, not the helpers inlined into it), and every kernel caches there."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from numba.core.ccallback import CFunc
from numba.core.dispatcher import Dispatcher

from robodyn_ros.dynamics.jit import KERNEL_SOURCES, PACKAGE, kernel_cache_dir

DECORATORS = {"cached", "kernel", "kernel_helper", "long_kernel", "routine"}


def compiles_kernels(path: Path) -> bool:
    """Whether the module imports numba or one of dynamics.jit's decorators."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            modules = [node.module]
            if node.module == "robodyn_ros.dynamics.jit" and DECORATORS & {
                    alias.name for alias in node.names}:
                return True
        else:
            continue
        if any(module.split(".")[0] == "numba" for module in modules):
            return True
    return False


def kernel_modules() -> set[str]:
    """Every module of the package that compiles a kernel, as a file relative to the package."""
    return {path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py")
            if compiles_kernels(path)}


def test_every_module_that_compiles_a_kernel_keys_the_cache() -> None:
    found = kernel_modules()
    assert {"sim/rollout.py", "control/compiled_laws.py"} <= found  # kernels above dynamics/
    assert found - set(KERNEL_SOURCES) == set(), "kernel modules missing from KERNEL_SOURCES"
    assert len(set(KERNEL_SOURCES)) == len(KERNEL_SOURCES)
    for source in KERNEL_SOURCES:
        assert (PACKAGE / source).is_file(), source


def test_every_kernel_caches_in_the_keyed_folder() -> None:
    """Each numba function of each kernel module, dynamics/ or above, caches in
    kernel_cache_dir(), which numba fixed when the function was decorated."""
    folder = kernel_cache_dir()
    for source in KERNEL_SOURCES:
        module = importlib.import_module(f"robodyn_ros.{source.removesuffix('.py')}"
                                         .replace("/", "."))
        for name, value in vars(module).items():
            if isinstance(value, (Dispatcher, CFunc)) and value.__module__ == module.__name__:
                assert Path(value._cache.cache_path).parent == folder, f"{source}: {name}"
