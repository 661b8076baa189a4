"""Dynamic identification: the regressor against Pinocchio's, and a 1,000,000-sample bag
identified end to end.

    .venv/bin/python src/robodyn_ros/benchmarks/identification.py [--samples 1000000]
        [--smooth-samples 30000] [--backends serial,threads]
        [--robots panda-bundled,chain16,chain64] [--repeat 9] [--docs]

1. The regressor Y(q, q̇, q̈) of one state per Python call, ours (`inverse_dynamics_regressor`,
   its body columns and the joints' armature and friction columns) against Pinocchio's
   `computeJointTorqueRegressor` (body columns only), their timed loops taking turns; µs and
   the ratio ours/Pinocchio.
2. `robodyn bag identify` on a 7-joint bag of `--samples` joint states at 1 kHz (the bundled
   Panda made a "true" robot by testing.perturbed_robot, efforts with noise σ = 0.1 N·m; the
   bag is written once under build/identification_benchmark/): reading, Savitzky–Golay q̈,
   the chunked normal equations, weighted least squares and the physically consistent fit,
   each timed, in a fresh process per backend whose peak resident memory (ru_maxrss) is
   reported. Targets: the whole under 60 s on 2 cores, under 2 GB.
3. The same steps on a smooth run of `--smooth-samples` joint states over 60 s (serial): the
   bundled Panda made a "true" robot with masses ×0.75–1.3 and centres of mass moved up to
   2 cm but no armature, friction or offsets, small sums of sines about the middle of the
   limits (not an excitation trajectory, so some offsets are not informed), σ = 0.15 N·m;
   with the consistent fit's evaluations and, on a held-out run of the same kind, the
   largest per-joint RMS of the identified URDF read alone (no armature, no offsets) over σ.
   Targets: the whole under 30 s, the URDF alone within 1.2 σ.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from common import (
    BUNDLED_PANDA,
    REPO_ROOT,
    PinocchioRow,
    Report,
    add_docs_option,
    format_us,
    mark,
    markdown_table,
    random_state,
    robot_specs,
    time_against_pinocchio,
)
from robodyn_ros import Robot

BUILD = REPO_ROOT / "build" / "identification_benchmark"
TARGET_SECONDS, TARGET_BYTES = 60.0, 2 * 1024**3
SIGMA = 0.1
RATE = 1000.0
SMOOTH_SECONDS, SMOOTH_SIGMA, SMOOTH_REACH, SMOOTH_DURATION = 30.0, 0.15, 0.0625, 60.0
URDF_ALONE_TARGET = 1.2
ROBOTS = ("panda-bundled", "chain16", "chain64")


def regressor_rows(names: list[str], repeat: int) -> list[list[str]]:
    """Per robot: µs per call of ours and Pinocchio's regressor, and their ratio."""
    import pinocchio as pin

    rows = []
    for name in names:
        spec = robot_specs()[name]
        robot = spec.load()
        oracle = spec.pinocchio_oracle(robot.joint_names)
        s = random_state(robot.nv)
        state = (oracle.model, oracle.data, oracle.q(s.q), oracle.v(s.qd), oracle.v(s.qdd))
        regressor = PinocchioRow(  # ours has the armature and friction columns too
            "inverse_dynamics_regressor", "computeJointTorqueRegressor",
            lambda robot=robot, s=s: robot.inverse_dynamics_regressor(s.q, s.qd, s.qdd),
            lambda state=state: pin.computeJointTorqueRegressor(*state))
        (result,) = time_against_pinocchio([regressor], repeat, 0.02)
        rows.append([name, str(robot.nv), format_us(result.ours_us), format_us(result.pin_us),
                     f"{result.ratio:.2f}"])
    return rows


def benchmark_bag(robot: Robot, samples: int) -> Path:
    """The bag of the true robot's run (written when missing)."""
    from robodyn_ros.bag import JointStateSeries, write_joint_states
    from robodyn_ros.testing.perturbed_robot import perturbed_parameters
    from robodyn_ros.testing.trajectories import sine_trajectory

    path = BUILD / f"panda_{samples}"
    if path.exists():
        return path
    BUILD.mkdir(parents=True, exist_ok=True)
    true = perturbed_parameters(robot, seed=1)
    trajectory = sine_trajectory(robot, samples, RATE, seed=2)
    effort = np.empty_like(trajectory.q)
    for lo in range(0, samples, 4000):
        part = slice(lo, lo + 4000)
        Y = robot.inverse_dynamics_regressor(trajectory.q[part], trajectory.qd[part],
                                             trajectory.qdd[part])
        effort[part] = Y @ true
    effort += np.random.default_rng(3).normal(0.0, SIGMA, effort.shape)
    write_joint_states(path, "mcap", JointStateSeries(robot.joint_names, trajectory.stamps,
                                                        trajectory.q, trajectory.qd, effort))
    return path


