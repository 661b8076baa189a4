"""Configurations of any robot: their layout, neutral, integrate and difference, joint by joint.

A configuration q has nq numbers and a velocity v nv (model.MULTI_DOF_JOINTS): a joint of one
degree of freedom has one of each; a free flyer [x y z, qx qy qz qw] and [v; ω] in its joint
frame (robodyn_ros.robot.free_flyer); a planar joint [x, y, cos θ, sin θ] and (vx, vy, ω) in its
joint frame. ``integrate`` and ``difference`` are Pinocchio's: q ⊕ v = q exp(v) joint by joint
(the exponential of SE(3) or SE(2), q + v for the others) and q1 ⊖ q0 its inverse. Every
function takes a leading batch shape (...) and returns float64, and the robot's layout: its
joints in q order (model.configuration_joints, or a MimicRobot's independent ones).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

import robodyn_ros.robot.free_flyer as free_flyer
from robodyn_ros.dynamics.lie_group import SMALL_ANGLE, integrated
from robodyn_ros.dynamics.tree import FREE_FLYER, PLANAR, UNIT_TOLERANCE
from robodyn_ros.model.model import MULTI_DOF_JOINTS, ConfigurationJoint

Layout = tuple[ConfigurationJoint, ...]
JOINT_CODES = {"floating": FREE_FLYER, "planar": PLANAR}  # lie_group's; 0 for the others



def configuration_size(joints: Layout) -> int:
    """nq of a layout."""
    return joints[-1].q.stop if joints else 0


def velocity_size(joints: Layout) -> int:
    """nv of a layout."""
    return joints[-1].v.stop if joints else 0


def configuration_description(joints: Layout) -> str:
    """What q holds, in words, for an error: the multi-DOF joints' layouts and the others'."""
    parts = []
    for joint in joints:
        if joint.kind == "floating":
            parts.append(f"q[{joint.q.start}:{joint.q.stop}] = free flyer '{joint.name}' "
                         "[x y z, qx qy qz qw]")
        elif joint.kind == "planar":
            parts.append(f"q[{joint.q.start}:{joint.q.stop}] = planar '{joint.name}' "
                         "[x, y, cos θ, sin θ]")
    singles = sum(joint.kind not in MULTI_DOF_JOINTS for joint in joints)
    return "; ".join(parts) + f"; and one value for each of the {singles} other joints"


def check_configuration(joints: Layout, q: np.ndarray, name: str = "q") -> None:
    """Raise ValueError where a multi-DOF joint's rotation in q is not of unit norm.

    Args:
        joints: the robot's layout.
        q: (..., nq) configurations.
        name: the argument's name, for the error.

    Raises:
        ValueError: a finite quaternion or (cos θ, sin θ) of a norm off 1 by more than
            UNIT_TOLERANCE, naming the joint and the first such state.
    """
    for joint in joints:
        if joint.kind == "floating":
            rotation = q[..., joint.q.start + 3:joint.q.stop]
        elif joint.kind == "planar":
            rotation = q[..., joint.q.start + 2:joint.q.stop]
        else:
            continue
        norm = np.linalg.norm(rotation, axis=-1)
        bad = np.isfinite(norm) & (np.abs(norm - 1.0) > UNIT_TOLERANCE)
        if bad.any():
            state = np.argwhere(np.atleast_1d(bad))[0]
            what = "quaternion [qx qy qz qw]" if joint.kind == "floating" \
                else "[cos θ, sin θ]"
            where = f" of state {tuple(int(k) for k in state)}" if q.ndim > 1 else ""
            raise ValueError(
                f"{name}: joint '{joint.name}': its {what}{where} has norm "
                f"{np.atleast_1d(norm)[tuple(state)]:.9g}, not 1; normalise it (integrate "
                "keeps it so)"
            )


def neutral(joints: Layout) -> np.ndarray:
    """The neutral configuration (pinocchio.neutral): zero, with the identity rotation of
    every multi-DOF joint."""
    q = np.zeros(configuration_size(joints))
    for joint in joints:
        if joint.kind == "floating":
            q[joint.q] = free_flyer.NEUTRAL
        elif joint.kind == "planar":
            q[joint.q] = (0.0, 0.0, 1.0, 0.0)
    return q


def neutral_within_limits(joints: Layout, lower: np.ndarray, upper: np.ndarray
                          ) -> np.ndarray:
    """neutral, each joint of one degree of freedom moved to the nearest point inside its
    position limits lower and upper (nv,)."""
    q = neutral(joints)
    for joint in joints:
        if joint.kind not in MULTI_DOF_JOINTS:
            q[joint.q] = np.clip(0.0, lower[joint.v], upper[joint.v])
    return q


def integrate(joints: Layout, q: ArrayLike, v: ArrayLike) -> np.ndarray:
    """q ⊕ v: the configuration reached from q by the velocity v held for unit time.

    Args:
        joints: the robot's layout.
        q: (..., nq) configurations.
        v: (..., nv) velocities; the batch shapes broadcast.

    Returns:
        (..., nq).

    Raises:
        ValueError: the last axes are not nq and nv.
    """
    q, v = _configurations(joints, q, "q"), _velocities(joints, v, "v")
    codes = np.array([JOINT_CODES.get(joint.kind, 0) for joint in joints], dtype=np.int64)
    return integrated(codes, np.array([joint.q.start for joint in joints], dtype=np.int64),
                      np.array([joint.v.start for joint in joints], dtype=np.int64), q, v)


def difference(joints: Layout, q0: ArrayLike, q1: ArrayLike) -> np.ndarray:
    """q1 ⊖ q0: the velocity v with integrate(q0, v) = q1 (pinocchio.difference); a
    continuous joint turns the shorter way, by at most π.

    Args:
        joints: the robot's layout.
        q0: (..., nq) configurations, the start.
        q1: (..., nq) configurations, the end; the batch shapes broadcast.

    Returns:
        (..., nv).

    Raises:
        ValueError: a last axis is not nq.
    """
    start, end = _configurations(joints, q0, "q0"), _configurations(joints, q1, "q1")
    out = np.empty((*np.broadcast_shapes(start.shape[:-1], end.shape[:-1]),
                    velocity_size(joints)))
    for joint in joints:
        if joint.kind == "floating":
            out[..., joint.v] = free_flyer.difference(start[..., joint.q], end[..., joint.q])
        elif joint.kind == "planar":
            out[..., joint.v] = _planar_difference(start[..., joint.q], end[..., joint.q])
        elif joint.kind == "continuous":  # angles a turn apart are one configuration
            turn = end[..., joint.q] - start[..., joint.q]
            out[..., joint.v] = np.remainder(turn + np.pi, 2.0 * np.pi) - np.pi
        else:
            out[..., joint.v] = end[..., joint.q] - start[..., joint.q]
    return out


def _planar_difference(q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
    """SE(2): log(q0⁻¹ q1), the inverse of integrate's exp (lie_group.planar_step), θ in
    (−π, π]."""
    c0, s0 = _unit_angle(q0)
    c1, s1 = _unit_angle(q1)
    theta = np.arctan2(c0 * s1 - s0 * c1, c0 * c1 + s0 * s1)
    dx, dy = q1[..., 0] - q0[..., 0], q1[..., 1] - q0[..., 1]
    p = np.stack([c0 * dx + s0 * dy, -s0 * dx + c0 * dy], axis=-1)  # in q0's frame
    small = np.abs(theta) < SMALL_ANGLE
    theta_large = np.where(small, 1.0, theta)
    # V⁻¹ = [[a, b], [−b, a]] with a = (θ/2) cot(θ/2), b = θ/2
    a = np.where(small, 1.0 - theta**2 / 12.0,
                 theta_large / 2.0 / np.tan(theta_large / 2.0))
    b = theta / 2.0
    linear = np.stack([a * p[..., 0] + b * p[..., 1], -b * p[..., 0] + a * p[..., 1]], axis=-1)
    return np.concatenate([linear, theta[..., None]], axis=-1)


def _unit_angle(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cos θ, sin θ) of a planar configuration, normalised."""
    norm = np.hypot(q[..., 2], q[..., 3])
    return q[..., 2] / norm, q[..., 3] / norm


def _configurations(joints: Layout, q: ArrayLike, name: str) -> np.ndarray:
    return _trailing(q, configuration_size(joints), name, "configuration")


def _velocities(joints: Layout, v: ArrayLike, name: str) -> np.ndarray:
    return _trailing(v, velocity_size(joints), name, "velocity")


def _trailing(values: ArrayLike, size: int, name: str, what: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim == 0 or array.shape[-1] != size:
        raise ValueError(f"{name}: expected shape (..., {size}), a {what}; got {array.shape}")
    return array
