"""dynamics_node: the robot's dynamics at the newest joint state, published, and served on
request. A lifecycle node (ros.robot_node): it computes while active.

Parameters: COMMON_PARAMETERS (ros.robot_node) and PARAMETERS below, each with its
description, type and range (``ros2 param describe``); every one changeable at run time. A
change the node cannot serve is refused with the reason.

Subscribes ``joint_states`` (sensor_msgs/JointState, best effort so that sensor-data and
reliable publishers both connect; ``qos_overrides./joint_states.subscription.*``), merged by
joint name across publishers (ros.joint_states), ``odometry`` (nav_msgs/Odometry, the same
QoS; see below) and ``robot_description`` (std_msgs/String). Publishes
``dynamics/joint_space`` (JointSpaceDynamics), ``dynamics/operational_space``
(OperationalSpaceDynamics, one per frame per cycle) and ``/diagnostics``; every header's
frame_id is the frame the poses are in, with frame_prefix: the robot's root link, or the
world frame for a floating base. Serves ``compute_dynamics`` (ComputeDynamics, with the
dynamics' derivatives on request), ``linearize`` (Linearize: one simulation step linearised
at a state, sim.linearization) and ``set_payload``.

A floating-base robot (parameter floating_base) takes its base's pose and twist from the newest
odometry (ros.odometry: REP 105, header.frame_id the world_frame parameter, child_frame_id the
free flyer's body, the root link, both with frame_prefix): each cycle answers q = [base pose,
joints], v = [base twist in the base frame, joints] and, with efforts, τ = [0 (the base), the
efforts], and joint_names are the robot's, FREE_FLYER_JOINTS first. An odometry with
other frames, numbers that are not finite or a quaternion that is not of unit norm is refused;
a joint state with no odometry yet, or none within joint_states_max_age, is refused: a base is
never guessed. The odometry subscription exists for every robot (created at configure, as the
others, not with each robot); a fixed base ignores it. compute_dynamics and linearize answer a
floating base's request (a JointState of its joints) at the newest odometry's base, by the
same rule. A robot with a planar joint, or a floating joint inside its tree, is refused: a
JointState carries one number per joint.

joint_states are merged on arrival, every message in arrival order, and computed newest first
(ros.intake): a cycle answers the newest merged state and skips those it superseded; the
diagnostics count merged states, not messages (the two halves of one state supersede nothing),
and give the age of each answered state from its arrival.

A new robot (parameter or topic) is checked against everything configured before it goes
into service. Frames it lacks, or that the operational-space method cannot serve on it, are
left out with a WARN diagnostic naming them; the rest goes on. Then what the node will
publish with it is computed once at q = 0 (warm-up): the quantities parameter's joint-space
quantities and, with "operational_space", the remaining frames. If that fails the robot is
refused and the previous one stays in service, with the reason. So a robot whose forward
dynamics does not exist (a tip link without mass makes M singular) is refused while
"acceleration" or "operational_space" is published, and served when quantities asks only
for what exists (mass_matrix, bias_forces, gravity_torques); compute_dynamics then answers
success=false, with the reason, for what does not exist.

Bad input is rejected with the reason (logged, in the diagnostics); answers with NaN or inf
are not sent; any failure in a callback is caught by the node's guard (ros.guard): the node
keeps serving.
"""

from __future__ import annotations

import gc
import math
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from robodyn_interfaces.msg import JointSpaceDynamics, OperationalSpaceDynamics
from robodyn_interfaces.srv import ComputeDynamics, Linearize
from sensor_msgs.msg import JointState

