"""Frames over real DDS: frame_prefix on every output's header.frame_id (and the frame names
the messages carry), and a PoseStamped target in any frame of the robot placed through the
robot's own kinematics, checked against Pinocchio; a frame the node cannot resolve is refused
with the reason."""

from __future__ import annotations

import time

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import PoseStamped
from rclpy.parameter import Parameter
from robodyn_interfaces.msg import OperationalSpaceDynamics
from robodyn_interfaces.srv import ComputeDynamics
from scipy.spatial.transform import Rotation
from sensor_msgs.msg import JointState

from robodyn_ros.ros import frames
from robodyn_ros.ros.controller_node import ControllerNode
from robodyn_ros.ros.sim_node import SimNode
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

from helpers.nodes import PATIENCE, Peer, dynamics_peer, panda_state, wait_for
from helpers.robots import PANDA, PANDA_JOINTS, TIP

PREFIX = "left_"
ROOT = "panda_link0"
Q = np.array([0.3, -0.4, 0.2, -2.1, 0.1, 1.6, 0.7])


def test_dynamics_outputs_carry_the_prefixed_frames(ros) -> None:
    peer = dynamics_peer(ros, Parameter("frames", value=[TIP]),
                         Parameter("frame_prefix", value=PREFIX))
    operational, arrays = [], []
    peer.peer.create_subscription(OperationalSpaceDynamics, "dynamics/operational_space",
                                  operational.append, 100)
    peer.peer.create_subscription(DiagnosticArray, "/diagnostics", arrays.append, 100)
    try:
        assert wait_for(lambda: (peer.publish(JointState, "joint_states", panda_state(Q)),
                                 time.sleep(0.05)) and operational and peer.answers)
        assert peer.answers[-1].header.frame_id == PREFIX + ROOT
        assert operational[-1].header.frame_id == PREFIX + ROOT
        assert operational[-1].frame == PREFIX + TIP
        name = peer.node.get_fully_qualified_name().lstrip("/")
        assert wait_for(lambda: any(a.header.frame_id == PREFIX + ROOT and a.header.stamp.sec
                                    for a in arrays if a.status[0].name.startswith(name)))

        client = peer.peer.create_client(ComputeDynamics, "compute_dynamics")
        assert client.wait_for_service(timeout_sec=PATIENCE)
        for frame in (PREFIX + TIP, TIP):  # a frame named with the prefix or without
            future = client.call_async(ComputeDynamics.Request(
                state=panda_state(Q), frames=[frame]))
            assert wait_for(future.done)
            response = future.result()
            assert response.success, response.message
            assert response.operational_space[0].frame == PREFIX + TIP
        future = client.call_async(ComputeDynamics.Request(state=panda_state(Q),
                                                           frames=["right_" + TIP]))
        assert wait_for(future.done)
        assert not future.result().success and "right_" + TIP in future.result().message
        peer.peer.destroy_client(client)

        assert peer.node.set_parameters([Parameter("frame_prefix", value="")])[0].successful
        count = len(peer.answers)
        assert wait_for(lambda: (peer.publish(JointState, "joint_states", panda_state(Q)),
                                 time.sleep(0.05)) and len(peer.answers) > count + 1)
        assert peer.answers[-1].header.frame_id == ROOT
    finally:
        peer.close()


def test_sim_joint_states_carry_the_prefixed_root_frame(ros) -> None:
    node = SimNode(parameter_overrides=[Parameter("robot_description", value=PANDA),
                                        Parameter("frame_prefix", value=PREFIX)])
    peer = Peer(ros, node)
    states = []
    peer.peer.create_subscription(JointState, "joint_states", states.append, 100)
    try:
        assert wait_for(lambda: states)
        assert states[-1].header.frame_id == PREFIX + ROOT
    finally:
        peer.close()


@pytest.fixture
def controller(ros):
    node = ControllerNode(parameter_overrides=[
        Parameter("robot_description", value=PANDA),
        Parameter("controller", value="operational_space"),
        Parameter("controller_parameters.frame", value=TIP),
        Parameter("frame_prefix", value=PREFIX),
        Parameter("diagnostic_period", value=0.2),
    ])
    peer = Peer(ros, node)
    yield peer
    peer.close()


def target(frame_id: str, position, quaternion) -> PoseStamped:
    message = PoseStamped()
    message.header.frame_id = frame_id
    p, o = message.pose.position, message.pose.orientation
    p.x, p.y, p.z = position
    o.x, o.y, o.z, o.w = quaternion
    return message


@pytest.mark.parametrize("frame", ["panda_link7", PREFIX + "panda_hand", PREFIX + ROOT, ""])
def test_a_target_in_a_robot_frame_is_placed_by_the_robot_kinematics(controller, frame) -> None:
    """The controller's target is Pinocchio's pose of the frame at the newest joint state
    composed with the pose sent (the root frame, or an empty frame_id, as sent)."""
    position = np.array([0.05, -0.02, 0.1])
    quaternion = Rotation.from_euler("xyz", [0.2, -0.1, 0.3]).as_quat()
    local = np.eye(4)
    local[:3, :3], local[:3, 3] = Rotation.from_quat(quaternion).as_matrix(), position
    robot_frame = frame.removeprefix(PREFIX) or ROOT
    oracle = PinocchioOracle(PANDA, PANDA_JOINTS, is_string=True)
    expected = oracle.frame_pose(Q, robot_frame) @ local

    def placed() -> bool:
        controller.publish(JointState, "joint_states", panda_state(Q))
        controller.publish(PoseStamped, "target_pose", target(frame, position, quaternion))
        time.sleep(0.05)
        pose = controller.node.controller.target_pose
        return pose is not None and np.allclose(pose, expected, rtol=0, atol=1e-12)

    assert wait_for(placed), (controller.node.controller.target_pose, expected)


@pytest.mark.skipif(frames.tf2_ros is not None, reason="tf2 looks the frame up where installed")
def test_a_frame_outside_the_robot_is_refused_with_the_reason(controller) -> None:
    message = target("map", [0.4, 0.0, 0.4], [0.0, 0.0, 0.0, 1.0])
    assert controller.until_reported(
        lambda: controller.publish(PoseStamped, "target_pose", message),
        "frame 'map' is not a frame of the robot (its root frame is 'left_panda_link0') and "
        "tf2_ros is not installed",
    )
    assert controller.node.controller.target_pose is None
    good = target(PREFIX + ROOT, [0.4, 0.0, 0.4], [1.0, 0.0, 0.0, 0.0])  # still serving

    def placed() -> bool:
        controller.publish(PoseStamped, "target_pose", good)
        time.sleep(0.05)
        return controller.node.controller.target_pose is not None

    assert wait_for(placed)
    np.testing.assert_allclose(controller.node.controller.target_pose[:3, 3], [0.4, 0.0, 0.4])


def test_a_moving_frame_before_any_joint_state_is_refused(controller) -> None:
    message = target("panda_link7", [0.0, 0.0, 0.1], [0.0, 0.0, 0.0, 1.0])
    assert controller.until_reported(
        lambda: controller.publish(PoseStamped, "target_pose", message),
        "frame 'panda_link7' is placed by the joint state, and none has arrived yet",
    )
