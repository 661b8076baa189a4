"""Joint states out of a rosbag2 (sqlite3 or mcap), in a robot's joint order.

Messages that each carry some of the joints (an arm's and its gripper's, or one driver's two
groups one after the other) are merged by name in recorded order, as the nodes merge them
(robodyn_ros.robot.state_merge): a sample per merged state (a run of messages in which no joint
repeats) once every joint has been heard, at the stamp of the last message merged into it; a
joint not heard within DEFAULT_MAX_AGE (by the bag's receive times) is an error, as a node
refuses such a state. Every field's length must be the names'.

Stamps are the messages' header stamps (the bag's receive times when every header stamp is
zero). Samples recorded out of stamp order are sorted with a BagWarning; two samples with one
stamp are an error, since no time derivative exists between them.

A bag whose metadata's custom_data has EFFORT_LAG_KEY (s) recorded efforts that lag its states
by that much: each sample's effort is then the recorded ones interpolated at its stamp plus the
lag (the last sample's, past the end, the last recorded). `robodyn sim --record` writes half the
publish period there: sim_node's effort at a stamp is the command it held over the period before
it, so the effort about the stamp, as the derivatives of the states there see it, is the mean of
that one and the next.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.interfaces import Connection, TopicInfo
from rosbags.rosbag2 import Reader
from rosbags.rosbag2.errors import ReaderError

from robodyn_ros.bag.errors import BagError, BagWarning
from robodyn_ros.bag.joint_state_cdr import UniformJointStates, decode_uniform
from robodyn_ros.bag.typestore import typestore
from robodyn_ros.robot.state_merge import (
    FIELDS,
    MergedState,
    StateGrouping,
    StateMerge,
    StateMergeError,
)

JOINT_STATE = "sensor_msgs/msg/JointState"
STORAGE_SUFFIXES = {".db3": "sqlite3", ".mcap": "mcap"}
# what rosbags, sqlite3 and the mcap parser raise on a damaged file
READ_ERRORS = (ReaderError, sqlite3.Error, OSError, EOFError, ValueError, KeyError, IndexError)

EFFORT_LAG_KEY = "robodyn_ros.effort_lag"
"""The key of a bag's custom_data that says how far its efforts lag its states, s."""


@dataclass(frozen=True, eq=False)
class RecordedRun:
    """The joint states of one topic, in the robot's joint order, sorted by stamp.

    stamps (B,): int64 ns. position (B, n). velocity (B, n), or None when some message has
    none. effort (B, n) with NaN rows for messages without efforts, or None when no message
    has any. storage: "sqlite3" or "mcap", as the bag.
    """

    bag: Path
    topic: str
    storage: str
    joint_names: tuple[str, ...]
    stamps: np.ndarray
    position: np.ndarray
    velocity: np.ndarray | None
    effort: np.ndarray | None

    @property
    def times(self) -> np.ndarray:
        """Seconds since the first sample."""
        seconds: np.ndarray = (self.stamps - self.stamps[0]) * 1e-9
        return seconds

    def __len__(self) -> int:
        return len(self.stamps)


@dataclass(frozen=True)
class _Columns:
    """The messages' fields in the robot's joint order, a row per message in recorded order;
    velocity and effort rows are NaN where has_velocity and has_effort are False."""

    stamps: np.ndarray
    receive_times: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    has_velocity: np.ndarray
    effort: np.ndarray
    has_effort: np.ndarray


def storage_of(bag: Path) -> str:
    """"sqlite3" or "mcap": the storage of a rosbag2 folder, from its data files."""
    for suffix, storage in STORAGE_SUFFIXES.items():
        if any(bag.glob(f"*{suffix}")):
            return storage
    raise BagError(f"bag {bag}: no .db3 or .mcap data file in the folder")


@contextmanager
def open_bag(bag: str | Path) -> Iterator[Reader]:
    """An open rosbags Reader of a rosbag2 folder, or a BagError naming what is wrong."""
    path = Path(bag)
    if not (path / "metadata.yaml").is_file():
        raise BagError(f"bag {path}: not a rosbag2 folder (no metadata.yaml in it)")
    reader = Reader(path)
    try:
        reader.open()
    except READ_ERRORS as error:
        raise BagError(f"bag {path}: cannot be opened (damaged or truncated?): {error}") from error
    try:
        yield reader
    finally:
        reader.close()


