"""The optimal_reach scenario (sim.ilqr): efforts planned by iLQR over the horizon bring a frame
to a pose at rest, followed with the plan's feedback gains, against the operational-space
scenario on the same target; on the bundled Panda and the UR5 (which the issue does not
name), under the preview's semi-implicit Euler at the plan's period and its RK4 at 1 ms.

References: the target itself (the plan must end within 1 mm of it, at rest), the
operational-space scenario's peak torque and effort (the plan must use less), the plan's own
rollout (its efforts at its knots are its nominal ones), and an open-loop replay from a
disturbed start (the feedback must do better).
"""

from __future__ import annotations

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.model.generate import with_root_joint
from robodyn_ros.sim.preview import PreviewSettings, preview
from robodyn_ros.sim.scenarios import ScenarioError, TorqueProfile, scenario_from_mapping
from robodyn_ros.testing.example_robots import example_robot_urdf

from helpers.robots import PANDA, TIP

READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
TARGET = {"frame": TIP, "position": [0.5, 0.0, 0.35], "orientation": [1, 0, 0, 0]}
SETTINGS = {"euler_at_the_plans_period": PreviewSettings(horizon=1.0, dt=0.01,
                                                         integrator="semi_implicit_euler"),
            "rk4_at_1ms": PreviewSettings(horizon=1.0, dt=0.001, integrator="rk4")}
# the plan's period: its model is exact at it; a 1 ms RK4 preview follows a 10 ms plan to about
# 1 mm (the smoothed friction is stiff at 10 ms), a 5 ms one to a few hundredths of it
PLAN_PERIOD = {"euler_at_the_plans_period": 0.01, "rk4_at_1ms": 0.005}


@pytest.fixture(scope="module")
def panda() -> Robot:
    return Robot.from_urdf_string(PANDA)


@pytest.mark.parametrize("settings", list(SETTINGS))
def test_the_plan_arrives_at_rest_with_less_torque_than_operational_space(
        panda: Robot, settings: str) -> None:
    osc = scenario_from_mapping(panda, {"name": "osc", "pose_target": dict(TARGET)})
    reach = scenario_from_mapping(panda, {"name": "reach", "optimal_reach": {
        **TARGET, "plan_period": PLAN_PERIOD[settings]}})
    controlled, planned = preview(panda, [osc, reach], SETTINGS[settings], READY, np.zeros(7))
    assert planned.plan is not None and planned.plan.converged
    assert planned.metrics.final_position_error < 1e-3  # m
    assert planned.metrics.final_orientation_error < 1e-2  # rad
    assert np.abs(planned.qd[-1]).max() < 0.02  # rad/s: at rest
    assert planned.metrics.peak_effort.max() < controlled.metrics.peak_effort.max()
    assert np.sum(planned.effort**2) < np.sum(controlled.effort**2)
    assert not planned.metrics.limit_violations.any()


def test_the_plan_is_its_own_rollout_and_its_gains_hold_a_disturbed_start(panda: Robot
                                                                          ) -> None:
    """At its knots the plan commands its nominal efforts; from a start 0.05 rad off, its
    feedback ends nearer the target than its efforts replayed open loop."""
    settings = SETTINGS["euler_at_the_plans_period"]
    reach = scenario_from_mapping(panda, {"name": "reach", "optimal_reach": dict(TARGET)})
    (result,) = preview(panda, [reach], settings, READY, np.zeros(7))
    plan = result.plan
    assert plan is not None
    for k in (0, 37, 99):
        np.testing.assert_allclose(plan.command(panda, plan.times[k], plan.q[k], plan.v[k]),
                                   plan.u[k], rtol=0, atol=1e-9)
    np.testing.assert_allclose(result.q, plan.q, rtol=0, atol=1e-9)  # the same model
    disturbed = READY + 0.05
    replay = TorqueProfile("replay", TIP, plan.times[:-1], plan.u)
    followed, replayed = preview(panda, [reach, replay], settings, disturbed, np.zeros(7))
    target = np.array(TARGET["position"])
    followed_error = np.linalg.norm(followed.frame_path[-1, :3, 3] - target)
    replayed_error = np.linalg.norm(replayed.frame_path[-1, :3, 3] - target)
    assert followed_error < 0.25 * replayed_error


def test_another_arm_reaches_a_pose_it_can_take() -> None:
    """The UR5, its target the pose of its end effector at another posture 0.2 rad away on
    every joint; against the operational-space scenario to the same pose."""
    robot = Robot.from_urdf(example_robot_urdf("ur5"))
    start, goal = np.full(6, -0.1), np.full(6, 0.1)
    pose = robot.frame_pose(goal, "ee_link")
    target = {"frame": "ee_link", "position": pose[:3, 3].tolist(),
              "orientation": pose[:3, :3].tolist()}
    osc = scenario_from_mapping(robot, {"name": "osc", "pose_target": target})
    reach = scenario_from_mapping(robot, {"name": "reach", "optimal_reach": target})
    controlled, planned = preview(robot, [osc, reach], PreviewSettings(horizon=1.0, dt=0.002),
                                  start, np.zeros(6))
    assert planned.metrics.final_position_error < 1e-3
    assert planned.metrics.final_orientation_error < 1e-2
    assert planned.metrics.peak_effort.max() < controlled.metrics.peak_effort.max()


@pytest.mark.parametrize("fields, named", [
    ({"plan_period": 0.0035}, "plan_period"),
    ({"plan_period": -0.01}, "plan_period"),
    ({"effort_weight": -1.0}, "effort_weight"),
    ({"iterations": 0}, "iterations"),
    ({"tolerance": 0.0}, "tolerance"),
    ({"position": [0.5, float("nan"), 0.3]}, "position"),
])
def test_bad_fields_are_refused_naming_them(panda: Robot, fields: dict, named: str) -> None:
    with pytest.raises(ScenarioError, match=f"optimal_reach.{named}"):
        reach = scenario_from_mapping(panda, {"name": "bad",
                                              "optimal_reach": {**TARGET, **fields}})
        preview(panda, [reach], PreviewSettings(horizon=0.1, dt=0.001), READY, np.zeros(7))


def test_a_floating_base_is_refused() -> None:
    solo = Robot.from_urdf_string(with_root_joint(example_robot_urdf("solo12").read_text(),
                                                  "floating"))
    with pytest.raises(ScenarioError, match="optimal_reach is not for a floating-base robot"):
        scenario_from_mapping(solo, {"name": "reach", "optimal_reach": {
            "frame": "FL_FOOT", "position": [0.2, 0.1, 0.0]}})
