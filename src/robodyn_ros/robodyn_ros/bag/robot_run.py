"""A robot's recorded run: its joint states with, for a floating base, the base's odometry, and
the external wrenches on the robot, all at the joint states' stamps.

A floating base is read from nav_msgs/Odometry as the nodes read it (REP 105,
robodyn_ros.ros.odometry): the pose of child_frame_id, the robot's root link, in the world, and
its twist in the base frame, the free flyer's q[:7] and v[:6]. An external wrench is a
geometry_msgs/WrenchStamped as the nodes take one (robodyn_ros.ros.wrenches): it acts on the
robot frame header.frame_id, at the frame's origin, in world-aligned axes; a contact force
measured or estimated at a foot, a crane's pull on the base. A wrench topic may carry several
frames.

Every topic is interpolated at the joint states' stamps: linearly (the quaternion componentwise
along the shorter arc, then normalised), and only inside each topic's span of stamps: joint
states outside the span every topic covers are dropped, with a BagWarning, never extrapolated.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from robodyn_ros.bag.errors import BagError, BagWarning
from robodyn_ros.bag.reading import (
    READ_ERRORS,
    RecordedRun,
    header_stamps,
    open_bag,
    raw_messages,
    require_finite,
    stamp_order,
    topic_connections,
)
from robodyn_ros.bag.typestore import typestore
from robodyn_ros.dynamics.tree import UNIT_TOLERANCE
from robodyn_ros.robot import Robot

ODOMETRY = "nav_msgs/msg/Odometry"
WRENCH = "geometry_msgs/msg/WrenchStamped"


@dataclass(frozen=True, eq=False)
class RecordedSeries:
    """The messages of one topic (of one frame, for wrenches), sorted by stamp.

    Attributes:
        topic: the topic.
        frame: the frame they are of: an odometry's child_frame_id, a wrench's header.frame_id.
        stamps: (K,) int64 ns.
        values: (K, m): an odometry's pose (7) and twist (6), a wrench's [force; torque].
    """

    topic: str
    frame: str
    stamps: np.ndarray
    values: np.ndarray


@dataclass(frozen=True, eq=False)
class RobotRun:
    """A robot's run at its joint states' stamps.

    Attributes:
        joints: the joint states, kept where every topic has data.
        base_pose: (B, 7) x y z, qx qy qz qw: a floating base in the world; (B, 0) for a
            fixed base.
        base_twist: (B, 6) [linear; angular]: a floating base's velocity in the base frame;
            (B, 0) for a fixed base.
        wrenches: frame → (B, 6) the external wrench on it, world-aligned at its origin.
    """

    joints: RecordedRun
    base_pose: np.ndarray
    base_twist: np.ndarray
    wrenches: dict[str, np.ndarray]

    def configurations(self) -> np.ndarray:
        """q (B, nq): the base's pose, then the joints'."""
        return np.hstack([self.base_pose, self.joints.position])

    def generalized_forces(self, robot: Robot) -> np.ndarray:
        """(B, nv): what the recorded forces do on each velocity row: the joints' efforts (NaN
        rows where a message had none), nothing on an unactuated floating base, plus Σ J(q)ᵀ w
        of the external wrenches. The regressor's Y π equals it."""
        assert self.joints.effort is not None
        effort = np.hstack([np.zeros_like(self.base_twist), self.joints.effort])
        q = self.configurations()
        for frame, wrench in self.wrenches.items():
            effort += np.einsum("bkn,bk->bn", robot.jacobian(q, frame), wrench)
        return effort


