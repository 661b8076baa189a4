"""External wrenches from geometry_msgs/WrenchStamped: a push on the robot, a tool's force.

A WrenchStamped names the frame it acts on in header.frame_id (a frame of the robot, with or
without the node's frame_prefix); its wrench [force; torque] acts at that frame's origin in
world-aligned axes, the axes of Robot.jacobian (a fixed base's root frame, a floating base's
world frame), as Robot.inverse_dynamics and forward_dynamics take external_wrenches.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from geometry_msgs.msg import WrenchStamped

from robodyn_ros.ros.guard import RefusedError


def wrench_of(message: WrenchStamped, robot_frame: Callable[[str], str], field: str
              ) -> tuple[str, np.ndarray]:
    """(frame, [fx fy fz tx ty tz]) of one message, checked.

    Args:
        robot_frame: the robot's frame a name names, "" when none (RobotNode.robot_frame).
        field: what the message is ("external_wrenches[2]"), first in an error.

    Raises:
        RefusedError: header.frame_id names no frame of the robot, or a number that is not
            finite; naming the field.
    """
    frame = robot_frame(message.header.frame_id)
    if not frame:
        raise RefusedError(f"{field}: header.frame_id '{message.header.frame_id}' is not a "
                           "frame of the robot: name the frame the wrench acts on")
    force, torque = message.wrench.force, message.wrench.torque
    wrench = np.array([force.x, force.y, force.z, torque.x, torque.y, torque.z])
    if not np.isfinite(wrench).all():
        raise RefusedError(f"{field}: wrench is not finite: {wrench.tolist()}")
    return frame, wrench


def wrenches_of(messages: Sequence[WrenchStamped], robot_frame: Callable[[str], str],
                field: str) -> dict[str, np.ndarray]:
    """Frame → the sum of the wrenches on it, of every message (wrench_of each).

    Raises:
        RefusedError: as wrench_of, naming the message's index in `field`.
    """
    wrenches: dict[str, np.ndarray] = {}
    for k, message in enumerate(messages):
        frame, wrench = wrench_of(message, robot_frame, f"{field}[{k}]")
        wrenches[frame] = wrenches.get(frame, np.zeros(6)) + wrench
    return wrenches


__all__ = ["wrench_of", "wrenches_of"]
