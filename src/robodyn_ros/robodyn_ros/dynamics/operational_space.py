"""Operational-space dynamics of task frames by the dense route (Khatib 1987): M⁻¹ by the O(n²)
recursion, the frame Jacobians, Λ⁻¹ = J M⁻¹ Jᵀ and its inverse; and what an operational-space
controller needs besides: J̄, μ, p and J̇ q̇. The reference for faster methods.
"""

import numpy as np

from robodyn_ros.dynamics.inertia_inverse import minv_aba, minv_workspace
from robodyn_ros.dynamics.inverse_dynamics import rnea
from robodyn_ros.dynamics.jit import kernel, kernel_helper
from robodyn_ros.dynamics.kinematics import frame_jacobian_into, frame_pose_into
from robodyn_ros.dynamics.spatial import (
    add3,
    add6,
    cross,
    motion_cross_motion,
    scale6,
    store,
    vector6,
)
from robodyn_ros.dynamics.tree import FRAME_BODY, POSE, parent_of

# Λ⁻¹ with a condition number above this counts as singular: the frame's Jacobian has lost
# rank, and Λ does not exist there.
SINGULAR_CONDITION = 1e12


@kernel_helper
def norm1(A):
    """The 1-norm of a matrix: its largest absolute column sum."""
    return np.abs(A).sum(axis=0).max()


@kernel_helper
def invert_task_inertia(Lambda_inv, out):
    """out = Λ = (Λ⁻¹)⁻¹, refusing a Λ⁻¹ that is singular to working precision."""
    out[:, :] = np.linalg.inv(Lambda_inv)
    if not norm1(Lambda_inv) * norm1(out) < SINGULAR_CONDITION:
        raise np.linalg.LinAlgError("J M⁻¹ Jᵀ is singular")


@kernel
def operational_space_inertia(tree, frame, q, inverse, out):
    """Λ (or Λ⁻¹ when `inverse`) of one frame (a 13-row), world-aligned axes at the frame
    origin, for a state (n,) or a batch (B, n); out is (..., 6, 6)."""
    Q = np.atleast_2d(q)
    B, n = Q.shape
    OUT = out.reshape((B, 6, 6))
    workspace = minv_workspace(tree, n)
    _, X_world, S_world, _, _, _, _, _ = workspace
    Minv, J, pose = np.empty((n, n)), np.empty((6, n)), np.empty((4, 4))
    for b in range(B):
        minv_aba(tree, Q[b], Minv, workspace)
        frame_pose_into(X_world, frame, pose)
        frame_jacobian_into(tree, S_world, int(frame[FRAME_BODY]), pose[:3, 3], J)
        Lambda_inv = J @ (Minv @ J.T)
        if inverse:
            OUT[b] = Lambda_inv
        else:
            invert_task_inertia(Lambda_inv, OUT[b])


@kernel_helper
def velocity_product_accelerations(tree, S_world, qd, v, a):
    """Forward pass: each body's spatial velocity v[i] and its acceleration at q̈ = 0, a[i]
    (n x 6, world axes about the world origin): v_i = v_λ + S_i q̇_i, a_i = a_λ + v_λ × S_i q̇_i
    (the world-frame form of RBDA eq. 7.4 with Ṡ_i = v_i × S_i)."""
    zero = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for i in range(qd.shape[0]):
        lam = parent_of(tree, i)
        v_parent = vector6(v, lam) if lam >= 0 else zero
        a_parent = vector6(a, lam) if lam >= 0 else zero
        vJ = scale6(qd[i], vector6(S_world, i))
        store(v, i, add6(v_parent, vJ))
        store(a, i, add6(a_parent, motion_cross_motion(v_parent, vJ)))


@kernel_helper
def classical_acceleration_into(v, a, body, origin, out):
    """out (6,) = [a_p; α], the classical acceleration of the point p = origin fixed to `body`
    (zero for a frame on the root): a_p = a_O + α × p + ω × (v_O + ω × p), from the body's
    spatial velocity [v_O; ω] and acceleration [a_O; α] about the world origin O."""
    if body < 0:
        out[:] = 0.0
        return
    w, alpha = (v[body, 3], v[body, 4], v[body, 5]), (a[body, 3], a[body, 4], a[body, 5])
    v_p = add3((v[body, 0], v[body, 1], v[body, 2]), cross(w, origin))
    a_p = add3(add3((a[body, 0], a[body, 1], a[body, 2]), cross(alpha, origin)), cross(w, v_p))
    out[0], out[1], out[2] = a_p
    out[3], out[4], out[5] = alpha


