"""The robot description a node follows (parameter and topic), with the settings every node
applies to it (armature, gravity, locked joints, a floating base) and the loads set_payload
puts on it; each new robot is checked before it replaces the one in service."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from rcl_interfaces.msg import SetParametersResult
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile
from robodyn_interfaces.srv import SetPayload
from std_msgs.msg import String

from robodyn_ros.model import ModelError, description_file, read_robot_description
from robodyn_ros.model.armature import armature_mapping
from robodyn_ros.model.model import Payload, checked_gravity
from robodyn_ros.robot import Robot
from robodyn_ros.ros.guard import ERROR, WARN, Guard, RefusedError
from robodyn_ros.startup.compile_ahead import CompileAhead, WarmUpStep, robot_load_step

DESCRIPTION_CONDITION = "robot_description"
ARMATURE_PARAMETER = "armature"
ARMATURE_CONDITION = "armature"
GRAVITY_PARAMETER = "gravity"
LOCKED_JOINTS_PARAMETER = "locked_joints"
FLOATING_BASE_PARAMETER = "floating_base"
SETTINGS_PARAMETERS = (ARMATURE_PARAMETER, GRAVITY_PARAMETER, LOCKED_JOINTS_PARAMETER,
                       FLOATING_BASE_PARAMETER)
PAYLOAD_SERVICE = "set_payload"
PAYLOAD_CONDITION = "payload"
DESCRIPTION_PARAMETERS = ("robot_description", "robot_description_file")

KernelSteps = Callable[[Robot], Sequence[WarmUpStep]]
"""The calls a node's adopt makes with a robot (compile_ahead)."""


def follow_robot_description(
    node: Node, guard: Guard, adopt: Callable[[Robot], None],
    kernel_steps: KernelSteps,
) -> DescriptionFollower:
    """Follow the robot description: load the robot of the node's robot_description parameter
    at `DescriptionFollower.load_parameters` (when set; else of the file its
    robot_description_file parameter names, when set), and of each URDF the
    robot_description topic brings (transient local, as robot_state_publisher
    publishes it), with the node's armature, gravity, locked_joints and floating_base
    parameters (a free flyer at the root with floating_base true); serve set_payload.

    Each robot is built from its URDF and handed to `adopt`, which prepares everything the
    node will serve with it (warming up what it will compute) and puts it in service last, or
    raises. On a new machine, helper processes compile the kernels of the robot's load and of
    `kernel_steps` meanwhile (compile_ahead), and the node logs their progress. A URDF that
    does not load or a robot `adopt` refuses leaves the robot in service as it was; the reason
    is logged and reported at ERROR in the node's next diagnostics, and in each until a robot
    loads while none is in service (a robot in service runs on: the diagnostics then report
    it, the refusal as their "last error"). The node hands parameter changes to
    `DescriptionFollower.on_parameters`.

    A change of the armature, gravity, locked_joints or floating_base parameter hands the robot
    in service, so changed (built anew from its description for locked_joints, floating_base
    or a floating base), to `adopt`; it is refused with the reason when the value is invalid,
    when the armature names a joint that robot lacks, or when `adopt` refuses it. A new robot that
    lacks joints the armature names gets the armature of the joints it has, and a WARN
    condition naming the others. While a parameter is invalid from the start, no robot is
    served.

    The node's set_payload service (robodyn_interfaces/SetPayload) puts a load on a frame of
    the robot in service, or removes it, and hands the robot so changed to `adopt`; a request
    naming an unknown frame or a load no rigid body can have, or a robot `adopt` refuses, is
    refused with the reason. A new robot carries the loads on the frames it has, with a WARN
    condition naming the others.

    Args:
        node: the node; it must have declared DESCRIPTION_PARAMETERS and SETTINGS_PARAMETERS.
        guard: the node's guard (its health takes the conditions).
        adopt: puts a robot in service; raises (any exception) to refuse it.
        kernel_steps: the calls `adopt` will make with a robot, as WarmUpSteps.

    Returns:
        The follower (its `robot` is the robot in service).
    """
    follower = DescriptionFollower(node, guard, adopt, kernel_steps)
    latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(
        String, "robot_description",
        guard.callback("robot_description",
                       lambda message: follower.load(message.data, "the topic")),
        latched,
    )
    node.create_service(SetPayload, PAYLOAD_SERVICE,
                        guard.service(PAYLOAD_SERVICE, follower.on_set_payload))
    return follower