from robodyn_ros.robot import Robot
from robodyn_ros.robot.external_wrenches import ExternalWrenches, wrench_forces
from robodyn_ros.robot.methods import JointSpaceMethods
from robodyn_ros.robot.operational_space import SCHUR_METHODS, check_schur_task
from robodyn_ros.ros.conversions import (
    JOINT_SPACE_QUANTITIES,
    JointStateMap,
    RobotState,
    finite,
    float_sequence,
    joint_space_message,
    operational_space_message,
)
from robodyn_ros.ros.frames import robot_frame
from robodyn_ros.ros.guard import WARN, RefusedError
from robodyn_ros.ros.intake import Arrival, InArrivalOrder, received_ns
from robodyn_ros.ros.joint_states import (
    GROUP_WAIT_PARAMETER,
    MAX_AGE_PARAMETER,
    HeldStates,
    JointStateMerge,
    input_qos,
)
from robodyn_ros.ros.odometry import BaseOdometry, OdometryFrames, base_link, odometry_for
from robodyn_ros.ros.parameters import ParameterSpec
from robodyn_ros.ros.robot_node import (
    COMMON_PARAMETERS,
    WORLD_FRAME_PARAMETER,
    RobotNode,
    run_node,
    serving_status,
)
from robodyn_ros.ros.wrenches import wrenches_of
from robodyn_ros.sim.linearization import (
    LINEARIZED_INTEGRATORS,
    JointLosses,
    StepJacobians,
    step_jacobians,
)
from robodyn_ros.startup.compile_ahead import WarmUpStep

if TYPE_CHECKING:
    from rclpy.subscription import MessageInfo
    from std_msgs.msg import Header

QUANTITIES = (*JOINT_SPACE_QUANTITIES, "operational_space")
DEFAULT_QUANTITIES = tuple(q for q in QUANTITIES if q != "coriolis_matrix")
# joint_states the middleware keeps for the node, all taken at a cycle's start (the newest
# answered); and dynamics kept for a reliable subscriber: 100 ms at 1 kHz, so that a pause
# of either process (a scheduler hiccup, a garbage collection) delays messages rather than
# drops them
QUEUE_DEPTH = 100
ODOMETRY_DEPTH = 1  # the newest odometry is all a cycle takes
LATENCY_WINDOW = 2000  # take → publish latencies kept for the diagnostics' percentiles
METHOD_PARAMETERS = ("mass_matrix_method", "forward_dynamics_method", "operational_space_method")
SETTINGS_PARAMETERS = ("quantities", "frames", "singular_threshold", "frame_prefix",
                       "joint_states_max_age", "world_frame", *METHOD_PARAMETERS)
PARAMETERS = (
    ParameterSpec("quantities", list(DEFAULT_QUANTITIES),
                  "what is published each cycle (acceleration: when the joint state has "
                  "efforts; operational_space: one message per frame); compute_dynamics "
                  "answers with all", choices=QUANTITIES),
    ParameterSpec("mass_matrix_method", "crba", "how M is computed (Robot.mass_matrix)",
                  choices=Robot.MASS_MATRIX_METHODS),
    ParameterSpec("forward_dynamics_method", "aba", "how q̈ is computed "
                  "(Robot.forward_dynamics)", choices=Robot.FORWARD_DYNAMICS_METHODS),
    ParameterSpec("operational_space_method", "dense", "how Λ is computed "
                  "(Robot.operational_space)", choices=Robot.OPERATIONAL_SPACE_METHODS),
    ParameterSpec("frames", Parameter.Type.STRING_ARRAY,
                  "task frames whose operational-space dynamics are published each cycle"),
    ParameterSpec("singular_threshold", 1e-4,
                  "eigenvalues of Λ⁻¹ below this times the largest count as lost and Λ is "
                  "damped there (Robot.operational_space)", bounds=(1e-12, 0.5)),
    MAX_AGE_PARAMETER,
    GROUP_WAIT_PARAMETER,
    WORLD_FRAME_PARAMETER,
)
LINEARIZE_INTEGRATOR = "semi_implicit_euler"  # a linearize request's with an empty integrator
FRAMES_CONDITION = "frames"
MIMIC_CONDITION = "mimic"


@dataclass(frozen=True)
class Settings:
    """What the parameters ask the node to publish, and how; no robot in it."""

    quantities: tuple[str, ...]
    frames: tuple[str, ...]
    joint_space_methods: JointSpaceMethods
    operational_space_method: str  # Robot.OPERATIONAL_SPACE_METHODS
    singular_threshold: float
    frame_prefix: str
    max_age: float  # s, joint_states_max_age
    world_frame: str  # of a floating base


