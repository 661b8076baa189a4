"""dynamics_node: the robot's dynamics at every joint state, published, and served on request.

Parameters (changeable at run time):
    robot_description (string): the URDF; when empty, the node waits for the
        ``robot_description`` topic (transient local, as robot_state_publisher provides it).
    quantities (string[], all): what is published each cycle, any of "mass_matrix",
        "bias_forces", "gravity_torques", "acceleration" (when the joint state has efforts) and
        "operational_space" (one message per frame); what is left out stays empty or unsent.
    mass_matrix_method (string, "crba"), forward_dynamics_method (string, "aba"),
        operational_space_method (string, "dense"): any method of the Robot function.
    frames (string[]): task frames whose operational-space dynamics are published each cycle.
    singular_threshold (double, 1e-4): eigenvalues of Λ⁻¹ below this times the largest count
        as lost and Λ is damped there (Robot.operational_space); 1e-4 as the operational-space
        controller.
    diagnostic_period (double, 1.0 s).
Subscribes ``joint_states`` (sensor_msgs/JointState, joints matched by name) and
``robot_description`` (std_msgs/String). Publishes ``dynamics/joint_space``
(JointSpaceDynamics), ``dynamics/operational_space`` (OperationalSpaceDynamics, one per frame
per cycle) and ``/diagnostics``. Serves ``compute_dynamics`` (ComputeDynamics).
Bad input is logged, reported in the diagnostics and skipped; the node keeps serving.
"""

from __future__ import annotations

import gc
import time
from collections import deque

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import SetParametersResult
from rclpy.exceptions import ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from robodyn_interfaces.msg import JointSpaceDynamics, OperationalSpaceDynamics
from robodyn_interfaces.srv import ComputeDynamics
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from robodyn_ros.model import ModelError
from robodyn_ros.operational_space import SCHUR_METHODS, check_schur_task
from robodyn_ros.robot import Robot
from robodyn_ros.ros.conversions import (
    JOINT_SPACE_QUANTITIES,
    JointStateError,
    JointStateMap,
    joint_space_message,
    operational_space_message,
)
from robodyn_ros.ros.entry import spin_until_interrupted

QUANTITIES = (*JOINT_SPACE_QUANTITIES, "operational_space")
# joint_states kept while a cycle runs, and dynamics kept for a reliable subscriber: 100 ms at
# 1 kHz, so that a pause of either process (a scheduler hiccup, a garbage collection) delays
# messages rather than drops them
QUEUE_DEPTH = 100
LATENCY_WINDOW = 2000  # receive → publish latencies kept for the diagnostics' percentiles


