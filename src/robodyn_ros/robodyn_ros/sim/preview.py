"""Faster-than-real-time preview: simulate scenarios over a horizon from a state, each as
SimulatedRobot would run it under its controller, and measure what happened.

Fixed-step integrators with the articulated-body algorithm run the whole horizon in one
compiled kernel (sim.rollout, with the compiled control laws of control.compiled_laws), which
releases the GIL so scenarios fan out on threads; other forward-dynamics methods and the
adaptive integrators step SimulatedRobot with the controller plugins in Python. Both give the
same trajectory (the tests hold them together).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from robodyn_ros.control import load_controller
from robodyn_ros.control.compiled_laws import (
    JOINT_TRACKING,
    OPERATIONAL_SPACE,
    TORQUE,
    ControlLaw,
)
from robodyn_ros.control.operational_space_controller import rotation_error
from robodyn_ros.control.plugin import ControllerState
from robodyn_ros.errors import NonFiniteResultError
from robodyn_ros.parallel import Backend, backend
from robodyn_ros.robot import Robot
from robodyn_ros.sim import rollout
from robodyn_ros.sim.integrators import ADAPTIVE_INTEGRATORS, INTEGRATORS
from robodyn_ros.sim.scenarios import (
    FixedScenario,
    JointTrajectory,
    PoseTarget,
    Push,
    Scenario,
    ScenarioError,
    TorqueProfile,
    WholeBodyPose,
    wrenches_at,
)
from robodyn_ros.sim.simulated_robot import FRICTION_VELOCITY, TOLERANCE, SimulatedRobot

SINGULAR_THRESHOLD = 1e-4  # of Λ's damping, as the operational-space controller's default
SAMPLE_PERIOD = 0.01  # s between the states whose energy and J's singular values are taken


@dataclass(frozen=True)
class PreviewSettings:
    """horizon and dt in s; integrator: INTEGRATORS or ADAPTIVE_INTEGRATORS (tolerance is
    theirs); forward_dynamics_method: Robot.FORWARD_DYNAMICS_METHODS; friction_velocity and
    singular_threshold as SimulatedRobot and the operational-space controller take them;
    control_period (s, a whole number of steps; 0: every step): how often the controller
    computes a command, held in between, as sim_node holds a controller_node's command over
    its publish_period."""

    horizon: float = 1.0
    dt: float = 1e-3
    integrator: str = "rk4"
    forward_dynamics_method: str = "aba"
    tolerance: float = TOLERANCE
    friction_velocity: float = FRICTION_VELOCITY
    singular_threshold: float = SINGULAR_THRESHOLD
    control_period: float = 0.0

    def __post_init__(self) -> None:
        for name in ("horizon", "dt", "tolerance", "friction_velocity", "singular_threshold"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and np.isfinite(value) and value > 0.0):
                raise ScenarioError(f"{name} must be a number > 0; got {value!r}")
        period = self.control_period
        if not (isinstance(period, (int, float)) and np.isfinite(period) and period >= 0.0):
            raise ScenarioError(f"control_period must be a number >= 0; got {period!r}")
        steps = period / self.dt
        if period > 0.0 and (round(steps) < 1 or not np.isclose(steps, round(steps))):
            raise ScenarioError(
                f"control_period must be a whole number of steps of dt ({self.dt} s); got "
                f"{period} s")
        if self.dt > self.horizon:
            raise ScenarioError(f"dt ({self.dt} s) must not exceed horizon ({self.horizon} s)")
        integrators = (*INTEGRATORS, *ADAPTIVE_INTEGRATORS)
        if self.integrator not in integrators:
            raise ScenarioError(
                f"integrator must be one of {', '.join(integrators)}; got {self.integrator!r}"
            )
        if self.forward_dynamics_method not in Robot.FORWARD_DYNAMICS_METHODS:
            raise ScenarioError(
                "forward_dynamics_method must be one of "
                f"{', '.join(Robot.FORWARD_DYNAMICS_METHODS)}; got {self.forward_dynamics_method!r}"
            )

    @property
    def steps(self) -> int:
        return round(self.horizon / self.dt)

    @property
    def control_every(self) -> int:
        """Steps between two commands of the controller."""
        return max(1, round(self.control_period / self.dt))

    @property
    def compiled(self) -> bool:
        """Whether the rollout kernel runs it (fixed step, ABA)."""
        return self.integrator in INTEGRATORS and self.forward_dynamics_method == "aba"


@dataclass(frozen=True, eq=False)
class PreviewMetrics:
    """peak_effort (n,): the largest commanded |τ| per joint, N·m (N); effort_ratio: the
    largest of peak_effort / effort limit (> 1: the command saturated); limit_violations (n,):
    steps each joint ended on a position limit (stopped there); min_singular_value: the
    smallest singular value of the frame's J over the path; final_position_error (m) and
    final_orientation_error (rad): from the target at the end (NaN for torque profiles);
    energy_start, energy_end, energy_peak: kinetic + potential energy, J. The singular values
    and the energy are taken at the sample times (every SAMPLE_PERIOD and the last step)."""

    peak_effort: np.ndarray
    effort_ratio: float
    limit_violations: np.ndarray
    min_singular_value: float
    final_position_error: float
    final_orientation_error: float
    energy_start: float
    energy_end: float
    energy_peak: float


@dataclass(frozen=True, eq=False)
class PreviewResult:
    """One scenario's prediction: times (K + 1,), q and qd (K + 1, n), effort (K, n) the
    commanded efforts, frame and its poses frame_path (K + 1, 4, 4), samples (S,) the step
    indices of the sample times and energy (S,) at them, the metrics, the wall time in s and
    the real-time factor horizon / wall time."""

    name: str
    times: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    effort: np.ndarray
    frame: str
    frame_path: np.ndarray
    samples: np.ndarray
    energy: np.ndarray
    metrics: PreviewMetrics
    wall_time: float
    real_time_factor: float


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
) -> list[PreviewResult]:
    """Every scenario simulated from (q, q̇) (default: SimulatedRobot's default state) over
    settings.horizon, fanned out over `pool` (a parallel backend; default serial). on_done
    is called with each result where it was computed (an in-process backend); a set `cancel`
    event stops what has not started (parallel.CancelledError). A robot with a free flyer or
    planar joint (nq > nv: a floating base, a mobile base) previews by sim.floating_preview
    (qd its velocity v of nv)."""
    if robot.nq != robot.nv:
        from robodyn_ros.sim.floating_preview import floating_preview  # it imports this module

        return floating_preview(robot, scenarios, settings, q, qd, pool=pool, on_done=on_done)
    start = SimulatedRobot(robot, q=q, qd=qd)  # checks and defaults the start state
    warm_up(robot, settings)
    task = partial(preview_one, robot, settings, start.q, start.qd, on_done=on_done)
    if pool is None:
        with backend("serial") as serial:
            return serial.map(task, list(scenarios), cancel=cancel)
    return pool.map(task, list(scenarios), cancel=cancel)


def warm_up(robot: Robot, settings: PreviewSettings) -> None:
    """Load (the first time on a machine: compile) every kernel a preview with these
    settings calls, by a one-step preview, so that a scenario's wall time is its own."""
    short = replace(settings, horizon=settings.dt)
    idle = TorqueProfile("warm-up", robot.frame_names[-1], np.zeros(1), np.zeros((1, robot.nv)))
    state = SimulatedRobot(robot)
    if robot.nq != robot.nv:
        from robodyn_ros.sim.floating_preview import floating_preview_one  # it imports this

        floating_preview_one(robot, short, state.q, state.qd, idle)
    else:
        preview_one(robot, short, state.q, state.qd, idle)


def preview_one(robot: Robot, settings: PreviewSettings, q: np.ndarray, qd: np.ndarray,
                scenario: Scenario,
                on_done: Callable[[PreviewResult], None] | None = None) -> PreviewResult:
    """One scenario from (q, q̇): simulated, measured and timed.

    Raises:
        ScenarioError: a whole-body pose, which needs a floating base.
    """
    if isinstance(scenario, WholeBodyPose):
        raise ScenarioError(f"scenario '{scenario.name}': whole_body_pose needs a "
                            "floating-base robot (Robot.from_urdf(..., floating_base=True))")
    started = time.perf_counter()
    times = settings.dt * np.arange(settings.steps + 1)
    rollout_of = compiled_rollout if runs_compiled(settings, scenario) else _stepped_rollout
    trajectory, smallest = rollout_of(robot, settings, q, qd, scenario, times)
    samples = sample_steps(settings)
    metrics = _metrics(robot, scenario, q, trajectory, smallest)
    wall_time = time.perf_counter() - started
    result = PreviewResult(scenario.name, times, trajectory.q, trajectory.qd, trajectory.tau,
                           scenario.frame, trajectory.path, samples, trajectory.energy, metrics,
                           wall_time, settings.horizon / wall_time)
    if on_done is not None:
        on_done(result)
    return result


def runs_compiled(settings: PreviewSettings, scenario: Scenario) -> bool:
    """Whether the rollout kernel runs the scenario: settings it takes (fixed step, ABA), a
    controller with a compiled law (control.compiled_laws; computed torque has none) and no
    pushes (SimulatedRobot applies them)."""
    tracker = scenario.controller if isinstance(scenario, JointTrajectory) else None
    return settings.compiled and tracker in (None, "joint_impedance") and not scenario.pushes


def apply_pushes(simulated: SimulatedRobot, pushes: Sequence[Push], t: float) -> None:
    """The wrenches of `pushes` acting at time t on the simulated robot, the others released."""
    for frame, wrench in wrenches_at(pushes, t).items():
        simulated.apply_wrench(frame, wrench)


def sample_steps(settings: PreviewSettings) -> np.ndarray:
    """The step indices every SAMPLE_PERIOD, and the last step."""
    stride = _sample_stride(settings)
    return np.unique(np.append(np.arange(0, settings.steps + 1, stride), settings.steps))


def _sample_stride(settings: PreviewSettings) -> int:
    """Steps between two samples: SAMPLE_PERIOD in steps, at least one."""
    return max(1, round(SAMPLE_PERIOD / settings.dt))


# -- the compiled rollout ---------------------------------------------------------------------


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
        raise _rollout_failure(robot, trajectory.q, trajectory.qd)
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
    if robot.nq != robot.nv and not isinstance(scenario, TorqueProfile):
        raise ScenarioError(
            f"scenario '{scenario.name}': the compiled rollout runs a robot with free flyer "
            "or planar joints under a torque profile only")
    steps, n = settings.steps, robot.nv
    model = robot.model
    joints = np.array([model.lower, model.upper, model.velocity_limit, model.effort_limit,
                       model.damping, model.friction], dtype=float)
    stepping = rollout.Stepping(
        integrator={"semi_implicit_euler": rollout.SEMI_IMPLICIT_EULER,
                    "rk4": rollout.RK4}[settings.integrator],
        dt=float(settings.dt), friction_velocity=float(settings.friction_velocity),
        sample_every=_sample_stride(settings), stop_at_limits=stop_at_limits)
    trajectory = rollout.Trajectory(
        q=np.full((steps + 1, robot.nq), np.nan),  # NaN: not reached
        qd=np.full((steps + 1, n), np.nan),
        tau=np.empty((steps, n)), clamped=np.zeros(n, dtype=np.int64),
        path=np.empty((steps + 1, 4, 4)), energy=np.empty(len(sample_steps(settings))))
    trajectory.q[0], trajectory.qd[0] = q, qd
    smallest = np.nan
    try:
        smallest = rollout.rollout(rollout.RolloutRobot(*robot.kernel_arrays, joints),
                                   _control_law(robot, settings, scenario, q, times), stepping,
                                   trajectory)
    except np.linalg.LinAlgError:  # numba's SVD of a NaN Jacobian: the state went NaN before
        pass
    return trajectory, smallest


def _rollout_failure(robot: Robot, Q: np.ndarray, QD: np.ndarray) -> Exception:
    """Why the rollout's state went NaN or inf (its kernel reports no cause): the forward
    dynamics' own error at the last finite state (SingularMassMatrixError naming the joints,
    where M is singular there), or else a NonFiniteResultError naming the step."""
    finite = np.isfinite(Q).all(axis=1) & np.isfinite(QD).all(axis=1)
    step = int(np.argmin(finite))  # the first state not finite; the one before is (Q[0] is)
    robot.forward_dynamics(Q[step - 1], QD[step - 1], np.zeros(robot.nv))
    return NonFiniteResultError("preview", "the state", f"at step {step} of the rollout")


def _control_law(robot: Robot, settings: PreviewSettings, scenario: FixedScenario, q: np.ndarray,
                 times: np.ndarray) -> ControlLaw:
    """The scenario's controller as the rollout kernel runs it, from the start posture q."""
    law = partial(ControlLaw, control_every=settings.control_every,
                  frame=robot.frame_row(scenario.frame),
                  threshold=float(settings.singular_threshold))
    n, no_task, no_target = robot.nv, np.zeros((2, 6)), np.zeros(12)
    if isinstance(scenario, PoseTarget):
        rotation = _target_rotation(robot, scenario, q)
        return law(kind=OPERATIONAL_SPACE,
                   joint_gains=np.array([scenario.null_stiffness, scenario.null_damping, q]),
                   task_gains=np.array([scenario.kp, scenario.kd]),
                   target=np.concatenate([rotation.ravel(), scenario.position]),
                   reference=np.zeros((0, 3, n)))
    if isinstance(scenario, JointTrajectory):
        return law(kind=JOINT_TRACKING,
                   joint_gains=np.array([scenario.stiffness, scenario.damping, q]),
                   task_gains=no_task, target=no_target,
                   reference=scenario.reference(times[:-1], q))
    return law(kind=TORQUE, joint_gains=np.zeros((3, n)), task_gains=no_task, target=no_target,
               reference=scenario.reference(times[:-1], q))


def _target_rotation(robot: Robot, scenario: PoseTarget, q: np.ndarray) -> np.ndarray:
    if scenario.orientation is not None:
        return scenario.orientation
    return robot.frame_pose(q, scenario.frame)[:3, :3]


# -- SimulatedRobot with the controller plugins, step by step ---------------------------------


def _stepped_rollout(robot, settings, q, qd, scenario, times):
    simulated = SimulatedRobot(
        robot, settings.integrator, settings.dt,
        forward_dynamics_method=settings.forward_dynamics_method,
        friction_velocity=settings.friction_velocity, tolerance=settings.tolerance, q=q, qd=qd,
    )
    command = _controller(robot, settings, scenario, q, times)
    steps, n = settings.steps, robot.nv
    Q, QD, effort = np.empty((steps + 1, n)), np.empty((steps + 1, n)), np.empty((steps, n))
    clamped = np.zeros(n, dtype=np.int64)
    Q[0], QD[0] = q, qd
    for k in range(steps):
        if k % settings.control_every == 0:
            effort[k] = command(k, ControllerState(times[k], Q[k], QD[k]))
        else:
            effort[k] = effort[k - 1]
        apply_pushes(simulated, scenario.pushes, times[k])
        simulated.step(effort[k])
        Q[k + 1], QD[k + 1] = simulated.q, simulated.qd
        clamped += (Q[k + 1] == robot.model.upper) | (Q[k + 1] == robot.model.lower)
    samples = sample_steps(settings)
    Q_sampled = np.ascontiguousarray(Q[samples])
    energy = robot.kinetic_energy(Q_sampled, QD[samples]) + robot.potential_energy(Q_sampled)
    smallest = smallest_singular_values(robot.jacobian(Q_sampled, scenario.frame)).min()
    trajectory = rollout.Trajectory(q=Q, qd=QD, tau=effort, clamped=clamped,
                                    path=robot.frame_pose(Q, scenario.frame), energy=energy)
    return trajectory, float(smallest)


Command = Callable[[int, ControllerState], np.ndarray]


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
    })
    controller.set_target(scenario.position, _target_rotation(robot, scenario, q))
    return lambda k, state: controller.update(state)