@dataclass(frozen=True)
class CycleMessages:
    """The messages each cycle fills again and publishes: building them anew cost as much as
    computing the dynamics they carry."""

    joint_space: JointSpaceDynamics
    operational_space: dict[str, OperationalSpaceDynamics]  # frame → its message


@dataclass(frozen=True)
class Serving:
    """Settings bound to a robot: what each cycle computes.

    settings: the node's, less the quantities this robot does not compute;
    frames: the settings' frames this robot has and the operational-space method serves;
    left_out: why the others, and those quantities, are left out (one reason each, empty when
        none is);
    odometry: the frames of the odometry a floating base takes (None: a fixed base).
    """

    robot: Robot
    joint_states: JointStateMerge
    settings: Settings
    frames: tuple[str, ...]
    left_out: tuple[str, ...]
    messages: CycleMessages
    odometry: OdometryFrames | None


def settings_of(value: Callable[[str], Any]) -> Settings:
    """The settings of the parameters, each read by `value` (a parameter's name → value)."""
    return Settings(
        quantities=tuple(value("quantities")),
        frames=tuple(value("frames") or ()),
        joint_space_methods=JointSpaceMethods(value("mass_matrix_method"),
                                              value("forward_dynamics_method")),
        operational_space_method=value("operational_space_method"),
        singular_threshold=value("singular_threshold"),
        frame_prefix=value("frame_prefix"),
        max_age=value("joint_states_max_age"),
        world_frame=value("world_frame"),
    )


def default_warm_up_steps(robot: Robot, frame: str) -> list[WarmUpStep]:
    """The WarmUpPlan steps of the parameters' defaults, with `frame` the one frame (robodyn
    warmup)."""
    defaults = {spec.name: spec.default for spec in (*COMMON_PARAMETERS, *PARAMETERS)}
    defaults["frames"] = [frame]
    return WarmUpPlan.of(bind(robot, settings_of(defaults.__getitem__))).steps


def bind(robot: Robot, settings: Settings) -> Serving:
    """The settings checked against a robot.

    Returns:
        What the node can serve with this robot, and the frames and quantities it leaves out
        with why.
    """
    frames: list[str] = []
    left_out: list[str] = []
    coupling, odometry = robot.coupling, None
    if robot.model.floating_base:  # the base from odometry, the joints from joint_states
        coupling = None
        odometry = OdometryFrames(header_frame(robot, settings),
                                  settings.frame_prefix + base_link(robot))
    for name in settings.frames:
        frame = robot_frame(robot, settings.frame_prefix, name)
        if not frame:
            left_out.append(f"frame '{name}' is not a frame of robot '{robot.model.name}'")
            continue
        problem = method_problem(robot, settings.operational_space_method, [frame])
        if problem:
            left_out.append(problem)
        else:
            frames.append(frame)
    joint_names = list(robot.joint_names)
    messages = CycleMessages(
        JointSpaceDynamics(joint_names=joint_names),
        {frame: OperationalSpaceDynamics(frame=settings.frame_prefix + frame,
                                         joint_names=joint_names)
         for frame in frames},
    )
    joint_states = JointStateMerge(JointStateMap(robot.measured_joints, coupling),
                                   settings.max_age)
    return Serving(robot, joint_states, settings, tuple(frames), tuple(left_out), messages,
                   odometry)