@dataclass(frozen=True)
class RobotDescription:
    """A robot description as a node received it.

    Attributes:
        urdf: the URDF text (xacro expanded).
        source: where it came from, as messages name it ("the topic").
        folder: the folder of the file it was read from, where a relative mesh filename
            starts; None for text from a parameter or the topic.
    """

    urdf: str
    source: str
    folder: Path | None = None


@dataclass(frozen=True)
class RobotSettings:
    """What a node applies to each robot it loads: the armature, gravity, locked_joints and
    floating_base parameters."""

    armature: dict[str, float]
    gravity: np.ndarray  # (3,)
    locked_joints: dict[str, float]
    floating_base: bool

    @classmethod
    def of(cls, value: Callable[[str], Any]) -> RobotSettings:
        """The settings of the parameters' values (`value`: name → value).

        Raises:
            RefusedError: an invalid value, naming the parameter.
        """
        return cls(armature_parameter(value(ARMATURE_PARAMETER)),
                   gravity_parameter(value(GRAVITY_PARAMETER)),
                   locked_joints_parameter(value(LOCKED_JOINTS_PARAMETER)),
                   bool(value(FLOATING_BASE_PARAMETER)))

    def robot(self, urdf: str) -> Robot:
        """The robot of a URDF with these settings, the armature on the joints it has.

        Raises:
            ModelError: the URDF or a setting does not give a valid robot.
        """
        robot = Robot.from_urdf_string(urdf, gravity=self.gravity,
                                       locked_joints=self.locked_joints or None,
                                       floating_base=self.floating_base)
        known = {joint: value for joint, value in self.armature.items()
                 if joint in robot.joint_names}
        return robot.with_armature(known) if known else robot


class DescriptionFollower:
    """The robot description and settings a node follows, and the robot they gave it."""

    def __init__(self, node: Node, guard: Guard,
                 adopt: Callable[[Robot], None],
                 kernel_steps: KernelSteps) -> None:
        self._node, self._health, self._adopt = node, guard.health, adopt
        self._kernel_steps = kernel_steps
        self._robot: Robot | None = None  # the robot in service
        self._description: RobotDescription | None = None  # the last one received
        self._serving: RobotDescription | None = None  # see `description`
        self._settings: RobotSettings | None = None  # None while a parameter is invalid
        self._invalid = ""
        self._payloads: dict[str, Payload] = {}  # frame → the load set_payload put there
        try:
            self._settings = RobotSettings.of(lambda name: node.get_parameter(name).value)
        except RefusedError as error:
            self._invalid = str(error)

    @property
    def robot(self) -> Robot | None:
        """The robot in service (None before one loads)."""
        return self._robot

    @property
    def description(self) -> RobotDescription | None:
        """The robot description of the robot handed to `adopt`: while a load runs, the one
        being loaded; else the robot in service's (None before one)."""
        return self._serving

    def load_parameters(self) -> None:
        """Load the robot of the robot_description parameter, when set; else of the file
        robot_description_file names, when set (a refusal is reported as `load` reports it)."""
        description = self._node.get_parameter("robot_description").value
        location = self._node.get_parameter("robot_description_file").value
        if description:
            self.load(description, "the robot_description parameter")
        elif location:
            self.load_file(location)

    def readopt(self) -> None:
        """Hand the robot in service to `adopt` again (the node's own parameters changed).

        Raises:
            Exception: what `adopt` raises to refuse it; the robot stays in service as it was.
        """
        if self._robot is not None:
            self._adopt(self._robot)

    def load(self, urdf: str, source: str, settings: RobotSettings | None = None,
             folder: Path | None = None) -> str:
        """Build the robot of `urdf` with the settings (the parameters' when None) and put it
        in service; `folder`: that of the file it was read from.

        Returns:
            Why it was refused ("" when it is in service).
        """
        description = RobotDescription(urdf, source, folder)
        self._description = description
        serving, self._serving = self._serving, description
        settings = settings or self._settings
        stage = f"robot description from {source} does not load"
        try:
            if settings is None:
                raise RefusedError(f"no robot is served with an invalid parameter: "
                                   f"{self._invalid}")
            with CompileAhead(self._node.get_logger().info) as compile_ahead:
                compile_ahead.ahead([robot_load_step(urdf)])
                robot = settings.robot(urdf)
                for payload in self._payloads.values():
                    if payload.frame in robot.frame_names:
                        robot = robot.with_payload(payload.frame, payload.mass, payload.com,
                                                   payload.inertia)
                stage = f"robot '{robot.model.name}' from {source} refused"
                compile_ahead.ahead(self._kernel_steps(robot))
                self._adopt(robot)
        except Exception as error:  # any failure refuses the robot, with the reason
            self._serving = serving
            return self._refused(f"{stage} ({type(error).__name__}: {error})")
        self._robot, self._settings, self._invalid = robot, settings, ""
        self._health.clear_condition(DESCRIPTION_CONDITION)
        self._report_left_out(robot)
        self._node.get_logger().info(f"robot '{robot.model.name}' from {source} in service: "
                                     f"{len(robot.joint_names)} joints")
        return ""

    def load_file(self, location: str, settings: RobotSettings | None = None) -> str:
        """`load` the robot of a URDF or xacro file, a path or a package:// URI (the
        robot_description_file parameter).

        Returns:
            Why it was refused ("" when it is in service): a file that cannot be found or read
            is named.
        """
        source = f"robot_description_file '{location}'"
        try:
            path = description_file(location)
            urdf = read_robot_description(path)
        except (OSError, ModelError) as error:
            return self._refused(f"robot description from {source} does not load "
                                 f"({type(error).__name__}: {error})")
        return self.load(urdf, source, settings, path.parent)

    def _refused(self, reason: str) -> str:
        """Report a robot refused for `reason`: until one loads while none is in service,
        once while one is. Returns the reason, with which robot is in service."""
        if self._robot is None:  # no robot runs: reported until one loads
            reason += "; no robot in service"
            self._health.set_condition(DESCRIPTION_CONDITION, ERROR, reason)
        else:  # the robot in service runs on as it was: reported once, as what happened
            reason += f"; robot '{self._robot.model.name}' stays in service"
            self._health.event(DESCRIPTION_CONDITION, ERROR, reason)
        return reason

    def on_parameters(self, changes: dict[str, Any]) -> SetParametersResult:
        """Load the robot of a robot_description change, or re-adopt the robot in service
        with an armature, gravity or locked_joints change.

        Args:
            changes: parameter name → new value.

        Raises:
            RefusedError: an invalid armature, gravity or locked_joints, or an armature naming
                a joint the robot in service lacks (the guard refuses the change with it).
        """
        if not {*SETTINGS_PARAMETERS, *DESCRIPTION_PARAMETERS} & set(changes):
            return SetParametersResult(successful=True)
        settings = self._changed_settings(changes)
        reason = ""
        if changes.get("robot_description"):
            reason = self.load(changes["robot_description"], "a parameter set", settings)
        elif changes.get("robot_description_file"):
            reason = self.load_file(changes["robot_description_file"], settings)
        elif settings is not None:
            reason = self._reconfigure(settings)
        if reason:
            return SetParametersResult(successful=False, reason=reason)
        return SetParametersResult(successful=True)

    def _changed_settings(self, changes: dict[str, Any]) -> RobotSettings | None:
        """The settings with the changed parameters' values (both read from the node where
        the settings are invalid so far); None when neither changes.

        Raises:
            RefusedError: a changed value is invalid.
        """
        if not set(SETTINGS_PARAMETERS) & set(changes):
            return None
        return RobotSettings.of(
            lambda name: changes[name] if name in changes else self._node.get_parameter(name).value
        )

    def _reconfigure(self, settings: RobotSettings) -> str:
        """Put the robot in service back in service with `settings`; with none in service,
        load the last robot description received (refused for want of valid settings), or
        keep `settings` for the first.

        Returns:
            Why it was refused ("" when it is in service).

        Raises:
            RefusedError: the armature names a joint the robot in service lacks.
        """
        robot, previous = self._robot, self._settings
        rebuild = previous is None or settings.locked_joints != previous.locked_joints \
            or settings.floating_base != previous.floating_base
        if robot is None or rebuild:  # locked joints or a floating base: another robot
            last = self._description
            if last is not None:
                return self.load(last.urdf, last.source, settings, last.folder)
            self._settings, self._invalid = settings, ""
            return ""
        lacking = [joint for joint in settings.armature if joint not in robot.joint_names]
        if lacking:
            raise RefusedError(
                f"armature: robot '{robot.model.name}' has no moving joint(s) "
                f"{', '.join(lacking)} (its joints: {', '.join(robot.joint_names)})"
            )
        changed = robot.with_armature(settings.armature).with_gravity(settings.gravity)
        try:
            self._adopt(changed)
        except Exception as error:  # refused: the robot in service stays as it was
            return (f"armature or gravity refused for robot '{robot.model.name}' "
                    f"({type(error).__name__}: {error}); the robot in service stays as it was")
        self._robot, self._settings = changed, settings
        self._report_left_out(changed)
        self._node.get_logger().info(f"robot '{robot.model.name}': armature and gravity set")
        return ""

    def on_set_payload(self, request: SetPayload.Request,
                       response: SetPayload.Response) -> SetPayload.Response:
        """Put the request's load on its frame of the robot in service (mass 0: remove it).

        Raises:
            RefusedError: no robot in service, an unknown frame or an impossible load, or the
                node refused the robot so changed (the guard answers with the reason).
        """
        robot = self._robot
        if robot is None:
            raise RefusedError("set_payload: no robot in service to carry a payload")
        inertia = request.inertia
        try:
            changed = robot.with_payload(
                request.frame, inertia.m, (inertia.com.x, inertia.com.y, inertia.com.z),
                [[inertia.ixx, inertia.ixy, inertia.ixz],
                 [inertia.ixy, inertia.iyy, inertia.iyz],
                 [inertia.ixz, inertia.iyz, inertia.izz]],
            )
        except ModelError as error:
            raise RefusedError(f"set_payload: {error}") from None
        self._adopt(changed)
        self._robot = changed
        carried = {payload.frame: payload for payload in changed.model.payloads}
        self._payloads.pop(request.frame, None)
        if request.frame in carried:
            self._payloads[request.frame] = carried[request.frame]
        done = (f"{inertia.m:g} kg on frame '{request.frame}'" if request.frame in carried
                else f"no payload on frame '{request.frame}'")
        response.success, response.message = True, f"robot '{robot.model.name}': {done}"
        self._report_left_out(changed)
        self._node.get_logger().info(response.message)
        return response

    def _report_left_out(self, robot: Robot) -> None:
        """WARN while the armature names joints, or set_payload loaded frames, that the robot
        in service lacks."""
        armature = self._settings.armature if self._settings else {}
        for key, what, names, has in (
            (ARMATURE_CONDITION, "armature of joint(s)", armature, robot.joint_names),
            (PAYLOAD_CONDITION, "payload(s) on frame(s)", self._payloads, robot.frame_names),
        ):
            lacking = [name for name in names if name not in has]
            self._health.hold_condition(
                key, WARN, f"{what} {', '.join(lacking)} left out: not in robot "
                f"'{robot.model.name}'" if lacking else ""
            )


def gravity_parameter(values: Iterable[float]) -> np.ndarray:
    """The gravity parameter: the gravitational acceleration (m/s²) in the robot's base frame
    (in the world for a floating base), three doubles ([0, 0, -9.81] by default; [9.81, 0, 0]
    for a wall whose base z axis is horizontal).

    Raises:
        RefusedError: not three finite numbers.
    """
    try:
        return checked_gravity(list(values), "parameter 'gravity'")
    except ModelError as error:
        raise RefusedError(str(error)) from None


def locked_joints_parameter(text: str) -> dict[str, float]:
    """The joint name → position (rad or m) of the locked_joints parameter: YAML text of a
    mapping (``"{panda_finger_joint1: 0.04}"``); empty for none. Those joints are fixed at
    that position (Robot.from_urdf's locked_joints).

    Raises:
        RefusedError: not a mapping of joint names to finite numbers.
    """
    if not text.strip():
        return {}
    document = _yaml_document(text)
    if not isinstance(document, dict) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and np.isfinite(v)
        for v in document.values()
    ):
        raise RefusedError(
            f"locked_joints: not a YAML mapping joint → finite position: {text!r}"
        )
    return {str(joint): float(position) for joint, position in document.items()}


def armature_parameter(text: str) -> dict[str, float]:
    """The joint name → armature of the armature parameter.

    The parameter is YAML text: a mapping (``"{panda_joint1: 0.1, panda_joint2: 0.1}"``), or
    the path of a YAML file of one (robodyn_ros.model.armature); empty for no armature.

    Raises:
        RefusedError: naming the parameter and what is wrong with it.
    """
    if not text.strip():
        return {}
    document = _yaml_document(text)
    if not isinstance(document, dict | str):
        raise RefusedError(
            f"armature: neither a YAML mapping joint → value nor a file path: {text!r}"
        )
    try:
        return armature_mapping(document, source="parameter 'armature'")
    except (ModelError, OSError) as error:
        raise RefusedError(str(error)) from None


def _yaml_document(text: str) -> object:
    """The YAML document of a parameter's text (None when it is not YAML)."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return None
