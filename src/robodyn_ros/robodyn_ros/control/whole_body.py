"""Whole-body control of a floating-base robot standing on unilateral frictional contacts: its
centre of mass and one frame's pose to targets, a posture beneath, the contacts held; τ on the
joints only.

Each call solves one quadratic programme (DAQP, a dual active-set solver) at the acceleration level,
inverse dynamics with contacts as whole-body controllers do (Sentis & Khatib 2005 give the
task-space form). Its variables are x = (v̇, λ̃): the acceleration (nv) and the contact forces
per kilogram of the robot, λ̃ = λ / m (λ stacked as Contact's, [force] or [force; torque] at
each frame's origin, world axes), so that every row is in m/s². It

- minimises Σ_i w_i ‖A_i v̇ − b_i‖² + w_λ ‖λ̃‖² over three tasks, each a spring-damper: the
  centre of mass c̈* = Kp (c* − c) − Kd ċ (A = J_com, J̇_com v from the base rows of the
  velocity products), the frame ẍ* = Kp e − Kd ẋ ([position; orientation] as the
  operational-space controller's error, A = J), the joints q̈* = Kp (q* − q) − Kd q̇; w_λ
  (WholeBodyTargets.force_weight) shares the load between contacts the motion leaves free;
- subject to the base rows of the dynamics, where no motor acts, M_b v̇ + b_b = J_c,bᵀ λ
  (b = C v + g), and the contacts held, J_c v̇ + γ = −kd_c J_c v (contact_dynamics: γ as the
  constrained dynamics takes it, kd_c a little damping of the contacts' own drift);
- and to the ground (`Ground`): each contact's force in the pyramid of FACETS sides inscribed
  in its Coulomb cone, |f·t_k| ≤ (μ/√2) f·n along two tangents (the pyramid's edges lie on the
  cone, so no force it allows leaves the cone), n the ground's normal; its normal force
  f·n ≥ f_min; a 6-D contact with a sole rectangle (length 2X along the frame's x, width 2Y
  along its y, centred on the frame's origin) also has its centre of pressure inside it,
  |τ_x| ≤ Y f_n and |τ_y| ≤ X f_n, and its yaw torque between the bounds that forces at the
  rectangle's corners inside their pyramids can give. Torques and tangents are taken in the
  surface frame: n, the contact frame's x projected on the ground (t1), and n × t1 (t2).

The joints' efforts are then τ = M v̇ + b − J_cᵀ λ on the joint rows, zero on the base's. With
them, the rigid-contact dynamics (Robot.constrained_forward_dynamics, damping kd_c) has this
v̇ and λ: its KKT system has one solution, and (v̇, λ) solves it. A programme without a
solution (contacts that cannot be held with forces inside their cones) or a solver that
does not converge raises WholeBodyError naming the contacts, never an answer; so do contacts
whose rows are dependent (the same frame held twice). The programme is built, its equalities
eliminated (control.null_space), solved and turned into τ by one kernel call
(control.whole_body_programme), which the preview's contact rollout runs at its control steps
too.

`WholeBody` is the controller plugin ("whole_body") around it, for controller_node: it holds
the centre of mass, the frame's pose and the posture of the first state it gets, and takes a
new pose of the frame as its target.
"""

# One QP over (v̇, λ), the base's rows its equalities: Herzog et al. 2016 (Auton. Robots 40:473);
# a sole's wrench cone: Caron, Pham & Nakamura 2015 (ICRA), Proposition 2.

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from robodyn_ros.control.daqp_call import NOT_FINITE
from robodyn_ros.control.operational_space_controller import as_rotation_matrix
from robodyn_ros.control.plugin import Controller, ControllerState
from robodyn_ros.control.whole_body_programme import (
    INFEASIBLE,
    OVERDETERMINED,
    PARALLEL,
    SOLVED,
    Programme,
    ProgrammeModel,
    ProgrammeTargets,
    empty_programme,
    whole_body_command,
)
from robodyn_ros.errors import RobodynError
from robodyn_ros.model.model import FREE_FLYER_DOF
from robodyn_ros.robot import Robot
from robodyn_ros.robot.contact_dynamics import (
    CONTACT_ROWS,
    Contact,
    ContactDynamics,
    contact_jacobian,
    split_forces,
)

FACETS = 4  # sides of each friction pyramid, two per tangent: |f·t1|, |f·t2| ≤ (μ/√2) f·n


