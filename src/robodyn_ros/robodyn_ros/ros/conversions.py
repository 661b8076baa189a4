"""Messages ↔ arrays: joint states matched by name, dynamics into robodyn_interfaces messages."""

from __future__ import annotations

import math
from array import array
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from geometry_msgs.msg import Pose, Vector3
from robodyn_interfaces.msg import JointSpaceDynamics, OperationalSpaceDynamics
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from robodyn_ros.control.trajectory import JointTrajectoryReference
from robodyn_ros.robot import Robot, operational_space
from robodyn_ros.robot.coupling import Coupling
from robodyn_ros.robot.external_wrenches import ExternalWrenches
from robodyn_ros.robot.methods import DEFAULT_JOINT_SPACE_METHODS, JointSpaceMethods
from robodyn_ros.robot.state_merge import StateMergeError, picked_fields
from robodyn_ros.ros.guard import RefusedError


class JointStateError(RefusedError):
    """A joint state that cannot give the robot's q and q̇; the message says which field."""


class NonFiniteAnswerError(RefusedError):
    """Dynamics computed at a state came out with NaN or inf: not sent as an answer."""


MIMIC_TOLERANCE = 1e-6  # rad or m: a mimic joint's position in a message against its rule


class RobotState(NamedTuple):
    """A state in the robot's order: q (nq), q̇ (nv; a floating base's v) and τ (nv), None
    where no effort came (no acceleration is then computed)."""

    q: np.ndarray
    qd: np.ndarray
    effort: np.ndarray | None


class JointStateMap:
    """Picks the robot's joints out of JointState messages, matched by name in any order
    (extra joints ignored); remembers the index map of the last name list seen. With a
    coupling (a robot with mimic joints) it also checks the mimic joints a message carries."""

    def __init__(self, joint_names: Sequence[str], coupling: Coupling | None = None) -> None:
        self.joint_names = tuple(joint_names)
        self.coupling = coupling
        self._names: tuple[str, ...] | None = None  # the names of the last message
        self._index = np.empty(0, dtype=np.int64)

    def index(self, names: Sequence[str], source: str = "joint_states") -> np.ndarray:
        """Position of each robot joint in `names`.

        Raises:
            JointStateError: `names` is empty or lacks a joint of the robot (named).
        """
        names = tuple(names)
        if names != self._names:
            if not names:
                raise JointStateError(f"{source}: name is empty (a JointState without joints)")
            where = {name: k for k, name in enumerate(names)}
            missing = [name for name in self.joint_names if name not in where]
            if missing:
                raise JointStateError(
                    f"{source}: name has no entry for joint(s) {', '.join(missing)} "
                    f"(the robot's joints: {', '.join(self.joint_names)})"
                )
            self._index = np.array([where[name] for name in self.joint_names], dtype=np.int64)
            self._names = names
        return self._index

    def state(self, message: JointState, source: str = "joint_states") -> RobotState:
        """The message's state in the robot's joint order; q̇ = 0 when velocity is empty, τ
        only when effort has an entry for every name.

        Args:
            message: the joint state.
            source: what the message is ("joint_states", "state"), first in an error.

        Raises:
            JointStateError: no names, a robot joint missing, a field whose length is not the
                names', or a NaN or inf for a robot joint (naming the joint and the field).
        """
        index = self.index(message.name, source)
        fields = (message.position, message.velocity, message.effort)
        try:
            q, qd, effort = picked_fields(fields, len(message.name), index, self.joint_names,
                                          source)
        except StateMergeError as error:
            raise JointStateError(str(error)) from error
        assert q is not None  # position is never left out
        return RobotState(q, qd if qd is not None else np.zeros_like(q), effort)

    def mimic_mismatch(self, message: JointState, q: np.ndarray) -> str:
        """The mimic joints whose position in `message` is off their rule at q (the robot's
        joints, from `state`), and by how much; "" when none is, or none is in the message."""
        if self.coupling is None:
            return ""
        where = {name: k for k, name in enumerate(message.name)}
        expected = self.coupling.positions(q)
        off = []
        for i, name in enumerate(self.coupling.tree_joint_names):
            k = where.get(name)
            if name in self.coupling.mimic_joints and k is not None \
                    and not abs(message.position[k] - expected[i]) <= MIMIC_TOLERANCE:
                off.append(f"{name} at {message.position[k]:.6g}, its rule gives "
                           f"{expected[i]:.6g}")
        return "; ".join(off)


