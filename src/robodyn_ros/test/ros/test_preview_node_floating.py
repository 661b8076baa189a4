"""preview_node with a floating base over real DDS: a goal starts from the joints' state and
the newest odometry, its whole-body and torque-profile predictions match sim.preview's on the
same start (joints in the trajectory, the base in base_path and base_twist, paths in the world
frame; a push in the goal acts as in the preview), and a goal without an odometry, or with a
scenario a floating base does not take, is aborted with the reason."""

from __future__ import annotations

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Pose
from nav_msgs.msg import Odometry
from rclpy.action import ActionClient
from rclpy.parameter import Parameter
from robodyn_interfaces.action import Preview
from robodyn_interfaces.msg import PreviewPush, PreviewScenario
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robodyn_ros import Robot
from robodyn_ros.ros.odometry import odometry_message
from robodyn_ros.ros.preview_node import PreviewNode
from robodyn_ros.sim.preview import PreviewSettings, preview
from robodyn_ros.sim.scenarios import scenario_from_mapping
from robodyn_ros.testing import example_robot_urdf

from helpers.nodes import Peer, goal_response, wait_for

SOLO = example_robot_urdf("solo12").read_text()
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
STANDING = [0.1, 0.8, -1.6, -0.1, 0.8, -1.6, 0.1, -0.8, 1.6, -0.1, -0.8, 1.6]  # FL FR HL HR
BASE = [0.2, -0.1, 0.3, 0.0, 0.0, np.sin(0.2), np.cos(0.2)]  # a base turned about z
TWIST = [0.05, 0.0, 0.0, 0.0, 0.0, 0.1]  # linear; angular, in the base frame
HORIZON = 0.05


@pytest.fixture(scope="module")
def solo() -> Robot:
    return Robot.from_urdf_string(SOLO, floating_base=True)


@pytest.fixture
def peer(ros):
    """A preview_node on the floating Solo12 and a Peer with an action client."""
    node = PreviewNode(parameter_overrides=[
        Parameter("robot_description", value=SOLO), Parameter("floating_base", value=True)])
    peer = Peer(ros, node)
    peer.client = ActionClient(peer.peer, Preview, "preview")
    assert peer.client.wait_for_server(timeout_sec=60.0)
    yield peer
    peer.close()


def start(solo: Robot) -> JointState:
    return JointState(name=list(solo.joint_names[6:]), position=STANDING,
                      velocity=[0.0] * len(STANDING))


def stand(solo: Robot) -> PreviewScenario:
    """Hold the feet, raise the base by 1 cm."""
    target = Pose()
    target.position.x, target.position.y, target.position.z = BASE[0], BASE[1], BASE[2] + 0.01
    target.orientation.w = 0.0  # four zeros: the orientation it starts with
    return PreviewScenario(name="stand", kind=PreviewScenario.WHOLE_BODY_POSE, frame="base_link",
                           target=target, contacts=[f"{foot}:3d" for foot in FEET])


def kick(solo: Robot) -> PreviewScenario:
    """Efforts on the joints, named in reverse order (the base is not named), and a shove
    of the base."""
    names = list(reversed(solo.joint_names[6:]))
    trajectory = JointTrajectory(joint_names=names, points=[
        JointTrajectoryPoint(effort=[0.1] * 12, time_from_start=Duration(sec=0)),
        JointTrajectoryPoint(effort=[0.3] * 12, time_from_start=Duration(nanosec=50_000_000))])
    shove = PreviewPush(start=0.01, duration=0.02)
    shove.wrench.header.frame_id = "base_link"
    shove.wrench.wrench.force.y, shove.wrench.wrench.torque.z = 5.0, 0.5
    return PreviewScenario(name="kick", kind=PreviewScenario.TORQUE_PROFILE, frame="FL_FOOT",
                           trajectory=trajectory, pushes=[shove])


def send_odometry(peer) -> None:
    message = odometry_message(np.array(BASE), np.array(TWIST), "odom", "base_link")
    peer.publish(Odometry, "odometry", message)
    assert wait_for(lambda: peer.node._odometry.newest is not None)


