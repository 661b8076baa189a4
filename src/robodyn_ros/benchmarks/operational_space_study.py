"""Operational-space inertia Λ of the tip: every Robot.operational_space_inertia method against
Pinocchio's fastest Λ route, on the bundled 7-DOF Panda and random chains of N = 7 … 1024.

    .venv/bin/python src/robodyn_ros/benchmarks/operational_space_study.py [--sizes 7,64]
        [--repeat 5] [--plot out.png] [--docs]

For each robot: µs per Python call of `robot.operational_space_inertia(q, tip, method)` for
dense, recursive and schur, and of Pinocchio's two Λ routes in the same process (median of
`--repeat` interleaved loops): the contact-Cholesky route (crba, the 6-D constraint's Jacobian,
ContactCholeskyDecomposition.compute and getOperationalSpaceInertiaMatrix; world-aligned axes)
and computeDelassusMatrix + numpy's inverse (the frame's LOCAL axes, the same work). The ratio
is ours / the faster of the two; the error is each method's largest difference from the
contact-Cholesky Λ relative to its largest entry. Pinocchio is timed up to N = 256 only: its
Data grows as N³. Prints a Markdown table (targets: the 7-DOF arm and N = 256 ≤ 0.5) and writes
a log-log plot of time against N (needs matplotlib: pip install -e 'src/robodyn_ros[bench]').
--docs also writes the table to docs/benchmarks/operational_space_study.md.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence

import numpy as np
import pinocchio as pin

from common import (
    RobotSpec,
    SizeStudy,
    format_us,
    frame_constraint,
    interleaved_us_by_name,
    markdown_table,
    random_state,
    ratio_cell,
    relative_error,
    robot_specs,
)
from robodyn_ros import Robot

SIZES = (7, 16, 32, 64, 128, 256, 512, 1024)
METHODS = Robot.OPERATIONAL_SPACE_METHODS
CHOLESKY, DELASSUS = "pin contact-Cholesky", "pin Delassus+inv"
PIN_MAX_N = 256
TARGET = 0.5


def specs(sizes: Sequence[int]) -> list[RobotSpec]:
    """The bundled Panda (its tcp) and a random chain (its last link) per size."""
    return [robot_specs()["panda-bundled"], *(RobotSpec.random_chain(n) for n in sizes)]


def pinocchio_routes(spec: RobotSpec, robot: Robot, q: np.ndarray) -> dict[str, Callable]:
    """Pinocchio's two Λ routes on q, each a zero-argument call returning Λ."""
    oracle = spec.pinocchio_oracle(robot.joint_names)
    model, data, q_pin = oracle.model, oracle.data, oracle.q(q)
    frame_id = model.getFrameId(spec.frame, pin.FrameType.BODY)
    routes = {}
    for name, axes in ((CHOLESKY, pin.LOCAL_WORLD_ALIGNED), (DELASSUS, pin.LOCAL)):
        models, datas = frame_constraint(model, frame_id, axes)
        if name == CHOLESKY:
            routes[name] = _cholesky_route(model, data, q_pin, models, datas)
        else:
            routes[name] = lambda models=models, datas=datas: np.linalg.inv(
                pin.computeDelassusMatrix(model, data, q_pin, models, datas)
            )
    return routes


def _cholesky_route(model, data, q, models, datas) -> Callable[[], np.ndarray]:
    constraint = models[0]
    cholesky = pin.ContactCholeskyDecomposition(model, data, models, datas)

    def route() -> np.ndarray:
        pin.crba(model, data, q, pin.Convention.WORLD)
        constraint.calc(model, data, datas[0])
        cholesky.compute(model, data, models, datas, 0.0)
        return cholesky.getOperationalSpaceInertiaMatrix()

    return route


def bench(spec: RobotSpec, repeat: int, budget_s: float) -> tuple[int, dict, dict]:
    """(n, µs per call by name, relative error of each method vs the contact-Cholesky Λ)."""
    robot = spec.load()
    q = random_state(robot.nv).q
    calls: dict[str, Callable[[], object]] = {
        method: (lambda method=method: robot.operational_space_inertia(q, spec.frame, method))
        for method in METHODS
    }
    errors = {}
    if robot.nv <= PIN_MAX_N:
        routes = pinocchio_routes(spec, robot, q)
        calls.update(routes)
        expected = routes[CHOLESKY]()
        errors = {method: relative_error(calls[method](), expected) for method in METHODS}
    times = interleaved_us_by_name(calls, repeat, budget_s)
    return robot.nv, times, errors


def table(runs: dict[str, tuple[int, dict, dict]]) -> str:
    header = [
        "robot", "N", *(f"{m} µs" for m in METHODS), "pin Cholesky µs", "pin Delassus µs",
        *(f"{m}/pin" for m in METHODS), "error",
    ]
    rows = []
    for name, (n, t, errors) in runs.items():
        pin_us = min(t[CHOLESKY], t[DELASSUS]) if CHOLESKY in t else None
        ratios = []
        for method in METHODS:
            if pin_us is None:
                ratios.append("—")
                continue
            ratio = t[method] / pin_us
            best = method == min(METHODS, key=t.__getitem__)
            targeted = best and (name == "panda-bundled" or n == PIN_MAX_N)
            ratios.append(ratio_cell(ratio, TARGET if targeted else None))
        rows.append([
            name, str(n), *(format_us(t[m]) for m in METHODS),
            *(format_us(t[r]) if r in t else "—" for r in (CHOLESKY, DELASSUS)),
            *ratios, f"{max(errors.values()):.0e}" if errors else "—",
        ])
    return markdown_table(header, rows)


def main(argv: Sequence[str] | None = None) -> None:
    study = SizeStudy.start(__file__, __doc__, "Operational-space inertia of the tip", SIZES, argv)
    study.report.print(
        f"Λ (6 x 6) of the tip, one random state; median of {study.loops}; ours/pin against the "
        f"faster Pinocchio route; targets (✓/✗, our fastest): 7-DOF arm and N = {PIN_MAX_N} ≤ "
        f"{TARGET}; error: vs the contact-Cholesky Λ\n"
    )
    runs = {}
    for spec in specs(study.args.sizes):
        runs[spec.name] = bench(spec, study.args.repeat, study.budget_s)
        gc.collect()  # Pinocchio's Data is ~1 GB at N = 256
    study.report.print(table(runs) + "\n")
    chains = {n: times for name, (n, times, _) in runs.items() if name.startswith("chain")}
    study.finish(chains, (*METHODS, CHOLESKY, DELASSUS),
                 "Operational-space inertia Λ of the tip: robodyn_ros vs Pinocchio")


if __name__ == "__main__":
    main()
