"""Floating-base robots, each Robot function against Pinocchio's free flyer, timed side by side
in one process.

    .venv/bin/python src/robodyn_ros/benchmarks/floating_base.py [--robots talos_reduced,solo12]
        [--repeat 9] [--horizon 10] [--quick] [--docs]

The humanoids and quadrupeds of example-robot-data, loaded with floating_base=True (the free
flyer 'free_flyer' at the root), get one random state (the base turned and moving, the joints
inside their limits); Pinocchio's is converted once, outside the loops. Each call runs in timed
loops of about `budget` seconds, ours and Pinocchio's taking turns `--repeat` times; the median
gives µs per Python call, and the error column is max |ours − Pinocchio| / max |Pinocchio| of
one answer. Contacts: the humanoids stand on both soles ("6d"), the quadrupeds on four feet
("3d"), against Pinocchio's constraintDynamics. Last, the preview of each robot tumbling free
in zero gravity for --horizon seconds at 1 ms with RK4 (the compiled rollout; the URDF's joint
damping and friction set to zero, so that the energy is conserved): how far its centroidal
momentum and energy drift, and its real-time factor (the best of three runs), beside MuJoCo's
rollout of the same URDF (its meshes left out, a free joint at the root, damping and friction
loss zero, RK4 at 1 ms, zero gravity). --docs also writes the tables to
docs/benchmarks/floating_base.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import time
import warnings
from collections.abc import Sequence
from functools import partial

import mujoco
import numpy as np
import pinocchio as pin
from mujoco import rollout as mujoco_rollout

from common import (
    PinocchioResult,
    PinocchioRow,
    Report,
    comparison_arguments,
    loop_budget_s,
    mark,
    markdown_table,
    pinocchio_summary,
    pinocchio_table,
    symmetric,
    time_against_pinocchio,
)
from robodyn_ros import Robot
from robodyn_ros.errors import NonFiniteResultError
from robodyn_ros.model.model import FREE_FLYER_DOF
from robodyn_ros.robot.contact_dynamics import Contact
from robodyn_ros.sim.preview import PreviewSettings, preview
from robodyn_ros.testing import example_robot_urdf
from robodyn_ros.testing.floating_pinocchio_oracle import FloatingPinocchioOracle
from robodyn_ros.testing.mujoco_twin import mujoco_model
from robodyn_ros.testing.tumbling import conservation_drift, float_free, tumbling

# robot → (a hand or foot for J and Λ, the contacts it stands on)
ROBOTS = {
    "talos_reduced": ("arm_left_7_link", (("left_sole_link", "6d"), ("right_sole_link", "6d"))),
    "icub": ("l_hand", (("l_sole", "6d"), ("r_sole", "6d"))),
    "solo12": ("FL_FOOT", tuple((f, "3d") for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"))),
    "anymal": ("LF_FOOT", tuple((f, "3d") for f in ("LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"))),
}
# the targets, on TALOS: ours / Pinocchio at most
GOALS = {"inverse_dynamics": 0.5, "mass_matrix": 0.5, "forward_dynamics": 0.5,
         "centroidal_momentum_matrix": 0.8, "mass_matrix_inverse": 0.8, "jacobian": 0.8,
         "gravity_torques": 0.8, "constrained_forward_dynamics": 0.7}
"""Ours / Pinocchio at most, per Python call, on the robots of TARGETS."""
TARGETS = {"talos_reduced": GOALS, "solo12": GOALS}
SEED = 1


def random_state(robot: Robot) -> tuple[np.ndarray, ...]:
    """q, v, vdot, tau: the base turned and moving, the joints inside their limits."""
    rng = np.random.default_rng(SEED)
    q = robot.neutral()
    q[:3] = rng.uniform(-1.0, 1.0, 3)
    quaternion = rng.normal(size=4)
    q[3:7] = quaternion / np.linalg.norm(quaternion)
    lower, upper = (robot.per_coordinate(limit)[FREE_FLYER_DOF:]
                    for limit in (robot.model.lower, robot.model.upper))
    q[7:] = rng.uniform(np.maximum(lower, -np.pi), np.minimum(upper, np.pi))
    v, vdot, tau = rng.uniform(-1.0, 1.0, (3, robot.nv))
    return q, v, vdot, tau


def rows(name: str, robot: Robot, oracle: FloatingPinocchioOracle) -> list[PinocchioRow]:
    """Every timed function of one robot, ours and Pinocchio's on one state."""
    frame, feet = ROBOTS[name]
    q, v, vdot, tau = random_state(robot)
    model, data = oracle.model, oracle.data
    q_pin, v_pin, a_pin, tau_pin = oracle.q(q), oracle.v(v), oracle.v(vdot), oracle.v(tau)
    frame_id = model.getFrameId(frame, pin.FrameType.BODY)
    lwa = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    # built once, as Pinocchio's constraint models below: a tuple, which the Robot remembers
    contacts = tuple(Contact(link, kind) for link, kind in feet)
    constraints = oracle.constraint_models(q_pin, feet, 0.0, 0.0, None)
    constraint_data = pin.StdVec_RigidConstraintData()
    constraint_data.extend(constraint.createData() for constraint in constraints)
    pin.initConstraintDynamics(model, data, constraints, constraint_data)

    def lambda_dense() -> np.ndarray:
        J = pin.computeFrameJacobian(model, data, q_pin, frame_id, lwa)
        Minv = symmetric(pin.computeMinverse(model, data, q_pin))
        return np.linalg.inv(J @ Minv @ J.T)

    def constrained() -> np.ndarray:
        return pin.constraintDynamics(model, data, q_pin, v_pin, tau_pin, constraints,
                                      constraint_data)

    def ours_constrained() -> np.ndarray:
        return robot.constrained_forward_dynamics(q, v, tau, contacts).vdot

    return [
        PinocchioRow("inverse_dynamics", "rnea", partial(robot.inverse_dynamics, q, v, vdot),
                     partial(pin.rnea, model, data, q_pin, v_pin, a_pin),
                     partial(oracle.rnea, q, v, vdot)),
        PinocchioRow("bias_forces", "nonLinearEffects", partial(robot.bias_forces, q, v),
                     partial(pin.nonLinearEffects, model, data, q_pin, v_pin),
                     partial(oracle.bias_forces, q, v)),
        PinocchioRow("gravity_torques", "computeGeneralizedGravity",
                     partial(robot.gravity_torques, q),
                     partial(pin.computeGeneralizedGravity, model, data, q_pin),
                     partial(oracle.gravity_torques, q)),
        PinocchioRow("mass_matrix", "crba", partial(robot.mass_matrix, q),
                     partial(pin.crba, model, data, q_pin), partial(oracle.mass_matrix, q)),
        PinocchioRow("mass_matrix_inverse", "computeMinverse",
                     partial(robot.mass_matrix_inverse, q),
                     partial(pin.computeMinverse, model, data, q_pin),
                     partial(oracle.mass_matrix_inverse, q)),
        PinocchioRow("forward_dynamics", "aba", partial(robot.forward_dynamics, q, v, tau),
                     partial(pin.aba, model, data, q_pin, v_pin, tau_pin),
                     partial(oracle.aba, q, v, tau)),
        PinocchioRow("jacobian", "computeFrameJacobian(LWA)", partial(robot.jacobian, q, frame),
                     partial(pin.computeFrameJacobian, model, data, q_pin, frame_id, lwa),
                     partial(oracle.jacobian, q, frame)),
        PinocchioRow("centroidal_momentum_matrix", "computeCentroidalMap",
                     partial(robot.centroidal_momentum_matrix, q),
                     partial(pin.computeCentroidalMap, model, data, q_pin),
                     partial(oracle.centroidal_map, q)),
        PinocchioRow("operational_space_inertia", "Jacobian+Minverse, inv(J Minv Jᵀ)",
                     partial(robot.operational_space_inertia, q, frame), lambda_dense,
                     partial(oracle.operational_space_inertia, q, frame)),
        PinocchioRow("constrained_forward_dynamics", "constraintDynamics", ours_constrained,
                     constrained, lambda: oracle.constrained_forward_dynamics(q, v, tau, feet)[0]),
    ]


