"""Poses in a frame named by header.frame_id, expressed in the robot's root frame.

A frame of the robot (with or without the node's frame_prefix) is placed through the robot's
own kinematics at the newest joint state; the root frame, or an empty frame_id, needs none.
Any other frame is looked up with tf2 where it is installed (a ROS install), else refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from geometry_msgs.msg import Pose
from rclpy.time import Time

from robodyn_ros.control.operational_space_controller import as_rotation_matrix
from robodyn_ros.robot import Robot
from robodyn_ros.ros.guard import RefusedError

if TYPE_CHECKING:
    from rclpy.node import Node

try:  # tf2 comes with a ROS install; the PyPI wheels have none
    import tf2_ros
except ImportError:
    tf2_ros = None


def robot_frame(robot: Robot, prefix: str, name: str) -> str:
    """The frame of `robot` that `name` names, with or without the frame prefix ("" when it
    names none)."""
    if prefix and name.startswith(prefix) and name[len(prefix):] in robot.frame_names:
        return name[len(prefix):]
    return name if name in robot.frame_names else ""


def pose_transform(pose: Pose, what: str) -> np.ndarray:
    """The 4x4 transform of a geometry_msgs/Pose.

    Raises:
        RefusedError: a position or orientation that is not finite, or a quaternion that is
            not (near) unit length; naming `what`.
    """
    p, o = pose.position, pose.orientation
    position = np.array([p.x, p.y, p.z], dtype=float)
    if not np.isfinite(position).all():
        raise RefusedError(f"{what}: position is not finite")
    try:
        rotation = as_rotation_matrix([o.x, o.y, o.z, o.w], f"{what}: orientation")
    except ValueError as error:
        raise RefusedError(str(error)) from None
    transform = np.eye(4)
    transform[:3, :3], transform[:3, 3] = rotation, position
    return transform


def in_root_frame(robot: Robot, frame: str, q: np.ndarray | None, transform: np.ndarray,
                  what: str) -> np.ndarray:
    """A transform given in a frame of the robot, in its root frame.

    Args:
        frame: the robot's frame ("" for its root frame).
        q: the newest joint state (None before one arrived).
        transform: 4x4, in `frame`.
        what: what the pose is, for errors.

    Raises:
        RefusedError: a frame other than the root before any joint state.
    """
    if not frame or frame == robot.model.root_link:
        return transform
    if q is None:
        raise RefusedError(f"{what}: frame '{frame}' is placed by the joint state, and none "
                           "has arrived yet")
    pose: np.ndarray = robot.frame_pose(q, frame) @ transform
    return pose


class Tf2Frames:
    """Transforms of frames outside the robot from tf2 (a listener on /tf and /tf_static),
    where tf2 is installed.

    Args:
        node: the node that listens.
    """

    def __init__(self, node: Node) -> None:
        self._buffer = None
        if tf2_ros is not None:
            self._buffer = tf2_ros.Buffer()
            self._listener = tf2_ros.TransformListener(self._buffer, node)

    def to_root(self, frame_id: str, root_frame_id: str, what: str) -> np.ndarray:
        """The 4x4 transform taking poses in `frame_id` into `root_frame_id`, the newest one.

        Raises:
            RefusedError: tf2 is not installed, or does not know the transform.
        """
        if self._buffer is None:
            raise RefusedError(
                f"{what}: frame '{frame_id}' is not a frame of the robot (its root frame is "
                f"'{root_frame_id}') and tf2_ros is not installed to look it up"
            )
        try:
            stamped = self._buffer.lookup_transform(root_frame_id, frame_id, Time())
        except Exception as error:  # tf2's LookupException, ConnectivityException, ...
            raise RefusedError(f"{what}: no transform from '{frame_id}' to "
                               f"'{root_frame_id}': {error}") from None
        t, r = stamped.transform.translation, stamped.transform.rotation
        pose = Pose()
        pose.position.x, pose.position.y, pose.position.z = t.x, t.y, t.z
        pose.orientation = r
        return pose_transform(pose, what)

