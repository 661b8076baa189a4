"""Exact solves of the constraint-force system 𝒜 λ = b of constraint_system.py: forward dynamics
by block cyclic reduction (by block LDLᵀ it runs in link frames: schur_link_frames.py) and the
Schur-complement inverse M⁻¹ = 𝒢 − ℬᵀ 𝒜⁻¹ ℬ (Fijany, "Schur complement factorization
and parallel O(log N) algorithms for computation of operational space mass matrix and its
inverse", restated in docs/algorithms.md), by block LDLᵀ in O(N) (on a tree leaf first,
leaf_first_ldlt) or, on a chain, by block cyclic reduction in ⌈log₂N⌉ levels
(cyclic_reduction.py; the kernels' `cyclic`); and the operational-space Λ⁻¹ = D − Eᵀ 𝒜⁻¹ E
and Λ (the direct form) of the tip body of a chain from the last pivot of its 𝒜 (on a tree,
the chain from the base to a body: task_space.path_system).
"""

from collections import namedtuple

import numpy as np

from robodyn_ros.dynamics.constraint_system import (
    LAMBDA_SIZE,
    add_transposed_times,
    assemble,
    assemble_links,
    assemble_matrix,
    assemble_rhs,
    block_times,
    check_chain,
    check_masses,
    diagonal_block,
    joint_accelerations,
    lift,
    project,
    reduced_block,
    skip,
    square_times,
    system_workspace,
)
from robodyn_ros.dynamics.cyclic_reduction import (
    cyclic_reduction,
    cyclic_reduction_solve,
    cyclic_reduction_workspace,
)
from robodyn_ros.dynamics.fixed_frame import ZERO6
from robodyn_ros.dynamics.jit import kernel, kernel_helper, routine
from robodyn_ros.dynamics.linalg import (
    downdate,
    eliminate,
    invert_spd,
    lower_solve,
    pivot_factor,
    upper_solve,
)
from robodyn_ros.dynamics.spatial import add6, dot6, scale6, store, vector6
from robodyn_ros.dynamics.tree import is_chain


@routine
def block_ldlt(Ad, Ao, L, F):
    """Block LDLᵀ of the block-tridiagonal 𝒜 from the tip: Z_{N−1} = 𝒜_{N−1,N−1},
    Z_i = 𝒜_ii − 𝒜_{i,i+1} Z_{i+1}⁻¹ 𝒜_{i,i+1}ᵀ (downdate), each pivot kept as its Cholesky
    factor L[i] (pivot_factor), and F[i] = 𝒜_{i,i+1} L_{i+1}⁻ᵀ; L and F are n x 5 x 5."""
    n = Ad.shape[0]
    pivot_factor(Ad[n - 1], L[n - 1])
    for i in range(n - 2, -1, -1):
        F[i] = Ao[i]
        downdate(Ad[i], L[i + 1], F[i], L[i])
        pivot_factor(L[i], L[i])


@routine
def last_pivot_inverse(Ad, Ao, Yinv, Y, K, work):
    """Yinv = (𝒜⁻¹)_{N−1,N−1}, the inverse of the last pivot of the block elimination from the
    base: Y_0 = 𝒜_00, Y_i = 𝒜_ii − 𝒜_{i−1,i}ᵀ Y_{i−1}⁻¹ 𝒜_{i−1,i} (docs/algorithms.md). Y, K and
    work are 5 x 5."""
    invert_spd(Ad[0], Yinv, work)
    for i in range(1, Ad.shape[0]):
        eliminate(Ad[i], Ao[i - 1].T, Yinv, K, Y)
        invert_spd(Y, Yinv, work)


@routine
def block_ldlt_solve(L, F, b, x):
    """x = 𝒜⁻¹ b with the factor of block_ldlt: from the tip g_i = L_i⁻¹ (b_i − F_i g_{i+1}),
    then from the base x_i = L_i⁻ᵀ (g_i − F_{i−1}ᵀ x_{i−1}); b is overwritten with g."""
    n = b.shape[0]
    for i in range(n - 1, -1, -1):
        if i + 1 < n:
            Fg = block_times(F, i, b, i + 1)
            for r in range(LAMBDA_SIZE):
                b[i, r] -= Fg[r]
        lower_solve(L[i], b, i)
    for i in range(n):
        for r in range(LAMBDA_SIZE):
            x[i, r] = b[i, r]
        if i > 0:
            add_transposed_times(x, i, F, i - 1, x, i - 1, -1.0)
        upper_solve(L[i], x, i)


