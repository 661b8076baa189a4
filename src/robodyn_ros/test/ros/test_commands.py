"""ros2_control's forward_command_controller convention over real DDS: the `joints` parameter
fixes the order of the Float64MultiArray efforts that sim_node applies and controller_node
publishes; joints it leaves out get no effort (sim_node) or are not sent (controller_node); a
joint the robot does not have is refused with the reason."""

from __future__ import annotations

import time

import numpy as np
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robodyn_ros.ros.controller_node import ControllerNode
from robodyn_ros.ros.sim_node import SimNode
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

from helpers.nodes import Peer, panda_state, wait_for
from helpers.robots import PANDA, PANDA_JOINTS

JOINTS = ["panda_joint4", "panda_joint2", "panda_joint1"]  # a subset, out of URDF order
Q = np.array([0.3, -0.4, 0.2, -2.1, 0.1, 1.6, 0.7])


def test_sim_node_applies_the_efforts_of_the_joints_parameter(ros) -> None:
    node = SimNode(parameter_overrides=[Parameter("robot_description", value=PANDA),
                                        Parameter("joints", value=JOINTS)])
    peer = Peer(ros, node)
    try:
        command = Float64MultiArray(data=[4.0, -2.0, 1.0])
        expected = np.zeros(7)
        expected[[3, 1, 0]] = command.data

        def applied() -> bool:
            peer.publish(Float64MultiArray, "effort_commands", command)
            time.sleep(0.05)
            return node.sim is not None and np.allclose(node.sim.effort, expected)

        assert wait_for(applied), node.sim.effort
        assert peer.until_reported(
            lambda: peer.publish(Float64MultiArray, "effort_commands",
                                 Float64MultiArray(data=[0.0] * 7)),
            "expected 3 values (one per joint: panda_joint4, panda_joint2, panda_joint1)")
        refused = node.set_parameters([Parameter("joints", value=["panda_joint9"])])[0]
        assert not refused.successful and "panda_joint9" in refused.reason
        every_joint = Parameter("joints", Parameter.Type.STRING_ARRAY, [])
        assert node.set_parameters([every_joint])[0].successful
        assert wait_for(lambda: (peer.publish(Float64MultiArray, "effort_commands",
                                              Float64MultiArray(data=list(range(7)))),
                                 time.sleep(0.05))
                        and np.allclose(node.sim.effort, np.arange(7.0)))
    finally:
        peer.close()


def test_controller_node_publishes_in_the_order_of_the_joints_parameter(ros) -> None:
    """Gravity compensation: the efforts sent are Pinocchio's g(q) of those joints, in order."""
    node = ControllerNode(parameter_overrides=[Parameter("robot_description", value=PANDA),
                                               Parameter("joints", value=JOINTS)])
    peer = Peer(ros, node)
    efforts = []
    peer.peer.create_subscription(Float64MultiArray, "effort_commands", efforts.append, 100)
    try:
        g = PinocchioOracle(PANDA, PANDA_JOINTS, is_string=True).gravity_torques(Q)
        expected = g[[PANDA_JOINTS.index(joint) for joint in JOINTS]]

        def sent() -> bool:
            peer.publish(JointState, "joint_states", panda_state(Q))
            time.sleep(0.05)
            return any(np.allclose(m.data, expected, rtol=0, atol=1e-9) for m in efforts[-5:])

        assert wait_for(sent), efforts[-1:] or "no efforts"
        refused = node.set_parameters([Parameter("joints", value=["gripper"])])[0]
        assert not refused.successful and "gripper" in refused.reason
    finally:
        peer.close()
