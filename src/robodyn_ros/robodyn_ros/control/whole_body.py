"""Whole-body control of a floating-base robot on rigid contacts: its centre of mass and one
frame's pose to targets, a posture beneath, the contacts held; τ on the joints only.

Each call solves, at the acceleration level (inverse dynamics with contacts, as whole-body
controllers do; Sentis & Khatib 2005 give the task-space form):

1. the contacts' accelerations vanish: J_c v̇ + γ = −kd_c J_c v (contact_dynamics: γ as the
   constrained dynamics takes it, kd_c a little damping of the contacts' own drift); v̇ is
   v̇₀ + Z u with v̇₀ the least-norm solution and Z a basis of J_c's null space (SVD);
2. u minimises Σ_i w_i ‖A_i v̇ − b_i‖² over three tasks, each a spring-damper: the centre of
   mass c̈* = Kp (c* − c) − Kd ċ (A = J_com, J̇_com v from the base rows of the velocity
   products), the frame ẍ* = Kp e − Kd ẋ ([position; orientation] as the operational-space
   controller's error, A = J), the joints q̈* = Kp (q* − q) − Kd q̇;
3. the efforts: M v̇ + b = Sᵀ τ + J_cᵀ λ; the base rows give λ (the least-norm forces that
   carry the base, J_c[:, :6]ᵀ λ = (M v̇ + b)[:6]), then τ = (M v̇ + b − J_cᵀ λ) on the joints.

The rigid-contact dynamics (Robot.constrained_forward_dynamics) with this τ has exactly this
v̇ and λ: the KKT system has one solution, and (v̇, λ) solves it. Contacts that would pull
(λ_z < 0) are allowed: bilateral, as the constrained dynamics.

`WholeBody` is the controller plugin ("whole_body") around it, for controller_node: it holds
the centre of mass, the frame's pose and the posture of the first state it gets, and takes a
new pose of the frame as its target.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from robodyn_ros.control.operational_space_controller import as_rotation_matrix, rotation_error
from robodyn_ros.control.plugin import Controller, ControllerState
from robodyn_ros.model.model import FREE_FLYER_DOF
from robodyn_ros.robot import Robot
from robodyn_ros.robot.contact_dynamics import (
    CONTACT_ROWS,
    Contact,
    contact_drift,
    contact_jacobian,
)
from robodyn_ros.robot.free_flyer import rotation_matrix

RANK_TOLERANCE = 1e-10  # a singular value of J_c below this times the largest: not a row


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


class WholeBodyController:
    """τ (nv, zero on the base) for a floating-base robot on `contacts` (module doc)."""

    def __init__(self, robot: Robot, contacts: Sequence[Contact],
                 targets: WholeBodyTargets) -> None:
        """Raises:
            ValueError: a robot without a floating base (model.floating_base), no contact, an
                unknown frame, or a posture of the wrong size."""
        if not robot.model.floating_base:
            raise ValueError(f"WholeBodyController: robot '{robot.model.name}' has no floating "
                             "base (load it with floating_base=True)")
        self.robot, self.contacts, self.targets = robot, tuple(contacts), targets
        contact_jacobian(robot, robot.neutral(), self.contacts)  # checks the frames
        robot.jacobian(robot.neutral(), targets.frame)
        joints = robot.nv - FREE_FLYER_DOF
        if np.shape(targets.posture) != (joints,):
            raise ValueError(f"WholeBodyTargets: posture must have the {joints} joints; got "
                             f"shape {np.shape(targets.posture)}")

    def torque(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """τ at the state (q, v): zero on the base, the joints' efforts after it."""
        vdot = self.acceleration(q, v)
        return self.efforts(q, v, vdot)

    def acceleration(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """v̇ that holds the contacts and best meets the tasks (steps 1 and 2)."""
        robot, targets = self.robot, self.targets
        J_c = contact_jacobian(robot, q, self.contacts)
        wanted = -contact_drift(robot, q, v, self.contacts) - targets.contact_damping * (J_c @ v)
        U, s, Vt = np.linalg.svd(J_c)
        rank = int(np.sum(s > RANK_TOLERANCE * s[0]))
        vdot_0 = Vt[:rank].T @ ((U[:, :rank].T @ wanted) / s[:rank])
        Z = Vt[rank:].T
        rows, goals = [], []
        for weight, (A, b) in zip(targets.weights, self._tasks(q, v), strict=True):
            rows.append(np.sqrt(weight) * (A @ Z))
            goals.append(np.sqrt(weight) * (b - A @ vdot_0))
        u = np.linalg.lstsq(np.vstack(rows), np.concatenate(goals), rcond=None)[0]
        return vdot_0 + Z @ u

    def efforts(self, q: np.ndarray, v: np.ndarray, vdot: np.ndarray) -> np.ndarray:
        """τ of step 3: the least-norm contact forces carry the base, the joints the rest."""
        J_c = contact_jacobian(self.robot, q, self.contacts)
        needed = self.robot.inverse_dynamics(q, v, vdot)
        forces = np.linalg.lstsq(J_c[:, :FREE_FLYER_DOF].T, needed[:FREE_FLYER_DOF],
                                 rcond=None)[0]
        tau = needed - J_c.T @ forces
        tau[:FREE_FLYER_DOF] = 0.0
        return tau

    def _tasks(self, q: np.ndarray, v: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """(A, b) of each task: A v̇ = b is the wanted acceleration."""
        robot, targets = self.robot, self.targets
        kp, kd = targets.kp, targets.kd
        J_com = robot.com_jacobian(q)
        # m c̈ at v̇ = 0 without gravity: the base rows of the velocity products, base axes
        velocity_products = robot.bias_forces(q, v) - robot.gravity_torques(q)
        com_drift = rotation_matrix(q[3:7]) @ velocity_products[:3] / robot.mass
        com_goal = kp[0] * (targets.com - robot.centre_of_mass(q)) - kd[0] * (J_com @ v)
        J = robot.jacobian(q, targets.frame)
        pose = robot.frame_pose(q, targets.frame)
        error = np.concatenate([targets.position - pose[:3, 3],
                                rotation_error(targets.orientation, pose[:3, :3])])
        frame_goal = kp[1] * error - kd[1] * (J @ v)
        posture = np.eye(robot.nv)[FREE_FLYER_DOF:]
        posture_goal = (kp[2] * (targets.posture - q[FREE_FLYER_DOF + 1:])
                        - kd[2] * v[FREE_FLYER_DOF:])
        return [
            (J_com, com_goal - com_drift),
            (J, frame_goal - robot.classical_acceleration(q, v, targets.frame)),
            (posture, posture_goal),
        ]


DEFAULTS = WholeBodyTargets(np.zeros(3), "", np.zeros(3), np.eye(3), np.zeros(0))


class WholeBody(Controller):
    """The WholeBodyController as a controller plugin (module doc): its targets are where the
    robot is at the first state it gets; set_target(position, orientation) moves the frame's."""

    name: ClassVar[str] = "whole_body"
    TAKES_FLOATING_BASE: ClassVar[bool] = True
    PARAMETERS: ClassVar[dict[str, str]] = {
        "contacts": "frames held where they are: 'frame' (its pose) or 'frame:3d' (its origin)",
        "frame": "the frame whose pose is a task (default: the robot's last frame)",
        "kp": "stiffness of the centre of mass, the frame and the posture, 1/s² (3 numbers)",
        "kd": "damping of the centre of mass, the frame and the posture, 1/s (3 numbers)",
        "weights": "weights of the centre of mass, the frame and the posture (3 numbers)",
    }

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
            self._controller = WholeBodyController(robot, self.contacts, self._targets(start))
        return self._controller.torque(state.q, state.qd)

    def _targets(self, targets: WholeBodyTargets) -> WholeBodyTargets:
        """`targets` with the frame's pose target set_target gave."""
        position, orientation = self._pose_target
        return dataclasses.replace(
            targets, position=targets.position if position is None else position,
            orientation=targets.orientation if orientation is None else orientation)


def _strings(value: object, name: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence) \
            or not all(isinstance(item, str) for item in value):
        raise ValueError(f"parameter '{name}' must be a list of strings; got {value!r}")
    return list(value)


def _three(parameters: dict[str, object], name: str, default: tuple[float, float, float]
           ) -> tuple[float, float, float]:
    try:
        values = np.asarray(parameters.get(name, default), dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"parameter '{name}' must be 3 numbers") from None
    if values.shape != (3,) or not (np.isfinite(values).all() and (values >= 0).all()):
        raise ValueError(f"parameter '{name}' must be 3 finite numbers ≥ 0; got "
                         f"{values.tolist()}")
    return (float(values[0]), float(values[1]), float(values[2]))