POSITION_LIMIT_TOLERANCE = 1e-3  # rad or m a trajectory's position may pass a joint limit by


@dataclass(frozen=True)
class PositionLimits:
    """The position limits of a robot's joints in its joint order, rad or m (-inf and inf
    where there is none: a continuous joint)."""

    lower: np.ndarray
    upper: np.ndarray


POINTS_PER_CHUNK = 2000  # a long trajectory's points stacked or freed at a time: ~1 ms


def stacked_in_chunks(points: Sequence[Any], field: str) -> np.ndarray:
    """The (points, joints) array of one field of every point, stacked a chunk at a time:
    stacking a long trajectory's points in one call would hold the interpreter, and with it
    the node's other threads, for tens of milliseconds."""
    return np.concatenate([
        np.array([getattr(point, field) for point in points[start:start + POINTS_PER_CHUNK]])
        for start in range(0, len(points), POINTS_PER_CHUNK)])


def trajectory_reference(
    message: JointTrajectory, joint_map: JointStateMap, start: np.ndarray, start_rate: np.ndarray,
    topic: str = "joint_trajectory", limits: PositionLimits | None = None,
) -> JointTrajectoryReference:
    """The reference of a trajectory_msgs/JointTrajectory (rclpy's message or rosbags') in
    the robot's joint order, its times from time_from_start. When the first point comes later
    than 0 the reference starts from `start` (q) and `start_rate` (q̇) at 0, as ros2_control's
    trajectory controller starts from the state it is in.

    Raises:
        JointStateError: joint_names lacking a robot joint; no points; a point whose positions,
            velocities or accelerations do not have one entry per name (velocities and
            accelerations are given at every point or at none); a negative first
            time_from_start or times that do not increase; a value that is not finite; a
            position outside the joint's `limits` by more than POSITION_LIMIT_TOLERANCE (the
            message names the field, and the point, joint and value).
    """
    index = joint_map.index(message.joint_names, f"{topic}.joint_names")
    points = message.points
    if not points:
        raise JointStateError(f"{topic}: points is empty")
    count = len(message.joint_names)
    fields: dict[str, np.ndarray | None] = {}
    for field in ("positions", "velocities", "accelerations"):
        lengths = {len(getattr(point, field)) for point in points}
        if lengths == {0} and field != "positions":
            fields[field] = None
            continue
        if lengths != {count}:
            raise JointStateError(f"{topic}: every point's {field} must have {count} entries, "
                                  "one per joint name" + ("" if field == "positions" else
                                                          ", or be empty at every point"))
        fields[field] = stacked_in_chunks(points, field)[:, index]
    times = np.array([point.time_from_start.sec + 1e-9 * point.time_from_start.nanosec
                      for point in points])
    q = fields["positions"]
    assert q is not None
    qd, qdd = fields["velocities"], fields["accelerations"]
    if times[0] < 0.0:
        raise JointStateError(f"{topic}: points[0].time_from_start is {times[0]:g} s; times "
                              "from the start must not be negative")
    if limits is not None:
        check_position_limits(q, limits, joint_map.joint_names, topic)
    if times[0] > 0.0:  # from where the robot is
        times, q = np.concatenate([[0.0], times]), np.vstack([start, q])
        qd = None if qd is None else np.vstack([start_rate, qd])
        qdd = None if qdd is None else np.vstack([np.zeros_like(start), qdd])
    try:
        return JointTrajectoryReference.of(times, q, qd, qdd)
    except ValueError as error:
        raise JointStateError(f"{topic}: {error}") from None


