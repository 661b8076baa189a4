"""preview_node over real DDS: a goal's predictions match sim.preview's, feedback counts the
scenarios, the path markers arrive, a cancel stops the scenarios not yet started, and bad goals
are aborted with the reason."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Pose
from rclpy.action import ActionClient
from rclpy.executors import MultiThreadedExecutor
from rclpy.parameter import Parameter
from robodyn_interfaces.action import Preview
from robodyn_interfaces.msg import PreviewScenario
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from visualization_msgs.msg import MarkerArray

from robodyn_ros import Robot
from robodyn_ros.resources import bundled_urdf
from robodyn_ros.ros.preview_node import PreviewNode
from robodyn_ros.sim.preview import PreviewSettings, preview
from robodyn_ros.sim.scenarios import scenario_from_mapping

from helpers.nodes import goal_response

Q0 = [0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8]
FRAME = "panda_hand_tcp"
PATIENCE = 60.0  # s: DDS delivery here has stalled for seconds


def wait_for(done, timeout: float = PATIENCE) -> bool:
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        time.sleep(0.01)
    return done()


@pytest.fixture(scope="module")
def harness(ros):
    peer = ros.create_node("preview_node_test")
    markers: list[MarkerArray] = []
    peer.create_subscription(MarkerArray, "preview/markers", markers.append, 10)
    client = ActionClient(peer, Preview, "preview")
    node = PreviewNode(parameter_overrides=[
        Parameter("robot_description", value=bundled_urdf("panda").read_text())])
    executor = MultiThreadedExecutor(num_threads=3)
    executor.add_node(peer)
    executor.add_node(node)
    threading.Thread(target=executor.spin, daemon=True).start()
    assert client.wait_for_server(timeout_sec=PATIENCE)
    yield client, markers
    executor.shutdown()
    node.destroy_node()
    peer.destroy_node()


def start() -> JointState:
    names = Robot.from_urdf(bundled_urdf("panda")).joint_names
    return JointState(name=list(names), position=Q0)


def reach(name: str = "reach", x: float = 0.45) -> PreviewScenario:
    target = Pose()
    target.position.x, target.position.y, target.position.z = x, 0.05, 0.4
    target.orientation.x, target.orientation.w = 1.0, 0.0
    return PreviewScenario(name=name, kind=PreviewScenario.POSE_TARGET, frame=FRAME,
                           target=target, kp=[100.0], kd=[20.0])


def push(names) -> PreviewScenario:
    trajectory = JointTrajectory(joint_names=list(reversed(names)), points=[
        JointTrajectoryPoint(effort=[1.0] * 7, time_from_start=Duration(sec=0)),
        JointTrajectoryPoint(effort=[2.0] * 7, time_from_start=Duration(nanosec=200_000_000))])
    return PreviewScenario(name="push", kind=PreviewScenario.TORQUE_PROFILE, frame=FRAME,
                           trajectory=trajectory)


def test_predictions_match_the_preview(harness):
    client, markers = harness
    robot = Robot.from_urdf(bundled_urdf("panda"))
    feedback = []
    goal = Preview.Goal(scenarios=[reach(), push(robot.joint_names)], start=start(),
                        horizon=0.2, dt=0.001)
    _, response = goal_response(client, goal, lambda message: feedback.append(message.feedback))
    assert response.status == 4, response.result.message  # SUCCEEDED
    ours, theirs = response.result.predictions, preview(robot, [
        scenario_from_mapping(robot, {"name": "reach", "pose_target": {
            "frame": FRAME, "position": [0.45, 0.05, 0.4], "orientation": [1.0, 0, 0, 0],
            "kp": 100.0, "kd": 20.0}}),
        scenario_from_mapping(robot, {"name": "push", "torque_profile": {
            "frame": FRAME, "times": [0.0, 0.2], "efforts": [[1.0] * 7, [2.0] * 7]}}),
    ], PreviewSettings(horizon=0.2), np.array(Q0))
    for message, result in zip(ours, theirs, strict=True):
        assert message.name == result.name
        positions = np.array([point.positions for point in message.trajectory.points])
        np.testing.assert_allclose(positions, result.q, atol=1e-12)
        last = message.frame_path.poses[-1].position
        np.testing.assert_allclose([last.x, last.y, last.z], result.frame_path[-1, :3, 3],
                                   atol=1e-12)
        assert message.final_position_error == pytest.approx(
            result.metrics.final_position_error, nan_ok=True)
    assert wait_for(lambda: len(feedback) == 2)
    assert sorted(f.scenarios_done for f in feedback) == [1, 2]
    assert wait_for(lambda: markers and len(markers[-1].markers) == 3)


@pytest.mark.parametrize(("change", "reason"), [
    ({"horizon": 0.0}, "horizon must be a number > 0"),
    ({"dt": -0.001}, "dt must be a number > 0"),
    ({"frame": "nowhere"}, "pose_target.frame 'nowhere' is not a frame"),
    ({"target_x": float("nan")}, "pose_target.position must be finite"),
])
def test_bad_goals_are_aborted_with_the_reason(harness, change, reason):
    client, _ = harness
    scenario = reach(x=change.get("target_x", 0.45))
    scenario.frame = change.get("frame", FRAME)
    goal = Preview.Goal(scenarios=[scenario], start=start(), horizon=change.get("horizon", 0.1),
                        dt=change.get("dt", 0.001))
    _, response = goal_response(client, goal)
    assert response.status == 6  # ABORTED
    assert reason in response.result.message


def test_cancel_stops_the_scenarios_not_started(harness):
    """Slow scenarios (SimulatedRobot stepped in Python, "cholesky"): cancelled after the
    first is done, the goal ends CANCELED before the rest have run."""
    client, _ = harness
    feedback = []
    goal = Preview.Goal(scenarios=[reach(f"reach{k}") for k in range(12)], start=start(),
                        horizon=1.0, dt=0.001, forward_dynamics_method="cholesky")
    future = client.send_goal_async(goal, lambda message: feedback.append(message.feedback))
    assert wait_for(future.done)
    handle = future.result()
    assert handle.accepted
    assert wait_for(lambda: len(feedback) >= 1)
    handle.cancel_goal_async()
    result = handle.get_result_async()
    assert wait_for(result.done)
    assert result.result().status == 5  # CANCELED
    assert "cancelled after" in result.result().result.message
    assert len(feedback) < 12