class WholeBodyError(RobodynError, ValueError):
    """The whole-body programme has no answer: the message names the contacts and why."""


@dataclass(frozen=True)
class SoleRectangle:
    """The rectangle a flat foot stands on, centred on its contact frame's origin.

    Attributes:
        length: m, its side along the frame's x axis.
        width: m, its side along the frame's y axis.
    """

    length: float
    width: float

    def __post_init__(self) -> None:
        for name in ("length", "width"):
            value = getattr(self, name)
            if not (_real(value) and value > 0.0):
                raise ValueError(f"SoleRectangle: {name} must be a finite number of metres > 0; "
                                 f"got {value!r}")


@dataclass(frozen=True)
class Ground:
    """What the ground lets the contacts push with.

    Attributes:
        friction: μ, the Coulomb friction coefficient, > 0.
        normal: (3,) the ground's normal in the world, out of the ground (made unit).
        min_normal_force: N, ≥ 0: each contact pushes at least this along the normal.
        soles: a 6-D contact's frame → the SoleRectangle its centre of pressure stays in; a 6-D
            contact without one (a hand gripping a handle, a bolted foot) has its torque free.
    """

    friction: float = 0.8
    normal: tuple[float, float, float] = (0.0, 0.0, 1.0)
    min_normal_force: float = 0.0
    soles: Mapping[str, SoleRectangle] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if not (_real(self.friction) and self.friction > 0.0):
            raise ValueError(f"Ground: friction must be a finite number > 0; got "
                             f"{self.friction!r}")
        normal = np.asarray(self.normal, dtype=float)
        if normal.shape != (3,) or not np.isfinite(normal).all() or not normal.any():
            raise ValueError(f"Ground: normal must be 3 finite numbers, not all zero; got "
                             f"{self.normal!r}")
        object.__setattr__(self, "normal", tuple((normal / np.linalg.norm(normal)).tolist()))
        if not (_real(self.min_normal_force) and self.min_normal_force >= 0.0):
            raise ValueError(f"Ground: min_normal_force must be a finite number of newtons ≥ 0; "
                             f"got {self.min_normal_force!r}")
        for frame, sole in self.soles.items():
            if not isinstance(sole, SoleRectangle):
                raise ValueError(f"Ground: soles['{frame}'] must be a SoleRectangle; got "
                                 f"{type(sole).__name__}")
        object.__setattr__(self, "soles", dict(self.soles))


@dataclass(frozen=True)
class WholeBodyTargets:
    """Targets and gains of a WholeBodyController.

    Attributes:
        com: the centre of mass's target in the world, m.
        frame: the frame whose pose is a task (a hand).
        position, orientation: its target, m, and a 3x3 rotation, world.
        posture: the joints' target (nv − 6,).
        kp, kd: the tasks' stiffness (1/s²) and damping (1/s), centre of mass, frame, posture.
        weights: the tasks' weights, centre of mass, frame, posture.
        contact_damping: kd_c, 1/s, on the contacts' velocity.
        force_weight: w_λ, > 0, the weight of ‖λ/m‖² (the forces per kg, m/s²).
    """

    com: np.ndarray
    frame: str
    position: np.ndarray
    orientation: np.ndarray
    posture: np.ndarray
    kp: tuple[float, float, float] = (100.0, 100.0, 25.0)
    kd: tuple[float, float, float] = (20.0, 20.0, 10.0)
    weights: tuple[float, float, float] = (10.0, 1.0, 1e-3)
    contact_damping: float = 10.0
    force_weight: float = 1e-3


class ConeRows(NamedTuple):
    """The ground's inequalities on contact forces (module doc): rows · λ ≥ lower."""

    rows: np.ndarray  # (k, columns)
    lower: np.ndarray  # (k,)