def check_position_limits(q: np.ndarray, limits: PositionLimits, joint_names: Sequence[str],
                          topic: str) -> None:
    """Check a trajectory's positions (points, joints) against the joints' limits.

    Raises:
        JointStateError: a position outside its joint's limits by more than
            POSITION_LIMIT_TOLERANCE, naming the first such point, its joint and value, and
            how many there are.
    """
    outside = (q < limits.lower - POSITION_LIMIT_TOLERANCE) | \
        (q > limits.upper + POSITION_LIMIT_TOLERANCE)  # NaN: refused as not finite, later
    if not outside.any():
        return
    point, joint = np.argwhere(outside)[0]
    raise JointStateError(
        f"{topic}: points[{point}].positions: {joint_names[joint]} at {q[point, joint]:g} is "
        f"outside its limits [{limits.lower[joint]:g}, {limits.upper[joint]:g}] (by more than "
        f"{POSITION_LIMIT_TOLERANCE:g}); {int(outside.sum())} position(s) outside in all"
    )


def finite(quantity: str, values: np.ndarray) -> np.ndarray:
    """`values`, checked to hold no NaN or inf: for what a node computes beyond the Robot's
    functions (a controller's efforts, a preview's trajectory), which the Robot answers
    finite or raises NonFiniteResultError for.

    Raises:
        NonFiniteAnswerError: naming the quantity (the state's magnitudes overflowed it).
    """
    if not np.isfinite(values).all():
        raise NonFiniteAnswerError(
            f"{quantity} is not finite at this state (NaN or inf: magnitudes beyond double "
            "precision); not sent"
        )
    return values


def float_sequence(values: np.ndarray) -> array[float]:
    """A float64[] message field from an array, without a per-element check in Python."""
    sequence = array("d")
    sequence.frombytes(np.ascontiguousarray(values, dtype=float).tobytes())
    return sequence


JOINT_SPACE_QUANTITIES = ("mass_matrix", "bias_forces", "gravity_torques", "acceleration",
                          "coriolis_matrix")
JOINT_SPACE_FIELDS = {"mass matrix": "mass_matrix", "bias forces": "bias_forces",
                      "gravity torques": "gravity_torques", "acceleration": "acceleration",
                      "Coriolis matrix": "coriolis_matrix"}


def joint_space_message(
    robot: Robot,
    state: RobotState,
    methods: JointSpaceMethods = DEFAULT_JOINT_SPACE_METHODS,
    quantities: Collection[str] = JOINT_SPACE_QUANTITIES,
    message: JointSpaceDynamics | None = None,
    external_wrenches: ExternalWrenches | None = None,
) -> JointSpaceDynamics:
    """The chosen quantities of M, b, g, q̈ (only when τ is given) and C at the state's
    (q, q̇) as a JointSpaceDynamics message, by `methods`; the others stay empty. The caller
    fills header and computation_time.

    Args:
        robot: the robot (q its nq coordinates, q̇ and τ its nv).
        state: (q, q̇, τ or None) in the robot's order.
        message: a message of this robot with these quantities to fill again (a node's, for
            each cycle: publishing serializes it at once); a new one when None.
        external_wrenches: frame → wrench pushing the robot, in q̈ (Robot.forward_dynamics).
    """
    q, qd, effort = state.q, state.qd, state.effort
    if message is None:
        message = JointSpaceDynamics(joint_names=list(robot.joint_names))
    message.position = float_sequence(q)
    message.velocity = float_sequence(qd)
    message.effort = message.acceleration = array("d")
    computed = []
    if "mass_matrix" in quantities:
        computed.append(("mass matrix", robot.mass_matrix(q, method=methods.mass_matrix)))
    if "bias_forces" in quantities:
        computed.append(("bias forces", robot.bias_forces(q, qd)))
    if "gravity_torques" in quantities:
        computed.append(("gravity torques", robot.gravity_torques(q)))
    if effort is not None and "acceleration" in quantities:
        message.effort = float_sequence(effort)
        computed.append(("acceleration", robot.forward_dynamics(
            q, qd, effort, method=methods.forward_dynamics, external_wrenches=external_wrenches)))
    if "coriolis_matrix" in quantities:
        computed.append(("Coriolis matrix", robot.coriolis_matrix(q, qd)))
    for name, values in computed:
        setattr(message, JOINT_SPACE_FIELDS[name], float_sequence(values))
    message.mass_matrix_method = methods.mass_matrix
    message.forward_dynamics_method = methods.forward_dynamics
    return message


