"""A floating base's state from nav_msgs/Odometry, as legged-robot state estimators publish it,
and the Odometry of a simulated base (sim_node's ground truth).

REP 105: the pose is the base's (child_frame_id) in header.frame_id, the world frame (odom); the
twist is the base's in child_frame_id, the base frame. That is the free flyer's convention
(floating_base=True), so the odometry gives q[:7] = [x y z, qx qy qz qw] and v[:6] = [linear;
angular] as they are. An odometry is taken when its frames are the ones expected, its numbers
finite and its quaternion of unit norm (to the kernels' UNIT_TOLERANCE); it then serves a joint
state while it is no older than joint_states_max_age (the rule of ros.joint_states).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from geometry_msgs.msg import TransformStamped
from nav_msgs.msg import Odometry

from robodyn_ros.dynamics.tree import UNIT_TOLERANCE
from robodyn_ros.model.model import FREE_FLYER_DOF
from robodyn_ros.robot import Robot
from robodyn_ros.robot.state_merge import heard_ago, heard_since
from robodyn_ros.ros.conversions import RobotState
from robodyn_ros.ros.guard import RefusedError


def base_link(robot: Robot) -> str:
    """A floating base's link: the free flyer's body, its odometry's child_frame_id."""
    return robot.model.root_link


@dataclass(frozen=True)
class OdometryFrames:
    """The frames an odometry must name, with frame_prefix: header.frame_id (the world) and
    child_frame_id (the robot's root link)."""

    world: str
    base: str


@dataclass(frozen=True)
class BaseState:
    """The base's pose and twist of one odometry, in the free flyer's order."""

    pose: np.ndarray  # (7,) x y z, qx qy qz qw: the base in the world
    twist: np.ndarray  # (6,) linear; angular: the base's, in the base frame
    received_ns: int  # when the odometry arrived (system clock)


def base_state(message: Odometry, frames: OdometryFrames, received_ns: int) -> BaseState:
    """The base state of an odometry, checked.

    Raises:
        RefusedError: a frame other than `frames`, a pose or twist that is not finite, or a
            quaternion that is not of unit norm; naming the field and its value.
    """
    if message.header.frame_id != frames.world:
        raise RefusedError(f"odometry: header.frame_id is '{message.header.frame_id}', not "
                           f"the world frame '{frames.world}' (parameter world_frame, with "
                           "frame_prefix)")
    if message.child_frame_id != frames.base:
        raise RefusedError(f"odometry: child_frame_id is '{message.child_frame_id}', not the "
                           f"robot's root link '{frames.base}' (with frame_prefix)")
    pose, twist = message.pose.pose, message.twist.twist
    p, o = pose.position, pose.orientation
    fields = {
        "pose.pose.position": [p.x, p.y, p.z],
        "pose.pose.orientation": [o.x, o.y, o.z, o.w],
        "twist.twist.linear": [twist.linear.x, twist.linear.y, twist.linear.z],
        "twist.twist.angular": [twist.angular.x, twist.angular.y, twist.angular.z],
    }
    for field, values in fields.items():
        if not np.isfinite(values).all():
            raise RefusedError(f"odometry: {field} is not finite: {values}")
    norm = float(np.linalg.norm(fields["pose.pose.orientation"]))
    if not abs(norm - 1.0) <= UNIT_TOLERANCE:
        raise RefusedError(f"odometry: pose.pose.orientation {fields['pose.pose.orientation']} "
                           f"is not a unit quaternion: norm {norm:.9g} (to {UNIT_TOLERANCE:g})")
    values = list(fields.values())
    return BaseState(np.concatenate(values[:2]), np.concatenate(values[2:]), received_ns)


class BaseOdometry:
    """A floating base's odometry as a node keeps it: the frames each odometry must name and
    the newest one taken."""

    def __init__(self, frames: OdometryFrames) -> None:
        self.frames = frames
        self.newest: BaseState | None = None  # None before one is taken

    def take(self, message: Odometry, received_ns: int) -> None:
        """Keep `message`, checked, as the newest odometry.

        Raises:
            RefusedError: its frames, pose or twist cannot be the base's (base_state).
        """
        self.newest = base_state(message, self.frames, received_ns)

    def robot_state(self, joints: RobotState, now_ns: int, max_age: float) -> RobotState:
        """A floating-base robot's state (q, v, τ) of its joints' state and the newest
        odometry: the base's pose and twist first, no effort on the base (τ[:6] = 0).

        Args:
            joints: the joints' state (effort None: no acceleration).
            now_ns: now (ns, system clock), when the joint states were judged.
            max_age: s, joint_states_max_age.

        Raises:
            RefusedError: no odometry yet, or the newest older than max_age: the base is
                unknown and never guessed.
        """
        base = self.newest
        if base is None:
            raise RefusedError("odometry: no odometry yet: the floating base's pose is unknown, "
                               "nothing is computed")
        if base.received_ns < heard_since(now_ns, max_age):
            raise RefusedError(f"odometry: the newest was {heard_ago(now_ns - base.received_ns)}"
                               f", not within joint_states_max_age ({max_age:g} s): the "
                               "floating base's pose is unknown, nothing is computed")
        tau = None if joints.effort is None else np.concatenate([np.zeros(FREE_FLYER_DOF),
                                                                 joints.effort])
        return RobotState(np.concatenate([base.pose, joints.q]),
                          np.concatenate([base.twist, joints.qd]), tau)


def odometry_for(frames: OdometryFrames | None, kept: BaseOdometry | None
                 ) -> BaseOdometry | None:
    """The odometry a node keeps for a robot whose base odometry names `frames` (None: a fixed
    base, no odometry): `kept`, with its newest, while it names the same frames."""
    if frames is None:
        return None
    if kept is not None and kept.frames == frames:
        return kept
    return BaseOdometry(frames)


def odometry_message(q: np.ndarray, v: np.ndarray, world: str, base: str) -> Odometry:
    """The Odometry of a floating base's state (REP 105): the pose q[:7] in `world`, the
    twist v[:6] in the base frame `base` (child_frame_id); the caller stamps it."""
    message = Odometry()
    message.header.frame_id, message.child_frame_id = world, base
    pose, twist = message.pose.pose, message.twist.twist
    p, o = pose.position, pose.orientation
    p.x, p.y, p.z = (float(x) for x in q[:3])
    o.x, o.y, o.z, o.w = (float(x) for x in q[3:7])
    twist.linear.x, twist.linear.y, twist.linear.z = (float(x) for x in v[:3])
    twist.angular.x, twist.angular.y, twist.angular.z = (float(x) for x in v[3:6])
    return message


def transform_of(message: Odometry) -> TransformStamped:
    """The transform header.frame_id → child_frame_id of an odometry, as /tf carries it."""
    transform = TransformStamped()
    transform.header = message.header
    transform.child_frame_id = message.child_frame_id
    position, orientation = message.pose.pose.position, message.pose.pose.orientation
    translation, rotation = transform.transform.translation, transform.transform.rotation
    translation.x, translation.y, translation.z = position.x, position.y, position.z
    rotation.x, rotation.y, rotation.z, rotation.w = (orientation.x, orientation.y,
                                                      orientation.z, orientation.w)
    return transform
