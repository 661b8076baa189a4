"""What every node shares around its callbacks: the robot description it follows (parameter
and topic, each new robot checked before it replaces the one in service) and the entry point
of its executable."""

from __future__ import annotations

from collections.abc import Callable

import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rcl_interfaces.msg import SetParametersResult
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from rclpy.timer import Timer
from std_msgs.msg import String

from robodyn_ros.robot import Robot
from robodyn_ros.ros.guard import ERROR, Guard

DESCRIPTION_CONDITION = "robot_description"


def follow_robot_description(node: Node, guard: Guard, adopt: Callable[[Robot], None]) -> None:
    """Load the robot of the node's robot_description parameter now (when set), of each
    change of that parameter, and of each URDF the robot_description topic brings (transient
    local, as robot_state_publisher publishes it).

    Each robot is built from its URDF and handed to `adopt`, which prepares everything the
    node will serve with it (warming up what it will compute) and puts it in service last, or
    raises. A URDF that does not load or a robot `adopt` refuses leaves the robot in service
    as it was; the reason is logged and reported as an ERROR condition of the node's
    diagnostics until a robot loads. A parameter change refused so is refused with the reason.

    Args:
        node: the node; it must have declared the robot_description parameter.
        guard: the node's guard (its health takes the conditions).
        adopt: puts a robot in service; raises (any exception) to refuse it.
    """

    def load(urdf: str, source: str) -> str:
        stage = f"robot description from {source} does not load"
        try:
            robot = Robot.from_urdf_string(urdf)
            stage = f"robot '{robot.model.name}' from {source} refused"
            adopt(robot)
        except Exception as error:  # any failure refuses the robot, with the reason
            reason = (f"{stage} ({type(error).__name__}: {error}); the robot in service, if "
                      "any, stays")
            guard.health.set_condition(DESCRIPTION_CONDITION, ERROR, reason)
            return reason
        guard.health.clear_condition(DESCRIPTION_CONDITION)
        node.get_logger().info(f"robot '{robot.model.name}' from {source} in service: "
                               f"{robot.nv} joints")
        return ""

    def on_parameters(parameters: list[Parameter]) -> SetParametersResult:
        for parameter in parameters:
            if parameter.name == "robot_description" and parameter.value:
                reason = load(parameter.value, "a parameter set")
                if reason:
                    return SetParametersResult(successful=False, reason=reason)
        return SetParametersResult(successful=True)

    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(
        String, "robot_description",
        guard.callback("robot_description", lambda message: load(message.data, "the topic")),
        latched,
    )
    node.add_on_set_parameters_callback(guard.parameters(on_parameters))
    description = node.get_parameter("robot_description").value
    if description:
        load(description, "the robot_description parameter")


def publish_diagnostics(
    node: Node, guard: Guard, period: float, status: Callable[[], DiagnosticStatus]
) -> Timer:
    """Publish the node's status() on /diagnostics every `period` s (wall time).

    Returns:
        The timer.
    """
    publisher = node.create_publisher(DiagnosticArray, "/diagnostics", 10)

    def publish() -> None:
        array = DiagnosticArray(status=[status()])
        array.header.stamp = node.get_clock().now().to_msg()
        publisher.publish(array)

    return node.create_timer(period, guard.callback("diagnostics", publish))


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
