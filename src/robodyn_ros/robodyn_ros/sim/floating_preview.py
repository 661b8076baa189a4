"""The preview of a robot with a free flyer or planar joint (a floating or mobile base): its
scenarios simulated over the horizon, free under a torque profile by the compiled rollout
(sim.rollout, on the configuration's group), in a world under a torque profile or whole-body
control by the compiled contact rollout (sim.contact_rollout), or step by step by
SimulatedRobot where pushes act or contacts are held (a whole-body pose without a world), and
measured as sim.preview measures a fixed-base robot's.

The contacts of a whole-body pose without a world are held where they are at the start,
Baumgarte-stabilised with CONTACT_GAINS; in a scenario with a world they are only the
controller's (the feet it stands on), and the robot touches the world's planes with its
collision shapes, unilateral and with friction (sim.world_scenario). Every path applies the
joints' damping and friction. The compiled free-space rollout does not stop the joints at their
limits (a stop would change the robot's momentum); in a world, and stepped, they stop as
SimulatedRobot stops them. limit_violations counts the steps each joint ends on or beyond one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from robodyn_ros.contact.geometry import CollisionShape
from robodyn_ros.control.operational_space_controller import rotation_error
from robodyn_ros.control.whole_body import WholeBodyController
from robodyn_ros.errors import NonFiniteResultError
from robodyn_ros.model.model import FREE_FLYER_DOF
from robodyn_ros.robot import Robot
from robodyn_ros.robot.configuration import check_configuration
from robodyn_ros.sim.lie_integrators import LIE_INTEGRATORS
from robodyn_ros.sim.preview_result import (
    PreviewMetrics,
    PreviewResult,
    PreviewSettings,
    smallest_singular_values,
)
from robodyn_ros.sim.rollout import Trajectory
from robodyn_ros.sim.scenario_rollout import rollout_trajectory, whole_body_targets
from robodyn_ros.sim.scenario_run import ScenarioRun
from robodyn_ros.sim.scenarios import (
    Scenario,
    ScenarioError,
    TorqueProfile,
    WholeBodyPose,
    apply_pushes,
)
from robodyn_ros.sim.simulated_robot import SimulatedRobot
from robodyn_ros.sim.world_scenario import check_world, compiled_world_rollout, simulated_robot

CONTACT_GAINS = (100.0, 20.0)  # Baumgarte kp (1/s²) and kd (1/s) of the held contacts

Command = Callable[[int, SimulatedRobot], np.ndarray]


def check_floating_settings(settings: PreviewSettings) -> None:
    """A ScenarioError unless a floating robot's preview takes the settings.

    Raises:
        ScenarioError: an integrator the group's simulation has not (LIE_INTEGRATORS), or a
            forward-dynamics method other than "aba".
    """
    if settings.integrator not in LIE_INTEGRATORS or settings.forward_dynamics_method != "aba":
        raise ScenarioError(
            f"a floating-base robot's preview integrates with {', '.join(LIE_INTEGRATORS)} and "
            f"the articulated-body algorithm; got {settings.integrator!r} and "
            f"{settings.forward_dynamics_method!r}")


def floating_start(robot: Robot, q: np.ndarray | None, v: np.ndarray | None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The start state (q, v) of a floating robot's preview: neutral and at rest by default."""
    return (robot.neutral() if q is None else np.asarray(q, dtype=float),
            np.zeros(robot.nv) if v is None else np.asarray(v, dtype=float))


def floating_preview_one(
    robot: Robot, settings: PreviewSettings, q: np.ndarray, v: np.ndarray,
    scenario: Scenario, on_done: Callable[[PreviewResult], None] | None = None,
    collision_shapes: Sequence[CollisionShape] = (),
) -> PreviewResult:
    """One scenario from (q, v): simulated, measured and timed.

    Raises:
        ScenarioError: a scenario the robot does not take (sim.scenarios.FLOATING_KINDS).
    """
    check_world(scenario, collision_shapes)
    started = time.perf_counter()
    run = ScenarioRun.start(robot, settings, q, v, scenario, collision_shapes)
    if scenario.world.planes and not scenario.pushes:
        SimulatedRobot(robot, q=q, qd=v)  # the start state checked as a stepped world run checks it
        trajectory, smallest = compiled_world_rollout(run)
    else:
        if isinstance(scenario, TorqueProfile) and not scenario.pushes:
            Q, V, effort = _compiled(run, scenario)
        else:
            Q, V, effort = _stepped(run)
        trajectory, smallest = _measured(robot, scenario.frame, run.samples, Q, V, effort)
    result = run.result(trajectory, _metrics(robot, scenario, q, trajectory, smallest), started)
    if on_done is not None:
        on_done(result)
    return result


