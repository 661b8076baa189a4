"""What every robodyn_ros node is built on: a lifecycle node (rclpy.lifecycle) that follows a
robot description, declares its parameters from one table, guards its callbacks and reports
on /diagnostics.

Lifecycle:
    unconfigured: parameters declared and changeable; diagnostics say "unconfigured".
    configure: creates the node's subscriptions, publishers and services, and loads and warms
        up the robot of robot_description (or waits for the robot_description topic). A robot
        that is refused is reported (ERROR diagnostic) and the node waits for another: it
        stays up to be fixed through its parameters.
    activate: the node computes and publishes; deactivate: it stops (inputs are dropped,
        a simulation pauses), and resumes where it was on activate.
    cleanup: removes what configure created and drops the robot; shutdown: the same, from
        any state.
With the parameter autostart (default true) a node configures and activates itself when it is
created; with autostart false a lifecycle manager drives it.

Parameters every node has (COMMON_PARAMETERS) are joined to the node's own table. A change is
checked by rclpy against its descriptor (type, range, read-only), then against the row's
choices, then applied: robot settings by the description follower, diagnostic_period and
frame_prefix here, the rest by the node's `apply`. What cannot be applied is refused with the
reason.

Diagnostics are named as diagnostic_updater names them, "<node>: <task>", with the node's
fully qualified name (so two nodes of one kind in different namespaces differ), hardware_id
the robot's name, and a stamped array.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, NamedTuple

import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rcl_interfaces.msg import SetParametersResult
from rclpy.executors import (
    Executor,
    ExternalShutdownException,
    MultiThreadedExecutor,
    SingleThreadedExecutor,
)
from rclpy.lifecycle import LifecycleNode, LifecycleState, TransitionCallbackReturn
from rclpy.parameter import Parameter
from rclpy.signals import SignalHandlerOptions

from robodyn_ros.model.model import MULTI_DOF_JOINTS
from robodyn_ros.robot import Robot
from robodyn_ros.ros import parameters
from robodyn_ros.ros.description import DescriptionFollower, follow_robot_description
from robodyn_ros.ros.frames import robot_frame
from robodyn_ros.ros.guard import ERROR, OK, WARN, Guard, NodeHealth, RefusedError
from robodyn_ros.ros.parameters import ParameterError, ParameterSpec
from robodyn_ros.startup.compile_ahead import WarmUpStep

SUCCESS, FAILURE = TransitionCallbackReturn.SUCCESS, TransitionCallbackReturn.FAILURE

COMMON_PARAMETERS = (
    ParameterSpec("robot_description", "",
                  "the URDF; empty: robot_description_file, or else the robot_description "
                  "topic (transient local, as robot_state_publisher publishes it)"),
    ParameterSpec("robot_description_file", "",
                  "a URDF or .xacro file, a path or a package://<package>/<path> URI, loaded "
                  "where robot_description is empty"),
    ParameterSpec("armature", "",
                  "rotor inertia per joint, added to M's diagonal (kg·m² or kg): YAML text of "
                  "a mapping joint → value, or the path of a YAML file of one"),
    ParameterSpec("gravity", [0.0, 0.0, -9.81],
                  "m/s², the gravitational acceleration in the robot's base frame (in the "
                  "world frame for a floating base)"),
    ParameterSpec("locked_joints", "",
                  "joints fixed at a position (rad or m): YAML text of a mapping joint → "
                  "position; the robot has the others"),
    ParameterSpec("floating_base", False,
                  "the root link floats (a humanoid, a quadruped): dynamics_node takes its pose "
                  "and twist from the odometry topic, sim_node simulates and publishes them; "
                  "the other nodes refuse such a robot"),
    ParameterSpec("frame_prefix", "",
                  "prepended to the robot's frame names in every header.frame_id and frame "
                  "field, as robot_state_publisher's frame_prefix"),
    ParameterSpec("diagnostic_period", 1.0, "s of wall time between /diagnostics reports",
                  bounds=(0.01, 3600.0)),
    ParameterSpec("autostart", True,
                  "configure and activate when created; false: a lifecycle manager drives "
                  "the node", read_only=True),
)
WORLD_FRAME_PARAMETER = ParameterSpec(
    "world_frame", "odom",
    "a floating base's world frame (REP 105): the odometry's header.frame_id and every "
    "published header's frame_id, with frame_prefix")
_UNSET = object()


def serving_status(has_robot: bool, behind: bool, working: str, dropping: str
                   ) -> tuple[int, str]:
    """A serving node's diagnostic level and message: ERROR without a robot, WARN with
    `dropping` while its input arrives faster than it is served (`behind`), else OK with
    `working`."""
    if not has_robot:
        return ERROR, "no robot description"
    if behind:
        return WARN, dropping
    return OK, working


def floating_base_problem(robot: Robot) -> str:
    """Why a node that serves a floating base cannot serve `robot`, "" when it can: its only
    free flyer or planar joint must be a free flyer at the root (model.floating_base), for a
    JointState carries one number per joint and an Odometry the base."""
    inner = [joint.name for joint in robot.configuration_joints[1:]
             if joint.kind in MULTI_DOF_JOINTS]
    if robot.model.floating_base and not inner:
        return ""
    multi_dof = [joint.name for joint in robot.configuration_joints
                 if joint.kind in MULTI_DOF_JOINTS]
    return (f"robot '{robot.model.name}': joint(s) {', '.join(map(repr, multi_dof))} are "
            "planar or floating inside the tree, which a JointState (one number per joint) "
            "cannot carry; a floating base at the root is served (parameter floating_base, "
            "or a URDF floating joint there)")


class RobotNode(LifecycleNode):
    """The scaffolding of a robodyn_ros node (see the module docstring). A node defines:

    TASK: what it does, for its diagnostics' name ("dynamics").
    PARAMETERS: its own parameter table; PARAMETER_PREFIXES: name prefixes it takes beyond
        the table (a plugin's parameters).
    create_interfaces(): its subscriptions, lifecycle publishers and services (configure).
    adopt(robot): put a robot in service, or raise to refuse it.
    adopt_floating(robot): the same for a robot with a free flyer or planar joint (parameter
        floating_base, or a URDF floating or planar joint); by default adopt for a floating
        base at the root, refused for any other such joint.
    header_frame(robot): the frame_id of the headers it publishes with a robot in service
        (default: the root link with frame_prefix).
    release(): drop the robot and what it computed (cleanup).
    apply(changes): apply changes of its own parameters, or raise RefusedError.
    report(): (level, message, values) for its diagnostics while configured.
    """

    TASK: ClassVar[str] = ""
    PARAMETERS: ClassVar[tuple[ParameterSpec, ...]] = ()
    PARAMETER_PREFIXES: ClassVar[tuple[str, ...]] = ()

    def __init__(self, name: str, **kwargs: Any) -> None:
        """Raises ParameterError: a parameter given at start is unknown or invalid."""
        super().__init__(name, **kwargs)
        self.health = NodeHealth(self.get_logger())
        self.guard = Guard(self.health)
        self.table = (*COMMON_PARAMETERS, *self.PARAMETERS)
        parameters.declare(self, self.table)
        parameters.declare_prefixed(self, self.PARAMETER_PREFIXES)
        parameters.check_overrides(self, self.table, self.PARAMETER_PREFIXES)
        self._check_choices = parameters.changes_checker(self.table)
        self._changing: dict[str, Any] = {}  # a parameter change being checked: name → value
        self.follower: DescriptionFollower | None = None  # while configured
        self.active = False
        self.frame_prefix: str = self.value("frame_prefix")
        self._created: list[Any] = []  # what configure created
        self.add_on_set_parameters_callback(self.guard.parameters(self._on_parameters))
        self._diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self._diagnostics_timer = self.create_timer(
            self.value("diagnostic_period"),
            self.guard.callback("diagnostics", self._publish_diagnostics),
        )
        if self.value("autostart") and self.trigger_configure() == SUCCESS:
            self.trigger_activate()

    @property
    def robot(self) -> Robot | None:
        """The robot in service (None before one loads, or when not configured)."""
        return self.follower.robot if self.follower is not None else None

    def value(self, name: str) -> Any:
        """A parameter's value, as a change being checked would make it (None for a
        parameter without a value)."""
        changed = self._changing.get(name, _UNSET)
        return parameters.value(self, name) if changed is _UNSET else changed

    def robot_frame(self, name: str) -> str:
        """The frame of the robot in service that `name` names, with or without
        frame_prefix ("" when it names none)."""
        robot = self.robot
        return robot_frame(robot, self.frame_prefix, name) if robot is not None else ""

    def frame_id(self, frame: str) -> str:
        """A frame of the robot as the node's outputs name it (with frame_prefix)."""
        return self.frame_prefix + frame

    # -- what a node defines ----------------------------------------------------------------

    def create_interfaces(self) -> None:
        """Create the node's subscriptions, lifecycle publishers and services."""

    def adopt(self, robot: Robot) -> None:
        """Put `robot` in service; raise (any exception) to refuse it."""

    def kernel_steps(self, robot: Robot) -> Sequence[WarmUpStep]:
        """The calls adopt (or adopt_floating) will make with `robot`, as WarmUpSteps, for
        helper processes to compile ahead on a new machine (compile_ahead); none by default."""
        return ()

    def adopt_floating(self, robot: Robot) -> None:
        """Put a robot with a free flyer or planar joint in service (adopt) when it is a
        floating base, the one such joint a free flyer at the root; a node that needs more of
        it (a controller that takes one) checks that first.

        Raises:
            RefusedError: any other free flyer or planar joint (floating_base_problem), or
                what adopt raises.
        """
        problem = floating_base_problem(robot)
        if problem:
            raise RefusedError(problem)
        self.adopt(robot)

    def header_frame(self, robot: Robot) -> str:
        """The frame_id of the headers the node publishes with `robot` in service."""
        return self.frame_id(robot.model.root_link)

    def release(self) -> None:
        """Drop the robot in service and what was computed with it."""

    def apply(self, changes: dict[str, Any]) -> None:
        """Apply changes of the node's own parameters; raise RefusedError to refuse them."""

    def report(self) -> tuple[int, str, dict[str, str]]:
        """The node's own view for its diagnostics: level, message and values."""
        return OK, "", {}

    # -- lifecycle ----------------------------------------------------------------------------

    def on_configure(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.get_logger().info("configuring: loading the robot and warming up its kernels")
        before = self._entities()
        try:
            self.create_interfaces()
            self.follower = follow_robot_description(self, self.guard, self._adopt,
                                                     self.kernel_steps)
            self.follower.load_parameters()  # adopt finds the follower and its description
        except Exception as error:  # the interfaces could not be made: back to unconfigured
            self.health.fault("configure", error)
            self._created = [e for e in self._entities() if e not in before]
            self._tear_down()
            return FAILURE
        self._created = [e for e in self._entities() if e not in before]
        return SUCCESS

    def on_activate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.active = True
        return super().on_activate(state)

    def on_deactivate(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.active = False
        return super().on_deactivate(state)

    def on_cleanup(self, state: LifecycleState) -> TransitionCallbackReturn:
        self._tear_down()
        return SUCCESS

    def on_shutdown(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.active = False
        self._tear_down()
        return SUCCESS

    def on_error(self, state: LifecycleState) -> TransitionCallbackReturn:
        self.active = False
        self._tear_down()
        return SUCCESS

    def _adopt(self, robot: Robot) -> None:
        """Hand a robot the follower built to adopt, or to adopt_floating if it has a free
        flyer or planar joint (q has more numbers than q̇)."""
        if robot.nq != robot.nv:
            self.adopt_floating(robot)
        else:
            self.adopt(robot)

    def _tear_down(self) -> None:
        """Remove what configure created and drop the robot."""
        self.follower = None
        self.release()
        for entity in reversed(self._created):
            self._destroy(entity)
        self._created = []

    def _entities(self) -> list[Any]:
        return [*self.subscriptions, *self.publishers, *self.services, *self.clients,
                *self.timers, *self.waitables]

    def _destroy(self, entity: Any) -> None:
        """Destroy one entity by the node's method for its kind."""
        if entity in self._managed_entities:
            self.destroy_lifecycle_publisher(entity)
            return
        for kind, destroy in ((self.subscriptions, self.destroy_subscription),
                              (self.publishers, self.destroy_publisher),
                              (self.services, self.destroy_service),
                              (self.clients, self.destroy_client),
                              (self.timers, self.destroy_timer)):
            if entity in list(kind):
                destroy(entity)
                return
        entity.destroy()  # a waitable: the action server

    # -- parameters ---------------------------------------------------------------------------

    def _on_parameters(self, changed: list[Parameter[Any]]) -> SetParametersResult:
        """Check and apply a parameter change (module docstring).

        Raises:
            RefusedError: the change cannot be applied (the guard refuses it with the reason).
        """
        self._check_choices(changed)
        own = {spec.name for spec in self.table}
        changes = {parameter.name: parameter.value for parameter in changed
                   if parameter.name in own or parameter.name.startswith(self.PARAMETER_PREFIXES)}
        if not changes:  # rclpy's own (use_sim_time, qos_overrides.*): nothing to apply here
            return SetParametersResult(successful=True)
        self._changing = changes
        try:
            if self.follower is not None:
                result = self.follower.on_parameters(changes)
                if not result.successful:
                    return result
            self.apply(changes)
        finally:
            self._changing = {}
        if "diagnostic_period" in changes:
            self._diagnostics_timer.timer_period_ns = round(changes["diagnostic_period"] * 1e9)
        if "frame_prefix" in changes:
            self.frame_prefix = changes["frame_prefix"]
        return SetParametersResult(successful=True)

    # -- diagnostics --------------------------------------------------------------------------

    def _publish_diagnostics(self) -> None:
        array = DiagnosticArray(status=[self.status()])
        array.header.stamp = self.get_clock().now().to_msg()
        robot = self.robot
        array.header.frame_id = self.header_frame(robot) if robot else ""
        self._diagnostics.publish(array)

    def status(self) -> DiagnosticStatus:
        """The node's DiagnosticStatus now (a new reporting period starts)."""
        values: dict[str, str]
        if self.follower is None:
            level, message, values = OK, "unconfigured", {}
        else:
            level, message, values = self.report()
            if not self.active and level == OK:
                message = "inactive"
        robot = self.robot
        name = f"{self.get_fully_qualified_name().lstrip('/')}: {self.TASK}"
        return self.health.status(name, robot.model.name if robot else "", level, message,
                                  values)


def run_node(make_node: Callable[[], RobotNode], args: list[str] | None = None,
             threads: int = 1) -> int:
    """Initialise rclpy (with the command line's --ros-args), create the node and spin it on
    `threads` threads until SIGINT or SIGTERM, at any moment (a warm-up included), then tear
    everything down without a traceback.

    The node is made, and then spun, in a thread of its own while the main thread waits for
    it, looking every SIGNAL_CHECK s at the signals received. A signal handler only records
    the signal: one that raised could land anywhere in the main thread, inside the lock
    that a wait re-acquires included, and leave it broken; and a signal that the kernel
    hands to another thread does not wake the main thread's wait, which a timeout does.
    (A main thread that spins waits in the middleware until a message or a timer is due,
    and under use_sim_time with no /clock, a bag ended or a simulation gone, no timer ever
    is.) A signal while the node is being made (loading a robot, compiling its kernels)
    ends the process there, with status 0; once it spins, the executor is shut down and the
    node destroyed.

    Returns:
        The exit status: 0, or 1 when the node's parameters cannot start it (logged).
    """
    received = record_signals()
    start, spin, status, stop = None, None, 0, threading.Event()
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
        start = _Background(lambda: _StartedNode.make(make_node, threads), "start")
        executor = start.result(received).executor
        spin = _Background(lambda: spin_until(executor, stop), "executor")
        spin.result(received)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except ParameterError as error:
        print(f"[FATAL] {error}", file=sys.stderr)
        status = 1
    finally:
        if start is not None and start.running:  # cut short: nothing to tear down yet
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
        started = start.value if start is not None else None
        if started is not None:
            stop.set()
            if spin is not None:
                spin.join(5.0)
            started.executor.shutdown(timeout_sec=5.0)
            started.node.destroy_node()
        rclpy.try_shutdown()
    return status


SPIN_CHECK = 0.1  # s: how often spin_until looks at its stop event while nothing is due


def spin_until(executor: Executor, stop: threading.Event) -> None:
    """Spin `executor` until `stop` is set. Set it and join the spinning thread before
    shutting the executor down: rclpy's Executor.shutdown does not wait for a spin under way in
    another thread, and a callback that ends after it fails on the executor's destroyed guard
    condition (a traceback as the process ends)."""
    while not stop.is_set():
        executor.spin_once(timeout_sec=SPIN_CHECK)


class _StartedNode(NamedTuple):
    """A node made and the executor that spins it, both made in run_node's start thread
    (where no signal lands: one that cut an executor's making short left it half made)."""

    node: RobotNode
    executor: SingleThreadedExecutor | MultiThreadedExecutor

    @classmethod
    def make(cls, make_node: Callable[[], RobotNode], threads: int) -> _StartedNode:
        node = make_node()
        executor = SingleThreadedExecutor() if threads == 1 else MultiThreadedExecutor(threads)
        executor.add_node(node)
        return cls(node, executor)


def interrupt_on_signals() -> None:
    """SIGINT and SIGTERM raise KeyboardInterrupt in the main thread, both alike: for a
    process that initialises rclpy without its signal handlers, which would shut the context
    down under the threads still using it, and whose main thread runs a loop of its own (a
    simulation's) that Ctrl-C ends."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _interrupt)


def record_signals() -> list[int]:
    """SIGINT and SIGTERM recorded, and nothing else done, from now on.

    Returns:
        The list the numbers of the signals received are appended to, in order.
    """
    received: list[int] = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda number, frame: received.append(number))
    return received


def ignore_signals() -> None:
    """SIGINT and SIGTERM ignored, for a tear-down that must not be cut short."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


SIGNAL_CHECK = 0.05  # s: how often run_node's main thread looks at the signals received


class _Background:
    """A function run in a daemon thread, waited for by the thread that made it (run_node).
    The wait is on an event, not on the thread: a join that a signal interrupts can take the
    thread for ended while it still runs."""

    def __init__(self, function: Callable[[], Any], name: str) -> None:
        self._function = function
        self._value: Any = None
        self._error: BaseException | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        """Whether the function has not returned yet."""
        return not self._done.is_set()

    @property
    def value(self) -> Any:
        """What the function returned; None until it has, or when it raised."""
        return self._value

    def result(self, received: list[int]) -> Any:
        """Wait for the function and return what it returned, unless a signal is received
        first (`received`, record_signals' list, is looked at every SIGNAL_CHECK s).

        Raises:
            KeyboardInterrupt: a signal was received before the function returned.
            BaseException: what the function raised.
        """
        while not self._done.wait(SIGNAL_CHECK):
            if received:
                raise KeyboardInterrupt
        if self._error is not None:
            raise self._error
        return self._value

    def join(self, timeout: float) -> None:
        """Wait at most `timeout` s for the function to return."""
        self._done.wait(timeout)

    def _run(self) -> None:
        try:
            self._value = self._function()
        except BaseException as error:  # handed to the waiting thread, which raises it
            self._error = error
        finally:
            self._done.set()
