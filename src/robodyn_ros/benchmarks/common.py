"""Shared by the benchmark scripts: the robots, random states, timing, Markdown tables, the
studies over chain sizes, the function-by-function comparisons against Pinocchio and the
generated pages under docs/benchmarks/.

Only the standard library is imported at module level (numpy, Pinocchio and robodyn_ros inside
the functions that need them, and the modules only the generated pages need there too), so that
``startup.py`` can import this module in a fresh process and still time ``import robodyn_ros``
with everything it pulls in.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import pinocchio as pin

    from robodyn_ros import Robot
    from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

BUNDLED_PANDA = Path(__file__).resolve().parent.parent / "urdf" / "panda.urdf"
REPO_ROOT = Path(__file__).resolve().parents[3]
BENCHMARK_DOCS = REPO_ROOT / "docs" / "benchmarks"  # the generated pages, one per published run
PYTHON = ".venv/bin/python"  # the interpreter as the documented commands name it
# (label, distribution) of the libraries whose versions head every run; others by request
LIBRARIES = (("numpy", "numpy"), ("numba", "numba"), ("Pinocchio", "pin"), ("MuJoCo", "mujoco"))
CHAIN_SIZES = (7, 16, 32, 64, 128, 256)
CHAIN_SEED = 0
STATE_SEED = 1


@dataclass(frozen=True)
class RobotSpec:
    """How to build one benchmark robot; exactly one of `example`, `path`, `chain` is set."""

    name: str
    frame: str  # the frame of frame_pose, jacobian and operational_space_inertia
    example: str = ""  # an example-robot-data name
    path: Path | None = None  # a URDF file
    chain: int = 0  # moving joints of a random_chain_urdf
    locked_joints: tuple[str, ...] = ()  # frozen at 0

    @classmethod
    def random_chain(cls, n: int) -> RobotSpec:
        """`chain<n>`: a random_chain_urdf of `n` moving joints, its frame the last link."""
        return cls(f"chain{n}", f"link_{n - 1}", chain=n)

    def urdf(self) -> tuple[str, bool]:
        """The URDF file path or text, and whether it is text."""
        if self.chain:
            from robodyn_ros.model.generate import random_chain_urdf

            return random_chain_urdf(self.chain, seed=CHAIN_SEED), True
        if self.path is not None:
            return str(self.path), False
        from robodyn_ros.testing import example_robot_urdf

        return str(example_robot_urdf(self.example)), False

    def locked(self) -> dict[str, float]:
        return dict.fromkeys(self.locked_joints, 0.0)

    def load(self) -> Robot:
        """The Robot, without the URDF warnings (Talos: mimic joints, singular inertias); mimic
        joints load as independent joints, as the Pinocchio peer has them."""
        from robodyn_ros import Robot
        from robodyn_ros.model.urdf import URDFWarning

        source, is_text = self.urdf()
        load = Robot.from_urdf_string if is_text else Robot.from_urdf
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", URDFWarning)
            return load(source, locked_joints=self.locked() or None, mimic=False)

    def pinocchio_oracle(self, joint_names: Sequence[str]) -> PinocchioOracle:
        """Pinocchio's model of the same URDF, the same joints locked, speaking in the order of
        `joint_names` (the loaded Robot's)."""
        from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

        source, is_text = self.urdf()
        return PinocchioOracle(
            source, joint_names, locked_joints=self.locked() or None, is_string=is_text
        )


def robot_specs() -> dict[str, RobotSpec]:
    """Every benchmark robot by name, smallest first."""
    fingers = ("panda_finger_joint1", "panda_finger_joint2")  # robodyn_ros.testing.PANDA_FINGERS
    specs = [
        RobotSpec("panda", "panda_hand", example="panda", locked_joints=fingers),
        RobotSpec("panda-bundled", "panda_hand_tcp", path=BUNDLED_PANDA),
        RobotSpec("talos", "arm_left_7_link", example="talos"),
    ]
    specs += [RobotSpec.random_chain(n) for n in CHAIN_SIZES]
    return {spec.name: spec for spec in specs}


@dataclass(frozen=True)
class State:
    """One random state, in robodyn's joint order."""

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray


def random_state(nv: int, seed: int = STATE_SEED) -> State:
    """Joint positions, velocities, accelerations and torques drawn uniformly from [-1, 1]."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return State(*(rng.uniform(-1.0, 1.0, size=nv) for _ in range(4)))


def robot_calls(robot: Robot, frame: str, s: State) -> dict[str, Callable[[], object]]:
    """One zero-argument call of each Robot function on state `s`, by function name."""
    return {
        "inverse_dynamics": lambda: robot.inverse_dynamics(s.q, s.qd, s.qdd),
        "bias_forces": lambda: robot.bias_forces(s.q, s.qd),
        "gravity_torques": lambda: robot.gravity_torques(s.q),
        "coriolis_matrix": lambda: robot.coriolis_matrix(s.q, s.qd),
        "mass_matrix": lambda: robot.mass_matrix(s.q),
        "mass_matrix_inverse": lambda: robot.mass_matrix_inverse(s.q),
        "forward_dynamics(aba)": lambda: robot.forward_dynamics(s.q, s.qd, s.tau),
        "forward_dynamics(cholesky)": lambda: robot.forward_dynamics(
            s.q, s.qd, s.tau, method="cholesky"
        ),
        "frame_pose": lambda: robot.frame_pose(s.q, frame),
        "jacobian": lambda: robot.jacobian(s.q, frame),
        "kinetic_energy": lambda: robot.kinetic_energy(s.q, s.qd),
        "potential_energy": lambda: robot.potential_energy(s.q),
        "operational_space_inertia": lambda: robot.operational_space_inertia(s.q, frame),
        "operational_space": lambda: robot.operational_space(s.q, s.qd, frame),
    }


# -- timing -----------------------------------------------------------------------------------


def seconds(call: Callable[[], object]) -> float:
    """Wall time of one call, s."""
    start = time.perf_counter_ns()
    call()
    return (time.perf_counter_ns() - start) * 1e-9


def loop_ns(call: Callable[[], object], calls: int) -> float:
    """Mean time per call of `calls` calls in a row, ns."""
    start = time.perf_counter_ns()
    for _ in range(calls):
        call()
    return (time.perf_counter_ns() - start) / calls


def calls_per_repeat(call: Callable[[], object], budget_s: float) -> int:
    """How many calls in a row take about `budget_s`; the call must be warm."""
    calls = 1
    while (elapsed := loop_ns(call, calls) * calls) < 1e6:  # grow the probe to >= 1 ms
        calls *= 10
    return max(1, round(budget_s * 1e9 * calls / elapsed))


def interleaved_us(
    calls: Sequence[Callable[[], object]], repeat: int, budget_s: float
) -> list[float]:
    """Median µs per call of each call, its timed loops taking turns so noise hits them all."""
    for call in calls:  # warm up: the first call may compile
        call()
    counts = [calls_per_repeat(call, budget_s) for call in calls]
    samples: list[list[float]] = [[] for _ in calls]
    for _ in range(repeat):
        for call, count, sample in zip(calls, counts, samples, strict=True):
            sample.append(loop_ns(call, count) * 1e-3)
    return [statistics.median(sample) for sample in samples]


def interleaved_us_by_name(
    calls: Mapping[str, Callable[[], object]], repeat: int, budget_s: float
) -> dict[str, float]:
    """interleaved_us of named calls: median µs per call by name."""
    return dict(zip(calls, interleaved_us(list(calls.values()), repeat, budget_s), strict=True))


# -- formatting -------------------------------------------------------------------------------


def format_us(us: float) -> str:
    return f"{us:.2f}" if us < 10 else f"{us:.1f}" if us < 1000 else f"{us:.0f}"


def format_ms(ms: float) -> str:
    return f"{ms:.1f}" if ms < 1000 else f"{ms:.0f}"


def mark(ok: bool) -> str:
    return "✓" if ok else "✗"


def ratio_cell(ratio: float, goal: float | None) -> str:
    """A ratio to two decimals, marked ✓/✗ against `goal` (the most it may be) if there is one."""
    cell = f"{ratio:.2f}"
    return cell if goal is None else f"{cell} {mark(ratio <= goal)}"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> str:
    """A padded Markdown table: the first `left` columns left-aligned, the others right."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        padded = [
            cell.ljust(width) if i < left else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    rule = [
        ":" + "-" * (width - 1) if i < left else "-" * (width - 1) + ":"
        for i, width in enumerate(widths)
    ]
    return "\n".join([line(header), line(rule), *(line(row) for row in rows)])


def pivot(
    cells: Mapping[tuple[str, str], str], rows: Sequence[str], columns: Sequence[str]
) -> list[list[str]]:
    """Rows of a table whose cell (row, column) is `cells[row, column]`, or "—"."""
    return [[row, *(cells.get((row, column), "—") for column in columns)] for row in rows]


# -- studies over chain sizes -----------------------------------------------------------------


def size_study_arguments(
    argv: Sequence[str] | None, description: str, sizes: Sequence[int], plot: Path
) -> argparse.Namespace:
    """--sizes (comma-separated chain joint counts), --repeat, --plot and --docs of a size
    study."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--sizes",
        type=lambda text: [int(n) for n in text.split(",")],
        default=list(sizes),
        help=f"comma-separated joint counts (default: {sizes[0]} … {sizes[-1]})",
    )
    parser.add_argument("--repeat", type=int, default=5, help="timed loops per call (default 5)")
    parser.add_argument("--plot", type=Path, default=plot, help="PNG to write")
    add_docs_option(parser)
    return parser.parse_args(argv)


def loglog_plot(
    times: Mapping[int, Mapping[str, float]], names: Sequence[str], title: str, path: Path
) -> str:
    """Write a log-log plot of µs per Python call against N, a line per name in `names`
    through its `times[N][name]` (µs per call of the calls timed at each N, by name).

    Returns:
        What was done, for the output.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "no plot: matplotlib is not installed (pip install -e 'src/robodyn_ros[bench]')"
    figure, axes = plt.subplots(figsize=(7, 5))
    for name in names:
        points = [(n, us[name]) for n, us in times.items() if name in us]
        if points:
            axes.loglog(*zip(*points, strict=True), marker="o", label=name)
    axes.set_xlabel("N (joints of a random chain)")
    axes.set_ylabel("µs per Python call")
    axes.set_title(title)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120, bbox_inches="tight")
    return f"plot: {path}"


