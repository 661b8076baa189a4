"""Shared by the benchmark scripts: the robots, random states, timing and Markdown tables.

Only the standard library is imported at module level (numpy and robodyn_ros inside the
functions that need them), so that ``startup.py`` can import this module in a fresh process and
still time ``import robodyn_ros`` with everything it pulls in.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from robodyn_ros import Robot

BUNDLED_PANDA = Path(__file__).resolve().parent.parent / "urdf" / "panda.urdf"
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


def robot_specs() -> dict[str, RobotSpec]:
    """Every benchmark robot by name, smallest first."""
    fingers = ("panda_finger_joint1", "panda_finger_joint2")  # robodyn_ros.testing.PANDA_FINGERS
    specs = [
        RobotSpec("panda", "panda_hand", example="panda", locked_joints=fingers),
        RobotSpec("panda-bundled", "panda_hand_tcp", path=BUNDLED_PANDA),
        RobotSpec("talos", "arm_left_7_link", example="talos"),
    ]
    specs += [RobotSpec(f"chain{n}", f"link_{n - 1}", chain=n) for n in CHAIN_SIZES]
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


# -- formatting -------------------------------------------------------------------------------


def format_us(us: float) -> str:
    return f"{us:.2f}" if us < 10 else f"{us:.1f}" if us < 1000 else f"{us:.0f}"


def format_ms(ms: float) -> str:
    return f"{ms:.1f}" if ms < 1000 else f"{ms:.0f}"


def mark(ok: bool) -> str:
    return "✓" if ok else "✗"


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
    """--sizes (comma-separated chain joint counts), --repeat and --plot of a size study."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--sizes",
        type=lambda text: [int(n) for n in text.split(",")],
        default=list(sizes),
        help=f"comma-separated joint counts (default: {sizes[0]} … {sizes[-1]})",
    )
    parser.add_argument("--repeat", type=int, default=5, help="timed loops per call (default 5)")
    parser.add_argument("--plot", type=Path, default=plot, help="PNG to write")
    return parser.parse_args(argv)


def loglog_plot(series: Mapping[str, Sequence[tuple[int, float]]], title: str, path: Path) -> str:
    """Write a log-log plot of µs per Python call against N, a line per series of (N, µs);
    what was done, for the output."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "no plot: matplotlib is not installed (pip install -e 'src/robodyn_ros[bench]')"
    figure, axes = plt.subplots(figsize=(7, 5))
    for name, points in series.items():
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
