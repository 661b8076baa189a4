"""Does running the level-parallel algorithms' independent work of each level on 2 threads
pay on this machine? Measured bound, not an implementation:

    .venv/bin/python src/robodyn_ros/benchmarks/level_parallel.py [--sizes 16,64,256,1024]
        [--repeat 3] [--docs]

Recursive doubling (JSIM: ⌈log₂N⌉ levels, each a stage A and a stage B over independent
items), block cyclic reduction (forward dynamics "schur_bcr": ⌈log₂N⌉ levels, each the
inversions of the eliminated blocks, then the kept blocks' updates, in the factorization and
again for the right-hand side, and one back-substitution step), the Jacobi iteration on the
constraint forces (each sweep updates every body independently) and J-CG (each iteration
one per-body product and two dot products) must meet all threads at a barrier after each such
step: 4 per level of recursive doubling (stage A; stage B's motions, its matrix entries, then
its forces moving on), 5 per level of cyclic reduction, 2 per Jacobi sweep (the
updates, the convergence norm), 3 per J-CG iteration. With T the serial time of one call, c
the cost of one fork-join of 2 threads inside a kernel (numba's prange) and k the barriers of
the call, no 2-thread version can take less than T/2 + k·c: its speed-up is at most
T / (T/2 + k·c). The script measures T (random chains, one state, µs per Python call), k
(levels, or iterations at tol 1e-7 from `info`) and c, and prints that bound. --docs also
writes the table to docs/benchmarks/level_parallel.md.
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np
from numba import prange

from common import Report, add_docs_option, format_us, interleaved_us, markdown_table
from robodyn_ros import Robot
from robodyn_ros.dynamics.recursive_doubling import level_count
from robodyn_ros.model.generate import random_chain_urdf

THREADS = 2
TOL = 1e-7
# per level, sweep or iteration
BARRIERS = {"recursive_doubling": 4, "schur_bcr": 5, "jacobi": 2, "jacobi_cg": 3}
LEVELLED = ("recursive_doubling", "schur_bcr")


@numba.njit(parallel=True)
def fork_joins(count: int, out: np.ndarray) -> None:
    """`count` parallel regions in a row, each one trivial item per thread."""
    for _ in range(count):
        for t in prange(out.shape[0]):
            out[t] += 1.0


def fork_join_us(threads: int, count: int = 20_000) -> float:
    """µs per fork-join of `threads` threads inside a kernel (best of 5)."""
    numba.set_num_threads(threads)
    out = np.zeros(threads)
    fork_joins(1, out)  # compile
    best = np.inf
    for _ in range(5):
        start = time.perf_counter()
        fork_joins(count, out)
        best = min(best, time.perf_counter() - start)
    return best / count * 1e6


def method_steps(robot: Robot, method: str, q, qd, tau) -> int:
    """Levels (recursive doubling, cyclic reduction) or iterations (Jacobi, J-CG) of one call."""
    if method in LEVELLED:
        return level_count(robot.nv)
    _, info = robot.forward_dynamics(q, qd, tau, method=method, tol=TOL, info=True)
    return int(info.iterations)


def method_call(robot: Robot, method: str, q, qd, tau):
    """One call; an iteration that does not converge (Jacobi on some chains) runs its
    max_iterations sweeps, still the same work per sweep."""
    if method == "recursive_doubling":
        return lambda: robot.mass_matrix(q, method)
    if method == "schur_bcr":
        return lambda: robot.forward_dynamics(q, qd, tau, method=method)
    return lambda: robot.forward_dynamics(q, qd, tau, method=method, tol=TOL, info=True)


def bound_row(n: int, method: str, fork_join: float, repeat: int) -> list[str]:
    """[N, method, T µs, steps, barriers, T/2 + k·c µs, best speed-up] of one chain."""
    robot = Robot.from_urdf_string(random_chain_urdf(n, seed=0))
    rng = np.random.default_rng(1)
    q, qd, tau = (rng.uniform(-1.0, 1.0, n) for _ in range(3))
    (serial,) = interleaved_us([method_call(robot, method, q, qd, tau)], repeat, 0.05)
    steps = method_steps(robot, method, q, qd, tau)
    barriers = steps * BARRIERS[method]
    parallel = serial / THREADS + barriers * fork_join
    return [str(n), method, format_us(serial), str(steps), str(barriers), format_us(parallel),
            f"{serial / parallel:.2f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="16,64,256,1024")
    parser.add_argument("--repeat", type=int, default=3)
    add_docs_option(parser)
    args = parser.parse_args()
    report = Report.start(__file__, "Level-parallel algorithms on 2 cores", args)

    fork_join = fork_join_us(THREADS)
    report.print(f"One fork-join of {THREADS} threads inside a kernel (numba prange, "
                 f"{numba.threading_layer()} layer): c = {fork_join:.2f} µs\n")
    rows = [
        bound_row(int(n), method, fork_join, args.repeat)
        for n in args.sizes.split(",")
        for method in BARRIERS
    ]
    report.print(markdown_table(
        ["N", "method", "serial T µs", "levels / iterations", "barriers k",
         "T/2 + k·c µs", "best 2-thread speed-up"],
        rows, left=2,
    ))
    report.finish()


if __name__ == "__main__":
    main()
