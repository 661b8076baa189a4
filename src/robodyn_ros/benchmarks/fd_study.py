"""Forward dynamics from the papers: iterations and time of every
Robot.forward_dynamics method, against Sharf & D'Eleuterio's Table 2 and Fig. 2 and pin.aba.

    .venv/bin/python src/robodyn_ros/benchmarks/fd_study.py [--sizes 5,16,64] [--plot out.png]
        [--methods aba,schur] [--docs]

--methods times only the named methods (and pin.aba) against N and on the tree, parts 3 and 4
without the plot, the J-CG exponent and the targets. --docs also writes the tables to
docs/benchmarks/fd_study.md.

1. Table 2: a 5-DOF anthropomorphic arm (shoulder yaw and pitch, elbow, wrist pitch and roll),
   a planar maneuver (the three pitch joints move) and a 3-D one (all five), PD-tracked for
   T = MANEUVER_S by RK4; each iterative method at ε = 1e-7 (TOL = 1e-6) through
   WarmStartedForwardDynamics: cold (q̈ = 0 / λ = 0), warm-started from the previous step's q̈
   and from the cubic extrapolation of the last four (§5), each RK4 stage from its own history:
   mean iterations per call, and the largest |q − q_aba| at the end.
2. Fig. 2b: mean iterations against N on random chains (random_chain_urdf(N, seed=0)) over a
   short maneuver of the same kind, cold and cubic-warm, capped at CAP iterations ("cap" when a
   call hit it; "diverged" when the capped answers, extrapolated, drove the state to one with
   no finite answer and the maneuver stopped there).
3. Fig. 2a: µs per call against N for every method (iterative: ε = 1e-7, warm start from the
   exact q̈ of a nearby state, as in a simulation) and pin.aba; the fitted growth exponent of
   J-CG; the targets (a Schur / constraint-force method within 2x our ABA at N = 256, our ABA
   ≤ 1.0x pin.aba at every N). Writes a log-log plot (default build/fd_study.png).
4. µs per call of every method that runs on trees (all but schur_bcr) on Talos, a real tree.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin

from common import (
    REPO_ROOT,
    Report,
    RobotSpec,
    add_docs_option,
    format_us,
    interleaved_us_by_name,
    mark,
    markdown_table,
    random_state,
    robot_specs,
)
from robodyn_ros import Robot
from robodyn_ros.errors import NO_ANSWER_ERRORS
from robodyn_ros.robot.iteration import IterationInfo
from robodyn_ros.sim import WarmStartedForwardDynamics

SIZES = (5, 8, 16, 32, 64, 128, 256)
ITERATIVE = ("cg", "pcg", "jacobi", "gauss_seidel", "sor", "jacobi_si", "jacobi_cg")
DIRECT = ("aba", "cholesky", "schur", "schur_bcr")
CONSTRAINT_DIRECT = ("schur", "schur_bcr")
CHAIN_ONLY = ("schur_bcr",)
TREE = "talos"
TOL, EPSILON = 1e-6, 1e-7
CAP = 5000
DT = 5e-3
MANEUVER_S = 2.0
SWEEP_STEPS = 10  # RK4 steps of the maneuver per N in part 2
STARTS = {"cold": 0, "previous step": 1, "cubic": 4}  # past steps the warm start extrapolates
PIN = "pin.aba"
DEFAULT_PLOT = REPO_ROOT / "build" / "fd_study.png"

# The arm: (joint axis, link length along x, link mass); shoulder and wrist bodies are short.
ARM = (
    ("0 0 1", 0.05, 2.0),  # shoulder yaw
    ("0 1 0", 0.45, 6.0),  # shoulder pitch: upper arm
    ("0 1 0", 0.40, 4.0),  # elbow: forearm
    ("0 1 0", 0.05, 1.0),  # wrist pitch
    ("1 0 0", 0.10, 0.8),  # wrist roll: hand
)
PLANAR = np.array([0.0, 1.0, 1.0, 1.0, 0.0])  # which joints the planar maneuver moves


def arm_urdf() -> str:
    """The 5-DOF anthropomorphic arm: slender links, inertia of a rod of the link's length."""
    links = ['<link name="base"/>']
    joints = []
    parent, offset = "base", 0.1
    for i, (axis, length, mass) in enumerate(ARM):
        rod = mass * length**2 / 12.0
        small = 1e-2 * mass
        links.append(
            f'<link name="link_{i}"><inertial><origin xyz="{length / 2} 0 0"/>'
            f'<mass value="{mass}"/><inertia ixx="{small}" ixy="0" ixz="0" iyy="{rod + small}"'
            f' iyz="0" izz="{rod + small}"/></inertial></link>'
        )
        joints.append(
            f'<joint name="joint_{i}" type="revolute"><parent link="{parent}"/>'
            f'<child link="link_{i}"/><origin xyz="{offset} 0 0"/><axis xyz="{axis}"/>'
            '<limit lower="-3.14" upper="3.14" effort="100" velocity="10"/></joint>'
        )
        parent, offset = f"link_{i}", length
    return f'<robot name="arm5">{"".join(links + joints)}</robot>'


