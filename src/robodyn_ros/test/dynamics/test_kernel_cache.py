"""dynamics.jit: the kernel cache. Its folder is keyed by the source of every module of the
package that compiles a kernel, in whichever layer it lives (numba checks a cached kernel only
against its own file, not the helpers inlined into it), and every kernel caches there. Processes
that start on an empty cache at once compile each kernel once between them: the others wait
for the module's lock and load the build."""

from __future__ import annotations

import ast
import graphlib
import importlib
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

from numba.core.dispatcher import Dispatcher

from robodyn_ros.dynamics.jit import KERNEL_SOURCES, PACKAGE, CEntry, kernel_cache_dir

DECORATORS = {"c_entry", "cached", "kernel", "kernel_helper", "long_kernel", "routine"}


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


def kernel_functions() -> Iterator[tuple[str, str, object]]:
    """(source, name, value) of each numba function and C entry each kernel module defines."""
    for source in KERNEL_SOURCES:
        module = importlib.import_module(f"robodyn_ros.{source.removesuffix('.py')}"
                                         .replace("/", "."))
        for name, value in vars(module).items():
            if isinstance(value, (Dispatcher, CEntry)) and value.__module__ == module.__name__:
                yield source, name, value


def test_every_kernel_caches_in_the_keyed_folder() -> None:
    """Each numba function of each kernel module, dynamics/ or above, caches in
    kernel_cache_dir(), which numba fixed when the function was decorated (a C entry: when it
    was compiled, on first use; the first entry of each module is loaded here)."""
    folder = kernel_cache_dir()
    checked_entry: set[str] = set()
    for source, name, value in kernel_functions():
        if isinstance(value, CEntry):
            if source in checked_entry:
                continue
            checked_entry.add(source)
            value = value.compiled
        assert Path(value._cache.cache_path).parent == folder, f"{source}: {name}"


def test_every_kernel_compiles_under_its_module_lock() -> None:
    """Each numba function of each kernel module loads or compiles under a lock: a dispatcher
    under its module's, through its locked compile; a C entry under one of its own, when it is
    first used (which leaves its lock file in the cache folder)."""
    folder = kernel_cache_dir()
    for source, name, value in kernel_functions():
        if isinstance(value, Dispatcher):
            assert "compile" in vars(value), f"{source}: {name} compiles unlocked"
        elif value._compiled is not None:
            assert (folder / f"{value.lock_name}.lock").is_file(), f"{source}: {name}"


def kernel_module_imports() -> dict[str, set[str]]:
    """Each kernel module (as its import name) → the kernel modules it imports."""
    modules = {f"robodyn_ros.{source.removesuffix('.py').replace('/', '.')}": PACKAGE / source
               for source in KERNEL_SOURCES}
    graph = {}
    for module, path in modules.items():
        imported: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                imported.add(node.module or "")
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
        graph[module] = imported & modules.keys()
    return graph


def test_kernel_modules_import_one_another_without_a_cycle() -> None:
    """A compile holds its module's lock and then those of the modules its callees live in,
    which it imports: with no cycle among the kernel modules' imports, two processes never
    hold each a lock the other waits for."""
    graph = kernel_module_imports()
    assert graph["robodyn_ros.dynamics.task_space"]  # the graph is read
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError on a cycle


# Kernels of two modules, one importing the other, and a C entry above them: a compile of
# twice_shifted takes high's lock, again for shifted (the same module), then low's for scaled.
KERNEL_MODULES = {
    "low": """
        from robodyn_ros.dynamics.jit import routine

        @routine
        def scaled(x):
            return 2.0 * x
    """,
    "high": """
        from low import scaled
        from robodyn_ros.dynamics.jit import kernel, routine

        @routine
        def shifted(x):
            return scaled(x) + 1.0

        @kernel
        def twice_shifted(x):
            return 2.0 * shifted(x)
    """,
    "entries": """
        from numba import carray, types
        from high import shifted
        from robodyn_ros.dynamics.jit import c_entry

        POINTER = types.CPointer(types.float64)

        @c_entry(types.void(POINTER, POINTER))
        def shifted_entry(x, out):
            carray(out, 1)[0] = shifted(carray(x, 1)[0])
    """,
}

