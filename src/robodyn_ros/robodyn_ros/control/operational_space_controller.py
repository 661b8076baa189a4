"""Operational-space control (Khatib 1987) of one frame's pose, with a null-space posture.

Task: the pose of ``frame`` (position of its origin and orientation), 6-D quantities
``[linear; angular]`` about the frame origin in world-aligned axes, as ``robot.jacobian``.

- Error: e = [p* − p; log(R* Rᵀ)], the orientation part the rotation vector (log map of SO(3))
  of the rotation that takes the current orientation to the target, in world axes: zero iff
  the orientations agree, and a target turned by a small +δ about world z gives +δ ẑ.
- Task velocity ẋ = J q̇.
- Task dynamics (``robot.operational_space``): Λ, J̄ = M⁻¹ Jᵀ Λ, μ = J̄ᵀ C q̇ − Λ J̇ q̇ and
  p = J̄ᵀ g, so that τ = Jᵀ F gives Λ ẍ + μ + p = F.
- Efforts (Khatib 1987): τ = Jᵀ (Λ ẍ* + μ + p) + Nᵀ (τ_posture + b), with ẍ* = Kp e − Kd ẋ
  (the task obeys ë ≈ Kp e − Kd ė: a unit-mass spring-damper per direction, Kp in 1/s², Kd in
  1/s), b = C q̇ + g, and the null-space projector Nᵀ = 1 − Jᵀ J̄ᵀ.
- Null space: τ_posture = K_null (q_rest − q) − D_null q̇ keeps the posture; b is projected
  with it because Jᵀ (μ + p) compensates only the task's share of C q̇ + g (Jᵀ J̄ᵀ b): with
  Nᵀ b the whole of C q̇ + g is compensated (Jᵀ J̄ᵀ b + Nᵀ b = b) and the joints the task leaves
  free do not sag. Nᵀ adds nothing to the task acceleration (for Λ exact).

Near singularities Λ⁻¹ = J M⁻¹ Jᵀ = V diag(s) Vᵀ loses rank. Λ is inverted exactly while the
smallest eigenvalue s_min ≥ ε s_max (``singular_threshold`` ε, default 1e-4; the Panda's tcp
has s_min / s_max ≈ 3e-4 to 6e-4 in ordinary postures) and damped below: damped least squares
with variable damping (Nakamura & Hanafusa 1986; Maciejewski & Klein 1988), continuous at the
threshold, bounded, zero along a lost direction, never NaN or infinite (see
``Robot.operational_space``).

Parameters:

- ``frame`` (required): a name in ``robot.frame_names``.
- ``kp`` (100): Kp, one number or six [linear x, y, z; angular x, y, z], 1/s², ≥ 0.
- ``kd`` (2 √kp, critical damping): Kd, one number or six, 1/s, ≥ 0.
- ``null_stiffness`` (10): K_null, N·m/rad, one or per joint; ``null_damping`` (2): D_null,
  N·m·s/rad; ``rest_posture``: q_rest (n,), default the first position seen.
- ``singular_threshold`` (1e-4): ε above.
- ``operational_space_method`` ("dense"): the route to Λ⁻¹, any of
  ``Robot.OPERATIONAL_SPACE_METHODS`` ("recursive": O(n), trees; "schur", "schur_bcr": the tip
  of a chain).
- ``force_axes`` (none): six flags 0/1 over [x y z, rx ry rz], 1 for a force-controlled
  direction.
- ``force_target`` (zero): F_d, six numbers [fx fy fz tx ty tz], N and N·m; zero along the
  motion directions.
- ``force_damping`` (kd): K_vf, one number or six, 1/s, ≥ 0.
- ``force_integral_gain`` (0: none): K_fi, 1/s, ≥ 0, of the measured force's error.

The target (`set_target`) is a position (3,) and an orientation as a quaternion (x, y, z, w),
ROS order, or a 3x3 rotation matrix; a part not set holds the pose of the first `update`.

Force control (Khatib 1987, the unified approach to motion and force): ``force_axes`` selects
task directions [x y z, rx ry rz] (world axes) that are force-controlled, the generalized
selection matrix Ω̃ = diag(force_axes), Ω = 1 − Ω̃ the motion-controlled ones. The task force is

    F = Λ (Ω ẍ* − Ω̃ K_vf ẋ) + Ω̃ F_d + μ + p

with F_d (``force_target``, `set_force_target`) the wrench the frame exerts on the environment
at its origin, world axes, and K_vf (``force_damping``) a damping of the task velocity in the
force directions. The task then obeys ẍ = Ω ẍ* − Ω̃ K_vf ẋ + Λ⁻¹ (Ω̃ F_d + F_ext), F_ext the
environment's wrench on the frame: in free space a force direction settles at the speed
(Λ⁻¹ F_d) / K_vf. In contact at rest the frame exerts F_d in the force directions plus the
share Ω̃ Λ Ω ẍ* of the motion servo's effort that Λ couples into them. That share is zero where
the motion directions carry no load (no friction, the contact under the origin); along one
force axis f it is (Λ⁻¹)_ff⁻¹ Σ_m (Λ⁻¹)_fm F_ext,m, over the motion directions m. The position
target along force directions is not used. Without force axes the law above is the pose law,
computed as before.

Force feedback: with ``force_integral_gain`` K_fi > 0 and a measured wrench w on the frame
(ControllerState.wrenches[frame], the environment's on the robot about the frame's origin),
F_d in the law becomes F_d + Ω̃ I, I the integral of K_fi (F_d + w) over the time between
updates: the frame's own force −w is driven to F_d along the force directions whatever the
motion servo couples into them. I integrates only while w is measured and non-zero along a
force direction (in contact: no wind-up on the approach) and stays within ±|F_d| + 1 N per
direction; without a measured wrench the law is open loop, as above.

Compiled mirror: control.compiled_laws.operational_space_torque, the same law (dense Λ) as
the preview's rollout kernels run it, force control included (sim.contact_rollout closes the
measured-force loop on its contacts); tests hold the two to the same τ and trajectory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from robodyn_ros.control.plugin import (
    Controller,
    ControllerState,
    joint_vector,
    nonnegative_float,
    positive_float,
    task_vector,
)
from robodyn_ros.dynamics.rotation import log_so3
from robodyn_ros.robot.operational_space import SCHUR_METHODS, check_schur_task

if TYPE_CHECKING:
    from robodyn_ros.robot import Robot


class OperationalSpace(Controller):
    """Khatib's operational-space pose control of one frame, with a null-space posture."""

    name: ClassVar[str] = "operational_space"
    PARAMETERS: ClassVar[tuple[str, ...]] = (
        "frame", "kp", "kd", "null_stiffness", "null_damping", "rest_posture", "singular_threshold",
        "operational_space_method", "force_axes", "force_target", "force_damping",
        "force_integral_gain",
    )

    def _configure(self, robot: Robot, parameters: dict[str, object]) -> None:
        frame = parameters.get("frame")
        if frame is None:
            raise ValueError(f"{type(self).__name__}: parameter 'frame' is required")
        if not isinstance(frame, str) or frame not in robot.frame_names:
            raise ValueError(
                f"parameter 'frame' must be one of the robot's frames "
                f"({', '.join(robot.frame_names)}); got {frame!r}"
            )
        n = robot.nv
        self.frame = frame
        self.kp = task_vector(parameters, "kp", 100.0)
        self.kd = task_vector(parameters, "kd", 2.0 * np.sqrt(self.kp))
        self.null_stiffness = joint_vector(parameters, "null_stiffness", n, 10.0, nonnegative=True)
        self.null_damping = joint_vector(parameters, "null_damping", n, 2.0, nonnegative=True)
        self.rest_posture = joint_vector(parameters, "rest_posture", n)
        self.singular_threshold = positive_float(parameters, "singular_threshold", 1e-4)
        if self.singular_threshold >= 1.0:
            raise ValueError(
                f"parameter 'singular_threshold' must be < 1; got {self.singular_threshold}"
            )
        method = parameters.get("operational_space_method", "dense")
        if not isinstance(method, str) or method not in robot.OPERATIONAL_SPACE_METHODS:
            raise ValueError(
                "parameter 'operational_space_method' must be one of "
                f"{', '.join(robot.OPERATIONAL_SPACE_METHODS)}; got {method!r}"
            )
        self.method = method
        if self.method in SCHUR_METHODS:
            check_schur_task(
                robot.model, (frame,), "parameter 'operational_space_method'", self.method
            )
        self.force_axes = selection_flags(parameters.get("force_axes", np.zeros(6)),
                                          "force_axes")
        self.force_damping = task_vector(parameters, "force_damping", self.kd)
        self.force_integral_gain = nonnegative_float(parameters, "force_integral_gain", 0.0)
        self.force_integral = np.zeros(6)
        self._integrated_until: float | None = None
        self.force_target = np.zeros(6)
        self.set_force_target(parameters.get("force_target", np.zeros(6)))
        self.position_target: np.ndarray | None = None
        self.rotation_target: np.ndarray | None = None

    def set_target(
        self, position: ArrayLike | None = None, orientation: ArrayLike | None = None
    ) -> None:
        """Target position (3,) in m and/or orientation: quaternion (x, y, z, w) or 3x3
        rotation matrix, in the world. None leaves that part as it is."""
        if position is not None:
            p = np.asarray(position, dtype=float)
            if p.shape != (3,) or not np.all(np.isfinite(p)):
                raise ValueError(f"position must be 3 finite numbers; got {position!r}")
            self.position_target = p.copy()
        if orientation is not None:
            self.rotation_target = as_rotation_matrix(orientation, "orientation")

    def set_force_target(self, wrench: object) -> None:
        """Set F_d, the wrench [fx fy fz tx ty tz] (N, N·m) the frame is to exert on the
        environment at its origin, world axes.

        Args:
            wrench: six finite numbers, zero along the directions that are not force-controlled.

        Raises:
            ValueError: not six finite numbers, or a component along a motion direction; the
                message names force_target.
        """
        target = finite_wrench(wrench, "force_target")
        stray = np.flatnonzero((target != 0.0) & ~self.force_axes)
        if stray.size:
            axes = ", ".join(TASK_DIRECTIONS[i] for i in stray)
            raise ValueError(
                f"force_target has components along {axes}, which force_axes leaves to motion "
                f"control (force_axes {self.force_axes.astype(int).tolist()}); got "
                f"{target.tolist()}"
            )
        self.force_target = target

    @property
    def target_pose(self) -> np.ndarray | None:
        """The target as a 4x4 transform (None before the target is complete)."""
        if self.position_target is None or self.rotation_target is None:
            return None
        T = np.eye(4)
        T[:3, :3] = self.rotation_target
        T[:3, 3] = self.position_target
        return T

    def update(self, state: ControllerState) -> np.ndarray:
        self._check_state(state)
        robot, q, qd = self.robot, state.q, state.qd
        pose = robot.frame_pose(q, self.frame)
        if self.position_target is None:
            self.position_target = pose[:3, 3].copy()
        if self.rotation_target is None:
            self.rotation_target = pose[:3, :3].copy()
        if self.rest_posture is None:
            self.rest_posture = q.copy()

        task = state.operational_space.get(self.frame)
        if task is None:
            task = robot.operational_space(
                q, qd, self.frame, self.method, singular_threshold=self.singular_threshold
            )
        J = task.J

        error = np.empty(6)
        error[:3] = self.position_target - pose[:3, 3]
        error[3:] = rotation_error(self.rotation_target, pose[:3, :3])
        task_velocity = J @ qd
        task_acceleration = self.kp * error - self.kd * task_velocity
        if self.force_axes.any():
            # Khatib 1987, unified law: F = Λ Ω F*_m + Ω̃ F_d + Λ Ω̃ F*_f + μ + p, F*_f = −K_vf ẋ
            task_acceleration = np.where(
                self.force_axes, -self.force_damping * task_velocity, task_acceleration
            )
            task_force = (task.Lambda @ task_acceleration + self.force_target
                          + self._force_correction(state) + task.mu + task.p)
        else:
            task_force = task.Lambda @ task_acceleration + task.mu + task.p

        torque_null = self.null_stiffness * (self.rest_posture - q) - self.null_damping * qd
        torque_null += self._bias(state)
        torque_null -= J.T @ (task.Jbar.T @ torque_null)  # Nᵀ τ₀ = τ₀ − Jᵀ J̄ᵀ τ₀
        torque: np.ndarray = J.T @ task_force + torque_null
        return torque

    def _force_correction(self, state: ControllerState) -> np.ndarray:
        """Ω̃ I, the integral of K_fi (F_d + w) up to state.t (module doc), w the measured
        wrench on the frame; zero without a gain."""
        if self.force_integral_gain == 0.0:
            return self.force_integral
        wrench = state.wrenches.get(self.frame)
        elapsed = 0.0 if self._integrated_until is None else state.t - self._integrated_until
        self._integrated_until = state.t
        if wrench is None:
            return self.force_integral
        touching = bool(np.any(wrench[self.force_axes] != 0.0))
        if touching and elapsed > 0.0:
            error = np.where(self.force_axes, self.force_target + wrench, 0.0)
            bound = np.abs(self.force_target) + 1.0
            self.force_integral = np.clip(
                self.force_integral + self.force_integral_gain * elapsed * error, -bound, bound)
        return self.force_integral

    @property
    def task_frames(self) -> tuple[str, ...]:
        return (self.frame,)


