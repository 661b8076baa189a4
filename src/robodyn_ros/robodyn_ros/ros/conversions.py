"""Messages ↔ arrays: joint states matched by name, dynamics into robodyn_interfaces messages."""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence

import numpy as np
from geometry_msgs.msg import Pose, Twist
from robodyn_interfaces.msg import JointSpaceDynamics, OperationalSpaceDynamics
from sensor_msgs.msg import JointState

from robodyn_ros.robot import Robot


class JointStateError(ValueError):
    """A joint state that cannot give the robot's q and q̇; the message says which field."""


class JointStateMap:
    """Picks the robot's joints out of JointState messages, matched by name in any order
    (extra joints ignored); remembers the index map of the last name list seen."""

    def __init__(self, joint_names: Sequence[str]) -> None:
        self.joint_names = tuple(joint_names)
        self._names: tuple[str, ...] = ()
        self._index = np.empty(0, dtype=np.int64)

    def index(self, names: Sequence[str]) -> np.ndarray:
        """Position of each robot joint in `names`."""
        names = tuple(names)
        if names != self._names:
            where = {name: k for k, name in enumerate(names)}
            missing = [name for name in self.joint_names if name not in where]
            if missing:
                raise JointStateError(
                    f"joint_states: name has no entry for joint(s) {', '.join(missing)} "
                    f"(the robot's joints: {', '.join(self.joint_names)})"
                )
            self._index = np.array([where[name] for name in self.joint_names], dtype=np.int64)
            self._names = names
        return self._index

    def state(self, message: JointState) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(q, q̇, τ or None) in the robot's joint order; q̇ = 0 when velocity is empty, τ only
        when effort has an entry for every name."""
        index = self.index(message.name)
        count = len(message.name)
        q = _field(message.position, "position", count, index, required=True)
        qd = _field(message.velocity, "velocity", count, index, required=False)
        effort = _field(message.effort, "effort", count, index, required=False)
        return q, (qd if qd is not None else np.zeros_like(q)), effort


def _field(
    values: Sequence[float], field: str, count: int, index: np.ndarray, required: bool
) -> np.ndarray | None:
    if len(values) == 0 and not required:
        return None
    if len(values) != count:
        raise JointStateError(
            f"joint_states: {field} has {len(values)} entries for {count} names"
        )
    picked = np.asarray(values, dtype=float)[index]
    if not np.all(np.isfinite(picked)):
        raise JointStateError(f"joint_states: {field} has non-finite values: {picked}")
    return picked


def float_sequence(values: np.ndarray) -> array:
    """A float64[] message field from an array, without a per-element check in Python."""
    sequence = array("d")
    sequence.frombytes(np.ascontiguousarray(values, dtype=float).tobytes())
    return sequence


def joint_space_message(
    robot: Robot, q: np.ndarray, qd: np.ndarray, effort: np.ndarray | None, method: str
) -> JointSpaceDynamics:
    """M, b, g (and q̈ when τ is given) at (q, q̇) as a JointSpaceDynamics message; the caller
    fills header and computation_time."""
    message = JointSpaceDynamics()
    message.joint_names = list(robot.joint_names)
    message.position = float_sequence(q)
    message.velocity = float_sequence(qd)
    message.mass_matrix = float_sequence(robot.mass_matrix(q, method=method))
    message.bias_forces = float_sequence(robot.bias_forces(q, qd))
    message.gravity_torques = float_sequence(robot.gravity_torques(q))
    if effort is not None:
        message.effort = float_sequence(effort)
        message.acceleration = float_sequence(robot.forward_dynamics(q, qd, effort))
    message.mass_matrix_method = method
    return message


def operational_space_message(
    robot: Robot, q: np.ndarray, qd: np.ndarray, frame: str, method: str
) -> OperationalSpaceDynamics:
    """Pose, twist, J, Λ⁻¹ and Λ (zero and `singular` where Λ does not exist) of one frame."""
    message = OperationalSpaceDynamics()
    message.frame = frame
    message.joint_names = list(robot.joint_names)
    message.pose = pose_message(robot.frame_pose(q, frame))
    J = robot.jacobian(q, frame)
    message.twist = twist_message(J @ qd)
    message.jacobian = float_sequence(J)
    message.inertia_inverse = robot.operational_space_inertia(
        q, frame, method=method, inverse=True
    ).ravel()
    try:
        message.inertia = robot.operational_space_inertia(q, frame, method=method).ravel()
    except np.linalg.LinAlgError:
        message.singular = True
    message.method = method
    return message


def pose_message(transform: np.ndarray) -> Pose:
    """A 4x4 homogeneous transform as a geometry_msgs/Pose."""
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = transform[:3, 3].tolist()
    o = pose.orientation
    o.x, o.y, o.z, o.w = quaternion_from_rotation(transform[:3, :3].tolist())
    return pose


def quaternion_from_rotation(R: list[list[float]]) -> tuple[float, float, float, float]:
    """(x, y, z, w) of a rotation matrix, w ≥ 0, from the largest of the four candidate
    diagonal combinations for accuracy (Shepperd 1978)."""
    trace = R[0][0] + R[1][1] + R[2][2]
    largest = max(trace, R[0][0], R[1][1], R[2][2])
    if largest == trace:
        s = 2.0 * math.sqrt(1.0 + trace)
        q = ((R[2][1] - R[1][2]) / s, (R[0][2] - R[2][0]) / s, (R[1][0] - R[0][1]) / s, s / 4)
    elif largest == R[0][0]:
        s = 2.0 * math.sqrt(1.0 + R[0][0] - R[1][1] - R[2][2])
        q = (s / 4, (R[0][1] + R[1][0]) / s, (R[0][2] + R[2][0]) / s, (R[2][1] - R[1][2]) / s)
    elif largest == R[1][1]:
        s = 2.0 * math.sqrt(1.0 + R[1][1] - R[0][0] - R[2][2])
        q = ((R[0][1] + R[1][0]) / s, s / 4, (R[1][2] + R[2][1]) / s, (R[0][2] - R[2][0]) / s)
    else:
        s = 2.0 * math.sqrt(1.0 + R[2][2] - R[0][0] - R[1][1])
        q = ((R[0][2] + R[2][0]) / s, (R[1][2] + R[2][1]) / s, s / 4, (R[1][0] - R[0][1]) / s)
    return q if q[3] >= 0.0 else (-q[0], -q[1], -q[2], -q[3])


def twist_message(velocity: np.ndarray) -> Twist:
    """A [linear; angular] 6-vector as a geometry_msgs/Twist."""
    twist = Twist()
    values = velocity.tolist()
    twist.linear.x, twist.linear.y, twist.linear.z = values[:3]
    twist.angular.x, twist.angular.y, twist.angular.z = values[3:]
    return twist
