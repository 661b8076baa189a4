"""Rigid bilateral contacts: forward dynamics with frames held in the world, and the inverse.

A contact holds a frame of the robot to a fixed placement in the world: "3d" holds its origin
(a point foot), "6d" its whole pose (a sole flat on the ground, a hand bolted to a wall). With
J_c the stacked contact Jacobian (world-aligned, the linear rows of a "3d" contact) and λ the
forces the world exerts on the robot, [force] or [force; torque about the frame origin],

    M v̇ + C v + g = τ + J_cᵀ λ,      J_c v̇ + γ = −kd·(J_c v) − kp·e,

γ the contact drift and e the placement error, both as Pinocchio's constraint dynamics defines
them (Baumgarte stabilisation, LOCAL_WORLD_ALIGNED): for "3d" γ is the classical acceleration
of the origin at v̇ = 0 and e = p − p_ref; for "6d" γ is the spatial one ([a − ω × ṗ; α]) and
e = [R ν; R φ], (ν, φ) = log6(X_ref⁻¹ X).

Robot.constrained_forward_dynamics solves it by its Schur complement, the Delassus matrix
J_c M⁻¹ J_cᵀ = Λ⁻¹ of the contact frames (dynamics.constrained_dynamics), on any tree; here are
the contacts, the answer's record, what the kernel is given, and the inverse problem.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple, Protocol

import numpy as np
from numpy.typing import ArrayLike

import robodyn_ros.robot.free_flyer as free_flyer
from robodyn_ros._state_call import StateCall
from robodyn_ros.dynamics import contact_state_entries
from robodyn_ros.dynamics.constrained_dynamics import pack_contact_task
from robodyn_ros.model import Model
from robodyn_ros.model.model import MULTI_DOF_JOINTS, ConfigurationJoint


class Robot(Protocol):
    """What the contact functions use of a robot (robot.Robot is one)."""

    @property
    def model(self) -> Model: ...
    @property
    def mass(self) -> float: ...
    @property
    def frame_names(self) -> tuple[str, ...]: ...
    @property
    def configuration_joints(self) -> tuple[ConfigurationJoint, ...]: ...
    def inverse_dynamics(self, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike) -> np.ndarray: ...
    def jacobian(self, q: ArrayLike, frame: str) -> np.ndarray: ...
    def classical_acceleration(self, q: ArrayLike, qd: ArrayLike, frame: str
                               ) -> np.ndarray: ...
    def frame_pose(self, q: ArrayLike, frame: str) -> np.ndarray: ...


ContactKind = Literal["3d", "6d"]
CONTACT_ROWS = {"3d": 3, "6d": 6}
RIGID_TOLERANCE = 1e-6  # how far a placement's R may be off orthonormal, as a unit quaternion


@dataclass(frozen=True)
class Contact:
    """A frame of the robot held to a fixed placement in the world.

    Attributes:
        frame: the frame (URDF link) held.
        kind: "3d" holds its origin, "6d" its pose.
        placement: (4, 4) where it is held in the world; None holds it where it is at the
            state asked about (no placement error).
    """

    frame: str
    kind: ContactKind = "6d"
    placement: np.ndarray | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in CONTACT_ROWS:
            raise ValueError(
                f"contact on frame '{self.frame}': kind must be '3d' (its origin held) or "
                f"'6d' (its pose held); got {self.kind!r}"
            )
        if self.placement is not None:
            placement = np.array(self.placement, dtype=float)  # a copy the caller cannot edit
            if placement.shape != (4, 4) or not np.isfinite(placement).all():
                raise ValueError(
                    f"contact on frame '{self.frame}': placement must be a finite 4x4 pose in "
                    f"the world; got shape {placement.shape}"
                )
            flaw = rigid_pose_flaw(placement)
            if flaw:
                raise ValueError(
                    f"contact on frame '{self.frame}': placement must be a rigid pose in the "
                    f"world [[R, p], [0, 0, 0, 1]] with R a rotation; {flaw}"
                )
            placement.flags.writeable = False
            object.__setattr__(self, "placement", placement)


def rigid_pose_flaw(pose: np.ndarray) -> str:
    """What keeps a finite 4x4 matrix from being a rigid pose [[R, p], [0, 0, 0, 1]] (R
    orthonormal with det R = +1, each to RIGID_TOLERANCE); "" for a rigid pose."""
    rotation = pose[:3, :3]
    if np.abs(pose[3] - (0.0, 0.0, 0.0, 1.0)).max() > RIGID_TOLERANCE:
        return f"its last row is {np.array2string(pose[3], precision=6)}, not [0 0 0 1]"
    off = np.abs(rotation.T @ rotation - np.eye(3)).max()
    if off > RIGID_TOLERANCE:
        return f"R is not orthonormal: max |RᵀR - I| = {off:.3g} (a scaled or sheared R)"
    if np.linalg.det(rotation) < 0.0:
        return "det R < 0: R is a reflection, not a rotation"
    return ""


class ContactDynamics(NamedTuple):
    """The answer of a contact problem (a batch adds a leading B).

    Attributes:
        vdot: (..., nv) the acceleration.
        tau: (..., nv) the generalised forces.
        forces: per contact, (..., 3) or (..., 6): what the world exerts on the robot at the
            frame origin, [force] or [force; torque], world axes.
    """

    vdot: np.ndarray
    tau: np.ndarray
    forces: tuple[np.ndarray, ...]


class ContactTask(NamedTuple):
    """Contacts as dynamics.constrained_dynamics takes them."""

    frames: tuple[str, ...]
    frame_rows: np.ndarray  # (F, FRAME_WIDTH) the frames' packed rows
    rows: np.ndarray  # (m,) the held rows 6 k + axis
    spatial: np.ndarray  # (F,) bool: held whole ("6d")


class HeldCall(NamedTuple):
    """Constrained dynamics on contacts held where they are, compiled for one state."""

    call: StateCall  # (q, q̇, τ) → [q̈; the stacked contact forces], or None
    forces: tuple[slice, ...]  # each contact's forces in the answer


class LastHeld(NamedTuple):
    """The last tuple of contacts and gains held_call answered, and its answer."""

    contacts: tuple[Contact, ...]
    kp: float
    kd: float
    held: HeldCall | None


HELD_CALLS = 64  # the compiled constrained-dynamics calls a robot keeps, by contacts and gains


class ContactTasks:
    """A robot's contact tasks and compiled constrained-dynamics calls, remembered by their
    contacts (and gains).

    Args:
        tree, gravity: the robot's packed tree and gravity (Robot.kernel_arrays).
        nq: its configuration size.
        frame_row: a frame's packed row by name, raising for an unknown frame.
    """

    def __init__(self, tree: np.ndarray, gravity: np.ndarray, nq: int,
                 frame_row: Callable[[str], np.ndarray]) -> None:
        self._tree, self._gravity, self._frame_row = tree, gravity, frame_row
        self._nq = nq
        self._tasks: dict[tuple[tuple[str, str], ...], ContactTask] = {}
        self._calls: dict[tuple[object, ...], HeldCall] = {}  # by contacts, kp and kd
        self._last = LastHeld((), 0.0, 0.0, None)

    def task(self, contacts: Sequence[Contact]) -> ContactTask:
        """The contacts as the kernel takes them."""
        key = tuple((contact.frame, contact.kind) for contact in contacts)
        task = self._tasks.get(key)
        if task is None:
            frames, rows = contact_task(contacts)
            task = self._tasks[key] = ContactTask(
                frames, np.stack([self._frame_row(frame) for frame in frames]), rows,
                np.array([kind == "6d" for _, kind in key]))
        return task

    def held_call(self, contacts: Sequence[Contact], kp: float, kd: float) -> HeldCall | None:
        """The compiled single-state call of constrained dynamics on contacts without a
        placement (no placement error); None where that does not apply. The last tuple of
        contacts (immutable, as their Contacts are) is recognised by identity."""
        last = self._last
        if contacts is last.contacts and kp == last.kp and kd == last.kd:
            return last.held
        held = self._held_call(contacts, kp, kd)
        if isinstance(contacts, tuple):
            self._last = LastHeld(contacts, kp, kd, held)
        return held

    def _held_call(self, contacts: Sequence[Contact], kp: float, kd: float) -> HeldCall | None:
        """held_call, looked up by the contacts' values."""
        if any(contact.placement is not None for contact in contacts):
            return None
        key = (*contacts, kp, kd)
        held = self._calls.get(key)
        if held is None:
            if len(self._calls) == HELD_CALLS:  # gains that keep changing
                self._calls.clear()
            task = self.task(contacts)
            constants = pack_contact_task(self._gravity, task.frame_rows, task.rows,
                                          task.spatial, kp, kd)
            address = contact_state_entries().constrained_forward_dynamics_entry.address
            n = self._tree.shape[0]
            ends = n + np.cumsum([CONTACT_ROWS[contact.kind] for contact in contacts])
            held = self._calls[key] = HeldCall(
                StateCall(address, self._tree, constants, 3, (int(ends[-1]),), self._nq - n),
                tuple(slice(end - CONTACT_ROWS[contact.kind], end)
                      for contact, end in zip(contacts, ends, strict=True)))
        return held