# The arrays of leaf_first_ldlt and leaf_first_solve.
LeafFirstWorkspace = namedtuple("LeafFirstWorkspace", (
    "Phi_eff",  # (n, 6, 6) Φ̃_j, Φ_j with j's subtree eliminated
    "L",        # (n, 5, 5) the Cholesky factor of the pivot Z_j
    "F",        # (n, 6, 5) V_j L_j⁻ᵀ
    "delta",    # (n, 6) the change of ã
    "h",        # (n, 6) h_p, the lifted constraint forces of the joints solved
))


@kernel_helper
def leaf_first_workspace(n):
    """A LeafFirstWorkspace of n links."""
    return LeafFirstWorkspace(
        np.empty((n, 6, 6)), np.empty((n, LAMBDA_SIZE, LAMBDA_SIZE)), np.empty((n, 6, LAMBDA_SIZE)),
        np.empty((n, 6)), np.empty((n, 6)),
    )


@kernel_helper
def times_basis(Phi, u, k, V):
    """V (6 x 5) = Φ W, W the columns ≠ k of 1 − 2 u uᵀ."""
    Phi_u = square_times(Phi, u)
    for a in range(LAMBDA_SIZE):
        s = skip(a, k)
        for r in range(6):
            V[r, a] = Phi[r, s] - 2.0 * Phi_u[r] * u[s]


@routine
def leaf_first_ldlt(ws, lw):
    """Block LDLᵀ of a tree's 𝒜 (ws, links assembled), leaves first: children before parents,
    index order reversed. Every block between a body's own joint and its children's joints
    comes from its Φ (𝒜 = Σ_b E_bᵀ Φ_b E_b, constraint_system.py), and eliminating λ_j, its
    subtree already eliminated, keeps that form: the pivot Z_j = W_jᵀ (Φ̃_j + Φ̃_p) W_j and
    Φ̃_p ← Φ̃_p − V_j Z_j⁻¹ V_jᵀ, V_j = Φ̃_p W_j (by Woodbury, p gains the articulated inertia
    W_j (W_jᵀ Φ̃_j W_j)⁻¹ W_jᵀ of j's subtree, RBDA Table 7.1); no fill-in, O(N). Keeps
    L[j], the Cholesky factor of Z_j (pivot_factor), and F[j] = V_j L_j⁻ᵀ (downdate)."""
    Phi, house, pivot, G, parent = ws.Phi, ws.house, ws.pivot, ws.scratch, ws.parent
    Phi_eff, L, F = lw.Phi_eff, lw.L, lw.F
    n = Phi_eff.shape[0]
    Phi_eff[:, :, :] = Phi[:n]
    for j in range(n - 1, -1, -1):
        p = parent[j]
        u, k = vector6(house, j), pivot[j]
        diagonal_block(Phi_eff, j, p, u, k, G, L[j])
        pivot_factor(L[j], L[j])
        if p >= 0:
            times_basis(Phi_eff[p], u, k, F[j])
            downdate(Phi_eff[p], L[j], F[j], Phi_eff[p])
            for r in range(6):
                for s in range(r):
                    Phi_eff[p, s, r] = Phi_eff[p, r, s]


@routine
def leaf_first_solve(ws, lw, b, x):
    """x = 𝒜⁻¹ b with the factor of leaf_first_ldlt. Leaves first, the right-hand sides keep
    the form b_i = W_iᵀ (c_i − ã_i + ã_p) with ã_p ← ã_p − V_j Z_j⁻¹ y_j = ã_p − F_j g_j (δ the
    change of ã), y_j the current b_j, g_j = L_j⁻¹ y_j; then from the root
    λ_j = L_j⁻ᵀ (g_j − F_jᵀ h_p), h_p = −W_p λ_p + Σ W_s λ_s over p's children s before
    j, the blocks of the joints still there when j was eliminated."""
    house, pivot, parent = ws.house, ws.pivot, ws.parent
    L, F, delta, h = lw.L, lw.F, lw.delta, lw.h
    n = b.shape[0]
    delta[:, :] = 0.0
    for j in range(n - 1, -1, -1):
        p = parent[j]
        d = vector6(delta, j)
        if p >= 0:
            d = add6(d, scale6(-1.0, vector6(delta, p)))
        Wd = project(house, pivot, j, d)
        for r in range(LAMBDA_SIZE):
            x[j, r] = b[j, r] - Wd[r]
        lower_solve(L[j], x, j)
        if p >= 0:
            for r in range(6):
                t = 0.0
                for a in range(LAMBDA_SIZE):
                    t += F[j, r, a] * x[j, a]
                delta[p, r] -= t
    for j in range(n):
        p = parent[j]
        if p >= 0:
            for a in range(LAMBDA_SIZE):
                t = 0.0
                for r in range(6):
                    t += F[j, r, a] * h[p, r]
                x[j, a] -= t
        upper_solve(L[j], x, j)
        if p >= 0:
            store(h, p, add6(vector6(h, p), lift(house, pivot, j, x)))
        store(h, j, scale6(-1.0, lift(house, pivot, j, x)))


@kernel_helper
def factor(ws, chain, cyclic, cw, lw):
    """Factor 𝒜 (ws): on a chain by block LDLᵀ from the tip (into cw's first two n x 5 x 5
    arrays; 𝒜 kept) or, when `cyclic`, by block cyclic reduction (𝒜 overwritten), cw from
    cyclic_reduction_workspace; on a tree by leaf_first_ldlt (lw)."""
    if not chain:
        leaf_first_ldlt(ws, lw)
    elif cyclic:
        cyclic_reduction(ws.Ad, ws.Ao, cw)
    else:
        block_ldlt(ws.Ad, ws.Ao, cw.Dinv, cw.L)  # the chain's block LDLᵀ: D⁻¹ and L


@kernel_helper
def solve(ws, b, x, chain, cyclic, cw, lw):
    """x = 𝒜⁻¹ b with the factor of `factor` (b may be overwritten)."""
    if not chain:
        leaf_first_solve(ws, lw, b, x)
    elif cyclic:
        cyclic_reduction_solve(ws.Ao, b, x, cw)
    else:
        block_ldlt_solve(cw.Dinv, cw.L, b, x)


@kernel_helper
def checked_topology(tree, cyclic):
    """Whether the robot is a chain, after refusing a tree to block cyclic reduction and any
    massless body."""
    check_masses(tree)
    if cyclic:
        check_chain(tree)
    return is_chain(tree)


@kernel
def forward_dynamics_schur_bcr(tree, gravity, q, qd, tau, f_ext, qdd):
    """q̈ by the exact solve of the constraint forces by block cyclic reduction, for a state
    (n,) or a batch (B, n) of a serial chain; f_ext None or (..., n, 6). (Method "schur", the
    O(N) block LDLᵀ, runs in link frames: schur_link_frames.py.)"""
    checked_topology(tree, True)
    Q, QD, TAU = np.atleast_2d(q), np.atleast_2d(qd), np.atleast_2d(tau)
    B, n = Q.shape[0], tree.shape[0]
    QDD = qdd.reshape((B, n))
    ws, cw = system_workspace(n), cyclic_reduction_workspace(n)
    for b in range(B):
        F = None if f_ext is None else f_ext.reshape((B, n, 6))[b]
        a_root = assemble(tree, gravity, Q[b], QD[b], TAU[b], F, ws)
        cyclic_reduction(ws.Ad, ws.Ao, cw)
        cyclic_reduction_solve(ws.Ao, ws.b, ws.lam, cw)
        joint_accelerations(ws.lam, ws.c, a_root, ws, QDD[b])


