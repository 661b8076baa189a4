"""Each Robot function against its Pinocchio counterpart, timed side by side in one process.

    .venv/bin/python src/robodyn_ros/benchmarks/dynamics.py [--robots panda,chain64]
        [--repeat 9] [--quick] [--docs]

Both sides get the same random state (Pinocchio's converted once, outside the loop) and are
called from Python the same way. After a warm-up (our first call compiles or loads the kernels)
each call runs in timed loops of about `budget` seconds; our loops and Pinocchio's take turns
`--repeat` times, and the median loop gives µs per call. The error column is
max |ours − Pinocchio| / max |Pinocchio| of one answer, so a ratio never hides a wrong result.
--docs also writes the tables to docs/benchmarks/dynamics.md.
"""

from __future__ import annotations

import argparse
import gc
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import pinocchio as pin

from common import (
    Report,
    RobotSpec,
    State,
    add_docs_option,
    format_us,
    interleaved_us,
    mark,
    markdown_table,
    pivot,
    random_state,
    robot_calls,
    robot_specs,
)
from robodyn_ros.robot.operational_space import OperationalSpaceDynamics
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

TARGET_FUNCTIONS = ("inverse_dynamics", "mass_matrix", "forward_dynamics(aba)")
DELASSUS_ROW = "operational_space_inertia (vs Delassus)"


@dataclass(frozen=True)
class Peer:
    """A Pinocchio call that answers the same question as a Robot function."""

    function: str  # the Robot function
    row: str  # the table row: the function, or a second peer's own name
    label: str  # what Pinocchio calls
    call: Callable[[], object]


@dataclass(frozen=True)
class Result:
    row: str
    label: str
    ours_us: float
    pin_us: float
    error: float | None  # relative difference of the answers; None if they are not comparable

    @property
    def ratio(self) -> float:
        return self.ours_us / self.pin_us


def target(nv: int, spec: RobotSpec, row: str) -> float | None:
    """The ratio to stay under: 7-DOF RNEA/CRBA/ABA ≤ 1.0, chains N ≥ 64 ≤ 0.5."""
    if row not in TARGET_FUNCTIONS:
        return None
    if spec.chain >= 64:
        return 0.5
    return 1.0 if nv == 7 else None


# -- the two sides ----------------------------------------------------------------------------


def load_oracle(spec: RobotSpec, joint_names: Sequence[str]) -> PinocchioOracle:
    source, is_text = spec.urdf()
    return PinocchioOracle(
        source, joint_names, locked_joints=spec.locked() or None, is_string=is_text
    )


