"""Rosbag analysis throughput: a 7-DOF bag of 1,000,000 joint states through the dynamics.

    .venv/bin/python src/robodyn_ros/benchmarks/bag_analysis.py [--samples 1000000] [--repeat 2]
        [--backends serial,threads] [--docs]

The bundled Panda on a 1 kHz sine trajectory with efforts, written once per storage (sqlite3,
mcap) under build/bag_benchmark/. Reading (rosbags: deserialising every JointState, picking
the joints, sorting and checking stamps) and the Savitzky-Golay q̈ are timed apart from the
dynamics. M + inverse dynamics (the target: ≥ 200,000 samples/s on 2 cores) and the same plus
Λ of the tcp run in time chunks of 50,000 samples, each chunk's states split over the
backend's workers (`pool.batch`, the matrices sent back); the whole analysis (`analyze`: τ,
cond(M), energies, eigenvalues of Λ, manipulability) gives each worker whole time chunks and
gets back the per-sample numbers only. Samples per second, best of `--repeat` runs after a
warm-up; serial, threads, processes and Dask with 2 workers. --docs also writes the tables to
docs/benchmarks/bag_analysis.md.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from common import BUNDLED_PANDA, REPO_ROOT, Report, add_docs_option, mark, markdown_table
from robodyn_ros import Robot
from robodyn_ros.bag import JointStateSeries, analyze, read_joint_states, write_joint_states
from robodyn_ros.bag.analysis import CHUNK
from robodyn_ros.bag.derivatives import velocities_and_accelerations
from robodyn_ros.bag.reading import RecordedRun
from robodyn_ros.parallel import Backend, backend
from robodyn_ros.testing.trajectories import sine_trajectory

FRAME = "panda_hand_tcp"
BUILD = REPO_ROOT / "build" / "bag_benchmark"
BACKENDS = ("serial", "threads", "processes", "dask")
STORAGES = ("sqlite3", "mcap")
TARGET = 200_000  # samples/s, M + inverse dynamics on 2 cores
WINDOW = 11


def benchmark_bag(robot: Robot, samples: int, storage: str) -> tuple[Path, float | None]:
    """The benchmark bag (written when missing) and the seconds writing it took, if it did."""
    path = BUILD / f"panda_{samples}_{storage}"
    if path.exists():
        return path, None
    BUILD.mkdir(parents=True, exist_ok=True)
    trajectory = sine_trajectory(robot, samples, 1000.0)
    effort = robot.inverse_dynamics(trajectory.q, trajectory.qd, trajectory.qdd)
    effort += np.random.default_rng(0).normal(0.0, 0.1, effort.shape)
    started = time.perf_counter()
    write_joint_states(path, storage,
                       JointStateSeries(robot.joint_names, trajectory.stamps, trajectory.q,
                                        trajectory.qd, effort))
    return path, time.perf_counter() - started


def chunked(pool: Backend, robot: Robot, functions: tuple[str, ...]) -> Callable:
    """A function of (q, q̇, q̈) running `functions` of the robot over time chunks on `pool`."""
    arguments = {
        "mass_matrix": lambda q, qd, qdd: (q,),
        "inverse_dynamics": lambda q, qd, qdd: (q, qd, qdd),
        "operational_space_inertia": lambda q, qd, qdd: (q,),
    }
    options = {"operational_space_inertia": {"frame": FRAME}}

    def run(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> None:
        for lo in range(0, len(q), CHUNK):
            part = slice(lo, lo + CHUNK)
            for name in functions:
                pool.batch(robot, name, *arguments[name](q[part], qd[part], qdd[part]),
                           **options.get(name, {}))

    return run


def best_rate(call: Callable[[], object], samples: int, repeat: int) -> float:
    """Samples per second of the fastest of `repeat` calls."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return samples / min(times)


def backend_rates(
    robot: Robot, run: RecordedRun, qd: np.ndarray, qdd: np.ndarray, name: str, repeat: int
) -> list[float]:
    """Samples/s of M + ID, M + ID + Λ and the whole analysis on one backend."""
    q, samples = run.position, len(run)
    with backend(name, workers=2) as pool:
        rates = []
        for functions in (("mass_matrix", "inverse_dynamics"),
                          ("mass_matrix", "inverse_dynamics", "operational_space_inertia")):
            call = chunked(pool, robot, functions)
            call(q[:CHUNK], qd[:CHUNK], qdd[:CHUNK])  # warm-up: kernels, workers
            rates.append(best_rate(lambda call=call: call(q, qd, qdd), samples, repeat))
        rates.append(best_rate(lambda: analyze(robot, run, frames=[FRAME], pool=pool),
                               samples, repeat))
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--backends", default=",".join(BACKENDS))
    add_docs_option(parser)
    args = parser.parse_args()
    report = Report.start(__file__, "Rosbag analysis throughput", args,
                          libraries=(("rosbags", "rosbags"), ("Dask", "dask")))
    robot = Robot.from_urdf(BUNDLED_PANDA)
    reading_rows, runs = [], {}
    for storage in STORAGES:
        path, written = benchmark_bag(robot, args.samples, storage)
        started = time.perf_counter()
        runs[storage] = read_joint_states(path, "/joint_states", robot.joint_names)
        read = time.perf_counter() - started
        size = sum(f.stat().st_size for f in path.iterdir()) / 1e6
        reading_rows.append([
            storage, f"{size:.0f}", f"{args.samples / read:,.0f}", f"{read:.1f}",
            "—" if written is None else f"{args.samples / written:,.0f}",
        ])
    run = runs["mcap"]
    started = time.perf_counter()
    qd, qdd = velocities_and_accelerations(run, WINDOW)
    derivative = time.perf_counter() - started
    report.print(f"Bundled Panda (7 joints), {args.samples:,} samples, chunks of {CHUNK:,}, "
                 f"2 workers; Savitzky-Golay q̈ ({WINDOW} samples): "
                 f"{args.samples / derivative:,.0f} samples/s\n")
    report.print(markdown_table(
        ["storage", "MB", "read samples/s", "read s", "write samples/s"], reading_rows))
    rows = []
    for name in args.backends.split(","):
        rates = backend_rates(robot, run, qd, qdd, name, args.repeat)
        rows.append([name, f"{rates[0]:,.0f} {mark(rates[0] >= TARGET)}",
                     *(f"{rate:,.0f}" for rate in rates[1:])])
    report.print()
    report.print(markdown_table(
        ["backend", "M + ID samples/s", "M + ID + Λ(tcp) samples/s", "whole analysis samples/s"],
        rows,
    ))
    report.print(f"\ntarget: M + inverse dynamics ≥ {TARGET:,} samples/s on 2 cores (✓/✗), "
                 "reading excluded")
    report.finish()


if __name__ == "__main__":
    main()