@kernel_helper
def mass_matrix_inverse_exact(tree, q, Minv, cyclic):
    """M⁻¹ = 𝒢 − ℬᵀ 𝒜⁻¹ ℬ column by column, for a state (n,) or a batch (B, n): 𝒜 factored
    once, then for τ = e_j at rest without gravity, b = −ℬ e_j (the blocks of j, its parent
    and its siblings), λ = 𝒜⁻¹ b and q̈ = 𝒢 e_j + ℬᵀ λ recovered by joint_accelerations.
    O(N²)."""
    chain = checked_topology(tree, cyclic)
    Q = np.atleast_2d(q)
    B, n = Q.shape[0], tree.shape[0]
    OUT = Minv.reshape((B, n, n))
    ws, cw, lw = system_workspace(n), cyclic_reduction_workspace(n), leaf_first_workspace(n)
    unit, column = np.zeros(n), np.empty(n)
    for b in range(B):
        if chain:
            assemble_matrix(tree, Q[b], ws)
        else:
            assemble_links(tree, Q[b], ws)
        factor(ws, chain, cyclic, cw, lw)
        for j in range(n):
            unit[j] = 1.0
            assemble_rhs(unit, None, None, ZERO6, ws)
            solve(ws, ws.b, ws.lam, chain, cyclic, cw, lw)
            joint_accelerations(ws.lam, None, ZERO6, ws, column)
            OUT[b, :, j] = column
            unit[j] = 0.0


@kernel
def mass_matrix_inverse_schur(tree, q, Minv):
    """mass_matrix_inverse_exact by block LDLᵀ."""
    mass_matrix_inverse_exact(tree, q, Minv, False)


@kernel
def mass_matrix_inverse_schur_bcr(tree, q, Minv):
    """mass_matrix_inverse_exact by block cyclic reduction."""
    mass_matrix_inverse_exact(tree, q, Minv, True)


@kernel_helper
def last_pivot(Ad, Ao, cyclic, cw, Yinv, Y):
    """Y (5 x 5) = the last pivot of 𝒜, the Schur complement of the other blocks, and
    Yinv = Y⁻¹: by the elimination from the base, or when `cyclic` what the cyclic reduction
    leaves of the last block (𝒜 overwritten)."""
    if cyclic:
        cyclic_reduction(Ad, Ao, cw)
        Y[:, :] = Ad[Ad.shape[0] - 1]
        Yinv[:, :] = cw.Dinv[Ad.shape[0] - 1]
    else:
        last_pivot_inverse(Ad, Ao, Yinv, Y, cw.K, cw.work)


@kernel_helper
def tip_pivot(ws, m, cyclic, cw, Rinv, R):
    """R (5 x 5) and Rinv = R⁻¹: the last pivot of the elimination of the chain's 𝒜 (its first
    m links in ws, assembled) from the base with the tip's own Φ_N left out of 𝒜_NN (there
    W_Nᵀ Φ_{N−1} W_N), so the usual last pivot is Y_N = R + W_Nᵀ Φ_N W_N and
    (𝒜⁻¹)_NN = Y_N⁻¹; R = 0 for a chain of one body. Returns (u, k) of the tip's W_N; cw and
    `cyclic` as in last_pivot."""
    Phi, house, pivot, Ad, Ao = ws.Phi, ws.house, ws.pivot, ws.Ad, ws.Ao
    tip = m - 1
    u, k = vector6(house, tip), pivot[tip]
    if tip == 0:
        R[:, :] = 0.0
        Rinv[:, :] = np.inf
    else:
        reduced_block(Phi[tip - 1], u, k, u, k, 1.0, Ad[tip])
        last_pivot(Ad[:m], Ao[:m], cyclic, cw, Rinv, R)
    return u, k


@kernel_helper
def reflect(A, u, out):
    """out = H A H for a symmetric 6 x 6 A, H = 1 − 2 u uᵀ (out may be A)."""
    w = (
        dot6(vector6(A, 0), u), dot6(vector6(A, 1), u), dot6(vector6(A, 2), u),
        dot6(vector6(A, 3), u), dot6(vector6(A, 4), u), dot6(vector6(A, 5), u),
    )
    a = 4.0 * dot6(u, w)
    for r in range(6):
        for s in range(6):
            out[r, s] = A[r, s] - 2.0 * (u[r] * w[s] + w[r] * u[s]) + a * u[r] * u[s]


