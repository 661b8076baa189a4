"""Rotations: the log map of SO(3)."""

import math

from robodyn_ros.dynamics.arrays import FloatArray
from robodyn_ros.dynamics.jit import kernel_helper
from robodyn_ros.dynamics.spatial import dot3


@kernel_helper
def log_so3(R: FloatArray) -> tuple[float, float, float]:
    """The rotation vector θ a (a tuple) of a rotation matrix R (3x3; angle θ ∈ [0, π], unit
    axis a)."""
    w = (0.5 * (R[2, 1] - R[1, 2]), 0.5 * (R[0, 2] - R[2, 0]), 0.5 * (R[1, 0] - R[0, 1]))
    cos = min(1.0, max(-1.0, 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)))
    sin = math.sqrt(dot3(w, w))  # w = sin θ · a
    theta = math.atan2(sin, cos)
    if theta < 1e-6:  # θ / sin θ = 1 + θ²/6 + ...
        s = 1.0 + theta * theta / 6.0
    elif math.pi - theta > 1e-4:
        s = theta / sin
    else:
        axis = axis_near_pi(R, cos, w)
        return theta * axis[0], theta * axis[1], theta * axis[2]
    return s * w[0], s * w[1], s * w[2]


@kernel_helper
def axis_near_pi(R, cos, w):
    """The unit axis a of R near θ = π, where w = sin θ · a is too small to give it: the
    symmetric part (R + Rᵀ)/2 = cos θ 1 + (1 − cos θ) a aᵀ gives a aᵀ; its largest diagonal
    entry's column is the best-conditioned multiple of a, and w gives a's sign."""
    diagonal = (R[0, 0], R[1, 1], R[2, 2])
    k = 0 if diagonal[0] >= diagonal[1] and diagonal[0] >= diagonal[2] else (
        1 if diagonal[1] >= diagonal[2] else 2)
    column = (0.5 * (R[0, k] + R[k, 0]), 0.5 * (R[1, k] + R[k, 1]), 0.5 * (R[2, k] + R[k, 2]))
    column = (column[0] - (cos if k == 0 else 0.0), column[1] - (cos if k == 1 else 0.0),
              column[2] - (cos if k == 2 else 0.0))
    length = math.sqrt(dot3(column, column))
    sign = -1.0 if dot3(column, w) < 0.0 else 1.0
    return sign * column[0] / length, sign * column[1] / length, sign * column[2] / length
