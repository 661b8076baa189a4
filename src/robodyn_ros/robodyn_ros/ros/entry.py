"""The entry point every node's executable shares."""

from __future__ import annotations

from collections.abc import Callable

import rclpy
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.node import Node


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
