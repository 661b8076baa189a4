"""Robots whose root is a free flyer or a planar joint of the kernels, each Robot function against
Pinocchio's JointModelFreeFlyer or JointModelPlanar, timed side by side in one process.

    .venv/bin/python src/robodyn_ros/benchmarks/root_joints.py [--robots talos_reduced,solo12]
        [--repeat 9] [--quick] [--docs]

Each robot's URDF gets a `world` link and a floating (or planar) joint from it to its root link
(model.generate.with_root_joint); Pinocchio parses that same text, so both sides have the same
joint at the root (testing.pinocchio_twin matches the joints by name). One random state each,
Pinocchio's converted outside the loops; each call runs in timed loops of about `budget`
seconds, ours and Pinocchio's taking turns `--repeat` times, and the median gives µs per Python
call; the error column is max |ours − Pinocchio| / max |Pinocchio| of one answer. --docs also
writes the tables to docs/benchmarks/root_joints.md.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
import pinocchio as pin

from common import (
    PinocchioResult,
    PinocchioRow,
    Report,
    comparison_arguments,
    loop_budget_s,
    pinocchio_summary,
    pinocchio_table,
    symmetric,
    time_against_pinocchio,
)
from robodyn_ros.model.generate import with_root_joint
from robodyn_ros.testing import example_robot_urdf
from robodyn_ros.testing.pinocchio_twin import Twin, twin_of

# name → (example robot, root joint, a hand or foot for the Jacobian)
ROBOTS = {
    "talos_reduced": ("talos_reduced", "floating", "arm_left_7_link"),
    "solo12": ("solo12", "floating", "FL_FOOT"),
    "anymal": ("anymal", "floating", "LF_FOOT"),
    "solo12_planar": ("solo12", "planar", "FL_FOOT"),
}
# the targets on TALOS and Solo12: ours / Pinocchio at most
TARGETS = {
    **dict.fromkeys(("inverse_dynamics", "mass_matrix", "forward_dynamics"), 0.5),
    **dict.fromkeys(("mass_matrix_inverse", "jacobian", "gravity_torques",
                     "centroidal_momentum_matrix"), 0.8),
}
TARGET_ROBOTS = ("talos_reduced", "solo12")
SEED = 1


def row(function: str, peer: str, ours: Callable[[], object], theirs: Callable[[], object],
        in_our_order: Callable[[object], np.ndarray]) -> PinocchioRow:
    """The row of a function whose Pinocchio answer `in_our_order` puts in our order."""
    return PinocchioRow(function, peer, ours, theirs, lambda: in_our_order(theirs()))


def rows(twin: Twin, frame: str) -> list[PinocchioRow]:
    """Every timed function of one robot, ours and Pinocchio's (answers in our order), on one
    state."""
    robot, model = twin.robot, twin.model
    data = model.createData()
    q_pin, v_pin, a_pin, tau_pin = twin.state(SEED)
    q, v, a, tau = twin.q_ours(q_pin), twin.v_ours(v_pin), twin.v_ours(a_pin), twin.v_ours(tau_pin)
    frame_id = model.getFrameId(frame, pin.FrameType.BODY)
    lwa = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    columns = np.argsort(twin.v_order)

    def vector(answer: object) -> np.ndarray:
        return twin.v_ours(np.asarray(answer))

    def matrix(answer: object) -> np.ndarray:
        return twin.matrix_ours(symmetric(np.asarray(answer)))

    return [
        row("inverse_dynamics", "rnea", partial(robot.inverse_dynamics, q, v, a),
            partial(pin.rnea, model, data, q_pin, v_pin, a_pin), vector),
        row("bias_forces", "nonLinearEffects", partial(robot.bias_forces, q, v),
            partial(pin.nonLinearEffects, model, data, q_pin, v_pin), vector),
        row("gravity_torques", "computeGeneralizedGravity", partial(robot.gravity_torques, q),
            partial(pin.computeGeneralizedGravity, model, data, q_pin), vector),
        row("coriolis_matrix", "computeCoriolisMatrix", partial(robot.coriolis_matrix, q, v),
            partial(pin.computeCoriolisMatrix, model, data, q_pin, v_pin),
            lambda answer: twin.matrix_ours(np.asarray(answer))),
        row("mass_matrix", "crba", partial(robot.mass_matrix, q),
            partial(pin.crba, model, data, q_pin), matrix),
        row("mass_matrix_inverse", "computeMinverse", partial(robot.mass_matrix_inverse, q),
            partial(pin.computeMinverse, model, data, q_pin), matrix),
        row("forward_dynamics", "aba", partial(robot.forward_dynamics, q, v, tau),
            partial(pin.aba, model, data, q_pin, v_pin, tau_pin), vector),
        row("jacobian", "computeFrameJacobian(LWA)", partial(robot.jacobian, q, frame),
            partial(pin.computeFrameJacobian, model, data, q_pin, frame_id, lwa),
            lambda answer: np.asarray(answer)[:, columns]),
        row("centroidal_momentum_matrix", "computeCentroidalMap",
            partial(robot.centroidal_momentum_matrix, q),
            partial(pin.computeCentroidalMap, model, data, q_pin),
            lambda answer: np.asarray(answer)[:, columns]),
        row("kinetic_energy", "computeKineticEnergy", partial(robot.kinetic_energy, q, v),
            partial(pin.computeKineticEnergy, model, data, q_pin, v_pin), np.asarray),
    ]


def load(name: str) -> tuple[Twin, str]:
    """The twin of a robot on its root joint, and its frame."""
    example, kind, frame = ROBOTS[name]
    path = example_robot_urdf(example)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the sensor links' singular inertias
        twin = twin_of(with_root_joint(path.read_text(), kind))
    return twin, frame


def bench_robot(name: str, repeat: int, budget_s: float) -> tuple[int, list[PinocchioResult]]:
    """The robot's nv and a result per row."""
    twin, frame = load(name)
    return twin.robot.nv, time_against_pinocchio(rows(twin, frame), repeat, budget_s)


def goal(name: str, nv: int, result: PinocchioResult) -> float | None:
    """The target of the result's function on TALOS and Solo12."""
    return TARGETS.get(result.function) if name in TARGET_ROBOTS else None


def robot_table(name: str, nv: int, results: Sequence[PinocchioResult]) -> str:
    example, kind, frame = ROBOTS[name]
    return (f"### {name} ({example} on a {kind} root joint, nv = {nv}; frame {frame})\n\n"
            + pinocchio_table(name, nv, results, goal))


def main(argv: Sequence[str] | None = None) -> None:
    args = comparison_arguments(argv, __doc__.splitlines()[0], list(ROBOTS))
    report = Report.start(__file__, "Free-flyer and planar root joints against Pinocchio", args,
                          argv)
    budget_s = loop_budget_s(args.quick)
    report.print(f"Median of {args.repeat} interleaved loops of ~{budget_s * 1e3:g} ms; targets "
                 "(✓/✗) on TALOS and Solo12: RNEA, CRBA and ABA ≤ 0.5; M⁻¹, the Jacobian, "
                 "g(q) and A_g ≤ 0.8\n")
    runs = {name: bench_robot(name, args.repeat, budget_s) for name in args.robots}
    for name, (nv, results) in runs.items():
        report.print(robot_table(name, nv, results) + "\n")
    report.print(pinocchio_summary(runs, goal))
    report.finish()


if __name__ == "__main__":
    main()