TASK_DIRECTIONS = ("x", "y", "z", "rx", "ry", "rz")
"""The task's directions, world axes: [linear; angular]."""


def selection_flags(value: object, name: str) -> np.ndarray:
    """Six flags 0/1 (or booleans) over TASK_DIRECTIONS as a boolean (6,) array.

    Raises:
        ValueError: not six values each 0 or 1; the message names `name`.
    """
    try:
        flags = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"parameter '{name}' must be six flags 0 or 1; got {value!r}") from None
    if flags.shape != (6,) or not np.all((flags == 0.0) | (flags == 1.0)):
        raise ValueError(
            f"parameter '{name}' must be six flags 0 or 1 over [x y z rx ry rz]; got "
            f"{np.asarray(value).tolist()!r}"
        )
    selected: np.ndarray = flags == 1.0
    return selected


def finite_wrench(value: object, name: str) -> np.ndarray:
    """Six finite numbers [fx fy fz tx ty tz] as a float (6,) array.

    Raises:
        ValueError: anything else; the message names `name`.
    """
    try:
        wrench = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be six numbers [fx fy fz tx ty tz]; got {value!r}") from None
    if wrench.shape != (6,) or not np.all(np.isfinite(wrench)):
        raise ValueError(
            f"{name} must be six finite numbers [fx fy fz tx ty tz] (N, N·m); got "
            f"{wrench.tolist()!r}"
        )
    return wrench


