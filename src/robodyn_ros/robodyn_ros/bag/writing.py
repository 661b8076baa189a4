"""rosbag2 output with rosbags: joint states (the tests' and benchmarks' recorded runs) and the
dynamics of an analysed run as robodyn_interfaces messages, stamped with the source stamps."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from scipy.spatial.transform import Rotation

from robodyn_ros.bag.analysis import CHUNK, Analysis
from robodyn_ros.bag.errors import BagError
from robodyn_ros.bag.typestore import typestore
from robodyn_ros.robot import Robot
from robodyn_ros.robot.methods import JointSpaceMethods

STORAGES = {"sqlite3": StoragePlugin.SQLITE3, "mcap": StoragePlugin.MCAP}
JOINT_SPACE_TOPIC = "dynamics/joint_space"
OPERATIONAL_SPACE_TOPIC = "dynamics/operational_space"
JOINT_SPACE = "robodyn_interfaces/msg/JointSpaceDynamics"
OPERATIONAL_SPACE = "robodyn_interfaces/msg/OperationalSpaceDynamics"
SINGULAR_THRESHOLD = 1e-4  # the dynamics node's default: Λ damped where Λ⁻¹'s cond > 1e4
_NONE = np.empty(0)


@contextmanager
def open_writer(bag: str | Path, storage: str) -> Iterator[Writer]:
    """A rosbags Writer of a new rosbag2 folder in `storage` ("sqlite3" or "mcap")."""
    path = Path(bag)
    if storage not in STORAGES:
        raise BagError(f"bag {path}: unknown storage '{storage}'; choose sqlite3 or mcap")
    if path.exists():
        raise BagError(f"bag {path}: already exists; choose a new output folder")
    writer = Writer(path, version=9, storage_plugin=STORAGES[storage])
    writer.open()
    try:
        yield writer
    finally:
        writer.close()


@dataclass(frozen=True, eq=False)
class JointStateSeries:
    """sensor_msgs/JointState messages to write, one per header stamp.

    Attributes:
        joint_names: every message's names.
        stamps: (B,) int ns.
        position: (B, n).
        velocity: (B, n), or None for empty velocity fields.
        effort: (B, n), or None for empty effort fields.
    """

    joint_names: Sequence[str]
    stamps: np.ndarray
    position: np.ndarray
    velocity: np.ndarray | None = None
    effort: np.ndarray | None = None


def write_joint_states(
    bag: str | Path,
    storage: str,
    states: JointStateSeries,
    topic: str = "/joint_states",
    recorded: np.ndarray | None = None,
) -> None:
    """A bag of sensor_msgs/JointState on `topic` (add_joint_states)."""
    with open_writer(bag, storage) as writer:
        add_joint_states(writer, states, topic, recorded)


def add_joint_states(writer: Writer, states: JointStateSeries, topic: str = "/joint_states",
                     recorded: np.ndarray | None = None) -> None:
    """The messages of `states` on `topic` of an open bag, recorded at the times `recorded`
    (int ns; default: the stamps)."""
    store = typestore()
    JointState = store.types["sensor_msgs/msg/JointState"]
    names = list(states.joint_names)
    position = np.ascontiguousarray(states.position, dtype=float)
    velocity, effort = (
        None if values is None else np.ascontiguousarray(values, dtype=float)
        for values in (states.velocity, states.effort)
    )
    connection = writer.add_connection(topic, JointState.__msgtype__, typestore=store)
    stamps = np.asarray(states.stamps, dtype=np.int64).tolist()
    times = stamps if recorded is None else np.asarray(recorded, dtype=np.int64).tolist()
    for k, (stamp, time_recorded) in enumerate(zip(stamps, times, strict=True)):
        message = JointState(
            header=header(stamp, ""),
            name=names,
            position=position[k],
            velocity=_NONE if velocity is None else velocity[k],
            effort=_NONE if effort is None else effort[k],
        )
        data = store.serialize_cdr(message, JointState.__msgtype__)
        writer.write(connection, time_recorded, data)


def header(stamp: int, frame_id: str) -> Any:
    """A std_msgs/Header of rosbags' typestore at `stamp` (int ns)."""
    types = typestore().types
    seconds, nanoseconds = divmod(stamp, 1_000_000_000)
    Time, Header = types["builtin_interfaces/msg/Time"], types["std_msgs/msg/Header"]
    return Header(stamp=Time(sec=seconds, nanosec=nanoseconds), frame_id=frame_id)