def _compiled(run: ScenarioRun, scenario: TorqueProfile
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Q, V, effort) of a torque profile by the compiled rollout, the joints free of stops."""
    check_configuration(run.robot.configuration_joints, run.q, "q")
    trajectory, _ = rollout_trajectory(run.robot, run.settings, run.q, run.qd, scenario,
                                       run.times, stop_at_limits=False)
    finite = np.isfinite(trajectory.q).all(axis=1) & np.isfinite(trajectory.qd).all(axis=1)
    if not finite.all():
        step = int(np.argmin(finite))
        raise _diverged(scenario, step, run.times[step])
    return trajectory.q, trajectory.qd, trajectory.tau


def _stepped(run: ScenarioRun) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Q, V, effort) by SimulatedRobot, step by step in Python: a whole-body pose on its
    held contacts, or a scenario with pushes."""
    robot, settings, scenario, times = run.robot, run.settings, run.scenario, run.times
    held = (scenario.contacts if isinstance(scenario, WholeBodyPose)
            and not scenario.world.planes else ())
    simulation = simulated_robot(run, contacts=held, contact_gains=CONTACT_GAINS)
    command = _command(robot, scenario, simulation, times)
    Q, V = np.empty((settings.steps + 1, robot.nq)), np.empty((settings.steps + 1, robot.nv))
    effort = np.empty((settings.steps, robot.nv))
    Q[0], V[0] = simulation.q, simulation.qd
    for k in range(settings.steps):
        effort[k] = command(k, simulation) if k % settings.control_every == 0 else effort[k - 1]
        apply_pushes(simulation, scenario.pushes, times[k])
        try:
            simulation.step(effort[k])
        except (NonFiniteResultError, np.linalg.LinAlgError) as error:  # within the step
            raise _diverged(scenario, k + 1, times[k + 1]) from error
        run.contact_log.record(k + 1, simulation.world_contacts)
        Q[k + 1], V[k + 1] = simulation.q, simulation.qd
    return Q, V, effort


def _diverged(scenario: Scenario, step: int, t: float) -> NonFiniteResultError:
    """The error of a run whose state went non-finite at `step`."""
    return NonFiniteResultError(
        "preview", "the state",
        f"at step {step} of scenario '{scenario.name}' (t = {t:g} s): the simulation diverged, "
        "as it does near a state where M is singular (a chain of massless links lining up) or "
        "with a step too long for the lightest bodies")


def _command(
    robot: Robot, scenario: Scenario, simulation: SimulatedRobot,
    times: np.ndarray,
) -> Command:
    """command(k, simulation) → τ (nv) of the scenario at step k."""
    if isinstance(scenario, TorqueProfile):
        reference = scenario.reference(times[:-1], simulation.q)
        return lambda k, _: reference[k, 0]
    if not isinstance(scenario, WholeBodyPose):
        raise ScenarioError(
            f"scenario '{scenario.name}': a floating-base robot takes torque_profile and "
            "whole_body_pose scenarios")
    controller = WholeBodyController(robot, scenario.contacts,
                                     whole_body_targets(robot, scenario, simulation.q),
                                     scenario.ground)
    return lambda _, state: controller.torque(state.q, state.qd)


def _measured(robot: Robot, frame: str, samples: np.ndarray, Q: np.ndarray, V: np.ndarray,
              effort: np.ndarray) -> tuple[Trajectory, float]:
    """A run stepped in Python or by the free rollout as the contact rollout's kernel gives
    it: its frame's path, its energy at the samples, and the smallest singular value of the
    frame's J over them."""
    energy = robot.kinetic_energy(Q[samples], V[samples]) + robot.potential_energy(Q[samples])
    smallest = smallest_singular_values(robot.jacobian(Q[samples], frame)).min()
    return Trajectory(q=Q, qd=V, tau=effort, clamped=np.zeros(robot.nv, dtype=np.int64),
                      path=robot.frame_pose(Q, frame), energy=energy), float(smallest)


def _metrics(robot: Robot, scenario: Scenario, q0: np.ndarray, trajectory: Trajectory,
             smallest: float) -> PreviewMetrics:
    """PreviewMetrics of a floating run: efforts and limits of the joints (the base has none)."""
    per_joint = robot.per_coordinate
    lower, upper, limit = (per_joint(values)[FREE_FLYER_DOF:] for values in
                           (robot.model.lower, robot.model.upper, robot.model.effort_limit))
    joints = trajectory.q[1:, FREE_FLYER_DOF + 1:]
    peak = np.abs(trajectory.tau).max(axis=0)
    path, energy = trajectory.path, trajectory.energy
    position_error = orientation_error = float("nan")
    if isinstance(scenario, WholeBodyPose):
        target = whole_body_targets(robot, scenario, q0)
        position_error = float(np.linalg.norm(target.position - path[-1, :3, 3]))
        orientation_error = float(np.linalg.norm(rotation_error(target.orientation,
                                                                path[-1, :3, :3])))
    return PreviewMetrics(
        peak, float(np.max(peak[FREE_FLYER_DOF:] / limit, initial=0.0)),
        ((joints <= lower) | (joints >= upper)).sum(axis=0),
        smallest, position_error, orientation_error,
        float(energy[0]), float(energy[-1]), float(energy.max()),
    )


__all__ = ["CONTACT_GAINS", "check_floating_settings", "floating_preview_one", "floating_start"]