class DynamicsNode(RobotNode):
    """Computes and publishes joint-space and operational-space dynamics each cycle."""

    TASK = "dynamics"
    PARAMETERS = PARAMETERS

    def __init__(self, **kwargs: Any) -> None:
        self._serving: Serving | None = None
        self._odometry: BaseOdometry | None = None  # a floating base's
        self._latencies: deque[float] = deque(maxlen=LATENCY_WINDOW)
        self._cycles = 0
        self._diagnostic_start = time.monotonic()
        self._intake = InArrivalOrder("joint_states")
        super().__init__("dynamics_node", **kwargs)

    def create_interfaces(self) -> None:
        # odometry first: of a base and joint state both waiting, the executor takes the base
        # first, so that the joint state is answered with the base of its instant
        self.create_subscription(Odometry, "odometry",
                                 self.guard.callback("odometry", self._on_odometry),
                                 **input_qos(ODOMETRY_DEPTH))
        self._intake.subscription = self.create_subscription(
            JointState, "joint_states",
            self.guard.callback("joint_states", self._on_joint_state), **input_qos(QUEUE_DEPTH),
        )
        self._held_states = HeldStates(self, self._intake, self._on_held_state,
                                       self.value("joint_states_group_wait"))
        self._joint_space = self.create_lifecycle_publisher(
            JointSpaceDynamics, "dynamics/joint_space", QUEUE_DEPTH
        )
        self._operational_space = self.create_lifecycle_publisher(
            OperationalSpaceDynamics, "dynamics/operational_space", QUEUE_DEPTH
        )
        self.create_service(ComputeDynamics, "compute_dynamics",
                            self.guard.service("compute_dynamics", self._on_compute))
        self.create_service(Linearize, "linearize",
                            self.guard.service("linearize", self._on_linearize))

    # -- robot and parameters ---------------------------------------------------------------

    def adopt(self, robot: Robot) -> None:
        """Put a robot in service with the current settings (see the module docstring).

        Raises:
            RefusedError: what the node would publish fails on this robot.
        """
        self._serve(bind(robot, self._settings()))

    def kernel_steps(self, robot: Robot) -> list[WarmUpStep]:
        """warm_up's computations with this robot."""
        return WarmUpPlan.of(bind(robot, self._settings())).steps

    def release(self) -> None:
        self._serving = self._odometry = None

    def header_frame(self, robot: Robot) -> str:
        """The frame_id of every header, the diagnostics' too (module function)."""
        return header_frame(robot, self._settings())

    def _serve(self, serving: Serving) -> None:
        """Warm up `serving`, then put it in service and report what it leaves out; the
        odometry taken stays while its frames are the ones `serving` takes."""
        warm_up(serving)
        self._odometry = odometry_for(serving.odometry, self._odometry)
        self._serving = serving
        self.health.hold_condition(
            FRAMES_CONDITION, WARN,
            "left out: " + "; ".join(serving.left_out) if serving.left_out else ""
        )

    def _settings(self) -> Settings:
        """The settings of the parameters (with a change being checked)."""
        return settings_of(self.value)

    def apply(self, changes: dict[str, Any]) -> None:
        """Serve a change of the settings with the robot in service. The change is judged on
        its own: what the settings in force leave out already (a floating base's
        coriolis_matrix, a frame the robot lacks) stays left out, with its WARN, and does not
        refuse a change of anything else.

        Raises:
            RefusedError: the change leaves out a frame or quantity that the settings in force
                serve, or the robot cannot serve it (refused with the reason).
        """
        serving = self._serving
        if serving is not None and set(changes) & set(SETTINGS_PARAMETERS):
            candidate = bind(serving.robot, self._settings())
            added = [reason for reason in candidate.left_out if reason not in serving.left_out]
            if added:
                raise RefusedError("; ".join(added))
            self._serve(candidate)

    # -- each cycle -------------------------------------------------------------------------

    def _on_odometry(self, message: Odometry, info: MessageInfo) -> None:
        """Keep the newest odometry of a floating base (ignored for a fixed base).

        Raises:
            RefusedError: its frames, pose or twist cannot be the base's (ros.odometry).
        """
        if self.active and self._odometry is not None:
            self._odometry.take(message, received_ns(info))

    def _on_joint_state(self, message: JointState, info: MessageInfo) -> None:
        """Merge every joint state taken (this one and those queued behind it) in arrival
        order, then answer the newest merged state once it is ready (ros.joint_states)."""
        started = time.perf_counter()
        arrivals = self._intake.take(message, info)
        serving = self._serving
        if not self.active:
            self._intake.mark_handled()
            return
        if serving is None:
            self._intake.mark_handled()
            raise RefusedError("joint_states received before a robot description")
        newest = serving.joint_states.add_arrivals(arrivals, self.health)
        if newest is None:  # every message refused: the state is as it was
            self._intake.mark_handled()
            return
        ready = self._held_states.ready(newest)
        if ready is not None:
            self._answer(serving, ready, started)

    def _on_held_state(self, held: Arrival) -> None:
        """Answer a merged state whose rest did not come within joint_states_group_wait."""
        serving = self._serving
        if self.active and serving is not None:
            self._answer(serving, held, time.perf_counter())

    def _answer(self, serving: Serving, newest: Arrival, started: float) -> None:
        """Compute and publish the merged state whose newest message is `newest`.

        Args:
            started: perf_counter s when the callback began, for the latency.

        Raises:
            JointStateError: the merged state is incomplete (naming the joints not heard).
        """
        self._intake.mark_handled()
        now_ns = time.time_ns()
        state = serving.joint_states.state(now_ns)
        joint_map = serving.joint_states.joint_map
        if joint_map.coupling is not None:
            self._check_mimic(joint_map.mimic_mismatch(newest.message, state.q))
        settings = serving.settings
        if self._odometry is not None:
            state = self._odometry.robot_state(state, now_ns, settings.max_age)
        frames = serving.frames if "operational_space" in settings.quantities else ()
        joint_space, operational_space = compute(
            serving.robot, newest.message.header, state, frames, settings, serving.messages,
        )
        self._joint_space.publish(joint_space)
        for frame_message in operational_space:
            self._operational_space.publish(frame_message)
        self._intake.mark_answered(newest)
        self._latencies.append(time.perf_counter() - started)
        self._cycles += 1

    def _check_mimic(self, mismatch: str) -> None:
        """WARN while joint_states carry mimic joints off their rule (answered at the
        independent joints' positions, which the rule then extends)."""
        self.health.hold_condition(
            MIMIC_CONDITION, WARN, f"joint_states: mimic joint(s) off their rule: {mismatch}; "
            "answered with them on it" if mismatch else ""
        )

    def _on_compute(
        self, request: ComputeDynamics.Request, response: ComputeDynamics.Response
    ) -> ComputeDynamics.Response:
        """The compute_dynamics service: dynamics at the state the caller sends.

        A floating base's request carries its joints; its base is the newest odometry's,
        within joint_states_max_age, as for a joint state on the topic. external_wrenches push
        the robot in the acceleration; the response gives their Σ Jᵀ w (ros.wrenches). With
        `derivatives`, the response has those of the dynamics too (fill_derivatives).

        Raises:
            RefusedError: no robot yet, an unknown frame or method, a bad state, no recent
                odometry of a floating base, or derivatives asked with external_wrenches
                (the guard answers success=false with the reason).
        """
        serving = self._in_service()
        robot = serving.robot
        frames = [self.robot_frame(frame) for frame in request.frames]
        unknown = [name for name, frame in zip(request.frames, frames, strict=True) if not frame]
        if unknown:
            raise RefusedError(f"unknown frame(s) {unknown} (frame_prefix "
                               f"'{self.frame_prefix}', frames of robot '{robot.model.name}')")
        requested = (request.mass_matrix_method, request.forward_dynamics_method,
                     request.operational_space_method)
        known = (Robot.MASS_MATRIX_METHODS, Robot.FORWARD_DYNAMICS_METHODS,
                 Robot.OPERATIONAL_SPACE_METHODS)
        bad = [m for m, ok in zip(requested, known, strict=True) if m and m not in ok]
        if bad:
            raise RefusedError(f"unknown method(s) {bad}")
        defaults = serving.settings
        methods = JointSpaceMethods(
            request.mass_matrix_method or defaults.joint_space_methods.mass_matrix,
            request.forward_dynamics_method or defaults.joint_space_methods.forward_dynamics)
        operational = request.operational_space_method or defaults.operational_space_method
        problem = method_problem(robot, operational, frames)
        if problem:
            raise RefusedError(problem)
        state = self._request_state(serving, request.state)
        wrenches = wrenches_of(request.external_wrenches, self.robot_frame,
                               "external_wrenches")
        if request.derivatives and wrenches:
            raise RefusedError("derivatives: not answered with external_wrenches (how their "
                               "Jᵀ w changes with q is not computed); ask for them apart")
        settings = replace(serving.settings, quantities=QUANTITIES, joint_space_methods=methods,
                           operational_space_method=operational)
        joint_space, operational_space = compute(
            robot, request.state.header, state, tuple(frames), settings,
            external_wrenches=wrenches or None,
        )
        response.success, response.joint_space = True, joint_space
        response.operational_space = operational_space
        if wrenches:
            response.external_forces = float_sequence(wrench_forces(robot, state.q, wrenches))
        if request.derivatives:
            fill_derivatives(response, robot, state)
        return response

    def _on_linearize(
        self, request: Linearize.Request, response: Linearize.Response
    ) -> Linearize.Response:
        """The linearize service: A and B of one simulation step from the state the caller
        sends (Linearize.srv, simulated_step_jacobians); a floating base's at the newest
        odometry's base, as compute_dynamics'.

        Raises:
            RefusedError: no robot yet, an unknown integrator, a dt that is not a positive
                number, a bad state, or no recent odometry of a floating base (naming the
                field; the guard answers success=false with the reason).
            NonFiniteAnswerError: A or B overflowed at this state and dt.
        """
        serving = self._in_service()
        integrator = request.integrator or LINEARIZE_INTEGRATOR
        if integrator not in LINEARIZED_INTEGRATORS:
            raise RefusedError(f"integrator: unknown '{integrator}'; choose one of "
                               f"{', '.join(LINEARIZED_INTEGRATORS)} (empty: "
                               f"{LINEARIZE_INTEGRATOR})")
        if not (math.isfinite(request.dt) and request.dt > 0.0):
            raise RefusedError(f"dt: must be a number of seconds > 0; got {request.dt:g}")
        state = self._request_state(serving, request.state)
        robot = serving.robot
        command = np.zeros(robot.nv) if state.effort is None else state.effort
        jacobians = simulated_step_jacobians(robot, state.q, state.qd, command, request.dt,
                                             integrator)
        response.state_matrix = float_sequence(finite("state_matrix (A)", jacobians.A))
        response.input_matrix = float_sequence(finite("input_matrix (B)", jacobians.B))
        response.success, response.joint_names = True, list(robot.joint_names)
        return response

    def _in_service(self) -> Serving:
        """What a service request is answered with.

        Raises:
            RefusedError: no robot yet, or the node is not active.
        """
        serving = self._serving
        if serving is None:
            raise RefusedError("no robot description loaded yet")
        if not self.active:
            raise RefusedError("dynamics_node is not active")
        return serving

    def _request_state(self, serving: Serving, state: JointState) -> RobotState:
        """The state of a request's `state` in the robot's order: its joints matched by name;
        a floating base's at the newest odometry's base (ros.odometry).

        Raises:
            JointStateError: a joint missing, a field of the wrong length or not finite
                (naming "state", the field and the joint).
            RefusedError: a floating base without an odometry within joint_states_max_age.
        """
        joints = JointStateMap(serving.joint_states.joint_map.joint_names).state(state, "state")
        if self._odometry is None:
            return joints
        return self._odometry.robot_state(joints, time.time_ns(), serving.settings.max_age)

    # -- reporting --------------------------------------------------------------------------

    def report(self) -> tuple[int, str, dict[str, str]]:
        now = time.monotonic()
        elapsed, self._diagnostic_start = now - self._diagnostic_start, now
        serving = self._serving
        skipping, intake = self._intake.diagnostic_values()
        level, message = serving_status(
            serving is not None, skipping, "computing", "joint_states arrive faster than they "
            "are answered: answering the newest, dropping those it superseded")
        latencies = np.array(self._latencies) * 1e3
        values = {
            "rate (Hz)": f"{self._cycles / elapsed:.1f}" if elapsed > 0 else "0",
            "latency p50 (ms)": f"{np.percentile(latencies, 50):.3f}" if latencies.size else "",
            "latency p99 (ms)": f"{np.percentile(latencies, 99):.3f}" if latencies.size else "",
            **intake,
        }
        self._cycles = 0
        return level, message, values


