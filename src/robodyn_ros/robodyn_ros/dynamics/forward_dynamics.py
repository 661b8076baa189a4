"""Forward dynamics q̈ = M⁻¹(τ − C q̇ − g): the articulated-body algorithm (ABA) in world
coordinates (Featherstone, RBDA, Table 7.1), and the factored route through CRBA and LᵀDL.
"""

import numpy as np

from robodyn_ros.dynamics.factorization import factor_mass_matrix, ltdl_solve
from robodyn_ros.dynamics.inertia_matrix import crba_workspace
from robodyn_ros.dynamics.inverse_dynamics import inverse_dynamics
from robodyn_ros.dynamics.jit import kernel, kernel_helper
from robodyn_ros.dynamics.kinematics import forward_kinematics
from robodyn_ros.dynamics.spatial import (
    add6,
    dot6,
    force_to_parent,
    inertia_times,
    inertia_to_world,
    matrix_times,
    motion_cross_force,
    motion_cross_motion,
    pose_at,
    scale6,
    store,
    store_inertia_matrix,
    vector6,
)
from robodyn_ros.dynamics.tree import POSE, body_inertia, parent_of


@kernel_helper
def aba_workspace(n):
    """(X_world, S_world, v, c, pA, U, D, u, IA): what aba needs besides the state."""
    X_world, S_world, v = np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, 6))
    c, pA, U, IA = np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6, 6))
    return X_world, S_world, v, c, pA, U, np.empty(n), np.empty(n), IA


@kernel_helper
def aba(tree, gravity, q, qd, tau, f_ext, qdd, X_world, S_world, v, c, pA, U, D, u, IA):
    """q̈ for one state, written into qdd; f_ext None or (n, 6) body-frame wrenches.

    Every quantity is in world axes about the world origin, so articulated inertias pass to
    the parent without a transform. X_world (n x 12), S_world, v, c (velocity-product
    accelerations, then accelerations), pA, U (n x 6), D, u (n) and IA (n x 6 x 6) are
    workspaces.
    """
    n = q.shape[0]
    forward_kinematics(tree, q, X_world, S_world)

    # forward pass: velocities, velocity-product accelerations c, rigid-body bias forces pA
    for i in range(n):
        lam = parent_of(tree, i)
        X = pose_at(X_world, i, 0)
        vJ = scale6(qd[i], vector6(S_world, i))
        v_i = add6(vector6(v, lam), vJ) if lam >= 0 else vJ
        inertia = inertia_to_world(X, body_inertia(tree, i))
        pA_i = motion_cross_force(v_i, inertia_times(inertia, v_i))
        if f_ext is not None:
            pA_i = add6(pA_i, scale6(-1.0, force_to_parent(X, vector6(f_ext, i))))
        store(v, i, v_i)
        store(c, i, motion_cross_motion(v_i, vJ))
        store(pA, i, pA_i)
        store_inertia_matrix(IA, i, inertia)

    # backward pass: articulated inertias IA and bias forces pA, handed to the parent:
    # Ia = IA − U Uᵀ/D, pa = pA + Ia c + U u/D = pA + IA c + U (u − Uᵀc)/D
    for i in range(n - 1, -1, -1):
        S, pA_i = vector6(S_world, i), vector6(pA, i)
        U_i = matrix_times(IA, i, S)
        D[i], u[i] = dot6(S, U_i), tau[i] - dot6(S, pA_i)
        store(U, i, U_i)
        lam = parent_of(tree, i)
        if lam >= 0:
            c_i = vector6(c, i)
            pa = add6(pA_i, matrix_times(IA, i, c_i))
            pa = add6(pa, scale6((u[i] - dot6(U_i, c_i)) / D[i], U_i))
            store(pA, lam, add6(vector6(pA, lam), pa))
            for r in range(6):
                for k in range(6):
                    IA[lam, r, k] += IA[i, r, k] - U_i[r] * U_i[k] / D[i]

    # forward pass: accelerations, the base accelerating upwards at g; c becomes a
    a = c
    a_root = (-gravity[0], -gravity[1], -gravity[2], 0.0, 0.0, 0.0)
    for i in range(n):
        lam = parent_of(tree, i)
        a_i = add6(vector6(a, lam) if lam >= 0 else a_root, vector6(c, i))
        qdd[i] = (u[i] - dot6(vector6(U, i), a_i)) / D[i]
        store(a, i, add6(a_i, scale6(qdd[i], vector6(S_world, i))))


@kernel
def forward_dynamics(tree, gravity, q, qd, tau, f_ext, qdd):
    """ABA for a state (n,) or a batch (B, n); f_ext None or (..., n, 6); qdd like q."""
    Q, QD, TAU = np.atleast_2d(q), np.atleast_2d(qd), np.atleast_2d(tau)
    B, n = Q.shape
    QDD = qdd.reshape((B, n))
    X_world, S_world, v, c, pA, U, D, u, IA = aba_workspace(n)
    if f_ext is None:
        for b in range(B):
            aba(tree, gravity, Q[b], QD[b], TAU[b], None, QDD[b],
                X_world, S_world, v, c, pA, U, D, u, IA)
    else:
        F = f_ext.reshape((B, n, 6))
        for b in range(B):
            aba(tree, gravity, Q[b], QD[b], TAU[b], F[b], QDD[b],
                X_world, S_world, v, c, pA, U, D, u, IA)


@kernel
def forward_dynamics_factored(tree, gravity, q, qd, tau, f_ext, qdd):
    """q̈ = M⁻¹(τ − b), b from RNEA and M factored as LᵀDL (the "cholesky" method), for a
    state (n,) or a batch (B, n)."""
    Q, TAU = np.atleast_2d(q), np.atleast_2d(tau)
    B, n = Q.shape
    QDD = qdd.reshape((B, n))
    inverse_dynamics(tree, gravity, q, qd, np.zeros(q.shape), f_ext, qdd)  # b, into qdd
    workspace, LD = crba_workspace(tree, n), np.empty((n, n))
    for b in range(B):
        factor_mass_matrix(tree, Q[b], LD, workspace)
        for i in range(n):
            QDD[b, i] = TAU[b, i] - QDD[b, i]
        ltdl_solve(LD, tree, QDD[b])
