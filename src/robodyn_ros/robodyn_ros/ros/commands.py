"""Effort commands as ros2_control's forward_command_controller takes them: a
std_msgs/Float64MultiArray whose entries are the efforts of the joints of the ``joints``
parameter, in its order.

ros2_control → robodyn_ros:
    forward_command_controller ``joints`` → the ``joints`` parameter of sim_node and
        controller_node (empty: every joint of the robot in URDF order);
    its ``interface_name: effort`` → what effort_commands carry (always efforts);
    its ``~/commands`` topic → ``effort_commands`` (remap one to the other, e.g.
        ``effort_commands:=/forward_effort_controller/commands``);
    joint_state_broadcaster's ``/joint_states`` → ``joint_states``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rclpy.parameter import Parameter

from robodyn_ros.robot import Robot
from robodyn_ros.ros.guard import RefusedError
from robodyn_ros.ros.parameters import ParameterSpec

JOINTS_PARAMETER = ParameterSpec(
    "joints", Parameter.Type.STRING_ARRAY,
    "the joints of the Float64MultiArray effort commands, in their order (ros2_control's "
    "forward_command_controller 'joints'); empty: every joint of the robot in URDF order",
)


def command_order(robot: Robot, joints: Sequence[str]) -> np.ndarray:
    """The robot index of each entry of an effort command (the joints parameter).

    Raises:
        RefusedError: a joint the robot does not move, or one named twice.
    """
    if not joints:
        return np.arange(robot.nv)
    unknown = [joint for joint in joints if joint not in robot.joint_names]
    if unknown or len(set(joints)) != len(joints):
        raise RefusedError(
            f"joints: {', '.join(unknown) or 'a joint named twice'} — the joints of robot "
            f"'{robot.model.name}' are {', '.join(robot.joint_names)}"
        )
    return np.array([robot.joint_names.index(joint) for joint in joints], dtype=np.int64)