def header_frame(robot: Robot, settings: Settings) -> str:
    """The frame_id of every header published with `robot`: the frame its poses are in, the
    root link (a fixed base) or the world frame (a floating base), with frame_prefix."""
    floating = robot.model.floating_base
    return settings.frame_prefix + (settings.world_frame if floating else robot.model.root_link)


def compute(
    robot: Robot,
    header: Header,
    state: RobotState,
    frames: Sequence[str],
    settings: Settings,
    messages: CycleMessages | None = None,
    external_wrenches: ExternalWrenches | None = None,
) -> tuple[JointSpaceDynamics, list[OperationalSpaceDynamics]]:
    """The messages of one state: (JointSpaceDynamics, [OperationalSpaceDynamics]), filled
    into `messages` when given (each cycle's), else new (a service's answer).

    Args:
        header: the joint state's header; its frame_id is set here (header_frame) and every
            message carries it.
        state: the state in the robot's order (a floating base's q, v and τ); effort None: no
            acceleration.
        frames: the frames whose OperationalSpaceDynamics are computed, in this order.
        settings: the quantities, methods, singular threshold and frame prefix.
        external_wrenches: frame → wrench pushing the robot, in the acceleration.

    Raises:
        NonFiniteAnswerError: a frame's twist came out NaN or inf (conversions).
        Exception: what the Robot raises where an answer does not exist.
    """
    start = time.perf_counter()
    header.frame_id = header_frame(robot, settings)
    joint_space = joint_space_message(robot, state, settings.joint_space_methods,
                                      settings.quantities,
                                      messages.joint_space if messages else None,
                                      external_wrenches)
    joint_space.header = header
    operational_space = []
    for frame in frames:
        frame_message = operational_space_message(
            robot, state.q, state.qd, frame, settings.operational_space_method,
            settings.singular_threshold,
            messages.operational_space[frame] if messages else None,
        )
        frame_message.frame = settings.frame_prefix + frame
        frame_message.header = header
        operational_space.append(frame_message)
    joint_space.computation_time = time.perf_counter() - start
    return joint_space, operational_space


