"""Operational-space control (Khatib 1987) of one frame's pose, with a null-space posture.

Task: the pose of ``frame`` (position of its origin and orientation), 6-D quantities
``[linear; angular]`` about the frame origin in world-aligned axes, as ``robot.jacobian``.

- Error: e = [p* − p; log(R* Rᵀ)], the orientation part the rotation vector (log map of SO(3))
  of the rotation that takes the current orientation to the target, in world axes: zero iff
  the orientations agree, and a target turned by a small +δ about world z gives +δ ẑ.
- Task velocity ẋ = J q̇.
- Task force F = Λ (Kp e − Kd ẋ), so that (with the terms below) the task obeys
  ë ≈ Kp e − Kd ė: a unit-mass spring-damper per direction (Kp in 1/s², Kd in 1/s).
- Null-space posture: τ_null = (1 − Jᵀ J̄ᵀ) (K_null (q_rest − q) − D_null q̇), with the
  dynamically consistent inverse J̄ = M⁻¹ Jᵀ Λ, so it does not disturb the task (for Λ exact).
- Efforts: τ = Jᵀ F + τ_null + b(q, q̇), b = C(q, q̇) q̇ + g(q).

Choice of the Coriolis term (documented simplification): the exact operational-space law is
τ = Jᵀ (Λ ẍ_cmd + μ + p) with μ = J̄ᵀ C q̇ − Λ J̇ q̇ and p = J̄ᵀ g. J̇ q̇ is not available from
the Robot API, so Coriolis, centrifugal and gravity torques are compensated in joint space by
adding the whole b(q, q̇) = C q̇ + g to τ instead of Jᵀ (μ + p). This cancels all of C q̇ + g
(also its null-space part) and leaves only the task-space term Λ J̇ q̇ uncompensated: a
velocity-squared disturbance that vanishes at rest, so the set point is still reached exactly.

Near singularities: Λ⁻¹ = J M⁻¹ Jᵀ (``robot.operational_space_inertia(q, frame,
inverse=True)``, or from the state's M when given) is symmetric positive semi-definite,
Λ⁻¹ = V diag(s) Vᵀ. When its smallest eigenvalue s_min ≥ ε (``singular_threshold``, default
1e-2; Panda's tcp in ordinary postures has s_min ≈ 0.1) Λ = V diag(1/s) Vᵀ exactly. Below ε,
Λ = V diag(s / (s² + λ²)) Vᵀ with λ² = λ_max² (1 − (s_min/ε)²) (``singular_damping`` λ_max,
default 1e-2): damped least squares with variable damping (Nakamura & Hanafusa 1986;
Maciejewski & Klein 1988), continuous at s_min = ε, bounded by 1/(2λ), and zero along a lost
direction. Never NaN or infinite.

Parameters:

- ``frame`` (required): a name in ``robot.frame_names``.
- ``kp`` (100): Kp, one number or six [linear x, y, z; angular x, y, z], 1/s², ≥ 0.
- ``kd`` (2 √kp, critical damping): Kd, one number or six, 1/s, ≥ 0.
- ``null_stiffness`` (10): K_null, N·m/rad, one or per joint; ``null_damping`` (2): D_null,
  N·m·s/rad; ``rest_posture``: q_rest (n,), default the first position seen.
- ``singular_threshold`` (1e-2), ``singular_damping`` (1e-2): ε and λ_max above.

The target (`set_target`) is a position (3,) and an orientation as a quaternion (x, y, z, w),
ROS order, or a 3x3 rotation matrix; a part not set holds the pose of the first `update`.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from robodyn_ros.control.plugin import (
    Controller,
    ControllerState,
    joint_vector,
    positive_float,
    task_vector,
)


class OperationalSpace(Controller):
    """Khatib's operational-space pose control of one frame, with a null-space posture."""

    name: ClassVar[str] = "operational_space"
    PARAMETERS: ClassVar[dict[str, str]] = {
        "frame": "the controlled frame (required)",
        "kp": "task stiffness Kp, 1/s²: one number or six (default 100)",
        "kd": "task damping Kd, 1/s: one number or six (default 2 sqrt(kp))",
        "null_stiffness": "K_null, N·m/rad: one number or per joint (default 10)",
        "null_damping": "D_null, N·m·s/rad: one number or per joint (default 2)",
        "rest_posture": "q_rest (n,); default: the first position seen",
        "singular_threshold": "ε: smallest eigenvalue of Λ⁻¹ inverted exactly (default 1e-2)",
        "singular_damping": "λ_max: damping of Λ⁻¹'s inverse below ε (default 1e-2)",
    }

    def _configure(self, robot, parameters) -> None:
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
        self.singular_threshold = positive_float(parameters, "singular_threshold", 1e-2)
        self.singular_damping = positive_float(parameters, "singular_damping", 1e-2)
        self.position_target: np.ndarray | None = None
        self.rotation_target: np.ndarray | None = None

    def set_target(self, position=None, orientation=None) -> None:
        """Target position (3,) in m and/or orientation: quaternion (x, y, z, w) or 3x3
        rotation matrix, in the world. None leaves that part as it is."""
        if position is not None:
            p = np.asarray(position, dtype=float)
            if p.shape != (3,) or not np.all(np.isfinite(p)):
                raise ValueError(f"position must be 3 finite numbers; got {position!r}")
            self.position_target = p.copy()
        if orientation is not None:
            self.rotation_target = as_rotation_matrix(orientation, "orientation")

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

        J = robot.jacobian(q, self.frame)
        if state.M is not None:
            Minv = np.linalg.inv(state.M)
            Lambda_inv = J @ Minv @ J.T
        else:
            Minv = robot.mass_matrix_inverse(q)
            Lambda_inv = robot.operational_space_inertia(q, self.frame, inverse=True)
        Lambda = damped_inverse(Lambda_inv, self.singular_threshold, self.singular_damping)

        error = np.empty(6)
        error[:3] = self.position_target - pose[:3, 3]
        error[3:] = rotation_error(self.rotation_target, pose[:3, :3])
        F = Lambda @ (self.kp * error - self.kd * (J @ qd))

        tau = J.T @ F + self._bias(state)
        torque_null = self.null_stiffness * (self.rest_posture - q) - self.null_damping * qd
        if np.any(torque_null):
            Jbar = Minv @ J.T @ Lambda  # dynamically consistent inverse, n x 6
            tau += torque_null - J.T @ (Jbar.T @ torque_null)
        return tau


