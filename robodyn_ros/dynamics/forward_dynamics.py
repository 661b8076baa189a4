"""Forward dynamics q̈ = M⁻¹(τ − C q̇ − g): the articulated-body algorithm (ABA) in world
coordinates (Featherstone, RBDA, Table 7.1), and the factored route through CRBA and LᵀDL.
"""

import numpy as np

from robodyn_ros.dynamics.factorization import factor_mass_matrix, ltdl_solve
from robodyn_ros.dynamics.inverse_dynamics import inverse_dynamics
from robodyn_ros.dynamics.jit import kernel, kernel_helper
from robodyn_ros.dynamics.kinematics import forward_kinematics
from robodyn_ros.dynamics.spatial import (
    dot6,
    force_to_parent,
    inertia_to_world,
    matvec6,
    motion_cross_force,
    motion_cross_motion,
)
from robodyn_ros.dynamics.tree import INERTIA, POSE, WIDTH, parent_of


@kernel_helper
def aba(tree, gravity, q, qd, tau, f_ext, qdd, X_world, S_world, v, c, pA, U, IA):
    """q̈ for one state, written into qdd; f_ext None or (n, 6) body-frame wrenches.

    Every quantity is in world axes about the world origin, so articulated inertias pass to
    the parent without a transform. X_world (n x 12), S_world, v, c (velocity-product
    accelerations, then accelerations), pA, U (n x 6) and IA (n x 6 x 6) are workspaces.
    """
    n = q.shape[0]
    forward_kinematics(tree, q, X_world, S_world)
    D, u, vJ, tmp = np.empty(n), np.empty(n), np.empty(6), np.empty(6)

    # forward pass: velocities, velocity-product accelerations c, rigid-body bias forces pA
    for i in range(n):
        lam = parent_of(tree, i)
        for k in range(6):
            vJ[k] = S_world[i, k] * qd[i]
            v[i, k] = vJ[k] + (v[lam, k] if lam >= 0 else 0.0)
        motion_cross_motion(v[i], vJ, c[i])
        inertia_to_world(X_world[i], tree[i, INERTIA:WIDTH], IA[i])
        matvec6(IA[i], v[i], tmp)
        motion_cross_force(v[i], tmp, pA[i])
        if f_ext is not None:
            force_to_parent(X_world[i], f_ext[i], tmp)
            for k in range(6):
                pA[i, k] -= tmp[k]

    # backward pass: articulated inertias IA and bias forces pA, handed to the parent
    for i in range(n - 1, -1, -1):
        matvec6(IA[i], S_world[i], U[i])
        D[i] = dot6(S_world[i], U[i])
        u[i] = tau[i] - dot6(S_world[i], pA[i])
        lam = parent_of(tree, i)
        if lam >= 0:
            for r in range(6):
                for k in range(6):
                    IA[i, r, k] -= U[i, r] * U[i, k] / D[i]
            matvec6(IA[i], c[i], tmp)
            for r in range(6):
                pA[lam, r] += pA[i, r] + tmp[r] + U[i, r] * u[i] / D[i]
                for k in range(6):
                    IA[lam, r, k] += IA[i, r, k]

    # forward pass: accelerations, the base accelerating upwards at g; c becomes a
    a = c
    for i in range(n):
        lam = parent_of(tree, i)
        for k in range(6):
            a[i, k] += a[lam, k] if lam >= 0 else (-gravity[k] if k < 3 else 0.0)
        qdd[i] = (u[i] - dot6(U[i], a[i])) / D[i]
        for k in range(6):
            a[i, k] += S_world[i, k] * qdd[i]


@kernel
def forward_dynamics(tree, gravity, q, qd, tau, f_ext, qdd):
    """ABA for a state (n,) or a batch (B, n); f_ext None or (..., n, 6); qdd like q."""
    Q, QD, TAU = np.atleast_2d(q), np.atleast_2d(qd), np.atleast_2d(tau)
    B, n = Q.shape
    QDD = qdd.reshape((B, n))
    X_world, S_world, v = np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, 6))
    c, pA, U, IA = np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6, 6))
    if f_ext is None:
        for b in range(B):
            aba(tree, gravity, Q[b], QD[b], TAU[b], None, QDD[b], X_world, S_world, v, c, pA, U, IA)
    else:
        F = f_ext.reshape((B, n, 6))
        for b in range(B):
            aba(tree, gravity, Q[b], QD[b], TAU[b], F[b], QDD[b], X_world, S_world, v, c, pA, U, IA)


@kernel
def forward_dynamics_factored(tree, gravity, q, qd, tau, f_ext, qdd):
    """q̈ = M⁻¹(τ − b), b from RNEA and M factored as LᵀDL (the "cholesky" method), for a
    state (n,) or a batch (B, n)."""
    Q, TAU = np.atleast_2d(q), np.atleast_2d(tau)
    B, n = Q.shape
    QDD = qdd.reshape((B, n))
    inverse_dynamics(tree, gravity, q, qd, np.zeros(q.shape), f_ext, qdd)  # b, into qdd
    X_world, S_world, Ic = np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, 6, 6))
    LD = np.empty((n, n))
    for b in range(B):
        factor_mass_matrix(tree, Q[b], LD, X_world, S_world, Ic)
        for i in range(n):
            QDD[b, i] = TAU[b, i] - QDD[b, i]
        ltdl_solve(LD, tree, QDD[b])
