"""Rotations: the log map of SO(3)."""

import math

import numpy as np

from robodyn_ros.dynamics.jit import kernel_helper


@kernel_helper
def log_so3(R):
    """The rotation vector θ a of a rotation matrix (angle θ ∈ [0, π], unit axis a)."""
    w = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])  # sin θ · a
    cos = min(1.0, max(-1.0, 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)))
    sin = math.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    theta = math.atan2(sin, cos)
    if theta < 1e-6:  # θ / sin θ = 1 + θ²/6 + ...
        return w * (1.0 + theta * theta / 6.0)
    if math.pi - theta > 1e-4:
        return w * (theta / sin)
    # near π: the symmetric part (R + Rᵀ)/2 = cos θ 1 + (1 − cos θ) a aᵀ gives a aᵀ
    B = (0.5 * (R + R.T) - cos * np.eye(3)) / (1.0 - cos)
    k = int(np.argmax(np.diag(B)))
    axis = B[:, k] / math.sqrt(max(B[k, k], 1e-300))
    axis = axis / np.linalg.norm(axis)
    if axis @ w < 0:  # the sign sin θ · a carries
        axis = -axis
    return theta * axis