@dataclass(frozen=True)
class SizeStudy:
    """A study over chain sizes under way: its options and its report."""

    args: argparse.Namespace  # --sizes, --repeat, --plot, --docs
    report: Report
    budget_s: float = 0.01  # the length of each timed loop, s

    @classmethod
    def start(
        cls, script: str, doc: str, title: str, sizes: Sequence[int],
        argv: Sequence[str] | None = None,
    ) -> SizeStudy:
        """Parse the study's options and start its report (the environment printed first).

        Args:
            script: the study's __file__; its plot is build/<script's name>.png by default.
            doc: the study's docstring, whose first line --help shows.
            title: the section of docs/benchmarks.md that explains the run.
            sizes: the chain joint counts --sizes takes by default.
            argv: the arguments (default: the command line's).
        """
        plot = REPO_ROOT / "build" / f"{Path(script).stem}.png"
        args = size_study_arguments(argv, doc.splitlines()[0], sizes, plot)
        return cls(args, Report.start(script, title, args, argv))

    @property
    def loops(self) -> str:
        """How each call is timed, for the study's heading."""
        return f"{self.args.repeat} interleaved loops of ~{self.budget_s * 1e3:g} ms"

    def finish(
        self, times: Mapping[int, Mapping[str, float]], names: Sequence[str], title: str
    ) -> None:
        """Write the log-log plot of `times` (loglog_plot), say so, and finish the report."""
        print(loglog_plot(times, names, title, self.args.plot))
        self.report.finish()