def fill_derivatives(
    response: ComputeDynamics.Response,
    robot: Robot,
    state: RobotState,
) -> None:
    """The derivatives of a compute_dynamics response (ComputeDynamics.srv), each n x n
    row-major as its mass matrix: ∂τ/∂q and ∂τ/∂q̇ at its joint_space.acceleration (at q̈ = 0
    without an effort), ∂q̈/∂q and ∂q̈/∂q̇ at `effort` (left empty without one).

    Args:
        response: the response, its joint_space filled.
        state: the state it was computed at, in the robot's order.

    Raises:
        Exception: what the Robot raises where an answer does not exist (a singular M).
    """
    q, qd, effort = state.q, state.qd, state.effort
    acceleration = np.zeros(robot.nv) if effort is None else \
        np.asarray(response.joint_space.acceleration)
    inverse = robot.inverse_dynamics_derivatives(q, qd, acceleration)
    response.dtau_dq = float_sequence(inverse.dtau_dq)
    response.dtau_dv = float_sequence(inverse.dtau_dv)
    if effort is not None:
        forward = robot.forward_dynamics_derivatives(q, qd, effort)
        response.dvdot_dq = float_sequence(forward.dvdot_dq)
        response.dvdot_dv = float_sequence(forward.dvdot_dv)