def rotation_error(R_target: np.ndarray, R: np.ndarray) -> np.ndarray:
    """log(R* Rᵀ): the rotation vector (world axes) turning R into R*, in rad."""
    return np.array(log_so3(np.ascontiguousarray(R_target @ R.T)))


def as_rotation_matrix(orientation: ArrayLike, name: str = "orientation") -> np.ndarray:
    """A 3x3 rotation matrix from a quaternion (x, y, z, w) or a rotation matrix."""
    try:
        o = np.asarray(orientation, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers; got {orientation!r}") from None
    if not np.all(np.isfinite(o)):
        raise ValueError(f"{name} must be finite; got {o.tolist()}")
    if o.shape == (4,):
        norm = np.linalg.norm(o)
        if norm < 1e-9:
            raise ValueError(f"{name}: a quaternion (x, y, z, w) must not be zero")
        return quaternion_to_matrix(o / norm)
    if o.shape == (3, 3):
        if not np.allclose(o @ o.T, np.eye(3), atol=1e-6) or np.linalg.det(o) < 0:
            raise ValueError(f"{name}: a 3x3 matrix must be a rotation (orthonormal, det +1)")
        return o.copy()
    raise ValueError(
        f"{name} must be a quaternion (x, y, z, w) or a 3x3 rotation matrix; got shape {o.shape}"
    )


def quaternion_to_matrix(quaternion: Sequence[float] | np.ndarray) -> np.ndarray:
    """Rotation matrix of a unit quaternion (x, y, z, w), ROS order."""
    x, y, z, w = quaternion
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )
