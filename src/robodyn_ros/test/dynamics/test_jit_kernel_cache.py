"""dynamics.jit: the kernel cache. Its folder is keyed by the source of every module of the
package that compiles a kernel, in whichever layer it lives (numba checks a cached kernel only
against its own file, not the helpers inlined into it), and every kernel caches there. Processes
that start on an empty cache at once compile each kernel once between them: the others wait
for the kernel's lock and load the build. compile_ahead's helper processes build on that: they
make a caller's steps ahead of it, mark each in the cache folder, and end with their caller."""

from __future__ import annotations

import ast
import importlib
import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

from numba.core.dispatcher import Dispatcher

from robodyn_ros.dynamics.jit import KERNEL_SOURCES, PACKAGE, CEntry, kernel_cache_dir

DECORATORS = {"borrowing_routine", "c_entry", "cached", "kernel", "kernel_helper", "long_kernel",
              "routine"}


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


def test_every_kernel_compiles_under_its_own_lock() -> None:
    """Each numba function of each kernel module loads or compiles under a lock of its own: a
    dispatcher through its locked compile; a C entry when it is first used (which leaves its
    lock file in the cache folder)."""
    folder = kernel_cache_dir()
    for source, name, value in kernel_functions():
        if isinstance(value, Dispatcher):
            assert "compile" in vars(value), f"{source}: {name} compiles unlocked"
        elif value._compiled is not None:
            assert (folder / f"{value.lock_name}.lock").is_file(), f"{source}: {name}"


# Kernels of two modules, one importing the other, and a C entry above them: a compile of
# twice_shifted takes its lock, then shifted's (the same module), then scaled's.
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
    from robodyn_ros.dynamics.jit import compile_lock, kernel_cache_dir

    with compile_lock("low.scaled", kernel_cache_dir()):
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


# A caller that names the kernels of `argv[1]` as WarmUpSteps (a C entry's step imports
# entries and calls it), compiles them ahead with one helper, makes each call itself, and
# prints the log lines and answers as JSON.
CALLER_PROCESS = """
    import json, sys, time
    from robodyn_ros.startup.compile_ahead import CompileAhead, WarmUpStep
    import steps

    names = sys.argv[1].split(",")
    lines = []
    with CompileAhead(lines.append, helpers=1) as compile_ahead:
        chosen = [WarmUpStep(name, getattr(steps, name)) for name in names]
        compile_ahead.ahead(chosen)
        answers = {name: getattr(steps, name)() for name in names}
        if len(sys.argv) > 2:  # stay, to be killed
            print(json.dumps({"lines": lines}), flush=True)
            time.sleep(600)
    compile_ahead.wait(timeout=120)
    marked = [step.mark.exists() for step in chosen]
    print(json.dumps({"lines": lines, "answers": answers, "marked": marked}), flush=True)
"""

STEPS = """
    import ctypes, importlib
    import numpy as np
    import high, low

    def scaled():
        return low.scaled(1.0)

    def twice_shifted():
        return high.twice_shifted(1.0)

    def entries():
        x, out = np.array([1.0]), np.zeros(1)
        pointer = ctypes.POINTER(ctypes.c_double)
        importlib.import_module("entries").shifted_entry.ctypes(
            x.ctypes.data_as(pointer), out.ctypes.data_as(pointer))
        return out[0]
"""


def _steps_folder(tmp_path: Path) -> dict[str, str]:
    """_kernel_folder's, once, with the steps and the caller beside the kernel modules."""
    modules = tmp_path / "modules"
    if not modules.exists():
        _kernel_folder(tmp_path)
        (modules / "steps.py").write_text(textwrap.dedent(STEPS), encoding="utf-8")
        (modules / "caller.py").write_text(textwrap.dedent(CALLER_PROCESS), encoding="utf-8")
    return {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
            "PYTHONPATH": os.pathsep.join((str(modules), str(PACKAGE.parent)))}


def _caller(tmp_path: Path, names: str, *extra: str) -> subprocess.Popen:
    environment = _steps_folder(tmp_path)
    return subprocess.Popen([sys.executable, str(tmp_path / "modules" / "caller.py"), names,
                             *extra], env=environment, stdout=subprocess.PIPE, text=True)


def _report(process: subprocess.Popen) -> dict:
    out, _ = process.communicate(timeout=300)
    assert process.returncode == 0, out
    return json.loads(out)


def test_a_helper_compiles_the_steps_ahead_and_marks_them(tmp_path: Path) -> None:
    """On an empty cache a helper starts, makes every step, marks it and reports it; the
    caller's own calls answer right, and its log names the steps and their count. A second
    caller, on the cache so marked, starts no helper."""
    names = "twice_shifted,entries,scaled"
    report = _report(_caller(tmp_path, names))
    assert report["answers"] == {name: EXPECTED[name] for name in names.split(",")}
    assert report["marked"] == [True, True, True]
    assert "3 steps not yet in the cache" in report["lines"][0], report["lines"]
    assert "3 of 3 steps compiled ahead or loaded" in report["lines"][-1], report["lines"]
    again = _report(_caller(tmp_path, names))
    assert again["answers"] == report["answers"]
    assert again["lines"] == [], "a warm start started a helper"


def test_steps_that_do_not_pickle_are_made_by_the_caller_alone(tmp_path: Path) -> None:
    environment = _steps_folder(tmp_path)
    code = textwrap.dedent("""
        from robodyn_ros.startup.compile_ahead import CompileAhead, WarmUpStep
        lines = []
        with CompileAhead(lines.append, helpers=1) as compile_ahead:
            compile_ahead.ahead([WarmUpStep("a lambda", lambda: None)])
        print(lines)
    """)
    done = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "compiled here only, the steps do not pickle" in done.stdout


def test_a_helper_ends_with_its_caller(tmp_path: Path) -> None:
    """A caller killed while its helper works leaves no helper behind."""
    caller = _caller(tmp_path, "twice_shifted,entries", "stay")
    assert caller.stdout is not None
    json.loads(caller.stdout.readline())  # the steps are made; the helper may still run
    helpers = _children(caller.pid)
    caller.kill()
    caller.wait()
    deadline = time.monotonic() + 30.0
    while any(_alive(pid) for pid in helpers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in helpers), "a helper outlived its caller"


def _children(pid: int) -> list[int]:
    """The pids of a process's children (from /proc)."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(child) for child in children.read_text().split()] if children.exists() else []


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, ended but not reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"
