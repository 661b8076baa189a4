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

import argparse
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import pinocchio as pin

from common import (
    Report,
    add_docs_option,
    add_robot_options,
    check_robots,
    format_us,
    interleaved_us,
    mark,
    markdown_table,
    pivot,
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


@dataclass(frozen=True)
class Row:
    """A function timed against its Pinocchio peer."""

    function: str
    peer: str
    ours: Callable[[], np.ndarray]
    theirs: Callable[[], object]  # Pinocchio's call, timed as it is
    in_our_order: Callable[[object], np.ndarray]  # its answer in our order, for the error


@dataclass(frozen=True)
class Result:
    function: str
    peer: str
    ours_us: float
    pin_us: float
    error: float


def symmetric(upper: np.ndarray) -> np.ndarray:
    return np.triu(upper) + np.triu(upper, 1).T


def rows(twin: Twin, frame: str) -> list[Row]:
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
        Row("inverse_dynamics", "rnea", partial(robot.inverse_dynamics, q, v, a),
            partial(pin.rnea, model, data, q_pin, v_pin, a_pin), vector),
        Row("bias_forces", "nonLinearEffects", partial(robot.bias_forces, q, v),
            partial(pin.nonLinearEffects, model, data, q_pin, v_pin), vector),
        Row("gravity_torques", "computeGeneralizedGravity", partial(robot.gravity_torques, q),
            partial(pin.computeGeneralizedGravity, model, data, q_pin), vector),
        Row("coriolis_matrix", "computeCoriolisMatrix", partial(robot.coriolis_matrix, q, v),
            partial(pin.computeCoriolisMatrix, model, data, q_pin, v_pin),
            lambda answer: twin.matrix_ours(np.asarray(answer))),
        Row("mass_matrix", "crba", partial(robot.mass_matrix, q),
            partial(pin.crba, model, data, q_pin), matrix),
        Row("mass_matrix_inverse", "computeMinverse", partial(robot.mass_matrix_inverse, q),
            partial(pin.computeMinverse, model, data, q_pin), matrix),
        Row("forward_dynamics", "aba", partial(robot.forward_dynamics, q, v, tau),
            partial(pin.aba, model, data, q_pin, v_pin, tau_pin), vector),
        Row("jacobian", "computeFrameJacobian(LWA)", partial(robot.jacobian, q, frame),
            partial(pin.computeFrameJacobian, model, data, q_pin, frame_id, lwa),
            lambda answer: np.asarray(answer)[:, columns]),
        Row("centroidal_momentum_matrix", "computeCentroidalMap",
            partial(robot.centroidal_momentum_matrix, q),
            partial(pin.computeCentroidalMap, model, data, q_pin),
            lambda answer: np.asarray(answer)[:, columns]),
        Row("kinetic_energy", "computeKineticEnergy", partial(robot.kinetic_energy, q, v),
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


def bench_robot(name: str, repeat: int, budget_s: float) -> tuple[int, list[Result]]:
    """The robot's nv and a Result per row."""
    twin, frame = load(name)
    results = []
    for row in rows(twin, frame):
        ours_us, pin_us = interleaved_us([row.ours, row.theirs], repeat, budget_s)
        expected = row.in_our_order(row.theirs())
        error = float(np.abs(np.asarray(row.ours()) - expected).max()
                      / max(np.abs(expected).max(), 1e-300))
        results.append(Result(row.function, row.peer, ours_us, pin_us, error))
    return twin.robot.nv, results


def ratio_cell(name: str, result: Result) -> str:
    ratio = result.ours_us / result.pin_us
    goal = TARGETS.get(result.function) if name in TARGET_ROBOTS else None
    return f"{ratio:.2f}" if goal is None else f"{ratio:.2f} {mark(ratio <= goal)}"


def robot_table(name: str, nv: int, results: Sequence[Result]) -> str:
    example, kind, frame = ROBOTS[name]
    header = ["function", "Pinocchio", "ours µs", "pin µs", "ours/pin", "rel. error"]
    body = [[r.function, r.peer, format_us(r.ours_us), format_us(r.pin_us), ratio_cell(name, r),
             f"{r.error:.0e}"] for r in results]
    return (f"### {name} ({example} on a {kind} root joint, nv = {nv}; frame {frame})\n\n"
            + markdown_table(header, body, 2))


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_robot_options(parser, list(ROBOTS))
    parser.add_argument("--quick", action="store_true", help="short loops")
    add_docs_option(parser)
    args = parser.parse_args(argv)
    check_robots(parser, args, list(ROBOTS))
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    args.repeat = args.repeat or (3 if args.quick else 9)
    report = Report.start(__file__, "Free-flyer and planar root joints against Pinocchio", args,
                          argv)
    budget_s = 0.003 if args.quick else 0.02
    report.print(f"Median of {args.repeat} interleaved loops of ~{budget_s * 1e3:g} ms; targets "
                 "(✓/✗) on TALOS and Solo12: RNEA, CRBA and ABA ≤ 0.5; M⁻¹, the Jacobian, "
                 "g(q) and A_g ≤ 0.8\n")
    runs = {name: bench_robot(name, args.repeat, budget_s) for name in args.robots}
    for name, (nv, results) in runs.items():
        report.print(robot_table(name, nv, results) + "\n")
    cells = {(r.function, name): ratio_cell(name, r) for name, (_, results) in runs.items()
             for r in results}
    functions = list(dict.fromkeys(r.function for _, results in runs.values() for r in results))
    report.print("### Summary: ours / Pinocchio, µs per Python call\n")
    report.print(markdown_table(["ours/pin", *runs], pivot(cells, functions, list(runs))))
    report.finish()


if __name__ == "__main__":
    main()
