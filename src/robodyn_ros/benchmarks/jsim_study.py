"""Joint-space inertia matrix M(q): every Robot.mass_matrix method against Pinocchio's crba on
random chains of N = 3 … 1024 joints, timed side by side in one process.

    .venv/bin/python src/robodyn_ros/benchmarks/jsim_study.py [--sizes 3,7,64] [--plot out.png]
        [--docs]

For each N: µs per Python call of crba, gdahj, recursive_doubling (with its ⌈log₂N⌉ levels),
rnea_columns, mass_matrix_diagonal and pin.crba (median of `--repeat` interleaved loops), the
ratios to pin.crba, and the error of each method against our CRBA by Safeea's eq. 32. Pinocchio
is timed up to N = 256 only: its Data grows as N³ (1.1 GB at 256, ~9 GB at 512). Prints a
Markdown table, the N from which GDAHJ beats our CRBA, and writes a log-log plot of time
against N (needs matplotlib: pip install -e 'src/robodyn_ros[bench]'). --docs also writes the
table to docs/benchmarks/jsim_study.md.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence

import pinocchio as pin

from common import (
    RobotSpec,
    SizeStudy,
    format_us,
    interleaved_us_by_name,
    markdown_table,
    random_state,
)
from robodyn_ros.dynamics.gdahj import safeea_error
from robodyn_ros.dynamics.recursive_doubling import level_count

SIZES = (3, 5, 7, 10, 13, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
METHODS = ("crba", "gdahj", "recursive_doubling", "rnea_columns")
PIN = "pin.crba"
DIAGONAL = "diagonal"
PIN_MAX_N = 256


def bench_chain(n: int, repeat: int, budget_s: float) -> tuple[dict[str, float], float]:
    """µs per call of each method (and Pinocchio's, up to PIN_MAX_N) on a random n-chain, and
    the largest eq. 32 error of our methods against our CRBA."""
    spec = RobotSpec.random_chain(n)
    robot = spec.load()
    q = random_state(n).q
    calls: dict[str, Callable[[], object]] = {
        method: (lambda method=method: robot.mass_matrix(q, method)) for method in METHODS
    }
    calls[DIAGONAL] = lambda: robot.mass_matrix_diagonal(q)
    if n <= PIN_MAX_N:
        oracle = spec.pinocchio_oracle(robot.joint_names)
        q_pin = oracle.q(q)
        calls[PIN] = lambda: pin.crba(oracle.model, oracle.data, q_pin)
    times = interleaved_us_by_name(calls, repeat, budget_s)
    crba = robot.mass_matrix(q)
    error = max(float(safeea_error(robot.mass_matrix(q, method), crba)) for method in METHODS)
    return times, error


def crossover(sizes: Sequence[int], runs: dict[int, dict[str, float]]) -> int | None:
    """The smallest N from which GDAHJ is faster than our CRBA at every larger N measured."""
    found = None
    for n in reversed(sizes):
        if runs[n]["gdahj"] >= runs[n]["crba"]:
            break
        found = n
    return found


def study_table(sizes: Sequence[int], runs: dict[int, dict[str, float]], errors: dict) -> str:
    header = [
        "N", "levels", *(f"{m} µs" for m in METHODS), "diag µs", "pin.crba µs",
        *(f"{m}/pin" for m in METHODS), "crba/gdahj", "eq. 32",
    ]
    rows = []
    for n in sizes:
        t = runs[n]
        pin_us = t.get(PIN)
        ratios = [f"{t[m] / pin_us:.2f}" if pin_us else "—" for m in METHODS]
        rows.append([
            str(n), str(level_count(n)), *(format_us(t[m]) for m in METHODS),
            format_us(t[DIAGONAL]), format_us(pin_us) if pin_us else "—",
            *ratios, f"{t['crba'] / t['gdahj']:.2f}", f"{errors[n]:.0e}",
        ])
    return markdown_table(header, rows)


def main(argv: Sequence[str] | None = None) -> None:
    study = SizeStudy.start(__file__, __doc__, "Joint-space inertia, method by method", SIZES,
                            argv)
    study.report.print(f"Random chains (seed 0); median of {study.loops}; eq. 32 = the largest "
                       "error of our methods vs our CRBA\n")
    runs, errors = {}, {}
    for n in study.args.sizes:
        runs[n], errors[n] = bench_chain(n, study.args.repeat, study.budget_s)
        gc.collect()  # Pinocchio's Data is ~1 GB at N = 256
    study.report.print(study_table(study.args.sizes, runs, errors) + "\n")
    n_cross = crossover(study.args.sizes, runs)
    study.report.print(
        "GDAHJ is faster than our CRBA from N = "
        + (f"{n_cross} on (measured sizes)" if n_cross else "— (never at every larger N)")
        + "; the paper: from 13 DOF on, best CRBA/GDAHJ 2.2"
    )
    study.finish(runs, (*METHODS, DIAGONAL, PIN),
                 "Joint-space inertia matrix: robodyn_ros methods vs Pinocchio")


if __name__ == "__main__":
    main()