@dataclass(frozen=True)
class ManeuverRun:
    """The end of a maneuver and the IterationInfo of every call (none for a direct method)."""

    q: np.ndarray
    infos: list[IterationInfo]
    diverged: bool = False  # the state ran off to one with no finite answer; the run stopped


def maneuver(robot: Robot, moving: np.ndarray, steps: int, method: str = "aba",
             history: int = 0) -> ManeuverRun:
    """RK4 of a PD-tracked maneuver q_ref(t) = 0.8 sin(t) on the moving joints. An iterative
    method runs at ε = EPSILON, warm-started from the extrapolation of `history` past steps;
    answers capped at CAP iterations are kept, so a method that does not converge can drive
    the state off (a diverged run)."""
    q, qd = np.zeros(robot.nv), np.zeros(robot.nv)
    infos: list[IterationInfo] = []
    solver = None
    if method in robot.ITERATIVE_FORWARD_DYNAMICS_METHODS:
        solver = WarmStartedForwardDynamics(robot, method, history=history, tol=EPSILON,
                                            max_iterations=CAP, require_convergence=False)

    def acceleration(t: float, q: np.ndarray, qd: np.ndarray, stage: int) -> np.ndarray:
        tau = 20.0 * (0.8 * np.sin(t) * moving - q) - 4.0 * qd + robot.gravity_torques(q)
        if solver is None:
            return robot.forward_dynamics(q, qd, tau)
        qdd = solver(q, qd, tau, stage)
        infos.append(solver.last)
        return qdd

    for k in range(steps):
        t = k * DT
        try:
            k1 = (qd, acceleration(t, q, qd, 0))
            k2 = (qd + 0.5 * DT * k1[1],
                  acceleration(t + 0.5 * DT, q + 0.5 * DT * k1[0], qd + 0.5 * DT * k1[1], 1))
            k3 = (qd + 0.5 * DT * k2[1],
                  acceleration(t + 0.5 * DT, q + 0.5 * DT * k2[0], qd + 0.5 * DT * k2[1], 2))
            k4 = (qd + DT * k3[1], acceleration(t + DT, q + DT * k3[0], qd + DT * k3[1], 3))
        except NO_ANSWER_ERRORS:
            return ManeuverRun(q, infos, diverged=True)
        q = q + DT / 6.0 * (k1[0] + 2.0 * k2[0] + 2.0 * k3[0] + k4[0])
        qd = qd + DT / 6.0 * (k1[1] + 2.0 * k2[1] + 2.0 * k3[1] + k4[1])
    return ManeuverRun(q, infos)


def mean_iterations(run: ManeuverRun) -> str:
    if run.diverged:
        return "diverged"
    iterations = [info.iterations for info in run.infos]
    capped = not all(info.converged for info in run.infos)
    return f"{np.mean(iterations):.1f}" + (" cap" if capped else "")