def write_dynamics(
    bag: str | Path,
    robot: Robot,
    analysis: Analysis,
    *,
    forward_dynamics_method: str = "aba",
    chunk: int = CHUNK,
    progress: Callable[[int], None] | None = None,
) -> None:
    """The analysed run's dynamics as a bag in the input's storage: JointSpaceDynamics on
    dynamics/joint_space (q, q̇ used, M, b, g and, where efforts were recorded, τ and
    q̈ = M⁻¹(τ − b)) and OperationalSpaceDynamics of each analysed frame on
    dynamics/operational_space, each stamped (and recorded) at its joint state's stamp, as
    dynamics_node publishes them live."""
    run, store = analysis.run, typestore()
    frames = [measures.frame for measures in analysis.frames]
    methods = JointSpaceMethods(analysis.mass_matrix_method, forward_dynamics_method)
    with open_writer(bag, run.storage) as writer:
        joint_space = writer.add_connection(JOINT_SPACE_TOPIC, JOINT_SPACE, typestore=store)
        operational = (
            writer.add_connection(OPERATIONAL_SPACE_TOPIC, OPERATIONAL_SPACE, typestore=store)
            if frames else None
        )
        for lo in range(0, len(run), chunk):
            part = slice(lo, min(lo + chunk, len(run)))
            for connection, stamp, message in _chunk_messages(robot, analysis, part, methods):
                target = joint_space if connection == JOINT_SPACE else operational
                assert target is not None  # operational-space messages only with frames
                writer.write(target, stamp, store.serialize_cdr(message, connection))
            if progress is not None:
                progress(part.stop - part.start)


def _chunk_messages(
    robot: Robot, analysis: Analysis, part: slice, methods: JointSpaceMethods
) -> Iterator[tuple[str, int, Any]]:
    """(message type, stamp, message) of one chunk of samples, in stamp order."""
    started = time.perf_counter()
    joint_space = _joint_space_messages(robot, analysis, part, methods)
    operational = [
        _operational_space_messages(robot, analysis, part, measures.frame)
        for measures in analysis.frames
    ]
    per_sample = (time.perf_counter() - started) / (part.stop - part.start)
    for k, stamp in enumerate(analysis.run.stamps[part].tolist()):
        message = joint_space(k, stamp)
        message.computation_time = per_sample
        yield JOINT_SPACE, stamp, message
        for frame_messages in operational:
            yield OPERATIONAL_SPACE, stamp, frame_messages(k, stamp)


def _joint_space_messages(
    robot: Robot, analysis: Analysis, part: slice, methods: JointSpaceMethods
) -> Callable[[int, int], Any]:
    """A function (k, stamp) → the JointSpaceDynamics message of sample k of the chunk."""
    q, qd = analysis.run.position[part], analysis.velocity[part]
    M = robot.mass_matrix(q, method=methods.mass_matrix).reshape(len(q), -1)
    bias, gravity = robot.bias_forces(q, qd), robot.gravity_torques(q)
    effort, acceleration = _measured_effort(robot, analysis, part, q, qd,
                                            methods.forward_dynamics)
    message_type = typestore().types[JOINT_SPACE]
    names, root = list(robot.joint_names), robot.model.root_link

    def message(k: int, stamp: int) -> Any:
        sample_effort, sample_acceleration = _NONE, _NONE  # empty where none was recorded
        if effort is not None and acceleration is not None and not np.isnan(effort[k, 0]):
            sample_effort, sample_acceleration = effort[k], acceleration[k]
        return message_type(
            header=header(stamp, root), joint_names=names, position=q[k], velocity=qd[k],
            mass_matrix=M[k], bias_forces=bias[k], gravity_torques=gravity[k],
            coriolis_matrix=_NONE, effort=sample_effort, acceleration=sample_acceleration,
            mass_matrix_method=methods.mass_matrix,
            forward_dynamics_method=methods.forward_dynamics,
            computation_time=0.0,
        )

    return message


