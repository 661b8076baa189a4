"""preview_node over real DDS with a world: a goal whose scenario has planes previews the
robot's contacts with them (the collision shapes of its description), and its prediction
carries the contacts at the sample steps and the contact metrics, as sim.preview gives them;
a bad plane or a robot with nothing to touch them is aborted with the reason. A goal's pose
target carries force control, its whole-body pose the ground of its controller."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Point, Vector3
from rclpy.action import ActionClient
from rclpy.executors import MultiThreadedExecutor
from rclpy.parameter import Parameter
from robodyn_interfaces.action import Preview
from robodyn_interfaces.msg import PreviewScenario, WorldPlane
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robodyn_ros import Robot
from robodyn_ros.contact import collision_shapes
from robodyn_ros.model import URDFWarning
from robodyn_ros.resources import bundled_urdf
from robodyn_ros.ros.preview_messages import goal_scenarios
from robodyn_ros.ros.preview_node import PreviewNode
from robodyn_ros.sim.preview import PreviewSettings, preview
from robodyn_ros.sim.scenarios import ScenarioError, scenario_from_mapping
from robodyn_ros.testing import example_robot_urdf

from helpers.nodes import PATIENCE, goal_response
from helpers.robots import FINGERTIP_ARM

TABLE = -0.3  # m, the table's top under the arm



def node_and_client(ros, urdf: str, name: str):
    peer = ros.create_node(f"{name}_client")
    client = ActionClient(peer, Preview, f"{name}/preview")
    node = PreviewNode(namespace=name, parameter_overrides=[
        Parameter("robot_description", value=urdf)])
    executor = MultiThreadedExecutor(num_threads=3)
    executor.add_node(peer)
    executor.add_node(node)
    threading.Thread(target=executor.spin, daemon=True).start()
    assert client.wait_for_server(timeout_sec=PATIENCE)
    return client, (executor, node, peer)


@pytest.fixture(scope="module")
def arm(ros):
    client, parts = node_and_client(ros, FINGERTIP_ARM, "arm")
    yield client
    executor, node, peer = parts
    executor.shutdown()
    node.destroy_node()
    peer.destroy_node()


def limp(joints, plane: WorldPlane, frame: str = "fore") -> PreviewScenario:
    trajectory = JointTrajectory(joint_names=list(joints), points=[
        JointTrajectoryPoint(effort=[0.0] * len(joints), time_from_start=Duration(sec=0))])
    return PreviewScenario(name="limp", kind=PreviewScenario.TORQUE_PROFILE, frame=frame,
                           trajectory=trajectory, world=[plane])


def table(normal=(0.0, 0.0, 1.0), friction: float = 2.0) -> WorldPlane:
    return WorldPlane(normal=Vector3(x=normal[0], y=normal[1], z=normal[2]),
                      point=Point(z=TABLE), friction=friction)


def goal(scenario: PreviewScenario, joints) -> Preview.Goal:
    return Preview.Goal(scenarios=[scenario], horizon=0.8, dt=0.001, start=JointState(
        name=list(joints), position=[0.0] * len(joints)))


def test_a_prediction_carries_the_contacts_and_metrics_of_the_preview(arm):
    robot = Robot.from_urdf_string(FINGERTIP_ARM)
    _, response = goal_response(arm, goal(limp(robot.joint_names, table()), robot.joint_names))
    assert response.status == 4, response.result.message  # SUCCEEDED
    message = response.result.predictions[0]
    ours = preview(robot, [scenario_from_mapping(robot, {
        "name": "limp", "world": {"planes": [{"normal": [0, 0, 1], "point": [0, 0, TABLE],
                                              "friction": 2.0}]},
        "torque_profile": {"frame": "fore", "times": [0.0], "efforts": [[0.0, 0.0]]}})],
        PreviewSettings(horizon=0.8), np.zeros(2), np.zeros(2),
        collision_shapes=collision_shapes(FINGERTIP_ARM))[0]
    assert len(message.contacts) == len(ours.samples)
    last, expected = message.contacts[-1], ours.contacts[-1]
    assert [c.link for c in last.contacts] == [c.link for c in expected] == ["fore"]
    total = [last.total_force.x, last.total_force.y, last.total_force.z]
    np.testing.assert_allclose(total, sum(c.force for c in expected), atol=1e-9)
    stamp = last.header.stamp.sec + 1e-9 * last.header.stamp.nanosec
    assert stamp == pytest.approx(ours.times[ours.samples[-1]], abs=1e-9)
    assert last.header.frame_id == "base"
    contact = ours.metrics.contact
    assert message.peak_contact_force == pytest.approx(contact.peak_contact_force, abs=1e-9)
    assert message.slip_distance == pytest.approx(contact.slip_distance, abs=1e-12)
    assert message.lost_contacts == contact.lost_contacts
    assert message.penetration == pytest.approx(contact.penetration, abs=1e-12)
    assert contact.peak_contact_force > 0.0


def test_a_bad_plane_is_aborted_naming_it(arm):
    joints = Robot.from_urdf_string(FINGERTIP_ARM).joint_names
    _, response = goal_response(arm, goal(limp(joints, table(normal=(0.0, 0.0, 0.0))), joints))
    assert response.status == 6  # ABORTED
    assert "scenario 'limp': world[0].normal" in response.result.message


def test_a_robot_without_collision_shapes_is_aborted(ros):
    client, parts = node_and_client(ros, bundled_urdf("panda").read_text(), "bare")
    try:
        joints = Robot.from_urdf(bundled_urdf("panda")).joint_names
        _, response = goal_response(client, goal(limp(joints, table(), "panda_hand"), joints))
        assert response.status == 6  # ABORTED
        assert "no <collision> element on a link that moves" in response.result.message
    finally:
        executor, node, peer = parts
        executor.shutdown()
        node.destroy_node()
        peer.destroy_node()


def test_a_goal_carries_force_control_and_the_whole_body_ground() -> None:
    """A pose target's force fields and a whole-body pose's ground reach the scenarios as
    their mappings give them, and a bad one is refused naming the field."""
    panda = Robot.from_urdf(bundled_urdf("panda"))
    press = PreviewScenario(name="press", kind=PreviewScenario.POSE_TARGET,
                            frame="panda_hand_tcp", force_axes=[0.0, 0, 1, 0, 0, 0],
                            force_target=[0.0, 0, -10, 0, 0, 0], force_damping=[40.0],
                            force_integral_gain=20.0)
    press.target.orientation.w = 1.0
    scenario = goal_scenarios(panda, [press])[0]
    np.testing.assert_array_equal(scenario.force_axes, [False, False, True, False, False, False])
    np.testing.assert_array_equal(scenario.force_target, [0, 0, -10, 0, 0, 0])
    np.testing.assert_array_equal(scenario.force_damping, [40.0] * 6)
    assert scenario.force_integral_gain == 20.0
    press.force_target = [1.0, 0, -10, 0, 0, 0]
    with pytest.raises(ScenarioError, match=r"pose_target\.force_target"):
        goal_scenarios(panda, [press])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", URDFWarning)
        talos = Robot.from_urdf(example_robot_urdf("talos_reduced"), floating_base=True)
    stand = PreviewScenario(name="stand", kind=PreviewScenario.WHOLE_BODY_POSE,
                            frame="base_link", contacts=["left_sole_link", "right_sole_link"],
                            friction=0.5, min_normal_force=2.0, sole_size=[0.2, 0.1])
    ground = goal_scenarios(talos, [stand])[0].ground
    assert (ground.friction, ground.min_normal_force) == (0.5, 2.0)
    assert {frame: (sole.length, sole.width) for frame, sole in ground.soles.items()} == {
        "left_sole_link": (0.2, 0.1), "right_sole_link": (0.2, 0.1)}
