"""The derivatives of the dynamics against Pinocchio's, timed side by side in one process.

    .venv/bin/python src/robodyn_ros/benchmarks/derivatives.py [--robots panda,chain64]
        [--repeat 9] [--quick] [--docs]

Robot.inverse_dynamics_derivatives against computeRNEADerivatives and
Robot.forward_dynamics_derivatives against computeABADerivatives, each a Python call on one
random state (Pinocchio's converted outside the loops), on the Panda, TALOS on a floating root
joint and a 64-joint chain: Pinocchio parses the same URDF text (testing.pinocchio_twin). Our
loops and Pinocchio's take turns `--repeat` times, the median loop gives µs per call; the error
column is the largest of the three matrices' max |ours − Pinocchio| / max |Pinocchio|. --docs
also writes the table to docs/benchmarks/derivatives.md.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
import pinocchio as pin

from common import (
    BUNDLED_PANDA,
    CHAIN_SEED,
    PINOCCHIO_HEADER,
    PinocchioResult,
    PinocchioRow,
    Report,
    comparison_arguments,
    loop_budget_s,
    markdown_table,
    pinocchio_cells,
    symmetric,
    time_against_pinocchio,
)
from robodyn_ros.model.generate import random_chain_urdf, with_root_joint
from robodyn_ros.testing import example_robot_urdf
from robodyn_ros.testing.pinocchio_twin import Twin, twin_of

# name → (what it is, its URDF text)
ROBOTS: dict[str, tuple[str, Callable[[], str]]] = {
    "panda": ("the bundled Panda, fixed base", BUNDLED_PANDA.read_text),
    "talos": ("TALOS (talos_reduced) on a floating root joint",
              lambda: with_root_joint(example_robot_urdf("talos_reduced").read_text(),
                                      "floating")),
    "chain64": ("a generated 64-joint chain", lambda: random_chain_urdf(64, seed=CHAIN_SEED)),
}
TARGET = 0.8  # the bound on ours / Pinocchio, every robot
SEED = 1


def rows(twin: Twin) -> list[PinocchioRow]:
    """The two derivative functions of one robot, ours and Pinocchio's, on one state."""
    robot, model = twin.robot, twin.model
    data = model.createData()
    q_pin, v_pin, a_pin, tau_pin = twin.state(SEED)
    q, v, a, tau = twin.q_ours(q_pin), twin.v_ours(v_pin), twin.v_ours(a_pin), twin.v_ours(tau_pin)

    def rnea_expected() -> tuple[np.ndarray, ...]:
        pin.computeRNEADerivatives(model, data, q_pin, v_pin, a_pin)
        return tuple(twin.matrix_ours(m) for m in (data.dtau_dq, data.dtau_dv, symmetric(data.M)))

    def aba_expected() -> tuple[np.ndarray, ...]:
        pin.computeABADerivatives(model, data, q_pin, v_pin, tau_pin)
        return tuple(twin.matrix_ours(m)
                     for m in (data.ddq_dq, data.ddq_dv, symmetric(data.Minv)))

    return [
        PinocchioRow("inverse_dynamics_derivatives", "computeRNEADerivatives",
                     partial(robot.inverse_dynamics_derivatives, q, v, a),
                     partial(pin.computeRNEADerivatives, model, data, q_pin, v_pin, a_pin),
                     rnea_expected),
        PinocchioRow("forward_dynamics_derivatives", "computeABADerivatives",
                     partial(robot.forward_dynamics_derivatives, q, v, tau),
                     partial(pin.computeABADerivatives, model, data, q_pin, v_pin, tau_pin),
                     aba_expected),
    ]


def bench_robot(name: str, repeat: int, budget_s: float) -> tuple[int, list[PinocchioResult]]:
    """The robot's nv and a result per function."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TALOS's sensor links' singular inertias
        twin = twin_of(ROBOTS[name][1]())
    return twin.robot.nv, time_against_pinocchio(rows(twin), repeat, budget_s)


def table(runs: dict[str, tuple[int, list[PinocchioResult]]]) -> str:
    body = [[name, str(nv), *pinocchio_cells(r, TARGET)]
            for name, (nv, results) in runs.items() for r in results]
    return markdown_table(["robot", "nv", *PINOCCHIO_HEADER], body, 4)


def main(argv: Sequence[str] | None = None) -> None:
    args = comparison_arguments(argv, __doc__.splitlines()[0], list(ROBOTS))
    report = Report.start(__file__, "Derivatives of the dynamics against Pinocchio", args, argv)
    budget_s = loop_budget_s(args.quick)
    report.print(f"Median of {args.repeat} interleaved loops of ~{budget_s * 1e3:g} ms, µs per "
                 f"Python call; target (✓/✗): ours / Pinocchio ≤ {TARGET} on every robot\n")
    for name in args.robots:
        report.print(f"- {name}: {ROBOTS[name][0]}")
    report.print()
    runs = {name: bench_robot(name, args.repeat, budget_s) for name in args.robots}
    report.print(table(runs))
    report.finish()


if __name__ == "__main__":
    main()