# A process that imports the kernel modules, says "ready", waits for a line on stdin, then
# calls the kernels named in argv[1] (or imports entries and calls its C entry, which compiles
# it), in that order, and prints how many times it compiled each (a dispatcher's cache misses;
# a C entry compiles where it did not load).
COMPILING_PROCESS = """
    import ctypes, importlib, json, sys
    import numpy as np
    import low, high

    print("ready", flush=True)
    sys.stdin.readline()
    kernels = {"scaled": low.scaled, "shifted": high.shifted, "twice_shifted": high.twice_shifted}
    answers = {}
    for name in sys.argv[1].split(","):
        if name == "entries":
            entries = importlib.import_module("entries")
            x, out = np.array([1.0]), np.zeros(1)
            entries.shifted_entry.ctypes(x.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
                                         out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
            answers[name] = out[0]
        else:
            answers[name] = kernels[name](1.0)
    compiles = {name: sum(kernel._cache_misses.values()) for name, kernel in kernels.items()}
    if "entries" in sys.modules:
        compiles["shifted_entry"] = 1 - sys.modules["entries"].shifted_entry.cache_hits
    print(json.dumps({"answers": answers, "compiles": compiles}), flush=True)
"""

EXPECTED = {"scaled": 2.0, "shifted": 3.0, "twice_shifted": 6.0, "entries": 3.0}


def _kernel_folder(tmp_path: Path) -> dict[str, str]:
    """The kernel modules written to tmp_path/modules; the environment of a process that
    imports them and caches in tmp_path/cache, empty."""
    modules = tmp_path / "modules"
    modules.mkdir()
    for name, text in {**KERNEL_MODULES, "compiling": COMPILING_PROCESS}.items():
        (modules / f"{name}.py").write_text(textwrap.dedent(text), encoding="utf-8")
    return {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
            "PYTHONPATH": os.pathsep.join((str(modules), str(PACKAGE.parent)))}


def _start(environment: dict[str, str], *arguments: str) -> subprocess.Popen:
    """A Python process of `arguments`, once it has said "ready"."""
    process = subprocess.Popen([sys.executable, *arguments], env=environment,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline() == "ready\n"
    return process


def _compiling(environment: dict[str, str], order: str) -> subprocess.Popen:
    """A COMPILING_PROCESS that will call the kernels of `order`, ready."""
    modules = environment["PYTHONPATH"].split(os.pathsep)[0]
    return _start(environment, str(Path(modules, "compiling.py")), order)


def _finish(process: subprocess.Popen) -> dict:
    out, _ = process.communicate("go\n", timeout=300)  # no wait on a lock held in a cycle
    assert process.returncode == 0, out
    return json.loads(out)


def test_processes_on_an_empty_cache_compile_each_kernel_once(tmp_path: Path) -> None:
    """Two processes, released at once, call the kernels in opposite orders (the top one
    first, and the bottom one first): each kernel and the C entry are compiled by one of them
    and loaded by the other, the answers are right, and neither waits forever."""
    environment = _kernel_folder(tmp_path)
    orders = ("twice_shifted,entries", "scaled,entries,twice_shifted")
    processes = [_compiling(environment, order) for order in orders]
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    reports = [_finish(process) for process in processes]
    for order, report in zip(orders, reports, strict=True):
        assert report["answers"] == {name: EXPECTED[name] for name in order.split(",")}
    for name in ("scaled", "shifted", "twice_shifted", "shifted_entry"):
        compiles = [report["compiles"][name] for report in reports]
        assert sum(compiles) == 1, f"{name} compiled {compiles} times by the two processes"


HOLDING_PROCESS = """
    import time
    from robodyn_ros.dynamics.jit import kernel_cache_dir, module_compile_lock

    with module_compile_lock("low", kernel_cache_dir()):
        print("ready", flush=True)
        time.sleep(600)
"""


def test_a_process_killed_holding_a_lock_blocks_no_other(tmp_path: Path) -> None:
    environment = _kernel_folder(tmp_path)
    holder = _start(environment, "-c", textwrap.dedent(HOLDING_PROCESS))
    holder.kill()
    holder.wait()
    report = _finish(_compiling(environment, "scaled"))
    assert report["answers"] == {"scaled": 2.0}
    assert report["compiles"]["scaled"] == 1