def test_predictions_match_the_preview_from_the_odometry(peer, solo) -> None:
    send_odometry(peer)
    goal = Preview.Goal(scenarios=[stand(solo), kick(solo)], start=start(solo),
                        horizon=HORIZON, dt=0.001)
    _, response = goal_response(peer.client, goal)
    assert response.status == 4, response.result.message  # SUCCEEDED
    q0, v0 = np.array(BASE + STANDING), np.array(TWIST + [0.0] * 12)
    expected = preview(solo, [
        scenario_from_mapping(solo, {"name": "stand", "whole_body_pose": {
            "frame": "base_link", "position": [BASE[0], BASE[1], BASE[2] + 0.01],
            "contacts": [{"frame": foot, "kind": "3d"} for foot in FEET]}}),
        scenario_from_mapping(solo, {"name": "kick", "torque_profile": {
            "frame": "FL_FOOT", "times": [0.0, 0.05],
            "efforts": [[0.0] * 6 + [0.1] * 12, [0.0] * 6 + [0.3] * 12]},
            "pushes": [{"frame": "base_link", "wrench": [0, 5.0, 0, 0, 0, 0.5], "start": 0.01,
                        "duration": 0.02}]}),
    ], PreviewSettings(horizon=HORIZON), q0, v0)
    for message, result in zip(response.result.predictions, expected, strict=True):
        assert message.name == result.name
        assert list(message.trajectory.joint_names) == list(solo.joint_names[6:])
        points = message.trajectory.points
        np.testing.assert_allclose([p.positions for p in points], result.q[:, 7:], atol=1e-12)
        np.testing.assert_allclose([p.velocities for p in points], result.qd[:, 6:], atol=1e-12)
        np.testing.assert_allclose([p.effort for p in points[:-1]], result.effort[:, 6:],
                                   atol=1e-12)
        base = [[p.position.x, p.position.y, p.position.z, p.orientation.x, p.orientation.y,
                 p.orientation.z, p.orientation.w] for p in message.base_path.poses]
        np.testing.assert_allclose(base, result.q[:, :7], atol=1e-12)
        twist = [[t.linear.x, t.linear.y, t.linear.z, t.angular.x, t.angular.y, t.angular.z]
                 for t in message.base_twist]
        np.testing.assert_allclose(twist, result.qd[:, :6], atol=1e-12)
        assert message.base_path.header.frame_id == "odom"
        assert message.frame_path.header.frame_id == "odom"
        last = message.frame_path.poses[-1].position
        np.testing.assert_allclose([last.x, last.y, last.z], result.frame_path[-1, :3, 3],
                                   atol=1e-12)
        assert len(message.peak_effort) == 12
        np.testing.assert_allclose(message.peak_effort, result.metrics.peak_effort[6:])
    stood = response.result.predictions[0].base_path.poses[-1].position
    assert stood.z > BASE[2]  # the base rose towards its target, the feet held


def test_a_start_without_odometry_is_aborted(peer, solo) -> None:
    _, response = goal_response(peer.client, Preview.Goal(scenarios=[kick(solo)], start=start(solo),
                                       horizon=HORIZON, dt=0.001))
    assert response.status == 6  # ABORTED
    assert "no odometry yet" in response.result.message


def test_a_fixed_base_scenario_is_aborted_naming_it(peer, solo) -> None:
    send_odometry(peer)
    reach = PreviewScenario(name="reach", kind=PreviewScenario.POSE_TARGET, frame="FL_FOOT")
    reach.target.orientation.w = 1.0
    _, response = goal_response(peer.client, Preview.Goal(
        scenarios=[reach], start=start(solo), horizon=HORIZON, dt=0.001))
    assert response.status == 6  # ABORTED
    assert "scenario 'reach': pose_target is not for a floating-base robot" in \
        response.result.message


def test_a_bad_odometry_is_reported_and_the_node_keeps_serving(peer, solo) -> None:
    """An odometry in another frame is refused naming the field (never taken as the base);
    the next good one starts a goal as before."""
    wrong = odometry_message(np.array(BASE), np.array(TWIST), "map", "base_link")
    peer.publish(Odometry, "odometry", wrong)
    assert wait_for(lambda: peer.reported("header.frame_id is 'map'"))
    assert peer.node._odometry.newest is None
    send_odometry(peer)
    _, response = goal_response(peer.client, Preview.Goal(scenarios=[kick(solo)], start=start(solo),
                                       horizon=HORIZON, dt=0.001))
    assert response.status == 4, response.result.message  # SUCCEEDED