def damped_inverse(Lambda_inv: np.ndarray, threshold: float, damping: float) -> np.ndarray:
    """Λ from Λ⁻¹: exact when the smallest eigenvalue ≥ threshold, else damped (see module)."""
    Lambda_inv = 0.5 * (Lambda_inv + Lambda_inv.T)
    s, V = np.linalg.eigh(Lambda_inv)
    s = np.maximum(s, 0.0)
    s_min = s[0]
    if s_min >= threshold:
        inv = 1.0 / s
    else:
        lam2 = damping**2 * (1.0 - (s_min / threshold) ** 2)
        inv = s / (s * s + lam2)
    return (V * inv) @ V.T


def rotation_error(R_target: np.ndarray, R: np.ndarray) -> np.ndarray:
    """log(R* Rᵀ): the rotation vector (world axes) turning R into R*, in rad."""
    return log_so3(R_target @ R.T)


def log_so3(R: np.ndarray) -> np.ndarray:
    """The rotation vector θ a of a rotation matrix (angle θ ∈ [0, π], unit axis a)."""
    w = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])  # sin θ · a
    cos = min(1.0, max(-1.0, 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)))
    sin = float(np.linalg.norm(w))
    theta = math.atan2(sin, cos)
    if theta < 1e-6:  # θ / sin θ = 1 + θ²/6 + ...
        return w * (1.0 + theta * theta / 6.0)
    if math.pi - theta > 1e-4:
        return w * (theta / sin)
    # near π: the symmetric part (R + Rᵀ)/2 = cos θ 1 + (1 − cos θ) a aᵀ gives a aᵀ
    B = (0.5 * (R + R.T) - cos * np.eye(3)) / (1.0 - cos)
    k = int(np.argmax(np.diag(B)))
    axis = B[:, k] / math.sqrt(max(B[k, k], 1e-300))
    axis /= np.linalg.norm(axis)
    if axis @ w < 0:  # the sign sin θ · a carries
        axis = -axis
    return theta * axis


def as_rotation_matrix(orientation, name: str = "orientation") -> np.ndarray:
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


def quaternion_to_matrix(quaternion) -> np.ndarray:
    """Rotation matrix of a unit quaternion (x, y, z, w), ROS order."""
    x, y, z, w = quaternion
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )
