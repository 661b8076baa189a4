"""dynamics_node: the robot's dynamics at the newest joint state, published, and served on
request.

Parameters (changeable at run time; a change the node cannot serve is refused with the
reason):
    robot_description (string): the URDF; when empty, the node waits for the
        ``robot_description`` topic (transient local, as robot_state_publisher provides it).
    armature (string, ""): rotor inertia per joint, added to M's diagonal: YAML text of a
        mapping ("{panda_joint1: 0.1}", kg·m² or kg) or the path of a YAML file of one
        (ros.entry.armature_parameter); changeable at run time.
    gravity (double[3], [0, 0, -9.81]): m/s² in the base frame (a wall mount: [9.81, 0, 0]);
        changeable at run time.
    quantities (string[], all but "coriolis_matrix"): what is published each cycle, any of
        "mass_matrix", "bias_forces", "gravity_torques", "acceleration" (when the joint state
        has efforts), "coriolis_matrix" and "operational_space" (one message per frame); what
        is left out stays empty or unsent. compute_dynamics answers with all of them.
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

joint_states are handled newest first (ros.intake): a cycle answers the newest state that has
arrived and drops those it superseded; the diagnostics count them and give the age of each
answered state from its arrival.

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
import time
from collections import deque
from dataclasses import dataclass, replace

import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.exceptions import ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter
from robodyn_interfaces.msg import JointSpaceDynamics, OperationalSpaceDynamics
from robodyn_interfaces.srv import ComputeDynamics
from sensor_msgs.msg import JointState

from robodyn_ros.operational_space import SCHUR_METHODS, check_schur_task
from robodyn_ros.robot import Robot
from robodyn_ros.ros.conversions import (
    JOINT_SPACE_QUANTITIES,
    JointStateMap,
    joint_space_message,
    operational_space_message,
)
from robodyn_ros.ros.entry import (
    follow_robot_description,
    publish_diagnostics,
    spin_until_interrupted,
)
from robodyn_ros.ros.guard import ERROR, OK, WARN, Guard, NodeHealth, RefusedError
from robodyn_ros.ros.intake import NewestFirst

QUANTITIES = (*JOINT_SPACE_QUANTITIES, "operational_space")
DEFAULT_QUANTITIES = tuple(q for q in QUANTITIES if q != "coriolis_matrix")
# joint_states the middleware keeps for the node, all taken at a cycle's start (the newest
# answered); and dynamics kept for a reliable subscriber: 100 ms at 1 kHz, so that a pause
# of either process (a scheduler hiccup, a garbage collection) delays messages rather than
# drops them
QUEUE_DEPTH = 100
LATENCY_WINDOW = 2000  # take → publish latencies kept for the diagnostics' percentiles
METHOD_PARAMETERS = ("mass_matrix_method", "forward_dynamics_method", "operational_space_method")
SETTINGS_PARAMETERS = ("quantities", "frames", "singular_threshold", *METHOD_PARAMETERS)
FRAMES_CONDITION = "frames"
MIMIC_CONDITION = "mimic"


@dataclass(frozen=True)
class Settings:
    """What the parameters ask the node to publish, and how; no robot in it."""

    quantities: tuple[str, ...]
    frames: tuple[str, ...]
    methods: tuple[str, str, str]  # mass matrix, forward dynamics, operational space
    singular_threshold: float


@dataclass(frozen=True)
class CycleMessages:
    """The messages each cycle fills again and publishes: building them anew cost as much as
    computing the dynamics they carry."""

    joint_space: JointSpaceDynamics
    operational_space: dict[str, OperationalSpaceDynamics]  # frame → its message


@dataclass(frozen=True)
class Serving:
    """Settings bound to a robot: what each cycle computes.

    frames: the settings' frames this robot has and the operational-space method serves;
    left_out: why the others are left out (one reason per frame, empty when none is).
    """

    robot: Robot
    joint_map: JointStateMap
    settings: Settings
    frames: tuple[str, ...]
    left_out: tuple[str, ...]
    messages: CycleMessages


def bind(robot: Robot, settings: Settings) -> Serving:
    """The settings checked against a robot.

    Returns:
        What the node can serve with this robot, and the frames it leaves out with why.
    """
    frames, left_out = [], []
    for frame in settings.frames:
        if frame not in robot.frame_names:
            left_out.append(f"frame '{frame}' is not a frame of robot '{robot.model.name}'")
            continue
        problem = method_problem(robot, settings.methods[2], [frame])
        if problem:
            left_out.append(problem)
        else:
            frames.append(frame)
    joint_names = list(robot.joint_names)
    messages = CycleMessages(
        JointSpaceDynamics(joint_names=joint_names),
        {frame: OperationalSpaceDynamics(frame=frame, joint_names=joint_names)
         for frame in frames},
    )
    return Serving(robot, JointStateMap(robot.joint_names, robot.coupling), settings, tuple(frames),
                   tuple(left_out), messages)


class DynamicsNode(Node):
    """Computes and publishes joint-space and operational-space dynamics each cycle."""

    def __init__(self, **kwargs) -> None:
        super().__init__("dynamics_node", **kwargs)
        self.health = NodeHealth(self.get_logger())
        self.guard = Guard(self.health)
        self._serving: Serving | None = None
        self._latencies: deque[float] = deque(maxlen=LATENCY_WINDOW)
        self._cycles = 0
        self._diagnostic_start = time.monotonic()

        self.declare_parameter("robot_description", "")
        self.declare_parameter("mass_matrix_method", "crba")
        self.declare_parameter("forward_dynamics_method", "aba")
        self.declare_parameter("operational_space_method", "dense")
        self.declare_parameter("frames", Parameter.Type.STRING_ARRAY)
        self.declare_parameter("quantities", list(DEFAULT_QUANTITIES))
        self.declare_parameter("singular_threshold", 1e-4)
        self.declare_parameter("diagnostic_period", 1.0)
        self.add_on_set_parameters_callback(self.guard.parameters(self._check_parameters))

        self._joint_states = NewestFirst("joint_states")
        self._joint_states.subscription = self.create_subscription(
            JointState, "joint_states",
            self.guard.callback("joint_states", self._on_joint_state), QUEUE_DEPTH,
        )
        self._joint_space = self.create_publisher(
            JointSpaceDynamics, "dynamics/joint_space", QUEUE_DEPTH
        )
        self._operational_space = self.create_publisher(
            OperationalSpaceDynamics, "dynamics/operational_space", QUEUE_DEPTH
        )
        self.create_service(ComputeDynamics, "compute_dynamics",
                            self.guard.service("compute_dynamics", self._on_compute))
        publish_diagnostics(self, self.guard, self.get_parameter("diagnostic_period").value,
                            self._status)
        follow_robot_description(self, self.guard, self._adopt)

    @property
    def robot(self) -> Robot | None:
        """The robot in service (None before a description loads)."""
        serving = self._serving
        return serving.robot if serving is not None else None

    # -- robot and parameters ---------------------------------------------------------------

    def _adopt(self, robot: Robot) -> None:
        """Put a robot in service with the current settings (see the module docstring).

        Raises:
            RefusedError: what the node would publish fails on this robot.
        """
        self._serve(bind(robot, self._settings()))

    def _serve(self, serving: Serving) -> None:
        """Warm up `serving`, then put it in service and report the frames it leaves out."""
        warm_up(serving)
        self._serving = serving
        self.health.hold_condition(
            FRAMES_CONDITION, WARN,
            "left out: " + "; ".join(serving.left_out) if serving.left_out else ""
        )

    def _settings(self, changes: dict[str, object] | None = None) -> Settings:
        """The settings of the parameters, with `changes` (name → value) applied."""
        changes = changes or {}

        def value(name: str):
            return changes[name] if name in changes else self.get_parameter(name).value

        frames = changes["frames"] if "frames" in changes else self._frames()
        return Settings(
            quantities=tuple(value("quantities")),
            frames=tuple(frames or ()),
            methods=tuple(value(name) for name in METHOD_PARAMETERS),
            singular_threshold=value("singular_threshold"),
        )

    def _check_parameters(self, parameters: list[Parameter]) -> SetParametersResult:
        """Accept a parameter change only when the node can serve it with its robot.

        Raises:
            RefusedError: the change cannot be served (the guard refuses it with the reason).
        """
        for parameter in parameters:
            reason = parameter_problem(parameter)
            if reason:
                return SetParametersResult(successful=False, reason=reason)
        changes = {p.name: p.value for p in parameters if p.name in SETTINGS_PARAMETERS}
        serving = self._serving
        if changes and serving is not None:
            candidate = bind(serving.robot, self._settings(changes))
            if candidate.left_out:
                raise RefusedError("; ".join(candidate.left_out))
            self._serve(candidate)
        return SetParametersResult(successful=True)

    def _frames(self) -> list[str]:
        """The frames parameter; a string array has no empty default in rclpy, so unset means
        no frames."""
        try:
            return list(self.get_parameter("frames").value)
        except ParameterUninitializedException:
            return []

    # -- each cycle -------------------------------------------------------------------------

    def _on_joint_state(self, message: JointState, info: dict) -> None:
        """Answer the newest joint state (this one or one queued behind it)."""
        started = time.perf_counter()
        arrival = self._joint_states.take(message, info)
        self._joint_states.mark_handled()
        serving = self._serving
        if serving is None:
            raise RefusedError("joint_states received before a robot description")
        q, qd, effort = serving.joint_map.state(arrival.message)
        if serving.joint_map.coupling is not None:
            self._check_mimic(serving.joint_map.mimic_mismatch(arrival.message, q))
        settings = serving.settings
        frames = serving.frames if "operational_space" in settings.quantities else ()
        joint_space, operational_space = compute(
            serving.robot, arrival.message.header, q, qd, effort, frames, settings,
            serving.messages,
        )
        self._joint_space.publish(joint_space)
        for frame_message in operational_space:
            self._operational_space.publish(frame_message)
        self._joint_states.mark_answered(arrival)
        self._latencies.append(time.perf_counter() - started)
        self._cycles += 1

    def _check_mimic(self, mismatch: str) -> None:
        """WARN while joint_states carry mimic joints off their rule (answered at the
        independent joints' positions, which the rule then extends)."""
        self.health.hold_condition(
            MIMIC_CONDITION, WARN, f"joint_states: mimic joint(s) off their rule: {mismatch}; "
            "answered with them on it" if mismatch else ""
        )

    def _on_compute(self, request, response):
        """The compute_dynamics service: dynamics at the state the caller sends.

        Raises:
            RefusedError: no robot yet, an unknown frame or method, or a bad state (the guard
                answers success=false with the reason).
        """
        serving = self._serving
        if serving is None:
            raise RefusedError("no robot description loaded yet")
        robot = serving.robot
        unknown = [frame for frame in request.frames if frame not in robot.frame_names]
        if unknown:
            raise RefusedError(f"unknown frame(s) {unknown}")
        requested = (request.mass_matrix_method, request.forward_dynamics_method,
                     request.operational_space_method)
        known = (Robot.MASS_MATRIX_METHODS, Robot.FORWARD_DYNAMICS_METHODS,
                 Robot.OPERATIONAL_SPACE_METHODS)
        bad = [m for m, ok in zip(requested, known, strict=True) if m and m not in ok]
        if bad:
            raise RefusedError(f"unknown method(s) {bad}")
        methods = tuple(m or default for m, default in
                        zip(requested, serving.settings.methods, strict=True))
        problem = method_problem(robot, methods[2], request.frames)
        if problem:
            raise RefusedError(problem)
        q, qd, effort = JointStateMap(robot.joint_names).state(request.state, "state")
        settings = replace(serving.settings, quantities=QUANTITIES, methods=methods)
        joint_space, operational_space = compute(
            robot, request.state.header, q, qd, effort, tuple(request.frames), settings
        )
        response.success, response.joint_space = True, joint_space
        response.operational_space = operational_space
        return response

    # -- reporting --------------------------------------------------------------------------

    def _status(self):
        now = time.monotonic()
        elapsed, self._diagnostic_start = now - self._diagnostic_start, now
        serving = self._serving
        skipping, intake = self._joint_states.diagnostic_values()
        if serving is None:
            level, message = ERROR, "no robot description"
        elif skipping:
            level, message = WARN, "joint_states arrive faster than they are answered: " \
                "answering the newest, dropping those it superseded"
        else:
            level, message = OK, "computing"
        latencies = np.array(self._latencies) * 1e3
        values = {
            "model": serving.robot.model.name if serving else "",
            "rate (Hz)": f"{self._cycles / elapsed:.1f}" if elapsed > 0 else "0",
            "latency p50 (ms)": f"{np.percentile(latencies, 50):.3f}" if latencies.size else "",
            "latency p99 (ms)": f"{np.percentile(latencies, 99):.3f}" if latencies.size else "",
            **intake,
        }
        self._cycles = 0
        return self.health.status(f"robodyn_ros: {self.get_name()}",
                                  values["model"], level, message, values)


def compute(robot: Robot, header, q, qd, effort, frames, settings: Settings,
            messages: CycleMessages | None = None):
    """The messages of one state: (JointSpaceDynamics, [OperationalSpaceDynamics]), filled
    into `messages` when given (each cycle's), else new (a service's answer).

    Raises:
        NonFiniteAnswerError: a frame's twist came out NaN or inf (conversions).
        Exception: what the Robot raises where an answer does not exist.
    """
    start = time.perf_counter()
    header.frame_id = robot.model.root_link
    joint_space = joint_space_message(robot, q, qd, effort, settings.methods[:2],
                                      settings.quantities,
                                      messages.joint_space if messages else None)
    joint_space.header = header
    operational_space = []
    for frame in frames:
        frame_message = operational_space_message(
            robot, q, qd, frame, settings.methods[2], settings.singular_threshold,
            messages.operational_space[frame] if messages else None,
        )
        frame_message.header = header
        operational_space.append(frame_message)
    joint_space.computation_time = time.perf_counter() - start
    return joint_space, operational_space


def parameter_problem(parameter: Parameter) -> str:
    """Why a parameter's new value is out of its range, whatever the robot ("" if it is not)."""
    name, value = parameter.name, parameter.value
    if name == "mass_matrix_method" and value not in Robot.MASS_MATRIX_METHODS:
        return f"mass_matrix_method must be one of {Robot.MASS_MATRIX_METHODS}"
    if name == "forward_dynamics_method" and value not in Robot.FORWARD_DYNAMICS_METHODS:
        return f"forward_dynamics_method must be one of {Robot.FORWARD_DYNAMICS_METHODS}"
    if name == "operational_space_method" and value not in Robot.OPERATIONAL_SPACE_METHODS:
        return f"operational_space_method must be one of {Robot.OPERATIONAL_SPACE_METHODS}"
    if name == "quantities" and set(value) - set(QUANTITIES):
        return f"quantities: unknown {sorted(set(value) - set(QUANTITIES))}; known {QUANTITIES}"
    if name == "singular_threshold" and not 0.0 < value < 1.0:
        return f"singular_threshold must be in (0, 1); got {value}"
    if name == "diagnostic_period" and not value > 0.0:
        return "diagnostic_period must be positive"
    return ""


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


def warm_up(serving: Serving) -> None:
    """Compute once, at q = 0, what the node publishes with these settings (loading, on a new
    install compiling, the kernels, so that the first joint state is answered as fast as the
    others); then exempt what exists now from the garbage collector's scans, which shortens
    the pauses of a cycle.

    Raises:
        RefusedError: naming what failed and why (the robot cannot serve these settings).
    """
    robot, settings = serving.robot, serving.settings
    q = np.zeros(robot.nv)
    frames = serving.frames if "operational_space" in settings.quantities else ()
    header = JointState().header
    try:
        compute(robot, header, q, q, q, frames, settings)
    except Exception as error:  # whatever fails refuses the robot, with the reason
        raise RefusedError(
            f"robot '{robot.model.name}' cannot serve quantities {list(settings.quantities)}"
            f"{f' of frames {list(frames)}' if frames else ''}: {type(error).__name__}: {error}"
        ) from error
    gc.collect()
    gc.freeze()


def main(args: list[str] | None = None) -> None:
    """Run the node until interrupted."""
    spin_until_interrupted(DynamicsNode, args)


if __name__ == "__main__":
    main()
