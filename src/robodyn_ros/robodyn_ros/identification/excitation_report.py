"""What comes of an excitation (excitation.optimise_excitation): the preview's verdict on it,
its files and a summary for people.

A trajectory is played as the simulation plays it (`Playback`): computed torque
(control.computed_torque) computes a command every control period, held in between as sim_node
holds controller_node's over its publish_period. `verify_in_preview` plays it so in the
preview, as a `joint_trajectory` scenario: a clean verdict has no commanded effort above its
limit, no joint stopped at a position limit and no joint further than TRACKING_TOLERANCE from
the trajectory. `write_excitation` writes EXCITATION_FILE (the coefficients, condition numbers,
limits and the verdict), SCENARIO_FILE (what `robodyn preview` plays, with the same controller
and period) and, only with a clean verdict, TRAJECTORY_FILE (the trajectory as a
trajectory_msgs/JointTrajectory in the YAML form of `ros2 topic pub`) and PARAMS_FILE (the ROS
parameters of sim_node and controller_node that play it, for `robodyn sim --trajectory`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml

from robodyn_ros.identification.errors import IdentificationError
from robodyn_ros.identification.excitation import Excitation, FourierTrajectory
from robodyn_ros.model.model import FRICTION_VELOCITY
from robodyn_ros.robot import Robot

if TYPE_CHECKING:
    from robodyn_ros.sim.preview import PreviewMetrics, PreviewSettings

OUTPUT_RATE = 20.0
"""Hz: default waypoints per second of the written trajectory."""
DIGITS = 6
"""Decimals of the written waypoints."""
LEAD_IN = 5.0
"""s: the JointTrajectory's time to reach the excitation's start from wherever the arm is."""
TRACKING_FREQUENCY = 20.0
"""rad/s: the natural frequency ω of the tracking error under computed torque (Kp = ω²,
Kd = 2ω, critically damped): on the bundled Panda it keeps every joint within about 6 mrad of
a 20 s excitation at 100 Hz."""
TRACKING_PHASE = 0.2
"""The most ω turns in one control period (ω ≤ TRACKING_PHASE / period): a held command is
then close to the continuous law's, far from the discrete loop's stability bound."""
TRACKING_TOLERANCE = 0.05
"""rad (m): the furthest a joint may be from the trajectory in a clean preview."""
EXCITATION_FILE = "excitation.yaml"
TRAJECTORY_FILE = "joint_trajectory.yaml"
SCENARIO_FILE = "preview_scenario.yaml"
PARAMS_FILE = "params.yaml"
CONTROLLER = "computed_torque"
"""The controller plugin that plays the trajectory, in the preview and in controller_node."""


@dataclass(frozen=True)
class Playback:
    """How the trajectory is played: CONTROLLER computing a command every control_period s
    (0: every step), held in between, on a simulation stepping by dt with `integrator`, as
    sim_node (publish_period = control_period, lockstep) and controller_node play it.

    Raises:
        IdentificationError: a control period < 0 or not a whole number of steps of dt.
    """

    control_period: float
    dt: float = 1e-3
    integrator: str = "rk4"

    def __post_init__(self) -> None:
        steps = self.control_period / self.dt
        if not (math.isfinite(self.control_period) and self.control_period >= 0.0
                and (steps == 0.0 or (round(steps) >= 1 and math.isclose(steps, round(steps))))):
            raise IdentificationError(
                f"the control period must be 0 (every step) or a whole number of steps of "
                f"{self.dt:g} s; got {self.control_period!r}")

    @property
    def frequency(self) -> float:
        """ω, rad/s: TRACKING_FREQUENCY, less where the control period needs it."""
        if self.control_period == 0.0:
            return TRACKING_FREQUENCY
        return min(TRACKING_FREQUENCY, TRACKING_PHASE / self.control_period)

    @property
    def kp(self) -> float:
        """Kp = ω², 1/s²."""
        return self.frequency**2

    @property
    def kd(self) -> float:
        """Kd = 2ω, 1/s: critical damping."""
        return 2.0 * self.frequency

    @property
    def publish_period(self) -> float:
        """sim_node's publish_period, s: the control period, or every step."""
        return self.control_period or self.dt

    def preview_settings(self, horizon: float) -> PreviewSettings:
        """The preview's settings over `horizon` s."""
        from robodyn_ros.sim.preview import PreviewSettings  # the rollout kernels, on use

        return PreviewSettings(horizon=horizon, dt=self.dt, integrator=self.integrator,
                               control_period=self.control_period)

    def describe(self) -> str:
        """e.g. "computed torque, Kp 400 1/s², Kd 40 1/s, a command every 0.01 s"."""
        every = (f"every {self.control_period:g} s" if self.control_period
                 else f"every step of {self.dt:g} s")
        return (f"computed torque, Kp {self.kp:.4g} 1/s², Kd {self.kd:.4g} 1/s, a command "
                f"{every}")