def table2() -> str:
    robot = Robot.from_urdf_string(arm_urdf())
    steps = round(MANEUVER_S / DT)
    rows = []
    for name, moving in (("I (planar)", PLANAR), ("II (3-D)", np.ones(robot.nv))):
        reference = maneuver(robot, moving, steps).q
        for method in ITERATIVE:
            cells = [name, method]
            for history in STARTS.values():
                run = maneuver(robot, moving, steps, method, history)
                drift = "—" if run.diverged else f"{np.max(np.abs(run.q - reference)):.1e}"
                cells += [mean_iterations(run), drift]
            rows.append(cells)
    header = ["maneuver", "method"]
    for start in STARTS:
        header += [f"iterations {start}", f"‖q - q_aba‖∞ {start}"]  # no | in a Markdown cell
    return markdown_table(header, rows, left=2)


def iterations_against_n(sizes: tuple[int, ...]) -> tuple[str, dict[str, list[float]]]:
    rows, warm_means = [], {method: [] for method in ITERATIVE}
    for n in sizes:
        robot = RobotSpec.random_chain(n).load()
        moving = np.ones(n)
        cells = [str(n)]
        for method in ITERATIVE:
            for history in (STARTS["cold"], STARTS["cubic"]):
                run = maneuver(robot, moving, SWEEP_STEPS, method, history)
                cells.append(mean_iterations(run))
                if history:  # a diverged run is a gap in the plot
                    mean = np.nan if run.diverged else np.mean([i.iterations for i in run.infos])
                    warm_means[method].append(float(mean))
        rows.append(cells)
        print(f"  iterations, N = {n} done", flush=True)
    header = ["N", *(f"{m} {w}" for m in ITERATIVE for w in ("cold", "cubic"))]
    return markdown_table(header, rows), warm_means


def timed_calls(
    spec: RobotSpec, skip: tuple[str, ...] = (), methods: tuple[str, ...] = (*DIRECT, *ITERATIVE)
) -> dict[str, Callable[[], object]]:
    """One call of each of `methods` but those in `skip`, and of pin.aba, on a random state of
    the robot."""
    robot = spec.load()
    s = random_state(robot.nv)
    warm = robot.forward_dynamics(s.q + 1e-3, s.qd, s.tau)  # a nearby state's q̈
    calls: dict[str, Callable[[], object]] = {
        method: (lambda method=method: robot.forward_dynamics(s.q, s.qd, s.tau, method))
        for method in DIRECT
        if method in methods and method not in skip
    }
    for method in (m for m in ITERATIVE if m in methods):
        calls[method] = lambda method=method: robot.forward_dynamics(
            s.q, s.qd, s.tau, method, tol=EPSILON, max_iterations=CAP, initial_guess=warm,
            info=True,
        )
    oracle = spec.pinocchio_oracle(robot.joint_names)
    q_pin, v_pin, t_pin = oracle.q(s.q), oracle.v(s.qd), oracle.v(s.tau)
    calls[PIN] = lambda: pin.aba(oracle.model, oracle.data, q_pin, v_pin, t_pin)
    return calls


def time_against_n(sizes: tuple[int, ...], repeat: int, budget_s: float,
                   methods: tuple[str, ...] = (*DIRECT, *ITERATIVE)):
    times: dict[int, dict[str, float]] = {}
    for n in sizes:
        calls = timed_calls(RobotSpec.random_chain(n), methods=methods)
        times[n] = interleaved_us_by_name(calls, repeat, budget_s)
        print(f"  time, N = {n} done", flush=True)
    return times


def time_on_a_tree(repeat: int, budget_s: float,
                   methods: tuple[str, ...] = (*DIRECT, *ITERATIVE)) -> str:
    """The table of µs per call on TREE of each of `methods` that runs on trees, and pin.aba."""
    spec = robot_specs()[TREE]
    times = interleaved_us_by_name(timed_calls(spec, skip=CHAIN_ONLY, methods=methods), repeat,
                                   budget_s)
    n = spec.load().nv
    return markdown_table([f"{TREE} (n = {n})", *times],
                          [["µs", *(format_us(t) for t in times.values())]], left=1)


def growth_exponent(sizes: tuple[int, ...], us: list[float]) -> float:
    """The slope of log t against log N over N ≥ 16 (all sizes if fewer than two)."""
    keep = [i for i, n in enumerate(sizes) if n >= 16] or list(range(len(sizes)))
    return float(np.polyfit(np.log([sizes[i] for i in keep]), np.log([us[i] for i in keep]), 1)[0])