def operational_space_message(
    robot: Robot, q: np.ndarray, qd: np.ndarray, frame: str, method: str,
    singular_threshold: float, message: OperationalSpaceDynamics | None = None,
) -> OperationalSpaceDynamics:
    """Pose, twist and the operational-space dynamics (Robot.operational_space) of one frame;
    the caller fills header.

    Args:
        message: a message of this robot and frame to fill again (as in
            joint_space_message); a new one when None.

    Raises:
        NonFiniteResultError: a quantity of the frame overflowed (from the Robot).
    """
    task = robot.operational_space(
        q, qd, frame, method=method, singular_threshold=singular_threshold
    )
    pose, twist = robot.frame_pose(q, frame), finite(f"{frame}: twist", task.J @ qd)
    if message is None:
        message = OperationalSpaceDynamics(frame=frame, joint_names=list(robot.joint_names))
    fill_pose(message.pose, pose)
    fill_vectors(twist, message.twist.linear, message.twist.angular)
    message.jacobian = float_sequence(task.J)
    message.inertia = task.Lambda.ravel()
    message.inertia_inverse = task.Lambda_inv.ravel()
    message.dynamically_consistent_inverse = float_sequence(task.Jbar)
    fill_vectors(task.mu, message.coriolis_wrench.force, message.coriolis_wrench.torque)
    fill_vectors(task.p, message.gravity_wrench.force, message.gravity_wrench.torque)
    acceleration = message.bias_acceleration
    fill_vectors(task.Jdot_qd, acceleration.linear, acceleration.angular)
    message.singular = bool(task.singular)
    message.rank = int(task.rank)
    message.condition_number = float(task.condition)
    message.singular_threshold = singular_threshold
    message.method = method
    return message


def operational_space_dynamics(
    message: OperationalSpaceDynamics,
) -> operational_space.OperationalSpaceDynamics:
    """The OperationalSpaceDynamics record of a message (the reverse of
    operational_space_message), for a controller."""
    n = len(message.joint_names)
    return operational_space.OperationalSpaceDynamics(
        frames=(message.frame,),
        J=np.reshape(message.jacobian, (6, n)),
        Lambda_inv=np.reshape(message.inertia_inverse, (6, 6)),
        Lambda=np.reshape(message.inertia, (6, 6)),
        Jbar=np.reshape(message.dynamically_consistent_inverse, (n, 6)),
        mu=six_vector(message.coriolis_wrench.force, message.coriolis_wrench.torque),
        p=six_vector(message.gravity_wrench.force, message.gravity_wrench.torque),
        Jdot_qd=six_vector(message.bias_acceleration.linear, message.bias_acceleration.angular),
        rank=np.array(message.rank),
        condition=np.array(message.condition_number),
    )


def fill_pose(pose: Pose, transform: np.ndarray) -> None:
    """A geometry_msgs/Pose (filled in place) from a 4x4 homogeneous transform."""
    pose.position.x, pose.position.y, pose.position.z = transform[:3, 3].tolist()
    o = pose.orientation
    o.x, o.y, o.z, o.w = quaternion_from_rotation(transform[:3, :3].tolist())


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


def fill_vectors(values: np.ndarray, first: Vector3, second: Vector3) -> None:
    """Two geometry_msgs/Vector3 (filled in place) from the halves of a 6-vector, [linear;
    angular] or [force; torque]."""
    x = values.tolist()
    first.x, first.y, first.z = x[:3]
    second.x, second.y, second.z = x[3:]


def six_vector(first: Vector3, second: Vector3) -> np.ndarray:
    """The 6-vector of two geometry_msgs/Vector3."""
    return np.array([first.x, first.y, first.z, second.x, second.y, second.z])
