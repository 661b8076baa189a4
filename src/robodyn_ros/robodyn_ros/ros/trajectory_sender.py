"""`robodyn send-trajectory`: a trajectory_msgs/JointTrajectory from a YAML file (the form of
``ros2 topic pub``, which `robodyn excite` writes) published until the controller confirms it.

The publisher is reliable and transient local. The controller (controller_node, or the node
named) takes joint_trajectory best effort, so one message can be lost: the confirmation is the
node's own count of trajectories taken ("joint_trajectory handled" in its /diagnostics) rising
after the publication, and the message is sent again, up to SEND_TRIES times, when it does not
within CONFIRM_PERIODS of the node's diagnostics. A trajectory the node then refuses is
reported with the node's reason.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import rclpy
import yaml
from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.exceptions import InvalidTopicNameException
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robodyn_ros.errors import RobodynError
from robodyn_ros.ros.robot_node import spin_until

SEND_TRIES = 3
CONFIRM_WAIT = 3.0  # s after a publication for the node's count to rise
HANDLED = "joint_trajectory handled"
POINT_FIELDS = ("positions", "velocities", "accelerations", "effort")


class TrajectoryError(RobodynError, ValueError):
    """A trajectory file that cannot be read, or one the controller did not confirm."""


def trajectory_from_yaml(path: str | Path) -> JointTrajectory:
    """The JointTrajectory of a YAML file in the form of ``ros2 topic pub``: joint_names and
    points (positions, velocities, accelerations, effort, time_from_start {sec, nanosec});
    header.stamp optional (zero: the controller starts it at its next joint state).

    Raises:
        TrajectoryError: the file cannot be read, or a field is missing or of the wrong kind
            (named, with the point's index).
    """
    try:
        document = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise TrajectoryError(f"{path}: {error}") from error
    if not isinstance(document, dict) or not isinstance(document.get("points"), list):
        raise TrajectoryError(f"{path}: not a JointTrajectory (no list of points)")
    try:
        message = JointTrajectory(joint_names=[str(n) for n in document["joint_names"]])
        stamp = document.get("header", {}).get("stamp", {})
        message.header.stamp.sec = int(stamp.get("sec", 0))
        message.header.stamp.nanosec = int(stamp.get("nanosec", 0))
        message.points = [_point(point) for point in document["points"]]
    except (AttributeError, KeyError, TypeError, ValueError, AssertionError) as error:
        raise TrajectoryError(f"{path}: {type(error).__name__}: {error}") from error
    return message


def _point(fields: dict[str, Any]) -> JointTrajectoryPoint:
    point = JointTrajectoryPoint(**{name: [float(v) for v in fields.get(name, [])]
                                    for name in POINT_FIELDS})
    since = fields["time_from_start"]
    point.time_from_start = Duration(sec=int(since.get("sec", 0)),
                                     nanosec=int(since.get("nanosec", 0)))
    return point


class Confirmation:
    """The handled count of joint_trajectory in the /diagnostics of `node_name`, and the
    latest status that names joint_trajectory at WARN or worse (its refusal)."""

    def __init__(self, node_name: str) -> None:
        self.node_name = node_name
        self.handled: int | None = None
        self.refusal = ""
        self.changed = threading.Condition()

    def on_diagnostics(self, message: DiagnosticArray) -> None:
        for status in message.status:
            if status.name.split(":")[0].split("/")[-1] != self.node_name:
                continue
            values = {kv.key: kv.value for kv in status.values}
            with self.changed:
                if values.get(HANDLED, "").isdigit():
                    self.handled = int(values[HANDLED])
                if status.level >= DiagnosticStatus.WARN and "joint_trajectory" in status.message:
                    self.refusal = status.message  # this period's worst: not an earlier one
                self.changed.notify_all()

    def forget_refusal(self) -> None:
        with self.changed:
            self.refusal = ""

    def wait(self, done: Callable[[], bool], timeout: float) -> bool:
        with self.changed:
            return self.changed.wait_for(done, timeout)


def send_trajectory(path: str | Path, topic: str = "joint_trajectory",
                    node_name: str = "controller_node", patience: float = 30.0) -> int:
    """Publish the trajectory of `path` until `node_name` confirms it took it.

    Returns:
        How many times it was sent.

    Raises:
        TrajectoryError: an unreadable file, no subscriber or no diagnostics of the node
            within `patience` s, no confirmation after SEND_TRIES sends, or the node's refusal.
    """
    message = trajectory_from_yaml(path)
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("send_trajectory")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    stop = threading.Event()
    spinning = threading.Thread(target=spin_until, args=(executor, stop), daemon=True)
    spinning.start()
    try:
        confirmation = Confirmation(node_name)
        node.create_subscription(DiagnosticArray, "/diagnostics", confirmation.on_diagnostics, 50)
        return publish_until_taken(reliable_publisher(node, topic), confirmation, message,
                                   patience)
    finally:
        stop.set()  # the spin ends before the executor is shut down (robot_node.spin_until)
        spinning.join(timeout=5.0)
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()


def publish_until_taken(publisher: Publisher[JointTrajectory], confirmation: Confirmation,
                        message: JointTrajectory, patience: float) -> int:
    """Publish `message` until the node `confirmation` listens to counts it taken: once the
    topic has a subscriber and the node reports, up to SEND_TRIES sends, each waited for
    CONFIRM_WAIT s (the module docstring).

    Args:
        publisher: the trajectory's publisher (an executor spins its node).
        confirmation: subscribed to /diagnostics on that node.
        message: the trajectory.
        patience: s to wait for a subscriber and the node's diagnostics.

    Returns:
        How many times it was sent.

    Raises:
        TrajectoryError: no subscriber or no diagnostics of the node within `patience` s, no
            confirmation after SEND_TRIES sends, or the node's refusal.
    """
    node_name, topic = confirmation.node_name, publisher.topic_name
    deadline = time.monotonic() + patience
    while publisher.get_subscription_count() == 0 or confirmation.handled is None:
        if time.monotonic() > deadline:
            raise TrajectoryError(f"no subscriber of {topic} reporting as {node_name} on "
                                  f"/diagnostics within {patience:g} s")
        time.sleep(0.05)
    before = confirmation.handled
    for sent in range(1, SEND_TRIES + 1):
        confirmation.forget_refusal()  # one before this send was of another trajectory
        publisher.publish(message)
        if confirmation.wait(lambda: (confirmation.handled or 0) > before, CONFIRM_WAIT):
            confirmation.wait(lambda: bool(confirmation.refusal), CONFIRM_WAIT)
            if confirmation.refusal:
                raise TrajectoryError(f"{node_name} refused it: {confirmation.refusal}")
            return sent
    raise TrajectoryError(f"{node_name} did not report taking it after {SEND_TRIES} sends")


def reliable_publisher(node: Node, topic: str) -> Publisher[JointTrajectory]:
    """A reliable, transient-local JointTrajectory publisher on `topic`.

    Raises:
        TrajectoryError: `topic` is not a topic name, with rcl's reason.
    """
    try:
        return node.create_publisher(JointTrajectory, topic, QoSProfile(
            depth=1, reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL))
    except InvalidTopicNameException as error:
        raise TrajectoryError(f"topic '{topic}': not a topic name ({error})") from None