def read_joint_states(
    bag: str | Path, topic: str, joint_names: Sequence[str]
) -> RecordedRun:
    """The sensor_msgs/JointState messages of `topic`, the joints picked by name (extra joints
    ignored with a BagWarning), sorted by stamp."""
    path = Path(bag)
    with open_bag(path) as reader:
        connections = topic_connections(reader, path, topic)
        names = tuple(joint_names)
        columns = _read_columns(reader, connections, path, topic, names)
        lag = effort_lag(reader, path)
    run = _recorded_run(path, topic, names, columns)
    if lag == 0.0 or run.effort is None:
        return run
    times = run.stamps * 1e-9
    aligned = np.column_stack([np.interp(times + lag, times, column) for column in run.effort.T])
    return dataclasses.replace(run, effort=aligned)


def effort_lag(reader: Reader, bag: Path) -> float:
    """The lag of the bag's efforts behind its states, s: EFFORT_LAG_KEY of its custom_data,
    or 0.

    Raises:
        BagError: a value that is not a number ≥ 0.
    """
    metadata = getattr(reader.storage, "metadata", None)  # a folder's metadata.yaml
    custom = getattr(metadata, "custom", None) or {}
    text = custom.get(EFFORT_LAG_KEY, "0")
    try:
        lag = float(text)
    except ValueError:
        lag = float("nan")
    if not (np.isfinite(lag) and lag >= 0.0):
        raise BagError(f"bag {bag}: custom_data {EFFORT_LAG_KEY} must be seconds ≥ 0; got "
                       f"{text!r}")
    return lag


def topic_info(reader: Reader, bag: Path, topic: str) -> TopicInfo:
    """rosbags' TopicInfo (msgtype, connections) of a topic, or a BagError listing the bag's
    topics and their types. Its msgtype is None when the topic's connections have different
    types."""
    topics = reader.topics
    if topic not in topics:
        listed = ", ".join(f"{name} ({info.msgtype})" for name, info in sorted(topics.items()))
        raise BagError(f"bag {bag}: no topic '{topic}'; the bag's topics: {listed or 'none'}")
    return topics[topic]


def topic_connections(reader: Reader, bag: Path, topic: str, msgtype: str = JOINT_STATE
                      ) -> list[Connection]:
    """The connections of a topic of `msgtype`, or a BagError naming the topic's type."""
    info = topic_info(reader, bag, topic)
    if info.msgtype != msgtype:
        raise BagError(f"bag {bag}: topic '{topic}' holds {info.msgtype}, not {msgtype}")
    return info.connections


def _read_columns(
    reader: Reader,
    connections: list[Connection],
    bag: Path,
    topic: str,
    joint_names: tuple[str, ...],
) -> _Columns:
    raws, receive_times = raw_messages(reader, connections, bag, topic)
    picker = _JointPicker(joint_names, bag, topic)
    try:
        first: Any = typestore().deserialize_cdr(raws[0], JOINT_STATE)  # a JointState
        uniform = decode_uniform(raws, tuple(first.name))
        if uniform is not None:
            return _uniform_columns(uniform, picker, receive_times)
        return _message_columns(raws, picker, receive_times)
    except BagError:
        raise
    except READ_ERRORS as error:
        raise BagError(
            f"bag {bag}: a '{topic}' message cannot be decoded (damaged file?): "
            f"{type(error).__name__}: {error}"
        ) from error


def raw_messages(
    reader: Reader, connections: list[Connection], bag: Path, topic: str
) -> tuple[list[bytes], np.ndarray]:
    """The CDR bytes of every message of the topic and the times the bag recorded them; a
    BagError when the file ends early or breaks."""
    raws, times = [], []
    expected = sum(connection.msgcount for connection in connections)
    try:
        for _, receive_time, raw in reader.messages(connections=connections):
            raws.append(raw)
            times.append(receive_time)
    except READ_ERRORS as error:
        raise BagError(
            f"bag {bag}: reading '{topic}' failed after {len(raws)} of {expected} messages "
            f"(damaged or truncated file?): {type(error).__name__}: {error}"
        ) from error
    if len(raws) != expected:
        raise BagError(
            f"bag {bag}: '{topic}' has {len(raws)} readable messages of the {expected} its "
            "metadata lists: the file is truncated"
        )
    if not raws:
        raise BagError(f"bag {bag}: topic '{topic}' has no messages")
    return raws, np.array(times, dtype=np.int64)