def contact_inverse_dynamics(
    robot: Robot,
    q: ArrayLike,
    qd: ArrayLike,
    qdd: ArrayLike,
    contacts: Sequence[Contact],
    tolerance: float = 1e-6,
) -> ContactDynamics:
    """The joint efforts and contact forces that give a robot on contacts the acceleration
    q̈, with nothing driving its free flyers and planar joints (a floating base): τ is zero on
    their rows, and the contact forces carry them.

    Those rows of the dynamics, τ_id[u] = J_c[:, u]ᵀ λ (τ_id = RNEA(q, q̇, q̈), u the
    unactuated rows), determine λ when J_c[:, u]ᵀ has full column rank: for a floating base
    at most six contact rows (one "6d" contact, or two "3d" not on one line from the base);
    more contacts share the load in ways the motion does not fix (a distribution, left to an
    optimiser).

    Args:
        robot: the robot.
        q, qd, qdd: the state and its acceleration.
        contacts: the contacts.
        tolerance: how far, relative to the weight of the robot, the contacts may fall short
            of the wrench the unactuated rows need.

    Returns:
        The ContactDynamics, vdot the q̈ given.

    Raises:
        ValueError: the contact forces are not determined by q̈ (more contact rows than
            unactuated ones, or rows they cannot tell apart; a robot without free flyer or
            planar joint determines none), or no contact forces give the unactuated rows the
            wrench q̈ needs (q̈ is not a motion these contacts allow).
    """
    frames, _ = contact_task(contacts)
    unactuated = unactuated_rows(robot)
    tau_id = robot.inverse_dynamics(q, qd, qdd)
    J = contact_jacobian(robot, q, contacts)
    carried = np.swapaxes(J[..., unactuated], -1, -2)  # J_c[:, u]ᵀ, (..., u, m)
    m = carried.shape[-1]
    if m > unactuated.size or np.any(np.linalg.matrix_rank(carried) < m):
        raise ValueError(
            f"contact_inverse_dynamics: the forces of contacts {', '.join(map(repr, frames))} "
            f"({m} rows) are not determined by the motion: the {unactuated.size} rows no motor "
            "drives (a floating base's six) give as many equations and they must be "
            "independent in them; distribute the load with an optimiser"
        )
    needed = tau_id[..., unactuated]
    forces = (np.linalg.pinv(carried) @ needed[..., None])[..., 0]
    residual = np.abs((carried @ forces[..., None])[..., 0] - needed).max()
    weight = robot.mass * np.linalg.norm(robot.model.gravity) + 1.0
    if residual > tolerance * weight:
        raise ValueError(
            f"contact_inverse_dynamics: contacts {', '.join(map(repr, frames))} cannot give "
            f"the unactuated rows the wrench this q̈ needs (short by {residual:.3g} N or N·m): "
            "q̈ is not a motion these contacts allow"
        )
    tau = tau_id - (np.swapaxes(J, -1, -2) @ forces[..., None])[..., 0]
    tau[..., unactuated] = 0.0
    return ContactDynamics(np.asarray(qdd, dtype=float), tau, split_forces(forces, contacts))


def unactuated_rows(robot: Robot) -> np.ndarray:
    """The rows of v no motor drives: those of the free flyers and planar joints."""
    return np.array([row for joint in robot.configuration_joints
                     if joint.kind in MULTI_DOF_JOINTS
                     for row in range(joint.v.start, joint.v.stop)], dtype=np.int64)


def held_where_they_are(
    robot: Robot, q: np.ndarray, contacts: Sequence[Contact]
) -> tuple[Contact, ...]:
    """The contacts, each with its placement: where its frame is at q when it has none.

    Raises:
        ValueError: a contact that is not a Contact, or a frame the robot lacks.
    """
    held = []
    for contact in contacts:
        if not isinstance(contact, Contact):
            raise ValueError(f"contacts must be Contact objects; got {type(contact).__name__}")
        if contact.frame not in robot.frame_names:
            raise ValueError(f"contacts: unknown frame '{contact.frame}' of robot "
                             f"'{robot.model.name}'")
        held.append(contact if contact.placement is not None else
                    Contact(contact.frame, contact.kind, robot.frame_pose(q, contact.frame)))
    return tuple(held)


def contact_task(contacts: Sequence[Contact]) -> tuple[tuple[str, ...], np.ndarray]:
    """The contact frames, and the rows of their 6-per-frame task that the contacts hold."""
    if not contacts:
        raise ValueError("contacts: give at least one Contact")
    frames = tuple(contact.frame for contact in contacts)
    rows = np.concatenate([6 * k + np.arange(CONTACT_ROWS[contact.kind])
                           for k, contact in enumerate(contacts)])
    return frames, rows