def pinocchio_peers(oracle: PinocchioOracle, frame: str, s: State) -> list[Peer]:
    """Pinocchio's Python calls for each Robot function, on `s` converted once."""
    model, data = oracle.model, oracle.data
    q, v, a, tau = oracle.q(s.q), oracle.v(s.qd), oracle.v(s.qdd), oracle.v(s.tau)
    frame_id = model.getFrameId(frame, pin.FrameType.BODY)
    lwa = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    contacts, contact_data = _frame_contact(model, frame_id)
    zero = np.zeros(model.nv)

    def frame_pose() -> pin.SE3:
        pin.forwardKinematics(model, data, q)
        return pin.updateFramePlacement(model, data, frame_id)

    def cholesky() -> np.ndarray:
        bias = pin.nonLinearEffects(model, data, q, v)
        pin.crba(model, data, q)
        pin.cholesky.decompose(model, data)
        return pin.cholesky.solve(model, data, tau - bias)

    def lambda_dense() -> np.ndarray:
        J = pin.computeFrameJacobian(model, data, q, frame_id, lwa)
        Minv = _symmetric(pin.computeMinverse(model, data, q))
        return np.linalg.inv(J @ Minv @ J.T)

    def operational_space() -> np.ndarray:
        J = pin.computeFrameJacobian(model, data, q, frame_id, lwa)
        Minv = _symmetric(pin.computeMinverse(model, data, q))
        g = pin.computeGeneralizedGravity(model, data, q)
        coriolis = pin.nonLinearEffects(model, data, q, v) - g
        pin.forwardKinematics(model, data, q, v, zero)
        pin.updateFramePlacement(model, data, frame_id)
        Jdot_qd = pin.getFrameClassicalAcceleration(model, data, frame_id, lwa).vector
        MinvJT = Minv @ J.T
        Lambda = np.linalg.inv(J @ MinvJT)
        Jbar = MinvJT @ Lambda
        mu = Jbar.T @ coriolis - Lambda @ Jdot_qd
        return np.concatenate([Lambda.ravel(), mu, Jbar.T @ g, Jdot_qd])

    def lambda_delassus() -> np.ndarray:
        return np.linalg.inv(pin.computeDelassusMatrix(model, data, q, contacts, contact_data))

    peers = [
        ("inverse_dynamics", "rnea", partial(pin.rnea, model, data, q, v, a)),
        ("bias_forces", "nonLinearEffects", partial(pin.nonLinearEffects, model, data, q, v)),
        (
            "gravity_torques",
            "computeGeneralizedGravity",
            partial(pin.computeGeneralizedGravity, model, data, q),
        ),
        (
            "coriolis_matrix",
            "computeCoriolisMatrix",
            partial(pin.computeCoriolisMatrix, model, data, q, v),
        ),
        ("mass_matrix", "crba", partial(pin.crba, model, data, q)),
        ("mass_matrix_inverse", "computeMinverse", partial(pin.computeMinverse, model, data, q)),
        ("forward_dynamics(aba)", "aba", partial(pin.aba, model, data, q, v, tau)),
        ("forward_dynamics(cholesky)", "nle+crba+cholesky.decompose/solve", cholesky),
        ("frame_pose", "forwardKinematics+updateFramePlacement", frame_pose),
        (
            "jacobian",
            "computeFrameJacobian(LWA)",
            partial(pin.computeFrameJacobian, model, data, q, frame_id, lwa),
        ),
        (
            "kinetic_energy",
            "computeKineticEnergy",
            partial(pin.computeKineticEnergy, model, data, q, v),
        ),
        (
            "potential_energy",
            "computePotentialEnergy",
            partial(pin.computePotentialEnergy, model, data, q),
        ),
        ("operational_space_inertia", "frameJacobian+Minverse, inv(J Minv Jᵀ)", lambda_dense),
        (
            "operational_space",
            "Jacobian, Minverse, nle, gravity, classical acc.; Λ, J̄, μ, p",
            operational_space,
        ),
    ]
    delassus = Peer(
        "operational_space_inertia",
        DELASSUS_ROW,
        "inv(computeDelassusMatrix), LOCAL axes",
        lambda_delassus,
    )
    return [Peer(function, function, label, call) for function, label, call in peers] + [delassus]


def _frame_contact(model: pin.Model, frame_id: int) -> tuple[object, object]:
    """A 6-D constraint on the frame, for Pinocchio's Delassus matrix J M⁻¹ Jᵀ.

    computeDelassusMatrix answers in the frame's LOCAL axes whatever reference frame the
    constraint names (Pinocchio 4.1): the same work as world-aligned axes up to a 6x6 rotation.
    """
    frame = model.frames[frame_id]
    constraint = pin.RigidConstraintModel(
        pin.ContactType.CONTACT_6D,
        model,
        frame.parentJoint,
        frame.placement,
        pin.ReferenceFrame.LOCAL,
    )
    models = pin.StdVec_RigidConstraintModel()
    models.append(constraint)
    datas = pin.StdVec_RigidConstraintData()
    datas.append(constraint.createData())
    return models, datas


def _symmetric(upper: np.ndarray) -> np.ndarray:
    """The symmetric matrix whose upper triangle Pinocchio filled."""
    return np.triu(upper) + np.triu(upper, 1).T


def oracle_answers(
    oracle: PinocchioOracle, frame: str, s: State, peers: Sequence[Peer]
) -> dict[str, Callable[[], object]]:
    """Pinocchio's answer to each Robot function, in robodyn's joint order (operational_space:
    its peer's [Λ; μ; p; J̇q̇], all task-space)."""
    return {
        "inverse_dynamics": lambda: oracle.rnea(s.q, s.qd, s.qdd),
        "bias_forces": lambda: oracle.bias_forces(s.q, s.qd),
        "gravity_torques": lambda: oracle.gravity_torques(s.q),
        "coriolis_matrix": lambda: oracle.coriolis_matrix(s.q, s.qd),
        "mass_matrix": lambda: oracle.mass_matrix(s.q),
        "mass_matrix_inverse": lambda: oracle.mass_matrix_inverse(s.q),
        "forward_dynamics(aba)": lambda: oracle.aba(s.q, s.qd, s.tau),
        "forward_dynamics(cholesky)": lambda: oracle.aba(s.q, s.qd, s.tau),
        "frame_pose": lambda: oracle.frame_pose(s.q, frame),
        "jacobian": lambda: oracle.jacobian(s.q, frame),
        "kinetic_energy": lambda: oracle.kinetic_energy(s.q, s.qd),
        "potential_energy": lambda: oracle.potential_energy(s.q),
        "operational_space_inertia": lambda: oracle.operational_space_inertia(s.q, frame),
        "operational_space": next(p.call for p in peers if p.row == "operational_space"),
    }


