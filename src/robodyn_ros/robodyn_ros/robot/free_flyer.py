"""Configuration arithmetic of a floating base, in Pinocchio's FreeFlyer convention.

A base configuration is 7 numbers ``[x y z, qx qy qz qw]``: the position of the base frame
origin in the world and the quaternion of the base orientation (x y z w, as Pinocchio's
JointModelFreeFlyer q). A base velocity is 6 numbers ``[linear; angular]``, both in the base
frame (Pinocchio's local velocity). ``integrate`` and ``difference`` are the exp and log maps
of SE(3) on these: q ⊕ v = M(q) exp6(v) and q1 ⊖ q0 = log6(M(q0)⁻¹ M(q1)). Quaternions q and
−q are the same orientation, and only a quaternion's direction is read: any nonzero multiple of
a unit quaternion gives the same results. Every function takes a leading batch shape (...),
broadcast between its arguments, and returns float64.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from robodyn_ros.dynamics.lie_group import SMALL_ANGLE, integrated
from robodyn_ros.dynamics.tree import FREE_FLYER

# the layout of one free flyer, as lie_group.integrate_joints takes it
ONE_FREE_FLYER = np.array([FREE_FLYER], dtype=np.int64)
ZERO_INDEX = np.zeros(1, dtype=np.int64)

# The identity pose: at the world origin, not turned (pinocchio.neutral of a FreeFlyer).
NEUTRAL = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
NEUTRAL.flags.writeable = False



def rotation_matrix(quaternion: ArrayLike) -> np.ndarray:
    """Rotation matrix of a quaternion.

    Args:
        quaternion: (..., 4), x y z w; a nonzero multiple of a unit quaternion.

    Returns:
        (..., 3, 3), the rotation taking base coordinates to world coordinates.

    Raises:
        ValueError: the last axis is not 4.
    """
    x, y, z, w = np.moveaxis(_trailing(quaternion, (4,), "quaternion"), -1, 0)
    s = 2.0 / (x * x + y * y + z * z + w * w)  # R = 1 + s w [u]× + s [u]×², u = (x, y, z)
    rows = (
        (1.0 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)),
        (s * (x * y + z * w), 1.0 - s * (x * x + z * z), s * (y * z - x * w)),
        (s * (x * z - y * w), s * (y * z + x * w), 1.0 - s * (x * x + y * y)),
    )
    return np.stack([np.stack(row, axis=-1) for row in rows], axis=-2)


def quaternion_of(rotation: ArrayLike) -> np.ndarray:
    """Unit quaternion of a rotation matrix, by Shepperd's method (1978).

    Args:
        rotation: (..., 3, 3) rotation matrices.

    Returns:
        (..., 4), x y z w with w ≥ 0.

    Raises:
        ValueError: the last two axes are not 3 x 3.
    """
    R = _trailing(rotation, (3, 3), "rotation")
    r00, r11, r22 = R[..., 0, 0], R[..., 1, 1], R[..., 2, 2]
    # 4 q qᵀ from R; its largest diagonal entry (≥ 1, the four sum to 4) divides least
    four_qqT = np.stack([
        np.stack([1.0 + r00 - r11 - r22, R[..., 0, 1] + R[..., 1, 0],
                  R[..., 0, 2] + R[..., 2, 0], R[..., 2, 1] - R[..., 1, 2]], axis=-1),
        np.stack([R[..., 0, 1] + R[..., 1, 0], 1.0 - r00 + r11 - r22,
                  R[..., 1, 2] + R[..., 2, 1], R[..., 0, 2] - R[..., 2, 0]], axis=-1),
        np.stack([R[..., 0, 2] + R[..., 2, 0], R[..., 1, 2] + R[..., 2, 1],
                  1.0 - r00 - r11 + r22, R[..., 1, 0] - R[..., 0, 1]], axis=-1),
        np.stack([R[..., 2, 1] - R[..., 1, 2], R[..., 0, 2] - R[..., 2, 0],
                  R[..., 1, 0] - R[..., 0, 1], 1.0 + r00 + r11 + r22], axis=-1),
    ], axis=-2)
    k = np.argmax(np.diagonal(four_qqT, axis1=-2, axis2=-1), axis=-1)
    column = np.take_along_axis(four_qqT, k[..., None, None], axis=-1)[..., 0]  # 4 q_k q
    quaternion = column / np.linalg.norm(column, axis=-1, keepdims=True)
    w_positive: np.ndarray = np.where(quaternion[..., 3:] < 0.0, -quaternion, quaternion)
    return w_positive


def integrate(q_base: ArrayLike, v_base: ArrayLike) -> np.ndarray:
    """q ⊕ v: the configuration reached from q by the velocity v held for unit time.

    The pose M(q) exp6(v), as pinocchio.integrate of a FreeFlyer joint. Its quaternion is the
    one of the pair ±q′ on q's side (q · q′ ≥ 0), as Pinocchio chooses, normalised.

    Args:
        q_base: (..., 7) base configurations.
        v_base: (..., 6) base velocities, [linear; angular] in the base frame.

    Returns:
        (..., 7), the batch shapes of q_base and v_base broadcast.

    Raises:
        ValueError: the last axes are not 7 and 6, or the batch shapes do not broadcast.
    """
    q = _trailing(q_base, (7,), "q_base")
    v = _trailing(v_base, (6,), "v_base")
    return integrated(ONE_FREE_FLYER, ZERO_INDEX, ZERO_INDEX, q, v)


def difference(q0: ArrayLike, q1: ArrayLike) -> np.ndarray:
    """q1 ⊖ q0: the velocity v with integrate(q0, v) = q1, as pinocchio.difference.

    log6(M(q0)⁻¹ M(q1)) with the rotation angle in [0, π], the shorter of the two rotations
    (Pinocchio's log3); at exactly π either axis sign is an answer.

    Args:
        q0: (..., 7) base configurations, the start.
        q1: (..., 7) base configurations, the end.

    Returns:
        (..., 6), [linear; angular] in q0's base frame; the batch shapes broadcast.

    Raises:
        ValueError: a last axis is not 7, or the batch shapes do not broadcast.
    """
    start = _trailing(q0, (7,), "q0")
    end = _trailing(q1, (7,), "q1")
    turn = _multiply(start[..., 3:] * [-1.0, -1.0, -1.0, 1.0], end[..., 3:])  # q0⁻¹ ⊗ q1
    turn = np.where(turn[..., 3:] < 0.0, -turn, turn)  # the shorter rotation, θ ≤ π
    axis_part, c = turn[..., :3], turn[..., 3:]
    s = np.linalg.norm(axis_part, axis=-1, keepdims=True)  # (s, c) ∝ (sin(θ/2), cos(θ/2))
    theta = 2.0 * np.arctan2(s, c)
    small = theta < SMALL_ANGLE
    c_small = np.where(small, c, 1.0)  # each branch its own divisors, nonzero where it is taken
    s_large, theta_large = np.where(small, 1.0, s), np.where(small, 1.0, theta)
    # log3: ω = θ/s (x, y, z) of the turn; θ/s = 2 atan(s/c)/s = (2/c)(1 − (s/c)²/3 + …)
    ratio = np.where(small, 2.0 / c_small * (1.0 - (s / c_small) ** 2 / 3.0), theta / s_large)
    omega = ratio * axis_part
    # log6: v = V(ω)⁻¹ p, V⁻¹ = 1 − [ω]×/2 + β [ω]×², β = (1 − (θ/2) cot(θ/2))/θ²
    beta = np.where(small, 1.0 / 12.0 + theta**2 / 720.0,
                    (1.0 - theta / 2.0 * c / s_large) / theta_large**2)
    rotation = rotation_matrix(start[..., 3:])
    p = _rotate(np.swapaxes(rotation, -1, -2), end[..., :3] - start[..., :3])
    omega_x_p = np.cross(omega, p)
    linear = p - 0.5 * omega_x_p + beta * np.cross(omega, omega_x_p)
    return np.concatenate([linear, omega], axis=-1)


def _multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product a ⊗ b of x y z w quaternions: [a_w b_u + b_w a_u + a_u × b_u,
    a_w b_w − a_u · b_u]."""
    a_u, a_w, b_u, b_w = a[..., :3], a[..., 3:], b[..., :3], b[..., 3:]
    vector = a_w * b_u + b_w * a_u + np.cross(a_u, b_u)
    scalar = a_w * b_w - np.sum(a_u * b_u, axis=-1, keepdims=True)
    return np.concatenate([vector, scalar], axis=-1)


def _rotate(rotation: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """R x for stacks of matrices and vectors, as Σ_j R[:, j] x_j: elementwise, without the
    BLAS calls of matmul, so that a batch gives each row's answer to the bit."""
    rotated: np.ndarray = (rotation[..., :, 0] * vector[..., :1]
                           + rotation[..., :, 1] * vector[..., 1:2]
                           + rotation[..., :, 2] * vector[..., 2:])
    return rotated


def _trailing(values: ArrayLike, shape: tuple[int, ...], name: str) -> np.ndarray:
    """values as float64, or a ValueError when their last axes are not ``shape``."""
    array = np.asarray(values, dtype=np.float64)
    if array.shape[max(array.ndim - len(shape), 0):] != shape:
        raise ValueError(f"{name}: expected shape (..., {', '.join(map(str, shape))}); "
                         f"got {array.shape}")
    return array