def contact_jacobian(
    robot: Robot, q: ArrayLike, contacts: Sequence[Contact]
) -> np.ndarray:
    """J_c, (..., m, nv): the rows each contact holds of its frame's Jacobian, world axes."""
    frames, rows = contact_task(contacts)
    return np.concatenate([robot.jacobian(q, frame) for frame in frames], axis=-2)[..., rows, :]


def contact_drift(
    robot: Robot, q: ArrayLike, v: ArrayLike, contacts: Sequence[Contact]
) -> np.ndarray:
    """γ, (..., m): J_c v̇ + γ is the contacts' acceleration, the classical one of a "3d"
    contact's origin and the spatial one ([a − ω × ṗ; α]) of a "6d" contact's frame."""
    v = np.asarray(v, dtype=float)
    drifts = []
    for contact in contacts:
        drift = robot.classical_acceleration(q, v, contact.frame)
        if contact.kind == "6d":
            twist = (robot.jacobian(q, contact.frame) @ v[..., None])[..., 0]
            drift[..., :3] -= np.cross(twist[..., 3:], twist[..., :3])
        drifts.append(drift[..., : CONTACT_ROWS[contact.kind]])
    return np.concatenate(drifts, axis=-1)


def placement_error(
    robot: Robot, q: np.ndarray, contacts: Sequence[Contact]
) -> np.ndarray:
    """e, (..., m): p − p_ref for a "3d" contact, [R ν; R φ] with (ν, φ) = log6(X_ref⁻¹ X) for
    a "6d" one; zero for a contact held where it is."""
    if all(contact.placement is None for contact in contacts):
        return np.zeros((*q.shape[:-1], sum(CONTACT_ROWS[c.kind] for c in contacts)))
    errors = []
    for contact in contacts:
        if contact.placement is None:
            errors.append(np.zeros((*q.shape[:-1], CONTACT_ROWS[contact.kind])))
            continue
        pose = robot.frame_pose(q, contact.frame)
        if contact.kind == "3d":
            errors.append(pose[..., :3, 3] - contact.placement[:3, 3])
        else:
            local = free_flyer.difference(_pose7(contact.placement), _pose7(pose))
            R = pose[..., :3, :3]
            errors.append(np.concatenate([(R @ local[..., :3, None])[..., 0],
                                          (R @ local[..., 3:, None])[..., 0]], axis=-1))
    return np.concatenate(errors, axis=-1)


def _pose7(pose: np.ndarray) -> np.ndarray:
    """[position, quaternion (x, y, z, w)] of 4x4 poses."""
    return np.concatenate([pose[..., :3, 3], free_flyer.quaternion_of(pose[..., :3, :3])], axis=-1)


def split_forces(forces: np.ndarray, contacts: Sequence[Contact]) -> tuple[np.ndarray, ...]:
    """The stacked forces (..., m) cut per contact."""
    pieces, start = [], 0
    for contact in contacts:
        end = start + CONTACT_ROWS[contact.kind]
        pieces.append(forces[..., start:end])
        start = end
    return tuple(pieces)


__all__ = ["Contact", "ContactDynamics", "ContactTasks", "contact_drift",
           "contact_inverse_dynamics", "contact_jacobian", "contact_task", "held_where_they_are",
           "placement_error", "unactuated_rows"]