@kernel_helper
def damped_task_inertia(Lambda_inv, threshold, damping, Lambda, info):
    """Λ from Λ⁻¹ = V diag(s) Vᵀ, never NaN or infinite. With s_max the largest eigenvalue,
    the ones ≥ threshold · s_max are inverted exactly; when the smallest is below that,
    every direction gets s / (s² + λ²) with λ² = (damping · s_max)² (1 − (s_min / (threshold ·
    s_max))²): damped least squares with variable damping (Nakamura & Hanafusa 1986;
    Maciejewski & Klein 1988), continuous at the threshold and zero along a lost direction.
    info = [rank: eigenvalues ≥ threshold · s_max, condition number s_max / s_min]."""
    s, V = np.linalg.eigh(0.5 * (Lambda_inv + Lambda_inv.T))
    s_max = max(s[-1], 0.0)
    cutoff = threshold * s_max
    s_min = max(s[0], 0.0)
    if s_max > 0.0 and s_min >= cutoff:
        inverse = 1.0 / s
    else:
        lam2 = (damping * s_max) ** 2 * (1.0 - (s_min / cutoff) ** 2) if cutoff > 0.0 else 1.0
        inverse = np.maximum(s, 0.0) / (s * s + lam2)
    Lambda[:, :] = (V * inverse) @ V.T
    info[0] = np.sum(s >= cutoff) if s_max > 0.0 else 0
    info[1] = s_max / s_min if s_min > 0.0 else np.inf


@kernel
def operational_space_dynamics(
    tree, gravity, frames, q, qd, threshold, damping,
    J, Lambda_inv, Lambda, Jbar, mu, p, Jdot_qd, info,
):
    """The operational-space dynamics of the stacked task of F frames (F x 13 rows), m = 6F
    rows, world-aligned axes at each frame origin, for a state (n,) or a batch (B, n):
    J (m x n), Λ⁻¹ = J M⁻¹ Jᵀ, Λ (damped_task_inertia), J̄ = M⁻¹ Jᵀ Λ (n x m),
    μ = J̄ᵀ C q̇ − Λ J̇ q̇, p = J̄ᵀ g and J̇ q̇ (m,) (Khatib 1987), info (2,)."""
    Q, QD = np.atleast_2d(q), np.atleast_2d(qd)
    B, n = Q.shape
    m = 6 * frames.shape[0]
    OUT_J, OUT_JBAR = J.reshape((B, m, n)), Jbar.reshape((B, n, m))
    OUT_LI, OUT_L = Lambda_inv.reshape((B, m, m)), Lambda.reshape((B, m, m))
    OUT_MU, OUT_P, OUT_JDQD = mu.reshape((B, m)), p.reshape((B, m)), Jdot_qd.reshape((B, m))
    OUT_INFO = info.reshape((B, 2))
    workspace = minv_workspace(tree, n)
    _, X_world, S_world, _, _, _, _, _ = workspace
    Minv, pose, zero = np.empty((n, n)), np.empty((4, 4)), np.zeros(n)
    X, v, a, f = np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6))
    bias, g = np.empty(n), np.empty(n)
    for b in range(B):
        minv_aba(tree, Q[b], Minv, workspace)
        velocity_product_accelerations(tree, S_world, QD[b], v, a)
        for k in range(frames.shape[0]):
            body = int(frames[k, FRAME_BODY])
            frame_pose_into(X_world, frames[k], pose)
            origin = (pose[0, 3], pose[1, 3], pose[2, 3])
            frame_jacobian_into(tree, S_world, body, pose[:3, 3], OUT_J[b, 6 * k : 6 * k + 6])
            classical_acceleration_into(v, a, body, origin, OUT_JDQD[b, 6 * k : 6 * k + 6])
        rnea(tree, gravity, Q[b], QD[b], zero, None, bias, X, v, a, f)
        rnea(tree, gravity, Q[b], zero, zero, None, g, X, v, a, f)
        MinvJT = Minv @ OUT_J[b].T
        OUT_LI[b] = OUT_J[b] @ MinvJT
        damped_task_inertia(OUT_LI[b], threshold, damping, OUT_L[b], OUT_INFO[b])
        OUT_JBAR[b] = MinvJT @ OUT_L[b]
        OUT_P[b] = OUT_JBAR[b].T @ g
        OUT_MU[b] = OUT_JBAR[b].T @ (bias - g) - OUT_L[b] @ OUT_JDQD[b]
