"""controller_node: runs a controller plugin on the newest joint state and publishes its efforts.
A lifecycle node (ros.robot_node): it controls while active.

Parameters: COMMON_PARAMETERS (ros.robot_node) and PARAMETERS below, each with its
description, type and range (``ros2 param describe``), and ``controller_parameters.<name>``:
the plugin's parameters (e.g. ``controller_parameters.frame``), as given at start. A change of
the controller or its parameters configures a new controller on the robot in service; the
change is refused with the reason when the plugin refuses it.

Subscribes ``joint_states`` (merged by joint name across publishers, ros.joint_states),
``target_pose`` (geometry_msgs/PoseStamped, for the operational-space controller) and
``target_joints`` (sensor_msgs/JointState positions, for joint impedance) and
``joint_trajectory`` (trajectory_msgs/JointTrajectory, for joint impedance); all best effort,
with QoS overrides. Publishes ``effort_commands`` (std_msgs/Float64MultiArray: the efforts of
the ``joints`` parameter's joints in its order, ros2_control's forward_command_controller
convention, see ros.commands) and ``/diagnostics``.

A joint trajectory is played as ros2_control's joint_trajectory_controller plays one
(control.trajectory): its time 0 is its header stamp, or when zero the next joint state's;
when its first point comes later, it starts from the trajectory being played, or else from
the newest position at rest. Each cycle sets the
controller's target to q*, q̇*, q̈* at the state's stamp (joint impedance with
``feedforward`` tracks them); after the last point it holds that point. A target pose or
posture, or a new trajectory, ends it. A trajectory is taken serialized and built in a thread
of its own (ros.trajectory_builder): the cycles go on meanwhile, with the trajectory being
played, and the new one replaces it at the first cycle once built. A position outside its
joint's limits by more than POSITION_LIMIT_TOLERANCE (a continuous joint has none), or a
negative first time_from_start, refuses it as the other fields do.

A joint state's time is its header stamp; joint states stamped 0 (a driver that does not stamp)
take the node clock's time instead (sim time under use_sim_time), which the node says once, in
its log and diagnostics, and reports in the diagnostics' "joint_states time".

A target pose is taken in its header.frame_id: the robot's root frame (or an empty frame_id),
any frame of the robot (with or without frame_prefix), placed through the robot's own
kinematics at the newest joint state, or, where tf2 is installed, any frame tf2 knows. A frame
it cannot resolve is refused with the reason (ros.frames).

Every input is taken newest first (ros.intake): every joint_states message is merged on
arrival, in arrival order, and a cycle answers the newest merged state; a target is the newest
one sent; the diagnostics count what was superseded (merged states for joint_states, not
messages). A new robot is
configured with the controller and its parameters and run once at rest before it replaces
the one in service; if either fails (a frame it lacks, a tip that moves no mass) it is
refused with the reason and the controller goes on as it was. A robot put in service starts
a new controller: targets set before are dropped (they were for the previous robot) and it
holds the pose of the first state it gets until a new one arrives. Efforts with NaN or inf
are not sent. In "service" mode one compute_dynamics call is in flight at a time; one unanswered
within ``dynamics_timeout`` is given up (a WARN) and the newest merged state asked, so that a
lost answer never stops the efforts. Every callback runs under the node's guard (ros.guard).

Measured wrenches (``measured_wrenches``, geometry_msgs/WrenchStamped: a force/torque sensor's
reading, as sim_node's wrench_sensors publish them): the environment's wrench [force; torque]
on the robot about the origin of the frame its header.frame_id names (with or without
frame_prefix, ros.wrenches), world-aligned axes. The newest of each frame goes to the
controller in ControllerState.wrenches at every cycle while it arrived no longer than
``measured_wrench_max_age`` before the cycle; an older one is not passed (a silent sensor: the
controller runs open loop). A reading on a frame the robot lacks, or not finite, is refused
naming the field, and the one before stays.

A floating-base robot (parameter floating_base, or a URDF floating joint at the root) takes a
controller that declares it (Controller.TAKES_FLOATING_BASE: whole_body) and dynamics
in_process: its state is the joints' of joint_states with the base's of the newest
``odometry`` (nav_msgs/Odometry, REP 105: header.frame_id world_frame, child_frame_id the base
link, both with frame_prefix), as dynamics_node takes it, and effort_commands carry the joints'
efforts. A target pose in world_frame is taken as it is.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from geometry_msgs.msg import PoseStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.clock import Clock
from rclpy.clock_type import ClockType
from robodyn_interfaces.srv import ComputeDynamics
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from robodyn_ros.control import ControllerState, load_controller
from robodyn_ros.control.trajectory import JointTrajectoryReference
from robodyn_ros.robot import Robot
from robodyn_ros.ros.commands import JOINTS_PARAMETER, command_order
from robodyn_ros.ros.conversions import (
    JointStateMap,
    PositionLimits,
    finite,
    operational_space_dynamics,
    trajectory_reference,
)
from robodyn_ros.ros.frames import Tf2Frames, in_root_frame, pose_transform
from robodyn_ros.ros.guard import ERROR, OK, WARN, RefusedError
from robodyn_ros.ros.intake import Arrival, InArrivalOrder, NewestFirst, received_ns
from robodyn_ros.ros.joint_states import (
    GROUP_WAIT_PARAMETER,
    MAX_AGE_PARAMETER,
    HeldStates,
    JointStateMerge,
    input_qos,
)
from robodyn_ros.ros.odometry import BaseOdometry, OdometryFrames, base_link
from robodyn_ros.ros.parameters import ParameterRecord, ParameterSpec
from robodyn_ros.ros.robot_node import (
    WORLD_FRAME_PARAMETER,
    RobotNode,
    floating_base_problem,
    run_node,
)
from robodyn_ros.ros.trajectory_builder import (
    SerializedTrajectory,
    TrajectoryBuilder,
    collector_paused,
    deserialize_trajectory,
    released_in_chunks,
)
from robodyn_ros.ros.wrenches import wrench_of

if TYPE_CHECKING:
    from builtin_interfaces.msg import Time
    from rclpy.client import Client
    from rclpy.subscription import MessageInfo
    from rclpy.task import Future

    from robodyn_ros.control import Controller

PARAMETER_PREFIX = "controller_parameters"
QUEUE_DEPTH = 10  # messages the middleware keeps for each input, all taken at once
PARAMETERS = (
    ParameterSpec("controller", "gravity_compensation",
                  "the controller plugin (robodyn_ros.controllers entry points: "
                  "computed_torque, gravity_compensation, joint_impedance, operational_space, "
                  "whole_body (a floating base), or your own)"),
    ParameterSpec("dynamics_source", "in_process",
                  "in_process: the node's own Robot; service: ask compute_dynamics each cycle",
                  choices=("in_process", "service")),
    ParameterSpec("dynamics_timeout", 1.0,
                  "s, set at start: a compute_dynamics call unanswered this long is given up "
                  "(reported) and the newest merged state asked instead",
                  bounds=(1e-3, 3600.0), read_only=True),
    MAX_AGE_PARAMETER,
    GROUP_WAIT_PARAMETER,
    JOINTS_PARAMETER,
    WORLD_FRAME_PARAMETER,
    ParameterSpec("measured_wrench_max_age", 0.1,
                  "s: a measured_wrenches reading that arrived longer ago than this is not "
                  "passed to the controller (a silent sensor: open loop)",
                  bounds=(1e-3, 3600.0)),
)



@dataclass(frozen=True)
class ControllerSettings(ParameterRecord):
    """What the parameters ask of the node, each field its parameter's value (PARAMETERS
    describes them); the controller's own parameters are its plugin's."""

    controller: str
    dynamics_source: str  # in_process or service
    dynamics_timeout: float  # s
    joint_states_max_age: float  # s
    joint_states_group_wait: float  # s
    joints: tuple[str, ...]
    world_frame: str
    measured_wrench_max_age: float  # s

class ControllerNode(RobotNode):
    """A controller plugin between joint_states and effort_commands."""

    TASK = "control"
    PARAMETERS = PARAMETERS
    PARAMETER_PREFIXES = (f"{PARAMETER_PREFIX}.",)

    def __init__(self, **kwargs: Any) -> None:
        self.controller: Controller | None = None
        self._joint_states: JointStateMerge | None = None
        self._command_order = np.zeros(0, dtype=np.int64)
        self._q: np.ndarray | None = None  # the newest joint state's positions
        self._pending: Future[Any] | None = None  # the service call in flight, in "service" mode
        self._pending_since = 0.0  # s, steady: when _pending was sent
        self._waiting: Arrival | None = None  # the newest merged state, waiting for _pending
        self._cycle_lock = threading.Lock()  # the merged state, _pending and _waiting
        self._cycles = 0
        self._trajectory: _Playback | None = None  # the joint trajectory being played
        self._trajectories: TrajectoryBuilder[_TrajectoryRequest, _Playback] = TrajectoryBuilder(
            self._build_reported, "joint_trajectory")
        self._unstamped = False  # whether joint states stamped 0 were said to take the clock
        self._joint_state_intake = InArrivalOrder("joint_states")
        self._odometry: BaseOdometry | None = None  # a floating base's
        self._measured: dict[str, MeasuredWrench] = {}  # frame → its newest reading
        self._targets = {topic: NewestFirst(topic)
                         for topic in ("target_pose", "target_joints", "joint_trajectory")}
        super().__init__("controller_node", **kwargs)
        self._settings = self._asked_settings()

    def create_interfaces(self) -> None:
        # odometry first: of a base and joint state both waiting, the executor takes the base
        # first, so that the joint state is answered with the base of its instant
        self.create_subscription(Odometry, "odometry",
                                 self.guard.callback("odometry", self._on_odometry),
                                 **input_qos(QUEUE_DEPTH))
        self.create_subscription(  # before joint_states, as odometry: the newest reading first
            WrenchStamped, "measured_wrenches",
            self.guard.callback("measured_wrenches", self._on_measured_wrench),
            **input_qos(QUEUE_DEPTH))
        for topic, kind, callback in (
            ("joint_states", JointState, self._on_joint_state),
            ("target_pose", PoseStamped, self._on_target_pose),
            ("target_joints", JointState, self._on_target_joints),
        ):
            intake = self._targets.get(topic, self._joint_state_intake)
            intake.subscription = self.create_subscription(
                kind, topic, self.guard.callback(topic, callback), **input_qos(QUEUE_DEPTH)
            )
        self.create_subscription(  # serialized: built in the builder's thread
            JointTrajectory, "joint_trajectory",
            self.guard.callback("joint_trajectory", self._on_joint_trajectory),
            raw=True, **input_qos(QUEUE_DEPTH),
        )
        settings = self._asked_settings()
        self._held_states = HeldStates(self, self._joint_state_intake, self._on_held_state,
                                       settings.joint_states_group_wait)
        self._efforts = self.create_lifecycle_publisher(Float64MultiArray, "effort_commands", 10)
        self._dynamics: Client[Any, Any] = self.create_client(ComputeDynamics, "compute_dynamics")
        self.create_timer(  # steady: under use_sim_time a stalled /clock would hold it forever
            settings.dynamics_timeout / 4,
            self.guard.callback("compute_dynamics", self._give_up_overdue_call),
            clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._tf2 = Tf2Frames(self)

    # -- set-up -----------------------------------------------------------------------------

    def adopt(self, robot: Robot) -> None:
        """Configure the controller on `robot`; put both in service once a controller
        configured the same way has computed efforts at rest (q = 0 moved inside the limits).

        Raises:
            Exception: the controller's refusal of the robot or its parameters, the joints
                parameter naming a joint the robot lacks, or the failure of that first
                computation.
        """
        settings = self._asked_settings()
        order = command_order(robot, settings.joints)
        controller = self._configured(robot)
        self._configured(robot).update(ControllerState(t=0.0, q=robot.default_positions(),
                                                       qd=np.zeros(robot.nv)))
        self.controller, self._command_order = controller, order
        self._q = self._trajectory = None
        self._measured = {}
        self._trajectories.cancel()
        coupling, self._odometry = robot.coupling, None
        if robot.model.floating_base:  # the base from odometry, the joints from joint_states
            coupling = None
            self._odometry = BaseOdometry(OdometryFrames(self.frame_id(settings.world_frame),
                                                         self.frame_id(base_link(robot))))
        self._joint_states = JointStateMerge(JointStateMap(robot.measured_joints, coupling),
                                             settings.joint_states_max_age)

    def adopt_floating(self, robot: Robot) -> None:
        """Control a floating-base robot (adopt) with a controller that takes one, the
        dynamics in process.

        Raises:
            RefusedError: another free flyer or planar joint, a controller that does not take
                a floating base, or dynamics_source service (compute_dynamics refuses one).
        """
        problem = floating_base_problem(robot)
        if problem:
            raise RefusedError(problem)
        settings = self._asked_settings()
        name = settings.controller
        if not load_controller(name).TAKES_FLOATING_BASE:
            raise RefusedError(f"controller '{name}' does not control a floating base; use "
                               "whole_body")
        if settings.dynamics_source != "in_process":
            raise RefusedError("a floating base takes dynamics_source in_process: "
                               "compute_dynamics cannot carry the base's state")
        self.adopt(robot)

    def release(self) -> None:
        self.controller = self._joint_states = self._q = self._trajectory = None
        self._odometry = None
        self._measured = {}
        self._trajectories.cancel()

    def destroy_node(self) -> None:
        self._trajectories.stop()
        super().destroy_node()

    def apply(self, changes: dict[str, Any]) -> None:
        """A new controller for a change of the controller, its parameters or the joints.

        Raises:
            Exception: the robot in service refused with it (the change is refused).
        """
        if self.follower is not None and any(
            name in ("controller", "joints") or name.startswith(self.PARAMETER_PREFIXES)
            for name in changes
        ):
            self.follower.readopt()
        if "joint_states_max_age" in changes and self._joint_states is not None:
            self._joint_states.max_age = changes["joint_states_max_age"]
        self._settings = self._asked_settings()

    def _asked_settings(self) -> ControllerSettings:
        """The settings as the parameters are, or as a change being checked would make them
        (the cycles read the last applied, _settings)."""
        return ControllerSettings.of(self.value)

    def _configured(self, robot: Robot) -> Controller:
        """A new controller of the `controller` parameter, configured on `robot`."""
        controller = load_controller(self._asked_settings().controller)()
        names = self.get_parameters_by_prefix(PARAMETER_PREFIX)
        controller.configure(robot, {name: self.value(f"{PARAMETER_PREFIX}.{name}")
                                     for name in names})
        return controller

    # -- targets ----------------------------------------------------------------------------

    def _on_target_pose(self, message: PoseStamped, info: MessageInfo) -> None:
        """Set the newest target pose, taken in its header.frame_id (module docstring).

        Raises:
            RefusedError: no controller, a pose that is not finite, a frame that cannot be
                resolved, or the controller refuses the target.
        """
        newest = self._newest("target_pose", message, info).message
        robot = self.robot
        if not isinstance(robot, Robot) or self.controller is None:  # never a floating base
            raise RefusedError("target received before the controller is configured")
        frame_id = newest.header.frame_id
        transform = pose_transform(newest.pose, "target_pose")
        frame = self.robot_frame(frame_id)
        world = self._odometry.frames.world if self._odometry is not None else None
        if frame_id == world:
            target = transform
        elif frame or not frame_id:
            target = in_root_frame(robot, frame, self._q, transform, "target_pose")
        else:
            root = self.frame_id(robot.model.root_link)
            target = self._tf2.to_root(frame_id, root, "target_pose") @ transform
        self._set_target(target[:3, 3], target[:3, :3])
        self._end_trajectory()

    def _on_target_joints(self, message: JointState, info: MessageInfo) -> None:
        newest = self._newest("target_joints", message, info).message
        if self._joint_states is None:
            raise RefusedError("target_joints received before the controller is configured")
        q, _, _ = self._joint_states.joint_map.state(newest, "target_joints")
        self._set_target(q)
        self._end_trajectory()

    def _on_joint_trajectory(self, message: bytes, info: MessageInfo) -> None:
        """Have the newest trajectory built, to play from the first cycle after (module
        docstring).

        Raises:
            RefusedError: no controller yet.
        """
        self._newest("joint_trajectory", SerializedTrajectory(message), info)
        robot = self.robot
        if self._joint_states is None or self.controller is None or not isinstance(robot, Robot):
            raise RefusedError("joint_trajectory received before the controller is configured")
        limits = PositionLimits(robot.per_coordinate(robot.model.lower),
                                robot.per_coordinate(robot.model.upper))
        q, qd = self._trajectory_start()
        self._trajectories.submit(_TrajectoryRequest(
            SerializedTrajectory(message), self._joint_states.joint_map.joint_names, q, qd,
            limits))

    def _build_reported(self, request: _TrajectoryRequest) -> _Playback | None:
        """_build_trajectory under the node's guard: None when it failed (reported)."""
        build = self.guard.callback("joint_trajectory", self._build_trajectory)
        playback: _Playback | None = build(request)
        return playback

    @staticmethod
    def _build_trajectory(request: _TrajectoryRequest) -> _Playback:
        """The playback of a trajectory (in the builder's thread): deserialised, checked,
        converted and its spline built.

        Raises:
            RefusedError: a trajectory that cannot be played (named).
        """
        with collector_paused():
            message = deserialize_trajectory(request.serialized)
            reference = trajectory_reference(message, JointStateMap(request.joint_names),
                                             request.start, request.start_rate,
                                             limits=request.limits)
            stamp = message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec
            released_in_chunks(message.points)  # before the collector runs again
        reference.at(0.0)  # builds the spline, here
        return _Playback(reference, stamp if stamp > 0.0 else None)

    def _play_built_trajectory(self) -> None:
        """Play the trajectory the builder has finished, if any, from now on; one the
        controller refuses (it takes no joint target) is reported and dropped."""
        playback = self._trajectories.take()
        if playback is None:
            return
        try:
            self._set_target(*playback.reference.at(0.0))
        except RefusedError as error:
            self.health.reject("joint_trajectory", str(error))
            return
        self._trajectory = playback

    def _end_trajectory(self) -> None:
        """End the trajectory being played, and any being built."""
        self._trajectory = None
        self._trajectories.cancel()

    def _newest(self, topic: str, message: PoseStamped | JointState | SerializedTrajectory,
                info: MessageInfo) -> Arrival:
        """The newest message of an input, counted as handled."""
        arrival = self._targets[topic].take(message, info)
        self._targets[topic].mark_handled()
        return arrival

    def _set_target(self, *target: np.ndarray) -> None:
        """Raises RefusedError when there is no controller or it refuses the target."""
        if self.controller is None:
            raise RefusedError("target received before the controller is configured")
        try:
            self.controller.set_target(*target)
        except (TypeError, ValueError) as error:
            raise RefusedError(f"target refused: {error}") from error

    # -- each cycle -------------------------------------------------------------------------

    def _on_odometry(self, message: Odometry) -> None:
        """Take the newest odometry of a floating base (a fixed base ignores it).

        Raises:
            RefusedError: its frames, numbers or quaternion (ros.odometry names the field).
        """
        if self._odometry is not None:
            self._odometry.take(message, time.time_ns())

    def _on_measured_wrench(self, message: WrenchStamped, info: MessageInfo) -> None:
        """Keep the newest reading of the frame the message names, with its arrival, for the
        cycles that follow (ros.wrenches reads it).

        Raises:
            RefusedError: no controller yet, a frame the robot lacks or a number that is not
                finite (named; the reading before stays).
        """
        if self.controller is None:
            raise RefusedError("measured_wrenches received before the controller is configured")
        frame, wrench = wrench_of(message, self.robot_frame, "measured_wrenches")
        # a new dict, never changed: a cycle reads the one it takes without a lock
        self._measured = {**self._measured, frame: MeasuredWrench(wrench, received_ns(info))}

    def _fresh_wrenches(self, now_ns: int) -> dict[str, np.ndarray]:
        """Frame → the newest measured wrench, of those that arrived within
        measured_wrench_max_age of now_ns (ns, system clock)."""
        max_age_ns = self._settings.measured_wrench_max_age * 1e9
        return {frame: measured.wrench for frame, measured in self._measured.items()
                if now_ns - measured.received_ns <= max_age_ns}

    def _on_joint_state(self, message: JointState, info: MessageInfo) -> None:
        """Merge every joint state taken (this one and those queued behind it) in arrival
        order, then answer the newest merged state once it is ready (ros.joint_states)."""
        intake = self._joint_state_intake
        arrivals = intake.take(message, info)
        with self._cycle_lock:
            self._merge_and_answer(arrivals)

    def _merge_and_answer(self, arrivals: list[Arrival]) -> None:
        """_on_joint_state's work, under _cycle_lock."""
        intake = self._joint_state_intake
        joint_states = self._joint_states
        if not self.active or self.controller is None or joint_states is None:
            intake.mark_handled()
            if not self.active:
                return
            raise RefusedError("joint_states received before the controller is configured")
        newest = joint_states.add_arrivals(arrivals, self.health)
        if newest is None:  # every message refused: the state is as it was
            intake.mark_handled()
            return
        ready = self._held_states.ready(newest)
        if ready is not None:
            self._answer_or_wait(ready)

    def _on_held_state(self, held: Arrival) -> None:
        """Answer a merged state whose rest did not come within joint_states_group_wait."""
        with self._cycle_lock:
            if self.active and self.controller is not None and self._joint_states is not None:
                self._answer_or_wait(held)

    def _answer_or_wait(self, newest: Arrival) -> None:
        """Answer the merged state whose newest message is `newest`; in "service" mode, while
        the previous call is in flight, it waits for its answer instead (_answer_waiting)."""
        if self._pending is not None and not self._pending.done():
            self._waiting = newest  # a state it waited behind is superseded
            return
        self._joint_state_intake.mark_handled()
        self._answer(newest)

    def _answer_waiting(self) -> None:
        """Answer the merged state that arrived while a compute_dynamics call was in flight,
        once the call is answered: the newest state is computed, not the one the call was
        for followed by nothing (halves of one state would give only mixed states)."""
        waiting, self._waiting = self._waiting, None
        if waiting is None or not self.active or self.controller is None:
            return
        self._joint_state_intake.mark_handled()
        self._answer(waiting)

    def _answer(self, newest: Arrival) -> None:
        """Answer the merged state, whose newest message is `newest`: the efforts, directly
        or once compute_dynamics answers."""
        assert self._joint_states is not None  # configured: checked by the callers
        now_ns = time.time_ns()
        joints = self._joint_states.state(now_ns)
        if self._odometry is not None:
            joints = self._odometry.robot_state(joints, now_ns,
                                                self._settings.joint_states_max_age)
        q, qd = joints.q, joints.qd
        self._q = q
        t = self._state_time(newest.message.header.stamp)
        self._play_built_trajectory()
        if self._trajectory is not None:
            self._follow_trajectory(t)
        state = ControllerState(t=t, q=q, qd=qd, wrenches=self._fresh_wrenches(now_ns))
        if self._settings.dynamics_source == "service":
            self._request_dynamics(newest, state)
        else:
            self._command(state, newest)

    def _state_time(self, stamp: Time) -> float:
        """A joint state's time, s: its stamp, or the node clock's time for a state stamped 0
        (said once, in the log and the diagnostics)."""
        if stamp.sec or stamp.nanosec:
            seconds: float = stamp.sec + 1e-9 * stamp.nanosec
            return seconds
        if not self._unstamped:
            self._unstamped = True
            self.health.event("joint_states", WARN, "joint_states are stamped 0: their time "
                              "is the node clock's (a trajectory's and the controller's)")
        return self.get_clock().now().nanoseconds * 1e-9

    def _trajectory_start(self) -> tuple[np.ndarray, np.ndarray]:
        """Where a new trajectory starts (q, q̇) when its first point comes later than 0: the
        reference of the one being played, or the newest joint state's position at rest (a
        measured velocity would bring its noise into the reference's acceleration)."""
        playback = self._trajectory
        if playback is not None:
            q, qd, _ = playback.reference.at(playback.elapsed)
            return q, qd
        assert self._joint_states is not None
        n = len(self._joint_states.joint_map.joint_names)
        return (self._q if self._q is not None else np.zeros(n)), np.zeros(n)

    def _follow_trajectory(self, t: float) -> None:
        """Set the target of the trajectory being played at stamp t (its time 0 the first
        state's stamp, or its header's); once past its end, hold its last point."""
        playback = self._trajectory
        assert playback is not None
        if playback.start is None:
            playback.start = t
        elapsed = t - playback.start
        playback.elapsed = elapsed
        if elapsed < playback.reference.duration:
            self._set_target(*playback.reference.at(elapsed))
            return
        end = playback.reference.positions[-1]
        self._set_target(end, np.zeros_like(end), np.zeros_like(end))  # held, at rest
        self._trajectory = None

    def _request_dynamics(self, arrival: Arrival, state: ControllerState) -> None:
        """Ask the dynamics node at the merged state (q, q̇: every joint, whichever messages
        carried them); the efforts go out when the answer arrives."""
        if not self._dynamics.service_is_ready():
            raise RefusedError("compute_dynamics service not available")
        assert self.controller is not None and self._joint_states is not None  # configured
        joint_state = JointState(header=arrival.message.header,
                                 name=list(self._joint_states.joint_map.joint_names),
                                 position=state.q.tolist(), velocity=state.qd.tolist())
        request = ComputeDynamics.Request(state=joint_state,
                                          frames=list(self.controller.task_frames))
        self._pending = self._dynamics.call_async(request)
        self._pending_since = time.monotonic()
        self._pending.add_done_callback(self.guard.callback(
            "compute_dynamics answer", lambda future: self._on_dynamics(future, arrival, state)
        ))

    def _on_dynamics(
        self,
        future: Future[ComputeDynamics.Response],
        arrival: Arrival,
        state: ControllerState,
    ) -> None:
        """The efforts at the state a compute_dynamics call was for, then the answer of the
        state that waited for it (in the executor's task of the call's future, which runs
        beside the joint_states callback: _cycle_lock keeps them apart)."""
        try:
            self._command(answered_state(future.result(), state), arrival)
        finally:
            with self._cycle_lock:
                self._answer_waiting()

    def _give_up_overdue_call(self) -> None:
        """Give up the compute_dynamics call in flight once dynamics_timeout has passed without
        its answer (lost: a service restarted, or a response sent before this client's reply
        reader was matched), and ask the state that waited for it: without this, a lost answer
        would stop the efforts for good."""
        timeout = self._settings.dynamics_timeout
        with self._cycle_lock:
            pending = self._pending
            if pending is None or pending.done() or \
                    time.monotonic() - self._pending_since < timeout:
                return
            self._dynamics.remove_pending_request(pending)  # a late answer is dropped
            self._pending = None
            self.health.event("compute_dynamics", WARN, f"compute_dynamics call unanswered "
                              f"after {timeout:g} s: given up, the newest state asked")
            self._answer_waiting()

    def _command(self, state: ControllerState, arrival: Arrival) -> None:
        """The controller's efforts at `state`, published when finite, in the joints
        parameter's order."""
        assert self.controller is not None  # configured: _on_joint_state checked
        tau = finite("effort command", self.controller.update(state))
        self._efforts.publish(Float64MultiArray(data=tau[self._command_order].tolist()))
        self._joint_state_intake.mark_answered(arrival)
        self._cycles += 1

    # -- reporting --------------------------------------------------------------------------

    def report(self) -> tuple[int, str, dict[str, str]]:
        playback = self._trajectory
        values = {"controller": self._settings.controller,
                  "cycles since the last report": str(self._cycles),
                  "joint trajectory": "none" if playback is None else
                  f"{playback.elapsed:.2f} of {playback.reference.duration:.2f} s",
                  "joint_states time": "node clock (stamped 0)" if self._unstamped
                  else "header stamps",
                  "measured wrenches": measured_ages(self._measured, time.time_ns())}
        self._cycles = 0
        skipping = []
        inputs: list[tuple[str, NewestFirst | InArrivalOrder]] = [
            ("joint_states", self._joint_state_intake), *self._targets.items()]
        for topic, intake in inputs:
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
        return level, message, values


