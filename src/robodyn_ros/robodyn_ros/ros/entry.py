"""The entry point every node's executable shares."""

from __future__ import annotations

from collections.abc import Callable

import rclpy
from rclpy.node import Node


def spin_until_interrupted(make_node: Callable[[], Node], args: list[str] | None = None) -> None:
    """Initialise rclpy (with the command line's --ros-args), spin the node until Ctrl-C,
    then tear everything down."""
    rclpy.init(args=args)
    node = make_node()
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
