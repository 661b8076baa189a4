"""Real-time factors of the preview, against MuJoCo stepping the same URDF, in one process.

    .venv/bin/python src/robodyn_ros/benchmarks/preview.py [--horizon 10] [--scenarios 64]
        [--repeat 5] [--docs]

The bundled Panda, dt = 1 ms, RK4, from Franka's ready posture:

- one scenario: a pose target under the operational-space controller at every step, the
  whole preview (rollout kernel and metrics) and the rollout alone, and with the controller
  at 100 Hz (control_period 10 ms, as `robodyn sim` runs it); a torque profile;
- `--scenarios` pose targets fanned out over the threads backend (2 workers): their aggregate
  rate (simulated seconds per wall second) against one scenario's;
- MuJoCo (`mujoco`, benchmark-only) loading the same URDF (its damping, friction loss and
  limits; no actuators, so no controller), RK4 at the same dt, by `mujoco.rollout` (no
  Python per step), with its contacts as loaded and with contacts disabled.

RTF = simulated time / wall time, best of `--repeat`. --docs also writes the table to
docs/benchmarks/preview.md.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import replace

import mujoco
import numpy as np
from mujoco import rollout as mujoco_rollout

from common import BUNDLED_PANDA, Report, add_docs_option, mark, markdown_table
from robodyn_ros import Robot
from robodyn_ros.parallel import backend
from robodyn_ros.sim.preview import PreviewSettings, preview, warm_up
from robodyn_ros.sim.scenario_rollout import compiled_rollout
from robodyn_ros.sim.scenarios import scenario_from_mapping

FRAME = "panda_hand_tcp"
READY = np.array([0.0, -0.785398, 0.0, -2.356194, 0.0, 1.570796, 0.785398])
TARGET_RTF = 250.0  # one scenario, OSC in the loop
TARGET_VS_MUJOCO = 2.0  # our per-thread RTF over MuJoCo's
TARGET_THREADS = 1.8  # aggregate rate on 2 threads over one scenario's


def best_seconds(call: Callable[[], object], repeat: int) -> float:
    call()  # warm up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def pose_targets(robot: Robot, count: int) -> list:
    """`count` pose targets within 15 cm of the tcp's ready pose, seeded."""
    start = robot.frame_pose(READY, FRAME)[:3, 3]
    offsets = np.random.default_rng(0).uniform(-0.15, 0.15, (count, 3))
    return [
        scenario_from_mapping(robot, {"name": f"reach{k}", "pose_target": {
            "frame": FRAME, "position": (start + offset).tolist(),
            "kp": [100, 100, 100, 200, 200, 200], "kd": [20, 20, 20, 28, 28, 28]}})
        for k, offset in enumerate(offsets)
    ]


def torque_profile(robot: Robot):
    return scenario_from_mapping(robot, {"name": "hold", "torque_profile": {
        "frame": FRAME, "times": [0.0], "efforts": [robot.gravity_torques(READY).tolist()]}})


def mujoco_rtf(horizon: float, dt: float, repeat: int, contacts: bool) -> float:
    """MuJoCo's RTF on the bundled URDF, RK4 at dt, one thread, by mujoco.rollout."""
    model = mujoco.MjModel.from_xml_path(str(BUNDLED_PANDA))
    model.opt.timestep, model.opt.integrator = dt, mujoco.mjtIntegrator.mjINT_RK4
    if not contacts:
        model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    data = mujoco.MjData(model)
    data.qpos[:] = READY
    kind = mujoco.mjtState.mjSTATE_FULLPHYSICS
    state = np.empty(mujoco.mj_stateSize(model, kind))
    mujoco.mj_getState(model, data, state, kind)
    steps = round(horizon / dt)
    return horizon / best_seconds(
        lambda: mujoco_rollout.rollout(model, data, state, nstep=steps), repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--horizon", type=float, default=10.0, help="s")
    parser.add_argument("--scenarios", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=5)
    add_docs_option(parser)
    args = parser.parse_args()
    report = Report.start(__file__, "The preview, against MuJoCo", args)
    robot = Robot.from_urdf(BUNDLED_PANDA)
    settings = PreviewSettings(horizon=args.horizon, dt=1e-3, integrator="rk4")
    warm_up(robot, settings)
    reach, hold = pose_targets(robot, 1)[0], torque_profile(robot)
    zero, times = np.zeros(robot.nv), settings.dt * np.arange(settings.steps + 1)

    def rtf(call: Callable[[], object]) -> float:
        return args.horizon / best_seconds(call, args.repeat)

    single = rtf(lambda: preview(robot, [reach], settings, READY))
    kernel = rtf(lambda: compiled_rollout(robot, settings, READY, zero, reach, times))
    open_loop = rtf(lambda: preview(robot, [hold], settings, READY))
    at_100_hz = rtf(lambda: preview(robot, [reach], replace(settings, control_period=0.01), READY))
    many = pose_targets(robot, args.scenarios)
    with backend("threads", workers=2) as pool:
        threaded = args.scenarios * rtf(lambda: preview(robot, many, settings, READY, pool=pool))
    serial = args.scenarios * rtf(lambda: preview(robot, many, settings, READY))
    contacts = mujoco_rtf(args.horizon, settings.dt, args.repeat, contacts=True)
    no_contacts = mujoco_rtf(args.horizon, settings.dt, args.repeat, contacts=False)
    rows = [
        ["preview, 1 pose target (OSC), with metrics", f"{single:.0f}",
         f"{single / TARGET_RTF:.2f} of {TARGET_RTF:.0f} {mark(single >= TARGET_RTF)}"],
        ["rollout kernel alone, 1 pose target (OSC)", f"{kernel:.0f}", ""],
        ["preview, 1 pose target, OSC at 100 Hz", f"{at_100_hz:.0f}",
         f"{at_100_hz / TARGET_RTF:.2f} of {TARGET_RTF:.0f} {mark(at_100_hz >= TARGET_RTF)}"],
        ["preview, 1 torque profile (no controller)", f"{open_loop:.0f}", ""],
        [f"preview, {args.scenarios} pose targets, serial (aggregate)", f"{serial:.0f}",
         f"{serial / single:.2f} x one"],
        [f"preview, {args.scenarios} pose targets, 2 threads (aggregate)", f"{threaded:.0f}",
         f"{threaded / single:.2f} x one, target {TARGET_THREADS} "
         f"{mark(threaded / single >= TARGET_THREADS)}"],
        ["MuJoCo, URDF as loaded (contacts), rollout", f"{contacts:.0f}",
         f"ours (OSC) / MuJoCo {single / contacts:.2f}, target {TARGET_VS_MUJOCO} "
         f"{mark(single / contacts >= TARGET_VS_MUJOCO)}"],
        ["MuJoCo, contacts disabled, rollout", f"{no_contacts:.0f}",
         f"ours (OSC) / MuJoCo {single / no_contacts:.2f}"],
    ]
    report.print(f"Bundled Panda, dt {settings.dt * 1e3:g} ms, RK4, horizon {args.horizon:g} s, "
                 f"best of {args.repeat}\n")
    report.print(markdown_table(["run", "real-time factor", "against"], rows))
    report.finish()


if __name__ == "__main__":
    main()
