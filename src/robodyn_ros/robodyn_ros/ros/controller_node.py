"""controller_node: runs a controller plugin on the newest joint state and publishes its efforts.

Parameters:
    robot_description (string): the URDF; when empty, the ``robot_description`` topic.
    armature (string, ""): rotor inertia per joint, added to M's diagonal: YAML text of a
        mapping ("{panda_joint1: 0.1}", kg·m² or kg) or the path of a YAML file of one
        (ros.entry.armature_parameter); changeable at run time.
    gravity (double[3], [0, 0, -9.81]): m/s² in the base frame (a wall mount: [9.81, 0, 0]);
        changeable at run time.
    controller (string, "gravity_compensation"): a plugin name (see ``available_controllers``).
    controller_parameters.<name>: the plugin's parameters, e.g. ``controller_parameters.frame``
        (read when the controller is configured).
    dynamics_source (string, "in_process"): "in_process" computes the dynamics with the node's
        own Robot; "service" asks the dynamics node's ``compute_dynamics`` service each cycle
        for M, b, g and the operational-space dynamics of the controller's task frames.
    diagnostic_period (double, 1.0 s).
Subscribes ``joint_states``, ``target_pose`` (geometry_msgs/PoseStamped, for the
operational-space controller) and ``target_joints`` (sensor_msgs/JointState positions, for
joint impedance). Publishes ``effort_commands`` (std_msgs/Float64MultiArray in the URDF's
joint order, the ros2_control forward-command convention) and ``/diagnostics``.

Every input is taken newest first (ros.intake): a cycle answers the newest joint state and a
target is the newest one sent; the diagnostics count what was superseded. A new robot is
configured with the controller and its parameters and run once at rest before it replaces
the one in service; if either fails (a frame it lacks, a tip that moves no mass) it is
refused with the reason and the controller goes on as it was. A robot put in service starts
a new controller: targets set before are dropped (they were for the previous robot) and it
holds the pose of the first state it gets until a new one arrives. Efforts with NaN or inf
are not sent. Every callback runs under the node's guard (ros.guard).
"""

from __future__ import annotations

import numpy as np
from geometry_msgs.msg import PoseStamped
from rclpy.node import Node
from robodyn_interfaces.srv import ComputeDynamics
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robodyn_ros.control import ControllerState, load_controller
from robodyn_ros.robot import Robot
from robodyn_ros.ros.conversions import (
    JointStateMap,
    finite,
    operational_space_dynamics,
)
from robodyn_ros.ros.entry import (
    follow_robot_description,
    publish_diagnostics,
    spin_until_interrupted,
)
from robodyn_ros.ros.guard import ERROR, OK, WARN, Guard, NodeHealth, RefusedError
from robodyn_ros.ros.intake import Arrival, NewestFirst

