"""Exact solves of the constraint-force system 𝒜 λ = b of constraint_forces.py: forward dynamics
and the Schur-complement inverse M⁻¹ = 𝒢 − ℬᵀ 𝒜⁻¹ ℬ (Fijany, "Schur complement factorization
and parallel O(log N) algorithms for computation of operational space mass matrix and its
inverse", restated in papers/README.md), by block LDLᵀ in O(N); serial chains.
"""

import numpy as np

from robodyn_ros.dynamics.constraint_forces import (
    C,
    assemble,
    assemble_matrix,
    assemble_rhs,
    block_times,
    check_chain,
    invert_spd,
    joint_accelerations,
    system_workspace,
)
from robodyn_ros.dynamics.fixed_frame import ZERO6
from robodyn_ros.dynamics.jit import kernel, kernel_helper


@kernel_helper
def block_ldlt(Ad, Ao, Zinv, Z, K, work):
    """Block LDLᵀ of the block-tridiagonal 𝒜 from the tip: Z_{N−1} = 𝒜_{N−1,N−1},
    Z_i = 𝒜_ii − 𝒜_{i,i+1} Z_{i+1}⁻¹ 𝒜_{i,i+1}ᵀ; Zinv[i] = Z_i⁻¹. Z, K, work are 5 x 5."""
    n = Ad.shape[0]
    invert_spd(Ad[n - 1], Zinv[n - 1], work)
    for i in range(n - 2, -1, -1):
        for r in range(C):  # K = 𝒜_{i,i+1} Z_{i+1}⁻¹
            for s in range(C):
                t = 0.0
                for m in range(C):
                    t += Ao[i, r, m] * Zinv[i + 1, m, s]
                K[r, s] = t
        for r in range(C):  # Z = 𝒜_ii − K 𝒜_{i,i+1}ᵀ
            for s in range(C):
                t = Ad[i, r, s]
                for m in range(C):
                    t -= K[r, m] * Ao[i, s, m]
                Z[r, s] = t
        invert_spd(Z, Zinv[i], work)


@kernel_helper
def block_ldlt_solve(Ao, Zinv, b, x, y):
    """x = 𝒜⁻¹ b with the factor of block_ldlt: w_i = Z_i⁻¹ (b_i − 𝒜_{i,i+1} w_{i+1}) from the
    tip, then x_i = w_i − Z_i⁻¹ 𝒜_{i−1,i}ᵀ x_{i−1} from the base. y (n x 5) is a workspace."""
    n = b.shape[0]
    for i in range(n - 1, -1, -1):
        for r in range(C):
            y[i, r] = b[i, r]
        if i + 1 < n:
            Aw = block_times(Ao, i, x, i + 1)
            for r in range(C):
                y[i, r] -= Aw[r]
        w = block_times(Zinv, i, y, i)
        for r in range(C):
            x[i, r] = w[r]
    for i in range(1, n):
        for r in range(C):  # y_i = 𝒜_{i−1,i}ᵀ x_{i−1}
            t = 0.0
            for s in range(C):
                t += Ao[i - 1, s, r] * x[i - 1, s]
            y[i, r] = t
        Zy = block_times(Zinv, i, y, i)
        for r in range(C):
            x[i, r] -= Zy[r]


@kernel_helper
def schur_workspace(n):
    """(Zinv (n x 5 x 5), Z, K, work (5 x 5), y (n x 5))."""
    return np.empty((n, C, C)), np.empty((C, C)), np.empty((C, C)), np.empty((C, C)), \
        np.empty((n, C))


@kernel
def forward_dynamics_schur(tree, gravity, q, qd, tau, f_ext, qdd):
    """q̈ by the exact O(N) block-LDLᵀ solve of the constraint forces, for a state (n,) or a
    batch (B, n); f_ext None or (..., n, 6)."""
    check_chain(tree)
    Q, QD, TAU = np.atleast_2d(q), np.atleast_2d(qd), np.atleast_2d(tau)
    B, n = Q.shape
    QDD = qdd.reshape((B, n))
    ws = system_workspace(n)
    Zinv, Z, K, work, y = schur_workspace(n)
    for b in range(B):
        F = None if f_ext is None else f_ext.reshape((B, n, 6))[b]
        a_root = assemble(tree, gravity, Q[b], QD[b], TAU[b], F, ws)
        block_ldlt(ws[6], ws[7], Zinv, Z, K, work)
        block_ldlt_solve(ws[7], Zinv, ws[14], ws[15], y)
        joint_accelerations(ws[15], ws[12], a_root, ws, QDD[b])


@kernel
def mass_matrix_inverse_schur(tree, q, Minv):
    """M⁻¹ = 𝒢 − ℬᵀ 𝒜⁻¹ ℬ column by column, for a state (n,) or a batch (B, n): 𝒜 factored
    once, then for τ = e_j at rest without gravity, b = −ℬ e_j (two nonzero blocks), λ = 𝒜⁻¹ b
    and q̈ = 𝒢 e_j + ℬᵀ λ recovered by joint_accelerations. O(N²)."""
    check_chain(tree)
    Q = np.atleast_2d(q)
    B, n = Q.shape
    OUT = Minv.reshape((B, n, n))
    ws = system_workspace(n)
    Zinv, Z, K, work, y = schur_workspace(n)
    unit, column = np.zeros(n), np.empty(n)
    for b in range(B):
        assemble_matrix(tree, Q[b], ws)
        block_ldlt(ws[6], ws[7], Zinv, Z, K, work)
        for j in range(n):
            unit[j] = 1.0
            assemble_rhs(unit, None, None, ZERO6, ws)
            block_ldlt_solve(ws[7], Zinv, ws[14], ws[15], y)
            joint_accelerations(ws[15], None, ZERO6, ws, column)
            OUT[b, :, j] = column
            unit[j] = 0.0