class WholeBodyController:
    """τ (nv, zero on the base) for a floating-base robot on `contacts` (module doc)."""

    def __init__(self, robot: Robot, contacts: Sequence[Contact],
                 targets: WholeBodyTargets, ground: Ground | None = None) -> None:
        """Raises:
            ValueError: a robot without a floating base (model.floating_base), no contact, an
                unknown frame, a posture of the wrong size, a force_weight not > 0, or a sole
                for a frame that is not a 6-D contact."""
        if not robot.model.floating_base:
            raise ValueError(f"WholeBodyController: robot '{robot.model.name}' has no floating "
                             "base (load it with floating_base=True)")
        self.robot, self.contacts = robot, tuple(contacts)
        self.ground = Ground() if ground is None else ground
        contact_jacobian(robot, robot.neutral(), self.contacts)  # checks the frames
        robot.jacobian(robot.neutral(), targets.frame)
        joints = robot.nv - FREE_FLYER_DOF
        if np.shape(targets.posture) != (joints,):
            raise ValueError(f"WholeBodyTargets: posture must have the {joints} joints; got "
                             f"shape {np.shape(targets.posture)}")
        if not (_real(targets.force_weight) and targets.force_weight > 0.0):
            raise ValueError(f"WholeBodyTargets: force_weight must be a finite number > 0; got "
                             f"{targets.force_weight!r}")
        flat = {contact.frame for contact in self.contacts if contact.kind == "6d"}
        for frame in self.ground.soles:
            if frame not in flat:
                raise ValueError(f"Ground: soles['{frame}']: '{frame}' is not a 6d contact of "
                                 f"this controller (6d contacts: {sorted(flat)})")
        try:
            self._tree, self._gravity = robot.kernel_arrays
        except ValueError as error:  # a robot with mimic joints
            raise ValueError(f"WholeBodyController: {error}") from error
        self._forces = sum(CONTACT_ROWS[contact.kind] for contact in self.contacts)
        self._cones = [surface_cone_rows(contact, self.ground) for contact in self.contacts]
        self.targets = targets
        self._programme = empty_programme(self._tree, robot.nv, self._forces,
                                          sum(len(cone.lower) for cone in self._cones))

    @property
    def targets(self) -> WholeBodyTargets:
        """The tasks' targets and gains; a new value takes effect at the next call."""
        return self._targets

    @targets.setter
    def targets(self, targets: WholeBodyTargets) -> None:
        self._targets = targets
        self._model = programme_model(self.robot, self.contacts, self._cones, self.ground,
                                      targets)
        self._programme_targets = ProgrammeTargets(
            np.array(targets.com, dtype=float), np.array(targets.position, dtype=float),
            np.ascontiguousarray(targets.orientation, dtype=float),
            np.array(targets.posture, dtype=float))

    def torque(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """τ at the state (q, v): zero on the base, the joints' efforts after it."""
        return self.solve(q, v).tau

    def solve(self, q: np.ndarray, v: np.ndarray) -> ContactDynamics:
        """The programme's answer at the state (q, v) (module doc).

        Returns:
            ContactDynamics: vdot, tau (zero on the base), and per contact its force λ_k.

        Raises:
            ValueError: q or v not of the robot's sizes or not finite.
            WholeBodyError: no answer: the programme is infeasible or the solver did not
                converge.
        """
        robot, nv = self.robot, self.robot.nv
        q, v = _state(robot, q, v)
        p, tau = self._programme, np.empty(nv)
        flag = whole_body_command(self._tree, self._gravity, self._model,
                                  self._programme_targets, q, v, p, tau)
        if flag != SOLVED:
            raise whole_body_failure(self.contacts, self.ground, flag)
        forces = robot.mass * p.solution[nv:]
        return ContactDynamics(p.solution[:nv].copy(), tau, split_forces(forces, self.contacts))

    @property
    def programme(self) -> Programme:
        """The programme of the last call to solve (whole_body_programme.Programme), with M, b
        and J_c at its state; the controller's own arrays, overwritten at the next call."""
        return self._programme

    @property
    def model(self) -> tuple[ProgrammeModel, ProgrammeTargets]:
        """The programme's fixed parts and targets as its kernel takes them."""
        return self._model, self._programme_targets


def whole_body_failure(contacts: Sequence[Contact], ground: Ground, flag: int
                       ) -> WholeBodyError:
    """The WholeBodyError of a programme without an answer: `flag` is DAQP's exit flag, or
    OVERDETERMINED (the contacts' rows dependent) or NOT_FINITE from its elimination."""
    frames = ", ".join(f"'{contact.frame}' ({contact.kind})" for contact in contacts)
    if flag in (INFEASIBLE, OVERDETERMINED):
        why = ("the programme is infeasible: no acceleration holds the contacts with forces "
               f"inside the ground's cones (friction {ground.friction:g}, normal force ≥ "
               f"{ground.min_normal_force:g} N, the soles' rectangles) that carry the base"
               + (", the contacts dependent" if flag == OVERDETERMINED else ""))
    elif flag == NOT_FINITE:
        why = ("the programme or the QP solver's answer is not finite (a state or target far "
               "beyond what the robot's dynamics can be computed at)")
    else:
        why = (f"the QP solver (DAQP) ended with exit flag {flag} instead of a solution "
               "(-2 cycling, -3 unbounded, -4 iteration limit, -5 not convex)")
    return WholeBodyError(f"WholeBodyController on contacts {frames}: {why}")


def programme_model(robot: Robot, contacts: Sequence[Contact], cones: Sequence[ConeRows],
                    ground: Ground, targets: WholeBodyTargets) -> ProgrammeModel:
    """The compiled programme's fixed parts (whole_body_programme.ProgrammeModel): the contacts'
    frames and cones, the ground's normal, the task frame and the targets' gains."""
    starts = np.cumsum([0] + [len(cone.lower) for cone in cones])
    return ProgrammeModel(
        contact_frames=np.array([robot.frame_row(contact.frame) for contact in contacts]),
        contact_widths=np.array([CONTACT_ROWS[contact.kind] for contact in contacts]),
        cone_start=starts.astype(np.int64),
        surface_cones=np.ascontiguousarray(np.vstack([cone.rows for cone in cones])),
        cone_lower=np.concatenate([cone.lower for cone in cones]),
        normal=np.array(ground.normal, dtype=float), frame=robot.frame_row(targets.frame),
        gains=np.array([targets.kp, targets.kd, targets.weights], dtype=float),
        contact_damping=float(targets.contact_damping),
        force_weight=float(targets.force_weight), mass=float(robot.mass))


def surface_frame(normal: np.ndarray, rotation: np.ndarray) -> np.ndarray:
    """(3, 3) rows [t1; t2; n] in the world: n the ground's unit normal, t1 the contact frame's
    x axis (the first column of `rotation`) projected on the ground, its y axis where x is
    along n, and t2 = n × t1."""
    for axis in rotation.T[:2]:
        tangent = axis - (axis @ normal) * normal
        length = float(np.sqrt(tangent @ tangent))
        if length > PARALLEL:
            break
    t1 = tangent / length
    t2 = np.array([normal[1] * t1[2] - normal[2] * t1[1], normal[2] * t1[0] - normal[0] * t1[2],
                   normal[0] * t1[1] - normal[1] * t1[0]])  # n × t1
    return np.stack([t1, t2, normal])


def cone_rows(contact: Contact, rotation: np.ndarray, ground: Ground) -> ConeRows:
    """The ground's inequalities on a contact's force λ_k (world axes, N and N·m): the friction
    pyramid, the least normal force and, for a 6-D contact with a sole, its centre of pressure
    and yaw torque (module doc), rows · λ_k ≥ lower.

    Args:
        contact: the contact.
        rotation: (3, 3) its frame's orientation in the world.
        ground: the ground.

    Returns:
        ConeRows: FACETS + 1 rows, 12 more for a sole, of CONTACT_ROWS[contact.kind]."""
    return in_world(surface_cone_rows(contact, ground),
                    surface_frame(np.array(ground.normal), rotation), contact)


def in_world(cone: ConeRows, frame: np.ndarray, contact: Contact) -> ConeRows:
    """Surface-frame cone rows on [f_t1, f_t2, f_n, τ_t1, τ_t2, τ_n] as rows on the contact's
    force in world axes, `frame` the surface frame's rows [t1; t2; n]."""
    rows = cone.rows
    world = np.hstack([rows[:, :3] @ frame, rows[:, 3:] @ frame])
    return ConeRows(world[:, :CONTACT_ROWS[contact.kind]], cone.lower)


def surface_cone_rows(contact: Contact, ground: Ground) -> ConeRows:
    """cone_rows' inequalities in the surface frame: rows on [f_t1, f_t2, f_n, τ_t1, τ_t2,
    τ_n] (module doc), whatever the contact frame's orientation."""
    mu = ground.friction * np.cos(np.pi / FACETS)  # the inscribed pyramid's μ
    # local [f_t1, f_t2, f_n, τ_t1, τ_t2, τ_n] · row ≥ 0
    local = [[-1, 0, mu, 0, 0, 0], [1, 0, mu, 0, 0, 0], [0, -1, mu, 0, 0, 0], [0, 1, mu, 0, 0, 0],
             [0, 0, 1, 0, 0, 0]]
    sole = ground.soles.get(contact.frame) if contact.kind == "6d" else None
    if sole is not None:
        X, Y = sole.length / 2.0, sole.width / 2.0
        local += [[0, 0, Y, -1, 0, 0], [0, 0, Y, 1, 0, 0], [0, 0, X, 0, -1, 0], [0, 0, X, 0, 1, 0]]
        for s1 in (-1.0, 1.0):
            for s2 in (-1.0, 1.0):  # τ_n ≥ τ_min and τ_n ≤ τ_max, each |·| as two signs
                local.append([-s1 * Y, -s2 * X, mu * (X + Y), s1 * mu, s2 * mu, 1.0])
                local.append([-s1 * Y, -s2 * X, mu * (X + Y), -s1 * mu, -s2 * mu, -1.0])
    lower = np.zeros(len(local))
    lower[FACETS] = ground.min_normal_force
    return ConeRows(np.array(local, dtype=float), lower)


def _real(value: object) -> bool:
    """Whether the value is one finite real number (not a bool)."""
    return (isinstance(value, numbers.Real) and not isinstance(value, bool)
            and bool(np.isfinite(float(value))))


def _state(robot: Robot, q: ArrayLike, v: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """q and v as float arrays of the robot's sizes, or a ValueError naming the bad one."""
    arrays = []
    for name, values, size in (("q", q, robot.nq), ("v", v, robot.nv)):
        array = np.asarray(values, dtype=float)
        if array.shape != (size,) or not np.isfinite(array).all():
            raise ValueError(f"WholeBodyController: {name} must be {size} finite numbers for "
                             f"robot '{robot.model.name}'; got shape {array.shape}")
        arrays.append(array)
    return arrays[0], arrays[1]


DEFAULTS = WholeBodyTargets(np.zeros(3), "", np.zeros(3), np.eye(3), np.zeros(0))


class WholeBody(Controller):
    """The WholeBodyController as a controller plugin (module doc): its targets are where the
    robot is at the first state it gets; set_target(position, orientation) moves the frame's.

    Parameters:

    - ``contacts``: the frames held where they are, each 'frame' (its pose) or 'frame:3d' (its
      origin).
    - ``frame``: the frame whose pose is a task (default: the robot's last frame).
    - ``kp``, ``kd``: the stiffness (1/s²) and the damping (1/s) of the centre of mass, the
      frame and the posture (3 numbers each).
    - ``weights``: the weights of the centre of mass, the frame and the posture (3 numbers).
    - ``friction``: the ground's Coulomb friction coefficient μ, > 0 (default 0.8).
    - ``min_normal_force``: the least force each contact pushes the ground with, N, ≥ 0
      (default 0).
    - ``sole_size``: the length (along x) and width (along y) of the sole of every 6-D
      contact, m, centred on its frame (2 numbers; default none: their torques are free).
    """

    name: ClassVar[str] = "whole_body"
    TAKES_FLOATING_BASE: ClassVar[bool] = True
    PARAMETERS: ClassVar[tuple[str, ...]] = (
        "contacts", "frame", "kp", "kd", "weights", "friction", "min_normal_force", "sole_size",
    )

    def _configure(self, robot: Robot, parameters: dict[str, object]) -> None:
        if not robot.model.floating_base:
            raise ValueError(f"whole_body: robot '{robot.model.name}' has no floating base "
                             "(parameter floating_base)")
        contacts = []
        for value in _strings(parameters.get("contacts", []), "contacts"):
            frame, _, kind = value.partition(":")
            if (kind or "6d") not in CONTACT_ROWS or frame not in robot.frame_names:
                raise ValueError(f"parameter 'contacts': '{value}' is not 'frame' or "
                                 "'frame:3d' of a frame of the robot")
            contacts.append(Contact(frame, kind or "6d"))  # type: ignore[arg-type]
        if not contacts:
            raise ValueError("parameter 'contacts': name the frames the robot stands on")
        frame = str(parameters.get("frame", robot.frame_names[-1]))
        if frame not in robot.frame_names:
            raise ValueError(f"parameter 'frame': robot '{robot.model.name}' has no frame "
                             f"'{frame}'")
        self.contacts, self.frame = tuple(contacts), frame
        self.gains = {name: _three(parameters, name, getattr(DEFAULTS, name))
                      for name in ("kp", "kd", "weights")}
        self.ground = ground_of(parameters, self.contacts)
        self._controller: WholeBodyController | None = None
        self._pose_target: tuple[np.ndarray | None, np.ndarray | None] = (None, None)

    def set_target(self, position: ArrayLike | None = None,
                   orientation: ArrayLike | None = None) -> None:
        """The frame's target position (3,), m, and/or orientation (quaternion x y z w or 3x3
        rotation), in the world; None keeps that part."""
        p = None if position is None else np.asarray(position, dtype=float)
        if p is not None and (p.shape != (3,) or not np.isfinite(p).all()):
            raise ValueError(f"position must be 3 finite numbers; got {position!r}")
        R = None if orientation is None else as_rotation_matrix(orientation, "orientation")
        self._pose_target = (p, R)
        if self._controller is not None:
            self._controller.targets = self._targets(self._controller.targets)

    def update(self, state: ControllerState) -> np.ndarray:
        self._check_state(state)
        if self._controller is None:  # hold where the robot is, the frame's pose as asked
            robot, q = self.robot, state.q
            pose = robot.frame_pose(q, self.frame)
            start = WholeBodyTargets(
                com=robot.centre_of_mass(q), frame=self.frame, position=pose[:3, 3],
                orientation=pose[:3, :3], posture=q[FREE_FLYER_DOF + 1:].copy(),
                kp=self.gains["kp"], kd=self.gains["kd"], weights=self.gains["weights"])
            self._controller = WholeBodyController(robot, self.contacts, self._targets(start),
                                                   self.ground)
        return self._controller.torque(state.q, state.qd)

    def _targets(self, targets: WholeBodyTargets) -> WholeBodyTargets:
        """`targets` with the frame's pose target set_target gave."""
        position, orientation = self._pose_target
        return dataclasses.replace(
            targets, position=targets.position if position is None else position,
            orientation=targets.orientation if orientation is None else orientation)


def ground_of(parameters: Mapping[str, object], contacts: tuple[Contact, ...]) -> Ground:
    """The Ground of the parameters friction, min_normal_force and sole_size.

    Raises:
        ValueError: a value out of its range, or a sole_size without a 6d contact; naming
            the parameter.
    """
    friction = _numbers(parameters, "friction", Ground.friction, 1)[0]
    if friction <= 0.0:
        raise ValueError(f"parameter 'friction' must be a finite number > 0; got {friction}")
    least = _numbers(parameters, "min_normal_force", Ground.min_normal_force, 1)[0]
    if least < 0.0:
        raise ValueError(f"parameter 'min_normal_force' must be a finite number of newtons "
                         f"≥ 0; got {least}")
    soles: dict[str, SoleRectangle] = {}
    if "sole_size" in parameters:
        length, width = _numbers(parameters, "sole_size", (), 2)
        if not (length > 0.0 and width > 0.0):
            raise ValueError(f"parameter 'sole_size' must be a length and a width > 0, m; got "
                             f"[{length}, {width}]")
        soles = {contact.frame: SoleRectangle(length, width)
                 for contact in contacts if contact.kind == "6d"}
        if not soles:
            raise ValueError("parameter 'sole_size': no contact is 6d (a sole is for a flat "
                             "foot held whole, 'frame' in 'contacts')")
    return Ground(friction=friction, min_normal_force=least, soles=soles)


def _strings(value: object, name: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence) \
            or not all(isinstance(item, str) for item in value):
        raise ValueError(f"parameter '{name}' must be a list of strings; got {value!r}")
    return list(value)


def _numbers(parameters: Mapping[str, object], name: str, default: object, count: int
             ) -> list[float]:
    """The parameter's `count` finite numbers (one may be given bare), or a ValueError naming
    it."""
    try:
        values = np.atleast_1d(np.asarray(parameters.get(name, default), dtype=float))
    except (TypeError, ValueError):
        values = np.empty(0)
    if values.shape != (count,) or not np.isfinite(values).all():
        numbers = "1 finite number" if count == 1 else f"{count} finite numbers"
        raise ValueError(f"parameter '{name}' must be {numbers}; got "
                         f"{parameters.get(name, default)!r}")
    return [float(value) for value in values]


def _three(parameters: dict[str, object], name: str, default: tuple[float, float, float]
           ) -> tuple[float, float, float]:
    values = _numbers(parameters, name, default, 3)
    if min(values) < 0.0:
        raise ValueError(f"parameter '{name}' must be 3 finite numbers ≥ 0; got {values}")
    return (values[0], values[1], values[2])