PARAMETER_PREFIX = "controller_parameters"
QUEUE_DEPTH = 10  # messages the middleware keeps for each input, all taken at once


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
            ("diagnostic_period", 1.0),
        ):
            if not self.has_parameter(name):
                self.declare_parameter(name, default)
        self.health = NodeHealth(self.get_logger())
        self.guard = Guard(self.health)
        self.robot: Robot | None = None
        self.controller = None
        self._joint_map: JointStateMap | None = None
        self._pending = None  # the service call in flight, in "service" mode
        self._cycles = 0

        self._inputs = {
            topic: NewestFirst(topic) for topic in ("joint_states", "target_pose", "target_joints")
        }
        for topic, kind, callback in (
            ("joint_states", JointState, self._on_joint_state),
            ("target_pose", PoseStamped, self._on_target_pose),
            ("target_joints", JointState, self._on_target_joints),
        ):
            self._inputs[topic].subscription = self.create_subscription(
                kind, topic, self.guard.callback(topic, callback), QUEUE_DEPTH
            )
        self._efforts = self.create_publisher(Float64MultiArray, "effort_commands", 10)
        self._dynamics = self.create_client(ComputeDynamics, "compute_dynamics")
        publish_diagnostics(self, self.guard, self.get_parameter("diagnostic_period").value,
                            self._status)
        follow_robot_description(self, self.guard, self._adopt)

    # -- set-up -----------------------------------------------------------------------------

    def _adopt(self, robot: Robot) -> None:
        """Configure the controller on `robot`; put both in service once a controller
        configured the same way has computed efforts at rest (q = 0 moved inside the limits).

        Raises:
            Exception: the controller's refusal of the robot or its parameters, or the
                failure of that first computation.
        """
        controller = self._configured(robot)
        q = np.clip(np.zeros(robot.nv), robot.per_coordinate(robot.model.lower),
                    robot.per_coordinate(robot.model.upper))
        self._configured(robot).update(ControllerState(t=0.0, q=q, qd=np.zeros(robot.nv)))
        self.robot, self.controller = robot, controller
        self._joint_map = JointStateMap(robot.joint_names)

    def _configured(self, robot: Robot):
        """A new controller of the `controller` parameter, configured on `robot`."""
        controller = load_controller(self.get_parameter("controller").value)()
        parameters = self.get_parameters_by_prefix(PARAMETER_PREFIX)
        controller.configure(robot, {name: p.value for name, p in parameters.items()})
        return controller

    # -- targets ----------------------------------------------------------------------------

    def _on_target_pose(self, message: PoseStamped, info: dict) -> None:
        pose = self._newest("target_pose", message, info).message.pose
        p, o = pose.position, pose.orientation
        self._set_target([p.x, p.y, p.z], [o.x, o.y, o.z, o.w])

    def _on_target_joints(self, message: JointState, info: dict) -> None:
        newest = self._newest("target_joints", message, info).message
        if self._joint_map is None:
            raise RefusedError("target_joints received before the controller is configured")
        q, _, _ = self._joint_map.state(newest, "target_joints")
        self._set_target(q)

    def _newest(self, topic: str, message, info: dict) -> Arrival:
        """The newest message of an input, counted as handled."""
        arrival = self._inputs[topic].take(message, info)
        self._inputs[topic].mark_handled()
        return arrival

    def _set_target(self, *target) -> None:
        """Raises RefusedError when there is no controller or it refuses the target."""
        if self.controller is None:
            raise RefusedError("target received before the controller is configured")
        try:
            self.controller.set_target(*target)
        except (TypeError, ValueError) as error:
            raise RefusedError(f"target refused: {error}") from error

    # -- each cycle -------------------------------------------------------------------------

    def _on_joint_state(self, message: JointState, info: dict) -> None:
        """Answer the newest joint state; in "service" mode, a state that arrives while the
        previous call is in flight is not handled (superseded by the next)."""
        arrival = self._inputs["joint_states"].take(message, info)
        if self.controller is None or self._joint_map is None:
            self._inputs["joint_states"].mark_handled()
            raise RefusedError("joint_states received before the controller is configured")
        service = self.get_parameter("dynamics_source").value == "service"
        if service and self._pending is not None and not self._pending.done():
            return
        self._inputs["joint_states"].mark_handled()
        newest = arrival.message
        q, qd, _ = self._joint_map.state(newest)
        t = newest.header.stamp.sec + 1e-9 * newest.header.stamp.nanosec
        if service:
            self._request_dynamics(arrival, t, q, qd)
        else:
            self._command(ControllerState(t=t, q=q, qd=qd), arrival)

    def _request_dynamics(self, arrival: Arrival, t: float, q, qd) -> None:
        """Ask the dynamics node; the efforts go out when the answer arrives."""
        if not self._dynamics.service_is_ready():
            raise RefusedError("compute_dynamics service not available")
        request = ComputeDynamics.Request(state=arrival.message,
                                          frames=list(self.controller.task_frames))
        self._pending = self._dynamics.call_async(request)
        self._pending.add_done_callback(self.guard.callback(
            "compute_dynamics answer", lambda future: self._on_dynamics(future, arrival, t, q, qd)
        ))

    def _on_dynamics(self, future, arrival: Arrival, t: float, q, qd) -> None:
        response = future.result()
        if response is None or not response.success:
            raise RefusedError(f"compute_dynamics failed: {response.message if response else ''}")
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
        self._command(state, arrival)

    def _command(self, state: ControllerState, arrival: Arrival) -> None:
        """The controller's efforts at `state`, published when finite."""
        tau = finite("effort command", self.controller.update(state))
        self._efforts.publish(Float64MultiArray(data=tau.tolist()))
        self._inputs["joint_states"].mark_answered(arrival)
        self._cycles += 1

    # -- reporting --------------------------------------------------------------------------

    def _status(self):
        values = {"controller": self.get_parameter("controller").value,
                  "cycles since the last report": str(self._cycles)}
        self._cycles = 0
        skipping = []
        for topic, intake in self._inputs.items():
            superseded, topic_values = intake.diagnostic_values()
            values |= topic_values
            skipping += [topic] if superseded else []
        if self.controller is None:
            level, message = ERROR, "no controller configured"
        elif skipping:
            level, message = WARN, f"answering the newest of {', '.join(skipping)}, dropping " \
                "those it superseded"
        else:
            level, message = OK, "controlling"
        model = self.robot.model.name if self.robot is not None else ""
        return self.health.status(f"robodyn_ros: {self.get_name()}", model, level, message,
                                  values)


def main(args: list[str] | None = None) -> None:
    """Run the node until interrupted."""
    spin_until_interrupted(ControllerNode, args)


if __name__ == "__main__":
    main()
