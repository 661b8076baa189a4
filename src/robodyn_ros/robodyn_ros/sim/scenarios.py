"""Preview scenarios: what drives the robot over the horizon.

- `PoseTarget`: the operational-space controller (control.operational_space_controller) drives
  `frame` to a pose with gains kp, kd and a null-space posture.
- `JointTrajectory`: a joint tracker follows waypoints from the start posture at t = 0,
  interpolated by a clamped cubic spline (zero velocity at both ends) and held after the last
  one: joint impedance with inverse-dynamics feed-forward (control.joint_impedance, the
  default) or computed torque (control.computed_torque).
- `TorqueProfile`: open-loop joint efforts, linear between waypoints, held after the last one
  (on a floating base: the base wrench first, then the joints; zero floats it free).
- `WholeBodyPose`: a floating-base robot held on contacts drives its centre of mass and a
  frame to targets by whole-body control (control.whole_body).
- `OptimalReach`: efforts planned over the horizon by iLQR (sim.ilqr) bring a frame to a pose
  at rest at its end, followed with the plan's feedback gains.

Any scenario may also carry `pushes` (`Push`): external wrenches on frames over time spans,
a shove on the base or a tool's contact force, applied as SimulatedRobot.apply_wrench does;
and a `world` (contact.World): planes the robot's collision shapes touch, with unilateral
contacts and Coulomb friction (contact.time_step).

`scenario_from_mapping` reads one from a YAML/ROS-style mapping; every check raises
ScenarioError naming the scenario and the field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike

from robodyn_ros.contact.world import World, WorldError, world_of
from robodyn_ros.control.operational_space_controller import as_rotation_matrix
from robodyn_ros.control.trajectory import JointTrajectoryReference
from robodyn_ros.control.whole_body import Ground, WholeBodyTargets, ground_of
from robodyn_ros.errors import RobodynError
from robodyn_ros.robot import Robot
from robodyn_ros.robot.contact_dynamics import Contact
from robodyn_ros.sim.ilqr import ReachTask


class ScenarioError(RobodynError, ValueError):
    """A scenario or preview setting that cannot be simulated; the message names the field."""


@dataclass(frozen=True, eq=False)
class Push:
    """A wrench [fx fy fz tx ty tz] (N, N·m) on `frame`, at its origin in world-aligned axes
    (Robot.jacobian's), from `start` (s, ≥ 0) for `duration` (s, > 0)."""

    frame: str
    wrench: np.ndarray
    start: float
    duration: float


def wrenches_at(pushes: Sequence[Push], t: float) -> dict[str, np.ndarray]:
    """Frame → the sum of the pushes on it acting at time t; every pushed frame is there,
    zero where nothing pushes it then (which releases it)."""
    wrenches = {push.frame: np.zeros(6) for push in pushes}
    for push in pushes:
        if push.start <= t < push.start + push.duration:
            wrenches[push.frame] = wrenches[push.frame] + push.wrench
    return wrenches


class Pushable(Protocol):
    """What pushes act on: a SimulatedRobot."""

    def apply_wrench(self, frame: str, wrench: ArrayLike) -> None: ...


def apply_pushes(target: Pushable, pushes: Sequence[Push], t: float) -> None:
    """The wrenches of `pushes` acting at time t applied to `target`, the others released."""
    for frame, wrench in wrenches_at(pushes, t).items():
        target.apply_wrench(frame, wrench)


@dataclass(frozen=True, eq=False)
class FramePoseGoal:
    """A scenario's goal for `frame`: `position` (m, world) and `orientation` (3x3; None: as at
    the start), with the operational-space gains kp (1/s²) and kd (1/s) per task axis [linear;
    angular] that drive it there; `name` names the scenario."""

    name: str
    frame: str
    position: np.ndarray
    orientation: np.ndarray | None
    kp: np.ndarray
    kd: np.ndarray


@dataclass(frozen=True, eq=False)
class PoseTarget(FramePoseGoal):
    """Drive `frame` to `position` (m, world) and `orientation` (3x3; None: as at the start)
    by operational-space control: kp (1/s²) and kd (1/s) per task axis [linear; angular],
    null_stiffness (N·m/rad) and null_damping (N·m·s/rad) per joint about the start posture.
    force_axes (6 bools over [x y z rx ry rz]) are force-controlled instead, the frame
    exerting force_target (N, N·m) with force_damping (1/s) on its velocity there: Khatib's
    unified motion and force control (control.operational_space_controller, compiled in the
    preview's rollout kernels); force_integral_gain (1/s) integrates the error of the force its
    world's contacts exert, as a force/torque sensor at the frame reads them
    (sim.wrench_sensor)."""

    null_stiffness: np.ndarray
    null_damping: np.ndarray
    force_axes: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(6, bool))
    force_target: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(6))
    force_damping: np.ndarray | None = None
    force_integral_gain: float = 0.0
    pushes: tuple[Push, ...] = ()
    world: World = dataclasses.field(default_factory=World)


