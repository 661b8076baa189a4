"""`robodyn bag analyze`: read, analyse and write every output of one bag."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from robodyn_ros.bag.analysis import WINDOW, Analysis, analyze, check_frames
from robodyn_ros.bag.errors import BagError
from robodyn_ros.bag.plots import write_plots
from robodyn_ros.bag.progress import progress_bar
from robodyn_ros.bag.reading import read_joint_states
from robodyn_ros.bag.report import text_report, write_csv
from robodyn_ros.bag.writing import write_dynamics
from robodyn_ros.parallel import backend
from robodyn_ros.robot import Robot


@dataclass(frozen=True)
class AnalysisOptions:
    """What `robodyn bag analyze` computes and writes, and where."""

    topic: str = "/joint_states"
    frames: tuple[str, ...] = ()
    window: int = WINDOW
    mass_matrix_method: str = "crba"
    forward_dynamics_method: str = "aba"
    backend: str = "serial"
    workers: int = 2
    output: Path | None = None  # default: <bag>_dynamics beside the bag
    plots: bool = True
    dynamics_bag: bool = True
    progress: bool | None = None  # None: when stderr is a terminal


@dataclass(frozen=True)
class AnalysisOutputs:
    """The analysis and the files written."""

    analysis: Analysis
    folder: Path
    report: str
    files: tuple[Path, ...]


def analyze_bag(bag: str | Path, robot: Robot, options: AnalysisOptions) -> AnalysisOutputs:
    """Read the joint states of `bag`, analyse them and write into the output folder: the
    dynamics bag (`dynamics/`), `samples.csv`, `report.txt` and the PNG plots."""
    bag = Path(bag)
    folder = options.output or bag.parent / f"{bag.name}_dynamics"
    _check_output(folder)
    check_frames(robot, options.frames)  # before the bag is read
    run = read_joint_states(bag, options.topic, robot.joint_names)
    show = sys.stderr.isatty() if options.progress is None else options.progress
    with backend(options.backend, workers=options.workers) as pool, progress_bar(
        show, len(run), "dynamics"
    ) as progress:
        analysis = analyze(
            robot, run, frames=options.frames, window=options.window, pool=pool,
            mass_matrix_method=options.mass_matrix_method, progress=progress,
        )
    folder.mkdir(parents=True, exist_ok=True)
    samples_file, report_file = folder / "samples.csv", folder / "report.txt"
    write_csv(samples_file, analysis)
    report = text_report(analysis)
    report_file.write_text(report)
    files = [samples_file, report_file]
    if options.plots:
        files += write_plots(folder, robot, analysis)
    if options.dynamics_bag:
        files.append(folder / "dynamics")
        with progress_bar(show, len(run), "output bag") as progress:
            write_dynamics(
                files[-1], robot, analysis,
                forward_dynamics_method=options.forward_dynamics_method, progress=progress,
            )
    return AnalysisOutputs(analysis, folder, report, tuple(files))


def _check_output(folder: Path) -> None:
    if (folder / "dynamics").exists() or (folder / "samples.csv").exists():
        raise BagError(f"output folder {folder} already holds an analysis; choose another")
