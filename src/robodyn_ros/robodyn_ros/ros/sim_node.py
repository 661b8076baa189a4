"""sim_node: a simulated robot driven by joint effort commands, publishing its joint states.
A lifecycle node (ros.robot_node): it simulates while active and pauses while inactive.

Parameters: COMMON_PARAMETERS (ros.robot_node) and PARAMETERS below, each with its
description, type and range (``ros2 param describe``). A change of the simulation's settings
(integrator, dt, forward dynamics, friction, publish period, joints, wrench sensors) rebuilds
the simulated robot, which carries on from its state and time; real_time_factor and lockstep
take effect at once; initial_positions is read-only (the state a robot description starts
from).

Subscribes ``effort_commands`` (std_msgs/Float64MultiArray: one effort per joint of the
``joints`` parameter, in its order, as ros2_control's forward_command_controller takes its
``~/commands``; all the robot's joints in URDF order when ``joints`` is empty; joints not
listed get no effort; held until the next command; best effort, with QoS overrides) and
``robot_description``. Publishes ``joint_states`` (sensor_msgs/JointState: position, velocity
and the effort applied, i.e. the command clipped to the effort limits; stamped with sim time,
frame_id the root link with frame_prefix), ``/clock`` (rosgraph_msgs/Clock, sim time from 0)
and ``/diagnostics``.

A floating-base robot (parameter floating_base, or a URDF floating joint at the root) is
simulated on its configuration's group, free or held on the contacts of the contacts
parameter (each frame held where it is when the simulation starts, Baumgarte-stabilised by
contact_gains). joint_states carry its joints (not the base); ``odometry``
(nav_msgs/Odometry, REP 105) carries the base's ground truth, with each joint_states message:
its pose in world_frame and its twist in the base frame (child_frame_id the base link), both
with frame_prefix, the transform world_frame → base link on ``/tf`` too where tf2_ros is
installed. effort_commands carry the joints' efforts (nothing pushes on the base).

``external_wrenches`` (geometry_msgs/WrenchStamped) push the robot: each acts on the frame its
header.frame_id names (with or without frame_prefix), at the frame's origin in world-aligned
axes (Robot.jacobian's: the root link's for a fixed base, the world's for a floating one),
from the next step until another on that frame replaces it; all zeros releases it (ros.wrenches).

A world (parameter world, YAML text of contact.world_of's mapping, or world_file, the path of
a YAML file of one; at most one of them) gives the robot planes to touch with the
``<collision>`` elements of its description (a fixed base's own, held by its mount, left out;
a relative mesh filename from the description file's folder, a package:// one through the
ament index or the folders above that file; ros.contacts.world_shapes): each step is then
contact.time_step's semi-implicit step, whatever the integrator parameter says (the integrator
applies in free space; the diagnostics name the one used). A world that does not parse or that
contact.world_of refuses (a zero normal, a negative friction), named by its parameter and
field, and planes with a robot without collision shapes on a link that moves, with held
contacts (parameter contacts) or with an iterative forward dynamics method, refuse the robot
(or the parameter change) with the reason.
``contacts`` (robodyn_interfaces/Contacts) carries, with each joint_states message and its
stamp, the contacts of the last step and their total force, frame_id world_frame for a
floating base and the root link for a fixed one (with frame_prefix); empty without a world.
``measured_wrenches`` (geometry_msgs/WrenchStamped) carries, with each joint_states message and
its stamp, one reading per frame of the wrench_sensors parameter (header.frame_id the frame
with frame_prefix): what a force/torque sensor there reads of the world, the wrench [force;
torque] that the last step's contacts on its link (with the links fixed to it) and on the links
beyond it exert on the robot, about the frame's origin in world-aligned axes (the root link's
for a fixed base, the world's for a floating one), as ros.controller_node takes it; zeros
while none of them touches. A frame the robot lacks refuses the robot (or the change) naming
the parameter.

The simulation runs in its own thread (not a ROS timer), paced to real_time_factor. Effort
commands are taken newest first (ros.intake): each step applies the newest command that has
arrived; the diagnostics count the commands superseded before a step applied them and the age
of each from its arrival to its first step. A bad command (wrong length, NaN or inf) is
logged, reported in the diagnostics and ignored: the last good command stays applied.

A new robot (parameter or topic) is built into a SimulatedRobot, which starts from the
initial positions at sim time 0 (the same joints changed, by a payload, gravity, armature or
settings, carry on from where they are), and stepped once before it replaces the one
simulated; if that fails (a robot whose tip moves no mass has no forward dynamics) it is
refused with the reason and the simulation goes on as it was. A step that fails is reported
(ERROR diagnostic, log) and the simulation resumes from the last state it reached. A step
whose contacts the solver cannot solve (contact.ContactError) is such a step: the robot holds
the state it reached, joint_states and contacts repeat it, and the step is tried again every
RESUME_DELAY, so that a new command, wrench or parameter can free it. Every
callback runs under the node's guard (ros.guard). `stop()` (also called by `destroy_node`)
ends and joins the thread.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml
from builtin_interfaces.msg import Time
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from robodyn_interfaces.msg import Contacts
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from robodyn_ros.contact.world import World, WorldError, load_world, world_of
from robodyn_ros.model.model import MULTI_DOF_JOINTS
from robodyn_ros.robot import Robot
from robodyn_ros.robot.contact_dynamics import CONTACT_ROWS, Contact
from robodyn_ros.robot.iteration import DEFAULT_TOL
from robodyn_ros.ros.commands import JOINTS_PARAMETER, command_order
from robodyn_ros.ros.contacts import contacts_message, world_shapes
from robodyn_ros.ros.guard import RefusedError
from robodyn_ros.ros.intake import Arrival, NewestFirst
from robodyn_ros.ros.joint_states import input_qos
from robodyn_ros.ros.odometry import base_link, odometry_message, transform_of
from robodyn_ros.ros.parameters import ParameterRecord, ParameterSpec
from robodyn_ros.ros.robot_node import WORLD_FRAME_PARAMETER, RobotNode, run_node, serving_status
from robodyn_ros.ros.wrenches import wrench_of
from robodyn_ros.sim import FRICTION_VELOCITY, INTEGRATORS, SimulatedRobot
from robodyn_ros.sim.simulated_robot import WORLD_INTEGRATOR
from robodyn_ros.sim.wrench_sensor import WrenchSensor, sensor_reading, wrench_sensor

if TYPE_CHECKING:
    from rclpy.subscription import MessageInfo

try:  # tf2 comes with a ROS install; the PyPI wheels have none
    import tf2_ros
except ImportError:
    tf2_ros = None

MAX_LAG = 0.25  # s of wall time behind schedule after which pacing restarts from now
LOCKSTEP_TIMEOUT = 1.0  # s of wall time a lockstep simulation waits for a command
RESUME_DELAY = 0.1  # s of wall time between a failure of the simulation and its resumption
COMMAND_QUEUE = 10  # effort commands the middleware keeps for the node, all taken at once
PARAMETERS = (
    ParameterSpec("integrator", "rk4", "the integration scheme", choices=tuple(INTEGRATORS)),
    ParameterSpec("forward_dynamics_method", "aba", "how q̈ is computed "
                  "(Robot.forward_dynamics)", choices=Robot.FORWARD_DYNAMICS_METHODS),
    ParameterSpec("forward_dynamics_tolerance", DEFAULT_TOL,
                  "the stopping tolerance of an iterative forward dynamics method, "
                  "warm-started from the previous steps; direct methods ignore it",
                  bounds=(1e-16, 1.0)),
    ParameterSpec("dt", 0.001, "s, the integration step", bounds=(1e-6, 1.0)),
    ParameterSpec("publish_period", 0.01, "s of sim time between joint_states and /clock "
                  "messages (a whole number of steps, at least one)", bounds=(1e-6, 10.0)),
    ParameterSpec("real_time_factor", 1.0,
                  "sim seconds per wall second; 0: as fast as possible", bounds=(0.0, 1e3)),
    ParameterSpec("initial_positions", Parameter.Type.DOUBLE_ARRAY,
                  "q at start, one per joint in URDF order (rad or m), or with a floating base "
                  "the whole configuration [x y z, qx qy qz qw, joints]; default q = 0 moved "
                  "inside the position limits (the base at the world origin); the robot starts "
                  "at rest", read_only=True),
    ParameterSpec("friction_velocity", FRICTION_VELOCITY,
                  "m/s or rad/s, ε of the smoothed Coulomb friction", bounds=(1e-9, 10.0)),
    ParameterSpec("lockstep", False,
                  "after each joint_states message wait for the next effort command (at most "
                  f"{LOCKSTEP_TIMEOUT:g} s of wall time), so that a controller in another "
                  "node closes the loop every publish_period however busy the machine is"),
    JOINTS_PARAMETER,
    ParameterSpec("contacts", Parameter.Type.STRING_ARRAY,
                  "frames held in the world where they are when the simulation starts "
                  "(a foot on the ground, a hand on a wall): 'frame' (its pose held) or "
                  "'frame:3d' (its origin held); empty: free"),
    ParameterSpec("contact_gains", [100.0, 20.0],
                  "the contacts' Baumgarte gains kp (1/s²) and kd (1/s), ≥ 0"),
    ParameterSpec("world", "",
                  "the planes the robot's <collision> elements touch: YAML text of "
                  "{planes: [{normal: [x, y, z], point: [x, y, z], friction: μ}, ...]}, in "
                  "world_frame (a fixed base: its root frame), m; with planes each step is "
                  f"contact.time_step's ({WORLD_INTEGRATOR}, whatever integrator says); "
                  "empty: free space"),
    ParameterSpec("world_file", "",
                  "the path of a YAML file of the world (contact.load_world), in place of "
                  "world; empty: none"),
    WORLD_FRAME_PARAMETER,
    ParameterSpec("wrench_sensors", Parameter.Type.STRING_ARRAY,
                  "frames with a force/torque sensor: each one's reading, the wrench [force; "
                  "torque] (N, N·m) the world's contacts on its link (with the links fixed to "
                  "it) and on the links beyond it exert on the robot, about its origin in "
                  "world-aligned axes, is published on measured_wrenches with each "
                  "joint_states; empty: none"),
)


@dataclass(frozen=True)
class SimSettings(ParameterRecord):
    """The simulation the parameters ask for, each field its parameter's value (PARAMETERS
    describes them); an array parameter never set is empty."""

    integrator: str
    forward_dynamics_method: str
    forward_dynamics_tolerance: float
    dt: float  # s
    publish_period: float  # s of sim time
    friction_velocity: float  # m/s or rad/s
    joints: tuple[str, ...]
    contacts: tuple[str, ...]
    contact_gains: tuple[float, float]  # kp (1/s²), kd (1/s); SimulatedRobot checks both
    world: str
    world_file: str
    wrench_sensors: tuple[str, ...]
    initial_positions: tuple[float, ...]  # read-only: set at start


# a change of one rebuilds the simulated robot (initial_positions cannot change)
REBUILDING_PARAMETERS = tuple(field.name for field in fields(SimSettings))


@dataclass(frozen=True)
class HeldCommand:
    """The newest good command (nv efforts) and its arrival; None once a step applied it, or
    for the start's zero."""

    effort: np.ndarray
    arrival: Arrival | None


