"""A preview for people: the scenarios file, the metrics table and PNG plots."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from robodyn_ros.figures.plotting import (
    START,
    TARGET,
    axis_label,
    draw_limits,
    joint_unit,
    pyplot,
    robust_range,
    saved,
)
from robodyn_ros.model.model import MULTI_DOF_JOINTS
from robodyn_ros.robot import Robot
from robodyn_ros.sim.preview import PreviewResult, PreviewSettings
from robodyn_ros.sim.scenarios import (
    JointTrajectory,
    PoseTarget,
    Scenario,
    ScenarioError,
    WholeBodyPose,
    scenario_from_mapping,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SETTINGS = ("horizon", "dt", "integrator", "forward_dynamics_method", "tolerance",
            "control_period")
JOINTS_PLOT = "preview_joints.png"
PATHS_PLOT = "preview_paths.png"


def read_scenarios_file(
    robot: Robot, path: str | Path, **overrides: float | str | None
) -> tuple[list[Scenario], PreviewSettings, np.ndarray | None]:
    """(scenarios, settings, start q or None) from a YAML file with `scenarios` (a list, see
    scenarios.scenario_from_mapping), optional settings (SETTINGS) and `start` (q); settings
    in `overrides` that are not None win over the file's."""
    import yaml

    with open(path, encoding="utf-8") as file:
        try:
            content = yaml.safe_load(file)
        except yaml.YAMLError as error:
            raise ScenarioError(f"{path}: not YAML: {error}") from None
    if not isinstance(content, dict) or not isinstance(content.get("scenarios"), list):
        raise ScenarioError(f"{path}: needs a list 'scenarios'")
    unknown = sorted(set(content) - {"scenarios", "start", *SETTINGS})
    if unknown:
        raise ScenarioError(f"{path}: unknown fields {', '.join(unknown)}")
    values = {name: content[name] for name in SETTINGS if name in content}
    values.update({name: value for name, value in overrides.items() if value is not None})
    scenarios = [scenario_from_mapping(robot, spec, k)
                 for k, spec in enumerate(content["scenarios"])]
    start = content.get("start")
    return scenarios, PreviewSettings(**values), None if start is None else np.asarray(start)


def metrics_table(results: list[PreviewResult]) -> str:
    """A row of metrics per scenario, as text."""
    header = (f"{'scenario':<16} {'RTF':>7} {'peak |τ|/limit':>14} {'limit stops':>11} "
              f"{'min sv(J)':>9} {'pos err m':>9} {'rot err rad':>11} {'ΔE J':>8}")
    rows = [header, "-" * len(header)]
    for result in results:
        m = result.metrics
        rows.append(
            f"{result.name:<16.16} {result.real_time_factor:>7.0f} {m.effort_ratio:>14.2f} "
            f"{int(m.limit_violations.sum()):>11d} {m.min_singular_value:>9.4f} "
            f"{m.final_position_error:>9.4f} {m.final_orientation_error:>11.4f} "
            f"{m.energy_end - m.energy_start:>8.2f}"
        )
    return "\n".join(rows)


def contact_table(results: list[PreviewResult]) -> str:
    """A row of contact metrics (sim.contact_log) per scenario with a world, as text; empty
    when none has one."""
    header = (f"{'scenario':<16} {'peak force N':>12} {'slip mm':>8} {'lost contacts':>13} "
              f"{'penetration mm':>14}")
    rows = [header, "-" * len(header)]
    for result in results:
        if not result.contacts:
            continue
        m = result.metrics.contact
        rows.append(f"{result.name:<16.16} {m.peak_contact_force:>12.2f} "
                    f"{1e3 * m.slip_distance:>8.2f} {m.lost_contacts:>13d} "
                    f"{1e3 * m.penetration:>14.3f}")
    return "\n".join(rows) if len(rows) > 2 else ""


