"""`robodyn bag record`: topics written to a new rosbag2 as they arrive, CDR bytes unchanged,
each at its receive time, with rosbags (no ros2 bag needed).

A topic is subscribed once the graph shows a publisher of it (its type is taken from there):
reliable when every publisher offers reliable, best effort otherwise, as ``ros2 bag record``
chooses. Its type must be one rosbags' typestore or robodyn_interfaces defines, so that the
bag carries the message definition. Recording ends at SIGINT or SIGTERM, or after the
duration; the bag is closed whole either way.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import rclpy
from rclpy.clock import Clock
from rclpy.clock_type import ClockType
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from rosbags.rosbag2 import Writer

from robodyn_ros.bag.errors import BagError
from robodyn_ros.bag.typestore import typestore
from robodyn_ros.bag.writing import open_writer
from robodyn_ros.ros.bag_replay import message_class
from robodyn_ros.ros.robot_node import spin_until

DEFAULT_TOPICS = ("/joint_states", "/dynamics/joint_space", "/dynamics/operational_space")
QUEUE = 1000  # messages the middleware keeps for each topic
GRAPH_PERIOD = 0.1  # s between looks at the graph for topics not yet subscribed


@dataclass
class RecordedTopic:
    """A topic being recorded: its connection in the bag and the messages written."""

    connection: Any
    count: int = 0


class BagRecorder:
    """Subscribes `topics` as their publishers appear and writes what they carry to `writer`
    (from one executor thread: rosbags' Writer is not shared across threads).

    Attributes:
        recorded: topic name → the topic being recorded, for those subscribed so far.
    """

    def __init__(self, node: Node, writer: Writer, topics: Sequence[str]) -> None:
        self.node, self.writer, self.topics = node, writer, tuple(topics)
        self.recorded: dict[str, RecordedTopic] = {}
        self._store = typestore()
        node.create_timer(GRAPH_PERIOD, self.subscribe_new_topics)
        self.subscribe_new_topics()

    def subscribe_new_topics(self) -> None:
        """Subscribe every topic asked for whose publishers the graph now shows.

        Raises:
            BagError: a topic whose type rosbags cannot write (no message definition), or a
                topic published with several types.
        """
        published = dict(self.node.get_topic_names_and_types())
        for name in self.topics:
            if name in self.recorded or name not in published:
                continue
            msgtype = _single_type(name, published[name])
            if msgtype not in self._store.types:
                raise BagError(f"topic {name}: type {msgtype} has no message definition in "
                               "rosbags' typestore, so it cannot be recorded")
            connection = self.writer.add_connection(name, msgtype, typestore=self._store)
            topic = RecordedTopic(connection)
            self.recorded[name] = topic
            self.node.create_subscription(
                message_class(msgtype), name, lambda raw, topic=topic: self._write(topic, raw),
                QoSProfile(depth=QUEUE, reliability=self._reliability(name)), raw=True)

    def _write(self, topic: RecordedTopic, raw: bytes) -> None:
        self.writer.write(topic.connection, time.time_ns(), raw)
        topic.count += 1

    def _reliability(self, name: str) -> ReliabilityPolicy:
        """Reliable when every publisher of `name` offers it, best effort otherwise."""
        publishers = self.node.get_publishers_info_by_topic(name)
        if all(p.qos_profile.reliability == ReliabilityPolicy.RELIABLE for p in publishers):
            return ReliabilityPolicy.RELIABLE
        return ReliabilityPolicy.BEST_EFFORT


def _resolved(node: Node, topic: str) -> str:
    """The full name of `topic` (a relative name in the node's namespace, as ros2 bag takes
    it).

    Raises:
        BagError: not a valid topic name, with rcl's reason.
    """
    try:
        return node.resolve_topic_name(topic)
    except RuntimeError as error:  # rclpy's RCLError
        raise BagError(f"topic '{topic}': not a topic name ({error})") from None


def _single_type(name: str, types: list[str]) -> str:
    if len(types) != 1:
        raise BagError(f"topic {name} is published with several types ({', '.join(types)}); "
                       "a bag's topic has one")
    return types[0]


def record_bag(bag: str | Path, topics: Sequence[str] = DEFAULT_TOPICS,
               duration: float | None = None, storage: str = "sqlite3") -> dict[str, int]:
    """Record `topics` to the new rosbag2 folder `bag` until SIGINT or SIGTERM, or for
    `duration` s.

    Returns:
        The count of messages written per topic recorded.

    Raises:
        BagError: the folder exists, an unknown storage, a topic name that is not one, or a
            topic that cannot be recorded.
    """
    with stopped_by_signals() as stop:
        rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
        node = rclpy.create_node("bag_record")
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        try:
            names = [_resolved(node, topic) for topic in topics]
            if duration is not None:
                node.create_timer(duration, stop.set, clock=Clock(clock_type=ClockType.STEADY_TIME))
            with open_writer(bag, storage) as writer:
                recorder = BagRecorder(node, writer, names)
                spin_until(executor, stop)
                return {name: topic.count for name, topic in recorder.recorded.items()}
        finally:
            executor.shutdown()
            node.destroy_node()
            rclpy.try_shutdown()


@contextmanager
def stopped_by_signals() -> Iterator[threading.Event]:
    """An event that SIGINT and SIGTERM set while the block runs (a recording ends between two
    messages, never inside a write); the former handlers are restored after."""
    stop = threading.Event()
    handlers = {signum: signal.signal(signum, lambda *_: stop.set())
                for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