TRACKERS = ("joint_impedance", "computed_torque")
"""The controllers a JointTrajectory is followed with."""


@dataclass(frozen=True, eq=False)
class JointTrajectory:
    """Follow positions (W, n) at times (W,) s (> 0; from the start posture at 0) with
    `controller` (TRACKERS) and its gains per joint: joint_impedance's stiffness (N·m/rad,
    default 100) and damping (N·m·s/rad, default 5; light wrist joints limit it: D dt / I stays
    below about 2 for an explicit step), or computed_torque's, per unit of inertia, kp (1/s²,
    default 400) and kd (1/s, default 2√kp); `frame` is the frame whose path is reported."""

    name: str
    frame: str
    times: np.ndarray
    positions: np.ndarray
    stiffness: np.ndarray
    damping: np.ndarray
    controller: str = "joint_impedance"
    pushes: tuple[Push, ...] = ()
    world: World = dataclasses.field(default_factory=World)

    def reference(self, t: np.ndarray, q0: np.ndarray) -> np.ndarray:
        """(len(t), 3, n): q*, q̇*, q̈* at times t, starting from q0 at t = 0."""
        times = np.concatenate([[0.0], self.times])
        positions = np.concatenate([q0[None], self.positions])
        return JointTrajectoryReference(times, positions).at(t)


@dataclass(frozen=True, eq=False)
class TorqueProfile:
    """Apply efforts (W, n) at times (W,) s, linear between them; `frame` as above."""

    name: str
    frame: str
    times: np.ndarray
    efforts: np.ndarray
    pushes: tuple[Push, ...] = ()
    world: World = dataclasses.field(default_factory=World)

    def reference(self, t: np.ndarray, _q0: np.ndarray) -> np.ndarray:
        """(len(t), 3, n): the efforts at times t, then two rows of zeros."""
        out = np.zeros((len(t), 3, self.efforts.shape[1]))
        for joint in range(self.efforts.shape[1]):
            out[:, 0, joint] = np.interp(t, self.times, self.efforts[:, joint])
        return out


@dataclass(frozen=True, eq=False)
class WholeBodyPose:
    """Hold a floating-base robot on `contacts` (where they are at the start) and drive its
    centre of mass to `com` (m, world; None: where it starts) and `frame` to `position` (m,
    world) and `orientation` (3x3; None: as at the start) by whole-body control
    (control.whole_body), the start posture beneath: kp (1/s²), kd (1/s) and the weights of
    the centre of mass, the frame and the posture (WholeBodyTargets' defaults); the ground
    the controller keeps its forces on (control.whole_body.Ground: friction, default 0.8,
    min_normal_force, sole_size), its model of the world's planes."""

    name: str
    frame: str
    position: np.ndarray
    orientation: np.ndarray | None
    com: np.ndarray | None
    contacts: tuple[Contact, ...]
    kp: np.ndarray
    kd: np.ndarray
    weights: np.ndarray
    ground: Ground = dataclasses.field(default_factory=Ground)
    pushes: tuple[Push, ...] = ()
    world: World = dataclasses.field(default_factory=World)


@dataclass(frozen=True, eq=False)
class OptimalReach(FramePoseGoal):
    """Bring `frame` to `position` (m, world) and `orientation` (3x3; None: as at the start) at
    the end of the horizon, at rest, by efforts optimised over it (sim.ilqr: iLQR on the
    simulation's model at plan_period s, a whole number of the preview's steps), warm-started
    from the operational-space controller with kp (1/s²) and kd (1/s) per task axis. The
    cost's weights (sim.ilqr.ReachTask's defaults): position_weight (1/m²),
    orientation_weight (1/rad²), velocity_weight (of the final velocity), effort_weight (of
    the efforts, per s), saturation_weight (of efforts past their limits, per s) and
    limit_weight (of the joints within limit_margin, rad or m, of a limit, per s);
    iterations and tolerance (a full step's relative cost decrease) end it. The preview
    steps the robot under the plan's efforts and feedback gains (ReachPlan.command): the
    plan's model is exact at its period, and a preview at finer steps follows it through the
    gains to within that model's error (on the Panda, a 1 ms RK4 preview ends about 1 mm from
    a 10 ms plan's end, a few hundredths of a mm from a 5 ms one's). The plan is made for free
    space; the pushes and the world act on the robot that follows it."""

    plan_period: float = 0.01
    position_weight: float = ReachTask.position_weight
    orientation_weight: float = ReachTask.orientation_weight
    velocity_weight: float = ReachTask.velocity_weight
    effort_weight: float = ReachTask.effort_weight
    saturation_weight: float = ReachTask.saturation_weight
    limit_weight: float = ReachTask.limit_weight
    limit_margin: float = ReachTask.limit_margin
    iterations: int = ReachTask.iterations
    tolerance: float = ReachTask.tolerance
    pushes: tuple[Push, ...] = ()
    world: World = dataclasses.field(default_factory=World)