# -- function by function against Pinocchio --------------------------------------------------


def comparison_arguments(
    argv: Sequence[str] | None,
    description: str,
    robots: Sequence[str],
    quick_help: str = "short loops",
    options: Callable[[argparse.ArgumentParser], None] | None = None,
) -> argparse.Namespace:
    """The options of a comparison against Pinocchio, parsed; an unknown robot exits through
    the parser's error.

    Args:
        argv: the arguments (default: the command line's).
        description: the script's, for --help.
        robots: the robots --robots (comma-separated) chooses from, all by default.
        quick_help: what --quick (short loops, and a 3-loop --repeat) does, for --help.
        options: adds the script's own options, after --robots and --repeat.

    Returns:
        --robots, --repeat (9 timed loops per call unless given, 3 with --quick), the script's
        options, --quick and --docs.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--robots", type=lambda text: text.split(","), default=list(robots),
                        help=f"comma-separated, from {','.join(robots)} (default: all)")
    parser.add_argument("--repeat", type=int, help="timed loops per call (default 9, quick 3)")
    if options is not None:
        options(parser)
    parser.add_argument("--quick", action="store_true", help=quick_help)
    add_docs_option(parser)
    args = parser.parse_args(argv)
    unknown = [name for name in args.robots if name not in robots]
    if unknown:
        parser.error(f"unknown robots {unknown}; choose from {', '.join(robots)}")
    args.repeat = args.repeat or (3 if args.quick else 9)
    return args


def loop_budget_s(quick: bool) -> float:
    """The length of a comparison's timed loops, s: ~20 ms, ~3 ms with --quick."""
    return 0.003 if quick else 0.02