def plot(sizes, times, iterations, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
    for method in (*DIRECT, *ITERATIVE, PIN):
        left.loglog(sizes, [times[n][method] for n in sizes], marker="o", label=method)
    left.set(xlabel="N (joints)", ylabel="µs per call", title="forward dynamics, time")
    for method, means in iterations.items():
        right.loglog(sizes, means, marker="o", label=method)
    right.set(xlabel="N (joints)", ylabel="mean iterations per call (cubic warm start)",
              title=f"iterations at ε = {EPSILON:g}, cap {CAP}")
    for axes in (left, right):
        axes.grid(True, which="both", alpha=0.3)
        axes.legend(fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")


def time_only(report: Report, sizes: tuple[int, ...], methods: tuple[str, ...], repeat: int,
              budget_s: float) -> None:
    """Parts 3 and 4 for `methods` alone: µs per call against N, each method's ratio to our
    ABA when "aba" is among them, and on the tree."""
    times = time_against_n(sizes, repeat, budget_s, methods)
    named = [m for m in (*DIRECT, *ITERATIVE) if m in methods]
    ratios = [m for m in named if m != "aba"] if "aba" in named else []
    rows = [[str(n), *(format_us(times[n][m]) for m in (*named, PIN)),
             *(f"{times[n][m] / times[n]['aba']:.2f}" for m in ratios)] for n in sizes]
    report.print("## µs per call against N\n")
    report.print(markdown_table(["N", *named, PIN, *(f"{m}/aba" for m in ratios)], rows) + "\n")
    report.print(f"## µs per call on a tree ({TREE})\n")
    report.print(time_on_a_tree(repeat, budget_s, methods))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--budget", type=float, default=0.02, help="s per timed loop")
    parser.add_argument("--plot", type=Path, default=DEFAULT_PLOT)
    parser.add_argument("--methods", help="comma-separated methods to time (parts 3 and 4 only)")
    add_docs_option(parser)
    args = parser.parse_args()
    report = Report.start(__file__, "Forward dynamics from the papers", args)
    sizes = tuple(int(n) for n in args.sizes.split(","))
    if args.methods:
        time_only(report, sizes, tuple(args.methods.split(",")), args.repeat, args.budget)
        report.finish()
        return

    report.print("## Table 2: the 5-DOF arm, TOL = 1e-6, ε = 1e-7\n")
    report.print(table2() + "\n")
    report.print("## Iterations against N (random chains, mean per call)\n")
    table, warm_means = iterations_against_n(sizes)
    report.print(table + "\n")
    times = time_against_n(sizes, args.repeat, args.budget)
    methods = (*DIRECT, *ITERATIVE)
    rows = [[str(n), *(format_us(times[n][m]) for m in (*methods, PIN)),
             f"{times[n]['aba'] / times[n][PIN]:.2f}"] for n in sizes]
    report.print("## µs per call against N\n")
    report.print(markdown_table(["N", *methods, PIN, "aba/pin"], rows) + "\n")
    exponent = growth_exponent(sizes, [times[n]["jacobi_cg"] for n in sizes])
    report.print(f"J-CG time grows as N^{exponent:.2f} (Sharf & D'Eleuterio: N^1.12)")
    largest = sizes[-1]
    constraint = (*CONSTRAINT_DIRECT, "jacobi", "gauss_seidel", "sor", "jacobi_si", "jacobi_cg")
    best = min(constraint, key=lambda m: times[largest][m])
    ratio = times[largest][best] / times[largest]["aba"]
    report.print(f"{mark(ratio <= 2.0)} N = {largest}: fastest Schur/constraint-force method "
                 f"{best} at {ratio:.2f}x our ABA (target ≤ 2x)")
    worst = max(times[n]["aba"] / times[n][PIN] for n in sizes)
    report.print(f"{mark(worst <= 1.0)} our ABA ≤ 1.0x pin.aba at every N: worst {worst:.2f}x")
    plot(sizes, times, warm_means, args.plot)
    print(f"plot: {args.plot}\n")
    report.print(f"## µs per call on a tree ({TREE})\n")
    report.print(time_on_a_tree(args.repeat, args.budget))
    report.finish()


if __name__ == "__main__":
    main()