def simulated_step_jacobians(
    robot: Robot, q: np.ndarray, v: np.ndarray, command: np.ndarray, dt: float,
    integrator: str,
) -> StepJacobians:
    """step_jacobians of the step sim_node takes: with the robot's joint damping and friction
    (at the default friction velocity) and its effort limits, as SimulatedRobot has them.

    Args:
        q, v: the state (nq,), (nv,).
        command: the commanded effort u (nv,).
        dt: s, > 0.
        integrator: one of LINEARIZED_INTEGRATORS.
    """
    model = robot.model
    return step_jacobians(robot, q, v, command, dt, integrator,
                          losses=JointLosses.of(model),
                          effort_limit=robot.per_coordinate(model.effort_limit))


def method_problem(robot: Robot, method: str, frames: Sequence[str]) -> str:
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


def warm_up(serving: Serving) -> None:
    """Compute once, at rest, each quantity the node publishes with these settings (loading,
    on a new install compiling, the kernels, so that the first joint state is answered as
    fast as the others), then each other quantity compute_dynamics answers whose kernels are
    cached (WarmUpPlan); then exempt what exists now from the garbage collector's scans,
    which shortens the pauses of a cycle.

    On a new machine the quantities compute_dynamics answers compile in helper processes
    meanwhile (compile_ahead) and go on after the node is in service: the first call loads
    them, or waits for a kernel still compiling. A quantity that does not exist at rest (Λ
    where a frame's Jacobian loses rank) is left to the first call, which computes it at the
    caller's state and says why it does not exist there.

    Raises:
        RefusedError: naming what failed and why (the robot cannot serve these settings).
    """
    plan = WarmUpPlan.of(serving)
    for quantity, step in plan.published.items():
        try:
            step.run()
        except Exception as error:  # whatever fails refuses the robot, with the reason
            frames = quantity_frames(serving, quantity)
            raise RefusedError(
                f"robot '{serving.robot.model.name}' cannot serve quantity {quantity}"
                f"{f' of frames {list(frames)}' if frames else ''}: "
                f"{type(error).__name__}: {error}"
            ) from error
    for step in plan.service_only.values():
        if not step.mark.exists():  # not cached yet: a helper compiles it
            continue
        try:
            step.run()
        except Exception:  # at rest only; a call computes at its own state
            continue
    gc.collect()
    gc.freeze()


