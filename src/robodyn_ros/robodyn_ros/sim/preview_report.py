"""A preview for people: the scenarios file, the metrics table and PNG plots."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import numpy as np

from robodyn_ros.robot import Robot
from robodyn_ros.sim.preview import PreviewResult, PreviewSettings
from robodyn_ros.sim.scenarios import Scenario, ScenarioError, scenario_from_mapping

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


def write_plots(folder: str | Path, results: list[PreviewResult]) -> list[Path]:
    """JOINTS_PLOT (each scenario's joint positions) and PATHS_PLOT (the frame
    paths seen from above and from the side) in `folder`; the written paths."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    figure, axes = pyplot.subplots(len(results), 1, figsize=(10, 2.6 * len(results)),
                                   squeeze=False, layout="constrained")
    for ax, result in zip(axes[:, 0], results, strict=True):
        ax.plot(result.times, result.q)
        ax.set_title(result.name)
        ax.set_ylabel("q, rad")
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("time, s")
    joints = _saved(pyplot, figure, folder / JOINTS_PLOT)
    figure, (top, side) = pyplot.subplots(1, 2, figsize=(11, 5), layout="constrained")
    for result in results:
        path = result.frame_path[:, :3, 3]
        top.plot(path[:, 0], path[:, 1], label=result.name)
        side.plot(path[:, 0], path[:, 2], label=result.name)
    for ax, vertical in ((top, "y, m"), (side, "z, m")):
        ax.set_xlabel("x, m")
        ax.set_ylabel(vertical)
        ax.set_aspect("equal", adjustable="datalim")
        ax.grid(alpha=0.3)
    top.legend()
    return [joints, _saved(pyplot, figure, folder / PATHS_PLOT)]


def _saved(pyplot: ModuleType, figure: Figure, path: Path) -> Path:
    figure.savefig(path, dpi=110)
    pyplot.close(figure)
    return path


__all__ = ["SETTINGS", "metrics_table", "read_scenarios_file", "write_plots"]