class SimNode(RobotNode):
    """A SimulatedRobot stepped in a thread of its own, commanded by joint efforts."""

    TASK = "simulation"
    PARAMETERS = PARAMETERS

    def __init__(self, **kwargs: Any) -> None:
        self._sim: SimulatedRobot | None = None
        self._sensing = Sensing(None, ())  # the wrench sensors of the robot simulated
        self._steps_per_publish = 1
        self._command_order = np.zeros(0, dtype=np.int64)  # robot index of each command entry
        self._command = HeldCommand(np.zeros(0), None)
        self._stop = threading.Event()
        self._command_arrived = threading.Event()
        self._commands = NewestFirst("effort_commands")
        self._diagnostic_start = (time.monotonic(), 0.0)
        self._real_time_factor, self._lockstep = 1.0, False  # the parameters', once declared
        # made before the node, so that destroying a node whose start a signal cut short
        # (rclpy does on shutdown) finds it, not started
        self._thread = threading.Thread(target=self._run, name="sim_node loop", daemon=True)
        super().__init__("sim_node", **kwargs)
        self._real_time_factor = self.value("real_time_factor")
        self._lockstep = self.value("lockstep")
        self._thread.start()

    def create_interfaces(self) -> None:
        self._commands.subscription = self.create_subscription(
            Float64MultiArray, "effort_commands",
            self.guard.callback("effort_commands", self._on_command), **input_qos(COMMAND_QUEUE),
        )
        self.create_subscription(
            WrenchStamped, "external_wrenches",
            self.guard.callback("external_wrenches", self._on_wrench), **input_qos(COMMAND_QUEUE),
        )
        self._joint_states = self.create_lifecycle_publisher(JointState, "joint_states", 10)
        self._odometry = self.create_lifecycle_publisher(Odometry, "odometry", 10)
        self._transforms = None if tf2_ros is None else tf2_ros.TransformBroadcaster(self)
        self._clock_publisher = self.create_lifecycle_publisher(Clock, "/clock", 10)
        self._contacts = self.create_lifecycle_publisher(Contacts, "contacts", 10)
        self._measured_wrenches = self.create_lifecycle_publisher(WrenchStamped,
                                                                  "measured_wrenches", 10)

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

    def adopt(self, robot: Robot) -> None:
        """Simulate `robot` from the initial positions, after one step (which loads the
        kernels) has worked; a robot with the joints of the one simulated (the same arm with a
        payload, gravity, armature or settings changed) carries on from its state and command
        instead.

        Raises:
            Exception: what SimulatedRobot raises for the parameters, the joints or
                wrench_sensors parameter naming a frame the robot lacks, a world that cannot be
                taken, collision shapes that cannot be read, or the step's failure.
        """
        settings = SimSettings.of(self.value)
        order = command_order(robot, settings.joints)
        sensors = wrench_sensors_parameter(robot, settings.wrench_sensors)
        method = settings.forward_dynamics_method
        iterative = method in Robot.ITERATIVE_FORWARD_DYNAMICS_METHODS
        world = world_parameters(settings.world, settings.world_file)
        shapes = world_shapes(world, self.follower.description if self.follower else None,
                              robot)
        integrator = WORLD_INTEGRATOR if world.planes else settings.integrator
        if integrator != settings.integrator:
            self.get_logger().info(f"world of {len(world.planes)} plane(s): stepping "
                                   f"{integrator} with contacts (integrator "
                                   f"'{settings.integrator}' applies in free space)")
        sim = SimulatedRobot(
            robot,
            integrator,
            settings.dt,
            forward_dynamics_method=method,
            forward_dynamics_options={"tol": settings.forward_dynamics_tolerance}
            if iterative else None,
            friction_velocity=settings.friction_velocity,
            contacts=contacts_parameter(robot, settings.contacts),
            contact_gains=settings.contact_gains,
            world=world,
            collision_shapes=shapes,
        )
        if settings.initial_positions:
            try:
                sim.reset(initial_configuration(robot, list(settings.initial_positions)))
            except ValueError as error:
                self.health.reject("initial_positions", f"initial_positions ignored: {error}")
        start = sim.q
        sim.step(np.zeros(robot.nv))  # load the kernels now, then start over
        sim.reset(start)
        self._steps_per_publish = max(1, round(settings.publish_period / sim.dt))
        simulated = self._sim
        if simulated is None or simulated.robot.joint_names != robot.joint_names \
                or not np.array_equal(order, self._command_order):
            self._command = HeldCommand(np.zeros(robot.nv), None)
        self._command_order = order
        self._sensing = Sensing(sim, sensors)
        self._sim = sim  # the loop picks it up at its next publish

    def release(self) -> None:
        self._sim = None
        self._sensing = Sensing(None, ())

    def apply(self, changes: dict[str, Any]) -> None:
        """Rebuild the simulated robot for a change of its settings; pace and lockstep at once.

        Raises:
            Exception: the rebuilt robot is refused (the change is refused with the reason).
        """
        if self.follower is not None and set(changes) & set(REBUILDING_PARAMETERS):
            self.follower.readopt()
        self._real_time_factor = changes.get("real_time_factor", self._real_time_factor)
        self._lockstep = changes.get("lockstep", self._lockstep)

    # -- commands ---------------------------------------------------------------------------

    def _on_command(self, message: Float64MultiArray, info: MessageInfo) -> None:
        """Hold the newest command (this one or one queued behind it) for the next step.

        Raises:
            RefusedError: no robot yet, a wrong length or a NaN or inf (the guard reports it;
                the last good command stays applied).
        """
        arrival = self._commands.take(message, info)
        sim, order = self._sim, self._command_order
        if sim is None:
            self._commands.mark_handled()
            raise RefusedError("effort_commands received before a robot description; ignored")
        values = np.array(arrival.message.data, dtype=float)
        names = [sim.robot.joint_names[i] for i in order]
        problem = ""
        if values.shape != (len(names),):
            problem = (f"expected {len(names)} values (one per joint: {', '.join(names)}), "
                       f"got {values.size}")
        elif not np.isfinite(values).all():
            joints = ", ".join(names[i] for i in np.flatnonzero(~np.isfinite(values)))
            problem = f"non-finite value (NaN or inf) for {joints}"
        if problem:
            self._commands.mark_handled()
            raise RefusedError(f"effort_commands: {problem}; keeping the last good command")
        command = np.zeros(sim.robot.nv)
        command[order] = values
        self._command = HeldCommand(command, arrival)
        self._command_arrived.set()

    def _on_wrench(self, message: WrenchStamped) -> None:
        """Push the simulated robot with the wrench, on its frame, from the next step until
        another on that frame replaces it (all zeros: released).

        Raises:
            RefusedError: no robot yet, a frame the robot lacks or a wrench not finite (the
                guard reports it; the wrenches applied stay).
        """
        sim = self._sim
        if sim is None:
            raise RefusedError("external_wrenches received before a robot description; "
                               "ignored")
        sim.apply_wrench(*wrench_of(message, self.robot_frame, "external_wrenches"))

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
            if self._sim is None or not self.active:  # no robot yet, or paused
                self._stop.wait(0.01)
                sim = None  # publish the start and restart pacing when it goes on
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
            if self._lockstep:
                self._command_arrived.wait(LOCKSTEP_TIMEOUT)

    def _newest_command(self, n: int) -> np.ndarray:
        """The newest good command (zeros while it is not for n joints); the first step that
        applies a command counts it as handled, with its age."""
        held = self._command
        if held.arrival is not None:
            self._command = HeldCommand(held.effort, None)
            self._commands.mark_handled()
            self._commands.mark_answered(held.arrival)
        return held.effort if held.effort.size == n else np.zeros(n)

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
        robot, q = sim.robot, sim.q
        world_frame = self.frame_id(self.value("world_frame") if robot.model.floating_base
                                    else robot.model.root_link)
        if robot.model.floating_base:  # first: a joint state is answered with the newest base
            odometry = odometry_message(q, sim.qd, world_frame, self.frame_id(base_link(robot)))
            odometry.header.stamp = stamp
            self._odometry.publish(odometry)
            if self._transforms is not None:
                self._transforms.sendTransform(transform_of(odometry))
        sensing = self._sensing  # before joint_states: a controller answers it with them
        for sensor in sensing.sensors if sensing.sim is sim else ():
            self._measured_wrenches.publish(wrench_message(
                sensor_reading(robot, q, sim.world_contacts, sensor), stamp,
                self.frame_id(sensor.frame)))
        rows = measured_rows(robot)
        message = JointState()
        message.header.stamp = stamp
        message.header.frame_id = self.frame_id(robot.model.root_link)
        message.name = [robot.joint_names[row] for row in rows]
        message.position = q[configuration_entries(robot)].tolist()
        message.velocity = sim.qd[rows].tolist()
        message.effort = sim.effort[rows].tolist()
        self._joint_states.publish(message)
        self._contacts.publish(contacts_message(sim.world_contacts, stamp, world_frame))
        self._clock_publisher.publish(Clock(clock=stamp))

    # -- reporting --------------------------------------------------------------------------

    def report(self) -> tuple[int, str, dict[str, str]]:
        sim = self._sim
        sim_time = sim.time if sim is not None else 0.0
        now = time.monotonic()
        (wall0, sim0), self._diagnostic_start = self._diagnostic_start, (now, sim_time)
        elapsed = now - wall0
        pending = int(self._command.arrival is not None)
        skipping, intake = self._commands.diagnostic_values(pending)
        level, message = serving_status(
            sim is not None, skipping, "simulating", "effort_commands arrive faster than steps "
            "apply them: applying the newest, dropping those it superseded")
        achieved = (sim_time - sim0) / elapsed if elapsed > 0 and sim_time >= sim0 else 0.0
        values = {
            "integrator": sim.integrator if sim else "",
            "world planes": str(len(sim.world.planes)) if sim else "",
            "world contacts": str(len(sim.world_contacts)) if sim else "",
            "sim time (s)": f"{sim_time:.3f}",
            "real-time factor": f"{achieved:.2f}",
            "target real-time factor": f"{self._real_time_factor:g}",
            **intake,
        }
        return level, message, values


