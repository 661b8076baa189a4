"""Start-up cost, each figure from a fresh interpreter: import, URDF load and first calls;
and, on an empty kernel cache, how long the nodes and `robodyn demo` take to serve.

    .venv/bin/python src/robodyn_ros/benchmarks/startup.py [--repeat 3] [--cold 1] \
        [--processes 1] [--docs]

A child process (this script with --child) times `import robodyn_ros`, `Robot.from_urdf` of the
bundled panda, the first call of every Robot function on one state, and a new Robot of another
gravity, armature and payload (with_gravity, with_armature, with_payload: no compiling) with
its first M, and prints them as JSON.
Warm: a first child fills numba's kernel cache, then `--repeat` new children are measured
(median). Cold: each of `--cold` children gets NUMBA_CACHE_DIR pointing at a fresh temporary
folder, so every kernel compiles. Target: warm from_urdf + first calls ≤ 1 s.

Cold processes (`--processes` runs each, median; 0 skips them), each on an empty kernel cache
and measured from the start of its processes, with their helpers compiling ahead
(robodyn_ros.startup.compile_ahead):
- `robodyn demo`, to its end (target ≤ 40 s);
- one dynamics_node (config/dynamics.yaml), to its first dynamics/joint_space message in
  answer to the joint states this script publishes (target ≤ 40 s);
- sim_node, dynamics_node and controller_node started together (config/sim.yaml), until each
  has served: the first joint_states, dynamics and effort_commands (target ≤ 1.15 × one
  dynamics_node).
--docs also writes the tables to docs/benchmarks/startup.md.
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
from pathlib import Path

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
COLD_TARGET_S = 40.0  # robodyn demo, and one dynamics_node's first dynamics
TOGETHER_TARGET = 1.15  # three nodes together, against one dynamics_node
CONFIG = BUNDLED_PANDA.parent.parent / "config"
NODE_PATIENCE_S = 600.0
# the topic each node serves on, and its message type's module and name
SERVES = {"sim_node": ("joint_states", "sensor_msgs.msg", "JointState"),
          "dynamics_node": ("dynamics/joint_space", "robodyn_interfaces.msg",
                            "JointSpaceDynamics"),
          "controller_node": ("effort_commands", "std_msgs.msg", "Float64MultiArray")}
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


def cold_environment(cache: str) -> dict[str, str]:
    """This environment with an empty kernel cache, on a ROS domain of its own (localhost)."""
    return {**os.environ, "NUMBA_CACHE_DIR": cache, "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
            "ROS_DOMAIN_ID": str(100 + os.getpid() % 100)}


def cold_demo() -> float:
    """s of `robodyn demo` on an empty kernel cache, process start to end."""
    with tempfile.TemporaryDirectory(prefix="robodyn-cold-cache-") as cache:
        start = time.perf_counter()
        done = subprocess.run([str(Path(sys.executable).parent / "robodyn"), "demo"],
                              env=cold_environment(cache), capture_output=True, text=True)
        elapsed = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"robodyn demo failed ({done.returncode}):\n{done.stderr}")
    return elapsed


def cold_nodes(nodes: Sequence[str], params: Path) -> dict[str, float]:
    """s from starting `nodes` together, each its own process on one empty kernel cache, to
    the first message each serves (SERVES); joint states are published for a dynamics_node
    started without sim_node."""
    import importlib

    import rclpy
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import JointState

    served: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="robodyn-cold-cache-") as cache:
        environment = cold_environment(cache)
        os.environ["ROS_DOMAIN_ID"] = environment["ROS_DOMAIN_ID"]
        os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
        rclpy.init()
        listener = rclpy.create_node("startup_benchmark")
        start = time.perf_counter()
        for name in nodes:
            topic, module, message = SERVES[name]
            listener.create_subscription(
                getattr(importlib.import_module(module), message), topic,
                lambda _message, name=name: served.setdefault(name, time.perf_counter() - start),
                qos_profile_sensor_data)
        states = listener.create_publisher(JointState, "joint_states", qos_profile_sensor_data)
        rest = JointState(name=[f"panda_joint{i}" for i in range(1, 8)], position=[0.0] * 7)
        processes = [subprocess.Popen(
            [str(Path(sys.executable).parent / name), "--ros-args", "--params-file", str(params),
             "-p", f"robot_description_file:={BUNDLED_PANDA}"],
            env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for name in nodes]
        try:
            while len(served) < len(nodes) and time.perf_counter() - start < NODE_PATIENCE_S:
                if "sim_node" not in nodes:
                    states.publish(rest)
                rclpy.spin_once(listener, timeout_sec=0.05)
        finally:
            for process in processes:
                process.terminate()
                process.wait()
            listener.destroy_node()
            rclpy.shutdown()
    if len(served) < len(nodes):
        sys.exit(f"not served within {NODE_PATIENCE_S:.0f} s: "
                 f"{', '.join(name for name in nodes if name not in served)}")
    return served


def cold_processes(repeat: int) -> str:
    """The table of the cold processes (median of `repeat` runs each) and its verdicts."""
    demo = statistics.median(cold_demo() for _ in range(repeat))
    one = statistics.median(cold_nodes(["dynamics_node"], CONFIG / "dynamics.yaml")
                            ["dynamics_node"] for _ in range(repeat))
    runs = [cold_nodes(list(SERVES), CONFIG / "sim.yaml") for _ in range(repeat)]
    together = {name: statistics.median(run[name] for run in runs) for name in SERVES}
    last = statistics.median(max(run.values()) for run in runs)
    rows = [["robodyn demo, to its end", f"{demo:.1f}"],
            ["one dynamics_node, to its first dynamics", f"{one:.1f}"],
            *([f"three nodes together: {name}, first {SERVES[name][0]}", f"{seconds:.1f}"]
              for name, seconds in together.items()),
            ["three nodes together, all served", f"{last:.1f}"]]
    table = markdown_table(["on an empty kernel cache", "s"], rows)
    verdicts = (
        f"robodyn demo {demo:.1f} s (≤ {COLD_TARGET_S:.0f}) {mark(demo <= COLD_TARGET_S)}; "
        f"first dynamics {one:.1f} s (≤ {COLD_TARGET_S:.0f}) {mark(one <= COLD_TARGET_S)}; "
        f"three nodes together {last / one:.2f} times one (≤ {TOGETHER_TARGET}) "
        f"{mark(last <= TOGETHER_TARGET * one)}"
    )
    return f"{table}\n\n{verdicts}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="warm processes to measure")
    parser.add_argument("--cold", type=int, default=1, help="cold-cache processes (0: skip)")
    parser.add_argument("--processes", type=int, default=1,
                        help="runs of each cold node and demo start (0: skip)")
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
    if args.processes > 0:
        report.print("\nNodes and robodyn demo on an empty kernel cache (each process with "
                     "its compile-ahead helpers)\n")
        report.print(cold_processes(args.processes))
    report.finish()


if __name__ == "__main__":
    main()
