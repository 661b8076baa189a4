"""A fixed-step scenario by the compiled rollout kernel (sim.rollout with the compiled control
laws of control.compiled_laws): the scenario's law as the kernel takes it, its trajectory, and
why a rollout went non-finite."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from robodyn_ros.control.compiled_laws import (
    JOINT_TRACKING,
    OPERATIONAL_SPACE,
    TORQUE,
    WHOLE_BODY,
    ControlLaw,
)
from robodyn_ros.control.whole_body import WholeBodyController, WholeBodyTargets
from robodyn_ros.control.whole_body_programme import WholeBodyLaw, no_whole_body
from robodyn_ros.errors import NonFiniteResultError
from robodyn_ros.model.model import FREE_FLYER_DOF
from robodyn_ros.robot import Robot
from robodyn_ros.sim import rollout
from robodyn_ros.sim.preview_result import PreviewSettings, sample_steps, sample_stride
from robodyn_ros.sim.scenarios import (
    FixedScenario,
    JointTrajectory,
    OptimalReach,
    PoseTarget,
    Scenario,
    ScenarioError,
    TorqueProfile,
    WholeBodyPose,
)


def compiled_rollout(
    robot: Robot, settings: PreviewSettings, q: np.ndarray, qd: np.ndarray,
    scenario: FixedScenario, times: np.ndarray,
) -> tuple[rollout.Trajectory, float]:
    """One scenario by the rollout kernel (rollout_trajectory), its joints stopped at their
    limits, checked finite.

    Raises:
        SingularMassMatrixError, NonFiniteResultError: the state went non-finite; M is
            singular at the last finite state, or else the step where it did.
    """
    trajectory, smallest = rollout_trajectory(robot, settings, q, qd, scenario, times)
    if not (np.isfinite(trajectory.q).all() and np.isfinite(trajectory.qd).all()):
        raise rollout_failure(robot, trajectory.q, trajectory.qd)
    return trajectory, smallest


def rollout_trajectory(
    robot: Robot, settings: PreviewSettings, q: np.ndarray, qd: np.ndarray,
    scenario: FixedScenario, times: np.ndarray, stop_at_limits: bool = True,
) -> tuple[rollout.Trajectory, float]:
    """One scenario by the rollout kernel: its trajectory (q (K + 1, nq), q̇ (K + 1, n),
    commanded efforts (K, n), limit stops (n,), the frame's poses (K + 1, 4, 4), the energy at
    the sample steps (S,)), NaN from where the state stopped being finite, and the smallest
    singular value of the frame's J over the samples. stop_at_limits: the joints stop at their
    limits (rollout.Stepping), else the steps past one are counted.

    Raises:
        ScenarioError: a scenario with a controller on a robot with free flyer or planar
            joints: the compiled laws take one coordinate per joint (a torque profile runs).
    """
    if isinstance(scenario, WholeBodyPose):  # its law runs in the contact rollout only
        raise ScenarioError(f"scenario '{scenario.name}': a whole-body pose runs compiled in a "
                            "world only (sim.world_scenario.compiled_world_rollout)")
    inputs = rollout_inputs(robot, settings, q, qd, scenario, times, stop_at_limits)
    smallest = np.nan
    try:
        smallest = rollout.rollout(inputs.robot, inputs.law, inputs.stepping, inputs.trajectory)
    except np.linalg.LinAlgError:  # numba's SVD of a NaN Jacobian: the state went NaN before
        pass
    return inputs.trajectory, smallest


@dataclass(frozen=True, eq=False)
class RolloutInputs:
    """What a rollout kernel takes of a scenario: the robot (rollout.RolloutRobot), the law
    (ControlLaw), the stepping (rollout.Stepping) and the trajectory to fill, its first state
    set and the rest NaN (rollout.Trajectory)."""

    robot: rollout.RolloutRobot
    law: ControlLaw
    stepping: rollout.Stepping
    trajectory: rollout.Trajectory


def rollout_inputs(
    robot: Robot, settings: PreviewSettings, q: np.ndarray, qd: np.ndarray,
    scenario: Scenario, times: np.ndarray, stop_at_limits: bool = True,
) -> RolloutInputs:
    """The RolloutInputs of a scenario from (q, q̇) (rollout_trajectory's arguments; a
    whole-body pose's law is the WHOLE_BODY law, which the contact rollout runs).

    Raises:
        ScenarioError: as rollout_trajectory.
    """
    if robot.nq != robot.nv and not isinstance(scenario, TorqueProfile | WholeBodyPose):
        raise ScenarioError(
            f"scenario '{scenario.name}': the compiled rollout runs a robot with free flyer "
            "or planar joints under a torque profile or whole-body control only")
    if isinstance(scenario, OptimalReach):
        raise ScenarioError(
            f"scenario '{scenario.name}': an optimal reach has no compiled law; the preview "
            "plans it and steps SimulatedRobot under the plan")
    steps, n = settings.steps, robot.nv
    model = robot.model
    joints = np.array([model.lower, model.upper, model.velocity_limit, model.effort_limit,
                       model.damping, model.friction], dtype=float)
    stepping = rollout.Stepping(
        integrator={"semi_implicit_euler": rollout.SEMI_IMPLICIT_EULER,
                    "rk4": rollout.RK4}[settings.integrator],
        dt=float(settings.dt), friction_velocity=float(settings.friction_velocity),
        sample_every=sample_stride(settings), stop_at_limits=stop_at_limits)
    trajectory = rollout.Trajectory(
        q=np.full((steps + 1, robot.nq), np.nan),  # NaN: not reached
        qd=np.full((steps + 1, n), np.nan),
        tau=np.empty((steps, n)), clamped=np.zeros(n, dtype=np.int64),
        path=np.empty((steps + 1, 4, 4)), energy=np.empty(len(sample_steps(settings))))
    trajectory.q[0], trajectory.qd[0] = q, qd
    return RolloutInputs(rollout.RolloutRobot(*robot.kernel_arrays, joints),
                         _control_law(robot, settings, scenario, q, times), stepping, trajectory)


def rollout_failure(robot: Robot, Q: np.ndarray, QD: np.ndarray) -> Exception:
    """Why the rollout's state went NaN or inf (its kernel reports no cause): the forward
    dynamics' own error at the last finite state (SingularMassMatrixError naming the joints,
    where M is singular there), or else a NonFiniteResultError naming the step."""
    finite = np.isfinite(Q).all(axis=1) & np.isfinite(QD).all(axis=1)
    step = int(np.argmin(finite))  # the first state not finite; the one before is (Q[0] is)
    robot.forward_dynamics(Q[step - 1], QD[step - 1], np.zeros(robot.nv))
    return NonFiniteResultError("preview", "the state", f"at step {step} of the rollout")


def _control_law(robot: Robot, settings: PreviewSettings,
                 scenario: FixedScenario | WholeBodyPose, q: np.ndarray,
                 times: np.ndarray) -> ControlLaw:
    """The scenario's controller as the rollout kernel runs it, from the start posture q."""
    n, no_task, no_target = robot.nv, np.zeros((2, 6)), np.zeros(12)
    tree, _ = robot.kernel_arrays
    law = partial(ControlLaw, control_every=settings.control_every,
                  frame=robot.frame_row(scenario.frame),
                  threshold=float(settings.singular_threshold), force=np.zeros((3, 6)),
                  force_integral_gain=0.0, whole_body=no_whole_body(tree, n))
    if isinstance(scenario, WholeBodyPose):
        return law(kind=WHOLE_BODY, joint_gains=np.zeros((3, n)), task_gains=no_task,
                   target=no_target, reference=np.zeros((0, 3, n)),
                   whole_body=whole_body_law(robot, scenario, q))
    if isinstance(scenario, PoseTarget):
        rotation = target_rotation(robot, scenario, q)
        return law(kind=OPERATIONAL_SPACE,
                   joint_gains=np.array([scenario.null_stiffness, scenario.null_damping, q]),
                   task_gains=np.array([scenario.kp, scenario.kd]), force=force_law(scenario),
                   force_integral_gain=float(scenario.force_integral_gain),
                   target=np.concatenate([rotation.ravel(), scenario.position]),
                   reference=np.zeros((0, 3, n)))
    if isinstance(scenario, JointTrajectory):
        return law(kind=JOINT_TRACKING,
                   joint_gains=np.array([scenario.stiffness, scenario.damping, q]),
                   task_gains=no_task, target=no_target,
                   reference=scenario.reference(times[:-1], q))
    return law(kind=TORQUE, joint_gains=np.zeros((3, n)), task_gains=no_task, target=no_target,
               reference=scenario.reference(times[:-1], q))