@dataclass(frozen=True)
class Sensing:
    """The wrench sensors of one simulated robot (None: none simulated), so that a robot
    replaced while the loop publishes it is not read with its successor's sensors."""

    sim: SimulatedRobot | None
    sensors: tuple[WrenchSensor, ...]


def wrench_sensors_parameter(robot: Robot, frames: Sequence[str]) -> tuple[WrenchSensor, ...]:
    """The WrenchSensors of the wrench_sensors parameter.

    Args:
        robot: the robot simulated.
        frames: the parameter's value (empty: no sensor).

    Returns:
        One sensor per frame, in the parameter's order.

    Raises:
        RefusedError: a frame the robot lacks, named with the parameter.
    """
    for frame in frames:
        if frame not in robot.frame_names:
            raise RefusedError(f"wrench_sensors: robot '{robot.model.name}' has no frame "
                               f"'{frame}'")
    return tuple(wrench_sensor(robot.model, frame) for frame in frames)


def wrench_message(wrench: np.ndarray, stamp: Time, frame_id: str) -> WrenchStamped:
    """A WrenchStamped of a wrench.

    Args:
        wrench: (6,) [fx fy fz tx ty tz], N and N·m.
        stamp: the header's stamp.
        frame_id: the header's frame_id.
    """
    message = WrenchStamped()
    message.header.stamp, message.header.frame_id = stamp, frame_id
    force, torque = message.wrench.force, message.wrench.torque
    force.x, force.y, force.z, torque.x, torque.y, torque.z = (float(x) for x in wrench)
    return message