@kernel_helper
def tip_inverse_inertia(ws, m, I_tip, cyclic, cw, Rinv, R, out):
    """out (6 x 6) = Λ⁻¹ of the tip body N (inertia I_tip, 6 x 6) of the chain of the first m
    links of ws about the world origin, world axes: the response a_N of the chain at rest to a
    force F on body N with τ = 0. ℰ = Wᵀ𝓟ᵀ𝓜⁻¹ e_N has the single
    block W_Nᵀ Φ_N, so Λ⁻¹ = Φ_N − Φ_N W_N Y_N⁻¹ W_Nᵀ Φ_N (Fijany's Λ⁻¹ = D − Eᵀ 𝒜⁻¹ E,
    docs/algorithms.md). Evaluated without its cancellation (Φ_N is large for a light tip): in
    the basis [W_N, s] of the reflector H, with Φ̃ = H Φ_N H, Ĩ = H I_N H, Y = R + Φ̃_WW
    (tip_pivot) and G = Y⁻¹, the blocks are R G Φ̃_WW, R G Φ̃_Ws and
    1/Ĩ_ss − zᵀ R G Φ̃_Ws with z = Ĩ_Ws / Ĩ_ss (as Φ̃_WW⁻¹ − G = Φ̃_WW⁻¹ R G), then
    Λ⁻¹ = H (⋯) H."""
    u, k = tip_pivot(ws, m, cyclic, cw, Rinv, R)
    K, work = cw.K, cw.work
    Phi, I_tilde, Phi_tilde = ws.Phi, ws.scratch, ws.scratch_b
    reflect(Phi[m - 1], u, Phi_tilde)
    reflect(I_tip, u, I_tilde)
    for a in range(LAMBDA_SIZE):  # K = Y = R + Φ̃_WW, Rinv = G = Y⁻¹
        for b in range(LAMBDA_SIZE):
            K[a, b] = R[a, b] + Phi_tilde[skip(a, k), skip(b, k)]
    invert_spd(K, Rinv, work)
    np.dot(R, Rinv, K)  # K = R G
    for a in range(LAMBDA_SIZE):
        for b in range(6):
            t = 0.0
            for c in range(LAMBDA_SIZE):
                t += K[a, c] * Phi_tilde[skip(c, k), b]
            out[skip(a, k), b] = t
    ss = 1.0 / I_tilde[k, k]
    for c in range(LAMBDA_SIZE):
        ss -= I_tilde[skip(c, k), k] / I_tilde[k, k] * out[skip(c, k), k]
    out[k, k] = ss
    for a in range(LAMBDA_SIZE):
        out[k, skip(a, k)] = out[skip(a, k), k]
    for r in range(6):
        for s in range(r):
            out[r, s] = out[s, r] = 0.5 * (out[r, s] + out[s, r])
    reflect(out, u, out)


@kernel_helper
def tip_inertia(ws, m, I_tip, cyclic, cw, Rinv, R, out):
    """out (6 x 6) = Λ of the tip body N (as in tip_inverse_inertia) by the direct form
    Λ = I_N + W_N R⁻¹ W_Nᵀ (Woodbury on Λ⁻¹ = Φ_N − Φ_N W_N (R + W_NᵀΦ_N W_N)⁻¹ W_Nᵀ Φ_N; the
    paper's Λ = S − Rᵀ 𝒴⁻¹ R, 𝒴 differing from 𝒜 in one block), R from tip_pivot."""
    u, k = tip_pivot(ws, m, cyclic, cw, Rinv, R)
    out[:, :] = I_tip
    for r in range(6):  # W_N = the columns ≠ k of 1 − 2 u uᵀ
        for s in range(6):
            t = 0.0
            for a in range(LAMBDA_SIZE):
                ra = (1.0 if r == skip(a, k) else 0.0) - 2.0 * u[r] * u[skip(a, k)]
                for b in range(LAMBDA_SIZE):
                    sb = (1.0 if s == skip(b, k) else 0.0) - 2.0 * u[s] * u[skip(b, k)]
                    t += ra * Rinv[a, b] * sb
            out[r, s] += t
