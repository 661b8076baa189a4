"""Faster-than-real-time preview: simulate scenarios over a horizon from a state, each as
SimulatedRobot would run it under its controller, and measure what happened.

Fixed-step integrators with the articulated-body algorithm run the whole horizon in one
compiled kernel (sim.rollout, with the compiled control laws of control.compiled_laws), which
releases the GIL so scenarios fan out on threads; other forward-dynamics methods and the
adaptive integrators step SimulatedRobot with the controller plugins in Python. Both give the
same trajectory (the tests hold them together). A scenario with a world (planes its collision
shapes touch) steps semi-implicitly with its contacts (contact.compiled_step), whatever the
settings' integrator: in one kernel too (sim.contact_rollout) where its law is compiled, else
SimulatedRobot's steps; its metrics measure the contacts (sim.contact_log).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial

import numpy as np

from robodyn_ros.contact.geometry import CollisionShape
from robodyn_ros.contact.world import Plane, World
from robodyn_ros.control import load_controller
from robodyn_ros.control.operational_space_controller import rotation_error
from robodyn_ros.control.plugin import ControllerState
from robodyn_ros.parallel import Backend, backend
from robodyn_ros.robot import Robot
from robodyn_ros.sim import rollout
from robodyn_ros.sim.floating_preview import (
    check_floating_settings,
    floating_preview_one,
    floating_start,
)
from robodyn_ros.sim.ilqr import ReachPlan, ReachTask, plan_reach
from robodyn_ros.sim.linearization import LINEARIZED_INTEGRATORS, JointLosses, step_jacobians
from robodyn_ros.sim.preview_result import (
    PreviewMetrics,
    PreviewResult,
    PreviewSettings,
    smallest_singular_values,
)
from robodyn_ros.sim.scenario_rollout import compiled_rollout, target_rotation
from robodyn_ros.sim.scenario_run import ScenarioRun
from robodyn_ros.sim.scenarios import (
    REACH_WEIGHTS,
    FixedScenario,
    JointTrajectory,
    OptimalReach,
    Scenario,
    ScenarioError,
    TorqueProfile,
    WholeBodyPose,
    apply_pushes,
)
from robodyn_ros.sim.simulated_robot import SimulatedRobot
from robodyn_ros.sim.world_scenario import check_world, compiled_world_rollout, simulated_robot
from robodyn_ros.sim.wrench_sensor import sensor_reading, wrench_sensor


def preview(
    robot: Robot,
    scenarios: Sequence[Scenario],
    settings: PreviewSettings,
    q: np.ndarray | None = None,
    qd: np.ndarray | None = None,
    *,
    pool: Backend | None = None,
    on_done: Callable[[PreviewResult], None] | None = None,
    cancel: threading.Event | None = None,
    collision_shapes: Sequence[CollisionShape] = (),
) -> list[PreviewResult]:
    """Every scenario simulated from (q, q̇) (default: SimulatedRobot's default state) over
    settings.horizon, fanned out over `pool` (a parallel backend; default serial). on_done
    is called with each result where it was computed (an in-process backend); a set `cancel`
    event stops what has not started (parallel.CancelledError). A robot with a free flyer or
    planar joint (nq > nv: a floating base, a mobile base) previews by sim.floating_preview
    (qd its velocity v of nv). `collision_shapes` (contact.collision_shapes of the robot's
    URDF) are what touches the worlds of the scenarios that have one.

    Raises:
        ScenarioError: a scenario with a world and no collision shapes given, or one the
            robot does not take.
    """
    for scenario in scenarios:
        check_world(scenario, collision_shapes)
        if isinstance(scenario, OptimalReach):
            plan_steps(settings, scenario)
    if robot.nq != robot.nv:
        check_floating_settings(settings)
        q, qd = floating_start(robot, q, qd)
        preview_from: Callable[..., PreviewResult] = floating_preview_one
    else:
        start = SimulatedRobot(robot, q=q, qd=qd)  # checks and defaults the start state
        q, qd = start.q, start.qd
        warm_up(robot, settings)
        if any(isinstance(scenario, OptimalReach) for scenario in scenarios):
            warm_up_planning(robot, q, qd)
        if any(scenario.world.planes for scenario in scenarios):
            warm_up_world(robot, settings)
        preview_from = preview_one
    task = partial(preview_from, robot, settings, q, qd, on_done=on_done,
                   collision_shapes=tuple(collision_shapes))
    if pool is None:
        with backend("serial") as serial:
            return serial.map(task, list(scenarios), cancel=cancel)
    return pool.map(task, list(scenarios), cancel=cancel)


def warm_up(robot: Robot, settings: PreviewSettings) -> None:
    """Load (the first time on a machine: compile) every kernel a preview with these
    settings calls, by a one-step preview, so that a scenario's wall time is its own (with a
    world: warm_up_world)."""
    short = replace(settings, horizon=settings.dt)
    idle = TorqueProfile("warm-up", robot.frame_names[-1], np.zeros(1), np.zeros((1, robot.nv)))
    state = SimulatedRobot(robot)
    if robot.nq != robot.nv:
        floating_preview_one(robot, short, state.q, state.qd, idle)
    else:
        preview_one(robot, short, state.q, state.qd, idle)


def warm_up_planning(robot: Robot, q: np.ndarray, qd: np.ndarray) -> None:
    """warm_up for optimal reaches: the derivatives' kernels a plan's linearisations call on
    batches (sim.ilqr), by one linearisation of two states."""
    states = np.stack([q, q]), np.stack([qd, qd])
    step_jacobians(robot, *states, np.zeros((2, robot.nv)), 1e-3)


def warm_up_world(robot: Robot, settings: PreviewSettings) -> None:
    """warm_up for scenarios with a world: the contact rollout's kernels (sim.contact_rollout),
    by a one-step preview of a ball on the last link over a far plane (the kernels' types are
    the same for any world, shapes and law, the whole-body controller's included); nothing for
    a fixed base under settings no rollout kernel takes, which step SimulatedRobot."""
    floating = robot.nq != robot.nv
    if not (floating or settings.compiled):
        return
    last = robot.frame_names[-1]
    ball = CollisionShape(last, "sphere", (0.01,), np.eye(4), np.zeros((0, 3)))
    far = World((Plane(np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.0, -1e3]), 0.5),))
    idle = TorqueProfile("warm-up", last, np.zeros(1), np.zeros((1, robot.nv)), world=far)
    state = SimulatedRobot(robot)
    one = floating_preview_one if floating else preview_one
    one(robot, replace(settings, horizon=settings.dt), state.q, state.qd, idle,
        collision_shapes=(ball,))


def preview_one(robot: Robot, settings: PreviewSettings, q: np.ndarray, qd: np.ndarray,
                scenario: Scenario,
                on_done: Callable[[PreviewResult], None] | None = None,
                collision_shapes: Sequence[CollisionShape] = ()) -> PreviewResult:
    """One scenario from (q, q̇): simulated, measured and timed.

    Raises:
        ScenarioError: a whole-body pose, which needs a floating base; a world without
            collision shapes.
    """
    if isinstance(scenario, WholeBodyPose):
        raise ScenarioError(f"scenario '{scenario.name}': whole_body_pose needs a "
                            "floating-base robot (Robot.from_urdf(..., floating_base=True))")
    check_world(scenario, collision_shapes)
    started = time.perf_counter()
    run = ScenarioRun.start(robot, settings, q, qd, scenario, collision_shapes)
    plan = None
    if isinstance(scenario, OptimalReach):
        plan = planned_reach(robot, settings, scenario, q, qd)
        trajectory, smallest = _stepped_rollout(run, _plan_follower(robot, plan))
    elif not runs_compiled(settings, scenario):
        trajectory, smallest = _stepped_rollout(
            run, _controller(robot, settings, scenario, q, run.times))
    elif scenario.world.planes:
        trajectory, smallest = compiled_world_rollout(run)
    else:
        trajectory, smallest = compiled_rollout(robot, settings, q, qd, scenario, run.times)
    result = run.result(trajectory, _metrics(robot, scenario, q, trajectory, smallest), started,
                        plan)
    if on_done is not None:
        on_done(result)
    return result


def runs_compiled(settings: PreviewSettings, scenario: Scenario) -> bool:
    """Whether a rollout kernel runs the scenario (sim.rollout, or sim.contact_rollout with a
    world): settings it takes (fixed step, ABA), a controller with a compiled law
    (control.compiled_laws; computed torque and an optimal reach's plan have none) and no
    pushes (SimulatedRobot applies them)."""
    tracker = scenario.controller if isinstance(scenario, JointTrajectory) else None
    return (settings.compiled and tracker in (None, "joint_impedance") and not scenario.pushes
            and not isinstance(scenario, OptimalReach))


# -- SimulatedRobot with the controller plugins, step by step ---------------------------------


def _stepped_rollout(run: ScenarioRun, command: Command) -> tuple[rollout.Trajectory, float]:
    """A run by SimulatedRobot under `command` (the scenario's controller plugin or its plan),
    step by step in Python: its trajectory and the smallest singular value of its frame's J
    over the samples."""
    robot, settings, scenario, times = run.robot, run.settings, run.scenario, run.times
    simulated = simulated_robot(run, forward_dynamics_method=settings.forward_dynamics_method,
                                tolerance=settings.tolerance)
    sensor = wrench_sensor(robot.model, scenario.frame)  # a force/torque sensor at the frame
    steps, n = settings.steps, robot.nv
    Q, QD, effort = np.empty((steps + 1, n)), np.empty((steps + 1, n)), np.empty((steps, n))
    clamped = np.zeros(n, dtype=np.int64)
    Q[0], QD[0] = run.q, run.qd
    for k in range(steps):
        if k % settings.control_every == 0:
            measured = {scenario.frame: sensor_reading(robot, Q[k], simulated.world_contacts,
                                                       sensor)}
            effort[k] = command(k, ControllerState(times[k], Q[k], QD[k], wrenches=measured))
        else:
            effort[k] = effort[k - 1]
        apply_pushes(simulated, scenario.pushes, times[k])
        simulated.step(effort[k])
        run.contact_log.record(k + 1, simulated.world_contacts)
        Q[k + 1], QD[k + 1] = simulated.q, simulated.qd
        clamped += (Q[k + 1] == robot.model.upper) | (Q[k + 1] == robot.model.lower)
    Q_sampled = np.ascontiguousarray(Q[run.samples])
    energy = robot.kinetic_energy(Q_sampled, QD[run.samples]) + robot.potential_energy(Q_sampled)
    smallest = smallest_singular_values(robot.jacobian(Q_sampled, scenario.frame)).min()
    trajectory = rollout.Trajectory(q=Q, qd=QD, tau=effort, clamped=clamped,
                                    path=robot.frame_pose(Q, scenario.frame), energy=energy)
    return trajectory, float(smallest)


def plan_steps(settings: PreviewSettings, scenario: OptimalReach) -> int:
    """The plan's steps over the horizon.

    Raises:
        ScenarioError: a plan_period that is not a whole number of dt, or that does not
            divide the horizon.
    """
    period = scenario.plan_period
    steps = settings.horizon / period
    for count, what in ((period / settings.dt, f"a whole number of dt ({settings.dt} s)"),
                        (steps, f"a whole fraction of the horizon ({settings.horizon} s)")):
        if round(count) < 1 or not np.isclose(count, round(count)):
            raise ScenarioError(f"scenario '{scenario.name}': optimal_reach.plan_period "
                                f"({period} s) must be {what}")
    return round(steps)


def planned_reach(robot: Robot, settings: PreviewSettings, scenario: OptimalReach,
                  q: np.ndarray, qd: np.ndarray) -> ReachPlan:
    """The scenario's plan (sim.ilqr.plan_reach) from (q, q̇) over the horizon, on the model
    SimulatedRobot steps: the settings' integrator (an adaptive one: semi-implicit Euler) at
    the plan's period, the joints' damping, friction (smoothed at the settings'
    friction_velocity) and effort limits.

    Raises:
        ScenarioError: as plan_steps.
    """
    model = robot.model
    task = ReachTask(
        scenario.frame, scenario.position, target_rotation(robot, scenario, q),
        plan_steps(settings, scenario), scenario.plan_period,
        **{name: getattr(scenario, name) for name in REACH_WEIGHTS},
        integrator=settings.integrator if settings.integrator in LINEARIZED_INTEGRATORS
        else ReachTask.integrator, iterations=scenario.iterations, tolerance=scenario.tolerance)
    return plan_reach(robot, task, q, qd,
                      losses=JointLosses.of(model, settings.friction_velocity),
                      effort_limit=np.asarray(robot.per_coordinate(model.effort_limit), float),
                      warm_start_gains=(scenario.kp, scenario.kd))


Command = Callable[[int, ControllerState], np.ndarray]


def _plan_follower(robot: Robot, plan: ReachPlan) -> Command:
    """command(k, state) → τ of the plan's feedback law (ReachPlan.command)."""
    return lambda k, state: plan.command(robot, state.t, state.q, state.qd)


def _controller(
    robot: Robot, settings: PreviewSettings, scenario: FixedScenario, q: np.ndarray,
    times: np.ndarray,
) -> Command:
    """command(k, state) → τ of the scenario's controller plugin at step k."""
    if isinstance(scenario, TorqueProfile):
        reference = scenario.reference(times[:-1], q)
        return lambda k, state: reference[k, 0]
    if isinstance(scenario, JointTrajectory):
        reference = scenario.reference(times[:-1], q)
        controller = load_controller(scenario.controller)()
        controller.configure(robot, {"kp": scenario.stiffness, "kd": scenario.damping}
                             if scenario.controller == "computed_torque" else
                             {"stiffness": scenario.stiffness, "damping": scenario.damping,
                              "feedforward": True})

        def track(k: int, state: ControllerState) -> np.ndarray:
            controller.set_target(*reference[k])
            return controller.update(state)

        return track
    controller = load_controller("operational_space")()
    controller.configure(robot, {
        "frame": scenario.frame, "kp": scenario.kp, "kd": scenario.kd,
        "null_stiffness": scenario.null_stiffness, "null_damping": scenario.null_damping,
        "rest_posture": q, "singular_threshold": settings.singular_threshold,
        **({"force_axes": scenario.force_axes.astype(float), "force_target": scenario.force_target,
            "force_damping": scenario.force_damping,
            "force_integral_gain": scenario.force_integral_gain}
           if scenario.force_axes.any() else {}),
    })
    controller.set_target(scenario.position, target_rotation(robot, scenario, q))
    return lambda k, state: controller.update(state)


# -- metrics ----------------------------------------------------------------------------------


def _metrics(
    robot: Robot, scenario: FixedScenario | OptimalReach, q0: np.ndarray,
    trajectory: rollout.Trajectory,
    smallest: float,
) -> PreviewMetrics:
    peak = np.abs(trajectory.tau).max(axis=0)
    position_error, orientation_error = _final_pose_error(robot, scenario, q0,
                                                          trajectory.path[-1])
    energy = trajectory.energy
    return PreviewMetrics(
        peak, float(np.max(peak / np.asarray(robot.model.effort_limit))), trajectory.clamped,
        float(smallest), position_error, orientation_error,
        float(energy[0]), float(energy[-1]), float(energy.max()),
    )


def _final_pose_error(
    robot: Robot, scenario: FixedScenario | OptimalReach, q0: np.ndarray,
    final_pose: np.ndarray
) -> tuple[float, float]:
    """|p* − p| and |log(R* Rᵀ)| at the end; the target of a joint trajectory is the pose of
    its last waypoint, a torque profile has none (NaN)."""
    if isinstance(scenario, TorqueProfile):
        return float("nan"), float("nan")
    if isinstance(scenario, JointTrajectory):
        target = robot.frame_pose(scenario.positions[-1], scenario.frame)
        position, rotation = target[:3, 3], target[:3, :3]
    else:
        position, rotation = scenario.position, target_rotation(robot, scenario, q0)
    return (float(np.linalg.norm(position - final_pose[:3, 3])),
            float(np.linalg.norm(rotation_error(rotation, final_pose[:3, :3]))))


__all__ = [
    "PreviewMetrics",  # the records, from sim.preview_result, as the preview's callers use them
    "PreviewResult",
    "PreviewSettings",
    "preview",
    "preview_one",
    "runs_compiled",
    "warm_up",
    "warm_up_planning",
    "warm_up_world",
]