class DynamicsNode(Node):
    """Computes and publishes joint-space and operational-space dynamics each cycle."""

    def __init__(self, **kwargs) -> None:
        super().__init__("dynamics_node", **kwargs)
        self.robot: Robot | None = None
        self._joint_map: JointStateMap | None = None
        self._last_error = ""
        self._latencies: deque[float] = deque(maxlen=LATENCY_WINDOW)
        self._cycles = 0
        self._rejected = 0

        self.declare_parameter("robot_description", "")
        self.declare_parameter("mass_matrix_method", "crba")
        self.declare_parameter("forward_dynamics_method", "aba")
        self.declare_parameter("operational_space_method", "dense")
        self.declare_parameter("frames", Parameter.Type.STRING_ARRAY)
        self.declare_parameter("quantities", list(QUANTITIES))
        self.declare_parameter("singular_threshold", 1e-4)
        self.declare_parameter("diagnostic_period", 1.0)
        self.add_on_set_parameters_callback(self._check_parameters)

        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.create_subscription(String, "robot_description", self._on_description, latched)
        self.create_subscription(
            JointState, "joint_states", self._on_joint_state, QUEUE_DEPTH
        )
        self._joint_space = self.create_publisher(
            JointSpaceDynamics, "dynamics/joint_space", QUEUE_DEPTH
        )
        self._operational_space = self.create_publisher(
            OperationalSpaceDynamics, "dynamics/operational_space", QUEUE_DEPTH
        )
        self._diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self.create_service(ComputeDynamics, "compute_dynamics", self._on_compute)
        period = self.get_parameter("diagnostic_period").value
        self._diagnostic_timer = self.create_timer(period, self._publish_diagnostics)
        self._diagnostic_start = time.monotonic()

        description = self.get_parameter("robot_description").value
        if description:
            self._load(description, "the robot_description parameter")

    # -- model ------------------------------------------------------------------------------

    def _load(self, urdf: str, source: str) -> bool:
        """Build the Robot from URDF text; on failure keep the previous one."""
        try:
            robot = Robot.from_urdf_string(urdf)
        except (ModelError, ValueError) as error:
            self._report(f"robot description from {source} not loaded: {error}")
            return False
        start = time.perf_counter()
        warm_up(
            robot,
            (
                self.get_parameter("mass_matrix_method").value,
                self.get_parameter("forward_dynamics_method").value,
                self.get_parameter("operational_space_method").value,
            ),
        )
        self.robot, self._joint_map = robot, JointStateMap(robot.joint_names)
        self.get_logger().info(
            f"loaded robot '{robot.model.name}' from {source}: {robot.nv} joints, kernels "
            f"ready in {time.perf_counter() - start:.2f} s"
        )
        return True

    def _on_description(self, message: String) -> None:
        self._load(message.data, "the robot_description topic")

    def _check_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        """Accept a parameter change only when the node can honour it."""
        for parameter in parameters:
            reason = self._parameter_problem(parameter)
            if reason:
                return SetParametersResult(successful=False, reason=reason)
        return SetParametersResult(successful=True)

    def _parameter_problem(self, parameter: Parameter) -> str:
        name, value = parameter.name, parameter.value
        if name == "mass_matrix_method" and value not in Robot.MASS_MATRIX_METHODS:
            return f"mass_matrix_method must be one of {Robot.MASS_MATRIX_METHODS}"
        if name == "forward_dynamics_method" and value not in Robot.FORWARD_DYNAMICS_METHODS:
            return f"forward_dynamics_method must be one of {Robot.FORWARD_DYNAMICS_METHODS}"
        if name == "operational_space_method" and value not in Robot.OPERATIONAL_SPACE_METHODS:
            return f"operational_space_method must be one of {Robot.OPERATIONAL_SPACE_METHODS}"
        if name == "operational_space_method" and self.robot is not None:
            return method_problem(self.robot, value, self._frames())
        if name == "frames" and self.robot is not None:
            unknown = [frame for frame in value or () if frame not in self.robot.frame_names]
            if unknown:
                return f"frames: unknown frame(s) {unknown}; frames are {self.robot.frame_names}"
            method = self.get_parameter("operational_space_method").value
            return method_problem(self.robot, method, value or [])
        if name == "robot_description" and value and not self._load(value, "a parameter set"):
            return f"robot_description does not load: {self._last_error}"
        if name == "quantities" and set(value) - set(QUANTITIES):
            return f"quantities: unknown {sorted(set(value) - set(QUANTITIES))}; known {QUANTITIES}"
        if name == "singular_threshold" and not 0.0 < value < 1.0:
            return f"singular_threshold must be in (0, 1); got {value}"
        if name == "diagnostic_period" and not value > 0.0:
            return "diagnostic_period must be positive"
        return ""

    def _frames(self) -> list[str]:
        """The frames parameter; a string array has no empty default in rclpy, so unset means
        no frames."""
        try:
            return list(self.get_parameter("frames").value)
        except ParameterUninitializedException:
            return []

    # -- each cycle -------------------------------------------------------------------------

    def _on_joint_state(self, message: JointState) -> None:
        received = time.perf_counter()
        if self.robot is None or self._joint_map is None:
            self._reject("joint_states received before a robot description")
            return
        try:
            q, qd, effort = self._joint_map.state(message)
        except JointStateError as error:
            self._reject(str(error))
            return
        quantities = self.get_parameter("quantities").value
        frames = self._frames() if "operational_space" in quantities else []
        joint_space, operational_space = self._compute(
            message.header, q, qd, effort, frames, quantities, self._methods()
        )
        self._joint_space.publish(joint_space)
        for frame_message in operational_space:
            self._operational_space.publish(frame_message)
        self._latencies.append(time.perf_counter() - received)
        self._cycles += 1

    def _methods(self, requested: tuple[str, str, str] = ("", "", "")) -> tuple[str, str, str]:
        """The (mass matrix, forward dynamics, operational space) methods: the parameters,
        where `requested` has none."""
        names = ("mass_matrix_method", "forward_dynamics_method", "operational_space_method")
        return tuple(
            method or self.get_parameter(name).value
            for method, name in zip(requested, names, strict=True)
        )

    def _compute(self, header, q, qd, effort, frames, quantities, methods):
        """The messages of one state: (JointSpaceDynamics, [OperationalSpaceDynamics])."""
        start = time.perf_counter()
        header.frame_id = self.robot.model.root_link
        joint_space = joint_space_message(self.robot, q, qd, effort, methods[:2], quantities)
        joint_space.header = header
        os_method = methods[2]
        threshold = self.get_parameter("singular_threshold").value
        operational_space = []
        for frame in frames:
            frame_message = operational_space_message(
                self.robot, q, qd, frame, os_method, threshold
            )
            frame_message.header = header
            operational_space.append(frame_message)
        joint_space.computation_time = time.perf_counter() - start
        return joint_space, operational_space

    def _on_compute(self, request, response):
        """The compute_dynamics service: dynamics at the state the caller sends."""
        if self.robot is None:
            response.message = "no robot description loaded yet"
            return response
        unknown = [frame for frame in request.frames if frame not in self.robot.frame_names]
        methods = (
            request.mass_matrix_method,
            request.forward_dynamics_method,
            request.operational_space_method,
        )
        known = (
            Robot.MASS_MATRIX_METHODS,
            Robot.FORWARD_DYNAMICS_METHODS,
            Robot.OPERATIONAL_SPACE_METHODS,
        )
        bad_methods = [m for m, ok in zip(methods, known, strict=True) if m and m not in ok]
        if unknown or bad_methods:
            response.message = (
                f"unknown frame(s) {unknown}" if unknown else f"unknown method(s) {bad_methods}"
            )
            return response
        response.message = method_problem(self.robot, self._methods(methods)[2], request.frames)
        if response.message:
            return response
        try:
            q, qd, effort = JointStateMap(self.robot.joint_names).state(request.state)
        except JointStateError as error:
            response.message = str(error).replace("joint_states:", "state:")
            return response
        joint_space, operational_space = self._compute(
            request.state.header, q, qd, effort, request.frames, QUANTITIES,
            self._methods(methods),
        )
        response.success, response.joint_space = True, joint_space
        response.operational_space = operational_space
        return response

    # -- reporting --------------------------------------------------------------------------

    def _report(self, error: str) -> None:
        self._last_error = error
        self.get_logger().error(error, throttle_duration_sec=1.0)

    def _reject(self, error: str) -> None:
        self._rejected += 1
        self._report(error)

    def _publish_diagnostics(self) -> None:
        now = time.monotonic()
        elapsed, self._diagnostic_start = now - self._diagnostic_start, now
        status = DiagnosticStatus(name="robodyn_ros: dynamics_node", hardware_id="")
        if self.robot is None:
            status.level, status.message = DiagnosticStatus.ERROR, "no robot description"
        elif self._rejected:
            status.level, status.message = DiagnosticStatus.WARN, self._last_error
        else:
            status.level, status.message = DiagnosticStatus.OK, "computing"
        latencies = np.array(self._latencies) * 1e3
        values = {
            "model": self.robot.model.name if self.robot else "",
            "rate (Hz)": f"{self._cycles / elapsed:.1f}" if elapsed > 0 else "0",
            "rejected messages": str(self._rejected),
            "latency p50 (ms)": f"{np.percentile(latencies, 50):.3f}" if latencies.size else "",
            "latency p99 (ms)": f"{np.percentile(latencies, 99):.3f}" if latencies.size else "",
            "last error": self._last_error,
        }
        status.values = [KeyValue(key=key, value=value) for key, value in values.items()]
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self._diagnostics.publish(array)
        self._cycles = self._rejected = 0


