"""control.compiled_laws: the compiled control laws give the τ of the controller plugins they
mirror. The preview's rollout kernel runs them; SimulatedRobot stepped by the plugins in
Python (the preview's other path) must give the same efforts and trajectory."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.control import load_controller
from robodyn_ros.control.plugin import ControllerState
from robodyn_ros.resources import bundled_urdf
from robodyn_ros.sim import SimulatedRobot
from robodyn_ros.sim.preview import PreviewSettings, preview
from robodyn_ros.sim.scenarios import scenario_from_mapping

from helpers.preview_scenarios import FRAME, HORIZON, Q0, scenarios


@pytest.fixture(scope="module")
def panda() -> Robot:
    return Robot.from_urdf(bundled_urdf("panda"))


@pytest.mark.parametrize("integrator", ["rk4", "semi_implicit_euler"])
def test_pose_target_preview_is_simulated_robot_under_the_controller(panda, integrator):
    """The kernel's operational-space rollout equals SimulatedRobot stepped by the
    operational-space controller plugin, to rounding (1e-9 rad)."""
    settings = PreviewSettings(horizon=HORIZON, integrator=integrator)
    (result,) = preview(panda, scenarios(panda)[:1], settings, Q0)
    scenario = scenarios(panda)[0]
    controller = load_controller("operational_space")()
    controller.configure(panda, {"frame": FRAME, "kp": 100.0, "kd": 20.0, "rest_posture": Q0})
    controller.set_target(scenario.position, scenario.orientation)
    simulated = SimulatedRobot(panda, integrator, settings.dt, q=Q0)
    for k in range(settings.steps):
        simulated.step(controller.update(ControllerState(k * settings.dt, simulated.q,
                                                         simulated.qd)))
        np.testing.assert_allclose(result.q[k + 1], simulated.q, atol=1e-9)
        np.testing.assert_allclose(result.qd[k + 1], simulated.qd, atol=1e-7)


@pytest.mark.parametrize("control_period", [0.0, 0.01])
def test_compiled_and_stepped_previews_agree(panda, control_period):
    """Every scenario kind, the controller at every step or every 10 ms: the kernel (ABA) and
    SimulatedRobot with the plugins (the "cholesky" forward dynamics takes that path) give
    one trajectory, to 1e-9 rad."""
    settings = PreviewSettings(horizon=HORIZON, control_period=control_period)
    compiled = preview(panda, scenarios(panda), settings, Q0)
    stepped = preview(panda, scenarios(panda), dataclasses.replace(
        settings, forward_dynamics_method="cholesky"), Q0)
    for ours, reference in zip(compiled, stepped, strict=True):
        np.testing.assert_allclose(ours.q, reference.q, atol=1e-9, err_msg=ours.name)
        np.testing.assert_allclose(ours.effort, reference.effort, atol=1e-6, err_msg=ours.name)
        if control_period:  # held between commands
            np.testing.assert_array_equal(ours.effort[1:10], ours.effort[:1].repeat(9, 0))


def test_force_control_in_free_space_is_the_plugins(panda):
    """A pose target with force axes (Khatib's selection, F_d, K_vf) in free space: the rollout
    kernel and SimulatedRobot under the plugin give one trajectory, to 1e-9 rad; the frame
    moves along its force axis, where no pose error pulls it."""
    start = panda.frame_pose(Q0, FRAME)[:3, 3]
    spec = {"name": "push down", "pose_target": {
        "frame": FRAME, "position": start.tolist(), "force_axes": [0, 0, 1, 0, 0, 1],
        "force_target": [0, 0, -5.0, 0, 0, 0.5], "force_damping": [20.0] * 6}}
    scenario = scenario_from_mapping(panda, spec)
    settings = PreviewSettings(horizon=HORIZON)
    (compiled,) = preview(panda, [scenario], settings, Q0)
    (stepped,) = preview(panda, [scenario], dataclasses.replace(
        settings, forward_dynamics_method="cholesky"), Q0)
    np.testing.assert_allclose(compiled.q, stepped.q, atol=1e-9)
    np.testing.assert_allclose(compiled.effort, stepped.effort, atol=1e-6)
    assert compiled.frame_path[-1, 2, 3] < start[2] - 1e-3  # pushed down along z