@dataclass(frozen=True)
class WarmUpPlan:
    """The computations of warm_up, one quantity each (quantity → its WarmUpStep): those the
    node publishes, in the order it computes them, and those only its services answer (the
    other quantities, and the derivatives)."""

    published: dict[str, WarmUpStep]
    service_only: dict[str, WarmUpStep]

    @classmethod
    def of(cls, serving: Serving) -> WarmUpPlan:
        robot, settings = serving.robot, serving.settings
        joint_space = settings.joint_space_methods
        methods = (f"{robot_kind(robot)}; {joint_space.mass_matrix}, "
                   f"{joint_space.forward_dynamics}, {settings.operational_space_method}")

        def step(quantity: str) -> WarmUpStep:
            return WarmUpStep(f"{quantity} ({methods})", compute_at_rest,
                              (robot, quantity_frames(serving, quantity),
                               replace(settings, quantities=(quantity,))))

        derivatives = WarmUpStep(f"derivatives ({robot_kind(robot)})", derivatives_at_rest,
                                 (robot,))
        return cls({quantity: step(quantity) for quantity in settings.quantities},
                   {**{quantity: step(quantity) for quantity in QUANTITIES
                       if quantity not in settings.quantities},
                    "derivatives": derivatives})

    @property
    def steps(self) -> list[WarmUpStep]:
        """Every step, those only the service answers first: a helper that compiles them
        ahead takes them from the end, what the node publishes first."""
        return [*self.service_only.values(), *self.published.values()]


def quantity_frames(serving: Serving, quantity: str) -> tuple[str, ...]:
    """The frames a quantity is computed for: the node's, for the operational space."""
    return serving.frames if quantity == "operational_space" else ()


def robot_kind(robot: Robot) -> str:
    """"floating base" or "fixed base", for a step's name (their kernels differ)."""
    return "floating base" if robot.model.floating_base else "fixed base"


def compute_at_rest(robot: Robot, frames: Sequence[str],
                    settings: Settings) -> None:
    """compute() at rest: q neutral (zero, a floating base's at the origin), q̇ = 0, τ = 0."""
    rest = np.zeros(robot.nv)
    compute(robot, JointState().header, RobotState(robot.neutral(), rest, rest), frames,
            settings)


def derivatives_at_rest(robot: Robot) -> None:
    """The derivatives compute_dynamics and linearize take, at compute_at_rest's state."""
    rest = np.zeros(robot.nv)
    robot.inverse_dynamics_derivatives(robot.neutral(), rest, rest)
    robot.forward_dynamics_derivatives(robot.neutral(), rest, rest)


def main(args: list[str] | None = None) -> None:
    """Run the node until interrupted."""
    sys.exit(run_node(DynamicsNode, args))


if __name__ == "__main__":
    main()
