"""The configuration's group arithmetic inside the kernels, joint by joint: q ⊕ θ (the
exponential of SE(3) for a free flyer, of SE(2) for a planar joint, q + θ for a joint of one
degree of freedom) and the inverse differential of exp that the Runge–Kutta–Munthe-Kaas stages
take: the compiled rollout's, and robot.configuration.integrate's (integrated, a batch of
joints' configurations at once). sim.lie_integrators computes the same dexp⁻¹ in numpy.
"""

import math

import numpy as np

from robodyn_ros.dynamics.arrays import FloatArray, PackedTree
from robodyn_ros.dynamics.jit import kernel, kernel_helper, routine
from robodyn_ros.dynamics.spatial import free_flyer_motion
from robodyn_ros.dynamics.tree import CONTINUED, FREE_FLYER, PLANAR, configuration_index, frame_axis

SMALL_ANGLE = 1e-4
"""Below this rotation angle (rad) the coefficients of exp and log are their Taylor series to
θ²: the closed forms divide by θ, and the first omitted term is below θ⁴/120 ≈ 1e-18."""


@routine
def integrate_configuration(tree: PackedTree, q: FloatArray, theta: FloatArray,
                            out: FloatArray) -> None:
    """out (nq) = q ⊕ θ for θ (nv) a motion in each joint's own frame; out may be q. Compiled
    once on its own (routine), as dexp_inverse: each is called a few times a step."""
    for i in range(tree.shape[0]):
        axis, k = frame_axis(tree, i), configuration_index(tree, i)
        if axis == FREE_FLYER:
            free_flyer_step(q, k, theta, i, out)
        elif axis == PLANAR:
            planar_step(q, k, theta, i, out)
        elif axis != CONTINUED:
            out[k] = q[k] + theta[i]


def integrated(codes: np.ndarray, q_index: np.ndarray, v_index: np.ndarray, q: np.ndarray,
               theta: np.ndarray) -> np.ndarray:
    """q ⊕ θ of integrate_joints for configurations (..., nq) and motions (..., nv) whose batch
    shapes broadcast, as float64 (..., nq)."""
    shape = np.broadcast_shapes(q.shape[:-1], theta.shape[:-1])
    Q = np.ascontiguousarray(np.broadcast_to(q, (*shape, q.shape[-1])), dtype=float)
    THETA = np.ascontiguousarray(np.broadcast_to(theta, (*shape, theta.shape[-1])), dtype=float)
    Q, THETA = Q.reshape(-1, q.shape[-1]), THETA.reshape(-1, theta.shape[-1])
    out = Q.copy()
    integrate_joints(codes, q_index, v_index, Q, THETA, out)
    return out.reshape(*shape, q.shape[-1])


@kernel
def integrate_joints(codes, q_index, v_index, q, theta, out):
    """out = q ⊕ θ for configurations q (B, nq) and motions θ (B, nv) of one shape, joint by
    joint as integrate_configuration, the joints given by their codes (FREE_FLYER, PLANAR, or
    0 for one degree of freedom) and where each starts in q and in θ (J,): a robot's layout
    (configuration.integrate), which a MimicRobot's independent joints are too."""
    for b in range(q.shape[0]):
        for j in range(codes.shape[0]):
            k, i = q_index[j], v_index[j]
            if codes[j] == FREE_FLYER:
                free_flyer_step(q[b], k, theta[b], i, out[b])
            elif codes[j] == PLANAR:
                planar_step(q[b], k, theta[b], i, out[b])
            else:
                out[b, k] = q[b, k] + theta[b, i]


@kernel_helper
def free_flyer_step(q, k, theta, i, out):
    """out[k:k+7] = q[k:k+7] exp6(θ[i:i+6]) (free_flyer.integrate's): the position moved by
    R V(ω) v, V = 1 + (1 − cos θ)/θ² [ω]× + (θ − sin θ)/θ³ [ω]×², and the quaternion turned by
    exp3(ω) with w ≥ 0, normalised."""
    vx, vy, vz = theta[i], theta[i + 1], theta[i + 2]
    wx, wy, wz = theta[i + 3], theta[i + 4], theta[i + 5]
    angle = math.sqrt(wx * wx + wy * wy + wz * wz)
    if angle < SMALL_ANGLE:
        half_sinc = 0.5 - angle * angle / 48.0
        c2 = 1.0 / 6.0 - angle * angle / 120.0
    else:
        half_sinc = math.sin(angle / 2.0) / angle
        c2 = (angle - math.sin(angle)) / angle**3
    sx, sy, sz, sw = half_sinc * wx, half_sinc * wy, half_sinc * wz, math.cos(angle / 2.0)
    if sw < 0.0:
        sx, sy, sz, sw = -sx, -sy, -sz, -sw
    c1 = 2.0 * half_sinc * half_sinc  # (1 − cos θ)/θ², without cancellation
    ax, ay, az = wy * vz - wz * vy, wz * vx - wx * vz, wx * vy - wy * vx  # ω × v
    bx, by, bz = wy * az - wz * ay, wz * ax - wx * az, wx * ay - wy * ax  # ω × (ω × v)
    tx, ty, tz = vx + c1 * ax + c2 * bx, vy + c1 * ay + c2 * by, vz + c1 * az + c2 * bz
    X = free_flyer_motion(q, k)  # R row-major, then p
    px = X[9] + X[0] * tx + X[1] * ty + X[2] * tz
    py = X[10] + X[3] * tx + X[4] * ty + X[5] * tz
    pz = X[11] + X[6] * tx + X[7] * ty + X[8] * tz
    x, y, z, w = q[k + 3], q[k + 4], q[k + 5], q[k + 6]
    # q ⊗ step: [w s_u + s_w u + u × s_u, w s_w − u · s_u]
    nx = w * sx + sw * x + (y * sz - z * sy)
    ny = w * sy + sw * y + (z * sx - x * sz)
    nz = w * sz + sw * z + (x * sy - y * sx)
    nw = w * sw - (x * sx + y * sy + z * sz)
    norm = math.sqrt(nx * nx + ny * ny + nz * nz + nw * nw)
    out[k], out[k + 1], out[k + 2] = px, py, pz
    out[k + 3], out[k + 4], out[k + 5], out[k + 6] = nx / norm, ny / norm, nz / norm, nw / norm