def relative_error(ours: object, expected: object) -> float:
    if isinstance(ours, OperationalSpaceDynamics):
        ours = np.concatenate([ours.Lambda.ravel(), ours.mu, ours.p, ours.Jdot_qd])
    ours, expected = np.asarray(ours, dtype=float), np.asarray(expected, dtype=float)
    return float(np.max(np.abs(ours - expected)) / max(np.max(np.abs(expected)), 1e-300))


# -- one robot --------------------------------------------------------------------------------


def bench_robot(spec: RobotSpec, repeat: int, budget_s: float) -> tuple[int, list[Result]]:
    """The robot's nv and one Result per (function, Pinocchio peer)."""
    robot = spec.load()
    state = random_state(robot.nv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle = load_oracle(spec, robot.joint_names)
    ours = robot_calls(robot, spec.frame, state)
    peers = pinocchio_peers(oracle, spec.frame, state)
    expected = oracle_answers(oracle, spec.frame, state, peers)
    results = []
    for function, call in ours.items():
        group = [peer for peer in peers if peer.function == function]
        ours_us, *pin_us = interleaved_us([call, *(peer.call for peer in group)], repeat, budget_s)
        error = relative_error(call(), expected[function]())
        for peer, us in zip(group, pin_us, strict=True):
            comparable = peer.row == function
            results.append(Result(peer.row, peer.label, ours_us, us, error if comparable else None))
    return robot.nv, results


def ratio_cell(result: Result, goal: float | None) -> str:
    cell = f"{result.ratio:.2f}"
    return cell if goal is None else f"{cell} {mark(result.ratio <= goal)}"


def robot_table(spec: RobotSpec, nv: int, results: Sequence[Result]) -> str:
    header = ["function", "Pinocchio", "ours µs", "pin µs", "ours/pin", "rel. error"]
    rows = [
        [
            r.row,
            r.label,
            format_us(r.ours_us),
            format_us(r.pin_us),
            ratio_cell(r, target(nv, spec, r.row)),
            "—" if r.error is None else f"{r.error:.0e}",
        ]
        for r in results
    ]
    return f"### {spec.name} (nv = {nv}, frame {spec.frame})\n\n" + markdown_table(header, rows, 2)


def summary_table(specs: Sequence[RobotSpec], runs: dict[str, tuple[int, list[Result]]]) -> str:
    cells = {
        (r.row, spec.name): ratio_cell(r, target(runs[spec.name][0], spec, r.row))
        for spec in specs
        for r in runs[spec.name][1]
    }
    rows = list(dict.fromkeys(r.row for _, results in runs.values() for r in results))
    columns = [spec.name for spec in specs]
    return markdown_table(["ours/pin", *columns], pivot(cells, rows, columns))


# -- command line -----------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    known = robot_specs()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--robots",
        type=lambda text: text.split(","),
        default=list(known),
        help=f"comma-separated, from {','.join(known)} (default: all)",
    )
    parser.add_argument("--repeat", type=int, help="timed loops per call (default 9, quick 3)")
    parser.add_argument("--quick", action="store_true", help="short loops, under 30 s")
    add_docs_option(parser)
    args = parser.parse_args(argv)
    unknown = [name for name in args.robots if name not in known]
    if unknown:
        parser.error(f"unknown robots {unknown}; choose from {', '.join(known)}")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    args.repeat = args.repeat or (3 if args.quick else 9)
    report = Report.start(__file__, "Ours against Pinocchio, function by function", args, argv)
    budget_s = 0.003 if args.quick else 0.02
    specs = [robot_specs()[name] for name in args.robots]
    report.print(
        f"Median of {args.repeat} interleaved loops of ~{budget_s * 1e3:g} ms; targets (✓/✗): "
        "7-DOF RNEA/CRBA/ABA ≤ 1.0, chains N ≥ 64 ≤ 0.5\n"
    )
    runs = {}
    for spec in specs:
        runs[spec.name] = bench_robot(spec, args.repeat, budget_s)
        report.print(robot_table(spec, *runs[spec.name]) + "\n")
        gc.collect()  # Pinocchio's Data is ~1 GB at N = 256
    report.print("### Summary: ours / Pinocchio, µs per Python call\n")
    report.print(summary_table(specs, runs))
    report.finish()


if __name__ == "__main__":
    main()
