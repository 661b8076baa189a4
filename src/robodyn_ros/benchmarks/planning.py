"""The reach planned by iLQR (the preview's optimal_reach) against the operational-space
controller (pose_target) on the same target, and the planner's wall time.

    .venv/bin/python src/robodyn_ros/benchmarks/planning.py [--repeat 5] [--docs]

The bundled Panda from Franka's ready pose to a pose 0.2 m ahead and 0.14 m down, hand
pointing down, over a 1 s horizon: the plan at 10 ms steps, both scenarios previewed at 10 ms
(semi-implicit Euler, the plan's own model) and at 1 ms (RK4; the plan at 5 ms). Per
scenario: the final position error, the peak torque, the effort ∫|τ|² dt, and the time from
which the hand stays within 1 mm and 1 cm of the target. The planner's wall time is the median
of `--repeat` plans (the warm start included), with its iterations; target (✓/✗): ≤ 1 s at
10 ms. --docs also writes the tables to docs/benchmarks/planning.md.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence

import numpy as np

from common import Report, add_docs_option, format_ms, mark, markdown_table
from robodyn_ros import Robot
from robodyn_ros.resources import bundled_urdf
from robodyn_ros.sim.preview import PreviewResult, PreviewSettings, preview
from robodyn_ros.sim.scenarios import scenario_from_mapping

READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
TARGET = {"frame": "panda_hand_tcp", "position": [0.5, 0.0, 0.35], "orientation": [1, 0, 0, 0]}
# (label, preview settings, the plan's period)
RUNS = (
    ("10 ms, semi-implicit Euler", PreviewSettings(horizon=1.0, dt=0.01,
                                                   integrator="semi_implicit_euler"), 0.01),
    ("1 ms, RK4", PreviewSettings(horizon=1.0, dt=0.001, integrator="rk4"), 0.005),
)
PLAN_TARGET_S = 1.0


def settled_at(result: PreviewResult, radius: float) -> float:
    """The time from which the frame stays within `radius` (m) of the target; NaN if it is
    outside at the end."""
    error = np.linalg.norm(result.frame_path[:, :3, 3] - np.asarray(TARGET["position"]), axis=1)
    outside = np.flatnonzero(error > radius)
    if outside.size == 0:
        return 0.0
    return float("nan") if outside[-1] + 1 >= error.size else float(result.times[outside[-1] + 1])


def time_cell(seconds: float) -> str:
    return "not by the end" if np.isnan(seconds) else f"{seconds:.3f}"


def comparison_table(results: Sequence[PreviewResult], dt: float) -> str:
    header = ["scenario", "final error mm", "peak τ N·m", "∫ τ² dt N²·m²·s",
              "within 1 cm from s", "within 1 mm from s"]
    rows = [[r.name, f"{1e3 * r.metrics.final_position_error:.3f}",
             f"{r.metrics.peak_effort.max():.1f}", f"{np.sum(r.effort**2) * dt:.1f}",
             *(time_cell(settled_at(r, radius)) for radius in (1e-2, 1e-3))] for r in results]
    return markdown_table(header, rows)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="plans timed (default 5)")
    add_docs_option(parser)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    report = Report.start(__file__, "A reach planned by iLQR", args, argv)
    robot = Robot.from_urdf(bundled_urdf("panda"))
    controlled = scenario_from_mapping(robot, {"name": "operational space (pose_target)",
                                               "pose_target": dict(TARGET)})
    for label, settings, period in RUNS:
        planned = scenario_from_mapping(robot, {"name": f"iLQR (optimal_reach, {period * 1e3:g} "
                                                        "ms plan)",
                                                "optimal_reach": {**TARGET,
                                                                  "plan_period": period}})
        results = [preview(robot, [controlled, planned], settings, READY, np.zeros(robot.nv))
                   for _ in range(args.repeat)]
        plans = [run[1].plan for run in results]
        wall = statistics.median(plan.wall_time for plan in plans if plan is not None)
        plan = plans[-1]
        assert plan is not None
        report.print(f"### Previewed at {label}\n")
        report.print(comparison_table(results[-1], settings.dt))
        ok = mark(wall <= PLAN_TARGET_S) if period == 0.01 else ""
        report.print(f"\nThe plan: {plan.iterations} iterations, converged {plan.converged}, "
                     f"median wall time {format_ms(wall * 1e3)} ms of {args.repeat} plans "
                     f"{ok}\n")
    report.finish()


if __name__ == "__main__":
    main()