REACH_WEIGHTS = ("position_weight", "orientation_weight", "velocity_weight", "effort_weight",
                 "saturation_weight", "limit_weight", "limit_margin")
"""An OptimalReach's cost fields, each a number ≥ 0."""


FixedScenario = PoseTarget | JointTrajectory | TorqueProfile  # a fixed base's, under a controller
Scenario = FixedScenario | OptimalReach | WholeBodyPose
KINDS = ("pose_target", "joint_trajectory", "torque_profile", "whole_body_pose", "optimal_reach")
FLOATING_KINDS = ("torque_profile", "whole_body_pose")  # what a floating-base robot takes


def scenario_from_mapping(robot: Robot, spec: Mapping[str, Any], index: int = 0) -> Scenario:
    """A scenario from {name, <kind>: {...}, pushes: [...], world: {...}} with exactly one
    kind of KINDS (see the classes for the fields; `frame` defaults to the robot's last
    frame); a floating-base robot takes the FLOATING_KINDS, a fixed one the others. pushes
    (optional): a list of {frame, wrench: [fx fy fz tx ty tz], start (default 0), duration}
    (Push). world (optional): {planes: [{normal, point, friction}, ...]} (contact.world_of)."""
    if not isinstance(spec, Mapping):
        raise ScenarioError(f"scenario {index}: must be a mapping; got {spec!r}")
    name = str(spec.get("name", f"scenario{index}"))
    kinds = [kind for kind in KINDS if kind in spec]
    unknown = sorted(set(spec) - {"name", "pushes", "world", *KINDS})
    if len(kinds) != 1 or unknown:
        raise ScenarioError(
            f"scenario '{name}': needs exactly one of {', '.join(KINDS)}"
            + (f"; unknown fields: {', '.join(unknown)}" if unknown else "")
        )
    floating = robot.nq != robot.nv  # a free flyer or planar joint: no joint-space controller
    if floating != (kinds[0] == "whole_body_pose") and kinds[0] != "torque_profile":
        which = ", ".join(FLOATING_KINDS) if floating else "the others"
        raise ScenarioError(
            f"scenario '{name}': {kinds[0]} is not for a {'floating' if floating else 'fixed'}"
            f"-base robot; it takes {which}")
    fields = _Fields(robot, name, kinds[0], spec[kinds[0]])
    scenario = _READERS[kinds[0]](fields)
    if "pushes" in spec:
        scenario = replace(scenario, pushes=_pushes(robot, name, spec["pushes"]))
    if "world" in spec:
        try:
            scenario = replace(scenario, world=world_of(spec["world"], f"scenario '{name}': world"))
        except WorldError as error:
            raise ScenarioError(str(error)) from None
    return scenario


def _pushes(robot: Robot, name: str, values: object) -> tuple[Push, ...]:
    """The scenario's pushes, each checked; ScenarioError names pushes[k] and its field."""
    if not isinstance(values, list):
        raise ScenarioError(f"scenario '{name}': pushes must be a list of {{frame, wrench, "
                            f"start, duration}}; got {values!r}")
    pushes = []
    for k, value in enumerate(values):
        fields = _Fields(robot, name, f"pushes[{k}]", value)
        frame = fields.values.get("frame")
        if frame not in robot.frame_names:
            raise fields.error("frame", f"'{frame}' is not a frame of the robot")
        start = float(fields.array("start", (1,), 0.0)[0])
        duration = float(fields.array("duration", (1,))[0])
        if start < 0.0 or duration <= 0.0:
            raise fields.error("start", f"must be ≥ 0 and duration > 0; got {start} and "
                               f"{duration}")
        pushes.append(Push(frame, fields.array("wrench", (6,)), start, duration))
    return tuple(pushes)