def measured_rows(robot: Robot) -> np.ndarray:
    """The rows of the joints a JointState carries: those of one degree of freedom (not a
    floating base's)."""
    return np.array([joint.v.start for joint in robot.configuration_joints
                     if joint.kind not in MULTI_DOF_JOINTS], dtype=np.int64)


def configuration_entries(robot: Robot) -> np.ndarray:
    """Where in q the positions of measured_rows' joints are."""
    return np.array([joint.q.start for joint in robot.configuration_joints
                     if joint.kind not in MULTI_DOF_JOINTS], dtype=np.int64)


def initial_configuration(robot: Robot, values: list[float]) -> np.ndarray:
    """q of the initial_positions parameter: the whole configuration (nq values), or one
    position per joint of one degree of freedom with the base at the world origin.

    Raises:
        ValueError: another number of values, naming both counts.
    """
    if len(values) == robot.nq:
        return np.array(values, dtype=float)
    entries = configuration_entries(robot)
    if len(values) != entries.size:
        raise ValueError(f"initial_positions: {len(values)} values; robot "
                         f"'{robot.model.name}' takes {entries.size} (one per joint) or its "
                         f"whole configuration of {robot.nq}")
    q = robot.neutral()
    q[entries] = values
    return q


def world_parameters(text: str, path: str) -> World:
    """The World of the world parameter (YAML text of contact.world_of's mapping) or of the
    file the world_file parameter names (contact.load_world); free space when both are empty.

    Raises:
        RefusedError: both set, text that is not YAML, a file that cannot be read, or a world
            contact.world_of refuses; naming the parameter and the field.
    """
    if text.strip() and path.strip():
        raise RefusedError("world and world_file are both set: give the world in one of them")
    try:
        if path.strip():
            return load_world(path)
        if not text.strip():
            return World()
        document = yaml.safe_load(text)
    except WorldError as error:
        raise RefusedError(f"world_file: {error}") from None
    except yaml.YAMLError as error:
        raise RefusedError(f"world: not YAML: {' '.join(str(error).split())}") from None
    try:
        return world_of(document, "world")
    except WorldError as error:
        raise RefusedError(str(error)) from None


def contacts_parameter(robot: Robot, values: Sequence[str]) -> tuple[Contact, ...]:
    """The contacts parameter's Contacts: 'frame' ("6d") or 'frame:3d' / 'frame:6d'.

    Raises:
        RefusedError: a kind other than 3d or 6d, or a frame the robot lacks, named.
    """
    contacts = []
    for value in values:
        frame, _, kind = value.partition(":")
        kind = kind or "6d"
        if kind not in CONTACT_ROWS:
            raise RefusedError(f"contacts: '{value}': the kind after ':' must be 3d or 6d")
        if frame not in robot.frame_names:
            raise RefusedError(f"contacts: '{value}': robot '{robot.model.name}' has no frame "
                               f"'{frame}'")
        contacts.append(Contact(frame, kind))  # type: ignore[arg-type]  # checked above
    return tuple(contacts)


def main(args: list[str] | None = None) -> None:
    """Run the node until interrupted."""
    sys.exit(run_node(SimNode, args))