@dataclass(frozen=True, eq=False)
class PreviewVerdict:
    """What the preview found playing the trajectory.

    Attributes:
        metrics: the preview's metrics (peak commanded efforts, limit stops, ...).
        effort_limit: (n,) the description's effort limits.
        tracking_error: (n,) the largest |q − q*| of each joint, rad (m).
        playback: how it was played.
        problems: one sentence per limit the preview found crossed; none: clean.
    """

    metrics: PreviewMetrics
    effort_limit: np.ndarray
    tracking_error: np.ndarray
    playback: Playback
    problems: tuple[str, ...]

    @property
    def clean(self) -> bool:
        """Whether the preview found no limit crossed."""
        return not self.problems


def waypoint_times(period: float, samples: int) -> np.ndarray:
    """The times of `samples` waypoints after the start, evenly to the period: (samples,)."""
    return period * np.arange(1, samples + 1) / samples


def preview_scenario(robot: Robot, trajectory: FourierTrajectory, samples: int,
                     playback: Playback, name: str = "excitation") -> dict[str, Any]:
    """The preview's scenarios file (sim.preview_report.read_scenarios_file) that plays the
    trajectory as `playback` does: a `joint_trajectory` through its positions at
    waypoint_times, from its start posture, over one period.

    Args:
        robot: the robot.
        trajectory: the trajectory.
        samples: waypoints after the start.
        playback: the controller's period and the simulation's step.
        name: the scenario's name.

    Returns:
        {horizon, dt, integrator, control_period, start, scenarios: [{name, joint_trajectory:
        {frame, controller, kp, kd, times, positions}}]}.
    """
    times = waypoint_times(trajectory.period, samples)
    return {
        "horizon": trajectory.period, "dt": playback.dt, "integrator": playback.integrator,
        "control_period": playback.control_period,
        "start": _rounded(trajectory.positions(np.zeros(1))[0]),
        "scenarios": [{"name": name, "joint_trajectory": {
            "frame": robot.frame_names[-1], "controller": CONTROLLER, "kp": playback.kp,
            "kd": playback.kd, "times": _rounded(times),
            "positions": _rounded(trajectory.positions(times))}}],
    }


def verify_in_preview(robot: Robot, trajectory: FourierTrajectory, samples: int,
                      playback: Playback) -> PreviewVerdict:
    """Play the trajectory in the preview as `playback` plays it (preview_scenario) and judge
    it.

    Args:
        robot: the robot.
        trajectory: the trajectory.
        samples: waypoints after the start.
        playback: the controller's period and the simulation's step.

    Returns:
        The verdict: a problem for each joint whose commanded effort exceeded its limit, that
        stopped at a position limit or that left the trajectory by more than
        TRACKING_TOLERANCE.

    Raises:
        ValueError: a start posture outside the joint limits, where the preview cannot start
            (never that of optimise_excitation's trajectories).
    """
    from robodyn_ros.sim.preview import preview  # the rollout kernels, on use
    from robodyn_ros.sim.scenarios import scenario_from_mapping

    document = preview_scenario(robot, trajectory, samples, playback)
    scenario = scenario_from_mapping(robot, document["scenarios"][0])
    settings = playback.preview_settings(document["horizon"])
    result = preview(robot, [scenario], settings, np.array(document["start"]))[0]
    metrics = result.metrics
    effort_limit = np.asarray(robot.model.effort_limit, dtype=float)
    tracking_error = np.abs(result.q - trajectory.positions(result.times)).max(axis=0)
    names = robot.model.joint_names
    problems = [f"{name}: commanded effort {peak:.4g} beyond its limit {limit:.4g}"
                for name, peak, limit in zip(names, metrics.peak_effort, effort_limit,
                                             strict=True) if peak > limit]
    problems += [f"{name}: stopped at a position limit for {steps} steps"
                 for name, steps in zip(names, metrics.limit_violations, strict=True)
                 if steps > 0]
    problems += [f"{name}: left the trajectory by {error:.3g}, more than {TRACKING_TOLERANCE:g}"
                 for name, error in zip(names, tracking_error, strict=True)
                 if error > TRACKING_TOLERANCE]
    return PreviewVerdict(metrics, effort_limit, tracking_error, playback, tuple(problems))


# -- the files --------------------------------------------------------------------------------