def symmetric(upper: np.ndarray) -> np.ndarray:
    """The symmetric matrix whose upper triangle Pinocchio filled."""
    import numpy as np

    return np.triu(upper) + np.triu(upper, 1).T


def relative_error(ours: object, expected: object) -> float:
    """max |ours − expected| / max |expected| (of tuples of arrays, the largest part's)."""
    import numpy as np

    if isinstance(ours, tuple):
        return max(relative_error(part, peer) for part, peer in zip(ours, expected, strict=True))
    ours, expected = np.asarray(ours, dtype=float), np.asarray(expected, dtype=float)
    return float(np.max(np.abs(ours - expected)) / max(np.max(np.abs(expected)), 1e-300))


def frame_constraint(
    model: pin.Model, frame_id: int, axes: pin.ReferenceFrame
) -> tuple[pin.StdVec_RigidConstraintModel, pin.StdVec_RigidConstraintData]:
    """A 6-D rigid constraint on a frame of a Pinocchio model, in `axes`, as the constraint
    models and their data Pinocchio's constrained algorithms take (one of each)."""
    import pinocchio as pin

    frame = model.frames[frame_id]
    constraint = pin.RigidConstraintModel(
        pin.ContactType.CONTACT_6D, model, frame.parentJoint, frame.placement, axes
    )
    models = pin.StdVec_RigidConstraintModel()
    models.append(constraint)
    datas = pin.StdVec_RigidConstraintData()
    datas.append(constraint.createData())
    return models, datas


@dataclass(frozen=True)
class PinocchioRow:
    """A Robot function and the Pinocchio call that answers the same question, on one state."""

    function: str
    peer: str  # what Pinocchio calls
    ours: Callable[[], object]
    theirs: Callable[[], object]  # timed as it is
    # Pinocchio's answer in our order, for the error; None: the answers are not comparable
    expected: Callable[[], object] | None = None