def method_problem(robot: Robot, method: str, frames) -> str:
    """Why the operational-space method cannot serve these frames of the robot, each on its own
    ("" if it can): "schur" and "schur_bcr" need a frame on a moving body."""
    if method not in SCHUR_METHODS:
        return ""
    try:
        for frame in frames:
            check_schur_task(robot.model, [frame], "operational_space_method", method)
    except ValueError as error:
        return str(error)
    return ""


def warm_up(robot: Robot, methods: tuple[str, str, str]) -> None:
    """Load (on a new install: compile) every kernel a cycle calls, so that the first joint
    state is answered as fast as the others; then exempt what exists now (the robot, the
    modules) from the garbage collector's scans, which shortens the pauses of a cycle. The
    operational-space method is loaded on a frame of the last body."""
    q = np.zeros(robot.nv)
    joint_space_message(robot, q, q, q, methods[:2])
    robot.operational_space(q, q, robot.frame_names[-1])
    tip = robot.frame_names[list(robot.model.frame_body).index(robot.nv - 1)]
    if not method_problem(robot, methods[2], [tip]):
        robot.operational_space(q, q, tip, methods[2])
    robot.frame_pose(q, robot.frame_names[-1])
    gc.collect()
    gc.freeze()


def main(args: list[str] | None = None) -> None:
    """Run the node until interrupted."""
    spin_until_interrupted(DynamicsNode, args)


if __name__ == "__main__":
    main()
