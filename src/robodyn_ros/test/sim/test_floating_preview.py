"""The preview of floating-base robots: free in zero gravity (momentum and energy kept to the
integrator's error; benchmarks/floating_base.py reports 10 s), a humanoid's whole-body pose
on its soles, and start states that are not the robot's refused naming what is wrong."""

from __future__ import annotations

import dataclasses
import threading
import warnings

import numpy as np
import pytest

from robodyn_ros import Robot
from robodyn_ros.errors import NonFiniteResultError
from robodyn_ros.model import URDFWarning
from robodyn_ros.parallel import CancelledError
from robodyn_ros.sim.floating_preview import floating_preview_one
from robodyn_ros.sim.preview import PreviewSettings, preview
from robodyn_ros.sim.scenarios import ScenarioError, scenario_from_mapping
from robodyn_ros.testing import example_robot_urdf
from robodyn_ros.testing.contact_scenes import box_on_ground
from robodyn_ros.testing.tumbling import conservation_drift, float_free, tumbling


def _floating(name: str) -> Robot:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        return Robot.from_urdf(example_robot_urdf(name), floating_base=True)


def test_a_free_robot_keeps_its_momentum_and_energy() -> None:
    """Solo12 in zero gravity, no effort, turning and flailing: over 2 s at 1 ms (RK4) the
    centroidal momentum and the energy drift by the integrator's error only (measured: 7e-14
    of |h| and 8e-14 of the energy)."""
    robot = _floating("solo12").with_gravity((0.0, 0.0, 0.0))
    result = preview(robot, [float_free(robot)], PreviewSettings(horizon=2.0, dt=1e-3),
                     *tumbling(robot))[0]
    momentum_drift, energy_drift = conservation_drift(robot, result)
    assert momentum_drift < 1e-11
    assert energy_drift < 1e-11
    assert result.metrics.energy_start == pytest.approx(result.energy[0])


def test_a_humanoid_moves_its_centre_of_mass_and_hand_on_its_soles() -> None:
    """TALOS, knees and elbows bent (off their limits: the joints stop there), both soles
    held: the CoM 3 cm sideways, the left hand 10 cm forward and 5 cm up, in 1.5 s at 2 ms;
    the soles stay where they were. The controller does not compensate the joints' damping
    and friction, which the URDF's are left out of here."""
    loaded = _floating("talos_reduced")
    zeros = np.zeros(loaded.nv)
    robot = Robot(dataclasses.replace(loaded.model, damping=zeros, friction=zeros))
    q = robot.neutral()
    joints = {joint.name: joint.q.start for joint in robot.configuration_joints}
    for side in ("left", "right"):
        for k, angle in enumerate((0.0, 0.0, -0.4, 0.8, -0.4, 0.0), start=1):
            q[joints[f"leg_{side}_{k}_joint"]] = angle
    for joint, angle in {"arm_left_2_joint": 0.3, "arm_left_4_joint": -0.8,
                         "arm_right_2_joint": -0.3, "arm_right_4_joint": -0.8}.items():
        q[joints[joint]] = angle
    q[2] -= robot.frame_pose(q, "left_sole_link")[2, 3]
    hand = robot.frame_pose(q, "arm_left_7_link")[:3, 3]
    com = robot.centre_of_mass(q) + np.array([0.0, 0.03, 0.0])
    scenario = scenario_from_mapping(robot, {"name": "reach", "whole_body_pose": {
        "frame": "arm_left_7_link", "position": (hand + np.array([0.1, 0.0, 0.05])).tolist(),
        "com": com.tolist(),
        "contacts": [{"frame": "left_sole_link"}, {"frame": "right_sole_link", "kind": "6d"}],
    }})
    result = preview(robot, [scenario], PreviewSettings(horizon=1.5, dt=2e-3), q)[0]
    assert result.metrics.final_position_error < 5e-3
    assert result.metrics.final_orientation_error < 1e-2
    assert np.linalg.norm(robot.centre_of_mass(result.q[-1]) - com) < 3e-3
    for sole in ("left_sole_link", "right_sole_link"):
        drift = robot.frame_pose(result.q, sole) - robot.frame_pose(q, sole)
        assert np.abs(drift).max() < 1e-6
    assert np.all(result.effort[:, :6] == 0.0)


def test_scenarios_are_for_the_robot_they_fit() -> None:
    floating = _floating("solo12")
    with pytest.raises(ScenarioError, match="pose_target is not for a floating-base robot"):
        scenario_from_mapping(floating, {"pose_target": {"position": [0, 0, 0]}})
    with pytest.raises(ScenarioError, match=r"contacts\[0\]"):
        scenario_from_mapping(floating, {"whole_body_pose": {
            "position": [0, 0, 0], "contacts": [{"frame": "nose"}]}})
    fixed = Robot.from_urdf(example_robot_urdf("solo12"))
    with pytest.raises(ScenarioError, match="whole_body_pose is not for a fixed-base robot"):
        scenario_from_mapping(fixed, {"whole_body_pose": {"position": [0, 0, 0]}})
    with pytest.raises(ScenarioError, match="integrates with semi_implicit_euler, rk4"):
        preview(floating, [], PreviewSettings(integrator="rk45"))


def test_a_set_cancel_event_stops_a_floating_preview_as_a_fixed_ones() -> None:
    robot = _floating("solo12")
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(CancelledError, match="cancelled with 0 items done"):
        preview(robot, [float_free(robot)], PreviewSettings(horizon=0.01), cancel=cancel)


def test_a_diverging_run_is_an_error_naming_its_step() -> None:
    """iCub from q = 0, where its neck's massless links line up and M is singular: the run
    diverges at once, and the preview says where instead of answering garbage."""
    robot = _floating("icub").with_gravity((0.0, 0.0, 0.0))
    q, v = robot.neutral(), np.zeros(robot.nv)
    v[6:] = 1.0
    with pytest.raises(NonFiniteResultError,
                       match=r"the state .* at step \d+ of scenario 'float free'"):
        preview(robot, [float_free(robot)], PreviewSettings(horizon=0.05, dt=1e-3), q, v)


@pytest.mark.parametrize(("q", "v", "message"), [
    (None, [np.nan, 0, 0, 0, 0, 0], r"qd has non-finite values .* for free_flyer_x"),
    ([0, 0, 0.05, 0, 0, 0, 2.0], None, r"q: joint 'free_flyer': its quaternion .* has norm 2"),
    ([0, 0, 0.05, 0, 0], None, r"q must have 7 values"),
])
def test_a_start_state_that_is_not_the_robots_is_refused_naming_it(q, v, message) -> None:
    """A scenario in a world runs in the compiled contact rollout, and its start state is
    checked first as SimulatedRobot checks it, naming what is wrong."""
    scene = box_on_ground()
    robot = scene.robot()
    scenario = scenario_from_mapping(robot, {
        "name": "rest", "world": {"planes": [{"normal": [0, 0, 1], "point": [0, 0, 0],
                                              "friction": 0.6}]},
        "torque_profile": {"frame": "box", "times": [0.0], "efforts": [[0.0] * 6]}})
    start_q = scene.q if q is None else np.array(q, dtype=float)
    start_v = np.zeros(6) if v is None else np.array(v, dtype=float)
    with pytest.raises(ValueError, match=message):
        floating_preview_one(robot, PreviewSettings(horizon=0.01, dt=1e-3), start_q, start_v,
                             scenario, collision_shapes=scene.shapes())
