"""Batches of states on the parallel backends, against Pinocchio, in one process.

    .venv/bin/python src/robodyn_ros/benchmarks/parallel.py [--batch 10000] [--dask-batch 100000]
        [--repeat 100] [--docs]

The bundled Panda, B random states: M (mass_matrix), q̈ (forward_dynamics, ABA) and Λ of the
tcp (operational_space_inertia), ours on the threads backend with 1 and 2 threads (the
kernels' GIL-free builds, a chunk of the batch per thread), against a Python loop over
Pinocchio's call and, for ABA, `pin.abaInParallel` with 1 and 2 threads. Then the Dask backend
(a LocalCluster of 2 worker processes) on a larger batch of ABA, against the threads backend:
its overhead. Each figure is the best of `--repeat` runs, ms per batch. The machine's load
average is printed first: other processes on the cores show up as a smaller speed-up. --docs
also writes the tables to docs/benchmarks/parallel.md.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numba
import numpy as np
import pinocchio as pin

from common import BUNDLED_PANDA, Report, add_docs_option, format_ms, mark, markdown_table
from robodyn_ros import Robot
from robodyn_ros.dynamics.forward_dynamics import forward_dynamics
from robodyn_ros.dynamics.tree import pack_tree
from robodyn_ros.parallel import backend

FRAME = "panda_hand_tcp"
TARGET_VS_PINOCCHIO = 0.5  # ABA, 2 threads, against pin.abaInParallel with 2 threads
TARGET_SPEED_UP = 1.7  # ABA, threads backend, 1 → 2 threads


def best_ms(call: Callable[[], object], repeat: int) -> float:
    call()  # warm up: compiles, starts pools
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def pinocchio_loop(name: str, model, data, frame_id: int, Q, QD, TAU) -> Callable[[], object]:
    """A Python loop over Pinocchio's call for each state (Pinocchio's column order = ours:
    the bundled Panda has no continuous joints)."""
    lwa = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED

    def mass_matrix():
        return [pin.crba(model, data, q) for q in Q]

    def forward_dynamics():
        return [pin.aba(model, data, q, v, t) for q, v, t in zip(Q, QD, TAU, strict=True)]

    def operational_space_inertia():
        answers = []
        for q in Q:
            J = pin.computeFrameJacobian(model, data, q, frame_id, lwa)
            answers.append(np.linalg.inv(J @ pin.computeMinverse(model, data, q) @ J.T))
        return answers

    return {"mass_matrix": mass_matrix, "forward_dynamics": forward_dynamics,
            "operational_space_inertia": operational_space_inertia}[name]


def time_function(robot: Robot, name: str, states, pools, repeat: int) -> list[float]:
    """ms per batch of robot.<name> on each pool."""
    options = {"frame": FRAME} if name == "operational_space_inertia" else {}
    return [
        best_ms(lambda p=pool: p.batch(robot, name, *states, **options), repeat) for pool in pools
    ]


def time_aba_in_parallel(model, threads: int, Q, QD, TAU, repeat: int) -> float:
    """ms per batch of pin.abaInParallel with `threads` threads (states as columns)."""
    pool = pin.ModelPool(model, threads)
    columns = [np.asfortranarray(x.T) for x in (Q, QD, TAU)]
    return best_ms(lambda: pin.abaInParallel(threads, pool, *columns), repeat)


@numba.njit(parallel=True)
def aba_prange(tree, gravity, Q, QD, TAU, QDD, parts):
    """The alternative to the threads backend's chunks: numba's own threads (prange), a
    contiguous chunk each, in one kernel."""
    size = Q.shape[0]
    for part in numba.prange(parts):
        lo, hi = part * size // parts, (part + 1) * size // parts
        forward_dynamics(tree, gravity, Q[lo:hi], QD[lo:hi], TAU[lo:hi], None, QDD[lo:hi])


def chunks_against_prange(robot: Robot, size: int, repeat: int) -> list[str]:
    """ABA over `size` states on 2 threads, µs: serial, the Robot's chunks on Python threads,
    and numba's prange."""
    numba.set_num_threads(2)
    two = robot.with_threads(2)
    Q, QD, TAU = (np.random.default_rng(size).uniform(-1.0, 1.0, (size, robot.nv))
                  for _ in range(3))
    QDD = np.empty_like(Q)
    tree, gravity = pack_tree(robot.model), np.array(robot.model.gravity, dtype=float)
    timings = (
        best_ms(lambda: robot.forward_dynamics(Q, QD, TAU), repeat),
        best_ms(lambda: two.forward_dynamics(Q, QD, TAU), repeat),
        best_ms(lambda: aba_prange(tree, gravity, Q, QD, TAU, QDD, 2), repeat),
    )
    return [str(size), *(f"{1e3 * t:.0f}" for t in timings)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--dask-batch", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=100)
    add_docs_option(parser)
    args = parser.parse_args()
    report = Report.start(__file__, "Batches in parallel", args, libraries=(("Dask", "dask"),))

    robot = Robot.from_urdf(BUNDLED_PANDA)
    model = pin.buildModelFromUrdf(str(BUNDLED_PANDA))
    data = model.createData()
    frame_id = model.getFrameId(FRAME)
    rng = np.random.default_rng(0)
    Q, QD, TAU = (rng.uniform(-1.0, 1.0, (args.batch, robot.nv)) for _ in range(3))
    arguments = {
        "mass_matrix": (Q,),
        "forward_dynamics": (Q, QD, TAU),
        "operational_space_inertia": (Q,),
    }

    rows, ratios = [], {}
    with backend("threads", workers=1) as one, backend("threads", workers=2) as two:
        for name, states in arguments.items():
            ours_one, ours_two = time_function(robot, name, states, (one, two), args.repeat)
            loop = best_ms(pinocchio_loop(name, model, data, frame_id, Q, QD, TAU), args.repeat)
            parallel = ["—", "—", "—"]
            if name == "forward_dynamics":
                pin_one, pin_two = (time_aba_in_parallel(model, threads, Q, QD, TAU, args.repeat)
                                    for threads in (1, 2))
                parallel = [format_ms(pin_one), format_ms(pin_two), f"{ours_two / pin_two:.2f}"]
                ratios = {"vs pin": ours_two / pin_two, "speed-up": ours_one / ours_two}
            rows.append([name, format_ms(ours_one), format_ms(ours_two),
                         f"{ours_one / ours_two:.2f}", format_ms(loop), f"{ours_two / loop:.3f}",
                         *parallel])

    report.print(f"Bundled Panda (7 joints), B = {args.batch} states, ms per batch (best of "
                 f"{args.repeat})\n")
    report.print(markdown_table(
        ["function", "threads 1", "threads 2", "1→2 speed-up", "pin loop", "threads 2/loop",
         "pin.abaInParallel 1", "pin.abaInParallel 2", "threads 2/pin 2"],
        rows,
    ))
    report.print(f"\nABA, 2 threads: {ratios['vs pin']:.2f} x pin.abaInParallel (2 threads) "
                 f"{mark(ratios['vs pin'] <= TARGET_VS_PINOCCHIO)} target ≤ "
                 f"{TARGET_VS_PINOCCHIO}; 1 → 2 threads: {ratios['speed-up']:.2f} x "
                 f"{mark(ratios['speed-up'] >= TARGET_SPEED_UP)} target ≥ {TARGET_SPEED_UP}")

    sizes = [chunks_against_prange(robot, size, 10 * args.repeat)
             for size in (64, 256, 1024, args.batch)]
    report.print(f"\nABA by batch size, 2 threads ({numba.threading_layer()} layer for prange; "
                 f"best of {10 * args.repeat}):\n")
    report.print(markdown_table(["B", "serial µs", "threads 2 µs", "numba prange 2 µs"], sizes))

    Q, QD, TAU = (rng.uniform(-1.0, 1.0, (args.dask_batch, robot.nv)) for _ in range(3))
    with backend("threads", workers=2) as threads, backend("dask", workers=2) as dask:
        t_threads = best_ms(lambda: threads.batch(robot, "forward_dynamics", Q, QD, TAU), 3)
        t_dask = best_ms(lambda: dask.batch(robot, "forward_dynamics", Q, QD, TAU), 3)
    report.print(f"\nDask (LocalCluster, 2 worker processes), ABA over B = {args.dask_batch}: "
                 f"{format_ms(t_dask)} ms against {format_ms(t_threads)} ms on 2 threads "
                 f"(overhead {t_dask - t_threads:.0f} ms: shipping the states and answers)")
    report.finish()


if __name__ == "__main__":
    main()
