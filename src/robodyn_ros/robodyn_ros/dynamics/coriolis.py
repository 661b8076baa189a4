"""Coriolis matrix C(q, q̇) with Ṁ − 2C skew-symmetric (Pinocchio's computeCoriolisMatrix), by a
CRBA-like O(n²) recursion in world coordinates.

Echeandia & Wensing 2021, doi:10.1115/1.4051169: C = Σ_k J_kᵀ (I_k J̇_k + B_k J_k).

Summed over the bodies k: J_k has a column S_j for each joint j that supports body k, J̇_k the
columns Ṡ_j = v_j × S_j. B_k = ½ (İ_k + h_k×̄) splits the body's gyroscopic force
B_k v_k = v_k ×* I_k v_k into half the rate of its inertia, İ_k = v_k ×* I_k − I_k v_k×
(symmetric), and half the skew map h_k×̄ m = m ×* h_k of its momentum h_k = I_k v_k.
B_k + B_kᵀ = İ_k is what makes Ṁ − 2C skew; B_k v_k makes C q̇ the Coriolis and centrifugal
torques. Gravity does not enter C, nor the armature, which is constant in M.
"""

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.arrays import FloatArray, PackedTree
from robodyn_ros.dynamics.fixed_frame import world_inertias
from robodyn_ros.dynamics.jit import kernel, kernel_helper
from robodyn_ros.dynamics.kinematics import forward_kinematics
from robodyn_ros.dynamics.spatial import (
    add6,
    dot6,
    inertia_at,
    inertia_rate,
    inertia_times,
    motion_cross_force,
    motion_cross_motion,
    scale6,
    store,
    vector6,
)
from robodyn_ros.dynamics.tree import POSE, joint_start, parent_of, subtree_ends

INERTIA_SIZE = 10  # a rigid-body inertia (M, h, I_O), see spatial.py


# What coriolis needs besides the state (module docstring).
CoriolisWorkspace = namedtuple("CoriolisWorkspace", (
    "end",      # (n,) one past the last body of each body's subtree (subtree_ends)
    "X_world",  # (n, POSE) each link's pose
    "S_world",  # (n, 6) each joint's motion axis S_i
    "v",        # (n, 6) each body's velocity
    "S_dot",    # (n, 6) Ṡ_i = v_i × S_i
    "Ic",       # (n, INERTIA_SIZE) each subtree's composite inertia
    "Ic_rate",  # (n, INERTIA_SIZE) its rate of change
    "hc",       # (n, 6) each subtree's momentum
    "F",        # (n, 6) F_j = Ic_j Ṡ_j + B_c,j S_j
    "G",        # (n, 6) G_j = Ic_j S_j
    "H",        # (n, 6) H_j = B_c,jᵀ S_j
))


@kernel_helper
def coriolis_workspace(tree, n):
    """A CoriolisWorkspace of the tree's n bodies."""
    end = np.empty(n, dtype=np.int64)
    subtree_ends(tree, end)
    return CoriolisWorkspace(
        end, np.empty((n, POSE)), np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6)),
        np.empty((n, INERTIA_SIZE)), np.empty((n, INERTIA_SIZE)), np.empty((n, 6)),
        np.empty((n, 6)), np.empty((n, 6)), np.empty((n, 6)),
    )


@kernel_helper
def coriolis(tree, q, qd, C, workspace):
    """C(q, q̇) for one state, written into C (n x n); workspace from coriolis_workspace."""
    end, X_world, S_world, v, S_dot = (workspace.end, workspace.X_world, workspace.S_world,
                                       workspace.v, workspace.S_dot)
    Ic, Ic_rate, hc = workspace.Ic, workspace.Ic_rate, workspace.hc
    F, G, H = workspace.F, workspace.G, workspace.H
    forward_kinematics(tree, q, X_world, S_world)
    world_inertias(tree, X_world, Ic)
    body_velocity_terms(tree, qd, S_world, Ic, v, S_dot, Ic_rate, hc)
    composite_coriolis_terms(tree, S_world, S_dot, Ic, Ic_rate, hc, F, G, H)
    coriolis_entries(S_world, S_dot, end, F, G, H, C)


