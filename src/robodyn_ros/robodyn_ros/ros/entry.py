"""The entry point every node's executable shares."""

from __future__ import annotations

from collections.abc import Callable

import rclpy
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile
from std_msgs.msg import String


def follow_robot_description(node: Node, load: Callable[[str], None]) -> None:
    """Call load(urdf) with the node's robot_description parameter when it is set, and with
    each URDF the robot_description topic brings (transient local, as robot_state_publisher
    publishes it)."""
    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(String, "robot_description", lambda message: load(message.data),
                             latched)
    description = node.get_parameter("robot_description").value
    if description:
        load(description)


def spin_until_interrupted(
    make_node: Callable[[], Node], args: list[str] | None = None, threads: int = 1
) -> None:
    """Initialise rclpy (with the command line's --ros-args), spin the node on `threads`
    threads until Ctrl-C, then tear everything down."""
    rclpy.init(args=args)
    node = make_node()
    executor = SingleThreadedExecutor() if threads == 1 else MultiThreadedExecutor(threads)
    try:
        rclpy.spin(node, executor)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