@dataclass(frozen=True)
class PinocchioResult:
    """A table row: µs per Python call of ours and Pinocchio's, and how far our answer is."""

    function: str  # the Robot function, or the row of a second Pinocchio peer
    peer: str
    ours_us: float
    pin_us: float
    error: float | None  # relative_error of our answer; None if the answers are not comparable

    @property
    def ratio(self) -> float:
        """Ours / Pinocchio's µs per call."""
        return self.ours_us / self.pin_us


# the ratio a robot's (name, nv) result should stay under, or None
Goal = Callable[[str, int, PinocchioResult], float | None]
PINOCCHIO_HEADER = ("function", "Pinocchio", "ours µs", "pin µs", "ours/pin", "rel. error")


def time_against_pinocchio(
    rows: Sequence[PinocchioRow], repeat: int, budget_s: float
) -> list[PinocchioResult]:
    """Each row's two calls timed by interleaved_us, and the relative_error of our answer
    where it is comparable."""
    results = []
    for row in rows:
        ours_us, pin_us = interleaved_us([row.ours, row.theirs], repeat, budget_s)
        error = None if row.expected is None else relative_error(row.ours(), row.expected())
        results.append(PinocchioResult(row.function, row.peer, ours_us, pin_us, error))
    return results


def pinocchio_cells(result: PinocchioResult, goal: float | None) -> list[str]:
    """A result's cells under PINOCCHIO_HEADER, its ratio marked against `goal` if any."""
    error = "—" if result.error is None else f"{result.error:.0e}"
    return [result.function, result.peer, format_us(result.ours_us), format_us(result.pin_us),
            ratio_cell(result.ratio, goal), error]


def pinocchio_table(name: str, nv: int, results: Sequence[PinocchioResult], goal: Goal) -> str:
    """One robot's results under PINOCCHIO_HEADER."""
    rows = [pinocchio_cells(result, goal(name, nv, result)) for result in results]
    return markdown_table(PINOCCHIO_HEADER, rows, 2)


def pinocchio_summary(
    runs: Mapping[str, tuple[int, Sequence[PinocchioResult]]], goal: Goal
) -> str:
    """The summary of the runs (robot → nv and results) under its heading: ours / Pinocchio,
    a row per function, a column per robot."""
    cells = {(r.function, name): ratio_cell(r.ratio, goal(name, nv, r))
             for name, (nv, results) in runs.items() for r in results}
    functions = list(dict.fromkeys(r.function for _, results in runs.values() for r in results))
    table = markdown_table(["ours/pin", *runs], pivot(cells, functions, list(runs)))
    return "### Summary: ours / Pinocchio, µs per Python call\n\n" + table


# -- generated pages --------------------------------------------------------------------------


def add_docs_option(parser: argparse.ArgumentParser) -> None:
    """--docs: also write what the run prints to its page under docs/benchmarks/."""
    parser.add_argument(
        "--docs",
        action="store_true",
        help="also write the tables to this run's page under docs/benchmarks/ (replacing it), "
        "headed by the command, its options and the environment",
    )


def environment(libraries: Sequence[tuple[str, str]] = ()) -> str:
    """Python and the versions of LIBRARIES and `libraries` (label, distribution) installed,
    the CPUs and the load average now: one line."""
    import importlib.metadata
    import platform

    versions = [f"Python {platform.python_version()}"]
    for label, distribution in (*LIBRARIES, *libraries):
        try:
            versions.append(f"{label} {importlib.metadata.version(distribution)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"{', '.join(versions)}; {os.cpu_count()} CPUs ({platform.machine()}), "
        f"load average {load} at the start"
    )


@dataclass(frozen=True)
class RunRecord:
    """How a benchmark ran: what heads its generated page."""

    command: str  # as run from the repository root
    options: str  # every option's value, defaults included
    environment: str
    date: str  # ISO date, UTC