def robot_run(bag: str | Path, joints: RecordedRun, robot: Robot, odometry_topic: str,
              wrench_topics: Sequence[str] = ()) -> RobotRun:
    """The joint states `joints` of `bag` with, for a floating base, the base's odometry on
    `odometry_topic`, and the external wrenches on `wrench_topics`.

    Raises:
        BagError: a topic missing or of another type, an odometry of another child frame than
            the robot's root link or with a quaternion not of unit norm, a wrench on a frame
            the robot does not have, values that are not finite, or no joint state inside the
            span of every topic.
    """
    odometry = _base_odometry(bag, robot, odometry_topic) if robot.model.floating_base else None
    wrenches = [series for topic in wrench_topics for series in read_wrenches(bag, topic)]
    for series in wrenches:
        if series.frame not in robot.frame_names:
            raise BagError(f"bag {bag}, topic '{series.topic}': header.frame_id '{series.frame}'"
                           f" is not a frame of robot '{robot.model.name}': name the frame the "
                           "wrench acts on")
    spans = [odometry, *wrenches] if odometry is not None else wrenches
    joints = _samples(joints, _inside_every_span(joints, spans))
    stamps = joints.stamps
    pose, twist = np.zeros((len(stamps), 0)), np.zeros((len(stamps), 0))
    if odometry is not None:
        pose = _interpolated(odometry.values[:, :7], odometry.stamps, stamps)
        pose[:, 3:7] = _interpolated_quaternions(odometry.values[:, 3:7], odometry.stamps,
                                                 stamps)
        twist = _interpolated(odometry.values[:, 7:], odometry.stamps, stamps)
    on_frames: dict[str, np.ndarray] = {}
    for series in wrenches:
        wrench = _interpolated(series.values, series.stamps, stamps)
        on_frames[series.frame] = on_frames.get(series.frame, 0.0) + wrench
    return RobotRun(joints, pose, twist, on_frames)


def _base_odometry(bag: str | Path, robot: Robot, topic: str) -> RecordedSeries:
    """The odometry of a floating base, checked to be of its root link."""
    odometry = read_odometry(bag, topic)
    root = robot.model.root_link
    if odometry.frame.rpartition("/")[2] != root:
        raise BagError(f"bag {bag}, topic '{topic}': child_frame_id is '{odometry.frame}', "
                       f"not the robot's root link '{root}' (the base the odometry must be "
                       "of)")
    return odometry


def read_odometry(bag: str | Path, topic: str) -> RecordedSeries:
    """The nav_msgs/Odometry of `topic`: pose (7) and twist (6) per message, sorted by stamp.

    Raises:
        BagError: as robot_run, for this topic.
    """
    messages, stamps, where = _messages(bag, topic, ODOMETRY)
    order = stamp_order(stamps, where)
    messages, stamps = [messages[k] for k in order], stamps[order]
    frames = {message.child_frame_id for message in messages}
    if len(frames) != 1:
        raise BagError(f"{where}: the odometry is of several child frames {sorted(frames)}; "
                       "a run has one base")
    values = np.array([_pose_and_twist(message) for message in messages]).reshape(-1, 13)
    require_finite(values, "pose or twist", where)
    norms = np.linalg.norm(values[:, 3:7], axis=1)
    off = np.flatnonzero(np.abs(norms - 1.0) > UNIT_TOLERANCE)
    if off.size:
        raise BagError(f"{where}: pose.pose.orientation is not a unit quaternion in "
                       f"{off.size} message(s), the first of norm {norms[off[0]]:.9g} "
                       f"(to {UNIT_TOLERANCE:g})")
    return RecordedSeries(topic, frames.pop(), stamps, values)


def read_wrenches(bag: str | Path, topic: str) -> list[RecordedSeries]:
    """The geometry_msgs/WrenchStamped of `topic`, one series per header.frame_id.

    Raises:
        BagError: as robot_run, for this topic.
    """
    messages, stamps, where = _messages(bag, topic, WRENCH)
    values = np.array([_wrench(message.wrench) for message in messages]).reshape(-1, 6)
    require_finite(values, "wrench", where)
    frames = np.array([message.header.frame_id for message in messages])
    series = []
    for frame in dict.fromkeys(frames.tolist()):
        mine = frames == frame
        order = stamp_order(stamps[mine], f"{where}, frame '{frame}'")
        series.append(RecordedSeries(topic, frame, stamps[mine][order], values[mine][order]))
    return series