def smooth_bags(robot: Robot, samples: int) -> tuple[Path, Path]:
    """The fit and held-out bags of the smooth run (written when missing)."""
    from robodyn_ros.bag import JointStateSeries, write_joint_states
    from robodyn_ros.testing.perturbed_robot import Perturbation, perturbed_parameters
    from robodyn_ros.testing.trajectories import sine_trajectory

    true = perturbed_parameters(robot, seed=2, perturbation=Perturbation(
        mass_scale=(0.75, 1.3), armature=0.0, viscous=0.0, coulomb=0.0, offset=0.0))
    paths = []
    for name, seed in (("fit", 12), ("validation", 1012)):
        path = BUILD / f"panda_smooth_{samples}_{name}"
        paths.append(path)
        if path.exists():
            continue
        BUILD.mkdir(parents=True, exist_ok=True)
        trajectory = sine_trajectory(robot, samples, samples / SMOOTH_DURATION, seed=seed,
                                     reach=SMOOTH_REACH)
        effort = np.concatenate([
            robot.inverse_dynamics_regressor(trajectory.q[lo : lo + 4000],
                                             trajectory.qd[lo : lo + 4000],
                                             trajectory.qdd[lo : lo + 4000]) @ true
            for lo in range(0, samples, 4000)])
        effort += np.random.default_rng(seed).normal(0.0, SMOOTH_SIGMA, effort.shape)
        write_joint_states(path, "mcap", JointStateSeries(robot.joint_names, trajectory.stamps,
                                                            trajectory.q, trajectory.qd, effort))
    return paths[0], paths[1]


def identify_in_this_process(bag: Path, name: str, validation: Path | None = None,
                             sigma: float = SIGMA) -> dict[str, float]:
    """Identify from `bag` on backend `name`, each step timed (s): what the child prints;
    with a `validation` bag also the identified URDF alone's largest RMS on it over
    `sigma`."""
    from robodyn_ros.bag.derivatives import velocities_and_accelerations
    from robodyn_ros.bag.reading import read_joint_states
    from robodyn_ros.identification.accumulation import RunSamples, accumulate
    from robodyn_ros.identification.identify import identify_robot
    from robodyn_ros.parallel import backend

    robot = Robot.from_urdf(BUNDLED_PANDA)
    small = np.zeros((10, robot.nv))
    accumulate(robot, RunSamples(small, small, small, small))  # kernels loaded before timing
    times, started = {}, time.perf_counter()
    run = read_joint_states(bag, "/joint_states", robot.joint_names)
    times["read"] = time.perf_counter() - started
    qd, qdd = velocities_and_accelerations(run, 11)
    times["derivatives"] = time.perf_counter() - started - sum(times.values())
    with backend(name, workers=2) as pool:
        equations = accumulate(robot, RunSamples(run.position, qd, qdd, run.effort), pool=pool)
    times["normal equations"] = time.perf_counter() - started - sum(times.values())
    found = identify_robot(robot, equations)
    times["estimation"] = time.perf_counter() - started - sum(times.values())
    times["total"] = time.perf_counter() - started
    times["rms / noise"] = float(np.max(equations.rms_residual(found.parameters)) / sigma)
    times["evaluations"] = found.consistent.evaluations
    times["converged"] = float(found.consistent.converged)
    if validation is not None:
        held_out = read_joint_states(validation, "/joint_states", robot.joint_names)
        velocity, acceleration = velocities_and_accelerations(held_out, 11)
        checked = accumulate(robot, RunSamples(held_out.position, velocity, acceleration,
                                                   held_out.effort))
        times["URDF alone / noise"] = float(np.max(
            checked.rms_residual(found.urdf_parameters)) / sigma)
    return times