def run_record(
    script: str,
    argv: Sequence[str],
    args: argparse.Namespace,
    internal: Sequence[str] = (),
    libraries: Sequence[tuple[str, str]] = (),
) -> RunRecord:
    """The record of a run of `script` (its __file__) with `argv`, parsed into `args`; the
    options named in `internal` (and --docs) are not shown."""
    import datetime
    import shlex

    path = Path(script).resolve().relative_to(REPO_ROOT)
    options = {
        name: value for name, value in vars(args).items() if name not in ("docs", *internal)
    }
    return RunRecord(
        command=shlex.join([PYTHON, str(path), *argv]),
        options="; ".join(f"{name}={_option_text(value)}" for name, value in options.items()),
        environment=environment(libraries),
        date=datetime.datetime.now(datetime.UTC).date().isoformat(),
    )


def _option_text(value: object) -> str:
    if isinstance(value, Path):
        return str(value.relative_to(REPO_ROOT)) if value.is_relative_to(REPO_ROOT) else str(value)
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value))
    return str(value)


def section_anchor(title: str) -> str:
    """The anchor Markdown renderers (GitHub's) give a heading: lower case, punctuation
    dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def write_benchmark_doc(path: Path, title: str, run: RunRecord, body: str) -> Path:
    """Write the generated page of a benchmark run: the generated-by line with the command,
    the title, the options, the environment and the date, a link to the explanation in
    docs/benchmarks.md (the section named `title`), then `body`, the run's tables.

    Returns:
        `path`.
    """
    header = [
        f"Generated by `{run.command}`, do not edit: run the command again to regenerate it.",
        "",
        f"# {title}",
        "",
        f"- options: {run.options or '—'}",
        f"- environment: {run.environment}",
        f"- date: {run.date}",
        f"- what it measures and how to read it: "
        f"[benchmarks.md](../benchmarks.md#{section_anchor(title)})",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(header) + "\n\n" + body.strip("\n") + "\n", encoding="utf-8")
    return path


@dataclass
class Report:
    """What a benchmark prints as its result; with --docs, also its generated page.

    The page is `docs/benchmarks/<page>.md`; `page` is the script's name unless the script
    publishes more than one run (the dynamics node: a page per rate).
    """

    title: str  # the section of docs/benchmarks.md that explains the run
    run: RunRecord
    page: str
    publish: bool  # --docs
    blocks: list[str] = field(default_factory=list)

    @classmethod
    def start(
        cls,
        script: str,
        title: str,
        args: argparse.Namespace,
        argv: Sequence[str] | None = None,
        *,
        internal: Sequence[str] = (),
        libraries: Sequence[tuple[str, str]] = (),
        page: str = "",
    ) -> Report:
        """The report of a run of `script` (its __file__), its environment printed first.

        Args:
            script: the script's __file__.
            title: the section of docs/benchmarks.md that explains the run.
            args: the parsed options, --docs among them.
            argv: the arguments parsed (default: the command line's).
            internal: options not shown (a child process's flag).
            libraries: (label, distribution) of further libraries whose versions matter.
            page: the page's name, without .md (default: the script's name).
        """
        argv = sys.argv[1:] if argv is None else list(argv)
        run = run_record(script, argv, args, internal, libraries)
        print(run.environment + "\n", flush=True)
        return cls(title, run, page or Path(script).stem, bool(args.docs))

    def print(self, text: str = "") -> None:
        """Print a result (a table, a line) and keep it for the page."""
        print(text, flush=True)
        if text.strip():
            self.blocks.append(text.strip("\n"))

    def finish(self, directory: Path = BENCHMARK_DOCS) -> Path | None:
        """With --docs, write the page into `directory`; the page's path, or None."""
        if not self.publish:
            return None
        path = write_benchmark_doc(
            directory / f"{self.page}.md", self.title, self.run, "\n\n".join(self.blocks)
        )
        print(f"\nwrote {path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path}")
        return path