def _messages(bag: str | Path, topic: str, msgtype: str) -> tuple[list[Any], np.ndarray, str]:
    """The deserialized messages of `topic` in recorded order, their stamps (header, else
    receive times; unstamped ones among stamped dropped) and where they are, for errors."""
    path = Path(bag)
    where = f"bag {path}, topic '{topic}'"
    with open_bag(path) as reader:
        raws, receive_times = raw_messages(
            reader, topic_connections(reader, path, topic, msgtype), path, topic)
    store = typestore()
    try:
        messages: list[Any] = [store.deserialize_cdr(raw, msgtype) for raw in raws]
    except READ_ERRORS as error:
        raise BagError(f"{where}: a message cannot be decoded (damaged file?): "
                       f"{type(error).__name__}: {error}") from error
    stamps = np.array([message.header.stamp.sec * 10**9 + message.header.stamp.nanosec
                       for message in messages], dtype=np.int64)
    stamps = header_stamps(stamps, receive_times, where)
    stamped = stamps != 0  # all, unless a driver left some messages unstamped
    if not stamped.all():
        warnings.warn(f"{where}: {np.count_nonzero(~stamped)} of {len(stamps)} messages have "
                      "a zero header stamp and are dropped: when they were is not known",
                      BagWarning, stacklevel=4)
        messages = [message for message, kept in zip(messages, stamped, strict=True) if kept]
        stamps = stamps[stamped]
    return messages, stamps, where


def _pose_and_twist(message: Any) -> list[float]:
    pose, twist = message.pose.pose, message.twist.twist
    p, o = pose.position, pose.orientation
    return [p.x, p.y, p.z, o.x, o.y, o.z, o.w, *_wrench_like(twist.linear, twist.angular)]


def _wrench(wrench: Any) -> list[float]:
    return _wrench_like(wrench.force, wrench.torque)


def _wrench_like(first: Any, second: Any) -> list[float]:
    return [first.x, first.y, first.z, second.x, second.y, second.z]


def _inside_every_span(joints: RecordedRun, series: list[RecordedSeries]) -> np.ndarray:
    """The joint states inside the span of stamps of every series, a warning for the others."""
    stamps = joints.stamps
    kept = np.ones(len(stamps), dtype=bool)
    for one in series:
        kept &= (stamps >= one.stamps[0]) & (stamps <= one.stamps[-1])
    where = f"bag {joints.bag}, topic '{joints.topic}'"
    if not kept.any():
        spans = ", ".join(f"'{one.topic}' ({one.frame}) {one.stamps[0]}..{one.stamps[-1]} ns"
                          for one in series)
        raise BagError(f"{where}: no joint state ({stamps[0]}..{stamps[-1]} ns) lies inside "
                       f"the span of every topic: {spans}")
    if not kept.all():
        warnings.warn(f"{where}: {np.count_nonzero(~kept)} of {len(kept)} joint states lie "
                      "outside the span of the odometry or of a wrench topic and are dropped",
                      BagWarning, stacklevel=3)
    return kept


def _samples(run: RecordedRun, kept: np.ndarray) -> RecordedRun:
    def part(values: np.ndarray | None) -> np.ndarray | None:
        return None if values is None else values[kept]

    return dataclasses.replace(run, stamps=run.stamps[kept], position=run.position[kept],
                               velocity=part(run.velocity), effort=part(run.effort))


def _interpolated(values: np.ndarray, stamps: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Each column of `values` (K, m) interpolated linearly at the stamps `at` (B,)."""
    if len(stamps) == 1:
        return np.repeat(values, len(at), axis=0)
    t, t_at = (stamps - stamps[0]) * 1e-9, (at - stamps[0]) * 1e-9
    return np.column_stack([np.interp(t_at, t, column) for column in values.T])


def _interpolated_quaternions(quaternions: np.ndarray, stamps: np.ndarray, at: np.ndarray
                              ) -> np.ndarray:
    """Unit quaternions (K, 4) interpolated at `at`: each made to lie on the side of its
    predecessor (q and −q are one orientation), then componentwise and normalised."""
    signs = np.ones(len(quaternions))
    signs[1:] = np.where(np.einsum("ij,ij->i", quaternions[1:], quaternions[:-1]) < 0.0,
                         -1.0, 1.0)
    continuous = quaternions * np.cumprod(signs)[:, None]
    interpolated = _interpolated(continuous, stamps, at)
    unit: np.ndarray = interpolated / np.linalg.norm(interpolated, axis=1, keepdims=True)
    return unit


__all__ = ["RecordedSeries", "RobotRun", "read_odometry", "read_wrenches", "robot_run"]