def bench_robot(name: str, repeat: int, budget_s: float) -> tuple[int, list[PinocchioResult]]:
    """The robot's nv and a result per row."""
    path = example_robot_urdf(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the sensor links' singular inertias
        robot = Robot.from_urdf(path, floating_base=True)
    oracle = FloatingPinocchioOracle(path, robot.joint_names)
    return robot.nv, time_against_pinocchio(rows(name, robot, oracle), repeat, budget_s)


def goal(name: str, nv: int, result: PinocchioResult) -> float | None:
    """The target of the result's function on the robots of TARGETS."""
    return TARGETS.get(name, {}).get(result.function)


def robot_table(name: str, nv: int, results: Sequence[PinocchioResult]) -> str:
    frame, feet = ROBOTS[name]
    contacts = ", ".join(f"{link} ({kind})" for link, kind in feet)
    return (f"### {name} (nv = {nv}; frame {frame}; contacts {contacts})\n\n"
            + pinocchio_table(name, nv, results, goal))


def add_horizon_option(parser: argparse.ArgumentParser) -> None:
    """--horizon: how long the robot tumbles in the preview."""
    parser.add_argument("--horizon", type=float, default=10.0,
                        help="s of the free tumble in the preview (default 10, quick 1)")


def main(argv: Sequence[str] | None = None) -> None:
    args = comparison_arguments(argv, __doc__.splitlines()[0], list(ROBOTS),
                                "short loops, a 1 s tumble", add_horizon_option)
    report = Report.start(__file__, "Floating-base robots against Pinocchio", args, argv)
    budget_s = loop_budget_s(args.quick)
    goals = ", ".join(f"{function} ≤ {bound:g}" for function, bound in GOALS.items())
    report.print(f"Median of {args.repeat} interleaved loops of ~{budget_s * 1e3:g} ms; targets "
                 f"(✓/✗) on {' and '.join(TARGETS)}: {goals}\n")
    runs = {}
    for name in args.robots:
        runs[name] = bench_robot(name, args.repeat, budget_s)
        report.print(robot_table(name, *runs[name]) + "\n")
    report.print(pinocchio_summary(runs, goal))
    horizon = 1.0 if args.quick else args.horizon
    report.print(f"\n### Tumbling free in zero gravity: the preview over {horizon:g} s at 1 ms "
                 f"(RK4); targets: TALOS ≥ {TUMBLE_TARGET:g} times real time, ≥ "
                 f"{TARGET_VS_MUJOCO:g} times MuJoCo\n")
    report.print(markdown_table(
        ["robot", "momentum drift / ‖h₀‖", "energy drift / E₀", "real-time factor",
         "MuJoCo real-time factor", "ours / MuJoCo"],
        [tumble_row(name, horizon) for name in args.robots]))
    report.finish()


TUMBLE_TARGET = 100.0  # TALOS' real-time factor tumbling free, at least
TARGET_VS_MUJOCO = 2.0  # ours / MuJoCo's real-time factor, at least


def tumble_row(name: str, horizon: float) -> list[str]:
    """The drifts and the real-time factor of the robot's free tumble (testing.tumbling),
    without joint damping and friction, and MuJoCo's beside it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded = Robot.from_urdf(example_robot_urdf(name), floating_base=True)
    zeros = np.zeros(loaded.nv)
    robot = Robot(dataclasses.replace(loaded.model, damping=zeros, friction=zeros,
                                      gravity=np.zeros(3)))
    settings = PreviewSettings(horizon=horizon, dt=1e-3)
    q, v = tumbling(robot)
    try:
        preview(robot, [float_free(robot)], PreviewSettings(horizon=1e-2, dt=1e-3), q, v)
        results = [preview(robot, [float_free(robot)], settings, q, v)[0] for _ in range(3)]
    except NonFiniteResultError as error:  # the run diverged: say where, as the preview does
        step = re.search(r"step \d+ .*?\(t = [^)]*\)", str(error))
        return [name, "diverged", step.group(0) if step else "", "—", "—", "—"]
    momentum, energy = conservation_drift(robot, results[0])
    ours = max(result.real_time_factor for result in results)
    speed = f"{ours:.0f}" + (f" {mark(ours >= TUMBLE_TARGET)}" if name == "talos_reduced"
                             else "")
    try:
        theirs = mujoco_tumble_rtf(name, horizon)
    except ValueError as error:  # MuJoCo refuses the URDF (an inertia it will not take)
        return [name, f"{momentum:.1e}", f"{energy:.1e}", speed,
                f"refused: {str(error).splitlines()[0]}", "—"]
    ratio = ours / theirs
    return [name, f"{momentum:.1e}", f"{energy:.1e}", speed, f"{theirs:.0f}",
            f"{ratio:.2f} {mark(ratio >= TARGET_VS_MUJOCO)}"]


def mujoco_tumble_rtf(name: str, horizon: float) -> float:
    """MuJoCo's real-time factor on the robot's URDF, free-floating, by mujoco.rollout (the
    best of three): visuals and collisions left out (no meshes, no contacts), a free joint on
    the root body, damping and friction loss zero, RK4 at 1 ms, zero gravity, every velocity
    0.5."""
    model = mujoco_model(example_robot_urdf(name).read_text(), floating_base=True,
                         collisions=False)
    model.opt.timestep, model.opt.integrator = 1e-3, mujoco.mjtIntegrator.mjINT_RK4
    model.opt.gravity[:] = 0.0
    model.dof_damping[:] = model.dof_frictionloss[:] = 0.0
    data = mujoco.MjData(model)
    data.qvel[:] = 0.5
    kind = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.empty(mujoco.mj_stateSize(model, kind))
    mujoco.mj_getState(model, data, state, kind)
    steps = round(horizon / 1e-3)
    mujoco_rollout.rollout(model, data, state, nstep=10)
    times = []
    for _ in range(3):
        started = time.perf_counter()
        mujoco_rollout.rollout(model, data, state, nstep=steps)
        times.append(time.perf_counter() - started)
    return horizon / min(times)


if __name__ == "__main__":
    main()
