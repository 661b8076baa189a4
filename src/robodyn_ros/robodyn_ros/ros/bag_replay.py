"""`robodyn bag replay`: a bag's messages of one topic published again at the recorded pace
(times a rate), with /clock following the recorded times, so that dynamics_node (with
use_sim_time, or without) can process a recorded run live.

The messages go out as recorded, CDR bytes unchanged; the bag is read with rosbags.
"""

from __future__ import annotations

import importlib
import threading
import time
from pathlib import Path
from typing import Any

import rclpy
from builtin_interfaces.msg import Time
from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.qos import QoSProfile
from rosgraph_msgs.msg import Clock

from robodyn_ros.bag.errors import BagError
from robodyn_ros.bag.reading import open_bag, topic_info

QUEUE = 100


class BagPlayer:
    """Publishes the messages of `topic` in `bag` from `node`, `rate` times the recorded pace
    (rate 2: twice as fast), and /clock at each message's recorded time."""

    def __init__(self, node: Node, bag: str | Path, topic: str, rate: float = 1.0) -> None:
        if not rate > 0.0:
            raise ValueError(f"bag replay: rate must be positive; got {rate!r}")
        self.node, self.bag, self.topic, self.rate = node, Path(bag), topic, rate
        with open_bag(self.bag) as reader:
            msgtype = topic_info(reader, self.bag, topic).msgtype
        if msgtype is None:
            raise BagError(f"bag {self.bag}: topic '{topic}' was recorded with messages of "
                           "different types; a replay publishes one type")
        self.publisher: Publisher[Any] = node.create_publisher(
            message_class(msgtype), topic, QoSProfile(depth=QUEUE)
        )
        self.clock = node.create_publisher(Clock, "/clock", QUEUE)

    def wait_for_subscribers(self, timeout: float) -> bool:
        """Wait up to `timeout` s for a subscriber to the topic; whether one came."""
        deadline = time.monotonic() + timeout
        while self.publisher.get_subscription_count() == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        return self.publisher.get_subscription_count() > 0

    def play(self, stop: threading.Event | None = None) -> int:
        """Publish every message at its recorded time over `rate`; the count published."""
        count, first, started = 0, None, 0.0
        with open_bag(self.bag) as reader:
            connections = reader.topics[self.topic].connections
            for _, recorded, raw in reader.messages(connections=connections):
                if first is None:  # the pace starts at the first message, once the bag is open
                    first, started = recorded, time.monotonic()
                delay = started + (recorded - first) * 1e-9 / self.rate - time.monotonic()
                if stop is not None and stop.wait(max(delay, 0.0)):
                    break
                if stop is None and delay > 0.0:
                    time.sleep(delay)
                self.clock.publish(Clock(clock=_time(recorded)))
                self.publisher.publish(bytes(raw))
                count += 1
        return count


def message_class(msgtype: str) -> type:
    """The rclpy message class of a type name such as "sensor_msgs/msg/JointState"."""
    package, kind, name = msgtype.split("/")
    try:
        message_type: type = getattr(importlib.import_module(f"{package}.{kind}"), name)
        return message_type
    except (ImportError, AttributeError) as error:
        raise BagError(f"message type {msgtype} is not installed for rclpy: {error}") from error


def _time(nanoseconds: int) -> Time:
    seconds, rest = divmod(nanoseconds, 1_000_000_000)
    return Time(sec=seconds, nanosec=rest)


def replay_bag(
    bag: str | Path, topic: str = "/joint_states", rate: float = 1.0, wait: float = 2.0
) -> int:
    """Initialise rclpy, play the bag once (after waiting up to `wait` s for a subscriber),
    shut down; the count published. Ctrl-C stops early."""
    rclpy.init()
    node = rclpy.create_node("bag_replay")
    try:
        player = BagPlayer(node, bag, topic, rate)
        player.wait_for_subscribers(wait)
        return player.play()
    except KeyboardInterrupt:
        return 0
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
