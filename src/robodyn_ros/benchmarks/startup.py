"""Start-up cost, each figure from a fresh interpreter: import, URDF load and first calls.

    .venv/bin/python src/robodyn_ros/benchmarks/startup.py [--repeat 3] [--cold 1] [--docs]

A child process (this script with --child) times `import robodyn_ros`, `Robot.from_urdf` of the
bundled panda, the first call of every Robot function on one state, and a new Robot of another
gravity, armature and payload (with_gravity, with_armature, with_payload: no compiling) with
its first M, and prints them as JSON.
Warm: a first child fills numba's kernel cache, then `--repeat` new children are measured
(median). Cold: each of `--cold` children gets NUMBA_CACHE_DIR pointing at a fresh temporary
folder, so every kernel compiles. Target: warm from_urdf + first calls ≤ 1 s. --docs also
writes the table to docs/benchmarks/startup.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence

import numpy as np

from common import (
    BUNDLED_PANDA,
    Report,
    add_docs_option,
    format_ms,
    mark,
    markdown_table,
    random_state,
    robot_calls,
)

FRAME = "panda_hand_tcp"
IMPORT, LOAD, PROCESS = "import robodyn_ros", "Robot.from_urdf (bundled panda)", "whole process"
TARGET_S = 1.0
WALL = (9.81, 0.0, 0.0)

Figures = dict[str, float]  # figure → seconds


def child() -> None:
    """Time the start-up steps in this (fresh) process and print them as one JSON line."""
    start = time.perf_counter_ns()
    import robodyn_ros

    figures = {IMPORT: (time.perf_counter_ns() - start) * 1e-9}
    start = time.perf_counter_ns()
    robot = robodyn_ros.Robot.from_urdf(BUNDLED_PANDA)
    figures[LOAD] = (time.perf_counter_ns() - start) * 1e-9
    for name, call in robot_calls(robot, FRAME, random_state(robot.nv)).items():
        start = time.perf_counter_ns()
        call()
        figures[f"first {name}"] = (time.perf_counter_ns() - start) * 1e-9
    q = random_state(robot.nv).q
    for name, change in (("robot.with_gravity (a wall)", lambda: robot.with_gravity(WALL)),
                         ("robot.with_armature (every joint)",
                          lambda: robot.with_armature(dict.fromkeys(robot.joint_names, 0.1))),
                         ("robot.with_payload (1.5 kg in the hand)",
                          lambda: robot.with_payload("panda_hand", 1.5, (0.0, 0.0, 0.1),
                                                     np.diag([0.004, 0.006, 0.008])))):
        start = time.perf_counter_ns()
        change().mass_matrix(q)
        figures[f"{name}, then M"] = (time.perf_counter_ns() - start) * 1e-9
    print(json.dumps(figures))


def run_child(env: Mapping[str, str]) -> Figures:
    """The figures of one fresh child process, plus its whole wall time seen from here."""
    start = time.perf_counter_ns()
    done = subprocess.run(
        [sys.executable, __file__, "--child"], env=env, capture_output=True, text=True
    )
    elapsed = (time.perf_counter_ns() - start) * 1e-9
    if done.returncode != 0:
        sys.exit(f"startup child failed ({done.returncode}):\n{done.stderr}")
    return {**json.loads(done.stdout.splitlines()[-1]), PROCESS: elapsed}


def medians(runs: Sequence[Figures]) -> Figures:
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def warm(repeat: int) -> Figures:
    env = dict(os.environ)
    run_child(env)  # fills the kernel cache if this version of the kernels is not in it yet
    return medians([run_child(env) for _ in range(repeat)])


def cold(repeat: int) -> Figures | None:
    runs = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix="robodyn-cold-cache-") as cache:
            runs.append(run_child({**os.environ, "NUMBA_CACHE_DIR": cache}))
    return medians(runs) if runs else None


def with_totals(figures: Figures) -> Figures:
    """The figures with the sums: first calls, from_urdf + first calls, import + all that."""
    first = sum(value for key, value in figures.items() if key.startswith("first "))
    totals = {
        "first calls, total": first,
        "from_urdf + first calls": figures[LOAD] + first,
        "import + from_urdf + first calls": figures[IMPORT] + figures[LOAD] + first,
    }
    process = {PROCESS: figures[PROCESS]}
    return {key: v for key, v in figures.items() if key != PROCESS} | totals | process


def startup_table(columns: Mapping[str, Figures]) -> str:
    tables = {name: with_totals(figures) for name, figures in columns.items()}
    keys = next(iter(tables.values()))
    rows = [[key, *(format_ms(table[key] * 1e3) for table in tables.values())] for key in keys]
    text = markdown_table(["figure", *(f"{name} ms" for name in tables)], rows)
    budget = tables["warm"]["from_urdf + first calls"]
    verdict = mark(budget <= TARGET_S)
    return f"{text}\n\nwarm from_urdf + first calls: {budget * 1e3:.0f} ms (≤ 1000) {verdict}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="warm processes to measure")
    parser.add_argument("--cold", type=int, default=1, help="cold-cache processes (0: skip)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    add_docs_option(parser)
    args = parser.parse_args(argv)
    if args.child:
        child()
        return
    report = Report.start(__file__, "Start-up", args, argv, internal=("child",))
    columns = {"warm": warm(args.repeat)}
    cold_figures = cold(args.cold)
    if cold_figures is not None:
        columns["cold"] = cold_figures
    report.print(f"One state, bundled panda (frame {FRAME})\n")
    report.print(startup_table(columns))
    report.finish()


if __name__ == "__main__":
    main()