class _Fields:
    """The fields of one scenario, each read and checked with its name in the error."""

    def __init__(self, robot: Robot, name: str, kind: str, values: object) -> None:
        if not isinstance(values, Mapping):
            raise ScenarioError(f"scenario '{name}': {kind} must be a mapping; got {values!r}")
        self.robot, self.name, self.kind, self.values = robot, name, kind, values

    def error(self, field: str, what: str) -> ScenarioError:
        return ScenarioError(f"scenario '{self.name}': {self.kind}.{field} {what}")

    def frame(self) -> str:
        frame: str = self.values.get("frame", self.robot.frame_names[-1])
        if frame not in self.robot.frame_names:
            raise self.error("frame", f"'{frame}' is not a frame of the robot "
                             f"({', '.join(self.robot.frame_names)})")
        return frame

    def array(
        self, field: str, shape: tuple[int, ...], default: ArrayLike | None = None
    ) -> np.ndarray:
        """A finite float array of `shape` (a scalar broadcasts to it; -1: any length ≥ 1)."""
        value = self.values.get(field, default)
        if value is None:
            raise self.error(field, "is required")
        try:
            array = np.array(value, dtype=float)
        except (TypeError, ValueError):
            raise self.error(field, f"must be numbers; got {value!r}") from None
        if array.ndim == 0 and -1 not in shape:
            array = np.full(shape, float(array))
        pairs = zip(shape, array.shape, strict=False)
        if array.ndim != len(shape) or any(s not in (-1, a) for s, a in pairs):
            raise self.error(field, f"must have shape {shape}; got {array.shape}")
        if array.size == 0 or not np.all(np.isfinite(array)):
            raise self.error(field, f"must be finite numbers; got {array.tolist()}")
        return array

    def orientation(self) -> np.ndarray | None:
        """A quaternion (x, y, z, w) or a 3x3 rotation as a 3x3 matrix; None if absent."""
        value = self.values.get("orientation")
        if value is None:
            return None
        try:
            return as_rotation_matrix(value, "")
        except ValueError as error:
            raise self.error("orientation", str(error).lstrip(": ")) from None

    def gains(self, field: str, size: int, default: ArrayLike) -> np.ndarray:
        gains = self.array(field, (size,), default)
        if np.any(gains < 0.0):
            raise self.error(field, f"must be ≥ 0; got {gains.tolist()}")
        return gains

    def contacts(self) -> tuple[Contact, ...]:
        """contacts: a list of {frame, kind ("3d" or "6d", default "6d")}."""
        values = self.values.get("contacts")
        if not isinstance(values, list) or not values:
            raise self.error("contacts", f"must be a list of {{frame, kind}}; got {values!r}")
        contacts = []
        for k, value in enumerate(values):
            if not isinstance(value, Mapping) or value.get("frame") not in self.robot.frame_names:
                raise self.error(f"contacts[{k}]", f"must be {{frame: <a frame of the robot>, "
                                 f"kind: 3d | 6d}}; got {value!r}")
            try:
                contacts.append(Contact(value["frame"], value.get("kind", "6d")))
            except ValueError as error:
                raise self.error(f"contacts[{k}]", str(error)) from None
        return tuple(contacts)

    def waypoints(self, field: str) -> tuple[np.ndarray, np.ndarray]:
        """times (W,) strictly increasing and values (W, n)."""
        times = self.array("times", (-1,))
        values = self.array(field, (times.shape[0], self.robot.nv))
        if np.any(np.diff(times) <= 0.0) or (self.kind == "joint_trajectory" and times[0] <= 0):
            raise self.error("times", f"must increase strictly (a trajectory's from > 0); got "
                             f"{times.tolist()}")
        return times, values


def _pose_target(fields: _Fields) -> PoseTarget:
    n = fields.robot.nv
    kp = fields.gains("kp", 6, 100.0)
    kd = fields.gains("kd", 6, 2.0 * np.sqrt(kp))
    target = PoseTarget(
        fields.name, fields.frame(), fields.array("position", (3,)), fields.orientation(), kp,
        kd, fields.gains("null_stiffness", n, 10.0), fields.gains("null_damping", n, 2.0))
    if not {"force_axes", "force_target", "force_damping", "force_integral_gain"} \
            & set(fields.values):
        return target
    axes = fields.array("force_axes", (6,), np.zeros(6))
    if not np.all((axes == 0.0) | (axes == 1.0)):
        raise fields.error("force_axes", f"must be six flags 0 or 1 over [x y z rx ry rz]; got "
                           f"{axes.tolist()}")
    wrench = fields.array("force_target", (6,), np.zeros(6))
    if np.any((wrench != 0.0) & (axes == 0.0)):
        raise fields.error("force_target", f"must be zero along the directions force_axes "
                           f"leaves to motion ({axes.astype(int).tolist()}); got "
                           f"{wrench.tolist()}")
    return replace(target, force_axes=axes == 1.0, force_target=wrench,
                   force_damping=fields.gains("force_damping", 6, kd),
                   force_integral_gain=float(fields.gains("force_integral_gain", 1, 0.0)[0]))


