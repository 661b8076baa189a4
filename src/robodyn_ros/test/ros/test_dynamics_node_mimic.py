"""Mimic joints over real DDS: dynamics_node answers a gripper arm's joint states in the
independent joints, as Pinocchio's ``mimic=True`` model, and reports a mimic joint off its
rule."""

from __future__ import annotations

import numpy as np
from rclpy.parameter import Parameter
from robodyn_interfaces.msg import JointSpaceDynamics
from sensor_msgs.msg import JointState

from robodyn_ros import Robot
from robodyn_ros.ros.dynamics_node import DynamicsNode
from robodyn_ros.testing import example_robot_urdf
from robodyn_ros.testing.pinocchio_oracle import PinocchioOracle

from helpers.nodes import Peer, wait_for
from helpers.tolerances import close

PANDA = example_robot_urdf("panda").read_text()


def test_dynamics_node_serves_a_gripper_arm_and_checks_the_mimic_joints(ros) -> None:
    """Over DDS: joint states that also carry the mimic finger are answered in the independent
    joints (M matches Pinocchio's); a finger off its rule is answered with it on the rule and
    reported (WARN naming the joint and both values)."""
    peer = Peer(ros, DynamicsNode(parameter_overrides=[
        Parameter("robot_description", value=PANDA), Parameter("diagnostic_period", value=0.2),
        Parameter("quantities", value=["mass_matrix"])]))
    peer.answers = []
    peer.peer.create_subscription(JointSpaceDynamics, "dynamics/joint_space",
                                  peer.answers.append, 100)
    robot = Robot.from_urdf_string(PANDA)
    oracle = PinocchioOracle(PANDA, robot.joint_names, mimic=True, is_string=True)
    names = [*robot.joint_names, "panda_finger_joint2"]
    try:
        for finger2, off in ((0.02, False), (0.01, True)):
            peer.answers.clear()
            q = np.array([0.1, -0.3, 0.2, -1.9, 0.1, 1.4, 0.6, 0.02])
            state = JointState(name=names, position=[*q, finger2], velocity=[0.0] * 9)

            def answered(q=q, state=state) -> bool:
                peer.publish(JointState, "joint_states", state)
                return wait_for(lambda: any(np.array_equal(m.position, q)
                                            for m in peer.answers), 0.2)

            assert wait_for(answered)
            answer = next(m for m in peer.answers if np.array_equal(m.position, q))
            assert list(answer.joint_names) == list(robot.joint_names)
            close(np.reshape(answer.mass_matrix, (8, 8)), oracle.mass_matrix(q))
            if off:
                assert wait_for(lambda: peer.reported(
                    "panda_finger_joint2 at 0.01, its rule gives 0.02"))
            else:
                since = len(peer.statuses)
                assert wait_for(lambda s=since: len(peer.statuses) > s + 1)
                assert not peer.reported("mimic joint", since=since)
    finally:
        peer.close()