def whole_body_targets(robot: Robot, scenario: WholeBodyPose, q: np.ndarray
                       ) -> WholeBodyTargets:
    """The whole-body pose's targets, what it leaves out taken from the start q."""
    start = robot.frame_pose(q, scenario.frame)
    kp, kd, weights = scenario.kp, scenario.kd, scenario.weights
    return WholeBodyTargets(
        com=robot.centre_of_mass(q) if scenario.com is None else scenario.com,
        frame=scenario.frame, position=scenario.position,
        orientation=start[:3, :3] if scenario.orientation is None else scenario.orientation,
        posture=q[FREE_FLYER_DOF + 1:].copy(), kp=(kp[0], kp[1], kp[2]), kd=(kd[0], kd[1], kd[2]),
        weights=(weights[0], weights[1], weights[2]))


def whole_body_law(robot: Robot, scenario: WholeBodyPose, q: np.ndarray) -> WholeBodyLaw:
    """The whole-body pose's controller from the start q as the WHOLE_BODY law takes it.

    Raises:
        ValueError: what WholeBodyController refuses (a robot with mimic joints, a frame it
            does not have, a sole on a 3-D contact), naming it.
    """
    controller = WholeBodyController(robot, scenario.contacts,
                                     whole_body_targets(robot, scenario, q), scenario.ground)
    model, targets = controller.model
    return WholeBodyLaw(model, targets, controller.programme)  # the law's from now on


def force_law(scenario: PoseTarget) -> np.ndarray:
    """The pose target's force law as the compiled law takes it (3, 6): the rows AXES (0/1),
    TARGET F_d and DAMPING K_vf (its kd where the scenario gives none)."""
    damping = scenario.kd if scenario.force_damping is None else scenario.force_damping
    return np.array([scenario.force_axes.astype(float), scenario.force_target,
                     np.broadcast_to(damping, 6)], dtype=float)


def target_rotation(robot: Robot, scenario: PoseTarget | OptimalReach, q: np.ndarray
                    ) -> np.ndarray:
    if scenario.orientation is not None:
        return scenario.orientation
    return robot.frame_pose(q, scenario.frame)[:3, :3]


__all__ = ["RolloutInputs", "compiled_rollout", "force_law", "rollout_failure", "rollout_inputs",
           "rollout_trajectory", "target_rotation", "whole_body_law", "whole_body_targets"]