def _uniform_columns(
    uniform: UniformJointStates, picker: _JointPicker, receive_times: np.ndarray
) -> _Columns:
    """Messages of one layout: each field has the same length in every message, checked
    once against the names (the first message stands for all)."""
    count = len(uniform.names)
    for field, values in zip(FIELDS, (uniform.position, uniform.velocity, uniform.effort),
                             strict=True):
        if values is not None and values.shape[1] != count:
            raise BagError(
                f"{picker.where}: message 0 (stamp {uniform.stamps[0]} ns), as every message "
                f"of the topic, has {values.shape[1]} {field} values for {count} names"
            )
    index = picker.index(uniform.names)
    size, n = len(uniform.stamps), len(index)
    velocity, effort = (
        np.full((size, n), np.nan) if values is None else values[:, index]
        for values in (uniform.velocity, uniform.effort)
    )
    return _Columns(
        uniform.stamps, receive_times, uniform.position[:, index],
        velocity, np.full(size, uniform.velocity is not None),
        effort, np.full(size, uniform.effort is not None),
    )


def _message_columns(
    raws: list[bytes], picker: _JointPicker, receive_times: np.ndarray
) -> _Columns:
    """Each message deserialised by rosbags: any mix of name orders and field lengths, and
    messages that each carry some of the joints (an arm's and its gripper's, or one driver's
    two groups), merged by name as the nodes merge them (robodyn_ros.robot.state_merge): a row per
    merged state once every joint has been heard, at the stamp and receive time of the last
    message merged into it."""
    store, merge, grouping = typestore(), StateMerge(picker.joint_names), StateGrouping()
    rows: list[tuple[int, int, MergedState]] = []  # per state: stamp, receive time, values
    names_seen: dict[str, None] = {}  # every name, in order of appearance
    newest: tuple[int, int, MergedState] | None = None  # the current state, once complete
    for k, raw in enumerate(raws):
        message: Any = store.deserialize_cdr(raw, JOINT_STATE)  # a JointState
        stamp = message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec
        received = int(receive_times[k])
        names = tuple(message.name)
        names_seen.update(dict.fromkeys(names))
        source = f"{picker.where}: message {k} (stamp {stamp} ns)"
        joints = [name for name in names if name in picker.joint_set]
        if names and not joints:
            continue  # none of the robot's joints
        try:
            merge.add(names, (message.position, message.velocity, message.effort), received,
                      source)
            if grouping.join(joints) and newest is not None:
                rows.append(newest)
            newest = (stamp, received, merge.state(received, source)) if merge.heard_all \
                else None
        except StateMergeError as error:
            raise BagError(str(error)) from error
    picker.index(tuple(names_seen))  # every joint named somewhere, else the error naming them
    assert newest is not None  # every joint heard: the last message completed a state
    rows.append(newest)
    velocity = np.array([row.velocity for _, _, row in rows])
    effort = np.array([row.effort for _, _, row in rows])
    has_velocity, has_effort = (~np.isnan(values).any(axis=1) for values in (velocity, effort))
    effort[~has_effort] = np.nan  # a row without every joint's effort has none
    return _Columns(
        np.array([stamp for stamp, _, _ in rows], dtype=np.int64),
        np.array([received for _, received, _ in rows], dtype=np.int64),
        np.array([row.position for _, _, row in rows]), velocity, has_velocity, effort,
        has_effort,
    )


class _JointPicker:
    """The robot's joints out of a message's name list, with one index map per name list."""

    def __init__(self, joint_names: tuple[str, ...], bag: Path, topic: str) -> None:
        self.joint_names, self.where = joint_names, f"bag {bag}, topic '{topic}'"
        self.joint_set = frozenset(joint_names)
        self._maps: dict[tuple[str, ...], np.ndarray] = {}

    def index(self, names: tuple[str, ...]) -> np.ndarray:
        index = self._maps.get(names)
        if index is None:
            index = self._maps[names] = self._map(names)
        return index

    def _map(self, names: tuple[str, ...]) -> np.ndarray:
        position = {name: k for k, name in enumerate(names)}
        missing = [name for name in self.joint_names if name not in position]
        extra = [name for name in names if name not in self.joint_names]
        if missing:
            raise BagError(
                f"{self.where}: the messages name joints {', '.join(names) or '(none)'}; "
                f"the URDF's joints {', '.join(missing)} are not among them"
                + (f", and {', '.join(extra)} are not in the URDF" if extra else "")
            )
        if extra:
            warnings.warn(
                f"{self.where}: joints not in the URDF are ignored: {', '.join(extra)}",
                BagWarning, stacklevel=4,
            )
        return np.array([position[name] for name in self.joint_names], dtype=np.int64)