@kernel_helper
def planar_step(q, k, theta, i, out):
    """out[k:k+4] = q[k:k+4] exp(θ[i:i+3]) on SE(2) (configuration.integrate's): the
    position moved by R V(θ) (vx, vy), V = [[sin θ/θ, −(1 − cos θ)/θ], [(1 − cos θ)/θ,
    sin θ/θ]], and the angle turned by θ = ω."""
    vx, vy, turn = theta[i], theta[i + 1], theta[i + 2]
    if abs(turn) < SMALL_ANGLE:
        sinc = 1.0 - turn * turn / 6.0
        cosc = turn / 2.0 - turn**3 / 24.0
    else:
        sinc = math.sin(turn) / turn
        cosc = 2.0 * math.sin(turn / 2.0) ** 2 / turn  # (1 − cos θ)/θ, without cancellation
    step_x, step_y = sinc * vx - cosc * vy, cosc * vx + sinc * vy
    norm = math.hypot(q[k + 2], q[k + 3])
    c, s = q[k + 2] / norm, q[k + 3] / norm
    turn_c, turn_s = math.cos(turn), math.sin(turn)
    out[k] = q[k] + (c * step_x - s * step_y)
    out[k + 1] = q[k + 1] + (s * step_x + c * step_y)
    out[k + 2], out[k + 3] = c * turn_c - s * turn_s, s * turn_c + c * turn_s


@routine
def dexp_inverse(tree: PackedTree, theta: FloatArray, v: FloatArray, out: FloatArray) -> None:
    """out (nv) = θ̇ of q ⊕ θ moving at the velocity v: v + ½[θ, v] + (1/12)[θ, [θ, v]] on the
    rows of each free flyer and planar joint (its se(3) or se(2) bracket), v on the others
    (sim.lie_integrators.dexp_inverse says why this sign)."""
    for i in range(tree.shape[0]):
        out[i] = v[i]
    for i in range(tree.shape[0]):
        axis = frame_axis(tree, i)
        if axis == FREE_FLYER:
            t = (theta[i], theta[i + 1], theta[i + 2], theta[i + 3], theta[i + 4], theta[i + 5])
            u = (v[i], v[i + 1], v[i + 2], v[i + 3], v[i + 4], v[i + 5])
            once = bracket(t, u)
            twice = bracket(t, once)
            for r in range(6):
                out[i + r] += 0.5 * once[r] + twice[r] / 12.0
        elif axis == PLANAR:  # se(2) as the (vx, vy, ω_z) part of se(3)
            t = (theta[i], theta[i + 1], 0.0, 0.0, 0.0, theta[i + 2])
            u = (v[i], v[i + 1], 0.0, 0.0, 0.0, v[i + 2])
            once = bracket(t, u)
            twice = bracket(t, once)
            for r, row in ((0, 0), (1, 1), (2, 5)):
                out[i + r] += 0.5 * once[row] + twice[row] / 12.0


@kernel_helper
def bracket(a, b):
    """[a, b] of se(3) in [linear; angular] order: [a_ω × b_lin + a_lin × b_ω; a_ω × b_ω]."""
    return (
        a[4] * b[2] - a[5] * b[1] + a[1] * b[5] - a[2] * b[4],
        a[5] * b[0] - a[3] * b[2] + a[2] * b[3] - a[0] * b[5],
        a[3] * b[1] - a[4] * b[0] + a[0] * b[4] - a[1] * b[3],
        a[4] * b[5] - a[5] * b[4],
        a[5] * b[3] - a[3] * b[5],
        a[3] * b[4] - a[4] * b[3],
    )
