"""Inverse dynamics by the recursive Newton–Euler algorithm (RNEA), and what it gives: bias
forces C(q, q̇)q̇ + g(q) and gravity torques g(q). Featherstone, RBDA, Table 5.1.
"""

import numpy as np

from robodyn_ros.dynamics.jit import kernel, kernel_helper
from robodyn_ros.dynamics.spatial import (
    dot6,
    force_to_parent,
    inertia_times,
    joint_pose,
    motion_cross_force,
    motion_cross_motion,
    motion_to_child,
)
from robodyn_ros.dynamics.tree import INERTIA, POSE, SUBSPACE, WIDTH, parent_of


@kernel_helper
def rnea(tree, gravity, q, qd, qdd, f_ext, tau, X, v, a, f):
    """τ = M(q) q̈ + C(q, q̇) q̇ + g(q) − Σ Jᵢᵀ f_ext,i for one state, written into tau.

    Each body's quantities are in its own frame (RBDA Table 5.1). f_ext is None or (n, 6): a
    wrench on each body in the body frame about its origin. X (n x 12: pose of each body in its
    parent), v, a, f (n x 6) are workspaces.
    """
    vJ, h, tmp, a_root = np.empty(6), np.empty(6), np.empty(6), np.zeros(6)
    a_root[:3] = -gravity  # the base accelerates upwards at g: every body feels gravity

    # forward pass: velocities, accelerations and the net force on each body
    for i in range(q.shape[0]):
        S, body, lam = tree[i, SUBSPACE:INERTIA], tree[i, INERTIA:WIDTH], parent_of(tree, i)
        joint_pose(tree[i], q[i], X[i])
        if lam >= 0:
            motion_to_child(X[i], v[lam], v[i])
            motion_to_child(X[i], a[lam], a[i])
        else:
            v[i, :] = 0.0
            motion_to_child(X[i], a_root, a[i])
        for k in range(6):
            vJ[k] = S[k] * qd[i]
            v[i, k] += vJ[k]
        motion_cross_motion(v[i], vJ, tmp)
        for k in range(6):
            a[i, k] += S[k] * qdd[i] + tmp[k]
        inertia_times(body, a[i], f[i])
        inertia_times(body, v[i], h)
        motion_cross_force(v[i], h, tmp)
        for k in range(6):
            f[i, k] += tmp[k] - (f_ext[i, k] if f_ext is not None else 0.0)

    # backward pass: joint torques; each body's force is carried by its parent
    for i in range(q.shape[0] - 1, -1, -1):
        tau[i] = dot6(tree[i, SUBSPACE:INERTIA], f[i])
        lam = parent_of(tree, i)
        if lam >= 0:
            force_to_parent(X[i], f[i], tmp)
            for k in range(6):
                f[lam, k] += tmp[k]


@kernel
def inverse_dynamics(tree, gravity, q, qd, qdd, f_ext, tau):
    """RNEA for a state (n,) or a batch (B, n); f_ext None or (..., n, 6); tau like q."""
    Q, QD, QDD = np.atleast_2d(q), np.atleast_2d(qd), np.atleast_2d(qdd)
    B, n = Q.shape
    TAU = tau.reshape((B, n))
    X, v, a, f = np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6))
    if f_ext is None:
        for b in range(B):
            rnea(tree, gravity, Q[b], QD[b], QDD[b], None, TAU[b], X, v, a, f)
    else:
        F = f_ext.reshape((B, n, 6))
        for b in range(B):
            rnea(tree, gravity, Q[b], QD[b], QDD[b], F[b], TAU[b], X, v, a, f)


@kernel
def bias_forces(tree, gravity, q, qd, tau):
    """C(q, q̇) q̇ + g(q): RNEA with q̈ = 0, for a state or a batch."""
    inverse_dynamics(tree, gravity, q, qd, np.zeros(q.shape), None, tau)


@kernel
def gravity_torques(tree, gravity, q, tau):
    """g(q): RNEA with q̇ = q̈ = 0, for a state or a batch."""
    zero = np.zeros(q.shape)
    inverse_dynamics(tree, gravity, q, zero, zero, None, tau)