# -- metrics ----------------------------------------------------------------------------------


def _metrics(
    robot: Robot, scenario: FixedScenario, q0: np.ndarray, trajectory: rollout.Trajectory,
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


def smallest_singular_values(J: np.ndarray) -> np.ndarray:
    """The smallest singular value of each J (S, 6, n), as the square root of the smallest
    eigenvalue of the smaller of J Jᵀ and Jᵀ J: half the time of a batched SVD."""
    Jt = J.transpose(0, 2, 1)
    gram = J @ Jt if J.shape[1] <= J.shape[2] else Jt @ J
    return np.sqrt(np.maximum(np.linalg.eigvalsh(gram)[:, 0], 0.0))


def _final_pose_error(
    robot: Robot, scenario: FixedScenario, q0: np.ndarray, final_pose: np.ndarray
) -> tuple[float, float]:
    """|p* − p| and |log(R* Rᵀ)| at the end; the target of a joint trajectory is the pose of
    its last waypoint, a torque profile has none (NaN)."""
    if isinstance(scenario, TorqueProfile):
        return float("nan"), float("nan")
    if isinstance(scenario, JointTrajectory):
        target = robot.frame_pose(scenario.positions[-1], scenario.frame)
        position, rotation = target[:3, 3], target[:3, :3]
    else:
        position, rotation = scenario.position, _target_rotation(robot, scenario, q0)
    return (float(np.linalg.norm(position - final_pose[:3, 3])),
            float(np.linalg.norm(rotation_error(rotation, final_pose[:3, :3]))))


__all__ = [
    "PreviewMetrics",
    "PreviewResult",
    "PreviewSettings",
    "apply_pushes",
    "compiled_rollout",
    "preview",
    "preview_one",
    "rollout_trajectory",
    "runs_compiled",
    "sample_steps",
    "smallest_singular_values",
    "warm_up",
]
