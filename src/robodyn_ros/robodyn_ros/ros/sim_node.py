"""sim_node: a simulated robot driven by joint effort commands, publishing its joint states.

Parameters:
    robot_description (string): the URDF; when empty, the node waits for the
        ``robot_description`` topic (transient local, as robot_state_publisher provides it).
    armature (string, ""): rotor inertia per joint, added to M's diagonal: YAML text of a
        mapping ("{panda_joint1: 0.1}", kg·m² or kg) or the path of a YAML file of one
        (ros.entry.armature_parameter); changeable at run time.
    gravity (double[3], [0, 0, -9.81]): m/s² in the base frame (a wall mount: [9.81, 0, 0]);
        changeable at run time.
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

The simulation runs in its own thread (not a ROS timer), paced to real_time_factor. Effort
commands are taken newest first (ros.intake): each step applies the newest command that has
arrived; the diagnostics count the commands superseded before a step applied them and the age
of each from its arrival to its first step. A bad command (wrong length, NaN or inf) is
logged, reported in the diagnostics and ignored: the last good command stays applied.

A new robot (parameter or topic, or the robot with a new armature) is built into a
SimulatedRobot, which starts from the initial positions at sim time 0, and stepped once before it
replaces the one simulated; if that fails (a robot whose tip moves no mass has no forward
dynamics) it is refused with the reason and the simulation goes on as it was. A step that
fails is reported (ERROR diagnostic, log) and the simulation resumes from the last state it
reached. Every callback runs under the node's guard (ros.guard). `stop()` (also called by
`destroy_node`) ends and joins the thread.
"""

from __future__ import annotations

import threading
import time

import numpy as np
from builtin_interfaces.msg import Time
from rcl_interfaces.msg import SetParametersResult
from rclpy.exceptions import ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robodyn_ros.iteration import DEFAULT_TOL
from robodyn_ros.robot import Robot
from robodyn_ros.ros.entry import (
    follow_robot_description,
    publish_diagnostics,
    spin_until_interrupted,
)
from robodyn_ros.ros.guard import ERROR, OK, WARN, Guard, NodeHealth, RefusedError
from robodyn_ros.ros.intake import Arrival, NewestFirst
from robodyn_ros.sim import FRICTION_VELOCITY, INTEGRATORS, SimulatedRobot