@kernel_helper
def body_velocity_terms(tree, qd, S_world, inertia, v, S_dot, inertia_rates, momentum):
    """Forward pass, world frame: each body's velocity v_i = v_λ + S_i q̇_i, its joint's
    Ṡ_i = v_i × S_i, the rate İ_i of its inertia I_i (n x 10, world_inertias) and its momentum
    h_i = I_i v_i. The rows of a multi-DOF joint take v_i of its last row, its body's, as
    Pinocchio's J̇ of a joint does."""
    n = qd.shape[0]
    for i in range(n):
        parent = parent_of(tree, i)
        S = vector6(S_world, i)
        vJ = scale6(qd[i], S)
        v_i = add6(vector6(v, parent), vJ) if parent >= 0 else vJ
        I_i = inertia_at(inertia, i)
        store(v, i, v_i)
        start = joint_start(tree, i)
        if i + 1 < n and joint_start(tree, i + 1) == start:
            pass  # not its joint's last row: that row stores this row's Ṡ
        elif start == i:
            store(S_dot, i, motion_cross_motion(v_i, S))
        else:  # the last row of a multi-DOF joint (tree.py)
            for j in range(start, i + 1):
                store(S_dot, j, motion_cross_motion(v_i, vector6(S_world, j)))
        store(inertia_rates, i, inertia_rate(I_i, v_i))
        store(momentum, i, inertia_times(I_i, v_i))


@kernel_helper
def composite_coriolis_terms(tree, S_world, S_dot, Ic, Ic_rate, hc, F, G, H):
    """Backward pass: each body's I, İ and h (Ic, Ic_rate, hc) become their sums over its
    subtree, so that B_c = ½ (İ_c + h_c×̄) is the sum of the subtree's B_k; then for each joint
    F_j = Ic_j Ṡ_j + B_c,j S_j, G_j = Ic_j S_j and H_j = B_c,jᵀ S_j, where
    B_c S = ½ (İ_c S + S ×* h_c) and, h_c×̄ being skew, B_cᵀ S = ½ (İ_c S − S ×* h_c)."""
    for i in range(S_world.shape[0] - 1, -1, -1):
        parent = parent_of(tree, i)
        if parent >= 0:
            for k in range(INERTIA_SIZE):
                Ic[parent, k] += Ic[i, k]
                Ic_rate[parent, k] += Ic_rate[i, k]
            store(hc, parent, add6(vector6(hc, parent), vector6(hc, i)))
        S, I_c = vector6(S_world, i), inertia_at(Ic, i)
        half_rate_S = scale6(0.5, inertia_times(inertia_at(Ic_rate, i), S))
        half_skew_S = scale6(0.5, motion_cross_force(S, vector6(hc, i)))
        B_S = add6(half_rate_S, half_skew_S)
        B_transpose_S = add6(half_rate_S, scale6(-1.0, half_skew_S))
        store(F, i, add6(inertia_times(I_c, vector6(S_dot, i)), B_S))
        store(G, i, inertia_times(I_c, S))
        store(H, i, B_transpose_S)


@kernel_helper
def coriolis_entries(S_world, S_dot, end, F, G, H, C):
    """C (n x n) from the terms of composite_coriolis_terms: for j in the subtree of i (the
    index range i .. end[i] − 1), C[i, j] = S_iᵀ F_j and C[j, i] = G_jᵀ Ṡ_i + H_jᵀ S_i (both
    S_iᵀ (Ic_i Ṡ_i + B_c,i S_i) on the diagonal); entries of joints on different branches are
    zero."""
    C[:, :] = 0.0
    for i in range(C.shape[0]):
        S, S_dot_i = vector6(S_world, i), vector6(S_dot, i)
        for j in range(i, end[i]):
            C[i, j] = dot6(S, vector6(F, j))
            C[j, i] = dot6(vector6(G, j), S_dot_i) + dot6(vector6(H, j), S)


@kernel
def coriolis_matrix(tree: PackedTree, q: FloatArray, qd: FloatArray, C: FloatArray) -> None:
    """C(q, q̇) for a state or a batch, q (..., nq) and qd (..., n); C is (..., n, n)."""
    Q, QD = np.atleast_2d(q), np.atleast_2d(qd)
    B, n = QD.shape
    CC = C.reshape((B, n, n))
    workspace = coriolis_workspace(tree, n)
    for b in range(B):
        coriolis(tree, Q[b], QD[b], CC[b], workspace)
