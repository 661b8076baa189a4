"""M(q)⁻¹ without forming M: the articulated-body algorithm run for all n unit torques at
once, O(n²) (Carpentier & Mansard, "Analytical derivatives of rigid body dynamics algorithms",
RSS 2018, §V.C); and the factored route, CRBA + LᵀDL inverted row by row.
"""

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.factorization import factor_mass_matrix, ltdl_inverse
from robodyn_ros.dynamics.inertia_matrix import crba_workspace
from robodyn_ros.dynamics.jit import kernel, kernel_helper, routine
from robodyn_ros.dynamics.kinematics import forward_kinematics
from robodyn_ros.dynamics.linalg import carved
from robodyn_ros.dynamics.spatial import (
    dot6,
    inertia_to_world,
    matrix_times,
    pose_at,
    scale6,
    store,
    store_inertia_matrix,
    vector6,
)
from robodyn_ros.dynamics.tree import (
    POSE,
    armature,
    body_inertia,
    parent_indices,
    parent_of,
    subtree_ends,
)

# What minv_aba needs besides the state (Carpentier & Mansard §V.C; RBDA Table 7.1).
MinvWorkspace = namedtuple("MinvWorkspace", (
    "end",      # (n,) one past the last body of each body's subtree (subtree_ends)
    "X_world",  # (n, POSE) each link's pose
    "S_world",  # (n, 6) each joint's motion axis S_i
    "IA",       # (n, 6, 6) the articulated inertias
    "U",        # (n, 6) U_i = IA_i S_i
    "D",        # (n,) D_i = S_iᵀ U_i + armature
    "P",        # (6, n) the bias force of each column on the body being processed
    "A",        # (n, 6, n) the accelerations of each body, column by column
))


@kernel_helper
def minv_workspace(tree, n):
    """A MinvWorkspace of the tree's n bodies, its arrays carved from one block."""
    end = np.empty(n, dtype=np.int64)
    subtree_ends(tree, end)
    block = np.empty(n * (POSE + 6 + 36 + 6 + 1 + 6 + 6 * n))
    X_world, at = carved(block, 0, (n, POSE))
    S_world, at = carved(block, at, (n, 6))
    IA, at = carved(block, at, (n, 6, 6))
    U, at = carved(block, at, (n, 6))
    D, at = carved(block, at, (n,))
    P, at = carved(block, at, (6, n))
    A, at = carved(block, at, (n, 6, n))
    return MinvWorkspace(end, X_world, S_world, IA, U, D, P, A)


@routine
def minv_aba(tree, q, Minv, workspace):
    """M⁻¹ for one state into Minv (n x n); workspace from minv_workspace. Column j is the ABA
    answer to τ = e_j with zero velocity and gravity. P (6 x n) holds the bias force of column j on
    the body being processed: the columns of a subtree are a contiguous range that no other
    subtree touches, so one array serves every body, updated in place from the leaves to the
    root. A[i] (6 x n) holds the accelerations of body i. World frame."""
    end, X_world, S_world, IA = workspace.end, workspace.X_world, workspace.S_world, workspace.IA
    U, D, P, A = workspace.U, workspace.D, workspace.P, workspace.A
    n = tree.shape[0]
    forward_kinematics(tree, q, X_world, S_world)
    for i in range(n):
        store_inertia_matrix(IA, i, inertia_to_world(pose_at(X_world, i, 0), body_inertia(tree, i)))
    P[:, :] = 0.0

    # backward pass: u_i = e_i − Sᵢᵀ Pᵢ over the subtree's columns, kept in row i of Minv;
    # then P becomes the parent's, Pᵢ + Uᵢ uᵢ / Dᵢ, Dᵢ = Sᵢᵀ Uᵢ + armature
    for i in range(n - 1, -1, -1):
        S = vector6(S_world, i)
        U_i = matrix_times(IA, i, S)
        D[i] = dot6(S, U_i) + armature(tree, i)
        store(U, i, U_i)
        U_D = scale6(1.0 / D[i], U_i)
        for j in range(i, end[i]):
            u = (1.0 if j == i else 0.0) - (
                S[0] * P[0, j] + S[1] * P[1, j] + S[2] * P[2, j]
                + S[3] * P[3, j] + S[4] * P[4, j] + S[5] * P[5, j]
            )
            Minv[i, j] = u
            for r in range(6):
                P[r, j] += U_D[r] * u
        parent = parent_of(tree, i)
        if parent >= 0:
            for r in range(6):
                for k in range(6):
                    IA[parent, r, k] += IA[i, r, k] - U_D[r] * U_i[k]

    # forward pass: row i of M⁻¹ (upper triangle, j ≥ i) and the accelerations it causes
    for i in range(n):
        parent = parent_of(tree, i)
        S, U_i = vector6(S_world, i), vector6(U, i)
        for j in range(i, n):
            u = Minv[i, j] if j < end[i] else 0.0
            if parent >= 0:
                u -= (
                    U_i[0] * A[parent, 0, j] + U_i[1] * A[parent, 1, j] + U_i[2] * A[parent, 2, j]
                    + U_i[3] * A[parent, 3, j] + U_i[4] * A[parent, 4, j] + U_i[5] * A[parent, 5, j]
                )
            qdd = u / D[i]
            Minv[i, j] = qdd
            for r in range(6):
                A[i, r, j] = S[r] * qdd + (A[parent, r, j] if parent >= 0 else 0.0)
    for i in range(n):  # the lower triangle
        for j in range(i + 1, n):
            Minv[j, i] = Minv[i, j]


@kernel
def mass_matrix_inverse(tree, q, Minv):
    """M⁻¹ by the O(n²) recursion for a state (n,) or a batch (B, n); Minv is (..., n, n)."""
    Q = np.atleast_2d(q)
    B, n = Q.shape[0], tree.shape[0]
    OUT = Minv.reshape((B, n, n))
    workspace = minv_workspace(tree, n)
    for b in range(B):
        minv_aba(tree, Q[b], OUT[b], workspace)


@kernel
def mass_matrix_inverse_factored(tree, q, Minv):
    """M⁻¹ by CRBA and LᵀDL, inverted row by row, for a state (n,) or a batch (B, n)."""
    Q = np.atleast_2d(q)
    B, n = Q.shape[0], tree.shape[0]
    OUT = Minv.reshape((B, n, n))
    workspace, LD, end = crba_workspace(tree, n), np.empty((n, n)), np.empty(n, dtype=np.int64)
    parent = parent_indices(tree)
    subtree_ends(tree, end)
    for b in range(B):
        factor_mass_matrix(tree, parent, Q[b], LD, workspace)
        ltdl_inverse(LD, parent, end, OUT[b])
