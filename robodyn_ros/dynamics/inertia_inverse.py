"""M(q)⁻¹ without forming M: the articulated-body algorithm run for all n unit torques at
once, O(n²) (Carpentier & Mansard, "Analytical derivatives of rigid body dynamics algorithms",
RSS 2018, §V.C); and the factored route, CRBA + LᵀDL and n solves, O(n · depth²).
"""

import numpy as np

from robodyn_ros.dynamics.factorization import factor_mass_matrix, ltdl_solve
from robodyn_ros.dynamics.jit import kernel, kernel_helper
from robodyn_ros.dynamics.kinematics import forward_kinematics
from robodyn_ros.dynamics.spatial import dot6, inertia_to_world, matvec6
from robodyn_ros.dynamics.tree import INERTIA, POSE, WIDTH, parent_of


@kernel_helper
def subtree_ends(tree, end):
    """end[i] = one past the last joint of joint i's subtree; joints are in depth-first order,
    so the subtree of i is the index range i .. end[i] − 1."""
    n = end.shape[0]
    for i in range(n):
        end[i] = i + 1
    for i in range(n - 1, -1, -1):
        lam = parent_of(tree, i)
        if lam >= 0 and end[i] > end[lam]:
            end[lam] = end[i]


@kernel_helper
def minv_aba(tree, q, Minv, X_world, S_world, IA, U, D, P, A, end):
    """M⁻¹ for one state into Minv (n x n). Column j is the ABA answer to τ = e_j with zero
    velocity and gravity; P[i] (6 x n) holds the bias forces of all columns on body i (nonzero
    only for the columns of i's subtree), A[i] (6 x n) the accelerations. World frame."""
    n = q.shape[0]
    forward_kinematics(tree, q, X_world, S_world)
    subtree_ends(tree, end)
    for i in range(n):
        inertia_to_world(X_world[i], tree[i, INERTIA:WIDTH], IA[i])
        P[i, :, i:end[i]] = 0.0

    # backward pass: u_i = e_i − Sᵢᵀ Pᵢ over the subtree's columns, kept in row i of Minv
    for i in range(n - 1, -1, -1):
        S = S_world[i]
        matvec6(IA[i], S, U[i])
        D[i] = dot6(S, U[i])
        for j in range(i, end[i]):
            Minv[i, j] = (1.0 if j == i else 0.0) - (
                S[0] * P[i, 0, j] + S[1] * P[i, 1, j] + S[2] * P[i, 2, j]
                + S[3] * P[i, 3, j] + S[4] * P[i, 4, j] + S[5] * P[i, 5, j]
            )
        lam = parent_of(tree, i)
        if lam >= 0:
            for r in range(6):
                for k in range(6):
                    IA[lam, r, k] += IA[i, r, k] - U[i, r] * U[i, k] / D[i]
                for j in range(i, end[i]):
                    P[lam, r, j] += P[i, r, j] + U[i, r] * Minv[i, j] / D[i]

    # forward pass: row i of M⁻¹ (upper triangle, j ≥ i) and the accelerations it causes
    for i in range(n):
        lam = parent_of(tree, i)
        for j in range(i, n):
            u = Minv[i, j] if j < end[i] else 0.0
            if lam >= 0:
                u -= (
                    U[i, 0] * A[lam, 0, j] + U[i, 1] * A[lam, 1, j] + U[i, 2] * A[lam, 2, j]
                    + U[i, 3] * A[lam, 3, j] + U[i, 4] * A[lam, 4, j] + U[i, 5] * A[lam, 5, j]
                )
            qdd = u / D[i]
            Minv[i, j] = Minv[j, i] = qdd
            for r in range(6):
                A[i, r, j] = S_world[i, r] * qdd + (A[lam, r, j] if lam >= 0 else 0.0)


@kernel
def mass_matrix_inverse(tree, q, Minv):
    """M⁻¹ by the O(n²) recursion for a state (n,) or a batch (B, n); Minv is (..., n, n)."""
    Q = np.atleast_2d(q)
    B, n = Q.shape
    OUT = Minv.reshape((B, n, n))
    X_world, S_world, IA = np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, 6, 6))
    U, D, P, A = np.empty((n, 6)), np.empty(n), np.empty((n, 6, n)), np.empty((n, 6, n))
    end = np.empty(n, dtype=np.int64)
    for b in range(B):
        minv_aba(tree, Q[b], OUT[b], X_world, S_world, IA, U, D, P, A, end)


@kernel
def mass_matrix_inverse_factored(tree, q, Minv):
    """M⁻¹ by CRBA, LᵀDL and n solves for a state (n,) or a batch (B, n)."""
    Q = np.atleast_2d(q)
    B, n = Q.shape
    OUT = Minv.reshape((B, n, n))
    X_world, S_world, Ic = np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, 6, 6))
    LD, column = np.empty((n, n)), np.empty(n)
    for b in range(B):
        factor_mass_matrix(tree, Q[b], LD, X_world, S_world, Ic)
        for k in range(n):
            column[:] = 0.0
            column[k] = 1.0
            ltdl_solve(LD, tree, column)
            OUT[b, :, k] = column
