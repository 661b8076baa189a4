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

from robodyn_ros.model.model import MULTI_DOF_JOINTS
from robodyn_ros.robot import Robot
from robodyn_ros.ros.guard import RefusedError
from robodyn_ros.ros.parameters import ParameterSpec

JOINTS_PARAMETER = ParameterSpec(
    "joints", Parameter.Type.STRING_ARRAY,
    "the joints of the Float64MultiArray effort commands, in their order (ros2_control's "
    "forward_command_controller 'joints'); empty: every joint of the robot in URDF order",
)


def command_order(robot: Robot, joints: Sequence[str]) -> np.ndarray:
    """The row of each entry of an effort command (the joints parameter): a joint of one
    degree of freedom (a motor drives none of a floating base's rows).

    Raises:
        RefusedError: a joint the robot does not move, or one named twice.
    """
    driven = {joint.name: joint.v.start for joint in robot.configuration_joints
              if joint.kind not in MULTI_DOF_JOINTS}
    if not joints:
        return np.array(list(driven.values()), dtype=np.int64)
    unknown = [joint for joint in joints if joint not in driven]
    if unknown or len(set(joints)) != len(joints):
        raise RefusedError(
            f"joints: {', '.join(unknown) or 'a joint named twice'} — the joints of robot "
            f"'{robot.model.name}' are {', '.join(driven)}"
        )
    return np.array([driven[joint] for joint in joints], dtype=np.int64)