def _recorded_run(bag: Path, topic: str, names: tuple[str, ...], columns: _Columns) -> RecordedRun:
    where = f"bag {bag}, topic '{topic}'"
    stamps = header_stamps(columns.stamps, columns.receive_times, where)
    order = stamp_order(stamps, where)
    position = columns.position[order]
    require_finite(position, "position", where)
    velocity = _complete_field(columns.velocity, columns.has_velocity, "velocity", where)
    if velocity is not None:
        velocity = velocity[order]
        require_finite(velocity, "velocity", where)
    effort = _partial_field(columns.effort, columns.has_effort, where)
    if effort is not None:
        effort = effort[order]
        require_finite(effort, "effort", where, rows=columns.has_effort[order])
    return RecordedRun(
        bag, topic, storage_of(bag), names, stamps[order], position, velocity, effort
    )


def header_stamps(stamps: np.ndarray, receive_times: np.ndarray, where: str) -> np.ndarray:
    """The messages' header stamps, or the times the bag recorded them (with a BagWarning)
    when every header stamp is zero."""
    if not stamps.any():
        warnings.warn(
            f"{where}: every header stamp is zero; using the times the bag recorded instead",
            BagWarning, stacklevel=4,
        )
        return receive_times
    return stamps


def stamp_order(stamps: np.ndarray, where: str) -> np.ndarray:
    """Indices that sort the messages by stamp: a warning when the bag's order differs, an
    error when two messages share a stamp."""
    backwards = int(np.count_nonzero(np.diff(stamps) < 0))
    order = np.argsort(stamps, kind="stable")
    if backwards:
        warnings.warn(
            f"{where}: header stamps go backwards {backwards} time(s) in the recorded order; "
            "the messages are analysed in stamp order",
            BagWarning, stacklevel=4,
        )
    sorted_stamps = stamps[order]
    repeated = np.flatnonzero(np.diff(sorted_stamps) == 0)
    if repeated.size:
        first = order[repeated[0] : repeated[0] + 2]
        raise BagError(
            f"{where}: {repeated.size} message(s) repeat an earlier header stamp (first: "
            f"messages {first[0]} and {first[1]} at {sorted_stamps[repeated[0]]} ns); stamps "
            "must increase strictly to differentiate over time"
        )
    return order


def _complete_field(
    values: np.ndarray, present: np.ndarray, field: str, where: str
) -> np.ndarray | None:
    """The field when every message has it; None (with a warning if only some lack it)."""
    if present.all():
        return values
    if present.any():
        warnings.warn(
            f"{where}: {np.count_nonzero(~present)} of {len(present)} messages have no "
            f"{field}; it is derived from the positions for every message",
            BagWarning, stacklevel=4,
        )
    return None


def _partial_field(values: np.ndarray, present: np.ndarray, where: str) -> np.ndarray | None:
    """The efforts (NaN rows where a message has none); None when no message has any."""
    if not present.any():
        return None
    if not present.all():
        warnings.warn(
            f"{where}: {np.count_nonzero(~present)} of {len(present)} messages have no "
            "effort; their residual is NaN",
            BagWarning, stacklevel=4,
        )
    return values


def require_finite(
    values: np.ndarray, field: str, where: str, rows: np.ndarray | None = None
) -> None:
    """A BagError unless every value (of the `rows` given, default all) is finite."""
    broken = ~np.isfinite(values).all(axis=1)
    if rows is not None:
        broken &= rows
    bad = np.flatnonzero(broken)
    if bad.size:
        raise BagError(
            f"{where}: {field} has non-finite values in {bad.size} message(s), the first at "
            f"sample {bad[0]} in stamp order"
        )