def _joint_trajectory(fields: _Fields) -> JointTrajectory:
    n = fields.robot.nv
    times, positions = fields.waypoints("positions")
    controller = fields.values.get("controller", "joint_impedance")
    if controller not in TRACKERS:
        raise fields.error("controller", f"must be one of {', '.join(TRACKERS)}; got "
                           f"{controller!r}")
    if controller == "computed_torque":
        kp = fields.gains("kp", n, 400.0)
        gains = kp, fields.gains("kd", n, 2.0 * np.sqrt(kp))
    else:
        gains = fields.gains("stiffness", n, 100.0), fields.gains("damping", n, 5.0)
    return JointTrajectory(fields.name, fields.frame(), times, positions, *gains, controller)


def _torque_profile(fields: _Fields) -> TorqueProfile:
    times, efforts = fields.waypoints("efforts")
    return TorqueProfile(fields.name, fields.frame(), times, efforts)


def _optimal_reach(fields: _Fields) -> OptimalReach:
    kp = fields.gains("kp", 6, 100.0)
    costs = {name: float(fields.gains(name, 1, getattr(ReachTask, name))[0])
             for name in REACH_WEIGHTS}
    period = float(fields.array("plan_period", (1,), OptimalReach.plan_period)[0])
    if period <= 0.0:
        raise fields.error("plan_period", f"must be > 0; got {period}")
    iterations = fields.array("iterations", (1,), ReachTask.iterations)[0]
    if iterations < 1 or iterations != round(iterations):
        raise fields.error("iterations", f"must be a whole number ≥ 1; got {iterations}")
    tolerance = float(fields.array("tolerance", (1,), ReachTask.tolerance)[0])
    if tolerance <= 0.0:
        raise fields.error("tolerance", f"must be > 0; got {tolerance}")
    return OptimalReach(
        fields.name, fields.frame(), fields.array("position", (3,)), fields.orientation(), kp,
        fields.gains("kd", 6, 2.0 * np.sqrt(kp)), period,
        position_weight=costs["position_weight"], orientation_weight=costs["orientation_weight"],
        velocity_weight=costs["velocity_weight"], effort_weight=costs["effort_weight"],
        saturation_weight=costs["saturation_weight"], limit_weight=costs["limit_weight"],
        limit_margin=costs["limit_margin"], iterations=int(iterations), tolerance=tolerance)


def _whole_body_pose(fields: _Fields) -> WholeBodyPose:
    com = fields.array("com", (3,)) if "com" in fields.values else None
    contacts = fields.contacts()
    try:
        ground = ground_of(fields.values, contacts)
    except ValueError as error:
        raise ScenarioError(f"scenario '{fields.name}': whole_body_pose: {error}") from None
    return WholeBodyPose(
        fields.name, fields.frame(), fields.array("position", (3,)), fields.orientation(), com,
        contacts, fields.gains("kp", 3, WholeBodyTargets.kp),
        fields.gains("kd", 3, WholeBodyTargets.kd),
        fields.gains("weights", 3, WholeBodyTargets.weights), ground,
    )


_READERS: dict[str, Callable[[_Fields], Scenario]] = {
    "pose_target": _pose_target,
    "joint_trajectory": _joint_trajectory,
    "torque_profile": _torque_profile,
    "whole_body_pose": _whole_body_pose,
    "optimal_reach": _optimal_reach,
}

__all__ = [
    "FLOATING_KINDS",
    "KINDS",
    "TRACKERS",
    "FixedScenario",
    "FramePoseGoal",
    "JointTrajectory",
    "OptimalReach",
    "PoseTarget",
    "Push",
    "Pushable",
    "Scenario",
    "ScenarioError",
    "TorqueProfile",
    "WholeBodyPose",
    "apply_pushes",
    "scenario_from_mapping",
    "wrenches_at",
]