def identify_in_a_child(bag: Path, name: str, validation: Path | None = None,
                        sigma: float = SIGMA) -> tuple[dict[str, float], int]:
    """identify_in_this_process in a fresh interpreter: its times and peak RSS, bytes."""
    held_out = [] if validation is None else ["--child-validation", str(validation)]
    child = subprocess.Popen(
        [sys.executable, __file__, "--child", str(bag), "--backends", name,
         "--child-sigma", str(sigma), *held_out],
        stdout=subprocess.PIPE, cwd=Path(__file__).parent,
    )
    assert child.stdout is not None
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    if status != 0:
        raise RuntimeError(f"the {name} child failed ({status})")
    return json.loads(output.decode().strip().splitlines()[-1]), usage.ru_maxrss * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--smooth-samples", type=int, default=30_000)
    parser.add_argument("--backends", default="serial,threads")
    parser.add_argument("--robots", default=",".join(ROBOTS))
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--child-validation", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--child-sigma", type=float, default=SIGMA, help=argparse.SUPPRESS)
    add_docs_option(parser)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(identify_in_this_process(args.child, args.backends,
                                                  args.child_validation, args.child_sigma)))
        return
    report = Report.start(__file__, "Dynamic identification", args,
                          internal=("child", "child_validation", "child_sigma"),
                          libraries=(("rosbags", "rosbags"), ("SciPy", "scipy")))
    report.print(markdown_table(
        ["robot", "joints", "ours µs", "Pinocchio µs", "ours/pin"],
        regressor_rows(args.robots.split(","), args.repeat)))
    robot = Robot.from_urdf(BUNDLED_PANDA)
    bag = benchmark_bag(robot, args.samples)
    rows = []
    for name in args.backends.split(","):
        times, peak = identify_in_a_child(bag, name)
        rows.append([name, *(f"{times[step]:.1f}" for step in (
            "read", "derivatives", "normal equations", "estimation")),
            f"{times['total']:.1f} {mark(times['total'] <= TARGET_SECONDS)}",
            f"{peak / 1024**2:,.0f} {mark(peak <= TARGET_BYTES)}",
            f"{times['rms / noise']:.3f}"])
    report.print(f"\n`robodyn bag identify` steps, bundled Panda, {args.samples:,} samples "
                 f"(mcap), 2 workers, s:\n")
    report.print(markdown_table(
        ["backend", "read", "q̈", "normal equations", "estimation", "total", "peak MB",
         "RMS / noise"], rows))
    report.print(f"\ntargets: total ≤ {TARGET_SECONDS:.0f} s, peak ≤ "
                 f"{TARGET_BYTES / 1024**2:,.0f} MB (✓/✗); RMS / noise: the fit's largest "
                 "per-joint residual over the noise's standard deviation")
    report.print(smooth_section(robot, args.smooth_samples))
    report.finish()


def smooth_section(robot: Robot, samples: int) -> str:
    """Part 3 of the module docstring: its table and targets, as Markdown."""
    fit, validation = smooth_bags(robot, samples)
    times, peak = identify_in_a_child(fit, "serial", validation, SMOOTH_SIGMA)
    row = [*(f"{times[step]:.1f}" for step in (
        "read", "derivatives", "normal equations", "estimation")),
        f"{times['total']:.1f} {mark(times['total'] <= SMOOTH_SECONDS)}",
        f"{int(times['evaluations'])}{'' if times['converged'] else ' (NOT converged)'}",
        f"{times['rms / noise']:.3f}",
        f"{times['URDF alone / noise']:.3f} "
        f"{mark(times['URDF alone / noise'] <= URDF_ALONE_TARGET)}",
        f"{peak / 1024**2:,.0f}"]
    return "\n".join([
        f"\n`robodyn bag identify` steps on a smooth run, bundled Panda, {samples:,} samples "
        f"over {SMOOTH_DURATION:.0f} s (mcap), serial, s:\n",
        markdown_table(["read", "q̈", "normal equations", "estimation", "total",
                        "consistent fit evaluations", "RMS / noise",
                        "held-out URDF alone / noise", "peak MB"], [row], left=0),
        f"\ntargets: total ≤ {SMOOTH_SECONDS:.0f} s; the identified URDF read alone (no "
        f"armature, no offsets) within {URDF_ALONE_TARGET} sigma RMS on every joint of a "
        "held-out run of the same kind (✓/✗)"])


if __name__ == "__main__":
    main()
