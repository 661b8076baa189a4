"""sim_node: a simulated robot driven by joint effort commands, publishing its joint states.

Parameters:
    robot_description (string): the URDF; when empty, the node waits for the
        ``robot_description`` topic (transient local, as robot_state_publisher provides it).
    integrator (string, "rk4"): "rk4" or "semi_implicit_euler".
    forward_dynamics_method (string, "aba"): any of Robot.FORWARD_DYNAMICS_METHODS.
    forward_dynamics_tolerance (double, iteration.DEFAULT_TOL): the stopping tolerance of an
        iterative method (robodyn_ros.iteration), warm-started from the previous steps;
        direct methods ignore it.
    dt (double, 0.001 s): integration step.
    publish_period (double, 0.01 s): joint_states and /clock go out every publish_period of
        sim time (rounded to a whole number of steps, at least one).
    real_time_factor (double, 1.0): sim seconds per wall second; 0 runs as fast as possible.
        Takes effect at once; the other parameters apply when a robot description is loaded.
    initial_positions (double[], optional): q at start, one per joint in URDF joint order;
        default q = 0 moved inside the position limits. The robot starts at rest.
    friction_velocity (double, sim.FRICTION_VELOCITY): ε of the smoothed Coulomb friction.
    diagnostic_period (double, 1.0 s, wall time).
    lockstep (bool, false): after each joint_states message, wait for the next effort command
        (at most LOCKSTEP_TIMEOUT of wall time) before stepping on, so that a controller in
        another node closes the loop every publish_period however busy the machine is.
Subscribes ``effort_commands`` (std_msgs/Float64MultiArray, one effort per joint in the URDF's
joint order, as ros2_control's forward command controller takes it; held until the next one)
and ``robot_description``. Publishes ``joint_states`` (sensor_msgs/JointState: position,
velocity and the effort applied, i.e. the command clipped to the effort limits; stamped with
sim time), ``/clock`` (rosgraph_msgs/Clock, sim time from 0) and ``/diagnostics``.

The simulation runs in its own thread (not a ROS timer), paced to real_time_factor. A bad
command (wrong length, NaN or inf) is logged, reported in the diagnostics and ignored: the last
good command stays applied. `stop()` (also called by `destroy_node`) ends and joins the thread.
"""

from __future__ import annotations

import threading
import time

import numpy as np
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import SetParametersResult
from rclpy.exceptions import ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String

from robodyn_ros.iteration import DEFAULT_TOL
from robodyn_ros.model import ModelError
from robodyn_ros.robot import Robot
from robodyn_ros.ros.entry import spin_until_interrupted
from robodyn_ros.sim import FRICTION_VELOCITY, INTEGRATORS, SimulatedRobot

MAX_LAG = 0.25  # s of wall time behind schedule after which pacing restarts from now
LOCKSTEP_TIMEOUT = 1.0  # s of wall time a lockstep simulation waits for a command
_CHECKED_AT_START = (
    "integrator",
    "dt",
    "publish_period",
    "real_time_factor",
    "friction_velocity",
    "diagnostic_period",
)


class SimNode(Node):
    """A SimulatedRobot stepped in a thread of its own, commanded by joint efforts."""

    def __init__(self, **kwargs) -> None:
        super().__init__("sim_node", **kwargs)
        self._sim: SimulatedRobot | None = None
        self._steps_per_publish = 1
        self._command = np.zeros(0)
        self._last_error = ""
        self._rejected = 0
        self._failed = ""
        self._stop = threading.Event()
        self._command_arrived = threading.Event()

        self.declare_parameter("robot_description", "")
        self.declare_parameter("integrator", "rk4")
        self.declare_parameter("forward_dynamics_method", "aba")
        self.declare_parameter("forward_dynamics_tolerance", DEFAULT_TOL)
        self.declare_parameter("dt", 0.001)
        self.declare_parameter("publish_period", 0.01)
        self.declare_parameter("real_time_factor", 1.0)
        self.declare_parameter("initial_positions", Parameter.Type.DOUBLE_ARRAY)
        self.declare_parameter("friction_velocity", FRICTION_VELOCITY)
        self.declare_parameter("diagnostic_period", 1.0)
        self.declare_parameter("lockstep", False)
        for name in _CHECKED_AT_START:
            problem = self._parameter_problem(self.get_parameter(name), loading=False)
            if problem:
                raise ValueError(f"sim_node: {problem}")
        self._real_time_factor = self.get_parameter("real_time_factor").value
        self.add_on_set_parameters_callback(self._check_parameters)

        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.create_subscription(String, "robot_description", self._on_description, latched)
        self.create_subscription(Float64MultiArray, "effort_commands", self._on_command, 10)
        self._joint_states = self.create_publisher(JointState, "joint_states", 10)
        self._clock_publisher = self.create_publisher(Clock, "/clock", 10)
        self._diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self.create_timer(self.get_parameter("diagnostic_period").value, self._publish_diagnostics)
        self._diagnostic_start = (time.monotonic(), 0.0)

        description = self.get_parameter("robot_description").value
        if description:
            self._load(description, "the robot_description parameter")
        self._thread = threading.Thread(target=self._run, name="sim_node loop", daemon=True)
        self._thread.start()

    @property
    def sim(self) -> SimulatedRobot | None:
        """The simulated robot (None until a robot description is loaded)."""
        return self._sim

    @property
    def running(self) -> bool:
        """Whether the simulation thread is alive (it idles until a description loads)."""
        return self._thread.is_alive()

    def stop(self, timeout: float = 5.0) -> None:
        """End the simulation thread and wait for it."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def destroy_node(self) -> None:
        self.stop()
        super().destroy_node()

    # -- model and parameters ---------------------------------------------------------------

    def _load(self, urdf: str, source: str) -> bool:
        """Build the Robot and a SimulatedRobot at the initial positions; on failure keep the
        previous ones."""
        try:
            robot = Robot.from_urdf_string(urdf)
            method = self.get_parameter("forward_dynamics_method").value
            iterative = method in Robot.ITERATIVE_FORWARD_DYNAMICS_METHODS
            tolerance = self.get_parameter("forward_dynamics_tolerance").value
            sim = SimulatedRobot(
                robot,
                self.get_parameter("integrator").value,
                self.get_parameter("dt").value,
                forward_dynamics_method=method,
                forward_dynamics_options={"tol": tolerance} if iterative else None,
                friction_velocity=self.get_parameter("friction_velocity").value,
            )
        except (ModelError, ValueError) as error:
            self._report(f"robot description from {source} not loaded: {error}")
            return False
        initial = self._initial_positions()
        if initial is not None:
            try:
                sim.reset(initial)
            except ValueError as error:
                self._report(f"initial_positions ignored: {error}")
        start = sim.q
        sim.step(np.zeros(robot.nv))  # load the kernels now, then start over
        sim.reset(start)
        period = self.get_parameter("publish_period").value
        self._steps_per_publish = max(1, round(period / sim.dt))
        self._command = np.zeros(robot.nv)
        self._sim = sim  # the loop picks it up at its next publish
        self.get_logger().info(
            f"simulating robot '{robot.model.name}' from {source}: {robot.nv} joints, "
            f"{sim.integrator}, {sim.forward_dynamics_method}, dt {sim.dt:g} s"
        )
        return True

    def _initial_positions(self) -> list[float] | None:
        try:
            value = self.get_parameter("initial_positions").value
        except ParameterUninitializedException:
            return None
        return None if value is None or len(value) == 0 else list(value)

    def _on_description(self, message: String) -> None:
        self._load(message.data, "the robot_description topic")

    def _check_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        for parameter in parameters:
            reason = self._parameter_problem(parameter, loading=True)
            if reason:
                return SetParametersResult(successful=False, reason=reason)
        for parameter in parameters:
            if parameter.name == "real_time_factor":
                self._real_time_factor = parameter.value
        return SetParametersResult(successful=True)

    def _parameter_problem(self, parameter: Parameter, loading: bool) -> str:
        name, value = parameter.name, parameter.value
        if name == "integrator" and value not in INTEGRATORS:
            return f"integrator must be one of {tuple(INTEGRATORS)}; got '{value}'"
        if name == "forward_dynamics_method" and value not in Robot.FORWARD_DYNAMICS_METHODS:
            return (
                f"forward_dynamics_method must be one of {Robot.FORWARD_DYNAMICS_METHODS}; "
                f"got '{value}'"
            )
        if name in ("dt", "publish_period", "friction_velocity", "diagnostic_period",
                    "forward_dynamics_tolerance") and not (
            isinstance(value, float) and value > 0.0 and np.isfinite(value)
        ):
            return f"{name} must be a positive number; got {value!r}"
        if name == "real_time_factor" and not (
            isinstance(value, float) and value >= 0.0 and np.isfinite(value)
        ):
            return f"real_time_factor must be ≥ 0 (0: as fast as possible); got {value!r}"
        if name == "robot_description" and loading and value:
            if not self._load(value, "a parameter set"):
                return f"robot_description does not load: {self._last_error}"
        return ""

    # -- commands ---------------------------------------------------------------------------

    def _on_command(self, message: Float64MultiArray) -> None:
        sim = self._sim
        if sim is None:
            self._reject("effort_commands received before a robot description; ignored")
            return
        command = np.array(message.data, dtype=float)
        names = sim.robot.joint_names
        if command.shape != (len(names),):
            self._reject(
                f"effort_commands: expected {len(names)} values (one per joint: "
                f"{', '.join(names)}), got {command.size}; keeping the last good command"
            )
            return
        bad = ~np.isfinite(command)
        if bad.any():
            joints = ", ".join(names[i] for i in np.flatnonzero(bad))
            self._reject(
                f"effort_commands: non-finite value (NaN or inf) for {joints}; "
                "keeping the last good command"
            )
            return
        self._command = command
        self._command_arrived.set()

    # -- the simulation loop ----------------------------------------------------------------

    def _run(self) -> None:
        """Wait until the wall time of the next publish (scaled by real_time_factor), step to
        it with the latest command, publish, repeat. Waiting before stepping keeps sim time
        from running ahead of the wall clock and applies the commands that arrived up to then."""
        sim = None
        try:
            while not self._stop.is_set():
                if self._sim is None:  # no robot description yet
                    self._stop.wait(0.01)
                    continue
                if self._sim is not sim:  # a (new) robot: publish its start, restart pacing
                    sim = self._sim
                    self._publish(sim)
                    rate, wall0, sim0 = self._real_time_factor, time.monotonic(), sim.time
                chunk = self._steps_per_publish
                if rate > 0.0 and not self._pace(wall0 + (sim.time + chunk * sim.dt - sim0) / rate):
                    if self._real_time_factor != rate:  # changed while waiting: restart pacing
                        rate, wall0, sim0 = self._real_time_factor, time.monotonic(), sim.time
                    elif not self._stop.is_set():  # too far behind: do not try to catch up
                        wall0, sim0 = time.monotonic() - chunk * sim.dt / rate, sim.time
                    continue
                if self._real_time_factor != rate:
                    rate, wall0, sim0 = self._real_time_factor, time.monotonic(), sim.time
                for _ in range(chunk):
                    command = self._command
                    sim.step(command if command.size == sim.robot.nv else np.zeros(sim.robot.nv))
                self._command_arrived.clear()
                self._publish(sim)
                if self.get_parameter("lockstep").value:
                    self._command_arrived.wait(LOCKSTEP_TIMEOUT)
        except Exception as error:  # the loop must not die silently
            if self._stop.is_set() or not self.context.ok():
                return
            self._failed = f"simulation stopped: {type(error).__name__}: {error}"
            self.get_logger().error(self._failed)

    def _pace(self, deadline: float) -> bool:
        """Sleep until `deadline` (monotonic s) in slices, so that stop() and a change of
        real_time_factor are noticed; False when interrupted or more than MAX_LAG late."""
        rate = self._real_time_factor
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0.0:
                return remaining > -MAX_LAG
            if self._stop.wait(min(remaining, 0.05)) or self._real_time_factor != rate:
                return False

    def _publish(self, sim: SimulatedRobot) -> None:
        t = sim.time
        stamp = Time(sec=int(t), nanosec=round((t - int(t)) * 1e9))
        if stamp.nanosec >= 1_000_000_000:
            stamp = Time(sec=stamp.sec + 1, nanosec=0)
        message = JointState()
        message.header.stamp = stamp
        message.name = list(sim.robot.joint_names)
        message.position = sim.q.tolist()
        message.velocity = sim.qd.tolist()
        message.effort = sim.effort.tolist()
        self._joint_states.publish(message)
        self._clock_publisher.publish(Clock(clock=stamp))

    # -- reporting --------------------------------------------------------------------------

    def _report(self, error: str) -> None:
        self._last_error = error
        self.get_logger().error(error, throttle_duration_sec=1.0)

    def _reject(self, error: str) -> None:
        self._rejected += 1
        self._last_error = error
        self.get_logger().warning(error, throttle_duration_sec=1.0)

    def _publish_diagnostics(self) -> None:
        sim = self._sim
        sim_time = sim.time if sim is not None else 0.0
        now = time.monotonic()
        (wall0, sim0), self._diagnostic_start = self._diagnostic_start, (now, sim_time)
        elapsed = now - wall0
        status = DiagnosticStatus(name="robodyn_ros: sim_node", hardware_id="")
        if sim is None or self._failed:
            status.level = DiagnosticStatus.ERROR
            status.message = self._failed or "no robot description"
        elif self._rejected:
            status.level, status.message = DiagnosticStatus.WARN, self._last_error
        else:
            status.level, status.message = DiagnosticStatus.OK, "simulating"
        achieved = (sim_time - sim0) / elapsed if elapsed > 0 and sim_time >= sim0 else 0.0
        values = {
            "model": sim.robot.model.name if sim else "",
            "integrator": sim.integrator if sim else "",
            "sim time (s)": f"{sim_time:.3f}",
            "real-time factor": f"{achieved:.2f}",
            "target real-time factor": f"{self._real_time_factor:g}",
            "rejected commands": str(self._rejected),
            "last error": self._last_error,
        }
        status.values = [KeyValue(key=key, value=value) for key, value in values.items()]
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self._diagnostics.publish(array)
        self._rejected = 0


def main(args: list[str] | None = None) -> None:
    """Run the node until interrupted."""
    spin_until_interrupted(SimNode, args)
