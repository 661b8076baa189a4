"""What comes of an excitation (excitation.optimise_excitation): the preview's verdict on it,
its files and a summary for people.

`verify_in_preview` plays the trajectory as a preview `joint_trajectory` scenario: a clean
verdict has no commanded effort above its limit and no joint stopped at a position limit.
`write_excitation` writes EXCITATION_FILE (the coefficients, condition numbers, limits and the
verdict), SCENARIO_FILE (what `robodyn preview` plays) and, only with a clean verdict,
TRAJECTORY_FILE: the trajectory as a trajectory_msgs/JointTrajectory in the YAML form of
`ros2 topic pub`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml

from robodyn_ros.identification.excitation import Excitation, FourierTrajectory
from robodyn_ros.model.model import FRICTION_VELOCITY
from robodyn_ros.robot import Robot

if TYPE_CHECKING:
    from robodyn_ros.sim.preview import PreviewMetrics

OUTPUT_RATE = 20.0
"""Hz: default waypoints per second of the written trajectory."""
DIGITS = 6
"""Decimals of the written waypoints."""
LEAD_IN = 5.0
"""s: the JointTrajectory's time to reach the excitation's start from wherever the arm is."""
EXCITATION_FILE = "excitation.yaml"
TRAJECTORY_FILE = "joint_trajectory.yaml"
SCENARIO_FILE = "preview_scenario.yaml"


@dataclass(frozen=True, eq=False)
class PreviewVerdict:
    """What the preview found playing the trajectory.

    Attributes:
        metrics: the preview's metrics (peak commanded efforts, limit stops, ...).
        effort_limit: (n,) the description's effort limits.
        problems: one sentence per limit the preview found crossed; none: clean.
    """

    metrics: PreviewMetrics
    effort_limit: np.ndarray
    problems: tuple[str, ...]

    @property
    def clean(self) -> bool:
        """Whether the preview found no limit crossed."""
        return not self.problems


def waypoint_times(period: float, samples: int) -> np.ndarray:
    """The times of `samples` waypoints after the start, evenly to the period: (samples,)."""
    return period * np.arange(1, samples + 1) / samples


def preview_scenario(robot: Robot, trajectory: FourierTrajectory, samples: int,
                     name: str = "excitation") -> dict[str, Any]:
    """The preview's scenarios file (sim.preview_report.read_scenarios_file) that plays the
    trajectory: a `joint_trajectory` through its positions at waypoint_times, from its start
    posture, over one period.

    Args:
        robot: the robot.
        trajectory: the trajectory.
        samples: waypoints after the start.
        name: the scenario's name.

    Returns:
        {horizon, start, scenarios: [{name, joint_trajectory: {frame, times, positions}}]}.
    """
    times = waypoint_times(trajectory.period, samples)
    return {
        "horizon": trajectory.period,
        "start": _rounded(trajectory.positions(np.zeros(1))[0]),
        "scenarios": [{"name": name, "joint_trajectory": {
            "frame": robot.frame_names[-1], "times": _rounded(times),
            "positions": _rounded(trajectory.positions(times))}}],
    }


def verify_in_preview(robot: Robot, trajectory: FourierTrajectory,
                      samples: int) -> PreviewVerdict:
    """Play the trajectory in the preview (preview_scenario, joint impedance with
    inverse-dynamics feed-forward, rk4 at 1 ms) and judge it.

    Args:
        robot: the robot.
        trajectory: the trajectory.
        samples: waypoints after the start.

    Returns:
        The verdict: a problem for each joint whose commanded effort exceeded its limit or
        that stopped at a position limit.

    Raises:
        ValueError: a start posture outside the joint limits, where the preview cannot start
            (never that of optimise_excitation's trajectories).
    """
    from robodyn_ros.sim.preview import PreviewSettings, preview  # the rollout kernels, on use
    from robodyn_ros.sim.scenarios import scenario_from_mapping

    document = preview_scenario(robot, trajectory, samples)
    scenario = scenario_from_mapping(robot, document["scenarios"][0])
    settings = PreviewSettings(horizon=document["horizon"])
    result = preview(robot, [scenario], settings, np.array(document["start"]))[0]
    metrics = result.metrics
    effort_limit = np.asarray(robot.model.effort_limit, dtype=float)
    problems = [f"{name}: commanded effort {peak:.4g} beyond its limit {limit:.4g}"
                for name, peak, limit in zip(robot.model.joint_names, metrics.peak_effort,
                                             effort_limit, strict=True) if peak > limit]
    problems += [f"{name}: stopped at a position limit for {steps} steps"
                 for name, steps in zip(robot.model.joint_names, metrics.limit_violations,
                                        strict=True) if steps > 0]
    return PreviewVerdict(metrics, effort_limit, tuple(problems))


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
    states = trajectory.states(times)
    points = []
    for k, t in enumerate(times):
        nanoseconds = round((LEAD_IN + float(t)) * 1e9)
        points.append({
            "positions": _rounded(states[0][k]), "velocities": _rounded(states[1][k]),
            "accelerations": _rounded(states[2][k]),
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
            "peak_effort": _rounded(metrics.peak_effort),
            "effort_ratio": float(metrics.effort_ratio),
            "limit_stops": [int(steps) for steps in metrics.limit_violations],
            "energy_start": float(metrics.energy_start),
            "energy_peak": float(metrics.energy_peak),
            "energy_end": float(metrics.energy_end),
        },
    }


def write_excitation(folder: Path, robot: Robot, excitation: Excitation,
                     verdict: PreviewVerdict, samples: int) -> list[Path]:
    """Write EXCITATION_FILE and SCENARIO_FILE, and with a clean verdict TRAJECTORY_FILE (the
    JointTrajectory message) into `folder` (created).

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
    documents: list[tuple[str, dict[str, Any], str]] = [
        (EXCITATION_FILE, excitation_document(robot, excitation, verdict),
         "# An excitation trajectory for dynamic identification (robodyn excite)\n"),
        (SCENARIO_FILE, preview_scenario(robot, excitation.trajectory, samples),
         "# robodyn preview URDF <this file>\n"),
    ]
    if verdict.clean:
        documents.append((TRAJECTORY_FILE, joint_trajectory_message(
            robot, excitation.trajectory, samples),
            "# robodyn send-trajectory <this file>   (or: ros2 topic pub --once "
            "joint_trajectory trajectory_msgs/msg/JointTrajectory \"$(cat <this file>)\")\n"))
    written = []
    for name, document, comment in documents:
        path = folder / name
        path.write_text(comment + yaml.safe_dump(document, sort_keys=False, allow_unicode=True,
                                                 default_flow_style=None, width=100),
                        encoding="utf-8")
        written.append(path)
    return written


def excitation_summary(robot: Robot, excitation: Excitation, verdict: PreviewVerdict) -> str:
    """A few lines for people: the settings, both condition numbers, the preview's verdict and
    each joint's peak commanded effort against its limit.

    Args:
        robot: the robot.
        excitation: the optimised excitation.
        verdict: the preview's verdict on it.

    Returns:
        The text, ending in a newline.
    """
    settings = excitation.settings
    lines = [
        f"excitation of '{robot.model.name}' ({robot.nv} joints, "
        f"{len(excitation.base_parameters)} base parameters): {settings.period:g} s, "
        f"{settings.harmonics} harmonics, margin {settings.margin:g}, seed {settings.seed}",
        f"condition number of the base regressor: {excitation.start_condition_number:.4g} at "
        f"the random start, {excitation.condition_number:.4g} optimised "
        f"({excitation.iterations} SLSQP iterations, {excitation.wall_time:.1f} s)",
        "preview: " + ("clean" if verdict.clean else "OUTSIDE THE LIMITS: "
                       + "; ".join(verdict.problems)),
        f"  {'joint':<20} {'peak |τ|':>9} {'limit':>9} {'share':>6}",
    ]
    for name, peak, limit in zip(robot.model.joint_names, verdict.metrics.peak_effort,
                                 verdict.effort_limit, strict=True):
        lines.append(f"  {name:<20.20} {peak:>9.3g} {limit:>9.3g} {peak / limit:>6.0%}")
    return "\n".join(lines) + "\n"


def _rounded(values: np.ndarray, digits: int = DIGITS) -> Any:
    """values as nested lists of floats, rounded to `digits` decimals."""
    return (np.round(np.asarray(values, dtype=float), digits) + 0.0).tolist()  # no -0.0