def joint_trajectory_message(robot: Robot, trajectory: FourierTrajectory,
                             samples: int) -> dict[str, Any]:
    """The trajectory as a trajectory_msgs/msg/JointTrajectory in the YAML form `ros2 topic
    pub` takes: its start LEAD_IN after the message's time 0, so that a trajectory controller
    (controller_node, ros2_control's) first takes the arm there from where it is, then the
    waypoints at waypoint_times after that, each with positions, velocities and accelerations
    (no efforts).

    Args:
        robot: the robot (its joint names).
        trajectory: the trajectory.
        samples: waypoints after the start.

    Returns:
        {header, joint_names, points: [{positions, velocities, accelerations,
        time_from_start: {sec, nanosec}}]}.
    """
    times = np.concatenate([[0.0], waypoint_times(trajectory.period, samples)])
    positions, velocities, accelerations = trajectory.states(times)
    points = []
    for k, t in enumerate(times):
        nanoseconds = round((LEAD_IN + float(t)) * 1e9)
        points.append({
            "positions": _rounded(positions[k]), "velocities": _rounded(velocities[k]),
            "accelerations": _rounded(accelerations[k]),
            "time_from_start": {"sec": nanoseconds // 10**9, "nanosec": nanoseconds % 10**9},
        })
    return {"header": {"stamp": {"sec": 0, "nanosec": 0}, "frame_id": ""},
            "joint_names": list(robot.joint_names), "points": points}


def excitation_document(robot: Robot, excitation: Excitation,
                        verdict: PreviewVerdict) -> dict[str, Any]:
    """excitation.yaml: the robot, the trajectory's q0, a and b per joint, both condition
    numbers, the description's limits, the margin and the bounds kept, and the preview's
    verdict and metrics.

    Args:
        robot: the robot.
        excitation: the optimised excitation.
        verdict: the preview's verdict on it.

    Returns:
        The document as plain YAML-ready values.
    """
    trajectory, limits, model = excitation.trajectory, excitation.limits, robot.model
    metrics = verdict.metrics
    joints = {
        name: {"q0": float(trajectory.q0[i]), "a": _rounded(trajectory.a[i], 12),
               "b": _rounded(trajectory.b[i], 12)}
        for i, name in enumerate(robot.joint_names)
    }
    per_joint = {name: [float(value) for value in values]
                 for name, values in (("lower", model.lower), ("upper", model.upper),
                                      ("velocity", model.velocity_limit),
                                      ("effort", model.effort_limit))}
    kept = {name: _rounded(values, 12)
            for name, values in (("lower", limits.lower), ("upper", limits.upper),
                                 ("velocity", limits.velocity), ("effort", limits.effort))}
    return {
        "robot": model.name,
        "joint_names": list(robot.joint_names),
        "period": trajectory.period,
        "harmonics": trajectory.harmonics,
        "seed": excitation.settings.seed,
        "joints": joints,
        "base_parameters": len(excitation.base_parameters),
        "condition_number": excitation.condition_number,
        "start_condition_number": excitation.start_condition_number,
        "iterations": excitation.iterations,
        "wall_time": round(excitation.wall_time, 3),
        "margin": limits.margin,
        "limits": per_joint,
        "limits_kept": kept,
        "friction_velocity": FRICTION_VELOCITY,
        "preview": {
            "clean": verdict.clean,
            "problems": list(verdict.problems),
            "controller": CONTROLLER,
            "kp": verdict.playback.kp,
            "kd": verdict.playback.kd,
            "control_period": verdict.playback.control_period,
            "tracking_error": _rounded(verdict.tracking_error),
            "peak_effort": _rounded(metrics.peak_effort),
            "effort_ratio": float(metrics.effort_ratio),
            "limit_stops": [int(steps) for steps in metrics.limit_violations],
            "energy_start": float(metrics.energy_start),
            "energy_peak": float(metrics.energy_peak),
            "energy_end": float(metrics.energy_end),
        },
    }


def ros_parameters(robot: Robot, trajectory: FourierTrajectory,
                   playback: Playback) -> dict[str, Any]:
    """The ROS parameters that play the trajectory as the preview did: sim_node stepping as
    `playback` says, publishing every control period in lockstep with the controller, in real
    time, from the trajectory's start posture; controller_node with CONTROLLER and its gains.

    Args:
        robot: the robot (its joints, in the order of the effort commands).
        trajectory: the trajectory.
        playback: the controller's period and the simulation's step.

    Returns:
        {"/**/sim_node": {"ros__parameters": {...}}, "/**/controller_node": {...}}.
    """
    joints = list(robot.joint_names)  # copied into each node's: YAML would alias one list
    return {
        "/**/sim_node": {"ros__parameters": {
            "integrator": playback.integrator, "dt": playback.dt,
            "publish_period": playback.publish_period, "real_time_factor": 1.0,
            "lockstep": True, "joints": list(joints),
            "initial_positions": _rounded(trajectory.positions(np.zeros(1))[0])}},
        "/**/controller_node": {"ros__parameters": {
            "controller": CONTROLLER, "dynamics_source": "in_process", "joints": list(joints),
            "controller_parameters": {"kp": playback.kp, "kd": playback.kd}}},
    }


def write_excitation(folder: Path, robot: Robot, excitation: Excitation,
                     verdict: PreviewVerdict, samples: int) -> list[Path]:
    """Write EXCITATION_FILE and SCENARIO_FILE, and with a clean verdict TRAJECTORY_FILE (the
    JointTrajectory message) and PARAMS_FILE (the nodes that play it) into `folder` (created).

    Args:
        folder: the output folder.
        robot: the robot.
        excitation: the optimised excitation.
        verdict: the preview's verdict on it.
        samples: waypoints after the start in the written trajectory and scenario.

    Returns:
        The files written.
    """
    folder.mkdir(parents=True, exist_ok=True)
    trajectory, playback = excitation.trajectory, verdict.playback
    documents: list[tuple[str, dict[str, Any], str]] = [
        (EXCITATION_FILE, excitation_document(robot, excitation, verdict),
         "# An excitation trajectory for dynamic identification (robodyn excite)\n"),
        (SCENARIO_FILE, preview_scenario(robot, trajectory, samples, playback),
         "# robodyn preview URDF <this file>\n"),
    ]
    if verdict.clean:
        documents.append((TRAJECTORY_FILE, joint_trajectory_message(robot, trajectory, samples),
            "# robodyn sim --trajectory <this file> --record BAG, or to a controller_node "
            "running: robodyn send-trajectory <this file>\n"))
        documents.append((PARAMS_FILE, ros_parameters(robot, trajectory, playback),
            f"# sim_node and controller_node as the preview played {TRAJECTORY_FILE}: "
            "robodyn sim --trajectory reads it\n"))
    written = []
    for name, document, comment in documents:
        path = folder / name
        path.write_text(comment + yaml.safe_dump(document, sort_keys=False, allow_unicode=True,
                                                 default_flow_style=None, width=100),
                        encoding="utf-8")
        written.append(path)
    return written


def excitation_summary(robot: Robot, excitation: Excitation, verdict: PreviewVerdict) -> str:
    """A few lines for people: the settings, both condition numbers, how the preview played it
    and its verdict, and per joint the peak commanded effort against its limit, the largest
    tracking error and the steps stopped at a position limit.

    Args:
        robot: the robot.
        excitation: the optimised excitation.
        verdict: the preview's verdict on it.

    Returns:
        The text, ending in a newline.
    """
    settings, metrics = excitation.settings, verdict.metrics
    lines = [
        f"excitation of '{robot.model.name}' ({robot.nv} joints, "
        f"{len(excitation.base_parameters)} base parameters): {settings.period:g} s, "
        f"{settings.harmonics} harmonics, margin {settings.margin:g}, seed {settings.seed}",
        f"condition number of the base regressor: {excitation.start_condition_number:.4g} at "
        f"the random start, {excitation.condition_number:.4g} optimised "
        f"({excitation.iterations} SLSQP iterations, {excitation.wall_time:.1f} s)",
        f"preview ({verdict.playback.describe()}): "
        + ("clean" if verdict.clean else "OUTSIDE THE LIMITS: " + "; ".join(verdict.problems)),
        f"  {'joint':<20} {'peak |τ|':>9} {'limit':>9} {'share':>6} {'error rad':>10} "
        f"{'limit stops':>11}",
    ]
    for name, peak, limit, error, stops in zip(
            robot.model.joint_names, metrics.peak_effort, verdict.effort_limit,
            verdict.tracking_error, metrics.limit_violations, strict=True):
        lines.append(f"  {name:<20.20} {peak:>9.3g} {limit:>9.3g} {peak / limit:>6.0%} "
                     f"{error:>10.2g} {int(stops):>11d}")
    return "\n".join(lines) + "\n"


def _rounded(values: np.ndarray, digits: int = DIGITS) -> Any:
    """values as nested lists of floats, rounded to `digits` decimals."""
    return (np.round(np.asarray(values, dtype=float), digits) + 0.0).tolist()  # no -0.0