def _measured_effort(
    robot: Robot, analysis: Analysis, part: slice, q: np.ndarray, qd: np.ndarray, method: str
) -> tuple[np.ndarray, np.ndarray] | tuple[None, None]:
    """(τ, q̈ = forward dynamics of τ) of the chunk's measured efforts, or (None, None);
    q̈ is computed on the rows with efforts (the others stay NaN)."""
    if analysis.run.effort is None:
        return None, None
    effort = analysis.run.effort[part]
    acceleration = np.full_like(effort, np.nan)
    rows = ~np.isnan(effort[:, 0])
    if rows.any():
        acceleration[rows] = robot.forward_dynamics(q[rows], qd[rows], effort[rows], method=method)
    return effort, acceleration


def _operational_space_messages(
    robot: Robot, analysis: Analysis, part: slice, frame: str
) -> Callable[[int, int], Any]:
    """A function (k, stamp) → the OperationalSpaceDynamics message of a frame at sample k."""
    q, qd = analysis.run.position[part], analysis.velocity[part]
    task = robot.operational_space(q, qd, frame, singular_threshold=SINGULAR_THRESHOLD)
    pose = robot.frame_pose(q, frame)
    quaternion = Rotation.from_matrix(pose[:, :3, :3]).as_quat()  # x, y, z, w
    quaternion *= np.where(quaternion[:, 3:] < 0.0, -1.0, 1.0)
    twist = np.einsum("bij,bj->bi", task.J, qd)
    size, n = len(q), robot.nv
    J, Jbar = task.J.reshape(size, 6 * n), task.Jbar.reshape(size, 6 * n)
    Lambda, Lambda_inv = task.Lambda.reshape(size, 36), task.Lambda_inv.reshape(size, 36)
    types = typestore().types
    message_type, root = types[OPERATIONAL_SPACE], robot.model.root_link
    names = list(robot.joint_names)
    Pose, Point, Quaternion = (
        types[f"geometry_msgs/msg/{kind}"] for kind in ("Pose", "Point", "Quaternion")
    )

    def message(k: int, stamp: int) -> Any:
        x, y, z = pose[k, :3, 3].tolist()
        qx, qy, qz, qw = quaternion[k].tolist()
        return message_type(
            header=header(stamp, root), frame=frame, joint_names=names,
            pose=Pose(
                position=Point(x=x, y=y, z=z), orientation=Quaternion(x=qx, y=qy, z=qz, w=qw)
            ),
            twist=six_vector_message("Twist", ("linear", "angular"), twist[k]),
            jacobian=J[k], inertia=Lambda[k], inertia_inverse=Lambda_inv[k],
            dynamically_consistent_inverse=Jbar[k],
            coriolis_wrench=six_vector_message("Wrench", ("force", "torque"), task.mu[k]),
            gravity_wrench=six_vector_message("Wrench", ("force", "torque"), task.p[k]),
            bias_acceleration=six_vector_message("Accel", ("linear", "angular"), task.Jdot_qd[k]),
            singular=bool(task.rank[k] < 6), rank=int(task.rank[k]),
            condition_number=float(task.condition[k]), singular_threshold=SINGULAR_THRESHOLD,
            method="dense",
        )

    return message


def six_vector_message(kind: str, halves: tuple[str, str], values: np.ndarray) -> Any:
    """A geometry_msgs Twist, Wrench or Accel of rosbags' typestore from a 6-vector."""
    types = typestore().types
    Vector3 = types["geometry_msgs/msg/Vector3"]
    x = values.tolist()
    return types[f"geometry_msgs/msg/{kind}"](
        **{halves[0]: Vector3(x=x[0], y=x[1], z=x[2]), halves[1]: Vector3(x=x[3], y=x[4], z=x[5])}
    )
