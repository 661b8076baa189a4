"""Homogeneous transforms and spatial inertias, the small algebra the URDF parser needs.

Placements are 4x4 homogeneous transforms; spatial inertias are 6x6 in ``[linear; angular]``
order, about a frame origin and in that frame's axes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

# Eigenvalues of a rotational inertia within this of zero count as zero (kg·m²): relative to
# the largest moment, with an absolute floor for tensors that are rounding noise.
INERTIA_RTOL = 1e-9
INERTIA_ATOL = 1e-15
_TRIANGLE_RTOL = 1e-6
# Magnitudes past any robot, refused at load: they are typing or unit errors, and products of
# them (m·r²·q̇², the kernels' intermediates) would overflow or lose every digit. The heaviest
# machines called robots weigh tonnes (a 1,000 t bound leaves room for cranes and excavators);
# a 10 km lever or a 10⁹ kg·m² moment (1,000 t at 30 m) exceeds any of them. Below 1 ng a
# mass is not a part but a placeholder for none, which is 0.
MASS_BOUNDS = (1e-12, 1e6)  # kg: the smallest nonzero and the largest
MAX_INERTIA = 1e9  # kg·m², any entry
MAX_LENGTH = 1e4  # m, any coordinate


def rotation_from_rpy(rpy: Sequence[float]) -> np.ndarray:
    """Rotation of URDF's fixed-axis roll, pitch, yaw: ``Rz(yaw) @ Ry(pitch) @ Rx(roll)``."""
    roll, pitch, yaw = (float(angle) for angle in rpy)
    cr, sr = np.cos(roll), np.sin(roll)
    cp, sp = np.cos(pitch), np.sin(pitch)
    cy, sy = np.cos(yaw), np.sin(yaw)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def rotation_about_axis(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation by ``angle`` about the unit vector ``axis`` (Rodrigues' formula)."""
    k = skew(axis)
    rotation: np.ndarray = np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * (k @ k)
    return rotation


def homogeneous(rotation: np.ndarray, translation: ArrayLike) -> np.ndarray:
    """4x4 transform with the given rotation and translation."""
    transform = np.eye(4)
    transform[:3, :3] = rotation
    transform[:3, 3] = translation
    return transform


def pose_from_xyz_rpy(xyz: Sequence[float], rpy: Sequence[float]) -> np.ndarray:
    """4x4 transform of a URDF ``<origin xyz=... rpy=...>``."""
    return homogeneous(rotation_from_rpy(rpy), xyz)


def joint_transform(axis: np.ndarray, position: float, *, prismatic: bool) -> np.ndarray:
    """Motion of a one-degree-of-freedom joint at ``position``: a slide or a turn about ``axis``."""
    if prismatic:
        return homogeneous(np.eye(3), position * axis)
    return homogeneous(rotation_about_axis(axis, position), np.zeros(3))


def skew(v: Sequence[float] | np.ndarray) -> np.ndarray:
    """Cross-product matrix: ``skew(a) @ b == np.cross(a, b)``."""
    x, y, z = v
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def spatial_inertia(mass: float, com: np.ndarray, inertia_about_com: np.ndarray) -> np.ndarray:
    """6x6 inertia about the frame origin, ``[linear; angular]``, of a body with this mass,
    centre of mass ``com`` and rotational inertia about the centre of mass (frame axes)."""
    c = skew(com)
    inertia = np.empty((6, 6))
    inertia[:3, :3] = mass * np.eye(3)
    inertia[:3, 3:] = -mass * c
    inertia[3:, :3] = mass * c
    inertia[3:, 3:] = inertia_about_com - mass * (c @ c)
    return inertia


def placed_spatial_inertia(
    mass: float, com_pose: np.ndarray, inertia_in_com_axes: np.ndarray, placement: np.ndarray
) -> np.ndarray:
    """Spatial inertia of a link expressed in another frame.

    Args:
        mass: link mass, kg.
        com_pose: 4x4 pose of the link's inertial frame (URDF ``<inertial><origin>``) in the
            link frame.
        inertia_in_com_axes: 3x3 rotational inertia about the centre of mass, in the axes of
            the inertial frame.
        placement: 4x4 pose of the link frame in the frame the result is expressed in.
    """
    com_in_frame = placement @ com_pose
    rotation = com_in_frame[:3, :3]
    return spatial_inertia(mass, com_in_frame[:3, 3], rotation @ inertia_in_com_axes @ rotation.T)


def inertia_about_com(spatial: np.ndarray) -> np.ndarray:
    """The 3x3 rotational inertia about the centre of mass of a 6x6 spatial inertia about a
    frame origin: I_c = I_o + m [c]×[c]× (the rotational block itself when massless)."""
    mass = spatial[0, 0]
    if mass <= 0.0:
        return spatial[3:, 3:]
    skew_com = spatial[3:, :3] / mass
    inertia: np.ndarray = spatial[3:, 3:] + mass * (skew_com @ skew_com)
    return inertia


def principal_moments(inertia: np.ndarray) -> np.ndarray:
    """Eigenvalues of a symmetric 3x3 rotational inertia, ascending."""
    return np.linalg.eigvalsh(inertia)


def inertia_tolerance(moments: np.ndarray) -> float:
    """Principal moments within this of zero count as zero (kg·m²)."""
    tolerance: float = max(INERTIA_RTOL * np.abs(moments).max(), INERTIA_ATOL)
    return tolerance


def impossible_inertia(moments: np.ndarray) -> str:
    """What no rigid body can have in these principal moments (ascending, kg·m²): a negative
    one, or the largest above the sum of the other two; "" when a body can have them."""
    shown = ", ".join(f"{m:.6g}" for m in moments)
    tolerance = inertia_tolerance(moments)
    if moments[0] < -tolerance:
        return (f"is not positive semi-definite (principal moments {shown} kg·m²): no body has "
                "a negative moment of inertia")
    if moments[2] - (moments[0] + moments[1]) > max(_TRIANGLE_RTOL * moments[2], tolerance):
        return (f"has principal moments {shown} kg·m² that violate the triangle inequality "
                "(the largest exceeds the sum of the other two): no rigid body has this inertia")
    return ""