MAX_LAG = 0.25  # s of wall time behind schedule after which pacing restarts from now
LOCKSTEP_TIMEOUT = 1.0  # s of wall time a lockstep simulation waits for a command
RESUME_DELAY = 0.1  # s of wall time between a failure of the simulation and its resumption
COMMAND_QUEUE = 10  # effort commands the middleware keeps for the node, all taken at once
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
        self.health = NodeHealth(self.get_logger())
        self.guard = Guard(self.health)
        self._sim: SimulatedRobot | None = None
        self._steps_per_publish = 1
        # the newest good command and its arrival (None: applied already, or the start's zero)
        self._command: tuple[np.ndarray, Arrival | None] = (np.zeros(0), None)
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
            problem = self._parameter_problem(self.get_parameter(name))
            if problem:
                raise ValueError(f"sim_node: {problem}")
        self._real_time_factor = self.get_parameter("real_time_factor").value
        self.add_on_set_parameters_callback(self.guard.parameters(self._check_parameters))

        self._commands = NewestFirst("effort_commands")
        self._commands.subscription = self.create_subscription(
            Float64MultiArray, "effort_commands",
            self.guard.callback("effort_commands", self._on_command), COMMAND_QUEUE,
        )
        self._joint_states = self.create_publisher(JointState, "joint_states", 10)
        self._clock_publisher = self.create_publisher(Clock, "/clock", 10)
        publish_diagnostics(self, self.guard, self.get_parameter("diagnostic_period").value,
                            self._status)
        self._diagnostic_start = (time.monotonic(), 0.0)
        follow_robot_description(self, self.guard, self._adopt)
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

    def _adopt(self, robot: Robot) -> None:
        """Simulate `robot` from the initial positions, after one step (which loads the
        kernels) has worked; a robot with the joints of the one simulated (the same arm with a
        payload, gravity or armature changed) carries on from its state and command instead.

        Raises:
            Exception: what SimulatedRobot raises for the parameters, or the step's failure.
        """
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
        initial = self._initial_positions()
        if initial is not None:
            try:
                sim.reset(initial)
            except ValueError as error:
                self.health.reject("initial_positions", f"initial_positions ignored: {error}")
        start = sim.q
        sim.step(np.zeros(robot.nv))  # load the kernels now, then start over
        sim.reset(start)
        period = self.get_parameter("publish_period").value
        self._steps_per_publish = max(1, round(period / sim.dt))
        simulated = self._sim
        if simulated is None or simulated.robot.joint_names != robot.joint_names:
            self._command = (np.zeros(robot.nv), None)
        self._sim = sim  # the loop picks it up at its next publish

    def _initial_positions(self) -> list[float] | None:
        try:
            value = self.get_parameter("initial_positions").value
        except ParameterUninitializedException:
            return None
        return None if value is None or len(value) == 0 else list(value)

    def _check_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        for parameter in parameters:
            reason = self._parameter_problem(parameter)
            if reason:
                return SetParametersResult(successful=False, reason=reason)
        for parameter in parameters:
            if parameter.name == "real_time_factor":
                self._real_time_factor = parameter.value
        return SetParametersResult(successful=True)

    def _parameter_problem(self, parameter: Parameter) -> str:
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
        return ""

    # -- commands ---------------------------------------------------------------------------

    def _on_command(self, message: Float64MultiArray, info: dict) -> None:
        """Hold the newest command (this one or one queued behind it) for the next step.

        Raises:
            RefusedError: no robot yet, a wrong length or a NaN or inf (the guard reports it;
                the last good command stays applied).
        """
        arrival = self._commands.take(message, info)
        sim = self._sim
        if sim is None:
            self._commands.mark_handled()
            raise RefusedError("effort_commands received before a robot description; ignored")
        command = np.array(arrival.message.data, dtype=float)
        names = sim.robot.joint_names
        problem = ""
        if command.shape != (len(names),):
            problem = (f"expected {len(names)} values (one per joint: {', '.join(names)}), "
                       f"got {command.size}")
        elif not np.isfinite(command).all():
            joints = ", ".join(names[i] for i in np.flatnonzero(~np.isfinite(command)))
            problem = f"non-finite value (NaN or inf) for {joints}"
        if problem:
            self._commands.mark_handled()
            raise RefusedError(f"effort_commands: {problem}; keeping the last good command")
        self._command = (command, arrival)
        self._command_arrived.set()

    # -- the simulation loop ----------------------------------------------------------------

    def _run(self) -> None:
        """Simulate until stopped; a failure is reported by the guard and the simulation
        resumes from the last state reached (a step changes the state only when it works)."""
        simulate = self.guard.callback("simulation", self._simulate)
        while not self._stop.is_set() and self.context.ok():
            simulate()  # returns when stopped, or after a failure the guard reported
            self._stop.wait(RESUME_DELAY)

    def _simulate(self) -> None:
        """Wait until the wall time of the next publish (scaled by real_time_factor), step to
        it with the latest command, publish, repeat. Waiting before stepping keeps sim time
        from running ahead of the wall clock and applies the commands that arrived up to then."""
        sim = None
        while not self._stop.is_set():
            if self._sim is None:  # no robot description yet
                self._stop.wait(0.01)
                continue
            latest = self._sim
            if latest is not sim:  # a (new) robot: publish its start, restart pacing
                if sim is not None and latest.robot.joint_names == sim.robot.joint_names:
                    latest.resume(sim)  # the same arm changed (payload, gravity): carry on
                sim = latest
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
                sim.step(self._newest_command(sim.robot.nv))
            self._command_arrived.clear()
            self._publish(sim)
            if self.get_parameter("lockstep").value:
                self._command_arrived.wait(LOCKSTEP_TIMEOUT)

    def _newest_command(self, n: int) -> np.ndarray:
        """The newest good command (zeros while it is not for n joints); the first step that
        applies a command counts it as handled, with its age."""
        command, arrival = self._command
        if arrival is not None:
            self._command = (command, None)
            self._commands.mark_handled()
            self._commands.mark_answered(arrival)
        return command if command.size == n else np.zeros(n)

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

    def _status(self):
        sim = self._sim
        sim_time = sim.time if sim is not None else 0.0
        now = time.monotonic()
        (wall0, sim0), self._diagnostic_start = self._diagnostic_start, (now, sim_time)
        elapsed = now - wall0
        skipping, intake = self._commands.diagnostic_values(int(self._command[1] is not None))
        if sim is None:
            level, message = ERROR, "no robot description"
        elif skipping:
            level, message = WARN, "effort_commands arrive faster than steps apply them: " \
                "applying the newest, dropping those it superseded"
        else:
            level, message = OK, "simulating"
        achieved = (sim_time - sim0) / elapsed if elapsed > 0 and sim_time >= sim0 else 0.0
        values = {
            "model": sim.robot.model.name if sim else "",
            "integrator": sim.integrator if sim else "",
            "sim time (s)": f"{sim_time:.3f}",
            "real-time factor": f"{achieved:.2f}",
            "target real-time factor": f"{self._real_time_factor:g}",
            **intake,
        }
        return self.health.status(f"robodyn_ros: {self.get_name()}", values["model"], level,
                                  message, values)


def main(args: list[str] | None = None) -> None:
    """Run the node until interrupted."""
    spin_until_interrupted(SimNode, args)
