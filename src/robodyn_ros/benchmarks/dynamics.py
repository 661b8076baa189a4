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

import gc
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import pinocchio as pin

from common import (
    PinocchioResult,
    Report,
    RobotSpec,
    State,
    comparison_arguments,
    frame_constraint,
    interleaved_us,
    loop_budget_s,
    pinocchio_summary,
    pinocchio_table,
    random_state,
    relative_error,
    robot_calls,
    robot_specs,
    symmetric,
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


def target(name: str, nv: int, result: PinocchioResult) -> float | None:
    """The ratio to stay under: 7-DOF RNEA/CRBA/ABA ≤ 1.0, chains N ≥ 64 ≤ 0.5."""
    if result.function not in TARGET_FUNCTIONS:
        return None
    if robot_specs()[name].chain >= 64:
        return 0.5
    return 1.0 if nv == 7 else None


# -- the two sides ----------------------------------------------------------------------------


def pinocchio_peers(oracle: PinocchioOracle, frame: str, s: State) -> list[Peer]:
    """Pinocchio's Python calls for each Robot function, on `s` converted once."""
    model, data = oracle.model, oracle.data
    q, v, a, tau = oracle.q(s.q), oracle.v(s.qd), oracle.v(s.qdd), oracle.v(s.tau)
    frame_id = model.getFrameId(frame, pin.FrameType.BODY)
    lwa = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    # computeDelassusMatrix answers in the frame's LOCAL axes whatever reference frame the
    # constraint names (Pinocchio 4.1): the same work as world-aligned axes up to a rotation
    contacts, contact_data = frame_constraint(model, frame_id, pin.ReferenceFrame.LOCAL)
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
        Minv = symmetric(pin.computeMinverse(model, data, q))
        return np.linalg.inv(J @ Minv @ J.T)

    def operational_space() -> np.ndarray:
        J = pin.computeFrameJacobian(model, data, q, frame_id, lwa)
        Minv = symmetric(pin.computeMinverse(model, data, q))
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


def comparable(ours: object) -> object:
    """Our answer as its Pinocchio peer's: operational_space's as [Λ; μ; p; J̇q̇]."""
    if isinstance(ours, OperationalSpaceDynamics):
        return np.concatenate([ours.Lambda.ravel(), ours.mu, ours.p, ours.Jdot_qd])
    return ours


# -- one robot --------------------------------------------------------------------------------


def bench_robot(
    spec: RobotSpec, repeat: int, budget_s: float
) -> tuple[int, list[PinocchioResult]]:
    """The robot's nv and one result per (function, Pinocchio peer)."""
    robot = spec.load()
    state = random_state(robot.nv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle = spec.pinocchio_oracle(robot.joint_names)
    ours = robot_calls(robot, spec.frame, state)
    peers = pinocchio_peers(oracle, spec.frame, state)
    expected = oracle_answers(oracle, spec.frame, state, peers)
    results = []
    for function, call in ours.items():
        group = [peer for peer in peers if peer.function == function]
        ours_us, *pin_us = interleaved_us([call, *(peer.call for peer in group)], repeat, budget_s)
        error = relative_error(comparable(call()), expected[function]())
        for peer, us in zip(group, pin_us, strict=True):
            same = peer.row == function
            results.append(PinocchioResult(peer.row, peer.label, ours_us, us,
                                           error if same else None))
    return robot.nv, results


def main(argv: Sequence[str] | None = None) -> None:
    args = comparison_arguments(argv, __doc__.splitlines()[0], list(robot_specs()),
                                "short loops, under 30 s")
    report = Report.start(__file__, "Ours against Pinocchio, function by function", args, argv)
    budget_s = loop_budget_s(args.quick)
    specs = [robot_specs()[name] for name in args.robots]
    report.print(
        f"Median of {args.repeat} interleaved loops of ~{budget_s * 1e3:g} ms; targets (✓/✗): "
        "7-DOF RNEA/CRBA/ABA ≤ 1.0, chains N ≥ 64 ≤ 0.5\n"
    )
    runs = {}
    for spec in specs:
        runs[spec.name] = bench_robot(spec, args.repeat, budget_s)
        nv, results = runs[spec.name]
        report.print(f"### {spec.name} (nv = {nv}, frame {spec.frame})\n\n"
                     + pinocchio_table(spec.name, nv, results, target) + "\n")
        gc.collect()  # Pinocchio's Data is ~1 GB at N = 256
    report.print(pinocchio_summary(runs, target))
    report.finish()


if __name__ == "__main__":
    main()
