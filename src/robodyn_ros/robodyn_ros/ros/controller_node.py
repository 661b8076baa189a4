"""controller_node: runs a controller plugin on every joint state and publishes its efforts.

Parameters:
    robot_description (string): the URDF; when empty, the ``robot_description`` topic.
    controller (string, "gravity_compensation"): a plugin name (see ``available_controllers``).
    controller_parameters.<name>: the plugin's parameters, e.g. ``controller_parameters.frame``
        (read when the controller is configured).
    dynamics_source (string, "in_process"): "in_process" computes the dynamics with the node's
        own Robot; "service" asks the dynamics node's ``compute_dynamics`` service each cycle
        for M, b, g and the operational-space dynamics of the controller's task frames.
Subscribes ``joint_states``, ``target_pose`` (geometry_msgs/PoseStamped, for the
operational-space controller) and ``target_joints`` (sensor_msgs/JointState positions, for
joint impedance). Publishes ``effort_commands`` (std_msgs/Float64MultiArray in the URDF's
joint order, the ros2_control forward-command convention) and ``/diagnostics``.
"""

from __future__ import annotations

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import PoseStamped
from rclpy.node import Node
from robodyn_interfaces.srv import ComputeDynamics
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robodyn_ros.control import ControllerState, load_controller
from robodyn_ros.model import ModelError
from robodyn_ros.robot import Robot
from robodyn_ros.ros.conversions import (
    JointStateError,
    JointStateMap,
    operational_space_dynamics,
)
from robodyn_ros.ros.entry import follow_robot_description, spin_until_interrupted

PARAMETER_PREFIX = "controller_parameters"


class ControllerNode(Node):
    """A controller plugin between joint_states and effort_commands."""

    def __init__(self, **kwargs) -> None:
        super().__init__(
            "controller_node", automatically_declare_parameters_from_overrides=True, **kwargs
        )
        for name, default in (
            ("robot_description", ""),
            ("controller", "gravity_compensation"),
            ("dynamics_source", "in_process"),
        ):
            if not self.has_parameter(name):
                self.declare_parameter(name, default)
        self.robot: Robot | None = None
        self.controller = None
        self._joint_map: JointStateMap | None = None
        self._pending = None  # the service call in flight, in "service" mode
        self._last_error = ""
        self._cycles = 0

        self.create_subscription(JointState, "joint_states", self._on_joint_state, 10)
        self.create_subscription(PoseStamped, "target_pose", self._on_target_pose, 10)
        self.create_subscription(JointState, "target_joints", self._on_target_joints, 10)
        self._efforts = self.create_publisher(Float64MultiArray, "effort_commands", 10)
        self._diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self._dynamics = self.create_client(ComputeDynamics, "compute_dynamics")
        self.create_timer(1.0, self._publish_diagnostics)
        follow_robot_description(self, self._load)

    # -- set-up -----------------------------------------------------------------------------

    def _load(self, urdf: str) -> None:
        """Build the Robot and configure the controller; on failure keep what was there."""
        try:
            robot = Robot.from_urdf_string(urdf)
            controller = load_controller(self.get_parameter("controller").value)()
            controller.configure(robot, self._controller_parameters())
        except (ModelError, ValueError, TypeError) as error:
            self._report(f"controller not configured: {error}")
            return
        self.robot, self.controller = robot, controller
        self._joint_map = JointStateMap(robot.joint_names)
        self.get_logger().info(
            f"{self.get_parameter('controller').value} controller on '{robot.model.name}'"
        )

    def _controller_parameters(self) -> dict[str, object]:
        parameters = self.get_parameters_by_prefix(PARAMETER_PREFIX)
        return {name: parameter.value for name, parameter in parameters.items()}

    # -- targets ----------------------------------------------------------------------------

    def _on_target_pose(self, message: PoseStamped) -> None:
        p, o = message.pose.position, message.pose.orientation
        self._set_target([p.x, p.y, p.z], [o.x, o.y, o.z, o.w])

    def _on_target_joints(self, message: JointState) -> None:
        if self._joint_map is None:
            return
        try:
            q, _, _ = self._joint_map.state(message)
        except JointStateError as error:
            self._report(str(error).replace("joint_states", "target_joints"))
            return
        self._set_target(q)

    def _set_target(self, *target) -> None:
        if self.controller is None:
            self._report("target received before the controller is configured")
            return
        try:
            self.controller.set_target(*target)
        except (TypeError, ValueError) as error:
            self._report(f"target refused: {error}")

    # -- each cycle -------------------------------------------------------------------------

    def _on_joint_state(self, message: JointState) -> None:
        if self.controller is None or self._joint_map is None:
            return
        try:
            q, qd, _ = self._joint_map.state(message)
        except JointStateError as error:
            self._report(str(error))
            return
        t = message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec
        if self.get_parameter("dynamics_source").value == "service":
            self._request_dynamics(message, t, q, qd)
        else:
            self._command(ControllerState(t=t, q=q, qd=qd))

    def _request_dynamics(self, message: JointState, t: float, q, qd) -> None:
        """Ask the dynamics node; the efforts go out when the answer arrives. A cycle whose
        predecessor is still in flight is skipped rather than queued."""
        if self._pending is not None and not self._pending.done():
            return
        if not self._dynamics.service_is_ready():
            self._report("compute_dynamics service not available")
            return
        request = ComputeDynamics.Request(state=message, frames=list(self.controller.task_frames))
        self._pending = self._dynamics.call_async(request)
        self._pending.add_done_callback(lambda future: self._on_dynamics(future, t, q, qd))

    def _on_dynamics(self, future, t: float, q, qd) -> None:
        response = future.result()
        if response is None or not response.success:
            self._report(f"compute_dynamics failed: {response.message if response else ''}")
            return
        n = len(q)
        joint_space = response.joint_space
        state = ControllerState(
            t=t, q=q, qd=qd,
            M=np.reshape(joint_space.mass_matrix, (n, n)),
            bias=np.asarray(joint_space.bias_forces),
            gravity=np.asarray(joint_space.gravity_torques),
            operational_space={
                frame.frame: operational_space_dynamics(frame)
                for frame in response.operational_space
            },
        )
        self._command(state)

    def _command(self, state: ControllerState) -> None:
        try:
            tau = self.controller.update(state)
        except (ValueError, np.linalg.LinAlgError) as error:
            self._report(f"controller update failed: {error}")
            return
        self._efforts.publish(Float64MultiArray(data=tau.tolist()))
        self._cycles += 1

    # -- reporting --------------------------------------------------------------------------

    def _report(self, error: str) -> None:
        self._last_error = error
        self.get_logger().warning(error, throttle_duration_sec=1.0)

    def _publish_diagnostics(self) -> None:
        status = DiagnosticStatus(name="robodyn_ros: controller_node")
        if self.controller is None:
            status.level, status.message = DiagnosticStatus.ERROR, "no controller configured"
        elif self._last_error:
            status.level, status.message = DiagnosticStatus.WARN, self._last_error
        else:
            status.level, status.message = DiagnosticStatus.OK, "controlling"
        status.values = [
            KeyValue(key="controller", value=self.get_parameter("controller").value),
            KeyValue(key="cycles in the last second", value=str(self._cycles)),
        ]
        self._diagnostics.publish(DiagnosticArray(status=[status]))
        self._cycles, self._last_error = 0, ""


def main(args: list[str] | None = None) -> None:
    """Run the node until interrupted."""
    spin_until_interrupted(ControllerNode, args)


if __name__ == "__main__":
    main()