@dataclass(frozen=True)
class _TrajectoryRequest:
    """A trajectory to build: as it arrived, the robot's joints, where it starts when its first
    point comes later than 0 (q, q̇) and the joints' limits."""

    serialized: SerializedTrajectory
    joint_names: tuple[str, ...]
    start: np.ndarray
    start_rate: np.ndarray
    limits: PositionLimits


@dataclass(frozen=True)
class MeasuredWrench:
    """A measured_wrenches reading: [force; torque] (N, N·m) and its arrival (ns, system
    clock)."""

    wrench: np.ndarray
    received_ns: int


def measured_ages(measured: dict[str, MeasuredWrench], now_ns: int) -> str:
    """The diagnostics' account of the readings held.

    Args:
        measured: frame → its newest reading.
        now_ns: now, ns, system clock.

    Returns:
        Each frame with the age of its reading ("panda_hand_tcp (0.004 s old)"), or "none".
    """
    return ", ".join(f"{frame} ({1e-9 * (now_ns - reading.received_ns):.3f} s old)"
                     for frame, reading in sorted(measured.items())) or "none"


@dataclass
class _Playback:
    """A joint trajectory being played: its reference, the stamp of its time 0 (None until the
    first joint state sets it) and how far it has got, s."""

    reference: JointTrajectoryReference
    start: float | None
    elapsed: float = 0.0


def answered_state(
    response: ComputeDynamics.Response | None, state: ControllerState
) -> ControllerState:
    """The controller's state with the dynamics a compute_dynamics answer for it gives.

    Raises:
        RefusedError: the call failed, with the dynamics node's reason.
    """
    if response is None or not response.success:
        raise RefusedError(f"compute_dynamics failed: {response.message if response else ''}")
    n = len(state.qd)
    joint_space = response.joint_space
    return replace(
        state,
        M=np.reshape(joint_space.mass_matrix, (n, n)),
        bias=np.asarray(joint_space.bias_forces),
        gravity=np.asarray(joint_space.gravity_torques),
        operational_space={
            frame.frame: operational_space_dynamics(frame)
            for frame in response.operational_space
        },
    )


def main(args: list[str] | None = None) -> None:
    """Run the node until interrupted."""
    sys.exit(run_node(ControllerNode, args))


if __name__ == "__main__":
    main()