def write_plots(folder: str | Path, robot: Robot, scenarios: Sequence[Scenario],
                results: list[PreviewResult]) -> list[Path]:
    """JOINTS_PLOT (joints_figure) and PATHS_PLOT (paths_figure) in `folder` (created).

    Args:
        folder: the output folder.
        robot: the robot previewed.
        scenarios: the scenarios, in the order of `results`.
        results: what the preview predicted for them.

    Returns:
        The written paths.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return [saved(joints_figure(robot, results), folder / JOINTS_PLOT),
            saved(paths_figure(robot, scenarios, results), folder / PATHS_PLOT)]


def joints_figure(robot: Robot, results: list[PreviewResult]) -> Figure:
    """A panel per joint of one coordinate (a floating base's pose is in the paths): its
    position in every scenario (a colour each, named in the legend above) against the joint's
    limits.

    Args:
        robot: the robot previewed (joint names, kinds and limits).
        results: the preview's results.

    Returns:
        The figure.
    """
    joints = [joint for joint in robot.configuration_joints
              if joint.kind not in MULTI_DOF_JOINTS]
    lower, upper = (np.asarray(robot.per_coordinate(limit), dtype=float)
                    for limit in (robot.model.lower, robot.model.upper))
    n = len(joints)
    columns = 1 if n < 4 else 2
    rows = max(1, -(-n // columns))
    figure: Figure
    figure, axes = pyplot().subplots(rows, columns, figsize=(6 * columns, 1.9 * rows + 0.9),
                                     sharex=True, squeeze=False, layout="constrained")
    for k, ax in enumerate(axes.T.ravel()):  # down the first column, then the second
        if k >= n:
            ax.set_visible(False)
            continue
        joint = joints[k]
        lines = [ax.plot(result.times, result.q[:, joint.q.start], lw=1.2, label=result.name)[0]
                 for result in results]
        unit = joint_unit("position", joint.kind)
        data = robust_range(np.concatenate([line.get_ydata() for line in lines]), (0, 100))
        draw_limits(ax, float(lower[joint.v.start]), float(upper[joint.v.start]), unit, data)
        ax.set_title(joint.name, loc="left", fontsize=8)
        ax.set_ylabel(axis_label("q", unit), fontsize=8)
        ax.grid(alpha=0.3)
    for column in range(columns):  # the lowest panel of each column
        lowest = axes[(n - 1 - column * rows if column == columns - 1 else rows - 1), column]
        lowest.xaxis.set_tick_params(labelbottom=True)
        lowest.set_xlabel(axis_label("time", "s"))
    handles, labels = axes[0, 0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 6),
                  fontsize=8)
    figure.suptitle("joint positions predicted by the preview, against the joint limits",
                    fontsize=10)
    return figure


def paths_figure(robot: Robot, scenarios: Sequence[Scenario],
                 results: list[PreviewResult]) -> Figure:
    """Each scenario's frame path in the world, seen from above (x–y) and from the side
    (x–z): its start (a circle) and, where the scenario has one (scenario_target), its
    target (a cross) in its colour; the frame named in the title, or per scenario in the
    legend when they differ.

    Args:
        robot: the robot previewed.
        scenarios: the scenarios, in the order of `results`.
        results: the preview's results.

    Returns:
        The figure.
    """
    from matplotlib.lines import Line2D

    figure: Figure
    figure, (top, side) = pyplot().subplots(1, 2, figsize=(11, 5.4), layout="constrained")
    frames = sorted({result.frame for result in results})
    for scenario, result in zip(scenarios, results, strict=True):
        path = result.frame_path[:, :3, 3]
        target = scenario_target(robot, scenario)
        label = result.name if len(frames) == 1 else f"{result.name} ({result.frame})"
        for ax, vertical in ((top, 1), (side, 2)):
            line = ax.plot(path[:, 0], path[:, vertical], lw=1.3, label=label)[0]
            ax.plot(path[0, 0], path[0, vertical], "o", color=line.get_color(), mfc="white",
                    ms=7, gid=START, label="_start")
            if target is not None:
                ax.plot(target[0], target[vertical], "x", color=line.get_color(), ms=9,
                        mew=2, gid=TARGET, label="_target")
    for ax, axis, view in ((top, "y", "from above"), (side, "z", "from the side")):
        ax.set_xlabel(axis_label("x", "m"))
        ax.set_ylabel(axis_label(axis, "m"))
        ax.set_title(f"{view} (x and {axis}, world frame)", fontsize=9)
        ax.set_aspect("equal", adjustable="datalim")
        ax.grid(alpha=0.3)
    handles, labels = top.get_legend_handles_labels()
    handles += [Line2D([], [], ls="none", marker="o", mfc="white", color="0.3", ms=7),
                Line2D([], [], ls="none", marker="x", color="0.3", ms=9, mew=2)]
    labels += ["start", "target"]
    figure.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 6),
                  fontsize=8)
    figure.suptitle(f"path of {', '.join(frames)} predicted by the preview", fontsize=10)
    return figure


def scenario_target(robot: Robot, scenario: Scenario) -> np.ndarray | None:
    """Where a scenario drives its frame, m in the world: a pose target's position, a joint
    trajectory's frame at its last waypoint; None for a torque profile (no target).

    Args:
        robot: the robot previewed.
        scenario: the scenario.

    Returns:
        (3,) or None.
    """
    if isinstance(scenario, PoseTarget | WholeBodyPose):
        return scenario.position
    if isinstance(scenario, JointTrajectory):
        return robot.frame_pose(scenario.positions[-1], scenario.frame)[:3, 3]
    return None


__all__ = ["JOINTS_PLOT", "PATHS_PLOT", "SETTINGS", "contact_table", "joints_figure",
           "metrics_table", "paths_figure", "read_scenarios_file", "scenario_target",
           "write_plots"]
